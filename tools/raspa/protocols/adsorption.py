"""Adsorption in rigid porous frameworks with RASPA2: GCMC uptake and isotherms, Widom insertion
(Henry coefficient, heat of adsorption at infinite dilution), binary/multicomponent mixtures
(selectivity), each optionally repeated with further framework force fields for comparison.

Shared recipe (all protocols):
- framework: a CIF path, the structure agent's checked P1 CIF, or a structure RASPA ships; written as a
  P1 CIF with force-field atom types as labels into every job folder;
- force field: UFF (default for MOFs) or DREIDING by element (Lorentz-Berthelot, 12.8 A, shifted), or for
  silica/aluminosilicate zeolites Dubbeldam 2004 (alkanes), Garcia-Sanchez 2009 (CO2), TraPPE-zeo (others);
  guests TraPPE by default (forcefields/guests.json; RASPA additions in raspa_guests.json);
- supercell: every perpendicular width at least twice the cutoff;
- electrostatics: Ewald only when the framework and a guest both carry charges;
- excess loading: absolute minus the bulk gas (Peng-Robinson, as RASPA computes it) in the helium void
  volume, with the helium void fraction measured by Widom insertion of helium at 298 K (RASPA
  convention) in a separate job, unless given;
- statistics: RASPA's 5-block averages; the quoted uncertainty is RASPA's block standard error.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, Field, model_validator

from simagent.defaults import Default, DefaultsLog
from simagent.errors import CalculationFailed, ReadError, RequestError
from simagent.materials import forcefields as ff
from simagent.materials import frameworks as fw
from simagent.models import Job, Quantity, Result, TaskSpec
from simagent.protocols import Protocol, register
from simagent.units import convert, to_canonical
from tools.raspa import engine
from tools.raspa.inputs import Component, JobSpec, gcmc_moves, job_files, widom_moves
from tools.raspa.parse import RaspaOutput, read_output
from tools.raspa.units import GAS_CONSTANT_KJ, LoadingBasis, henry_unit, loading_unit

Precision = Literal["quick", "standard", "high"]
# MC cycles (RASPA: one cycle = max(20, N) moves). Measured block errors of the absolute loading for CH4
# in IRMOF-1 at 35 bar: 4 % after 1000 production cycles, 1.3 % after 20000. 'quick' is for tests and
# previews (~5 %), 'standard' for answers (~2 %), 'high' for publication-grade numbers (~1 %); the RASPA
# manuals' examples use 10^4-10^5 production cycles.
GCMC_CYCLES: dict[str, tuple[int, int]] = {"quick": (500, 1000), "standard": (5000, 10000), "high": (20000, 50000)}
WIDOM_CYCLES: dict[str, int] = {"quick": 1000, "standard": 5000, "high": 20000}
HELIUM_CYCLES: dict[str, int] = {"quick": 500, "standard": 2000, "high": 10000}
# Helium void fraction: Widom insertion of helium at 298 K (the convention of RASPA and CoRE MOF work).
HELIUM_TEMPERATURE_K = 298.0
HELIUM_JOB = "helium"
# A block error above this fraction of the value makes the method string warn (the number stays).
NOISY_RELATIVE_ERROR = 0.10
TIME_LIMIT_S = 4 * 3600.0
Blocking = Literal["auto", "none", "raspa"]


# ---------------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------------


class AdsorptionParams(BaseModel):
    """What every RASPA adsorption job depends on; defaults documented per field, and the settings
    the answer reports declared in DEFAULTS (templates filled from what common_parameters built)."""

    DEFAULTS: ClassVar[dict[str, Default]] = {
        "guest_models": Default("framework's own, else TraPPE", "the framework force field's own guest models where "
                                "it has them, else TraPPE", shown="{models}", parameter="guest models"),
        "blocked_pockets": Default("none", "no blocking file given (block_file, or blocking 'raspa' for a structure "
                                   "RASPA ships with one)", parameter="blocked pockets"),
        "helium_void_fraction": Default(HELIUM_TEMPERATURE_K, "needed for excess loadings (RASPA convention)",
                                        shown="measured: Widom insertion of helium at {value:g} K",
                                        parameter="helium void fraction"),
        "framework_charges": Default("eqeq", "{charged} carries charges (a quadrupole) and the CIF has none: without "
                                     "framework charges the answer would be LJ-only",
                                     shown="EQeq charge equilibration", parameter="framework charges"),
        "cycles": Default("per precision", "'{precision}' precision ({why}; block errors ~{error:g} % for small "
                          "guests in MOFs); a cycle is max(20, N) moves",
                          shown="{p.initialization_cycles} initialization + {p.production_cycles} production",
                          parameter="MC cycles"),
        "supercell": Default("twice the cutoff", "perpendicular widths {widths} A; each must be at least twice the "
                             "{cutoff:g} A cutoff", shown="{cells} unit cells", parameter="supercell"),
        "electrostatics": Default("Ewald when both charged", "Ewald only when framework and guests both carry "
                                  "charges", shown="{electro}", parameter="electrostatics"),
    }

    framework: str = Field(description="name used in files and answers")
    framework_cif: str = Field(description="absolute path of the source CIF")
    framework_source: str = ""
    force_field: str = Field(default="UFF", description="framework force field (UFF, DREIDING, zeolite sets)")
    compare_force_fields: list[str] = Field(default_factory=list, description="further force fields to run")
    guests: list[str] = Field(min_length=1, description="canonical guest keys, e.g. ['CO2', 'N2']")
    guest_models: dict[str, str] = Field(default_factory=dict, description="guest -> model (TraPPE, EPM2...)")
    framework_charges: ff.ChargeChoice = "auto"
    charge_method: ff.ChargeMethod = "auto"
    cutoff_A: float | None = Field(default=None, gt=0, description="None: the force field's own cutoff")
    unit_cells: tuple[int, int, int] | None = Field(default=None, description="None: from 2 x cutoff")
    temperature_K: float = Field(gt=0)
    precision: Precision = Field(default="standard", description="sets the cycle counts not given explicitly")
    initialization_cycles: int = Field(ge=0)
    production_cycles: int = Field(gt=0)
    print_every: int | None = Field(default=None, gt=0)
    helium_void_fraction: float | None = Field(default=None, gt=0, le=1, description="None: measured")
    helium_cycles: int = Field(gt=0)
    blocking: Blocking = Field(default="auto", description="auto: none unless block_file is given; "
                               "raspa: RASPA's own .block file of a shipped structure; none")
    block_file: str | None = Field(default=None, description="a RASPA .block file to use (e.g. from a Zeo++ job)")
    blocking_spheres: list[tuple[float, float, float, float]] = Field(default_factory=list)
    blocking_source: str = "none"
    seed: int | None = None
    time_limit_s: float = Field(default=TIME_LIMIT_S, gt=0)

    @model_validator(mode="before")
    @classmethod
    def _cycles_from_precision(cls, data: object) -> object:
        if isinstance(data, dict):
            precision = data.get("precision") or "standard"
            init, production = GCMC_CYCLES[precision]
            if cls.__name__ == "WidomParams":
                init, production = 0, WIDOM_CYCLES[precision]
            data = {"initialization_cycles": init, "production_cycles": production,
                    "helium_cycles": HELIUM_CYCLES[precision], **data}
        return data

    @model_validator(mode="after")
    def _known_names(self) -> AdsorptionParams:
        self.force_field = ff.canonical_force_field(self.force_field)
        self.compare_force_fields = [ff.canonical_force_field(x) for x in self.compare_force_fields]
        self.guests = [ff.canonical_guest(g) for g in self.guests]
        if len(set(self.guests)) != len(self.guests):
            raise ValueError("a guest is listed twice")
        return self

    @model_validator(mode="after")
    def _blocking(self) -> AdsorptionParams:
        if self.block_file:
            self.blocking_spheres = fw.read_block_file(Path(self.block_file))
            self.blocking_source = f"block file {self.block_file} ({len(self.blocking_spheres)} pockets)"
        elif self.blocking == "raspa" and not self.blocking_spheres:
            shipped = engine.shipped_block_file(Path(self.framework_cif).stem)
            if shipped is None:
                raise ValueError(f"RASPA ships no .block file for {self.framework}")
            self.blocking_spheres = fw.read_block_file(shipped)
            self.blocking_source = f"RASPA's {shipped.name} ({len(self.blocking_spheres)} pockets)"
        elif self.blocking == "none":
            self.blocking_spheres, self.blocking_source = [], "none"
        return self

    @property
    def force_fields(self) -> list[str]:
        return [self.force_field] + [x for x in self.compare_force_fields if x != self.force_field]


class GCMCParams(AdsorptionParams):
    pressures_Pa: list[float] = Field(min_length=1, description="one GCMC job per pressure")

    @model_validator(mode="after")
    def _pressures(self) -> GCMCParams:
        if any(p <= 0 for p in self.pressures_Pa):
            raise ValueError("pressures must be positive")
        return self


class MixtureParams(GCMCParams):
    mole_fractions: list[float] = Field(min_length=2, description="gas-phase mole fractions, in guest order")

    @model_validator(mode="after")
    def _composition(self) -> MixtureParams:
        if len(self.mole_fractions) != len(self.guests):
            raise ValueError("one mole fraction per guest")
        if any(y <= 0 for y in self.mole_fractions) or abs(sum(self.mole_fractions) - 1.0) > 1e-6:
            raise ValueError("mole fractions must be positive and sum to 1")
        return self


class WidomParams(AdsorptionParams):
    pass


# ---------------------------------------------------------------------------------------------
# From the TaskSpec
# ---------------------------------------------------------------------------------------------


# relative block error each precision aims at (GCMC_CYCLES above)
PRECISION_ERROR: dict[str, float] = {"quick": 5.0, "standard": 2.0, "high": 1.0}
_TARGET_ERROR = re.compile(
    r"(?:±|\+/-|\+-|within|to|errors?(?: of)?(?: below| under| less than)?|precision(?: of)?)\s*(\d+(?:\.\d+)?)\s*%",
    re.IGNORECASE)
_QUICK_WORDS = re.compile(r"\b(?:quick(?:ly)?|rough(?:ly)?|ballpark|fast|preview|order of magnitude)\b", re.IGNORECASE)
_HIGH_WORDS = re.compile(r"\b(?:high[- ]precision|precise(?:ly)?|publication[- ](?:quality|grade)|accurate(?:ly)?)\b",
                         re.IGNORECASE)


def requested_precision(request: str) -> tuple[Precision, str]:
    """The precision a request asks for, and why: a target error ('within 5 %', '+/- 1%') picks the
    cheapest level that reaches it; words such as 'quick' or 'rough' pick 'quick', 'high precision'
    or 'accurate' pick 'high'; otherwise 'standard'."""
    text = request or ""
    target = _TARGET_ERROR.search(text)
    if target:
        wanted = float(target.group(1))
        fitting = [p for p, e in sorted(PRECISION_ERROR.items(), key=lambda kv: -kv[1]) if e <= wanted]
        if not fitting:
            return "high", f"the request asks for {wanted:g} %; the finest level aims at ~{PRECISION_ERROR['high']:g} %"
        return fitting[0], f"the request asks for {wanted:g} %"  # type: ignore[return-value]
    if _HIGH_WORDS.search(text):
        return "high", "the request asks for a precise value"
    if _QUICK_WORDS.search(text):
        return "quick", "the request asks for a quick estimate"
    return "standard", "default"


def _quantity_K(q: Quantity | None, what: str) -> float:
    if q is None:
        raise RequestError(f"say the {what} for the adsorption simulation (e.g. 298 K)")
    value = to_canonical(q, "temperature").value
    if value <= 0:
        raise RequestError(f"{what} must be above 0 K")
    return value


def _pressures_Pa(spec: TaskSpec) -> list[float]:
    quantities = list(spec.conditions.pressures) or ([spec.conditions.pressure] if spec.conditions.pressure else [])
    if not quantities:
        raise RequestError("say the pressure (or a list of pressures for an isotherm)")
    values = []
    for q in quantities:
        bar = to_canonical(q, "pressure").value
        if bar <= 0:
            raise RequestError(f"pressure {q} is not positive")
        values.append(bar * 1e5)
    return sorted(set(values))


def _composition(spec: TaskSpec) -> dict[str, float]:
    """Gas-phase mole fractions by canonical guest key (Conditions.composition: list of species +
    mole_fraction; a plain mapping is accepted as well)."""
    raw = spec.conditions.composition
    items = raw.items() if isinstance(raw, dict) else ((c.species, c.mole_fraction) for c in raw)
    composition: dict[str, float] = {}
    for species, fraction in items:
        composition[ff.canonical_guest(species)] = float(fraction)
    return composition


def _requested_guests(spec: TaskSpec) -> list[str]:
    names = [ff.canonical_guest(n) for n in (spec.system.guests if spec.system else [])]
    for name in _composition(spec):
        if name not in names:
            names.append(name)
    return names


def _is_zeolite(structure: fw.FrameworkStructure) -> bool:
    return set(structure.elements) <= {"Si", "Al", "O", "Na"} and "Si" in structure.elements


def default_force_field(structure: fw.FrameworkStructure, guests: list[str]) -> tuple[str, str]:
    """(force field, why). MOFs: UFF. Zeolites: the set fitted for the guests when one covers all."""
    if not _is_zeolite(structure):
        return "UFF", "generic force field for MOF framework atoms (any element), Lorentz-Berthelot with TraPPE guests"
    alkanes = {ff.canonical_guest(name) for name in ("CH4", "ethane", "propane", "n-butane")}
    if set(guests) <= alkanes and set(structure.elements) <= {"Si", "O"}:
        return "Dubbeldam2004", "fitted for alkanes in all-silica zeolites"
    if set(guests) == {"CO2"}:
        return "GarciaSanchez2009", "fitted for CO2 in silica and sodium aluminosilicate zeolites"
    if set(structure.elements) <= {"Si", "O"}:
        return "TraPPE-zeo", "transferable all-silica zeolite force field for TraPPE guests"
    return "UFF", "no zeolite force field here covers these guests and framework atoms"


def common_parameters(spec: TaskSpec, params_cls: type[AdsorptionParams], extra: dict, log: DefaultsLog
                      ) -> AdsorptionParams:
    """Parameters every adsorption protocol shares; the defaults they apply are reported on `log` (the
    protocol notes its own on it too)."""
    system = spec.system
    if system is None or system.kind != "framework":
        raise RequestError("adsorption protocols need a framework (MOF or zeolite)")
    if not system.structure:
        raise RequestError("say which framework (a name such as IRMOF-1 or MFI_SI, or a CIF path)")
    resolved = fw.resolve(system.structure)
    structure = fw.read_cif(resolved.path, name=resolved.name)
    guests = extra.pop("guests", None) or _requested_guests(spec)
    if not guests:
        raise RequestError("say which gas adsorbs (e.g. CH4, CO2, N2)")
    temperature = _quantity_K(spec.conditions.temperature, "temperature")

    potential = spec.potential
    if potential and potential.force_field:
        names = [n.strip() for n in potential.force_field.replace(" vs ", ",").replace(" and ", ",").split(",")]
        names = [n for n in names if n]
        framework_ffs, guest_model_names = [], {}
        for name in names:
            try:
                framework_ffs.append(ff.canonical_force_field(name))
            except RequestError:
                matched = False
                for guest in guests:  # a guest model named instead (e.g. 'EPM2' for CO2)
                    entry = ff.guest_table()[guest]["models"]
                    if name in entry:
                        guest_model_names[guest] = name
                        matched = True
                if not matched:
                    raise
        force_field = framework_ffs[0] if framework_ffs else default_force_field(structure, guests)[0]
        compare = framework_ffs[1:]
    else:
        force_field, why = default_force_field(structure, guests)
        compare, guest_model_names = [], {}
        log.note(parameter="framework force field", value=force_field, reason=why)
    guest_models = ff.default_guest_models(force_field, guests)
    guest_models.update(guest_model_names)
    log.report("guest_models", models=", ".join(f"{g}: {m}" for g, m in guest_models.items()))

    precision, precision_why = requested_precision(spec.request)
    controls = spec.controls
    cycles = {}
    if controls.equilibration_steps is not None:
        cycles["initialization_cycles"] = controls.equilibration_steps
    if controls.production_steps is not None:
        cycles["production_cycles"] = controls.production_steps

    log.report("blocked_pockets")
    log.report("helium_void_fraction")
    charged = [g for g in guests if ff.guest_model(g, guest_models[g]).charged]
    if "framework_charges" not in extra and charged and force_field in ff.GENERIC_FORCE_FIELDS \
            and not structure.has_charges:
        extra["framework_charges"] = log.report("framework_charges", charged=", ".join(charged))
    params = params_cls(
        framework=resolved.name, framework_cif=str(resolved.path), framework_source=resolved.source,
        force_field=force_field, compare_force_fields=compare, guests=guests, guest_models=guest_models,
        temperature_K=temperature, precision=precision, seed=controls.seed, **cycles, **extra)
    if len(cycles) < 2:
        log.report("cycles", p=params, precision=precision, why=precision_why, error=PRECISION_ERROR[precision])
    typed = ff.type_framework(structure, params.force_field, params.framework_charges, params.cutoff_A)
    cells = params.unit_cells or fw.unit_cells_for_cutoff(structure.cell, typed.cutoff_A)
    widths = fw.perpendicular_widths(structure.cell)
    log.report("supercell", cells="x".join(map(str, cells)), widths=", ".join(f"{w:.2f}" for w in widths),
               cutoff=typed.cutoff_A)
    models = [ff.guest_model(g, params.guest_models.get(g)) for g in params.guests]
    _, electro = ff.electrostatics(typed, models, params.charge_method)
    log.report("electrostatics", electro=electro)
    return params


# ---------------------------------------------------------------------------------------------
# Jobs
# ---------------------------------------------------------------------------------------------


def _load(params: AdsorptionParams) -> fw.FrameworkStructure:
    return fw.read_cif(Path(params.framework_cif), name=params.framework)


def _job_spec(protocol: str, job_id: str, purpose: str, params: AdsorptionParams, structure: fw.FrameworkStructure,
              force_field: str, components_for, temperature: float, pressure: float | None,
              cycles: int, init_cycles: int) -> JobSpec:
    typed = ff.type_framework(structure, force_field, params.framework_charges, params.cutoff_A)
    models = [ff.guest_model(g, _model_for(params, force_field, g)) for g in params.guests]
    data = ff.assemble(typed, models)
    ewald, _ = ff.electrostatics(typed, models, params.charge_method)
    if ewald and typed.charged:
        fw.check_neutral(typed.charges, params.framework)
    cells = params.unit_cells or fw.unit_cells_for_cutoff(structure.cell, typed.cutoff_A)
    return JobSpec(
        protocol=protocol, job_id=job_id, purpose=purpose, structure=structure, framework=typed, force_field=data,
        components=components_for(models, typed), temperature_K=temperature, pressure_Pa=pressure, cycles=cycles,
        init_cycles=init_cycles, print_every=max(100, (cycles + init_cycles) // 10) if params.print_every is None
        else params.print_every, unit_cells=cells, ewald=ewald,
        helium_void_fraction=1.0, blocking_spheres=list(params.blocking_spheres), seed=params.seed)


def _model_for(params: AdsorptionParams, force_field: str, guest: str) -> str:
    """The guest model under this force field: explicit choices win, else the set's own model."""
    if force_field == params.force_field and guest in params.guest_models:
        return params.guest_models[guest]
    return ff.default_guest_models(force_field, [guest])[guest]


def helium_job(protocol: str, params: AdsorptionParams, structure: fw.FrameworkStructure) -> Job:
    """Helium void fraction = Widom Rosenbluth weight of helium, with framework LJ only. Force fields
    without self parameters on every framework atom (Kiselev-type zeolite sets) use UFF here."""
    typed = ff.type_framework(structure, params.force_field, "none", params.cutoff_A)
    helium_ff = params.force_field
    if any(t.lj is None for t in typed.types.values()):
        helium_ff = "UFF"
        typed = ff.type_framework(structure, "UFF", "none", params.cutoff_A)
    helium = ff.guest_model("He")
    spec = JobSpec(
        protocol=protocol, job_id=HELIUM_JOB,
        purpose=f"helium void fraction of {params.framework} ({helium_ff} framework LJ)",
        structure=structure, framework=typed, force_field=ff.assemble(typed, [helium]),
        components=[Component("He", widom_moves())], temperature_K=HELIUM_TEMPERATURE_K, pressure_Pa=None,
        cycles=params.helium_cycles, init_cycles=0, print_every=max(100, params.helium_cycles // 10),
        unit_cells=params.unit_cells or fw.unit_cells_for_cutoff(structure.cell, typed.cutoff_A), ewald=False,
        seed=params.seed)
    return Job(id=HELIUM_JOB, protocol=protocol, engine="raspa", stage="helium_void_fraction",
               params={"force_field": helium_ff}, inputs=job_files(spec), time_limit_s=params.time_limit_s)


def _ff_tag(params: AdsorptionParams, force_field: str) -> str:
    return "" if force_field == params.force_field else "-" + force_field.replace("_", "-")


# ---------------------------------------------------------------------------------------------
# Analysis helpers
# ---------------------------------------------------------------------------------------------


def _finished(job_dirs: dict[str, Path], job_id: str) -> RaspaOutput:
    if job_id not in job_dirs:
        raise ReadError(f"no folder for job {job_id}")
    out = read_output(job_dirs[job_id])
    if not out.finished:
        reason = "; ".join(out.errors[:3]) or "no 'Simulation finished' in the output"
        raise CalculationFailed(f"RASPA job {job_id} did not finish: {reason}")
    return out


def helium_void_fraction(params: AdsorptionParams, job_dirs: dict[str, Path]) -> tuple[float, float, str]:
    """(void fraction, its error, how it was obtained)."""
    if params.helium_void_fraction is not None:
        return params.helium_void_fraction, 0.0, "helium void fraction given"
    out = _finished(job_dirs, HELIUM_JOB)
    weight = out.component("He").widom_rosenbluth_weight
    if weight is None:
        raise ReadError(f"{out.path}: no helium Widom Rosenbluth weight")
    if not 0.0 < weight.value <= 1.0:
        raise CalculationFailed(f"helium void fraction {weight.value:.4g} is outside (0, 1]")
    return weight.value, weight.error, (f"helium void fraction {weight.value:.4f} +/- {weight.error:.4f} "
                                        f"(Widom, {HELIUM_TEMPERATURE_K:g} K)")


def _basis(out: RaspaOutput, structure: fw.FrameworkStructure, molar_mass: float) -> LoadingBasis:
    basis = LoadingBasis(structure.mass_g_per_mol, structure.density_g_cm3, molar_mass, out.n_cells)
    if out.framework_mass_g_mol:  # RASPA's mass of the simulated box; must be ours times the cells
        ours = structure.mass_g_per_mol * out.n_cells
        if abs(out.framework_mass_g_mol - ours) > 1e-3 * ours:
            raise CalculationFailed(f"RASPA framework mass {out.framework_mass_g_mol:.2f} g/mol differs from the "
                                    f"CIF's {ours:.2f} g/mol: the framework was read differently")
    return basis


def _loadings(out: RaspaOutput, guest: str, phi: float) -> tuple[float, float, float]:
    """(absolute, excess, error) in molecules per unit cell. Excess = absolute - bulk gas in the helium
    void volume (RASPA printed the bulk amount for a void fraction of 1; it is rescaled here)."""
    component = out.component(guest)
    absolute = component.absolute.get("molecules/uc")
    if absolute is None:
        raise ReadError(f"{out.path}: no absolute loading for {guest}")
    if component.bulk_molecules_in_box is None:
        raise ReadError(f"{out.path}: no bulk-gas amount for {guest}")
    if absolute.value < 0:
        raise CalculationFailed(f"negative loading of {guest}: {absolute.value}")
    bulk = phi * component.bulk_molecules_in_box / out.n_cells
    return absolute.value, absolute.value - bulk, absolute.error


def _noise_note(value: float, error: float) -> str:
    if value > 0 and error / value > NOISY_RELATIVE_ERROR:
        return (f"; WARNING: block error is {100 * error / value:.0f} % of the value, run more cycles "
                "(precision 'standard' or 'high')")
    return ""


def _wanted(spec: TaskSpec, names: frozenset[str]) -> set[str]:
    return {p.name for p in spec.properties} or set(names)


def _unit_for(spec: TaskSpec, name: str) -> str | None:
    for prop in spec.properties:
        if prop.name == name and prop.unit:
            return prop.unit
    return None


def _method_head(params: AdsorptionParams, force_field_summary: str, electro: str, cells: tuple[int, int, int],
                 cycles: str) -> str:
    return (f"RASPA2 {engine.version().split()[-1]} on {params.framework} ({params.framework_source}); "
            f"{force_field_summary}; {electro}; {'x'.join(map(str, cells))} unit cells; {cycles}; "
            f"errors are RASPA's 5-block standard errors")


def _describe(params: AdsorptionParams, structure: fw.FrameworkStructure, force_field: str
              ) -> tuple[str, str, tuple[int, int, int]]:
    typed = ff.type_framework(structure, force_field, params.framework_charges, params.cutoff_A)
    models = [ff.guest_model(g, _model_for(params, force_field, g)) for g in params.guests]
    summary = ff.assemble(typed, models).summary
    _, electro = ff.electrostatics(typed, models, params.charge_method)
    cells = params.unit_cells or fw.unit_cells_for_cutoff(structure.cell, typed.cutoff_A)
    return summary, electro, cells


def _plot_isotherm(path: Path, rows: list[dict], unit: str, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.6))
    pressures = [r["pressure_bar"] for r in rows]
    ax.errorbar(pressures, [r["absolute"] for r in rows], yerr=[r["error"] for r in rows], marker="o",
                capsize=3, label="absolute")
    ax.errorbar(pressures, [r["excess"] for r in rows], yerr=[r["error"] for r in rows], marker="s",
                capsize=3, label="excess")
    ax.set_xlabel("pressure [bar]")
    ax.set_ylabel(f"loading [{unit}]")
    ax.set_title(title, fontsize=9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ---------------------------------------------------------------------------------------------
# raspa/gcmc_uptake
# ---------------------------------------------------------------------------------------------


class _FrameworkProtocol(Protocol):
    engine: ClassVar[str] = "raspa"

    def _framework_spec(self, spec: TaskSpec) -> bool:
        return bool(spec.system and spec.system.kind == "framework" and spec.properties
                    and {p.name for p in spec.properties} <= self.properties)


@register
class GCMCUptake(_FrameworkProtocol):
    name = "raspa/gcmc_uptake"
    properties: ClassVar[frozenset[str]] = frozenset({"uptake", "isotherm"})
    Params = GCMCParams
    description = ("uptake of one gas in a rigid MOF/zeolite by grand-canonical Monte Carlo (RASPA2): absolute and "
                   "excess loading at T and P; a pressure list gives an isotherm (one job per pressure) with a plot")

    def applies_to(self, spec: TaskSpec) -> bool:
        if not self._framework_spec(spec):
            return False
        try:
            return len(_requested_guests(spec)) == 1
        except RequestError:
            return False

    def choose(self, spec: TaskSpec, log: DefaultsLog) -> GCMCParams:
        guests = _requested_guests(spec)
        if len(guests) != 1:
            raise RequestError("raspa/gcmc_uptake simulates one gas; use raspa/gcmc_mixture for mixtures")
        params = common_parameters(spec, GCMCParams, {"pressures_Pa": _pressures_Pa(spec), "guests": guests}, log)
        return params

    def jobs(self, params: BaseModel) -> list[Job]:
        p = GCMCParams.model_validate(params.model_dump())
        structure = _load(p)
        jobs = [] if p.helium_void_fraction is not None else [helium_job(self.name, p, structure)]
        for force_field in p.force_fields:
            for index, pressure in enumerate(p.pressures_Pa):
                job_id = f"gcmc{_ff_tag(p, force_field)}-{index}"
                spec = _job_spec(
                    self.name, job_id, f"GCMC of {p.guests[0]} in {p.framework} at {p.temperature_K:g} K, "
                    f"{pressure / 1e5:g} bar ({force_field})", p, structure, force_field,
                    lambda models, typed: [Component(m.molecule, gcmc_moves(m, 1, 0),
                                                     fugacity_coefficient=typed.fugacity_coefficient)
                                           for m in models],
                    p.temperature_K, pressure, p.production_cycles, p.initialization_cycles)
                jobs.append(Job(id=job_id, protocol=self.name, engine="raspa", stage="gcmc",
                                params={"force_field": force_field, "pressure_Pa": pressure},
                                inputs=job_files(spec), time_limit_s=p.time_limit_s))
        return jobs

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p = GCMCParams.model_validate(params.model_dump())
        structure = _load(p)
        guest = p.guests[0]
        phi, phi_error, phi_note = helium_void_fraction(p, job_dirs)
        wanted = _wanted(spec, self.properties)
        unit = loading_unit(_unit_for(spec, "uptake") or _unit_for(spec, "isotherm"))
        results: list[Result] = []
        isotherm = "isotherm" in wanted or len(p.pressures_Pa) > 1
        for force_field in p.force_fields:
            summary, electro, cells = _describe(p, structure, force_field)
            tag = _ff_tag(p, force_field)
            suffix = "" if not tag else "_" + force_field
            rows = []
            for index, pressure in enumerate(p.pressures_Pa):
                job_id = f"gcmc{tag}-{index}"
                out = _finished(job_dirs, job_id)
                model = ff.guest_model(guest, _model_for(p, force_field, guest))
                basis = _basis(out, structure, model.molar_mass)
                absolute, excess, error = _loadings(out, guest, phi)
                rows.append({"pressure_bar": pressure / 1e5, "absolute": basis.convert(absolute, unit),
                             "excess": basis.convert(excess, unit), "error": basis.convert(error, unit),
                             "job": job_id, "out": out, "basis": basis, "abs_uc": absolute, "exc_uc": excess,
                             "err_uc": error})
            head = _method_head(p, summary, electro, cells,
                                f"{p.initialization_cycles} initialization + {p.production_cycles} production cycles")
            data_file = None
            if isotherm and len(rows) > 1:
                folder = job_dirs[rows[0]["job"]]
                csv = folder / f"isotherm{suffix}.csv"
                csv.write_text("pressure_bar,absolute,excess,error,unit\n" + "".join(
                    f"{r['pressure_bar']:.6g},{r['absolute']:.6g},{r['excess']:.6g},{r['error']:.6g},{unit}\n"
                    for r in rows))
                _plot_isotherm(folder / f"isotherm{suffix}.png", rows, unit,
                               f"{guest} in {p.framework}, {p.temperature_K:g} K ({force_field})")
                data_file = str(folder / f"isotherm{suffix}.png")
            for row in rows:
                pressure_text = f"{row['pressure_bar']:g} bar"
                fugacity = row["out"].component(guest).fugacity_coefficient
                other_units = ", ".join(f"{v:.4g} {u}" for u, v in row["basis"].all_units(row["abs_uc"]).items())
                method = (f"{head}; GCMC at {p.temperature_K:g} K and {pressure_text} (Peng-Robinson fugacity "
                          f"coefficient {fugacity:.4g}); absolute loading = {other_units}"
                          f"{_noise_note(row['abs_uc'], row['err_uc'])}")
                excess_method = (f"{head}; excess = absolute - bulk gas (Peng-Robinson density) in the helium void "
                                 f"volume; {phi_note}; excess = {row['exc_uc']:.4g} molecules/uc")
                point = "" if not isotherm else "_" + pressure_text.replace(" ", "")
                names = []
                if "uptake" in wanted and not isotherm:
                    names.append(("uptake", "uptake_excess"))
                if isotherm:
                    base = "isotherm" if "isotherm" in wanted else "uptake"
                    names.append((f"{base}{point}", f"{base}_excess{point}"))
                for absolute_name, excess_name in names:
                    log = str(row["out"].path)
                    results.append(Result(quantity=absolute_name + suffix, value=row["absolute"], unit=unit,
                                          uncertainty=row["error"], job=row["job"], method=method, log=log,
                                          data_file=data_file))
                    results.append(Result(quantity=excess_name + suffix, value=row["excess"], unit=unit,
                                          uncertainty=row["error"], job=row["job"], method=excess_method,
                                          log=log, data_file=data_file))
        return results


# ---------------------------------------------------------------------------------------------
# raspa/gcmc_mixture
# ---------------------------------------------------------------------------------------------


@register
class GCMCMixture(_FrameworkProtocol):
    name = "raspa/gcmc_mixture"
    properties: ClassVar[frozenset[str]] = frozenset({"selectivity", "uptake"})
    Params = MixtureParams
    description = ("adsorption of a gas mixture in a rigid MOF/zeolite by GCMC with identity-change moves "
                   "(RASPA2): component loadings and adsorption selectivity S = (x1/x2)/(y1/y2)")

    def applies_to(self, spec: TaskSpec) -> bool:
        if not self._framework_spec(spec):
            return False
        try:
            return len(_requested_guests(spec)) >= 2
        except RequestError:
            return False

    def choose(self, spec: TaskSpec, log: DefaultsLog) -> MixtureParams:
        guests = _requested_guests(spec)
        if len(guests) < 2:
            raise RequestError("a mixture needs at least two gases with their mole fractions")
        composition = _composition(spec)
        if not composition:
            raise RequestError("say the gas-phase composition (mole fractions, e.g. CO2 0.15 / N2 0.85)")
        missing = [g for g in guests if g not in composition]
        if len(missing) == 1 and len(composition) == len(guests) - 1:
            composition[missing[0]] = 1.0 - sum(composition.values())
        elif missing:
            raise RequestError(f"say the mole fraction of {', '.join(missing)}")
        total = sum(composition.values())
        if total <= 0 or any(v <= 0 for v in composition.values()):
            raise RequestError("mole fractions must be positive")
        fractions = [composition[g] / total for g in guests]
        params = common_parameters(spec, MixtureParams, {
            "pressures_Pa": _pressures_Pa(spec), "guests": guests, "mole_fractions": fractions}, log)
        if abs(total - 1.0) > 1e-6:
            log.note(parameter="mole fractions", value=", ".join(
                f"{g} {y:.4g}" for g, y in zip(guests, fractions, strict=True)), reason="normalised to sum to 1")
        return params

    def jobs(self, params: BaseModel) -> list[Job]:
        p = MixtureParams.model_validate(params.model_dump())
        structure = _load(p)
        jobs = [] if p.helium_void_fraction is not None else [helium_job(self.name, p, structure)]
        n = len(p.guests)
        for force_field in p.force_fields:
            for index, pressure in enumerate(p.pressures_Pa):
                job_id = f"mixture{_ff_tag(p, force_field)}-{index}"
                spec = _job_spec(
                    self.name, job_id, f"GCMC of {'/'.join(p.guests)} ({'/'.join(f'{y:g}' for y in p.mole_fractions)})"
                    f" in {p.framework} at {p.temperature_K:g} K, {pressure / 1e5:g} bar ({force_field})", p, structure,
                    force_field,
                    lambda models, typed: [Component(m.molecule, gcmc_moves(m, n, i), mol_fraction=p.mole_fractions[i],
                                                     fugacity_coefficient=typed.fugacity_coefficient)
                                           for i, m in enumerate(models)],
                    p.temperature_K, pressure, p.production_cycles, p.initialization_cycles)
                jobs.append(Job(id=job_id, protocol=self.name, engine="raspa", stage="gcmc_mixture",
                                params={"force_field": force_field, "pressure_Pa": pressure},
                                inputs=job_files(spec), time_limit_s=p.time_limit_s))
        return jobs

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p = MixtureParams.model_validate(params.model_dump())
        structure = _load(p)
        phi, _, phi_note = helium_void_fraction(p, job_dirs)
        wanted = _wanted(spec, self.properties)
        unit = loading_unit(_unit_for(spec, "uptake"))
        results: list[Result] = []
        several = len(p.pressures_Pa) > 1
        for force_field in p.force_fields:
            summary, electro, cells = _describe(p, structure, force_field)
            tag = _ff_tag(p, force_field)
            suffix = "" if not tag else "_" + force_field
            head = _method_head(p, summary, electro, cells,
                                f"{p.initialization_cycles} initialization + {p.production_cycles} production cycles")
            for index, pressure in enumerate(p.pressures_Pa):
                job_id = f"mixture{tag}-{index}"
                out = _finished(job_dirs, job_id)
                point = f"_{pressure / 1e5:g}bar" if several else ""
                gas = ", ".join(f"{g} {y:g}" for g, y in zip(p.guests, p.mole_fractions, strict=True))
                where = f"GCMC at {p.temperature_K:g} K, {pressure / 1e5:g} bar total, gas {gas}"
                loads = {}
                for guest in p.guests:
                    model = ff.guest_model(guest, _model_for(p, force_field, guest))
                    basis = _basis(out, structure, model.molar_mass)
                    absolute, excess, error = _loadings(out, guest, phi)
                    loads[guest] = (absolute, error)
                    if "uptake" in wanted:
                        results.append(Result(
                            quantity=f"uptake_{guest}{point}{suffix}", value=basis.convert(absolute, unit), unit=unit,
                            uncertainty=basis.convert(error, unit), job=job_id, log=out.path,
                            method=f"{head}; {where}; absolute loading of {guest} (excess "
                                   f"{basis.convert(excess, unit):.4g} {unit}; {phi_note})"
                                   f"{_noise_note(absolute, error)}"))
                if "selectivity" in wanted:
                    first, y_first = p.guests[0], p.mole_fractions[0]
                    for other, y_other in zip(p.guests[1:], p.mole_fractions[1:], strict=True):
                        n1, e1 = loads[first]
                        n2, e2 = loads[other]
                        if n1 <= 0 or n2 <= 0:
                            raise CalculationFailed(f"selectivity undefined: no {first if n1 <= 0 else other} "
                                                    f"adsorbed in {job_id} (run more cycles)")
                        selectivity = (n1 / n2) / (y_first / y_other)
                        relative = math.hypot(e1 / n1, e2 / n2)
                        name = "selectivity" if len(p.guests) == 2 else f"selectivity_{first}_{other}"
                        results.append(Result(
                            quantity=f"{name}{point}{suffix}", value=selectivity, unit="-",
                            uncertainty=selectivity * relative, job=job_id, log=out.path,
                            method=(f"{head}; {where}; S = (x_{first}/x_{other})/(y_{first}/y_{other}) from absolute "
                                    f"loadings {n1:.4g} and {n2:.4g} molecules/uc; uncertainty from the two block "
                                    f"errors, assumed independent{_noise_note(selectivity, selectivity * relative)}")))
        return results


# ---------------------------------------------------------------------------------------------
# raspa/widom
# ---------------------------------------------------------------------------------------------


@register
class WidomInsertion(_FrameworkProtocol):
    name = "raspa/widom"
    properties: ClassVar[frozenset[str]] = frozenset({"henry_coefficient", "heat_of_adsorption"})
    Params = WidomParams
    description = ("Henry coefficient and heat of adsorption at infinite dilution of gases in a rigid MOF/zeolite "
                   "by Widom test-particle insertion in the empty framework (RASPA2)")

    def applies_to(self, spec: TaskSpec) -> bool:
        if not self._framework_spec(spec):
            return False
        try:
            return len(_requested_guests(spec)) >= 1
        except RequestError:
            return False

    def choose(self, spec: TaskSpec, log: DefaultsLog) -> WidomParams:
        guests = _requested_guests(spec)
        params = common_parameters(spec, WidomParams, {"guests": guests, "helium_void_fraction": 1.0}, log)
        if "heat_of_adsorption" in {p.name for p in spec.properties}:
            flexible = [g for g in params.guests if not ff.guest_model(g, params.guest_models.get(g)).rigid]
            if flexible:
                raise RequestError(f"the Widom heat of adsorption needs the ideal-gas intramolecular energy of "
                                   f"flexible {', '.join(flexible)}, which this protocol does not compute yet; ask "
                                   "for the Henry coefficient only")
        log.drop("helium void fraction")
        return params

    def jobs(self, params: BaseModel) -> list[Job]:
        p = WidomParams.model_validate(params.model_dump())
        structure = _load(p)
        jobs = []
        for force_field in p.force_fields:
            job_id = f"widom{_ff_tag(p, force_field)}"
            spec = _job_spec(
                self.name, job_id, f"Widom insertion of {', '.join(p.guests)} in {p.framework} at "
                f"{p.temperature_K:g} K ({force_field})", p, structure, force_field,
                lambda models, typed: [Component(m.molecule, widom_moves()) for m in models],
                p.temperature_K, None, p.production_cycles, 0)
            jobs.append(Job(id=job_id, protocol=self.name, engine="raspa", stage="widom",
                            params={"force_field": force_field}, inputs=job_files(spec), time_limit_s=p.time_limit_s))
        return jobs

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p = WidomParams.model_validate(params.model_dump())
        structure = _load(p)
        wanted = _wanted(spec, self.properties)
        henry_label, henry_factor = henry_unit(_unit_for(spec, "henry_coefficient"))
        energy_unit = _unit_for(spec, "heat_of_adsorption") or "kJ/mol"
        several = len(p.guests) > 1
        results = []
        for force_field in p.force_fields:
            job_id = f"widom{_ff_tag(p, force_field)}"
            suffix = "" if force_field == p.force_field else "_" + force_field
            out = _finished(job_dirs, job_id)
            summary, electro, cells = _describe(p, structure, force_field)
            head = _method_head(p, summary, electro, cells, f"{p.production_cycles} Widom cycles")
            for guest in p.guests:
                component = out.component(guest)
                name = f"_{guest}" if several else ""
                if "henry_coefficient" in wanted:
                    henry = component.henry_mol_kg_Pa
                    if henry is None:
                        raise ReadError(f"{out.path}: no Henry coefficient for {guest}")
                    if henry.value <= 0:
                        raise CalculationFailed(f"Henry coefficient of {guest} is {henry.value:g}")
                    results.append(Result(
                        quantity=f"henry_coefficient{name}{suffix}", value=henry.value * henry_factor,
                        unit=henry_label, uncertainty=henry.error * henry_factor, job=job_id, log=out.path,
                        method=(f"{head}; K_H = <W>/(rho_f R T) from the Widom Rosenbluth weight "
                                f"{component.widom_rosenbluth_weight.value:.4g} at {p.temperature_K:g} K"
                                if component.widom_rosenbluth_weight else head)
                               + _noise_note(henry.value, henry.error)))
                if "heat_of_adsorption" in wanted:
                    energy = component.widom_energy_K
                    if energy is None:
                        raise ReadError(f"{out.path}: no Widom adsorption energy for {guest}")
                    # Q = -dH = -(<U_gh>_1 - <U_h>_0 - <U_g> - RT); <U_g> = 0 for rigid guests
                    q_kj = (-energy.value + p.temperature_K) * GAS_CONSTANT_KJ
                    error_kj = energy.error * GAS_CONSTANT_KJ
                    value, error = q_kj, error_kj
                    unit = "kJ/mol"
                    try:
                        factor = convert(1.0, "kJ/mol", energy_unit)
                        value, error, unit = q_kj * factor, error_kj * factor, energy_unit
                    except RequestError:
                        pass
                    results.append(Result(
                        quantity=f"heat_of_adsorption{name}{suffix}", value=value, unit=unit, uncertainty=error,
                        job=job_id, log=out.path,
                        method=(f"{head}; isosteric heat at infinite dilution Q = -(<U_gh>_1 - <U_h>_0) + RT "
                                f"(positive = exothermic; <U_gh>_1 - <U_h>_0 = {energy.value:.1f} +/- "
                                f"{energy.error:.1f} K, rigid guest so <U_g> = 0)") + _noise_note(abs(q_kj), error_kj)))
        return results
