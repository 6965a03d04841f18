"""lammps/described: a task's own description, read into a SimulationDescription and run literally.

When a text prescribes the whole simulation (system, interactions, velocities, the sequence of
runs and minimisations), this protocol runs exactly that (tools.lammps.described renders it) and
measures the metrics from its output: thermo averages (temperature, energies per atom, pressure,
volume, density) over the averaged stage with block-average standard errors (simagent.stats), and
the coordination number and g(r) first peak from g(r) snapshots of that stage
(simagent.materials.rdf). It never changes what the description states; what the description does
not state gets the documented defaults listed with the answer, and a description that prescribes
something the renderer cannot write is refused by name.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import numpy as np
from pydantic import BaseModel, Field

from simagent.described.model import SimulationDescription
from simagent.described.reading import read_description
from simagent.errors import CalculationFailed, ReadError, RequestError
from simagent.materials.defects import formation_energy
from simagent.materials.rdf import rdf_peak_and_cn
from simagent.models import DefaultApplied, Job, Result, TaskSpec
from simagent.protocols import Protocol, register
from simagent.stats import block_average
from tools.lammps.described import (
    COULOMB_COLUMNS,
    EROT_COLUMN,
    GK_COLUMNS,
    GYRATION_COLUMNS,
    GYRATION_COMPONENTS,
    MSD_COLUMN,
    MSD_COM,
    RDF_FILE,
    SLOPE_COLUMN,
    render,
    runaway_stop,
)
from tools.lammps.described_budget import BudgetStop, budget_stop
from tools.lammps.described_drum import ROTATION_ANGLE, angle_result
from tools.lammps.described_ellipsoids import rotation_result
from tools.lammps.described_groups import averaged_forces, force_columns, wall_force_variables
from tools.lammps.described_metrics import (
    ALL,
    MEASURED,
    SURFACE_TENSION_COLUMN,
    SURFACE_TENSION_FACTOR,
    GroupMeasure,
    anchor_type,
    carries_charge,
    describe,
)
from tools.lammps.described_molecular import files as molecule_files
from tools.lammps.described_pillars import POISSON, poisson_results
from tools.lammps.described_regions import FRICTION, TENSILE, friction_coefficient, pull_axis, tensile_stress
from tools.lammps.described_replica import dynamics_block
from tools.lammps.described_shock import PROPERTIES as SHOCK
from tools.lammps.described_shock import result as shock_result
from tools.lammps.described_shock import shock_stage
from tools.lammps.described_solids import shear_stress, strength, youngs_modulus
from tools.lammps.described_spin import NORMALIZED, PER_ATOM
from tools.lammps.described_spin import PROPERTIES as SPIN
from tools.lammps.described_spin import files as spin_files
from tools.lammps.described_spin import result as spin_result
from tools.lammps.described_stacking import GSF
from tools.lammps.described_stacking import result as gsf_result
from tools.lammps.example_system import HBOND_COLUMN, hbond_style
from tools.lammps.example_system import job_files as example_files
from tools.lammps.parse import LammpsOutput, read_output
from tools.lammps.protocols.solid_common import minimization_stats

JOB_ID = "described"
RDF_BLOCKS = 5  # the coordination number's error: the same analysis on this many blocks of g(r) snapshots
# property -> (thermo column, per atom)
THERMO_PROPERTIES: dict[str, tuple[str, bool]] = {
    "temperature": ("Temp", False), "pressure": ("Press", False), "volume": ("Volume", False),
    "density": ("Density", False), "potential_energy_per_atom": ("PotEng", True),
    "kinetic_energy_per_atom": ("KinEng", True), "total_energy_per_atom": ("TotEng", True),
}  # fmt: skip
STRUCTURE_PROPERTIES = ("coordination_number", "rdf")
# property -> thermo column, divided by the number of molecules of the kind the result's label names
PER_MOLECULE = {"potential_energy_per_molecule": "PotEng", "total_energy_per_molecule": "TotEng"}
# property -> thermo column of the averaged stage (tools.lammps.described._motion)
MOTION_PROPERTIES = {"mean_squared_displacement": MSD_COLUMN, "self_diffusion_coefficient": SLOPE_COLUMN}
VISCOSITY = "shear_viscosity"  # Green-Kubo, when the description states its sampling
ROTATION = "rotational_energy_per_atom"  # finite spheres (dipolar), compute erotate/sphere
DRAG = "drag_force"  # the force of a flow on each indenter obstacle, along the flow
WALL_FORCE = "wall_force"  # per axis, the force the atoms exert on the LJ 9-3 walls normal to it
SHEAR_STRESS = "shear_stress"  # of an imposed shear flow (tools.lammps.described_solids)
YOUNG = "youngs_modulus"  # from the stress-strain record of a deformation stage (tools.lammps.described_solids)
STRENGTHS = frozenset({"yield_stress", "ultimate_stress"})  # of the same stress-strain record
GYRATION = "radius_of_gyration"  # of a described chain: Rg and the squared tensor's components (label 'squared_yy')
SQUARED = "squared_"  # label prefix of a component of the squared radius-of-gyration tensor
SURFACE_TENSION = "surface_tension"  # of a slab, from the pressure tensor (tools.lammps.described_metrics)
COULOMB = "coulomb_energy_per_atom"  # thermo ecoul (LAMMPS's Coulombic energy), per atom (and the system's total)
ELECTROSTATIC = "electrostatic_energy_per_atom"  # thermo ecoul + elong (with the k-space part), per atom (and total)
COULOMBS = (COULOMB, ELECTROSTATIC)
HBONDS = "hydrogen_bond_count"  # of a pair style that counts them (tools.lammps.example_system.hbond_lines)
GROUP_ONLY = frozenset({"atomic_charge", "atom_count", "molecule_count"})  # always over a group or kind of molecule
# (tools.lammps.described_metrics)
INTERSTITIAL = "interstitial_formation_energy"  # from the two minimisations of a described point defect
RELAXED_FORCE = 1e-3  # eV/A: a larger force left after a defect's minimisation is a warning with the number
MINIMISED = ("potential_energy_per_atom",)  # what a description of minimisations alone measures: the final state's
# the unit of each thermo quantity per unit style (LAMMPS units command)
UNITS: dict[str, dict[str, str]] = {
    "lj": {"energy": "reduced", "temperature": "reduced", "pressure": "reduced", "volume": "reduced",
           "density": "reduced", "length": "reduced"},
    "real": {"energy": "kcal/mol", "temperature": "K", "pressure": "atm", "volume": "angstrom^3",
             "density": "g/cm^3", "length": "angstrom"},
    "metal": {"energy": "eV", "temperature": "K", "pressure": "bar", "volume": "angstrom^3",
              "density": "g/cm^3", "length": "angstrom"},
}  # fmt: skip


class DescribedParams(BaseModel):
    description: SimulationDescription
    properties: list[str] = Field(default_factory=list)
    labels: dict[str, list[str]] = Field(default_factory=dict, description="property -> the labels asked")
    measures: list[GroupMeasure] = Field(default_factory=list, description="numbers over a group of atoms")
    time_limit_s: float = Field(default=3600.0, gt=0)


def _description(spec: TaskSpec) -> SimulationDescription:
    """The description solve read (rules, then the LLM's quoted readings), else the rules' reading."""
    if spec.described is not None:
        return SimulationDescription.model_validate(spec.described)
    return read_description(spec.request)


@register
class DescribedRun(Protocol):
    name = "lammps/described"
    engine = "lammps"
    properties: ClassVar[frozenset[str]] = frozenset(THERMO_PROPERTIES) | frozenset(STRUCTURE_PROPERTIES) | \
        frozenset(MOTION_PROPERTIES) | frozenset(PER_MOLECULE) | {VISCOSITY, ROTATION, DRAG, WALL_FORCE, YOUNG,
                                                                  SHEAR_STRESS, GYRATION, FRICTION, TENSILE,
                                                                  SURFACE_TENSION} | STRENGTHS | GROUP_ONLY | \
        frozenset(SHOCK) | {ROTATION_ANGLE, HBONDS, COULOMB, ELECTROSTATIC, INTERSTITIAL, GSF, POISSON} | \
        frozenset(SPIN)
    Params = DescribedParams
    description = ("the simulation the request itself prescribes (lattice, box, pair potential, velocities, the "
                   "sequence of runs and minimisations), run literally; thermo averages of the last run stage")

    def applies_to(self, spec: TaskSpec) -> bool:
        if spec.engine != "lammps" or not spec.properties:
            return False
        if not all(p.name in self.properties and p.at == "average" for p in spec.properties):
            return False
        desc = _description(spec)
        wants_gk = any(p.name == VISCOSITY for p in spec.properties)
        wants_rotation = any(p.name == ROTATION for p in spec.properties)
        wants_young = any(p.name == YOUNG or p.name in STRENGTHS for p in spec.properties)
        wants_drag = any(p.name == DRAG for p in spec.properties)
        obstacles = desc.layout is not None and bool(desc.layout.indenters)
        walls = desc.layout is not None and bool(wall_force_variables(desc.layout))
        wants_walls = any(p.name == WALL_FORCE for p in spec.properties)
        kinds = {s.template for s in desc.molecular.species} if desc.molecular else set()
        if any(p.name in PER_MOLECULE and (p.label or "").lower() not in kinds for p in spec.properties):
            return False
        if any(p.name == GYRATION for p in spec.properties) and desc.chain is None:
            return False  # a radius of gyration is a chain's, not a liquid box's
        if not all(_measurable(m, desc) for m in _measures(spec)):
            return False
        if any(p.name == SURFACE_TENSION for p in spec.properties) and not _slab(desc):
            return False
        if any(p.name in SHOCK for p in spec.properties) and shock_stage(desc) is None:
            return False  # fix msst's values exist only in a stage it integrates
        if any(p.name == ROTATION_ANGLE for p in spec.properties) and desc.drum is None:
            return False  # the angle is a rotating drum's
        if any(p.name == POISSON for p in spec.properties) and desc.pillars is None:
            return False  # a Poisson ratio from a run: compressed bonded pillars' extents only
        if any(p.name in SPIN for p in spec.properties) and desc.spin is None:
            return False  # compute spin's values exist only for a spin lattice
        if any(p.name == HBONDS for p in spec.properties) and hbond_style(desc.example_system) is None:
            return False  # counted by a hydrogen-bond pair style only
        if any(p.name == GSF for p in spec.properties) and desc.scan is None:
            return False  # the curve of a stacking-fault scan the description states
        if desc.scan is not None and any(p.name != GSF for p in spec.properties):
            return False  # a scan has no averaged run for thermo quantities
        if any(p.name == INTERSTITIAL for p in spec.properties) and desc.defect is None:
            return False  # from a described point defect's two minimisations only
        if any(s.prd is not None for s in desc.stages) and any(p.name not in THERMO_PROPERTIES
                                                              for p in spec.properties):
            return False  # parallel replica dynamics: thermo averages over its dynamics only
        if not desc.run_stages() and any(p.name not in (INTERSTITIAL, GSF, *MINIMISED) for p in spec.properties):
            return False  # minimisations only: no thermo average to take, the minimised state's energy only
        return desc.renderable and (desc.green_kubo is not None or not wants_gk) and (
            desc.dipoles is not None or desc.ellipsoids is not None or not wants_rotation) and (
            any(s.deform for s in desc.stages) or not wants_young) and (
            any(s.shear for s in desc.stages) or all(p.name != SHEAR_STRESS for p in spec.properties)) and (
            obstacles or not wants_drag) and (walls or not wants_walls) and (
            all(p.name != FRICTION for p in spec.properties) or (desc.layout is not None
                                                                  and desc.layout.friction is not None)) and (
            all(p.name != TENSILE for p in spec.properties) or pull_axis(desc) is not None)

    def parameters(self, spec: TaskSpec) -> tuple[BaseModel, list[DefaultApplied]]:
        desc = _description(spec)
        if desc.unsupported:
            raise RequestError("the description prescribes " + ", ".join(desc.unsupported) + ", which simagent does "
                               "not render; simagent runs no substitute for a prescribed protocol")
        if not desc.renderable:
            raise RequestError("the description does not state " + ", ".join(desc.missing or ["any run"]))
        notes = dict(desc.defaults)
        if any(p.name in MOTION_PROPERTIES for p in spec.properties):
            notes["msd"] = MSD_COM
        defaults = [DefaultApplied(parameter=k, value=v.split(": ", 1)[0], reason=v.split(": ", 1)[-1])
                    for k, v in notes.items()]  # each default is written 'value: reason'
        labels: dict[str, list[str]] = {}
        for prop in spec.properties:
            if prop.name in PER_MOLECULE and prop.label:
                labels.setdefault(prop.name, []).append(prop.label.lower())
        return DescribedParams(description=desc, properties=list(dict.fromkeys(p.name for p in spec.properties)),
                               labels=labels, measures=_measures(spec)), defaults

    def jobs(self, params: BaseModel) -> list[Job]:
        p = self.as_params(params)
        rdf = any(name in STRUCTURE_PROPERTIES for name in p.properties)
        text = render(p.description, rdf=rdf, msd="mean_squared_displacement" in p.properties,
                      diffusion="self_diffusion_coefficient" in p.properties, viscosity=VISCOSITY in p.properties,
                      rotation=ROTATION in p.properties, drag=DRAG in p.properties,
                      wall_force=WALL_FORCE in p.properties, shear_stress=SHEAR_STRESS in p.properties,
                      gyration=GYRATION in p.properties, friction=FRICTION in p.properties,
                      tensile=pull_axis(p.description) if TENSILE in p.properties else None,
                      groups=p.measures, surface_tension=SURFACE_TENSION in p.properties,
                      rotation_angle=ROTATION_ANGLE in p.properties, hbonds=HBONDS in p.properties,
                      coulomb=any(name in COULOMBS for name in p.properties), extents=POISSON in p.properties)
        return [Job(id=JOB_ID, protocol=self.name, stage="described", params=p.model_dump(mode="json"),
                    inputs={"in.lammps": text, **molecule_files(p.description), **spin_files(p.description),
                            **(example_files(p.description.example_system) if p.description.example_system
                               else {})}, time_limit_s=p.time_limit_s, **_partitions(p.description))]

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p = self.as_params(params)
        desc = p.description
        job_dir = job_dirs[JOB_ID]
        out = read_output(job_dir)
        if out.errors:
            raise CalculationFailed(f"LAMMPS stopped: {out.errors[0]}")
        runaway = runaway_stop(out.text)
        if runaway:
            raise CalculationFailed(runaway)
        stop = budget_stop(out, desc)
        if stop is not None:  # only a number whose record ended before the stop (tools.lammps.described_budget)
            return _after_budget_stop(p, desc, stop, job_dir, out)
        prepared = desc.molecular is not None and desc.molecular.prepare
        runs = out.runs[1:] if prepared else out.runs  # after the preparation's minimisation
        prd = next((i for i, s in enumerate(desc.stages) if s.prd is not None), None)
        if prd is not None:  # the stages before prd, one block each; prd's own blocks follow in each replica's log
            return _prd_results(p, desc, prd, runs, out.replicas)
        if len(runs) != len(desc.stages):
            raise ReadError(f"{len(runs)} thermo blocks for {len(desc.stages)} stages in {job_dir / 'log.lammps'}")
        if desc.scan is not None:  # every stage a minimisation: the scan's energies (tools.lammps.described_stacking)
            log = job_dir / "log.lammps"
            return [gsf_result(runs, desc, log.read_text() if log.is_file() else out.text, JOB_ID)]
        if desc.defect is not None:  # minimisations only: a described point defect's formation energy
            return [_formation_energy(runs, (job_dir / "log.lammps").read_text(errors="replace"), desc)]
        if not desc.run_stages():  # minimisations only: the minimised state's energies
            log = (job_dir / "log.lammps").read_text(errors="replace")
            return [r for name in p.properties for r in _minimised(name, runs[-1], log, desc)]
        index = desc.average_stage if desc.average_stage is not None else desc.run_stages()[-1]
        stage = desc.stages[index]
        block = runs[index]
        units = UNITS[desc.units or "lj"]
        where = f"stage {index + 1} ({stage.name}, {stage.steps} steps)"
        if desc.average_from is not None and desc.average_from < index:  # the thermo rows of several stages
            block = joined_blocks(runs[desc.average_from:index + 1])
            steps = sum(s.steps for s in desc.stages[desc.average_from:index + 1])
            where = f"stages {desc.average_from + 1}-{index + 1} ({steps} steps, every thermo row of each)"
        results = [_group_result(m, block, desc, units, where) for m in p.measures]
        for name in p.properties:
            if name in GROUP_ONLY:
                continue
            if name in THERMO_PROPERTIES:
                results.append(_thermo(name, block, units, where))
                if THERMO_PROPERTIES[name][1] and desc.units != "lj":  # an energy: also the system's total
                    results.append(_thermo(name, block, units, where, total=True))
            elif name in PER_MOLECULE:
                results += [_per_molecule(name, kind, block, desc, units, where) for kind in p.labels.get(name, [])]
            elif name in MOTION_PROPERTIES:
                results.append(_motion(name, block, desc, where))
            elif name == ROTATION and desc.ellipsoids is not None:
                results.append(rotation_result(block, desc, units["energy"], JOB_ID, where))
            elif name == ROTATION:
                results.append(_thermo(name, block, units, where))
                if desc.units != "lj":  # outside LJ units a name without 'per atom' asks for the total
                    results.append(_thermo(name, block, units, where, total=True))
            elif name == VISCOSITY:
                results.append(_viscosity(block, desc, where))
            elif name in (DRAG, WALL_FORCE) and not any(r.property == name for r in results):
                results += [r for r in _forces(block, desc, where, p.properties) if r.property not in
                            {x.property for x in results}]
            elif name == YOUNG:
                results.append(youngs_modulus(job_dir, desc, JOB_ID))
            elif name == SURFACE_TENSION:
                results.append(_surface_tension(block, desc, where))
            elif name == SHEAR_STRESS:
                results.append(shear_stress(block, desc, JOB_ID))
            elif name == FRICTION:
                results.append(friction_coefficient(block, desc, JOB_ID, where))
            elif name == TENSILE:
                results.append(tensile_stress(block, desc, JOB_ID, where))
            elif name in STRENGTHS:
                results.append(strength(job_dir, desc, JOB_ID, name))
            elif name == GYRATION:
                results += _gyration(block, units, where)
            elif name in SHOCK:
                results.append(shock_result(name, block, desc, JOB_ID, where))
            elif name == ROTATION_ANGLE:
                results.append(angle_result(block, JOB_ID, where))
            elif name == POISSON:
                results += poisson_results(block, desc, JOB_ID, where)
            elif name in SPIN:  # the total, per atom and (magnetization) normalised: each metric picks its label
                labels = (None, PER_ATOM, NORMALIZED)[: {"magnetization": 3, "magnetic_energy": 2}.get(name, 1)]
                results += [spin_result(name, label, block, desc, JOB_ID, where) for label in labels]
            elif name == HBONDS:
                results.append(_hbonds(block, desc, where))
            elif name in COULOMBS:
                results += [_coulomb(name, block, units, where, total)
                            for total in ((False, True) if desc.units != "lj" else (False,))]
        wanted = [n for n in p.properties if n in STRUCTURE_PROPERTIES]
        if wanted:
            results += _structure(wanted, job_dir, block, desc, units, where)
        miscount = _count_warning(out.runs[0], desc)
        return [r.model_copy(update={"warnings": [*r.warnings, miscount]}) for r in results] if miscount else results


def joined_blocks(blocks: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The thermo rows of consecutive runs as one block, in order (the columns every run has); each run's first
    row (its setup, e.g. just after a change_box) is a state of its own and is kept."""
    names = [n for n in blocks[0] if all(n in b for b in blocks[1:])]
    return {n: np.concatenate([np.asarray(b[n]) for b in blocks]) for n in names}


def _partitions(desc: SimulationDescription) -> dict[str, int | str]:
    """The job's partitions (and ranks): one partition per replica of a parallel replica dynamics stage. A
    stated count of M replicas runs on M ranks (more than the cores: MPI shares them) and M partitions;
    one stated replica keeps the ranks the job is spread over (one partition of them); none stated: one
    replica per rank, as many as the cores the job is spread over. No prd: no partitions."""
    prd = next((s.prd for s in desc.stages if s.prd is not None), None)
    if prd is None:
        return {}
    if prd.replicas is None:
        return {"partitions": "ranks"}
    return {"partitions": prd.replicas, **({"ranks": prd.replicas} if prd.replicas > 1 else {})}


def _prd_results(p: DescribedParams, desc: SimulationDescription, index: int, runs: list[dict[str, np.ndarray]],
                 replicas: list[str]) -> list[Result]:
    """Thermo averages over the parallel replica dynamics of every replica (tools.lammps.described_replica):
    the stage must be the averaged one and the last; the blocks before it are one per stage."""
    stage = desc.stages[index]
    prd = stage.prd
    assert prd is not None
    averaged = desc.average_stage if desc.average_stage is not None else desc.run_stages()[-1]
    if averaged != index or index != len(desc.stages) - 1:
        raise ReadError("parallel replica dynamics is read as the last, averaged stage only")
    if not replicas:
        raise ReadError("no replica logs (log.lammps.0, ...): the run was not started on partitions")
    if len(runs) < index:
        raise ReadError(f"{len(runs)} thermo blocks for the {index} stages before parallel replica dynamics")
    block, counts = dynamics_block(replicas, prd.t_event)
    units = UNITS[desc.units or "lj"]
    where = (f"stage {index + 1} ({stage.name}, parallel replica dynamics of {prd.steps} steps per replica on "
             f"{len(replicas)} replica(s)): the rows of its dynamics blocks of t_event = {prd.t_event} steps, "
             f"each without its first row, pooled over the replicas' logs log.lammps.0-{len(replicas) - 1} ("
             + ", ".join(f"{k}: {n} blocks" for k, n in counts.items())
             + "; not the dephasing runs, not the quench minimisations)")
    results = []
    for name in p.properties:
        if name not in THERMO_PROPERTIES:
            raise ReadError(f"{name} is not measured over parallel replica dynamics (thermo averages only)")
        results.append(_thermo(name, block, units, where))
        if THERMO_PROPERTIES[name][1] and desc.units != "lj":
            results.append(_thermo(name, block, units, where, total=True))
    return results


def _after_budget_stop(p: DescribedParams, desc: SimulationDescription, stop: BudgetStop, job_dir: Path,
                       out: LammpsOutput) -> list[Result]:
    """A run the time budget ended: the Young's modulus when its fit window was recorded whole (with the
    stop as a warning); any other metric averages over or reads the end of a stage, which a part of the
    run does not give, so the analysis fails with the stop's words."""
    others = [name for name in p.properties if name != YOUNG] + [m.property for m in p.measures]
    if others:
        raise CalculationFailed(f"{stop.words(desc)}: {', '.join(dict.fromkeys(others))} need the whole prescribed "
                                "run (averages over a stage, or its final state); no number is taken from a part of it")
    results = [youngs_modulus(job_dir, desc, JOB_ID, stop)]
    miscount = _count_warning(out.runs[0], desc)
    return [r.model_copy(update={"warnings": [*r.warnings, miscount]}) for r in results] if miscount else results


def _minimised(name: str, block: dict[str, np.ndarray], log: str, desc: SimulationDescription) -> list[Result]:
    """The potential energy of the minimised state, per atom and (outside LJ units) the system's total: the
    final energy of the last minimisation's summary (full precision; thermo rows carry 8 digits), over the atoms
    of its last thermo row."""
    column = THERMO_PROPERTIES[name][0]
    stats = minimization_stats(log)
    if column not in block or "Atoms" not in block or not stats or "energy" not in stats[-1]:
        raise ReadError(f"thermo column {column}, Atoms or the minimisation summary missing")
    energy, atoms = float(stats[-1]["energy"]), int(block["Atoms"][-1])
    if not np.isclose(energy, float(block[column][-1]), rtol=1e-6, atol=1e-6):
        raise ReadError(f"the minimisation summary's final energy {energy:g} is not the last thermo {column} "
                        f"{float(block[column][-1]):g}")
    unit = UNITS[desc.units or "lj"]["energy"]
    where = (f"the final state of the last minimisation (stage {len(desc.stages)}, {desc.stages[-1].name}): "
             f"thermo {column} = {energy:.10g} {unit} over {atoms} atoms")
    out = [Result(quantity=name, property=name, value=energy / atoms, job=JOB_ID, log="log.lammps",
                  unit=unit if unit == "reduced" else f"{unit}/atom", method=f"{column} / atoms of {where}; "
                  "deterministic (0 K)")]
    if desc.units != "lj":
        out.append(Result(quantity="total_" + name.removesuffix("_per_atom"), property=name, value=energy,
                          unit=unit, job=JOB_ID, log="log.lammps", label="total",
                          method=f"{column} (the total over the system) of {where}; deterministic (0 K)"))
    return out


def _formation_energy(runs: list[dict[str, np.ndarray]], log: str, desc: SimulationDescription) -> Result:
    """E_def - (N_def/N) E_0 (or E_def - E_0 when the text states it so) from the final energies of the perfect
    crystal's and the defect cell's minimisations (simagent.described.defects), each energy the full-precision
    final value of LAMMPS's minimisation summary, each count the stage's last thermo row."""
    d = desc.defect
    assert d is not None
    stats = minimization_stats(log)
    if len(stats) != len(desc.stages) or any("energy" not in s for s in stats):
        raise ReadError(f"{len(stats)} minimisation summaries for {len(desc.stages)} minimisations in log.lammps")
    (e0, ed), (n0, nd) = ((stats[i]["energy"] for i in (d.perfect_stage, d.defect_stage)),
                          (int(runs[i]["Atoms"][-1]) for i in (d.perfect_stage, d.defect_stage)))
    if nd != n0 + len(d.positions):
        raise CalculationFailed(f"the defect cell has {nd} atoms, the perfect crystal {n0}: {len(d.positions)} "
                                "atom(s) were to be added")
    value = formation_energy(ed, nd, e0, n0) if d.reference == "per_atom" else ed - e0
    formula = "E_def - (N_def/N) E_0" if d.reference == "per_atom" else "E_def - E_0 (as the text states)"
    unit = UNITS[desc.units or "lj"]["energy"]
    warnings = [f"the {desc.stages[i].name} minimisation stopped on '{stats[i]['stop']}' with a largest force "
                f"component {stats[i]['fmax']:.2e} eV/A (> {RELAXED_FORCE:g}): not relaxed" for i in
                (d.perfect_stage, d.defect_stage) if desc.units == "metal" and stats[i].get("fmax", 0) > RELAXED_FORCE]
    steps = "; ".join(f"{desc.stages[i].name}: {stats[i]['stop']}, {stats[i].get('iterations', '?')} iterations, "
                      f"largest force {stats[i].get('fmax', float('nan')):.2e}" for i in (d.perfect_stage,
                                                                                          d.defect_stage))
    return Result(quantity=INTERSTITIAL, value=value, unit=unit, job=JOB_ID, log="log.lammps", warnings=warnings,
                  method=f"{formula} from the two minimisations the text prescribes: E_0 = {e0:.10g} {unit} "
                         f"(perfect crystal, N = {n0}), E_def = {ed:.10g} {unit} ({nd} atoms, {len(d.positions)} "
                         f"added at {', '.join(str(p) for p in d.positions)} {d.position_units} units); {steps}; "
                         "0 K, box fixed as stated; deterministic")


def _count_warning(first: dict[str, np.ndarray], desc: SimulationDescription) -> str | None:
    """The text states N particles and the run made another number (a placement or size the text
    leaves out was filled otherwise): the number answers for another system, and the answer says so.
    Not for inserted or solvent particles (deposition, SRD, a granular pour), whose count is not the
    made one."""
    if desc.stated_atoms is None or desc.deposition is not None or desc.srd is not None or \
            desc.granular is not None or desc.drum is not None or "Atoms" not in first:
        return None
    made = int(first["Atoms"][0])
    if made == desc.stated_atoms:
        return None
    filled = [f"{k} = {v.split(': ', 1)[0]}" for k, v in desc.defaults.items()
              if k.split(".")[0] in ("box", "lattice", "cluster", "layout", "create_in")]
    return (f"the text states {desc.stated_atoms} particles, the run made {made}: the numbers are for that system"
            + (f" (placement not stated, filled: {'; '.join(filled)})" if filled else ""))


def _coulomb(name: str, block: dict[str, np.ndarray], units: dict[str, str], where: str, total: bool) -> Result:
    """LAMMPS's Coulombic energy (COULOMB: thermo ecoul, the pair style's Coulomb term, which under Ewald or
    PPPM is the real-space part) or the whole electrostatic energy (ELECTROSTATIC: ecoul + elong, the k-space
    part added), per atom or (`total`) the system's. The method names the other parts' values."""
    columns = {"ecoul": "E_coul", "elong": "E_long"}
    missing = [columns[c] for c in COULOMB_COLUMNS if columns[c] not in block]
    if missing:
        raise ReadError(f"thermo columns {', '.join(missing)} missing")
    per = 1.0 if total else block["Atoms"]
    pair, long_range = block["E_coul"] / per, block["E_long"] / per
    whole = name == ELECTROSTATIC
    mean, err = block_average(pair + long_range if whole else pair)
    unit = units["energy"] + ("" if total or units["energy"] == "reduced" else "/atom")
    what = ("thermo ecoul + elong (the pair style's Coulomb term plus the long-range k-space part)" if whole else
            "thermo ecoul (LAMMPS's Coulombic energy: the pair style's Coulomb term, under Ewald/PPPM its real-space "
            "part; the k-space part elong is printed apart)")
    others = (f"ecoul alone {float(np.mean(pair)):.6g}, elong alone {float(np.mean(long_range)):.6g}" if whole else
              f"elong {float(np.mean(long_range)):.6g}, ecoul + elong {float(np.mean(pair + long_range)):.6g}")
    return Result(quantity=f"total_{name.removesuffix('_per_atom')}" if total else name, property=name, value=mean,
                  unit=unit, uncertainty=err, job=JOB_ID, log="log.lammps", label="total" if total else None,
                  method=f"average of {what}{'' if total else ' / atoms'} over {where}, {pair.size} samples "
                         f"({others}); standard error by block averaging")


def _hbonds(block: dict[str, np.ndarray], desc: SimulationDescription, where: str) -> Result:
    """The mean number of hydrogen bonds the system's hydrogen-bond pair style counts (compute pair, first value)."""
    if HBOND_COLUMN not in block:
        raise ReadError(f"thermo column {HBOND_COLUMN} missing")
    mean, err = block_average(block[HBOND_COLUMN])
    return Result(quantity=HBONDS, property=HBONDS, value=mean, uncertainty=err, unit="", job=JOB_ID,
                  log="log.lammps",
                  method=f"average of the number of hydrogen bonds pair {hbond_style(desc.example_system)} counts "
                         f"(compute pair, first value: thermo {HBOND_COLUMN}) over {where}, "
                         f"{block[HBOND_COLUMN].size} samples; standard error by block averaging")


def _slab(desc: SimulationDescription) -> bool:
    """The atoms are made in a block that leaves empty space along the normal (z; y in 2D) inside the box:
    a slab with two interfaces, whose surface tension the pressure tensor gives."""
    k = 1 if desc.dimension == 2 else 2
    layout, box = desc.layout, desc.box
    if desc.molecular is not None and desc.molecular.slab is not None and box is not None:
        axis, lo, hi = desc.molecular.slab
        return axis == "xyz"[k] and box.lo[k] < lo < hi < box.hi[k]
    if layout is None or layout.create_in is None or box is None:
        return False
    region = next(r for r in layout.regions if r.name == layout.create_in)
    if region.style != "block" or region.bounds is None:
        return False
    lo, hi = region.bounds[2 * k], region.bounds[2 * k + 1]
    return lo is not None and hi is not None and box.lo[k] < lo < hi < box.hi[k]


def _surface_tension(block: dict[str, np.ndarray], desc: SimulationDescription, where: str) -> Result:
    if SURFACE_TENSION_COLUMN not in block:
        raise ReadError(f"thermo column {SURFACE_TENSION_COLUMN} missing")
    factor = SURFACE_TENSION_FACTOR[desc.units or "lj"]
    mean, err = block_average(block[SURFACE_TENSION_COLUMN] * factor)
    normal = "y" if desc.dimension == 2 else "z"
    return Result(quantity=SURFACE_TENSION, value=mean, uncertainty=err, job=JOB_ID, log="log.lammps",
                  unit="reduced" if desc.units == "lj" else "mN/m",
                  method=f"mechanical surface tension of a slab with two interfaces normal to {normal}: (L_{normal}/2)"
                         f"(P_{normal}{normal} - mean tangential pressure), thermo {SURFACE_TENSION_COLUMN}"
                         + ("" if desc.units == "lj" else f" x {factor:.6g} mN/m per pressure x length unit")
                         + f", averaged over {where}, {block[SURFACE_TENSION_COLUMN].size} samples; standard error by "
                         "block averaging")


def _measures(spec: TaskSpec) -> list[GroupMeasure]:
    """The numbers asked over a group of atoms (a type, a described group) or counted in a region."""
    out: list[GroupMeasure] = []
    for p in spec.properties:
        if p.name == "molecule_count":  # over the molecules of one kind, named by the label ('water')
            m = GroupMeasure(property=p.name, group=(p.label or "").lower() or ALL)
            if m not in out:
                out.append(m)
        elif p.group is not None or p.name in GROUP_ONLY:
            m = GroupMeasure(property=p.name, group=p.group or ALL, region=p.label if p.name == "atom_count" else None)
            if m not in out:
                out.append(m)
    return out


def _measurable(m: GroupMeasure, desc: SimulationDescription) -> bool:
    """The description makes the group (a type it has, a group it defines) and the region counted in; a
    charge needs an atom style that carries one."""
    layout = desc.layout
    if m.property not in MEASURED or (m.property == "atomic_charge" and not carries_charge(desc)):
        return False
    if m.region is not None and (layout is None or all(r.name != m.region for r in layout.regions)):
        return False
    if m.property == "molecule_count":  # a kind of molecule the molecular system has, one marker atom each
        return anchor_type(desc, m.group) is not None
    if m.group == ALL:
        return True
    if m.group.startswith("type") and m.group[4:].isdigit():
        return 1 <= int(m.group[4:]) <= desc.atom_types
    return layout is not None and layout.group(m.group) is not None


def _group_result(m: GroupMeasure, block: dict[str, np.ndarray], desc: SimulationDescription,
                  units: dict[str, str], where: str) -> Result:
    if m.column not in block:
        raise ReadError(f"thermo column {m.column} missing")
    series = block[m.column]
    mean, err = block_average(series)
    if m.property == "molecule_count":
        return Result(quantity=f"{m.property} ({m.group})", property=m.property, label=m.group, value=mean, unit="",
                      uncertainty=err, job=JOB_ID, log="log.lammps",
                      method=f"average of {describe(m)} (thermo {m.column}) over {where}, {series.size} samples; "
                             "standard error by block averaging")
    if m.property == "atom_count":
        unit = ""
    elif m.property == "atomic_charge":
        unit = "reduced" if desc.units == "lj" else "e"
    elif m.property == "temperature":
        unit = units["temperature"]
    else:
        unit = units["energy"] + ("" if desc.units == "lj" else "/atom")
    return Result(quantity=m.property if m.group == ALL else f"{m.property} ({m.group})", property=m.property,
                  group=None if m.group == ALL else m.group, label=m.region, value=mean, unit=unit, uncertainty=err,
                  job=JOB_ID, log="log.lammps",
                  method=f"average of {describe(m)} (thermo {m.column}) over {where}, {series.size} samples; standard "
                         "error by block averaging")


def _thermo(name: str, block: dict[str, np.ndarray], units: dict[str, str], where: str, total: bool = False
            ) -> Result:
    """A thermo average; an energy per atom, or with `total` the system's total (label 'total'), as
    thermo prints it (norm no)."""
    column, per_atom = THERMO_PROPERTIES[name] if name in THERMO_PROPERTIES else (EROT_COLUMN, True)
    per_atom = per_atom and not total
    if column not in block:
        raise ReadError(f"thermo column {column} missing")
    held = block["Atoms"] > 0 if per_atom else np.ones(block[column].size, dtype=bool)
    empty = int(np.sum(~held))  # rows before the first particle (fix pour, deposit): no per-atom value yet
    series = block[column][held] / (block["Atoms"][held] if per_atom else 1.0)
    mean, err = block_average(series)
    kind = name.split("_")[0] if name not in ("temperature", "pressure", "volume", "density") else name
    unit = units["energy" if per_atom or total else kind]
    if per_atom and unit != "reduced":
        unit += "/atom"
    quantity = "total_" + name.removesuffix("_per_atom") if total else name  # display name
    return Result(quantity=quantity, property=name, value=mean, unit=unit, uncertainty=err, job=JOB_ID,
                  log="log.lammps", label="total" if total else None,
                  method=f"average of thermo {column}{' / atoms' if per_atom else ''}"
                         f"{' (the total over the system)' if total else ''} over {where}, "
                         f"{series.size} samples{f' (not the {empty} rows with no atom yet)' if empty else ''}; "
                         f"standard error by block averaging{_transient(block, held)}")


def _transient(block: dict[str, np.ndarray], held: np.ndarray) -> str:
    """A caveat when atoms are added during the stage: the mean is over a transient, not a steady state."""
    counts = block["Atoms"][held] if "Atoms" in block else np.array([])
    if counts.size == 0 or counts.min() == counts.max():
        return ""
    return (f" (the atom count grows from {counts.min():g} to {counts.max():g} during the stage: a mean over a "
            "transient, whose block error is the rows' spread, not the error of a steady-state average)")


def _gyration(block: dict[str, np.ndarray], units: dict[str, str], where: str) -> list[Result]:
    """The chain's radius of gyration (label none) and each component of its squared tensor (label
    'squared_xx' ... 'squared_yz'), averaged over the thermo rows of the averaged stage."""
    missing = [c for c in GYRATION_COLUMNS if c not in block]
    if missing:
        raise ReadError(f"thermo columns {', '.join(missing)} missing")
    length = units["length"]
    out = []
    for column, label in zip(GYRATION_COLUMNS, (None, *GYRATION_COMPONENTS), strict=True):
        mean, err = block_average(block[column])
        what = "Rg" if label is None else f"the {label} component of the squared radius-of-gyration tensor"
        out.append(Result(quantity=GYRATION if label is None else f"squared_{GYRATION}_{label}", property=GYRATION,
                          label=None if label is None else SQUARED + label, value=mean, uncertainty=err,
                          unit=length if label is None or length == "reduced" else f"{length}^2", job=JOB_ID,
                          log="log.lammps", method=f"average of {what} (compute gyration, thermo {column}) over "
                          f"{where}, {block[column].size} samples; standard error by block averaging"))
    return out


def _per_molecule(name: str, kind: str, block: dict[str, np.ndarray], desc: SimulationDescription,
                  units: dict[str, str], where: str) -> Result:
    """A thermo energy of the whole box divided by the number of molecules of one kind ('water')."""
    column = PER_MOLECULE[name]
    count = desc.molecular.count_of(kind) if desc.molecular else 0
    if column not in block or count == 0:
        raise ReadError(f"no {column} or no {kind} molecules to divide it by")
    mean, err = block_average(block[column] / count)
    return Result(quantity=name, label=kind, value=mean, unit=units["energy"], uncertainty=err, job=JOB_ID,
                  log="log.lammps", method=f"average of thermo {column} (the whole box) / {count} {kind} molecules "
                  f"over {where}, {block[column].size} samples; standard error by block averaging")


def _forces(block: dict[str, np.ndarray], desc: SimulationDescription, where: str, properties: list[str]
            ) -> list[Result]:
    """The time-averaged drag on each indenter obstacle along the flow (labelled by the obstacle) and,
    per axis, the total force the atoms exert on the LJ 9-3 walls normal to it (labelled x, y, z).
    Each thermo row holds the mean over the interval before it (fix ave/time); the first row (0,
    nothing averaged yet) is left out."""
    layout = desc.layout
    if layout is None:
        raise ReadError("the description places no obstacle or wall whose force could be measured")
    drag, walls = DRAG in properties, WALL_FORCE in properties
    columns = force_columns(layout, drag, walls)
    out = []
    for (prop, label, value), column in zip(averaged_forces(layout, drag, walls), columns, strict=True):
        if column not in block:
            raise ReadError(f"thermo column {column} missing")
        series = block[column][1:]
        mean, err = block_average(series)
        if prop == DRAG:
            ind = next(i for i in layout.indenters if i.name == label)
            x, y, z = ind.center
            what = (f"the force on indenter {label} (centre {x:g} {y:g} {z:g}, radius {ind.radius:g}) along the flow "
                    f"({layout.flow_axis or 'x'})")
        else:
            what = f"the sum over the walls normal to {label} of the force the atoms exert on each (fix wall/lj93)"
        out.append(Result(quantity=prop, label=label, value=mean, uncertainty=err, job=JOB_ID, log="log.lammps",
                          unit=UNITS[desc.units or "lj"]["energy"] + ("" if desc.units == "lj" else "/angstrom"),
                          method=f"time average over every step of {where} of {value}, {what}: {series.size} "
                                 f"interval means (thermo column {column}); standard error by block averaging"))
    return out


def _motion(name: str, block: dict[str, np.ndarray], desc: SimulationDescription, where: str) -> Result:
    column = MOTION_PROPERTIES[name]
    if column not in block:
        raise ReadError(f"thermo column {column} missing")
    series = block[column]
    series = series[np.isfinite(series)]
    if name == "self_diffusion_coefficient":
        series = series[1:]  # the first line has fewer than two MSD values to fit
    if series.size < 2:
        raise CalculationFailed(f"too few {column} values in {where} to average")
    mean, err = block_average(series)
    length = UNITS[desc.units or "lj"]["length"]
    time = {"lj": "reduced", "real": "fs", "metal": "ps"}[desc.units or "lj"]
    if length == "reduced":
        unit = "reduced"
    else:
        unit = f"{length}^2" + ("" if name == "mean_squared_displacement" else f"/{time}")
    how = ("the MSD from the stage's start (compute msd)" if name == "mean_squared_displacement" else
           f"the running diffusion coefficient, least-squares slope of the MSD against time / {2 * desc.dimension}")
    return Result(quantity=name, value=mean, unit=unit, uncertainty=err, job=JOB_ID, log="log.lammps",
                  method=f"average of {how} (thermo {column}) over {where}, {series.size} samples; standard error "
                         "by block averaging")


def _viscosity(block: dict[str, np.ndarray], desc: SimulationDescription, where: str) -> Result:
    if desc.green_kubo is None or any(c not in block for c in GK_COLUMNS):
        raise ReadError("no Green-Kubo columns in the thermo output")
    xy, xx = (float(block[c][-1]) for c in GK_COLUMNS)
    gk = desc.green_kubo
    return Result(quantity=VISCOSITY, value=0.5 * (xy + xx), unit="reduced", uncertainty=abs(xy - xx) / 2,
                  job=JOB_ID, log="log.lammps",
                  method=f"Green-Kubo: running average over {where} of the pxy and traceless pxx stress "
                         f"autocorrelations (sampled every {gk.sample_every} steps, {gk.correlation_length} lags), "
                         f"integrated with k_B T = the stage's mean temperature; eta_xy = {xy:.5g}, "
                         f"eta_xx = {xx:.5g}, their mean; ± is half their difference (one trajectory)")


def _structure(wanted: list[str], job_dir: Path, block: dict[str, np.ndarray], desc: SimulationDescription,
               units: dict[str, str], where: str) -> list[Result]:
    path = job_dir / RDF_FILE
    if not path.is_file():
        raise ReadError(f"no {RDF_FILE} in {job_dir}")
    rows = [line.split() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]
    table = np.array([[float(x) for x in r[1:3]] for r in rows if len(r) == 4])
    if table.size == 0:
        raise ReadError(f"{RDF_FILE} holds no g(r) rows")
    nbins = int(rows[0][1]) if len(rows[0]) == 2 else None
    if nbins is None or table.shape[0] % nbins:
        raise ReadError(f"cannot read the g(r) blocks of {path}")
    snaps = table.reshape(-1, nbins, 2)
    r, g = snaps[0, :, 0], snaps[:, :, 1].mean(axis=0)
    volume = float(np.mean(block["Volume"]))  # LAMMPS reports the area of a 2D box as its volume
    # a molecular liquid's g(r) is the water O-O pair's (tools.lammps.described_molecular.rdf_pair)
    centres = desc.molecular.count_of("water") if desc.molecular else float(np.mean(block["Atoms"]))
    rho = centres / volume
    peak, minimum, cn = rdf_peak_and_cn(r, g, rho, desc.dimension)
    method = (f"{'water O-O ' if desc.molecular else ''}g(r) averaged over {snaps.shape[0]} snapshots of {where}; "
              f"first minimum at r = {minimum:.3f} (simagent.materials.rdf: smoothed g, parabola below the bin width)")
    cn_se, blocks = None, RDF_BLOCKS
    if snaps.shape[0] >= 2 * blocks:  # the same analysis on consecutive blocks of snapshots: its standard error
        size = snaps.shape[0] // blocks
        per_block = [rdf_peak_and_cn(r, snaps[b * size:(b + 1) * size, :, 1].mean(axis=0), rho, desc.dimension)[2]
                     for b in range(blocks)]
        cn_se = float(np.std(per_block, ddof=1) / np.sqrt(blocks))
    out = []
    if "coordination_number" in wanted:
        error = f"; ± from {blocks} blocks of snapshots" if cn_se is not None else ""
        out.append(Result(quantity="coordination_number", value=cn, unit="", uncertainty=cn_se, job=JOB_ID,
                          data_file=RDF_FILE, method=f"neighbours within the first minimum (rho g(r) integrated over "
                                                     f"the bins' shell volumes); {method}{error}"))
    if "rdf" in wanted:
        out.append(Result(quantity="rdf", label="first_peak", value=peak, unit=units["length"], job=JOB_ID,
                          data_file=RDF_FILE, method=f"position of the first g(r) maximum; {method}"))
    return out
