"""Plumbing shared by the LAMMPS fluid-side protocols (fluid_md, shear_viscosity,
thermal_conductivity, energy_components, chain_conformation): the single MD job, the run-level
gates on a finished LAMMPS run, and the g(r) first-shell analysis (also used by gromacs/liquid_md).

Nothing here depends on a protocol module, so each of them can import it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np
from pydantic import BaseModel

from simagent.errors import CalculationFailed, ReadError, RequestError
from simagent.models import Job, TaskSpec
from tools.lammps.parse import LammpsOutput, read_output

Record = Callable[[str, object, str], None]
ParamsT = TypeVar("ParamsT", bound=BaseModel)

# fewest production thermo rows a time average is taken over
MIN_THERMO_SAMPLES = 20


# ---------------------------------------------------------------------------------------------
# Parameters and jobs
# ---------------------------------------------------------------------------------------------


def as_params(model: type[ParamsT], params: BaseModel | dict) -> ParamsT:
    """Validate a protocol's parameters (a model of any class, or their dict) as `model`."""
    return model.model_validate(params.model_dump() if isinstance(params, BaseModel) else params)


def check_averaged_properties(spec: TaskSpec, protocol: str, properties: frozenset[str], what: str) -> None:
    """The spec asks only for `properties`, each as a time average (`what` says of what, for the message)."""
    names = {p.name for p in spec.properties}
    if not names or not names <= properties:
        raise RequestError(f"{protocol} computes {', '.join(sorted(properties))}")
    for prop in spec.properties:
        if prop.at != "average":
            raise RequestError(f"{prop.name} is {what}; at={prop.at!r} is not possible")


def md_job(protocol: str, params: BaseModel, inputs: dict[str, str], time_limit_s: float) -> Job:
    """The one MD job (id and stage 'md') of a single-run protocol."""
    return Job(
        id="md",
        protocol=protocol,
        stage="md",
        params=params.model_dump(mode="json"),
        inputs=inputs,
        time_limit_s=time_limit_s,
    )


# ---------------------------------------------------------------------------------------------
# Run-level gates on the LAMMPS output
# ---------------------------------------------------------------------------------------------


def finished_output(job_dir: Path) -> LammpsOutput:
    """The parsed LAMMPS output of a run that stopped without an error and finished."""
    out = read_output(job_dir)
    if out.errors:
        raise CalculationFailed(f"LAMMPS stopped with: {out.errors[0]}")
    if not out.finished:
        raise CalculationFailed("the LAMMPS run did not finish (no 'Total wall time' in log)")
    return out


def check_columns(thermo: dict[str, np.ndarray], needed: Sequence[str]) -> None:
    """Every needed thermo column is present (all missing ones named). Finite values need no check
    here: the reader refuses a run whose thermo holds a NaN or inf (LammpsOutput.runs / last_run)."""
    missing = [k for k in needed if k not in thermo]
    if missing:
        raise ReadError(f"thermo output lacks {', '.join(missing)}")


def check_full_production(
    thermo: dict[str, np.ndarray],
    n_atoms: int,
    production_steps: int,
    lost: str = "atoms were lost (unstable dynamics)",
) -> None:
    """No atom lost (`lost` says what and why) and the production thermo spans steps 0..production_steps."""
    if np.any(thermo["Atoms"] != n_atoms):
        raise CalculationFailed(f"{n_atoms - int(thermo['Atoms'].min())} {lost}")
    if int(thermo["Step"][0]) != 0 or int(thermo["Step"][-1]) != production_steps:
        raise CalculationFailed("the production run did not cover all its steps")


def check_sample_count(thermo: dict[str, np.ndarray]) -> None:
    """Enough production thermo rows to average over."""
    if thermo["Step"].size < MIN_THERMO_SAMPLES:
        raise CalculationFailed(
            f"fewer than {MIN_THERMO_SAMPLES} thermo samples in production: too few to average"
        )
