"""Gay-Berne ellipsoids of a described simulation (simagent.described.ellipsoids) as LAMMPS commands
(LAMMPS manual: atom_style ellipsoid, set shape / quat/random, pair_style gayberne, fix npt/asphere
and nve/asphere, compute temp/asphere and erotate/asphere, compute_modify extra/dof).

The rotational kinetic energy metric is per particle of the measured types: compute erotate/asphere
over their group (sum of 1/2 w.I.w over the group) divided by the group's count, each thermo row.
"""

from __future__ import annotations

import numpy as np

from simagent.described.model import SimulationDescription
from simagent.errors import ReadError
from simagent.models import Result
from simagent.stats import block_average

STILL = "gb_still"  # the types pair gayberne never torques (spheres)
MEASURED = "gb_measured"  # the types the rotational kinetic energy is averaged over
DOF = "gb_dof"  # the extra/dof of the temperature computes
ROT_TEMP = "c_rot"  # compute temp/asphere (translational + rotational temperature)
EROT_EACH = "v_gb_erot_each"  # rotational kinetic energy per measured particle


def _fmt(x: float) -> str:
    return f"{x:.10g}"


def setup_lines(desc: SimulationDescription) -> list[str]:
    """After the atoms and their masses: shapes, random orientations, the groups, and the rotational
    temperature with its degrees-of-freedom correction (LAMMPS's default extra/dof is the dimension;
    each particle that never rotates removes its 1 (2D) or 3 (3D) rotational degrees of freedom)."""
    e = desc.ellipsoids
    if e is None:
        return []
    lines = [f"set             type {t} shape {' '.join(_fmt(x) for x in s)}" for t, s in sorted(e.shapes.items())]
    lines.append(f"set             group all quat/random {e.quat_seed}")
    lines.append(f"group           {MEASURED} type {' '.join(map(str, e.measured))}")
    if e.dof_corrected and e.still_types:
        per = 1 if desc.dimension == 2 else 3
        lines += [f"group           {STILL} type {' '.join(map(str, e.still_types))}",
                  f"variable        {DOF} equal {per}*count({STILL})+{desc.dimension}"]
    if e.rotation_temperature:
        lines.append("compute         rot all temp/asphere")
        if _corrected(desc):
            lines.append(f"compute_modify  rot extra/dof ${{{DOF}}}")
    return lines


def _corrected(desc: SimulationDescription) -> bool:
    e = desc.ellipsoids
    return e is not None and e.dof_corrected and bool(e.still_types)


def pair_lines(desc: SimulationDescription) -> list[str]:
    e = desc.ellipsoids
    assert e is not None
    lines = [f"pair_style      gayberne {_fmt(e.gamma)} {_fmt(e.upsilon)} {_fmt(e.mu)} {_fmt(e.cutoff)}"]
    for p in e.pairs:
        wells = " ".join(_fmt(w) for w in (*p.well_i, *p.well_j))
        lines.append(f"pair_coeff      {p.i} {p.j} {_fmt(p.epsilon)} {_fmt(p.sigma)} {wells}"
                     + (f" {_fmt(p.cutoff)}" if p.cutoff is not None else ""))
    return lines


def asphere_fixes(desc: SimulationDescription, fixes: list[str]) -> list[str]:
    """The stage's integrator as its /asphere variant (which also moves the orientations); the
    barostat's own temperature compute (<fix-ID>_temp) gets the degrees-of-freedom correction."""
    if desc.ellipsoids is None:
        return fixes
    out = []
    for line in fixes:
        words = line.split()
        if words[:1] == ["fix"] and len(words) > 3 and words[3] in ("nve", "nvt", "npt", "nph"):
            out.append(f"fix             {words[1]} {words[2]} {words[3]}/asphere {' '.join(words[4:])}".rstrip())
            if words[3] != "nve" and _corrected(desc):
                out.append(f"compute_modify  {words[1]}_temp extra/dof ${{{DOF}}}")
        else:
            out.append(line)
    return out


def rotation_measure(desc: SimulationDescription) -> tuple[list[str], list[str]]:
    """The commands and thermo columns of the rotational kinetic energy per measured particle (and the
    rotational temperature when the text asks for compute temp/asphere)."""
    lines = ["compute         gb_erot gb_measured erotate/asphere",
             f"variable        {EROT_EACH[2:]} equal c_gb_erot/count({MEASURED})"]
    columns = [EROT_EACH]
    if desc.ellipsoids is not None and desc.ellipsoids.rotation_temperature:
        columns.append(ROT_TEMP)
    return lines, columns


def rotation_result(block: dict[str, np.ndarray], desc: SimulationDescription, energy_unit: str, job: str,
                    where: str) -> Result:
    e = desc.ellipsoids
    assert e is not None
    if EROT_EACH not in block:
        raise ReadError(f"thermo column {EROT_EACH} missing")
    series = block[EROT_EACH]
    mean, err = block_average(series)
    kinds = ", ".join(f"type {t} ({'x'.join(_fmt(x) for x in e.shapes[t])})" for t in e.measured)
    still = (f"; the type {', '.join(map(str, e.still_types))} spheres carry none (pair gayberne never torques them), "
             "so the average over all particles is this x (their number / all particles)") if e.still_types else ""
    said = desc.origin.get("ellipsoids.measured")
    named = f" (the text: '{said.evidence.split(':')[0]}')" if said is not None and said.source == "rules" else ""
    return Result(quantity="rotational_energy_per_atom", property="rotational_energy_per_atom", value=mean,
                  uncertainty=err, unit=energy_unit, job=job, log="log.lammps",
                  method=f"rotational kinetic energy per particle of {kinds}{named}: compute "
                         f"erotate/asphere (the sum of 1/2 w.I.w over them) / their count, each thermo row (thermo "
                         f"{EROT_EACH}), averaged over {where}, {series.size} samples; standard error by block "
                         f"averaging. Not compute temp/asphere, which gives a temperature{still}")
