"""Protocol lammps/energy_components: the potential energy split into its terms (bond, angle,
dihedral, improper, van der Waals, Coulomb, long-range) with uncertainties.

Systems: the Kremer-Grest bead-spring melt (same run as lammps/chain_conformation, without the
trajectory) and LJ / monatomic fluids (NVT MD from a melted fcc start, the state point rules of
lammps/fluid_md). The terms are LAMMPS thermo keywords ebond eangle edihed eimp evdwl ecoul elong
(evdwl includes the LJ tail correction when it is on), written at full precision; terms a model
does not have are exactly zero and reported as such. Gate: in every production sample the terms add
up to pe (an identity; a mismatch means an energy LAMMPS does not split, e.g. from a fix).
Averages follow equilibration detection with Flyvbjerg-Petersen block errors, per atom by
default or per molecule (a chain; in a monatomic fluid a molecule is an atom).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
from pydantic import BaseModel, Field

from simagent.defaults import Default, DefaultsLog
from simagent.errors import CalculationFailed, ReadError, RequestError
from simagent.models import Job, Result, TaskSpec
from simagent.protocols import Protocol, register
from simagent.stats import block_average, detect_equilibration
from tools.lammps.inputs import render
from tools.lammps.protocols.chains import ChainMeltParams, melt_job, melt_parameters, melt_thermo
from tools.lammps.protocols.fluid import (
    FLUID_KINDS,
    KCAL_MOL_PER_EV,
    KJ_MOL_PER_EV,
    REDUCED,
    check_temperature,
    norm_unit,
)
from tools.lammps.protocols.fluid_common import (
    as_params,
    check_columns,
    check_full_production,
    check_sample_count,
    finished_output,
    md_job,
)
from tools.lammps.protocols.transport import (
    FLUID_RUN_DEFAULTS,
    TransportParams,
    box_cells,
    fluid_basis,
    fluid_title,
    run_lengths,
)

ENERGY = "energy_components"
# (name in the result, LAMMPS thermo column)
COMPONENTS = [
    ("bond", "E_bond"),
    ("angle", "E_angle"),
    ("dihedral", "E_dihed"),
    ("improper", "E_impro"),
    ("vdwl", "E_vdwl"),
    ("coul", "E_coul"),
    ("long", "E_long"),
]
TOTAL = ("potential", "PotEng")
LABEL = {"bond": "bond", "angle": "angle", "dihedral": "dihedral", "improper": "improper",
         "vdwl": "van der Waals (pair)", "coul": "Coulomb (pair)", "long": "long-range (kspace)",
         "potential": "total potential"}  # fmt: skip
# metal-unit output per atom/molecule, base eV
ENERGY_UNITS = {"ev": (1.0, "eV"), "mev": (1e3, "meV"), "kj/mol": (KJ_MOL_PER_EV, "kJ/mol"),
                "kcal/mol": (KCAL_MOL_PER_EV, "kcal/mol")}  # fmt: skip
PER_MOLECULE = r"\bper (?:molecule|chain|polymer)\b|/\s*(?:molecule|chain)\b"


class FluidEnergyParams(TransportParams):
    """An LJ / monatomic fluid sampled in NVT (Nose-Hoover) for its energy terms."""

    thermo_every: int = Field(default=10, gt=0)


class EnergyComponentsParams(BaseModel):
    system: Literal["polymer", "fluid"]
    per: Literal["atom", "molecule"] = "atom"

    # the polymer branch then declares ChainMeltParams.DEFAULTS (tools/lammps/protocols/chains.py)
    DEFAULTS: ClassVar[dict[str, Default]] = {
        "per": Default("atom", "energies per atom unless 'per molecule' is asked"),
        **FLUID_RUN_DEFAULTS,
        "n_cells": Default(5, "N = 500 (5^3 fcc cells), as in the NIST LJ reference simulations", "NIST SRSW",
                           shown="{n_atoms}", parameter="n_atoms"),
        "production_steps": Default(100.0, "100 tau NVT: energy terms per atom to ~0.05 % (as lammps/fluid_md)",
                                    shown="{steps}"),
    }
    melt: ChainMeltParams | None = None
    fluid: FluidEnergyParams | None = None
    identity_tolerance: float = Field(default=1e-9, gt=0, description="relative, terms vs pe per sample")


def unit_request(spec: TaskSpec) -> tuple[str | None, str | None]:
    """(energy unit without the per-part, 'atom' / 'molecule' / None) from the property's unit
    ('kJ/mol', 'reduced per molecule', 'eV/atom') or, failing that, the request text."""
    per = None
    unit = None
    for prop in spec.properties:
        if prop.name == ENERGY and prop.unit:
            text = prop.unit.strip().lower()
            if re.search(r"molecule|chain", text):
                per = "molecule"
            elif re.search(r"atom|bead|particle", text):
                per = "atom"
            unit = re.sub(r"\s*(?:/|per)\s*(?:molecule|chain|atom|bead|particle)\b", "", text).strip() or None
    if per is None and re.search(PER_MOLECULE, spec.request.lower()):
        per = "molecule"
    return unit, per


def output_unit(units: str, unit: str | None, per: str) -> tuple[float, str]:
    if units == "lj":
        if norm_unit(unit) not in REDUCED | {"epsilon"}:
            raise RequestError(f"reduced-unit systems report energies in epsilon (reduced), not {unit!r}")
        return 1.0, f"reduced/{per}"
    key = norm_unit(unit) if unit else "ev"
    if key not in ENERGY_UNITS:
        raise RequestError(f"unknown energy unit {unit!r}; use one of {', '.join(ENERGY_UNITS)}")
    factor, label = ENERGY_UNITS[key]
    return factor, (label if label.endswith("/mol") else f"{label}/{per}")


@register
class EnergyComponents(Protocol):
    name = "lammps/energy_components"
    engine = "lammps"
    properties = frozenset({ENERGY})
    Params = EnergyComponentsParams
    description = (
        "Potential energy split into bond, angle, dihedral, improper, van der Waals, Coulomb and "
        "long-range terms (block-averaged, per atom or per molecule) for the Kremer-Grest "
        "bead-spring melt and LJ / monatomic fluids; the terms must add up to pe"
    )

    def applies_to(self, spec: TaskSpec) -> bool:
        system = spec.system
        if system is None or system.kind not in ("polymer", *FLUID_KINDS):
            return False
        if spec.potential is not None and spec.potential.family not in (None, "lj"):
            return False
        if system.kind == "atomic_fluid" and spec.units_style not in (None, "metal"):
            return False
        if system.kind != "atomic_fluid" and spec.units_style not in (None, "lj"):
            return False
        return bool(spec.properties) and {p.name for p in spec.properties} == {ENERGY}

    def choose(self, spec: TaskSpec, record: DefaultsLog) -> EnergyComponentsParams:
        if {p.name for p in spec.properties} != {ENERGY}:
            raise RequestError(f"{self.name} computes {ENERGY} only")
        for prop in spec.properties:
            if prop.at != "average":
                raise RequestError(f"{ENERGY} are time averages here; at={prop.at!r} is not possible")
        unit, per = unit_request(spec)
        per = record.take("per", per)
        if spec.system is None:
            raise RequestError(f"{self.name} needs a system")
        if spec.system.kind == "polymer":
            melt = melt_parameters(spec, self.name, record, need_trajectory=False)
            output_unit("lj", unit, per)
            return EnergyComponentsParams(system="polymer", per=per, melt=melt)
        basis = fluid_basis(spec, self.name, record)
        output_unit(basis["units"], unit, per)
        cells = box_cells(spec, basis, 1, record)
        lengths = run_lengths(spec, basis, 10, record)
        fluid = FluidEnergyParams(
            **{k: v for k, v in basis.items() if not k.startswith("_")}, **lengths, cells=cells, thermo_every=10
        )
        return EnergyComponentsParams(system="fluid", per=per, fluid=fluid)

    def jobs(self, params: BaseModel) -> list[Job]:
        p = as_params(EnergyComponentsParams, params)
        if p.system == "polymer":
            return [melt_job(self.name, p.melt)]
        f = p.fluid
        text = render("energy_components_fluid.lmp.j2", title=fluid_title(f), **f.template_values())
        return [md_job(self.name, p, {"in.lammps": text}, f.time_limit_s)]

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p = as_params(EnergyComponentsParams, params)
        job_dir = Path(job_dirs["md"])
        if p.system == "polymer":
            thermo = melt_thermo(job_dir, p.melt)
            units, count = "lj", (p.melt.n_chains if p.per == "molecule" else p.melt.n_atoms)
            run = (
                f"{p.melt.n_chains} Kremer-Grest chains of {p.melt.chain_length} beads, rho* = {p.melt.density:g}, "
                f"T* = {p.melt.temperature:g}, Langevin NVT, {p.melt.production_steps} production steps"
            )
        else:
            thermo = fluid_thermo(job_dir, p.fluid)
            units, count = p.fluid.units, p.fluid.n_atoms
            run = (
                f"N = {p.fluid.n_atoms}, Nose-Hoover NVT, LJ cutoff {p.fluid.cutoff_sigma:g} sigma"
                f"{', tail correction' if p.fluid.tail_correction else ''}, {p.fluid.production_steps} "
                f"production steps"
            )
        terms = component_series(thermo, p.identity_tolerance)
        unit, _ = unit_request(spec)
        factor, label = output_unit(units, unit, p.per)
        t0 = detect_equilibration(terms["potential"])
        results = []
        for name, series in terms.items():
            per_part = series[t0:] / count
            if np.all(per_part == 0.0):
                value, se, how = 0.0, None, "identically zero: the model has no such term"
            else:
                value, se = block_average(per_part)
                how = (
                    f"mean of production samples {t0}..{series.size - 1} (equilibration detection, Chodera "
                    f"2016), standard error by Flyvbjerg-Petersen blocking"
                )
            results.append(Result(
                quantity=f"{ENERGY}_{name}", value=value * factor, unit=label,
                uncertainty=None if se is None else abs(se * factor), job="md",
                method=f"{LABEL[name]} energy per {p.per} (LAMMPS thermo); {how}; terms add up to pe in every "
                       f"sample; {run}",
                log=str(job_dir / "log.lammps"),
            ))  # fmt: skip
        return results


def fluid_thermo(job_dir: Path, p: FluidEnergyParams) -> dict[str, np.ndarray]:
    """Production thermo of the fluid run after the run-level gates."""
    thermo = finished_output(job_dir).last_run()  # refused when any thermo value is NaN or inf
    check_columns(thermo, ("Step", "Temp", "PotEng", "Atoms"))
    check_full_production(thermo, p.n_atoms, p.production_steps)
    check_sample_count(thermo)
    check_temperature(thermo["Temp"], p.temperature, p.temperature_tolerance)
    return thermo


def component_series(thermo: dict[str, np.ndarray], tolerance: float = 1e-9) -> dict[str, np.ndarray]:
    """Time series of each energy term and of pe (totals); fails unless the terms add up to pe in
    every sample (relative to the sum of their magnitudes)."""
    missing = [column for _, column in [*COMPONENTS, TOTAL] if column not in thermo]
    if missing:
        raise ReadError(f"thermo output lacks {', '.join(missing)}")
    series = {name: np.asarray(thermo[column], dtype=float) for name, column in [*COMPONENTS, TOTAL]}
    parts = np.array([series[name] for name, _ in COMPONENTS])
    mismatch = np.abs(parts.sum(axis=0) - series["potential"])
    scale = np.abs(parts).sum(axis=0) + 1e-300
    worst = int(np.argmax(mismatch / scale))
    if mismatch[worst] > tolerance * scale[worst] and mismatch[worst] > 1e-12:
        raise CalculationFailed(
            f"energy terms do not add up to pe (sample {worst}: {parts[:, worst].sum():.12g} vs "
            f"{series['potential'][worst]:.12g}): an energy contribution LAMMPS does not split (e.g. from a fix)"
        )
    return series
