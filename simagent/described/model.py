"""A typed simulation description: what a detailed task text states, to be run literally.

A benchmark-style task ("fcc lattice at reduced density 0.8442 in a 20-cell box, LJ with cutoff
2.5, velocities at 1.44, NVE for 100 steps then 1000 steps") prescribes a whole simulation. This
model holds it: units and geometry, the atoms, the interactions, the velocity creation and an
ordered list of stages (runs and minimisations, each with its own integrator and fixes).

Every field that is set records where it came from (`origin`: 'rules', 'llm' or 'default', with the
words it was read from or, for a default, the documented reason). Things the text prescribes that
the renderer cannot run are kept in `unsupported` (named, never substituted); things a literal run
needs but the text leaves out, with no documented default, are in `missing`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, model_validator

from simagent.described.box_scaling import BoxScale
from simagent.described.colloids import Cavity, NeighborMulti
from simagent.described.defects import PointDefect
from simagent.described.drum import GranularDrum
from simagent.described.ellipsoids import Ellipsoids
from simagent.described.example_system import ExampleSystem
from simagent.described.granular import GranularPour
from simagent.described.groups import Displacement, Layout
from simagent.described.mixtures import AtomType, Deposition, RandomPlacement
from simagent.described.molecular import MolecularSystem
from simagent.described.nanotube import Nanotube
from simagent.described.pillars import BondedPillars
from simagent.described.polymer import BondedChain
from simagent.described.replica import ParallelReplica
from simagent.described.respa import Respa
from simagent.described.rheo import RheoFluid
from simagent.described.sheet import Sheet
from simagent.described.shock import MSST
from simagent.described.solids import Deform, PotentialFile, ShearFlow, Substitution
from simagent.described.special import ContactTracker, Controller
from simagent.described.spin import SpinLattice
from simagent.described.srd import SRDSolvent
from simagent.described.stacking import SlipScan
from simagent.described.tube_water import TubeFilling

Source = Literal["rules", "llm", "default"]
STAGE_TIMESTEP_NAME = "a timestep of its own for a run stage"  # the refusal's name (simagent.described.reading)
UnitsName = Literal["lj", "real", "metal"]
LatticeStyle = Literal["fcc", "bcc", "sc", "diamond", "sq", "sq2", "hex", "hcp"]
Ensemble = Literal["nve", "nvt", "npt", "nph"]
Thermostat = Literal["nose-hoover", "langevin", "berendsen", "velocity-rescale"]


class Origin(BaseModel):
    """Where one field came from: the reading rule's words, the model, or a default and its reason."""

    source: Source
    evidence: str = Field(default="", description="the words read (rules, llm); a default: 'value: reason'")


class Lattice(BaseModel):
    style: LatticeStyle
    scale: float = Field(gt=0, description="LAMMPS lattice scale: reduced density in lj units, a constant otherwise")
    scale_is: Literal["density", "constant"] = "constant"
    orient: tuple[tuple[int, int, int], tuple[int, int, int], tuple[int, int, int]] | None = Field(
        default=None, description="crystal directions along x, y, z (LAMMPS lattice orient)")
    origin: tuple[float, float, float] | None = None


class Box(BaseModel):
    """The simulation box: lo/hi per axis, in lattice spacings (`lattice_units`) or absolute."""

    lo: tuple[float, float, float]
    hi: tuple[float, float, float]
    lattice_units: bool = True

    @model_validator(mode="after")
    def _ordered(self) -> Box:
        if any(h <= lo for lo, h in zip(self.lo, self.hi, strict=True)):
            raise ValueError("every box edge needs hi > lo")
        return self


class PairCoeff(BaseModel):
    i: str = "*"
    j: str = "*"
    epsilon: float
    sigma: float
    cutoff: float | None = None
    d1: float | None = Field(default=None, ge=0, description="pair_style colloid: diameter of particle i (epsilon "
                             "holds the Hamaker constant A)")
    d2: float | None = Field(default=None, ge=0, description="pair_style colloid: diameter of particle j")


class ThreeBody(BaseModel):
    """The Axilrod-Teller-Muto triple-dipole term overlaid on the pair potential (pair_style atm)."""

    cutoff: float = Field(gt=0)
    cutoff_triple: float = Field(gt=0)
    nu: float


class Dipoles(BaseModel):
    """Finite spheres carrying point dipoles of one magnitude, oriented at random (atom_style hybrid
    sphere dipole; pair lj/cut/dipole/cut; integrated by nve/sphere with the dipoles updated)."""

    magnitude: float = Field(gt=0)
    seed: int = Field(gt=0)


class Pair(BaseModel):
    style: Literal["lj/cut", "lj/cut/dipole/cut", "colloid"] = "lj/cut"
    cutoff: float = Field(gt=0)
    coeffs: list[PairCoeff] = Field(min_length=1)
    shift: bool = False
    tail: bool = False
    mixing: Literal["geometric", "arithmetic", "sixthpower"] | None = None
    three_body: ThreeBody | None = None
    tracker: ContactTracker | None = None


class Velocity(BaseModel):
    temperature: float = Field(ge=0)
    seed: int = Field(gt=0)
    distribution: Literal["uniform", "gaussian"] = "uniform"
    zero_momentum: bool = True
    zero_rotation: bool = False
    loop: Literal["all", "local", "geom"] | None = Field(default=None, description="how the random velocities are "
                                                        "assigned to atoms (velocity ... loop); None: LAMMPS's all")


# a minimisation's limits when the text states none (LAMMPS requires both): the stated tolerances, not these
# caps, should end it (the analysis warns when one stops at a cap); maxeval ten times maxiter, at least this
DEFAULT_MAX_ITERATIONS = 10000
DEFAULT_MAX_EVALUATIONS = 100000


class Minimize(BaseModel):
    style: Literal["cg", "sd", "fire", "hftn", "quickmin"] = "cg"
    etol: float = Field(ge=0)
    ftol: float = Field(ge=0)
    max_iterations: int = Field(gt=0)
    max_evaluations: int = Field(gt=0)


class Dynamics(BaseModel):
    """How the atoms move during a run stage: an ensemble integrator, or NVE with a thermostat fix."""

    ensemble: Ensemble = "nve"
    thermostat: Thermostat | None = None
    t_start: float | None = None
    t_stop: float | None = None
    t_damp: float | None = None
    p_start: float | None = None
    p_stop: float | None = None
    p_damp: float | None = None
    p_coupling: Literal["iso", "aniso"] = "iso"
    p_axes: str | None = Field(default=None, description="barostat on these axes only, each on its own ('yz')")
    rescale_every: int | None = None  # fix temp/rescale N
    rescale_window: float | None = None
    seed: int | None = None  # fix langevin
    limit: float | None = Field(default=None, gt=0, description="fix nve/limit: the largest distance an atom moves "
                                "in one step (distance units)")
    drag: float | None = None  # fix npt/nph keywords (None: LAMMPS's default)
    mtk: bool | None = None
    pchain: int | None = None
    tchain: int | None = None


class GreenKubo(BaseModel):
    """Green-Kubo viscosity from the stress autocorrelation (fix ave/correlate, as LAMMPS
    examples/VISCOSITY): samples every `sample_every` steps, correlations up to `correlation_length`
    samples, running average over the averaged stage. The prefactor's k_B T is the stage's own mean
    temperature, measured in the run (tools.lammps.described._green_kubo), not a set point."""

    sample_every: int = Field(gt=0)
    correlation_length: int = Field(gt=1)


class Stage(BaseModel):
    """One step of the protocol, in order: a run of `steps` with `dynamics`, or a minimisation."""

    name: str
    kind: Literal["run", "minimize"] = "run"
    steps: int = Field(default=0, ge=0)
    dynamics: Dynamics | None = None
    minimize: Minimize | None = None
    reset_timestep: bool = False
    deform: Deform | None = None
    shear: ShearFlow | None = None
    controller: Controller | None = None
    msst: MSST | None = Field(default=None, description="a shock by fix msst, which integrates this stage")
    displace: Displacement | None = Field(default=None, description="a rigid shift of a group at the stage's start "
                                          "(displace_atoms), before it runs or minimises")
    scale_box: BoxScale | None = Field(default=None, description="box edges scaled at the stage's start, atoms "
                                       "remapped (change_box), before it runs")
    keep_fixes: bool = Field(default=False, description="the previous run stage's fixes go on through this stage "
                             "(same dynamics; the thermostat's and barostat's state carried over)")
    prd: ParallelReplica | None = Field(default=None, description="the run is parallel replica dynamics (LAMMPS prd) "
                                        "with the stage's dynamics")
    delete_ids: list[int] = Field(default_factory=list, description="atoms removed by ID at the stage's start")
    timestep: float | None = Field(default=None, gt=0, description="this run stage's own timestep, stated for it "
                                   "alone (None: the simulation's, desc.timestep)")
    restart_from: int | None = Field(default=None, ge=0, description="the stage (index) whose end state this run "
                                     "starts from, saved to a restart file after it and read back (None: it goes "
                                     "on from the stage before)")
    statement: str = Field(default="", description="the words that state this run alone (from the end of the "
                           "previous run's statement in its sentence to its own length)")
    evidence: str = ""

    @model_validator(mode="after")
    def _complete(self) -> Stage:
        if self.kind == "run" and (self.dynamics is None or self.steps <= 0):
            raise ValueError(f"run stage {self.name!r} needs dynamics and a positive step count")
        if self.kind == "minimize" and self.minimize is None:
            raise ValueError(f"minimisation stage {self.name!r} needs its settings")
        if self.timestep is not None and self.kind != "run":
            raise ValueError(f"stage {self.name!r}: only a run stage has a timestep of its own")
        if self.keep_fixes and self.kind != "run":
            raise ValueError(f"stage {self.name!r}: only a run stage continues the previous stage's fixes")
        if self.restart_from is not None and (self.kind != "run" or self.keep_fixes):
            raise ValueError(f"stage {self.name!r}: only a run stage with fixes of its own starts from a restart")
        return self


class SimulationDescription(BaseModel):
    units: UnitsName | None = None
    dimension: Literal[2, 3] = 3
    boundary: tuple[str, str, str] = ("p", "p", "p")
    lattice: Lattice | None = None
    box: Box | None = None
    sheet: Sheet | None = Field(default=None, description="a graphene sheet in the xy plane (it holds its own cell, "
                                "replication and box; simagent.described.sheet)")
    nanotube: Nanotube | None = Field(default=None, description="a single-walled carbon nanotube along a periodic "
                                      "box edge (simagent.described.nanotube); rendered with water let in by fix gcmc "
                                      "(gcmc), otherwise named as not rendered")
    gcmc: TubeFilling | None = Field(default=None, description="water inserted into the nanotube's interior by fix "
                                     "gcmc (simagent.described.tube_water); the water model is desc.molecular's")
    atom_style: Literal["atomic", "charge", "full", "sphere", "molecular", "bond", "ellipsoid", "rheo",
                        "spin"] = "atomic"
    atom_types: int = Field(default=1, ge=1)
    masses: dict[int, float] = Field(default_factory=dict)
    pair: Pair | None = None
    potential: PotentialFile | None = Field(default=None, description="a many-body potential read from a file")
    substitutions: list[Substitution] = Field(default_factory=list)
    molecular: MolecularSystem | None = Field(default=None, description="water, ions: kinds, templates, "
                                              "charges, constraints, long-range electrostatics")
    chain: BondedChain | None = Field(default=None, description="one bonded linear chain (bonds, angles, dihedrals)")
    placements: list[RandomPlacement] = Field(default_factory=list, description="atoms put at random, "
                                              "after the lattice atoms (create_atoms random)")
    types: list[AtomType] = Field(default_factory=list, description="what the text states per atom type")
    lattice_type: int = Field(default=1, ge=1, description="the type of the atoms made on the lattice")
    deposition: Deposition | None = None
    dipoles: Dipoles | None = None
    ellipsoids: Ellipsoids | None = Field(default=None, description="aspherical particles under pair gayberne")
    example_system: ExampleSystem | None = Field(default=None, description="the system of an installed LAMMPS "
                                                 "example (data file, topology, force field) the text describes")
    neighbor_skin: float | None = None
    neighbor_multi: NeighborMulti | None = Field(default=None, description="neighbor lists and communication "
                                                 "per size class (neighbor multi, comm_modify mode multi)")
    srd: SRDSolvent | None = Field(default=None, description="a solvent moved by stochastic rotation dynamics, "
                                   "added before the last run stage")
    cavities: list[Cavity] = Field(default_factory=list, description="spheres cleared of lattice atoms, one "
                                   "particle inserted at each centre")
    granular: GranularPour | None = Field(default=None, description="granular spheres poured into walls under "
                                          "gravity (fix pour, pair gran/hertz/history)")
    drum: GranularDrum | None = Field(default=None, description="two granular types poured into a drum that then "
                                      "rotates (pair granular, fix wall/gran/region, fix pour)")
    rheo: RheoFluid | None = Field(default=None, description="RHEO particles (pair rheo, fix rheo and its "
                                   "viscosity and pressure fixes, status flags)")
    pillars: BondedPillars | None = Field(default=None, description="bonded-particle pillars settled in a wall, "
                                          "copied along x, bonded and compressed (simagent.described.pillars)")
    spin: SpinLattice | None = Field(default=None, description="classical spins on the atoms, their magnetic "
                                     "interactions and spin dynamics (SPIN package)")
    neighbor_every: int | None = None
    velocity: Velocity | None = None
    timestep: float | None = None
    respa: Respa | None = Field(default=None, description="multiple timestepping (run_style respa); the timestep is "
                                "its outermost level's")
    thermo_every: int | None = None
    stages: list[Stage] = Field(default_factory=list)
    green_kubo: GreenKubo | None = None
    stated_atoms: int | None = Field(default=None, ge=1, description="the number of particles the text states; "
                                    "the run is checked against it, never resized to it")
    average_stage: int | None = Field(default=None, description="index of the stage whose thermo the metrics average")
    average_from: int | None = Field(default=None, description="with average_stage: the metrics average the thermo "
                                     "rows of every stage from this index to average_stage")
    layout: Layout | None = Field(default=None, description="regions, groups and what acts on them")
    scan: SlipScan | None = Field(default=None, description="a generalised stacking-fault scan: one half of the "
                                  "crystal displaced step by step, each state minimised (simagent.described.stacking)")
    defect: PointDefect | None = Field(default=None, description="atoms added between the perfect crystal's "
                                       "minimisation and the defect cell's (a formation energy)")
    origin: dict[str, Origin] = Field(default_factory=dict)
    unsupported: list[str] = Field(default_factory=list, description="prescribed, not rendered (named)")
    missing: list[str] = Field(default_factory=list, description="needed for a literal run, not stated")

    def note(self, name: str, source: Source, evidence: str) -> None:
        self.origin[name] = Origin(source=source, evidence=evidence.strip())

    def note_dump(self, said: str = "") -> None:
        """A trajectory dump the text states (`said`: its words): read and listed, not written, since no
        metric reads a trajectory."""
        self.note("dump", "rules", f"{said + ': ' if said else ''}read; not written (trajectory output, no metric "
                  "reads it)")

    @property
    def defaults(self) -> dict[str, str]:
        """Field -> reason, for every field a documented default filled."""
        return {k: o.evidence for k, o in self.origin.items() if o.source == "default"}

    @property
    def renderable(self) -> bool:
        return not self.unsupported and not self.missing and bool(self.stages)

    def run_stages(self) -> list[int]:
        return [i for i, s in enumerate(self.stages) if s.kind == "run"]
