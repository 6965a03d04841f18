"""fix msst rendered for a described stage (simagent.described.shock), with its four global values
in the thermo output under the names LAMMPS's fix msst documentation suggests (v_dhug, v_dray,
v_lgr_vel, v_lgr_pos)."""

from __future__ import annotations

import numpy as np

from simagent.described.model import SimulationDescription, Stage
from simagent.errors import CalculationFailed, ReadError
from simagent.models import Result
from simagent.stats import block_average

FIX_ID = "msst"
# f_msst[1..4]: departure from the Hugoniot (temperature units), from the Rayleigh line (pressure
# units), the Lagrangian speed (velocity units), the Lagrangian position (distance units)
VARIABLES = ("dhug", "dray", "lgr_vel", "lgr_pos")
COLUMNS = tuple(f"v_{name}" for name in VARIABLES)


def _fmt(x: float) -> str:
    return f"{x:.10g}"


def fix_lines(stage: Stage) -> list[str]:
    """The stage's integrator: fix msst on all atoms (tested by LAMMPS for group all only)."""
    m = stage.msst
    assert m is not None
    keywords = [("q", m.q), ("mu", m.mu), ("p0", m.p0), ("v0", m.v0), ("e0", m.e0), ("tscale", m.tscale),
                ("beta", m.beta)]
    args = " ".join(f"{key} {_fmt(value)}" for key, value in keywords if value is not None)
    return [f"fix             {FIX_ID} all msst {m.axis} {_fmt(m.shock_velocity)} {args}"]


def variable_lines() -> list[str]:
    return [f"variable        {name} equal f_{FIX_ID}[{i}]" for i, name in enumerate(VARIABLES, start=1)]


# property -> (thermo column, what it is, the LAMMPS unit kind per unit style)
PROPERTIES = {
    "hugoniot_departure": ("v_dhug", "the departure from the Hugoniot, fix msst's dhugoniot", "temperature"),
    "rayleigh_departure": ("v_dray", "the departure from the Rayleigh line, fix msst's drayleigh", "pressure"),
    "lagrangian_speed": ("v_lgr_vel", "the cell's Lagrangian speed (particle velocity), fix msst's lagrangian_speed",
                         "velocity"),
    "lagrangian_position": ("v_lgr_pos", "the cell's Lagrangian position behind the shock front, fix msst's "
                            "lagrangian_position", "length"),
}  # fmt: skip
UNITS = {"metal": {"temperature": "K", "pressure": "bar", "velocity": "angstrom/ps", "length": "angstrom"},
         "real": {"temperature": "K", "pressure": "atm", "velocity": "angstrom/fs", "length": "angstrom"}}
BOLTZMANN = {"metal": 8.617343e-5, "real": 0.0019872067}  # LAMMPS force->boltz (eV/K, kcal/mol/K)


def shock_stage(desc: SimulationDescription) -> Stage | None:
    """The averaged stage when fix msst integrates it (its thermo holds the four columns)."""
    index = desc.average_stage if desc.average_stage is not None else (desc.run_stages() or [None])[-1]
    stage = desc.stages[index] if index is not None else None
    return stage if stage is not None and stage.msst is not None else None


def result(name: str, block: dict[str, np.ndarray], desc: SimulationDescription, job: str, where: str) -> Result:
    """The average of one of fix msst's values over the averaged stage's thermo rows, in LAMMPS's
    units for the description's unit style; the Hugoniot departure's method also gives it per atom
    in energy units (dhugoniot x k_B x dof / N, LAMMPS's own scaling with dof = 3N - 3)."""
    column, what, kind = PROPERTIES[name]
    if column not in block:
        raise ReadError(f"thermo column {column} missing")
    series = block[column]
    if not np.all(np.isfinite(series)):
        raise CalculationFailed(f"non-finite {column} in {where}")
    mean, err = block_average(series)
    unit = UNITS.get(desc.units or "lj", {}).get(kind, "reduced")
    extra = ""
    if name == "hugoniot_departure" and desc.units in BOLTZMANN and "Atoms" in block:
        n = float(block["Atoms"][0])
        per_atom = mean * BOLTZMANN[desc.units] * (3 * n - 3) / n
        energy = "eV" if desc.units == "metal" else "kcal/mol"
        extra = f"; as an energy per atom, dhugoniot x k_B x (3N-3)/N = {per_atom:.6g} {energy}/atom"
    return Result(quantity=name, property=name, value=mean, unit=unit, uncertainty=err, job=job, log="log.lammps",
                  method=f"average of {what} (thermo {column} = f_{FIX_ID}[{list(PROPERTIES).index(name) + 1}])"
                         f" over {where}, {series.size} samples; standard error by block averaging{extra}")
