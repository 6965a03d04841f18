"""Typed models shared by the agents: what was asked (TaskSpec), what to run (Plan, Job),
what came out (Result, Answer). Every agent decision is one of these pydantic models, so either
decision backend (expert rules or an LLM) can produce it and the same checks apply."""

from __future__ import annotations

import re
from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema

# ---------------------------------------------------------------------------------------------
# Vocabulary
# ---------------------------------------------------------------------------------------------

PropertyName = Literal[
    "lattice_constant",
    "cohesive_energy",
    "potential_energy_per_atom",
    "kinetic_energy_per_atom",
    "rotational_energy_per_atom",
    "total_energy_per_atom",
    "potential_energy_per_molecule",  # of one kind of molecule (Result.label: 'water', 'co2')
    "total_energy_per_molecule",
    "temperature",
    "pressure",
    "density",
    "volume",
    "rdf",
    "coordination_number",
    "self_diffusion_coefficient",
    "mean_squared_displacement",
    "drag_force",
    "wall_force",
    "shear_stress",
    "tensile_stress",  # along the pull axis of a described run (mean of -P_aa)
    "friction_coefficient",  # |tangential / normal| force on a sliding body of a described run
    "atomic_charge",  # mean charge per atom of a group (Result.group: 'type2')
    "surface_tension",  # of a slab's two interfaces, from the pressure tensor
    "atom_count",  # time-averaged number of a group's atoms (Result.label: the region counted in)
    "molecule_count",  # time-averaged number of molecules of one kind in the box (Result.label: the kind, 'water')
    "hugoniot_departure",  # fix msst: departure from the Hugoniot (LAMMPS temperature units)
    "rayleigh_departure",  # fix msst: departure from the Rayleigh line (pressure units)
    "lagrangian_speed",  # fix msst: the cell's Lagrangian (particle) speed (velocity units)
    "lagrangian_position",  # fix msst: the cell's position behind the shock front (distance units)
    "coulomb_energy_per_atom",  # LAMMPS's Coulombic energy (thermo ecoul, the pair style's Coulomb term; with
    # Ewald/PPPM its real-space part) per atom, a described run's
    "electrostatic_energy_per_atom",  # the whole Coulomb energy, thermo ecoul + elong (k-space), per atom
    "hydrogen_bond_count",  # hydrogen bonds of a pair style that counts them (compute pair hbond/dreiding/*)
    "rotation_angle",  # a rotating drum's wall angle (the rotation variable, radians), mean over the run
    "magnetization",  # of a spin lattice: the total magnetic moment (muB; label per_atom, normalized)
    "magnetic_energy",  # of a spin lattice: compute spin's magnetic energy (eV; label per_atom)
    "spin_temperature",  # of a spin lattice: compute spin's spin temperature (K)
    "yield_stress",
    "ultimate_stress",
    "heat_capacity",
    "melting_point",
    # mechanical, defect and transport properties of solids and liquids (MD protocol library)
    "elastic_constants",
    "bulk_modulus",
    "shear_modulus",
    "youngs_modulus",
    "poisson_ratio",
    "vacancy_formation_energy",
    "vacancy_migration_energy",
    "interstitial_formation_energy",
    "surface_energy",
    "stacking_fault_energy",
    "generalized_stacking_fault_energy",
    "thermal_expansion_coefficient",
    "shear_viscosity",
    "thermal_conductivity",
    "radius_of_gyration",
    "end_to_end_distance",
    "energy_components",
    "minimized_energy",
    # pore geometry (Zeo++)
    "largest_cavity_diameter",
    "pore_limiting_diameter",
    "largest_free_sphere",
    "accessible_surface_area",
    "non_accessible_surface_area",
    "accessible_volume",
    "void_fraction",
    "probe_occupiable_volume",
    "pore_size_distribution",
    "channel_dimensionality",
    # adsorption (RASPA) and host-guest MD
    "uptake",
    "isotherm",
    "henry_coefficient",
    "heat_of_adsorption",
    "selectivity",
    "interaction_energy",
    # electronic structure and energetics (DFT: Quantum ESPRESSO, VASP; ML potentials)
    "band_gap",
    # polymers (read; the planner says when no protocol computes it yet)
    "glass_transition_temperature",
]

UnitsStyle = Literal["lj", "metal", "real"]
Engine = Literal["lammps", "gromacs", "raspa", "zeopp", "qe", "mlp", "vasp"]


class Quantity(BaseModel):
    """A number with its unit as the user (or a default) gave it."""

    value: float
    unit: str = Field(description="unit symbol, e.g. K, bar, g/cm^3, angstrom, eV, or 'reduced'")

    def __str__(self) -> str:
        return f"{self.value:g} {self.unit}"


# ---------------------------------------------------------------------------------------------
# What was asked
# ---------------------------------------------------------------------------------------------


class SystemSpec(BaseModel):
    """The material or model system the request is about."""

    name: str = Field(description="what the user called it, e.g. 'nickel', 'liquid argon', 'LJ fluid'")
    kind: Literal["crystal", "lj_fluid", "atomic_fluid", "molecular_fluid", "polymer", "framework"] = Field(
        description="crystal: periodic solid relaxed at 0 K or simulated; lj_fluid: reduced-unit "
        "Lennard-Jones particles; atomic_fluid: a real monatomic liquid/gas with LJ parameters; "
        "molecular_fluid: e.g. water or a simple liquid with a named force field; polymer: chains; "
        "framework: a porous crystal such as a MOF or zeolite given by name, database entry or CIF"
    )
    elements: list[str] = Field(default_factory=list, description="chemical symbols, e.g. ['Ni']")
    lattice: Literal["fcc", "bcc", "hcp", "diamond", "sc"] | None = None
    phase: Literal["solid", "liquid", "gas", "fluid"] | None = None
    structure: str | None = Field(
        default=None, description="framework name, database entry (e.g. CoRE MOF) or path to a CIF/data file"
    )
    molecule: str | None = Field(default=None, description="molecule of a molecular fluid, e.g. 'water'")
    guests: list[str] = Field(default_factory=list, description="adsorbates / guest molecules, e.g. ['CH4']")


class PotentialSpec(BaseModel):
    """The interatomic potential as requested; file choice happens in the potential library."""

    family: Literal["eam", "eam/alloy", "eam/fs", "tersoff", "sw", "meam", "lj"] | None = None
    name_hint: str | None = Field(
        default=None, description="name the user gave, e.g. 'Foiles', 'u3', 'Mishin', 'Tersoff'"
    )
    file: str | None = Field(default=None, description="explicit potential file name, if given")
    lj_epsilon: Quantity | None = Field(default=None, description="LJ well depth (energy or K for eps/kB)")
    lj_sigma: Quantity | None = None
    cutoff: Quantity | None = Field(default=None, description="cutoff; unit 'sigma' for multiples of sigma")
    tail_correction: bool = False
    shifted: bool = False
    force_field: str | None = Field(
        default=None, description="named force field or water model, e.g. 'UFF', 'TraPPE', 'TIP4P/2005', 'OPLS-AA'"
    )


GROUP_DOC = ("the atoms the number is over: 'typeN' (atom type N) or a group the described system names; None: all "
             "atoms")


class PropertyRequest(BaseModel):
    name: PropertyName
    unit: str | None = Field(default=None, description="unit the user wants the answer in")
    at: Literal["average", "last_step", "step"] = "average"
    step: int | None = None
    label: str | None = Field(default=None, description="which one of the property's numbers, e.g. the molecule "
                              "kind of an energy per molecule ('water')")
    group: str | None = Field(default=None, description=GROUP_DOC)
    probe_radius: Quantity | None = Field(
        default=None, description="probe for this property only (pore geometry), e.g. a point probe (0) for the "
        "void fraction next to an N2-sized probe for the surface area; overrides conditions.probe_radius")


class Component(BaseModel):
    """One species of a mixture (a list of these, not a dict, keeps strict JSON schemas valid)."""

    species: str
    mole_fraction: float = Field(ge=0.0, le=1.0)


class Conditions(BaseModel):
    temperature: Quantity | None = None
    pressure: Quantity | None = None
    density: Quantity | None = None
    pressures: list[Quantity] = Field(default_factory=list, description="pressure list, e.g. an isotherm")
    temperatures: list[Quantity] = Field(default_factory=list, description="temperature list, e.g. expansion")
    composition: list[Component] = Field(
        default_factory=list, description="gas-phase mole fractions of a mixture, e.g. CO2 0.15 + N2 0.85"
    )
    probe_radius: Quantity | None = Field(default=None, description="probe radius for pore geometry")


class SimulationControls(BaseModel):
    """Explicit protocol settings the request fixed; anything left None gets a documented default."""

    n_atoms: int | None = None
    timestep: Quantity | None = None
    equilibration_steps: int | None = None
    production_steps: int | None = None
    seed: int | None = None
    ensemble: Literal["nve", "nvt", "npt"] | None = None
    # Detailed protocol descriptions (simagent.backends.expert.protocol_text); all optional.
    lattice: Literal["fcc", "bcc", "sc", "sq", "sq2", "hex"] | None = Field(
        default=None, description="lattice the atoms are placed on at the start (sq, hex: 2D)"
    )
    cells: list[int] = Field(
        default_factory=list, description="box size in lattice unit cells, e.g. [10, 10, 10] (2D: [nx, ny])"
    )
    dimension: Literal[2, 3] | None = None
    masses: list[Quantity] = Field(default_factory=list, description="per atom type, in type order")
    pair_cutoff: Quantity | None = Field(
        default=None, description="pair cutoff as the protocol text states it ('cut at 3 sigma', 'rc = 2.5')"
    )
    atom_types: int | None = Field(default=None, description="number of atom types (2 or more: a mixture)")
    type_counts: list[int] = Field(default_factory=list, description="atoms per type of a mixture")
    mixing_rule: Literal["geometric", "arithmetic", "sixthpower"] | None = None
    integrator: Literal["verlet", "respa", "langevin", "brownian"] | None = None
    thermostat: Literal["nose-hoover", "langevin", "berendsen", "velocity-rescale", "csvr", "andersen"] | None = None
    thermostat_temperature: Quantity | None = Field(default=None, description="thermostat set point")
    thermostat_damping: Quantity | None = Field(
        default=None, description="thermostat relaxation time (time unit, 'reduced' = tau, or 'steps')"
    )
    barostat: Literal["nose-hoover", "berendsen", "parrinello-rahman", "c-rescale"] | None = None
    barostat_damping: Quantity | None = None
    velocity_temperature: Quantity | None = Field(default=None, description="initial velocities drawn at this T")
    average_window: str | None = Field(
        default=None, description="what averages cover: 'production', 'all' or 'last N steps'"
    )
    thermo_every: int | None = Field(default=None, description="output/sampling interval in steps")
    minimizer: Literal["cg", "sd", "fire", "hftn", "quickmin"] | None = None
    etol: float | None = Field(default=None, ge=0, description="minimiser energy tolerance (relative)")
    ftol: float | None = Field(default=None, ge=0, description="minimiser force tolerance")
    max_iterations: int | None = None
    max_evaluations: int | None = None

    @property
    def holds_temperature(self) -> bool:
        """Does the described run hold a temperature? NVT/NPT, or any named thermostat (NVE with
        fix langevin is thermostatted); plain NVE does not."""
        return self.thermostat is not None or self.ensemble in ("nvt", "npt") or self.thermostat_temperature is not None

    @field_validator("average_window")
    @classmethod
    def _window(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"production|all|last \d+ steps", value):
            raise ValueError("average_window is 'production', 'all' or 'last N steps'")
        return value


CapabilityKey = Literal["dft", "ml_potential", "literature", "screening", "engine", "potential"]


class Unsupported(BaseModel):
    """Words of a request that need a capability simagent lacks (simagent.capabilities): the
    request is refused or routed, never answered with another method."""

    capability: CapabilityKey
    words: str = Field(description="the request's words that ask for it, as written")


class TaskSpec(BaseModel):
    """The typed reading of a request: system, properties, engine, conditions, units."""

    request: str
    system: SystemSpec | None = None
    potential: PotentialSpec | None = None
    properties: list[PropertyRequest] = Field(default_factory=list)
    engine: Engine = "lammps"
    units_style: UnitsStyle | None = None
    conditions: Conditions = Field(default_factory=Conditions)
    controls: SimulationControls = Field(default_factory=SimulationControls)
    missing: list[str] = Field(
        default_factory=list, description="critical information the request lacks (ask, never guess)"
    )
    unparsed: list[str] = Field(default_factory=list, description="sentences not understood")
    unsupported: list[Unsupported] = Field(
        default_factory=list, description="method/scope words simagent cannot honour (never substituted)"
    )
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    # The typed simulation description (simagent.described.model.SimulationDescription, as JSON) that
    # `solve` read and runs as written (rules, the LLM's quotes for its gaps: simagent.described.llm_fill);
    # None: not a described run, or the described protocol reads `request` itself. Not part of any
    # LLM's answer schema.
    described: SkipJsonSchema[dict[str, Any] | None] = None


class Clarification(BaseModel):
    question: str
    missing: list[str] = Field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# What to run
# ---------------------------------------------------------------------------------------------


class JobStatus(str, Enum):  # noqa: UP042 (StrEnum would change str() of members, which messages use)
    pending = "pending"
    running = "running"
    succeeded = "succeeded"
    failed = "failed"
    cancelled = "cancelled"


class DefaultApplied(BaseModel):
    """A parameter the request did not fix and a protocol default filled in (listed in the answer)."""

    parameter: str
    value: str
    reason: str = ""


class Correction(BaseModel):
    """One change made to a job's inputs by a repair handler or a reviewer, and why."""

    job: str
    handler: str
    action: str
    reason: str


class Job(BaseModel):
    """One engine run. State that must survive a crash lives in the job folder, not here."""

    id: str
    protocol: str
    engine: Engine = "lammps"
    stage: str = Field(default="main", description="protocol stage this job runs, e.g. 'equilibrate'")
    params: dict[str, Any] = Field(default_factory=dict)
    depends_on: list[str] = Field(default_factory=list)
    stage_in: dict[str, list[str]] = Field(
        default_factory=dict, description="files copied in from finished dependencies: {job_id: [names]}"
    )
    time_limit_s: float = 600.0
    ranks: int = Field(default=1, ge=1, le=1024, description="MPI ranks (GROMACS: thread-MPI ranks); 1: no launcher")
    threads: int = Field(default=1, ge=1, le=256, description="OpenMP threads per rank")
    partitions: Annotated[int, Field(ge=1)] | Literal["ranks"] | None = Field(
        default=None, description="independent processor partitions of one engine run, for multi-replica methods "
        "(LAMMPS -partition: prd); a number that divides ranks, or 'ranks': one partition per MPI rank (so one "
        "replica per core the job is spread over); None: the run is not partitioned")
    inputs: dict[str, str] = Field(default_factory=dict, description="rendered input files: name -> text")
    workdir: str | None = None
    status: JobStatus = JobStatus.pending
    attempts: int = 0
    message: str = ""


class InputEdit(BaseModel):
    """A reviewer's edit of one generated input file: `base` is the text the protocol rendered,
    `edited` the text that runs. Re-applied (three-way merge) whenever the inputs are re-rendered."""

    base: str
    edited: str


class ProtocolRun(BaseModel):
    """One protocol applied to the task: its parameters and the plan jobs it produced."""

    protocol: str
    properties: list[str]
    params: dict[str, Any]
    jobs: dict[str, str] = Field(description="protocol-local job id -> plan job id")
    input_edits: dict[str, dict[str, InputEdit]] = Field(
        default_factory=dict, description="reviewer edits: protocol-local job id -> file name -> edit"
    )


class Plan(BaseModel):
    """A DAG of jobs, and which protocol run answers which properties."""

    jobs: list[Job]
    runs: list[ProtocolRun] = Field(default_factory=list)

    def job(self, job_id: str) -> Job:
        for job in self.jobs:
            if job.id == job_id:
                return job
        raise KeyError(job_id)

    def topological_order(self) -> list[Job]:
        done: set[str] = set()
        order: list[Job] = []
        pending = list(self.jobs)
        while pending:
            ready = [j for j in pending if set(j.depends_on) <= done]
            if not ready:
                raise ValueError("plan has a dependency cycle or an unknown dependency")
            for job in ready:
                order.append(job)
                done.add(job.id)
                pending.remove(job)
        return order


# ---------------------------------------------------------------------------------------------
# What came out
# ---------------------------------------------------------------------------------------------


Statistic = Literal["average", "last_step", "step"]
# Labels of the cubic moduli in the convention of LAMMPS examples/ELASTIC, which prints "Shear
# Modulus 1" = C44, "Shear Modulus 2" = (C11 - C12)/2 and "Poisson Ratio" = 1/(1 + C11/C12).
CUBIC_SHEAR_LABELS = ("C44", "(C11-C12)/2")
CUBIC_POISSON_LABEL = "C12/(C11+C12)"
PROPERTY_NAMES: tuple[str, ...] = PropertyName.__args__  # type: ignore[attr-defined]


class Result(BaseModel):
    """One number produced by the analysis of a finished job.

    What it answers is typed: `property` (a PropertyName), `label` (which one of several: an
    elastic constant 'c11', a species, 'first_peak', the LAMMPS-convention shear modulus 'C44'),
    `statistic` (time average, last step, or the value at `step`). `quantity` is the display name;
    when a producer gives only `quantity` ('elastic_constants_c11', 'rdf_first_peak'), property
    and label are read from it once, here, so consumers compare fields, never strings."""

    quantity: str
    value: float
    unit: str
    uncertainty: float | None = Field(
        default=None, description="one standard error in the same unit (None: deterministic)"
    )
    job: str
    method: str
    log: str | None = None
    data_file: str | None = Field(default=None, description="curve or table behind the number")
    property: PropertyName | None = Field(default=None, description="the property this number answers")
    label: str | None = Field(default=None, description="which one of the property's numbers (c11, species, ...)")
    group: str | None = Field(default=None, description=GROUP_DOC)
    statistic: Statistic = Field(default="average", description="time average, last step or value at `step`")
    step: int | None = Field(default=None, ge=0, description="the step of statistic 'step'")
    warnings: list[str] = Field(default_factory=list, description="gate findings that did not stop the number")

    @model_validator(mode="after")
    def _typed(self) -> Result:
        if self.property is None:
            if self.quantity in PROPERTY_NAMES:
                self.property = self.quantity  # type: ignore[assignment]
            else:
                prefixes = [p for p in PROPERTY_NAMES if self.quantity.startswith(p + "_")]
                if prefixes:
                    prop = max(prefixes, key=len)
                    self.property = prop  # type: ignore[assignment]
                    if self.label is None:
                        self.label = self.quantity[len(prop) + 1:]
        if self.statistic == "step" and self.step is None:
            raise ValueError("statistic 'step' needs the step")
        return self

    def answers(self, request: PropertyRequest) -> bool:
        """Does this number answer the request (property and time point)?"""
        if self.property != request.name or self.statistic != request.at:
            return False
        return request.at != "step" or self.step == request.step


class Decision(BaseModel):
    """Which backend made which decision (answers list them for traceability)."""

    decision: str
    backend: str
    detail: str = ""


class Citation(BaseModel):
    """A retrieved passage an answer relies on: literature or manual text, never a computed value."""

    key: int = Field(description="the [n] that cites it in the summary")
    source: str = Field(description="file path or module the passage comes from")
    title: str
    section: str = ""
    page: int | None = None
    text: str
    kind: Literal["literature", "manual", "notes"] = "literature"
    doi: str | None = None
    authors: list[str] = Field(default_factory=list)
    score: float | None = Field(default=None, description="cosine similarity to the question")


class LiteratureValue(BaseModel):
    """A number quoted by a passage of the user's own corpus, shown beside a computed result for
    comparison: never a result, never mixed with one (simagent.knowledge.comparison)."""

    property: str = Field(description="the computed property it is compared with")
    value: float = Field(description="the number as the passage quotes it")
    unit: str = Field(description="the unit as the passage quotes it")
    value_in_result_unit: float = Field(description="the same number in the unit of the computed result")
    result_unit: str
    quote: str = Field(description="the sentence that states it")
    citation: int = Field(description="key of the Citation of its passage in Answer.citations")


class Answer(BaseModel):
    status: Literal["answered", "needs_clarification", "failed"]
    request: str
    answers: list[Result] = Field(default_factory=list)
    question: str | None = None
    defaults_applied: list[DefaultApplied] = Field(default_factory=list)
    corrections: list[Correction] = Field(default_factory=list)
    decisions: list[Decision] = Field(default_factory=list)
    jobs: list[str] = Field(default_factory=list, description="job folders used")
    summary: str = ""
    citations: list[Citation] = Field(default_factory=list, description="passages the summary cites as [n]")
    literature: list[LiteratureValue] = Field(
        default_factory=list, description="values quoted by the user's corpus, for comparison with `answers` only")
    thread_id: str | None = None
    error: str | None = None
