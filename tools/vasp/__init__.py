"""VASP adapter: inputs from pymatgen's Materials Project sets, INCAR checks, the launch command from
settings, recovery through custodian's VASP handlers, outputs read with pymatgen. VASP itself is
licensed and not installed here; everything but the run works (and is tested) without it."""
