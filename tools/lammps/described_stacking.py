"""A generalised stacking-fault scan (simagent.described.stacking) as LAMMPS commands, and its energy.

Rendering: the scan's constraint is defined once after the system (fix setforce zeroing the force
components other than the relaxed one on every atom, never unfixed), and each displaced stage opens
with displace_atoms of the moved half (units box) before its minimisation; the scan is unrolled, one
displace/minimise block per displacement, so that each minimisation's thermo block is its own.

Analysis: E_k is the potential energy of the last thermo row of minimisation k (stage 1 the undisplaced
crystal, stage n + 1 the n-th displacement); GSF_n = (E_{n+1} - E_1) / A x 16.0217662 J/m^2 per eV/Å^2,
A the box's x-y area (the slip plane; the x and y edges do not change in a minimisation without a box
relaxation); the metric is the mean of GSF_1 .. GSF_N.
"""

from __future__ import annotations

import re

import numpy as np

from simagent.described.model import SimulationDescription, Stage
from simagent.described.stacking import J_PER_M2_PER_EV_PER_A2
from simagent.errors import ReadError
from simagent.models import Result

GSF = "generalized_stacking_fault_energy"
CONSTRAINT_FIX = "slipfix"


def _fmt(x: float) -> str:
    return f"{x:.10g}"


def setup_lines(desc: SimulationDescription) -> list[str]:
    """The scan's constraint, for every minimisation: forces zeroed but along the relaxed axis."""
    if desc.scan is None:
        return []
    forces = " ".join("NULL" if axis == desc.scan.relaxed else "0" for axis in "xyz")
    return [f"fix             {CONSTRAINT_FIX} all setforce {forces}"]


def displace_lines(stage: Stage) -> list[str]:
    d = stage.displace
    if d is None:
        return []
    units = "box" if d.box_units else "lattice"
    return [f"displace_atoms  {d.group} move {' '.join(_fmt(c) for c in d.move)} units {units}"]


def slip_area(desc: SimulationDescription) -> float:
    """The slip plane's area in Å^2: the box's x-y face (the box in Å)."""
    box = desc.box
    if box is None or box.lattice_units:
        raise ReadError("the stacking-fault scan needs the box in Å")
    return (box.hi[0] - box.lo[0]) * (box.hi[1] - box.lo[1])


def curve(runs: list[dict[str, np.ndarray]], desc: SimulationDescription) -> tuple[np.ndarray, np.ndarray]:
    """(displacement in Å, GSF in J/m^2) of each displaced state, from the minimisations' thermo blocks."""
    scan = desc.scan
    if scan is None:
        raise ReadError("the description holds no stacking-fault scan")
    if len(runs) != scan.count + 1:
        raise ReadError(f"{len(runs)} minimisation blocks for a scan of {scan.count} displacements (+ the reference)")
    energies = np.array([float(block["PotEng"][-1]) for block in runs])
    gsf = (energies[1:] - energies[0]) / slip_area(desc) * J_PER_M2_PER_EV_PER_A2
    return scan.step * np.arange(1, scan.count + 1), gsf


def capped_minimisations(log: str) -> int:
    """How many minimisations stopped at their iteration or evaluation cap, not at a tolerance."""
    return len(re.findall(r"Stopping criterion = max (?:iterations|force evaluations)", log))


def result(runs: list[dict[str, np.ndarray]], desc: SimulationDescription, log: str, job: str) -> Result:
    """The mean GSF energy over the scan's displaced states (module docstring), with the curve in its method."""
    scan = desc.scan
    assert scan is not None
    shifts, gsf = curve(runs, desc)
    warnings = []
    capped = capped_minimisations(log)
    if capped:
        warnings.append(f"{capped} of the {scan.count + 1} minimisations stopped at their iteration cap, not at the "
                        "stated tolerances: those energies are upper bounds")
    if gsf.min() < -0.01:
        warnings.append(f"a displaced state lies {-gsf.min():.3g} J/m^2 below the undisplaced crystal: the reference "
                        "state is not the lowest, and the GSF values are off by that much")
    peak = int(np.argmax(gsf))
    shown = ", ".join(f"{s:g}: {g:.4f}" for s, g in zip(shifts, gsf, strict=True))
    return Result(quantity=GSF, value=float(gsf.mean()), unit="J/m^2", job=job, log="log.lammps", warnings=warnings,
                  method=f"mean over the {scan.count} displaced states of GSF_n = (E_n - E_0) / A: E_n the potential "
                         f"energy after the minimisation that follows the n-th displacement of the {scan.moved} half "
                         f"by {scan.step:g} Å along {scan.axis}, E_0 that of the undisplaced crystal after the same "
                         f"minimisation, A = {slip_area(desc):.6g} Å^2 the box's x-y face; "
                         f"{J_PER_M2_PER_EV_PER_A2:.9g} J/m^2 per eV/Å^2. Curve (displacement Å: J/m^2): {shown}; "
                         f"maximum {gsf[peak]:.4f} at "
                         f"{shifts[peak]:g} Å, minimum {gsf.min():.4f}")
