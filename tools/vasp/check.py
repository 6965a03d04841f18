"""The INCAR is checked before anything runs: pymatgen's Incar.check_params (unknown tags, wrong
types or values) plus simagent's own policy (ranges that waste a machine or break a run)."""

from __future__ import annotations

import warnings

from pymatgen.io.vasp.inputs import Incar

# Policy: (tag, low, high). ENCUT beyond 1.3x the hardest PAW ENMAX (~1000 eV) only costs time;
# NSW above 1000 ionic steps and NELM above 500 hide a failing run.
RANGES = (("ENCUT", 100.0, 1000.0), ("NSW", 0, 1000), ("NELM", 1, 500), ("EDIFF", 1e-10, 1e-2),
          ("SIGMA", 1e-4, 0.5))


def incar_findings(incar: Incar) -> list[str]:
    """Problems with an INCAR, empty when it may run."""
    problems = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        incar.check_params()
    problems += [f"pymatgen Incar.check_params: {w.message}" for w in caught]
    for tag, low, high in RANGES:
        if tag in incar and not low <= float(incar[tag]) <= high:
            problems.append(f"{tag} = {incar[tag]} is outside simagent's allowed range [{low:g}, {high:g}]")
    if "NPAR" in incar and "NCORE" in incar:
        problems.append("NPAR and NCORE are both set; VASP uses NPAR and ignores NCORE: keep one")
    return problems
