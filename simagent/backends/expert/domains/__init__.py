"""Domain modules of the expert reader. Each module defines `refine(text, low, spec)`, which may
set the system (e.g. a MOF by name, water with a named model), the potential/force field, extra
conditions (pressure lists, mixture composition, probe radius) and add critical gaps to
`spec.missing`. They run after the generic rules, in the order listed here."""

from __future__ import annotations

import importlib

from simagent.models import TaskSpec

MODULES: list[str] = [
    "simagent.backends.expert.domains.frameworks",  # MOFs, zeolites, adsorption (Zeo++, RASPA)
    "simagent.backends.expert.domains.molecular",  # water models, simple liquids (GROMACS)
    "simagent.backends.expert.domains.alkanes",  # TraPPE-UA linear alkanes (LAMMPS); other molecules refused
    "simagent.backends.expert.domains.polymers",  # bead-spring chains (LAMMPS)
    "simagent.backends.expert.domains.electronic",  # DFT (QE, VASP) and ML potentials: method words
]


def refine(text: str, low: str, spec: TaskSpec) -> None:
    for name in MODULES:
        importlib.import_module(name).refine(text, low, spec)
