"""`simagent solve`: an MDGym-format task file in, final_answer.json + inputs/ + report.md out.

An MDGym task (fields id, problem_description, level, metrics, ground_truth, time_limit, engine)
is solved through the same graph as `simagent ask` (Session, inputs approved automatically):

* the metric names decide what is computed: each name is read into a TaskSpec property, the time
  point (average, last step, step N) and the unit (from the name, else from the description);
* structure and potential files supplied under DATA_ROOT/{LAMMPS,GROMACS}/{structures,potentials}/ID/
  are copied into every job folder before the engine starts (LAMMPS reads a file from its working
  folder before $LAMMPS_POTENTIALS, so a supplied potential is used by name);
* a LAMMPS parameter file the description names that is neither supplied nor shipped, but that an
  installed OpenKIM item embeds (Debian's openkim-models; tools.lammps.kim_files), is extracted
  with its SHA-1 checked into WORKDIR/provided/ and used exactly like a supplied file; report.md
  names its KIM item, SHA-1 and published source;
* the time budget is the published harness's (300 s + time_limit; 900 s when time_limit is null) and
  is the jobs' time limit; a job is never started, or given more time, past the budget, and a metric
  whose job ran out of time is left out;
* the default backend is the hybrid (rules first, the local model where they leave something open);
  the model is not asked what the rules read completely (a described run with no gap), and all its
  calls together get at most LLM_BUDGET_SHARE of the budget: after that the rules' reading stands
  and report.md says the model was not asked or was cut short;
* each engine job runs on the cores that are idle when its inputs are rendered (Settings.job_cores,
  SIMAGENT_JOB_CORES: a number overrides; report.md says how many ranks/threads a job used);
* final_answer.json holds exactly the metric names of the task (spelling kept) with plain numbers,
  and only for metrics that were computed; report.md says what was run, the values with their
  uncertainties, the defaults applied and why a metric is missing. Exit code 0: all metrics, 1: not all.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from simagent.backends.allowance import TimeAllowance
from simagent.backends.base import DecisionBackend, ParameterOverrides, ProtocolInfo, ProtocolSelection, RepairAction
from simagent.backends.expert.protocol_text import complete_conditions, unplaced_run_lengths
from simagent.config import Settings, load_settings
from simagent.described.groups import region_called
from simagent.described.llm_fill import FillReport
from simagent.described.llm_fill import fill as fill_gaps
from simagent.described.mixture_reading import type_called
from simagent.described.model import SimulationDescription
from simagent.described.molecular import template_file_names
from simagent.described.reading import UNREAD, read_description
from simagent.described.structure import required_file, unstated_structure
from simagent.described.summary import executed_lines
from simagent.described.tube_water import budget_refusal
from simagent.engines import get_engine, supplying
from simagent.errors import RequestError, SimagentError
from simagent.executor import Executor, JobHandle, JobRecord, read_record, write_record
from simagent.models import (
    CUBIC_POISSON_LABEL,
    CUBIC_SHEAR_LABELS,
    Answer,
    Job,
    JobStatus,
    PropertyName,
    PropertyRequest,
    Result,
    Statistic,
    TaskSpec,
)
from simagent.units import convert, normalize_unit

# The published MDGym harness (github.com/M3RG-IITD/MDGYM, main.py, solve_single) stops the agent after
# `timeout = 300 + int(time_limit)` when the task's time_limit is not None, else after its --timeout
# default of 900 s; ../shared/mdgym/README.md says the same ("300 s plus the task's time limit").
BUDGET_OVERHEAD_S = 300.0
BUDGET_WITHOUT_LIMIT_S = 900.0
MIN_JOB_TIME_S = 1.0  # below this a job is not started: the budget is used up
# The language model's share of a task's budget (wall time of its start and its replies, all calls
# together). A quarter of the smallest budget (300 s) is 75 s: on 2 cores the 1.5B model reads a
# gap question in ~10-40 s when the machine is idle, and the rest stays the engines'.
LLM_BUDGET_SHARE = 0.25
FINAL_ANSWER = "final_answer.json"
REPORT = "report.md"
INPUTS = "inputs"
PROVIDED = "provided"  # published files extracted for the task (KIM items), copied into every job folder
DESCRIBED = "lammps/described"  # the protocol that runs a complete description literally
DATA_KINDS = ("structures", "potentials")


class TaskFileError(RequestError):
    """The task file is missing, not JSON, or not an MDGym task (nothing is run or written)."""

    exit_code = 2


# ---------------------------------------------------------------------------------------------
# The task file
# ---------------------------------------------------------------------------------------------


class MDGymTask(BaseModel):
    """One MDGym task. Extra fields (e.g. 'reference' in simagent's own task files) are kept."""

    model_config = ConfigDict(extra="allow")

    id: str = Field(min_length=1, max_length=200)
    problem_description: str = Field(min_length=1)
    level: str | int | None = None
    metrics: list[str] = Field(min_length=1)
    ground_truth: dict[str, Any] = Field(default_factory=dict)
    time_limit: float | None = Field(default=None, ge=0, description="seconds; 0: only the 300 s allowance, "
                                     "null or absent: the harness's default of 900 s")
    engine: str

    @field_validator("id")
    @classmethod
    def _safe_id(cls, value: str) -> str:
        if not re.fullmatch(r"[\w.+-]+", value) or value in (".", ".."):
            raise ValueError("must be letters, digits, '_', '-', '.' or '+' (it names a data folder)")
        return value

    @field_validator("problem_description")
    @classmethod
    def _text(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("is empty")
        return value

    @field_validator("metrics")
    @classmethod
    def _metrics(cls, value: list[str]) -> list[str]:
        if any(not m.strip() for m in value):
            raise ValueError("contains an empty metric name")
        if len(set(value)) != len(value):
            raise ValueError("contains a metric name twice")
        return value

    @field_validator("engine")
    @classmethod
    def _engine(cls, value: str) -> str:
        from simagent.engines import engine_names

        if value.strip().lower() not in engine_names():
            raise ValueError(f"{value!r} is not an engine simagent runs ({', '.join(engine_names())})")
        return value.strip().lower()

    @property
    def budget_s(self) -> float:
        """The harness's timeout: 300 s + int(time_limit), or 900 s without a time_limit."""
        return task_budget_s(self.time_limit)

    @property
    def budget_rule(self) -> str:
        """How budget_s follows from the time_limit, in words."""
        if self.time_limit is None:
            return "no time limit: the harness's default timeout"
        return f"300 s + the time limit of {self.time_limit:g} s"


def task_budget_s(time_limit: float | None) -> float:
    """The published harness's timeout in seconds (see BUDGET_OVERHEAD_S): it truncates time_limit."""
    return BUDGET_WITHOUT_LIMIT_S if time_limit is None else BUDGET_OVERHEAD_S + int(time_limit)


def load_task(path: Path) -> MDGymTask:
    """The validated task, or a TaskFileError that says what is wrong with the file."""
    path = Path(path)
    if not path.is_file():
        raise TaskFileError(f"task file {path} does not exist")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise TaskFileError(f"task file {path} is not valid JSON: {err}") from None
    if not isinstance(raw, dict):
        raise TaskFileError(f"task file {path} must hold one JSON object (an MDGym task), not {type(raw).__name__}")
    try:
        return MDGymTask.model_validate(raw)
    except ValidationError as err:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'task'}: {e['msg']}" for e in err.errors())
        raise TaskFileError(f"task file {path} is not an MDGym task: {problems}") from None


# ---------------------------------------------------------------------------------------------
# Metric names -> properties, time points and units
# ---------------------------------------------------------------------------------------------


@dataclass
class MetricTarget:
    """What one metric name asks for. `property` None: the name was not understood (`reason`)."""

    metric: str
    property: PropertyName | None = None
    unit: str | None = None
    unit_source: str = ""
    at: Statistic = "average"
    step: int | None = None
    label: str | None = None  # which of the property's numbers (Result.label): 'C11', 'C44', 'first_peak'
    group: str | None = None  # the atoms it is over (Result.group): 'type2', a described group; None: all
    variable: str | None = None  # the engine variable the description names for it: '(v_dhug)'
    stated_unit: str = ""  # the unit words written after that variable: '(v_dhug) in eV/atom' -> 'eV/atom'
    reason: str = ""
    note: str = ""  # how the reported unit differs from the one the text gives (report.md)

    def request(self) -> PropertyRequest:
        asked = self.property and (self.property.endswith("_per_molecule") or self.property in ("atom_count",
                                                                                                  "molecule_count"))
        label = self.label if asked else None
        return PropertyRequest(name=self.property, at=self.at, step=self.step, label=label, group=self.group)


MOLECULE_COUNT = re.compile(r"\b(?:number|count) of (?:the )?(?:([a-z][a-z0-9]*) )?molecules\b"
                            r"(?! ?(?:per|/|in (?:a|each|every|one|unit)|density))|"
                            r"\b([a-z][a-z0-9]*) molecule (?:count|number)\b")
# Metric-name words -> property. Checked in order on the lower-case name with '_' and '-' as spaces;
# the first match wins, so specific phrases come before general ones.
METRIC_PROPERTIES: list[tuple[str, str]] = [
    # a spin lattice's compute spin values (tools.lammps.described_spin)
    (r"magnetic energy|spin energy|\be ?mag\b", "magnetic_energy"),
    (r"spin temperature|magnetic temperature|\bt ?mag\b", "spin_temperature"),
    (r"magneti[sz]ation|magnetic moment|\bmag ?norm\b", "magnetization"),
    # fix msst's four values, by their words or the names of LAMMPS examples/msst's variables (v_dhug ...)
    (r"hugoniot (?:distance|departure|deviation|offset|error)|(?:departure|deviation|distance) from (?:the )?hugoniot|"
     r"\bd ?hug(?:oniot)?\b|\bf msst ?\[ ?1 ?\]", "hugoniot_departure"),
    (r"rayleigh(?: line)? (?:distance|departure|deviation|offset|error)|(?:departure|deviation|distance) from (?:the )?"
     r"rayleigh|\bd ?ray(?:leigh)?\b|\bf msst ?\[ ?2 ?\]", "rayleigh_departure"),
    (r"lagrangian (?:speed|velocity)|\blgr ?vel\b|\bf msst ?\[ ?3 ?\]", "lagrangian_speed"),
    (r"lagrangian (?:position|distance|coordinate)|\blgr ?pos\b|\bf msst ?\[ ?4 ?\]", "lagrangian_position"),
    (r"rotation(?:al)? angle|angle of (?:the )?(?:drum(?:'s)? )?rotation|drum(?:'s)? angle|\bv ?theta\b",
     "rotation_angle"),
    (r"hydrogen bonds?|\bh ?bonds?\b|\bhbonds?\b", "hydrogen_bond_count"),
    # LAMMPS names the pair style's Coulomb term (thermo ecoul) its Coulombic energy and prints the k-space part
    # (elong) apart; the electrostatic energy, or a Coulomb energy said to include the long-range part, is both
    (r"electrostatic energy|\becoul ?\+ ?elong\b|coulomb\w* energy (?:including|incl|with|plus|and) (?:the |its )?"
     r"(?:long range|k ?space|ewald|pppm|reciprocal)", "electrostatic_energy_per_atom"),
    (r"coulomb\w* energy|\becoul\b", "coulomb_energy_per_atom"),
    (r"drag|force on (?:the )?obstacle|obstacle force", "drag_force"),
    (r"\bforce (?:on (?:the )?walls? )?(?:in|along) (?:the )?[xyz](?: direction| axis)?\b|\bforce ?[xyz]\b|"
     r"\bf ?[xyz]\b|\b[xyz][- ]?(?:direction |component (?:of (?:the )?)?)?force\b|\bwall force", "wall_force"),
    (r"shear stress", "shear_stress"),
    (r"\b(?:partial |atomic |net )?charges?\b", "atomic_charge"),
    # how many molecules of one kind the box holds ('number of water molecules', 'water molecule count'); a number
    # per volume or per area is a density, not a count
    (MOLECULE_COUNT.pattern, "molecule_count"),
    (r"\bnumber of (?:the )?(?:(?:type ?\d+|(?!neighbou?r|nearest)[a-z]+) )?(?:atoms|particles|beads)\b|"
     r"\b(?:atom|particle) (?:count|number)\b|"
     r"\bcount of (?:the )?(?:(?:type ?\d+|[a-z]+) )?(?:atoms|particles|beads)\b", "atom_count"),
    (r"yield (?:stress|strength|point)", "yield_stress"),
    (r"ultimate|tensile strength|peak (?:tensile )?stress|maximum (?:tensile )?stress", "ultimate_stress"),
    (r"tensile stress", "tensile_stress"),
    (r"friction coefficient|coefficient of (?:kinetic |sliding )?friction", "friction_coefficient"),
    (r"diffusi|\bd ?self\b|^d(?: |$)", "self_diffusion_coefficient"),
    (r"\bmsd\b|mean (?:squared?|sq) (?:displacement|deviation)", "mean_squared_displacement"),
    (r"coordination|\bcn\b|number of (?:nearest )?neighbou?rs|neighbou?r count", "coordination_number"),
    (r"\brdf\b|g ?\( ?r ?\)|\bgr\b|radial distribution|pair (?:distribution|correlation)|first peak", "rdf"),
    (r"lattice (?:constant|parameter|spacing)|\ba_?0\b|\balat\b|\blattice\b", "lattice_constant"),
    (r"cohesive|\be_?coh\b|binding energy", "cohesive_energy"),
    (r"vacancy", "vacancy_formation_energy"),
    (r"interstitial", "interstitial_formation_energy"),
    (r"generali[sz]ed stacking|\bgsfe?\b", "generalized_stacking_fault_energy"),
    (r"stacking fault|\bsfe\b", "stacking_fault_energy"),
    (r"surface tension|interfacial tension", "surface_tension"),
    (r"surface energy", "surface_energy"),
    (r"bulk modulus|\bb_?0\b", "bulk_modulus"),
    (r"shear modulus", "shear_modulus"),
    (r"young", "youngs_modulus"),
    (r"poisson", "poisson_ratio"),
    (r"\bc ?(?:11|12|13|33|44|66)\b|elastic constant", "elastic_constants"),
    (r"thermal expansion|\bcte\b", "thermal_expansion_coefficient"),
    (r"viscosity", "shear_viscosity"),
    (r"thermal conductivity", "thermal_conductivity"),
    (r"largest cavity|\blcd\b|\bdi\b", "largest_cavity_diameter"),
    (r"pore limiting|\bpld\b|\bdf\b", "pore_limiting_diameter"),
    (r"largest free sphere|\blfs\b|\bdif\b", "largest_free_sphere"),
    (r"non ?accessible surface|\bnasa\b", "non_accessible_surface_area"),
    (r"accessible surface|\basa\b|surface area", "accessible_surface_area"),
    (r"void fraction|porosity|\bvf\b", "void_fraction"),
    (r"henry", "henry_coefficient"),
    (r"heat of adsorption|isosteric|\bqst\b", "heat_of_adsorption"),
    (r"selectivity", "selectivity"),
    (r"uptake|loading|adsorbed amount|amount adsorbed", "uptake"),
    (r"radius of gyration|\br_?g\b|\br_?g ?\^? ?2\b", "radius_of_gyration"),
    (r"end to end", "end_to_end_distance"),
    (r"minimi[sz]ed energy|energy after minimi", "minimized_energy"),
    (r"potential energy|\bpe\b|\bepot\b|\bu ?/ ?n\b|\bu\b|configurational energy", "potential_energy_per_atom"),
    (r"rotational (?:kinetic energy|energy|ke)\b|\berot\b", "rotational_energy_per_atom"),
    (r"kinetic energy|\bke\b|\bekin\b", "kinetic_energy_per_atom"),
    (r"total energy|\betot(?:al)?\b", "total_energy_per_atom"),
    (r"\benergy\b", "potential_energy_per_atom"),  # as the reader: an unqualified MD energy is potential
    (r"pressure|\bpress\b|\bp\b", "pressure"),
    (r"temperature|\btemp\b|\bt\b", "temperature"),
    (r"density|\brho\b", "density"),
    (r"volume|\bvol\b", "volume"),
]
# Unit words in a metric name or after "in" in the description -> unit symbol (simagent.units).
UNIT_HINTS: list[tuple[str, str]] = [
    (r"μ ?_?b\b|\bmu ?_?b\b|\bbohr magnetons?\b", "muB"),
    (r"cm ?\^? ?2 ?(?:/|per)? ?s(?:ec)?\b|cm2s\b", "cm^2/s"),
    (r"(?:angstrom|ang|å) ?\^? ?2 ?(?:/|per)? ?ps\b|a2 ?/ ?ps\b", "angstrom^2/ps"),
    (r"nm ?\^? ?2 ?(?:/|per)? ?ns\b", "nm^2/ns"),
    (r"nm ?\^? ?2 ?(?:/|per)? ?ps\b", "nm^2/ps"),
    (r"\bm ?\^? ?2 ?(?:/|per)? ?s(?:ec)?\b", "m^2/s"),
    (r"\bg ?(?:/|per)? ?cm ?\^? ?3|\bg ?/ ?cc\b|\bg cc\b|\bg/ml\b", "g/cm^3"),
    (r"\bkg ?(?:/|per)? ?m ?\^? ?3", "kg/m^3"),
    (r"\bmol ?(?:/|per) ?kg ?(?:/|per) ?pa\b", "mol/kg/Pa"),
    (r"\bmol ?(?:/|per) ?kg ?(?:/|per) ?bar\b", "mol/kg/bar"),
    (r"\bmmol ?(?:/|per) ?g ?(?:/|per) ?bar\b", "mmol/g/bar"),
    (r"\bmolec(?:ule)?s? ?(?:/|per) ?(?:unit ?cell|uc)\b|\bper unit cell\b", "molecules/uc"),
    (r"\bmmol ?(?:/|per) ?g\b(?! ?(?:/|per) ?bar)", "mmol/g"),
    (r"\bmol ?(?:/|per) ?kg\b", "mol/kg"),
    (r"\bcm ?\^? ?3 ?\(? ?stp ?\)? ?(?:/|per) ?g\b", "cm3(STP)/g"),
    (r"\bm ?\^? ?2 ?(?:/|per)? ?g\b", "m^2/g"),
    (r"\bm ?\^? ?2 ?(?:/|per)? ?cm ?\^? ?3", "m^2/cm^3"),
    (r"\bmn ?(?:/|per) ?m\b|milli ?newtons? ?(?:/|per) ?met(?:er|re)s?\b", "mN/m"),
    (r"\bdyn(?:es)? ?(?:/|per) ?cm\b", "dyn/cm"),
    (r"\bkj ?(?:/|per)? ?mol", "kJ/mol"),
    (r"\bkcal ?(?:/|per)? ?mol", "kcal/mol"),
    (r"\bev ?(?:/|per) ?(?:angstrom|ang|å|a) ?\^? ?(?:3|³)", "eV/angstrom^3"),
    (r"\bmev\b", "meV"),
    (r"\bev\b", "eV"),
    (r"\bgpa\b", "GPa"),
    (r"\bmpa\b", "MPa"),
    (r"\bkbar\b", "kbar"),
    (r"\bbar\b", "bar"),
    (r"\batm\b", "atm"),
    (r"\bpa\b", "Pa"),
    (r"(?:angstroms?|ang|å|\ba) ?(?:/|per) ?ps\b", "angstrom/ps"),
    (r"(?:angstroms?|ang|å|\ba) ?(?:/|per) ?fs\b", "angstrom/fs"),
    (r"\bkm ?(?:/|per) ?s\b", "km/s"),
    (r"\bm ?(?:/|per) ?s\b", "m/s"),
    (r"\bangstroms?\b|\bang\b|\bå\b|\(a\)", "angstrom"),
    (r"\bnm\b", "nm"),
    (r"°c|\bdeg ?c\b|\bcelsius\b", "degC"),
    (r"\bkelvin\b|\bk\b|\(k\)", "K"),
    (r"\breduced\b|\blj units?\b|\blj\b|\bdimensionless\b|\bunitless\b|\bsigma units\b", "reduced"),
]
# The unit a property's number comes in when nothing says otherwise (simagent's protocol units).
DEFAULT_UNITS: dict[str, str] = {
    "temperature": "K", "pressure": "bar", "density": "g/cm^3", "volume": "angstrom^3",
    "potential_energy_per_atom": "eV/atom", "kinetic_energy_per_atom": "eV/atom",
    "total_energy_per_atom": "eV/atom", "cohesive_energy": "eV/atom", "lattice_constant": "angstrom",
    "rdf": "angstrom", "self_diffusion_coefficient": "cm^2/s",
}  # fmt: skip
COULOMB_ENERGIES = {"coulomb_energy_per_atom", "electrostatic_energy_per_atom"}
ENERGY_PER_ATOM = {"potential_energy_per_atom", "kinetic_energy_per_atom", "total_energy_per_atom",
                   "rotational_energy_per_atom"} | COULOMB_ENERGIES
# An energy name that does not say per atom, outside LJ units, asks for the system's total, as LAMMPS
# thermo prints it in real and metal units (in LJ units thermo prints it per atom: the per-atom value).
# Only a described run (the task's own system) reports it: elsewhere the system size is simagent's choice.
TOTAL = "total"
TOTAL_MISSING = ("the name asks for the total over the system (not per atom), which is measured only when the task's "
                 "own described system is run")
# Parts of the energy a run does not report apart: a name asking for one is not the potential energy.
ENERGY_PART = re.compile(r"\b(?:magnetic|spin|exchange|zeeman|anisotropy|coulomb\w*|electrostatic|long range|kspace|"
                         r"van der waals|vdw|dispersion|bond|angle|dihedral|improper|h ?bond|hydrogen bond)"
                         r"(?= (?:\w+ )?energy)")

# 'long-range Coulomb energy', 'k-space coulombic energy': the part LAMMPS prints as elong, asked for alone
_COULOMB_PART = re.compile(r"\b(?:long range|k ?space|ewald|pppm|reciprocal(?: space)?) (?:part of (?:the )?)?"
                           r"coulomb\w* energy")


def _words(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[_\-]+", " ", text.lower())).strip()


def unit_in(text: str) -> str | None:
    """The first unit the text names (see UNIT_HINTS), or None."""
    for pattern, unit in UNIT_HINTS:
        if re.search(pattern, text):
            return unit
    return None


def _description_unit(prop: str, description: str) -> str | None:
    """'... the diffusion coefficient in cm^2/s ...': a unit after 'in' in a sentence that names
    the property."""
    low = description.lower()
    names = [p for p, name in METRIC_PROPERTIES if name == prop]
    for sentence in re.split(r"(?<=[.;!?])\s+", low):
        for pattern in names:
            for hit in re.finditer(pattern, _words(sentence)):
                tail = _words(sentence)[hit.end():hit.end() + 80]
                # whole words only: 'in a system of mixed pa|rticles' cut at 20 characters is no pascal
                match = re.search(r"\b(?:in|in units of|units of|expressed in|reported in)\s+([^,;]{1,20})(?!\w)",
                                  tail) or \
                    re.match(r"[\w ]{0,30}?([(\[][^)\]]{1,20}[)\]])", tail)
                if match and (unit := unit_in(match.group(1))):
                    return unit
    return None


# a text that has LAMMPS print its energies divided by the atom count (thermo_modify norm yes, the default of
# lj units only): an energy it names without 'per ...' is the per-atom one it prints
NORMALISED_THERMO = re.compile(
    r"\bnorm(?:ali[sz]ation)? (?:yes|on|true)\b"
    r"|\bnormali[sz]ed (?:per|by the (?:total )?(?:number|count) of|by the) (?:atoms?|particles?|atom count)\b"
    r"|\b(?:thermo|thermodynamic) (?:output|quantities|energies) (?:are |is )?(?:printed |reported )?per atom\b")


def read_metric(metric: str, description: str = "", reduced: bool = False,
                elastic_example: bool = False) -> MetricTarget:
    """One metric name read into a target: property, label, time point, unit. `elastic_example`:
    the task follows LAMMPS examples/ELASTIC, whose cubic Poisson ratio is C12/(C11 + C12)."""
    words = _words(metric)
    target = MetricTarget(metric=metric)
    for pattern, prop in METRIC_PROPERTIES:
        if re.search(pattern, words):
            target.property = prop  # type: ignore[assignment]
            break
    if target.property is None:
        target.reason = f"the metric name {metric!r} names no property simagent computes"
        return target
    if target.property == "rdf":
        target.label = "first_peak"
        if re.search(r"height|value|max(?:imum)? of g", words):
            target.property, target.reason = None, f"{metric!r}: the height of g(r) is not computed (its position is)"
            return target
    _label(target, words, elastic_example)
    if typed := re.search(r"\btype ?(\d+)\b", words):  # 'per type 2 atom', 'on atom type 2'
        target.group = f"type{typed.group(1)}"
    if target.property == "molecule_count":  # which molecules: 'water', 'co2'; no kind named: not counted
        hit = MOLECULE_COUNT.search(words)
        kind = next((g for g in hit.groups() if g), None) if hit else None
        if kind is None or kind in _NOT_KINDS:
            target.property, target.reason = None, (
                f"{metric!r} counts molecules without naming which kind (water, CO2, ...)")
            return target
        target.label = kind
    if target.property == "atom_count" and (where := _REGION_WORD.search(words)):
        target.label = where.group(1)  # a region word, resolved against the description's regions
    step = re.search(r"\b(?:at )?(?:time ?)?step (\d+)\b", words)
    if step:
        target.at, target.step = "step", int(step.group(1))
    elif re.search(r"\b(?:final|last|end)\b", words):
        target.at = "last_step"
    unit = unit_in(words)
    if unit:
        target.unit, target.unit_source = unit, "metric name"
    elif (unit := _description_unit(target.property, description)) is not None:
        target.unit, target.unit_source = unit, "description"
    target.variable, target.stated_unit = _named_variable(words, description)
    if target.property == "radius_of_gyration":
        _gyration_component(target, words, description.lower())
    if target.property in COULOMB_ENERGIES and (part := _COULOMB_PART.search(words)):
        target.property, target.reason = None, (
            f"{metric!r} names the long-range (k-space) part of the Coulomb energy alone ({part.group(0)}), which "
            "simagent does not report apart (it reports LAMMPS's Coulombic energy ecoul, or ecoul + elong)")
        return target
    if target.property in ENERGY_PER_ATOM - COULOMB_ENERGIES and (part := ENERGY_PART.search(words)):
        target.property, target.reason = None, (
            f"{metric!r} names a part of the energy ({part.group(0)}) that simagent does not separate")
        return target
    kind = re.search(r"\bper (?:one )?(\w+) molecules?\b|\bper molecules? of (\w+)\b|\bper (water)$", words)
    if target.property in ("potential_energy_per_atom", "total_energy_per_atom") and kind:
        target.property = target.property.replace("_atom", "_molecule")  # type: ignore[assignment]
        target.label = next(g for g in kind.groups() if g)  # which molecules: 'water', 'co2'
        return target
    if target.property in ENERGY_PER_ATOM and not reduced:
        per_atom = re.search(r"per (?:atom|particle|molecule|sphere)|/ ?atom|\bper\b|\bu ?/ ?n\b|\beach "
                             r"(?:atom|particle|sphere)\b", words) or re.search(
            r"per (?:atom|particle)", _words(description)) or NORMALISED_THERMO.search(_words(description))
        if not per_atom:  # LAMMPS thermo prints extensive energies in real and metal units
            target.label = TOTAL
    return target


# the squared radius of gyration and one component of its tensor: 'Rg^2_yy', 'squared Rg (xx)'
_SQUARED_RG = re.compile(r"(?:squares? (?:of )?(?:the )?radius of gyration|radius of gyration squared|squared radius "
                         r"of gyration|\br_?g ?\^? ?2|\br_?g ?squared)")
_COMPONENT = re.compile(r"\b(xx|yy|zz|xy|xz|yz)\b")


def _named_variable(words: str, description: str) -> tuple[str | None, str]:
    """The engine variable the description writes after the metric's name, in any case and separators
    and with or without a leading 'average', and the unit words after it: 'Rayleigh_line_distance (v_dray)
    in eV/Å³,' -> ('v_dray', 'eV/Å³')."""
    core = re.sub(r"^(?:average|mean|avg|time averaged) ", "", words)
    name = r"[\s_-]+".join(re.escape(w) for w in core.split())
    hit = re.search(rf"(?<![a-z0-9]){name}\s*\(\s*([vfc]_[\w\[\]]+)\s*\)(?:\s+in\s+([^\s,;]+?)[,;.]?(?=\s|$))?",
                    description, flags=re.IGNORECASE)
    return (hit.group(1).lower(), hit.group(2) or "") if hit else (None, "")


def _gyration_component(target: MetricTarget, words: str, description: str) -> None:
    """A component of the squared radius-of-gyration tensor, named in the metric or, for a metric
    that names only the radius of gyration, in the description's words about it ('the average of
    Rg^2_yy, the yy component'): label 'squared_yy', in the square of the stated length unit."""
    for text in (words, description):
        squared = _SQUARED_RG.search(text)
        component = _COMPONENT.search(text[squared.end():squared.end() + 80]) if squared else None
        if component is None:
            continue
        target.label = f"squared_{component.group(1)}"
        if target.unit in ("angstrom", "nm"):  # the squared length's unit; the text names the length's
            target.unit, target.unit_source = f"{target.unit}^2", target.unit_source + " (squared: Rg^2 is an area)"
        return


def _label(target: MetricTarget, words: str, elastic_example: bool) -> None:
    """Which of a property's numbers the name asks for: an elastic constant (C11), a numbered
    cubic shear modulus (1: C44, 2: (C11-C12)/2, as examples/ELASTIC numbers them), the cubic
    Poisson ratio of that example."""
    if target.property == "elastic_constants":
        cij = re.search(r"\bc ?_?(\d\d)\b", words)
        target.label = f"C{cij.group(1)}" if cij else None
    elif target.property == "shear_modulus":
        number = re.search(r"shear modulus ?_?(\d)\b", words)
        if number:
            n = int(number.group(1))
            if not 1 <= n <= len(CUBIC_SHEAR_LABELS):
                target.property, target.reason = None, (
                    f"{target.metric!r}: a cubic crystal has shear moduli 1 (C44) and 2 ((C11-C12)/2) only")
                return
            target.label = CUBIC_SHEAR_LABELS[n - 1]
    elif target.property == "generalized_stacking_fault_energy":  # one point of the curve, not its mean
        point = re.search(r"\b(?:max(?:imum)?|peak|highest|unstable|usf)\b|\b(?:intrinsic|isf|min(?:imum)?|lowest)\b",
                          words)
        if point:
            target.label = "unstable" if re.match(r"max|peak|highest|unstable|usf", point.group(0)) else "intrinsic"
    elif target.property in ("magnetization", "magnetic_energy"):  # the total unless per atom or normalised
        if re.search(r"\bper (?:atom|spin|site|particle)\b|/ ?atom\b", words):
            target.label = "per_atom"
        elif target.property == "magnetization" and re.search(r"\bnormali[sz]ed\b|\breduced\b|\brelative\b", words):
            target.label = "normalized"
    elif target.property == "poisson_ratio" and elastic_example:
        target.label = CUBIC_POISSON_LABEL
    elif target.property == "poisson_ratio" and (pillar := re.search(r"\b(?:pillar|column|cylinder) ?_?(\d+)\b",
                                                                      words)):
        target.label = f"pillar{pillar.group(1)}"  # one of several compressed pillars (tools.lammps.described_pillars)
    elif target.property == "wall_force":  # along which axis: 'force in the x direction', 'y force'
        axis = re.search(r"\bforce (?:on (?:the )?walls? )?(?:in|along) (?:the )?([xyz])\b|\bforce ?([xyz])\b|"
                         r"\bf ?([xyz])\b|\b([xyz])[- ]?(?:direction |component )?", words)
        target.label = next((g for g in axis.groups() if g), None) if axis else None
    elif target.property == "drag_force":  # which obstacle: 'on obstacle 2', 'obstacle_2', the first if unnumbered
        number = re.search(r"(?:obstacle|indenter|sphere|cylinder|disc|disk) ?_?(\d+)\b|\b(\d+)$", words)
        target.label = f"obstacle{next(g for g in number.groups() if g) if number else 1}"


def follows_elastic_example(task: MDGymTask) -> bool:
    """Numbered shear moduli among the metrics, or the description naming the ELASTIC example:
    the task follows LAMMPS examples/ELASTIC and its conventions."""
    numbered = any(re.search(r"shear modulus ?_?\d\b", _words(m)) for m in task.metrics)
    example = re.search(r"\belastic(?:_t)? example|examples/elastic", task.problem_description.lower())
    return numbered or example is not None


def read_metrics(task: MDGymTask, reduced: bool) -> list[MetricTarget]:
    example = follows_elastic_example(task)
    return [read_metric(m, task.problem_description, reduced, example) for m in task.metrics]


# ---------------------------------------------------------------------------------------------
# Decision backend and executor wrappers for one task
# ---------------------------------------------------------------------------------------------


class TaskBackend(DecisionBackend):
    """The configured backend, with the task's metrics deciding the properties (and the
    temperature taken from a thermostat set point when the description gives it only there)."""

    def __init__(self, inner: DecisionBackend, targets_for: Callable[[TaskSpec], list[MetricTarget]],
                 known_files: list[str], engine: str | None = None) -> None:
        self.inner = inner
        self.engine = engine  # the task's engine: no other engine's protocol answers in its place
        self.targets_for = targets_for
        self.known_files = known_files
        self.spec: TaskSpec | None = None
        self.targets: list[MetricTarget] = []
        self.reader_properties: list[str] = []
        self.description: SimulationDescription | None = None
        self.fill = FillReport()  # what the LLM read into the description's gaps
        self.ran_described = False  # the protocol chosen is the description itself, run literally
        self.budget_s: float | None = None  # the task's wall-time budget (a run estimated past it is refused)
        self.cores: Callable[[], int] = lambda: 1  # the cores a job would get (Settings.cores_per_job)

    def _read_request(self, request: str, described: SimulationDescription | None) -> TaskSpec:
        """The inner backend's reading; the rules' alone (simagent.backends.hybrid.rules_task_spec) when
        an LLM's reading of the request has nothing to decide: a description the rules (and the LLM's
        quotes for its gaps) complete runs as written; one that prescribes what simagent does not render
        is refused (with nothing left open, whatever the reading: select_protocols), and a reading that
        let another protocol run it would be a substitute for what it prescribes."""
        rules = getattr(self.inner, "rules_task_spec", None)
        desc = self.description
        if rules is None or desc is None:
            return self.inner.task_spec(request)
        if described is not None:
            return rules(request)
        if desc.unsupported:
            unrendered = ", ".join(desc.unsupported)
            return rules(request, f"the description prescribes what simagent does not render ({unrendered})")
        return self.inner.task_spec(request)

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.inner.name  # a routing backend names who decided the last call

    def task_spec(self, request: str) -> TaskSpec:
        described = None
        if self.engine in (None, "lammps"):
            rules = read_description(request)
            self.description, self.fill = fill_gaps(rules, request, self.inner)
            described = self.description if self.description.renderable else None
        try:
            spec = complete_conditions(self._read_request(request, described))
        except SimagentError as err:
            if described is None and self.description is not None and self.description.unsupported:
                raise RequestError(not_rendered(self.description)) from err  # the real blocker, not the misreading
            if described is None:
                raise
            spec = TaskSpec(request=request)  # the description itself says what to run
        unplaced = unplaced_run_lengths(request, spec.controls)
        if unplaced:  # a stage the reading missed: running without it would not be the run described
            spec.missing.append("which stage the " + ", ".join(f"{n}-step" for n in unplaced)
                                + " run is (stated, not understood)")
        if described is None and self.description is not None:
            # a run whose dynamics the text prescribes in words not understood: no protocol's default
            # ensemble runs in its place (the question names the words)
            unread = [m for m in self.description.missing if m.startswith("the dynamics (ensemble)") and UNREAD in m]
            if unread:  # (in place of the request reader's question about the same words, which names no run)
                spec.missing = [m for m in spec.missing if not m.startswith("ensemble (")] + unread
        if described is not None and described.gcmc is not None and self.budget_s:  # a run that cannot finish
            too_long = budget_refusal(described, self.budget_s, self.cores())
            if too_long:
                raise RequestError(too_long)
        if described is not None:  # every stage is placed and the system is stated: run it as written
            spec.engine, spec.units_style, spec.missing = "lammps", described.units, []
            # the description's own pair style runs (an example's ReaxFF or COMB lines, AIREBO on a sheet): that
            # no protocol has the potential's family does not matter to a run rendered as written
            spec.unsupported = [u for u in spec.unsupported if u.capability != "potential"]
            spec.described = described.model_dump(mode="json")  # what was read is what runs (with the LLM's
            # quotes, an example's system)
        elif (spec.missing or spec.unsupported) and self.description is not None and self.description.unsupported:
            # the question (or the old reader's refusal) would not help: the run prescribed needs something
            # simagent does not render
            raise RequestError(not_rendered(self.description))
        self.reader_properties = [p.name for p in spec.properties]
        probes = {p.name: p.probe_radius for p in spec.properties if p.probe_radius is not None}
        self.targets = self.targets_for(spec)
        if self.description is not None:
            _group_targets(self.description, self.targets, request)
        _spin_targets(self.description, self.targets)
        requests: list[PropertyRequest] = []
        for target in self.targets:
            if target.property is not None:
                wanted = target.request()
                # what the description says of this property (a probe of its own) stays with it
                wanted.probe_radius = probes.get(wanted.name)
                if wanted not in requests:
                    requests.append(wanted)
        spec.properties = requests
        if requests and "property" in spec.missing:
            spec.missing.remove("property")
        _restore_file_case(spec, request, self.known_files)
        self.spec = spec
        return spec

    def select_protocols(self, spec: TaskSpec, candidates: list[ProtocolInfo]) -> ProtocolSelection:
        if self.engine is not None:
            from simagent.protocols import get_protocol

            own = [c for c in candidates if get_protocol(c.name).engine == self.engine]
            desc = self.description
            if not own and desc is not None and desc.unsupported:  # the real blocker, not the missing protocol
                raise RequestError(not_rendered(desc))
            if candidates and not own:
                others = ", ".join(c.name for c in candidates) or "none"
                wanted = ", ".join(p.name for p in spec.properties)
                raise RequestError(f"the task is a {self.engine.upper()} task and no {self.engine.upper()} protocol "
                                   f"computes {wanted} for this system (protocols of other engines: {others}); "
                                   "another engine is not run in its place")
            candidates = own
        desc = self.description
        if desc is not None and desc.renderable and any(c.name == DESCRIBED for c in candidates):
            properties = [p.name for p in spec.properties]
            if set(properties) <= set(next(c.properties for c in candidates if c.name == DESCRIBED)):
                self.ran_described = True
                return ProtocolSelection(items=[ProtocolSelection.Item(protocol=DESCRIBED, properties=properties)],
                                         rationale="the description prescribes the whole simulation: run literally")
        if desc is not None and desc.unsupported and not desc.missing:
            raise RequestError(not_rendered(desc))
        selection = self.inner.select_protocols(spec, candidates)
        self._check_literal(spec, selection)
        return selection

    def _check_literal(self, spec: TaskSpec, selection: ProtocolSelection) -> None:
        """What the description prescribes runs as stated, or nothing runs (no substitute): the
        dimension and the stated step counts must be the chosen protocol's, and a LAMMPS style it
        names ('fix controller', 'pair_style lj/cut/coul/long') must be in the inputs it writes."""
        from agents.planner import restrict
        from simagent.protocols import get_protocol

        named = prescribed_styles(spec.request) if self.engine in (None, "lammps") else []
        for item in selection.items:
            protocol = get_protocol(item.protocol)
            try:
                params, chosen = protocol.parameters(restrict(spec, item.properties))
            except SimagentError as err:
                desc = self.description
                if desc is not None and desc.unsupported:  # the real blocker, not the protocol's own refusal
                    raise RequestError(not_rendered(desc)) from err
                return  # the planner reports why the protocol cannot run
            if protocol.engine == "lammps" and not any("ensemble" in d.parameter for d in chosen):
                _check_ensemble(spec, protocol, params)  # (a protocol that chose its own says so in report.md)
            fields = params.model_dump()
            for name in LITERAL_CONTROLS:
                stated = getattr(spec.controls, name)
                if stated is None or (name not in fields and (name != "dimension" or stated == 3)):
                    continue  # step counts: protocols name their stages differently (nvt_steps, cycles)
                if fields.get(name, "absent") != stated:
                    would = "has no such setting" if name not in fields else f"would use {fields[name]}"
                    raise RequestError(f"the description states {name.replace('_', ' ')} = {stated}; "
                                       f"{protocol.name} {would}; simagent runs no substitute for a prescribed "
                                       "protocol")
            if not named or protocol.engine != "lammps":
                continue
            try:
                text = "\n".join(t for job in protocol.jobs(params) for t in job.inputs.values())
            except SimagentError:
                return
            lines = [ln.split("#", 1)[0].split() for ln in text.splitlines()]
            used = {(w[0], style) for w in lines if len(w) > 1 for style in w[1:]}
            absent = [f"{kind} {style}" for kind, style in named if (kind, style) not in used]
            if absent:
                raise RequestError(f"the description prescribes {', '.join(absent)}, which {protocol.name} does not "
                                   "run; simagent runs no substitute for a prescribed protocol")

    def parameter_overrides(self, feedback: str, protocol: str, current: dict, schema: dict) -> ParameterOverrides:
        return self.inner.parameter_overrides(feedback, protocol, current, schema)

    def repair(self, diagnosis: str, protocol: str, current: dict, schema: dict) -> RepairAction:
        return self.inner.repair(diagnosis, protocol, current, schema)

    def __getattr__(self, name: str) -> Any:  # anything else a backend offers (e.g. close)
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)


# 'per heavy particle', 'of the solvent beads': a kind of atom named by a word (resolved by the description)
_PER_ROLE = re.compile(r"\b(?:per|of|on|for|among) (?:the |each |one |a |an )?([a-z]+) (?:atoms?|particles?|beads?|"
                       r"spheres?)\b")
_NOT_KINDS = frozenset("all every the total system whole mobile average mean type".split())
_REGION_WORD = re.compile(r"\b(?:inside|in|within) (?:the )?(?:region )?([a-z][a-z0-9_]*)")
# properties measured over a group of atoms (tools/lammps/described_metrics.py)
GROUPED = ENERGY_PER_ATOM - {"rotational_energy_per_atom"} - COULOMB_ENERGIES | {"temperature", "atomic_charge",
                                                                                "atom_count"}


# 'the coordination number of type 2 atoms around type 1 atoms': a partial one, of one pair of types
_PAIR_STRUCTURE = re.compile(r"(?:coordination|radial distribution|g ?\( ?r ?\)|\brdf\b)[^.;]{0,60}?\btype ?(\d+)"
                             r"[^.;]{0,40}?\b(?:around|about|surrounding|relative to|near) (?:the )?(?:atoms? of |"
                             r"particles? of )?type ?(\d+)")


def _group_targets(desc: SimulationDescription, targets: list[MetricTarget], text: str = "") -> None:
    """Which atoms a metric is over: a type by number ('per type 2 atom', read with the name) or by the
    word the description calls it ('per big particle'); a region an atom count is taken in. A name
    asking for one kind of atom that the description does not let simagent resolve is named, never
    answered over all atoms."""
    several = desc.atom_types > 1 or len(desc.types) > 1
    for target in targets:
        if target.property is None:
            continue
        pair = _PAIR_STRUCTURE.search(_words(target.metric)) or _PAIR_STRUCTURE.search(text.lower())
        if target.property in ("coordination_number", "rdf") and several and pair:
            target.property, target.reason = None, (
                f"{target.metric!r} is the partial one of type {pair.group(1)} around type {pair.group(2)} ('"
                f"{pair.group(0)}'); simagent computes g(r) over all pairs of atoms, not per pair of types")
            continue
        words = _words(target.metric)
        role = _PER_ROLE.search(words)
        if target.group is None and role and role.group(1) not in _NOT_KINDS and not role.group(1).isdigit():
            index = type_called(desc, role.group(1))
            if index is not None and several:
                target.group = f"type{index}"
            elif several:
                target.property, target.reason = None, (
                    f"'{role.group(0)}' asks for one kind of atom of a mixture, and the description calls no atom "
                    f"type '{role.group(1)}'; simagent does not answer it over all atoms")
                continue
        if target.group is not None and target.group.startswith("type"):
            number = int(target.group.removeprefix("type"))
            if target.property not in GROUPED:
                target.property, target.reason = None, (
                    f"{target.metric!r} asks for {target.property} of type-{number} atoms only; simagent measures "
                    f"that per type for {', '.join(sorted(GROUPED))}")
                continue
            if number > max(desc.atom_types, len(desc.types)):
                target.property, target.reason = None, (
                    f"{target.metric!r} names atom type {number}; the description has {desc.atom_types}")
                continue
        if target.property == "atom_count" and target.label is not None:
            region = region_called(desc.layout, target.label)
            if region is None:
                target.property, target.reason = None, (
                    f"{target.metric!r} counts atoms in '{target.label}', a region the description does not "
                    "define (shape and size)")
                continue
            target.label = region


SPIN_PROPERTIES = ("magnetization", "magnetic_energy", "spin_temperature")  # compute spin's (described_spin)


def _spin_targets(desc: SimulationDescription | None, targets: list[MetricTarget]) -> None:
    """A magnetic metric is a spin lattice's (LAMMPS compute spin): without one that the description
    states and simagent renders, it is named, and the task's other metrics are still computed."""
    if desc is not None and desc.spin is not None:
        return
    why = not_rendered(desc) if desc is not None and desc.unsupported else (
        "the description states no spin lattice (spins on the atoms and their magnetic interactions)")
    for target in targets:
        if target.property in SPIN_PROPERTIES:
            target.property, target.reason = None, (
                f"{target.metric!r} is a property of a spin lattice (LAMMPS compute spin): {why}")


def not_rendered(desc: SimulationDescription) -> str:
    """Why a described run cannot be run: what it prescribes that simagent does not render (and what
    it does not state), the real blocker whatever question another reading would ask."""
    lacks = f" (it also does not state {', '.join(desc.missing)})" if desc.missing else ""
    # an engine example the text retells but departs from (simagent.described.example_fill): why it filled nothing
    retold = [o.evidence for k, o in desc.origin.items() if k.startswith("example.") and o.evidence.startswith(
        "not filled from")]
    return (f"the description prescribes {', '.join(desc.unsupported)}, which simagent does not render{lacks}; "
            + "".join(f"{why}; " for why in retold) + "simagent runs no substitute for a prescribed protocol")


# Controls a description states that the chosen protocol must run exactly as stated.
def _check_ensemble(spec: TaskSpec, protocol: Any, params: Any) -> None:
    """The ensemble the description states is the one the protocol's production runs (the last run of
    its jobs, read from the LAMMPS inputs it writes; NVE under a named thermostat counts as thermostatted),
    or nothing runs: a protocol with an ensemble of its own (lammps/thermal_expansion's NPT) is no
    substitute for a stated NVE."""
    from tools.lammps.handlers import ensemble_of, script

    ctl = spec.controls
    if ctl.ensemble is None:
        return
    stated = "nvt" if ctl.ensemble == "nve" and ctl.thermostat is not None else ctl.ensemble
    try:
        jobs = protocol.jobs(params)
    except SimagentError:
        return  # the planner reports why the protocol cannot run
    runs = {ensemble_of(last.fixes) for job in jobs if (last := script(job).last_dynamics()) is not None}
    runs.discard("unknown")
    if runs and stated not in runs:
        raise RequestError(f"the description states the {ctl.ensemble.upper()} ensemble"
                           f"{' with a ' + ctl.thermostat + ' thermostat' if ctl.thermostat else ''}; {protocol.name} "
                           f"runs {', '.join(sorted(e.upper() for e in runs))} in its production; simagent runs no "
                           "substitute for a prescribed ensemble")


LITERAL_CONTROLS = ("dimension", "equilibration_steps", "production_steps")
# Words that follow "fix"/"compute" in prose without naming a style ("use the fix command").
_NOT_STYLES = frozenset("""a an the to is in on of for with and or that this it its id ids group groups which was were
be are all each style styles command commands settings setting keyword keywords option options should must
will can may used using applied""".split())
_STYLE_KINDS = {"fix": "fix", "compute": "compute", "pair_style": "pair_style", "pair style": "pair_style",
                "atom_style": "atom_style", "atom style": "atom_style"}


def prescribed_styles(description: str) -> list[tuple[str, str]]:
    """(command, style) pairs a description names as LAMMPS commands: 'fix controller',
    'compute gyration', 'pair_style lj/cut'. Only styles this LAMMPS knows count (so 'Compute the
    average ...' and 'the fix command' name none); without LAMMPS, plain words are left out."""
    try:
        known = get_engine("lammps").installed_styles()
    except ImportError:
        known = {}
    kinds = {"fix": "fix", "compute": "compute", "pair_style": "pair", "atom_style": "atom"}
    found: list[tuple[str, str]] = []
    for match in re.finditer(r"\b(fix|compute|pair[_ ]style|atom[_ ]style)\s+([a-z][a-z0-9/_.-]*[a-z0-9])",
                             description.lower()):
        kind, style = _STYLE_KINDS[match.group(1)], match.group(2)
        styles = known.get(kinds[kind])
        if (style in styles if styles else style not in _NOT_STYLES) and (kind, style) not in found:
            found.append((kind, style))
    low = description.lower()
    # styles named in prose: 'the body atom style', 'the nve/body integrator', 'a hybrid/overlay pair style'
    for match in re.finditer(r"\b([a-z][a-z0-9_]*) atom[_ ]style\b", low):
        if match.group(1) in known.get("atom", ()) and ("atom_style", match.group(1)) not in found:
            found.append(("atom_style", match.group(1)))
    for token in re.findall(r"(?<![\w/.-])([a-z][a-z0-9_]*(?:/[a-z0-9_]+)+)(?![\w/-])", low):
        for kind, command in (("pair", "pair_style"), ("fix", "fix"), ("compute", "compute")):
            if token in known.get(kind, ()) and (command, token) not in found:
                found.append((command, token))
                break
    return found


def _restore_file_case(spec: TaskSpec, request: str, known_files: list[str]) -> None:
    """The reader lower-cases a named potential file ('Ni_u3.eam' -> 'ni_u3.eam'); give it back
    the spelling of the description, of a supplied file or of a shipped one."""
    pot = spec.potential
    if pot is None or not pot.file:
        return
    for name in known_files:
        if name.lower() == pot.file.lower():
            pot.file = name
            return
    match = re.search(re.escape(pot.file), request, flags=re.IGNORECASE)
    if match:
        pot.file = match.group(0)


@dataclass
class Submission:
    job: Job
    job_dir: Path
    time_limit_s: float


class BudgetExecutor(Executor):
    """Runs jobs through another executor within a deadline: each job's time limit is cut to the
    time left, a job is refused once the budget is used up, and supplied data files are copied
    into the job folder (never over a file the protocol wrote) before the engine starts. The
    inputs of every submitted job are copied to `inputs_dir/<job id>/`."""

    def __init__(self, inner: Executor, deadline: float, supplied: list[Path], inputs_dir: Path,
                 budget_s: float | None = None) -> None:
        self.inner = inner
        self.deadline = deadline
        self.budget_s = budget_s
        self.supplied = supplied
        self.inputs_dir = inputs_dir
        self.submissions: list[Submission] = []
        self.refused: set[str] = set()
        self._lock = threading.Lock()

    def remaining_s(self) -> float:
        return self.deadline - time.monotonic()

    def submit(self, job: Job, job_dir: Path, command: list[str], env: dict[str, str], cores: int = 1) -> JobHandle:
        for source in self.supplied:
            target = job_dir / source.name
            if not target.exists():
                shutil.copy2(source, target)
        self._keep_inputs(job, job_dir)
        left = self.remaining_s()
        if left < MIN_JOB_TIME_S:
            from simagent.executor import inputs_digest

            record = JobRecord(job=job.id, status=JobStatus.failed, inputs_sha256=inputs_digest(job), command=command,
                               timed_out=True, message="not started: the task's time budget is used up")
            write_record(job_dir, record)
            with self._lock:
                self.refused.add(job.id)
                self.submissions.append(Submission(job, job_dir, 0.0))
            return JobHandle(job.id, job_dir)
        limited = job.model_copy(update={"time_limit_s": min(job.time_limit_s, left)})
        with self._lock:
            self.refused.discard(job.id)
            self.submissions.append(Submission(limited, job_dir, limited.time_limit_s))
        return self.inner.submit(limited, job_dir, command, env, cores)

    def _keep_inputs(self, job: Job, job_dir: Path) -> None:
        folder = self.inputs_dir / job.id
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        names = [*job.inputs, *(n for names in job.stage_in.values() for n in names),
                 *(p.name for p in self.supplied), "job.json"]
        for name in dict.fromkeys(names):
            if (job_dir / name).is_file():
                shutil.copy2(job_dir / name, folder / name)

    def poll(self, handle: JobHandle) -> JobRecord:
        if handle.job_id in self.refused:
            record = read_record(handle.workdir)
            if record is not None:
                return record
        return self.inner.poll(handle)

    def cancel(self, handle: JobHandle) -> None:
        if handle.job_id not in self.refused:
            self.inner.cancel(handle)

    def shutdown(self) -> None:
        shutdown = getattr(self.inner, "shutdown", None)
        if shutdown:
            shutdown()


# ---------------------------------------------------------------------------------------------
# Solving
# ---------------------------------------------------------------------------------------------


@dataclass
class MetricOutcome:
    target: MetricTarget
    value: float | None = None
    result: Result | None = None
    reason: str = ""


@dataclass
class SolveOutcome:
    task: MDGymTask
    workdir: Path
    metrics: list[MetricOutcome]
    answer: Answer | None
    spec: TaskSpec | None
    supplied: list[Path] = field(default_factory=list)
    published: list[PublishedFile] = field(default_factory=list)
    elapsed_s: float = 0.0
    budget_s: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def final_answer(self) -> dict[str, float]:
        return {m.target.metric: m.value for m in self.metrics if m.value is not None}

    @property
    def not_computed(self) -> dict[str, str]:
        return {m.target.metric: m.reason for m in self.metrics if m.value is None}

    @property
    def exit_code(self) -> int:
        return 0 if not self.not_computed else 1

    def summary(self) -> dict[str, Any]:
        return {
            "task": self.task.id, "exit_code": self.exit_code, "final_answer": self.final_answer,
            "not_computed": self.not_computed, "workdir": str(self.workdir),
            "final_answer_file": str(self.workdir / FINAL_ANSWER), "report": str(self.workdir / REPORT),
            "elapsed_s": round(self.elapsed_s, 1), "budget_s": self.budget_s,
        }  # fmt: skip


def solve_settings(backend: str | None = None) -> Settings:
    """Settings for `solve`: the backend asked for (option, environment, config file); else the
    hybrid backend (rules first, the local model where they are unsure) when the local model is
    installed, the expert rules otherwise."""
    settings = load_settings(backend=backend)
    if settings.backend is None and settings.resolved_backend == "hybrid":  # Settings.local_model_available
        settings = settings.model_copy(update={"backend": "hybrid"})
    return settings


def supplied_files(data_root: Path | None, task: MDGymTask) -> list[Path]:
    """Files under DATA_ROOT/<ENGINE>/{structures,potentials}/<ID>/ (engine folder in any case)."""
    if data_root is None:
        return []
    root = Path(data_root)
    if not root.is_dir():
        raise RequestError(f"data root {root} is not a folder")
    found: list[Path] = []
    engines = [d for d in root.iterdir() if d.is_dir() and d.name.lower() in ("lammps", "gromacs")]
    for engine_dir in sorted(engines, key=lambda d: d.name.lower() != task.engine):
        for kind in DATA_KINDS:
            folder = engine_dir / kind / task.id
            if folder.is_dir():
                found += sorted(p for p in folder.iterdir() if p.is_file())
    names: dict[str, Path] = {}
    for path in found:
        names.setdefault(path.name, path)  # the task's own engine first
    return list(names.values())


def _shipped_potentials() -> list[str]:
    try:
        return get_engine("lammps").shipped_potentials()
    except (ImportError, OSError, ValueError):
        return []


def solve(
    task_path: Path,
    workdir: Path,
    data_root: Path | None = None,
    settings: Settings | None = None,
    budget_s: float | None = None,
    progress: Callable[[str, dict], None] | None = None,
) -> SolveOutcome:
    """Solve one MDGym task file into `workdir` (final_answer.json, inputs/, report.md, runs/).

    budget_s: the whole solve's wall-clock budget; None: the harness's (MDGymTask.budget_s).
    Raises TaskFileError (nothing written) when the task file is malformed."""
    from simagent.session import Session

    started = time.monotonic()
    task = load_task(task_path)
    budget = task.budget_s if budget_s is None else budget_s
    deadline = started + budget
    workdir = Path(workdir).resolve()
    supplied = supplied_files(data_root, task)
    workdir.mkdir(parents=True, exist_ok=True)
    for stale in (FINAL_ANSWER, REPORT):
        (workdir / stale).unlink(missing_ok=True)
    settings = settings or load_settings()
    left = max(MIN_JOB_TIME_S, budget - (time.monotonic() - started))
    # the description prescribes the run: gates report their findings, they do not lengthen it
    # one task at a time: its jobs use the idle cores unless job_cores is configured (config.idle_cores)
    settings = settings.model_copy(update={"workdir": workdir / "runs", "job_time_limit_s": left,
                                           "gate_extensions": False, "job_cores": settings.job_cores or "idle"})
    notes: list[str] = []
    known = [p.name for p in supplied] + _shipped_potentials()
    published = published_files(task, known, workdir / PROVIDED, notes)
    known += [f.path.name for f in published]
    provided = supplied + [f.path for f in published]  # what every job folder gets
    absent = missing_files(task, known, supplied)

    def targets_for(spec: TaskSpec) -> list[MetricTarget]:
        reduced = spec.units_style == "lj" or (spec.system is not None and spec.system.kind == "lj_fluid")
        return read_metrics(task, reduced)

    answer: Answer | None = None
    backend: TaskBackend | None = None
    executor: BudgetExecutor | None = None
    try:
        if absent:
            where = (f"{Path(data_root) / task.engine.upper() / '{structures,potentials}' / task.id}/"
                     if data_root else "no --data-root given")
            raise RequestError(f"input files the task needs are neither supplied ({where}) nor shipped with "
                               f"simagent or its engines{_kim_hint(task)}: {'; '.join(absent)}; nothing was run")
        with supplying(provided), Session(settings, auto_approve=True, progress=progress) as session:
            limit_llm = getattr(session.backend, "limit_llm", None)  # the hybrid's LLM (see the module doc)
            if callable(limit_llm):
                limit_llm(TimeAllowance(LLM_BUDGET_SHARE * budget, budget))
            backend = TaskBackend(session.backend, targets_for, known, task.engine)
            backend.budget_s, backend.cores = budget, lambda: settings.cores_per_job
            executor = BudgetExecutor(session.executor, deadline, provided, workdir / INPUTS, budget)
            session.backend = session.context.backend = backend
            session.executor = session.context.executor = executor
            outcome = session.ask(task.problem_description, thread_id=f"solve-{task.id}-{int(time.time())}")
            answer = outcome.answer
            if answer is None and outcome.interrupt:
                notes.append(f"the run stopped at an unexpected {outcome.interrupt.get('kind')} interrupt")
    except SimagentError as err:
        notes.append(f"the run failed: {err}")
    except Exception as err:  # noqa: BLE001 - a bug must not cost the report of what was done
        notes.append(f"internal error: {type(err).__name__}: {err}")
    elapsed = time.monotonic() - started
    if elapsed > budget:
        notes.append(f"the time budget of {budget:g} s was exceeded ({elapsed:.0f} s)")
    spec = backend.spec if backend else None
    targets = backend.targets if backend and backend.targets else read_metrics(task, False)
    metrics = collect(targets, answer, spec, executor, notes)
    result = SolveOutcome(task=task, workdir=workdir, metrics=metrics, answer=answer, spec=spec,
                          supplied=supplied, published=published, elapsed_s=elapsed, budget_s=budget, notes=notes)
    write_outputs(result, backend)
    return result


# Input files a description may name: potentials, force fields, structures, molecule templates.
NAMED_FILE = re.compile(
    r"(?<![\w/.-])ffield(?:\.[\w+-]+)+(?![\w-])|"  # ReaxFF/COMB force fields: ffield.reax.AuO, whole
    r"(?<![\w/.-])[\w+-]+(?:\.[\w+-]+)*\.(?:eam\.alloy|eam\.fs|eam|tersoff|sw|meam|airebo|rebo|reax|reaxff|ffield|adp|"
    r"nb3b|comb3?|bop|snapcoeff|snapparam|mliap|data|mol|pdb|gro|top|itp|xyz|cif)(?![\w-])", re.IGNORECASE)


@dataclass
class PublishedFile:
    """A published parameter file extracted for the task from an installed OpenKIM item."""

    path: Path
    sha1: str
    source: str  # "KIM item <id> (<package>); <citation>"


def named_files(task: MDGymTask) -> list[str]:
    """Input files the description names (potentials, force fields, structures), in order, once each."""
    return list(dict.fromkeys(m.group(0) for m in NAMED_FILE.finditer(task.problem_description)))


def published_files(task: MDGymTask, known: list[str], folder: Path, notes: list[str]) -> list[PublishedFile]:
    """Files the description names that are neither supplied nor shipped but embedded in an
    installed OpenKIM item (LAMMPS tasks): extracted into `folder`, each checked against the SHA-1
    its item publishes. A file that cannot be taken (an altered library, a name several items
    embed with different contents) stays missing, with the reason in `notes`."""
    if task.engine != "lammps":
        return []
    from tools.lammps import kim_files

    have = {name.lower() for name in known}
    wanted = [name for name in named_files(task) if name.lower() not in have]
    if not wanted or kim_files.kim_models_dir() is None:
        return []
    out = []
    for name in wanted:
        try:
            if kim_files.find(name) is None:
                continue
            done = kim_files.extract(name, folder)
        except RequestError as err:
            notes.append(f"{name} was not taken from OpenKIM: {err}")
            continue
        out.append(PublishedFile(path=done.path, sha1=done.file.sha1, source=done.provenance.line()))
    return out


def _kim_hint(task: MDGymTask) -> str:
    """Where else a published LAMMPS file was looked for (OpenKIM's installed items), or would have been
    when that collection is absent."""
    if task.engine != "lammps":
        return ""
    from tools.lammps import kim_files

    if kim_files.kim_models_dir() is not None:
        return " nor embedded in any installed OpenKIM item"
    return f" (nor in OpenKIM's models: {kim_files.INSTALL_HINT})"


def missing_files(task: MDGymTask, known: list[str], supplied: list[Path] | None = None) -> list[str]:
    """Input files the description names that are neither supplied nor shipped (case-insensitive),
    and files a supplied GROMACS topology #includes that are neither supplied nor in GROMACS's
    own library ('topol.top includes DMPC.itp'); with nothing supplied, a LAMMPS system the text
    names but does not build (simagent.described.structure: 'the initial atom positions of ...')."""
    have = {name.lower() for name in known}
    desc = read_description(task.problem_description) if task.engine == "lammps" else None
    if desc is not None and desc.example_system is not None:  # an installed example's files (data, force field)
        have |= {name.lower() for name in desc.example_system.files}
    written = {name.lower() for name in template_file_names(desc)} if desc is not None else set()
    given = {p.name.lower() for p in supplied or []}
    missing = [f"{name} (supplied, but simagent writes this molecule template from the model the text cites and does "
               "not read a supplied one)" for name in named_files(task) if name.lower() in written & given]
    have |= written - given  # molecule templates written from the cited model (simagent.described.molecular)
    missing += [name for name in named_files(task) if name.lower() not in have] + missing_includes(supplied or [])
    if not missing and not supplied and desc is not None:  # a structure the text names but does not build
        structure = required_file(task.problem_description, desc) or unstated_structure(task.problem_description, desc)
        missing = [structure] if structure else []
    return missing


def missing_includes(supplied: list[Path]) -> list[str]:
    """'<file> includes <name>' for each #include of a supplied .top/.itp found neither among the
    supplied files (by name or path below the task folder) nor in GROMACS's topology library."""
    library = None
    try:
        library = get_engine("gromacs").library_dir()
    except ImportError:
        pass
    names = {p.name for p in supplied}
    out = []
    for path in supplied:
        if path.suffix not in (".top", ".itp"):
            continue
        for line in path.read_text(errors="replace").splitlines():
            match = re.match(r"\s*#\s*include\s+[\"<]([^\">]+)[\">]", line)
            if not match:
                continue
            name = match.group(1)
            if (path.parent / name).is_file() or Path(name).name in names:
                continue
            if library is not None and (library / name).is_file():
                continue
            out.append(f"{path.name} includes {name}")
    return list(dict.fromkeys(out))


def collect(targets: list[MetricTarget], answer: Answer | None, spec: TaskSpec | None,
            executor: BudgetExecutor | None, notes: list[str] | None = None) -> list[MetricOutcome]:
    """Each metric's number from the answer, converted to its unit, or the reason it is missing."""
    results = list(answer.answers) if answer else []
    used: set[int] = set()
    outcomes = []
    for target in targets:
        outcome = MetricOutcome(target=target)
        outcomes.append(outcome)
        if target.property is None:  # a missing input file is the first blocker, whatever the name asks
            blocker = next((n for n in notes or [] if "neither supplied" in n), None)
            outcome.reason = f"{blocker} (also: {target.reason})" if blocker else target.reason
            continue
        match = _find_result(target, results, used)
        if match is None:
            outcome.reason = _why_missing(target, answer, spec, executor, notes or [])
            continue
        used.add(id(match))
        outcome.result = match
        value, problem = _in_unit(match, target)
        if target.variable and match.property in ENGINE_VARIABLES:
            value, problem = match.value, ""
            target.note = _engine_unit_note(target, match)
        if problem:
            outcome.reason = problem
        else:
            outcome.value = value
    return outcomes


# Properties that are one engine quantity (fix msst's values): when the description names the variable
# ('(v_dhug) in eV/atom'), the answer is that variable as the engine prints it; a different unit the text
# gives is reported next to it (converted where the two units share a dimension), never silently applied.
ENGINE_VARIABLES = {"hugoniot_departure", "rayleigh_departure", "lagrangian_speed", "lagrangian_position"}


def _engine_unit_note(target: MetricTarget, result: Result) -> str:
    if not target.unit or normalize_unit(target.unit) == normalize_unit(result.unit or ""):
        return ""
    try:
        other = f"; in {target.unit} it is {convert(result.value, result.unit or '', target.unit):.6g}"
    except SimagentError:
        other = f"; {result.unit} does not convert to {target.unit}"
    return (f"the text gives {target.stated_unit or target.unit} for {target.variable}, which LAMMPS prints in "
            f"{result.unit}: the value is {target.variable} as printed{other}")


def _find_result(target: MetricTarget, results: list[Result], used: set[int]) -> Result | None:
    """The result whose typed fields answer the target: property, label (case-insensitive) and
    time point; a not-yet-used one first (two metrics may share a number)."""
    def same_label(r: Result) -> bool:
        return (r.label or "").lower() == (target.label or "").lower()

    candidates = [r for r in results if r.property == target.property and same_label(r) and r.group == target.group
                  and r.statistic == target.at and (target.at != "step" or r.step == target.step)]
    fresh = [r for r in candidates if id(r) not in used]
    return fresh[0] if fresh else (candidates[0] if candidates else None)


def _in_unit(result: Result, target: MetricTarget) -> tuple[float | None, str]:
    """(value in the target's unit, problem). Reduced results stay reduced; real units convert."""
    have = (result.unit or "").replace("/atom", "").strip()
    if target.unit is None or have == "":  # no unit asked, or a pure number (coordination number)
        return result.value, ""
    want = target.unit.replace("/atom", "").strip()
    if have == "reduced" or want == "reduced":
        if have == want:
            return result.value, ""
        return None, f"the result is in {result.unit}, the metric asks for {target.unit}"
    if normalize_unit(have) in ("degC", "degF") or normalize_unit(want) in ("degC", "degF"):
        if normalize_unit(have) == normalize_unit(want):
            return result.value, ""
        kelvin = {"degC": result.value + 273.15}.get(normalize_unit(have), result.value)
        return ({"degC": kelvin - 273.15}.get(normalize_unit(want), kelvin)), ""
    try:
        return convert(result.value, have, want), ""
    except SimagentError:
        return None, f"cannot convert the result's unit {result.unit} to {target.unit}"


def _why_missing(target: MetricTarget, answer: Answer | None, spec: TaskSpec | None,
                 executor: BudgetExecutor | None, notes: list[str]) -> str:
    if answer is None:
        return notes[0] if notes else "the run produced no answer"
    if answer.status == "needs_clarification":
        return f"the description lacks information: {answer.question}"
    timed_out = []
    if executor is not None:
        budget = f" of {executor.budget_s:g} s" if executor.budget_s else ""
        for sub in executor.submissions:
            record = read_record(sub.job_dir)
            if record is None or not record.timed_out:
                continue
            if sub.time_limit_s == 0.0:
                timed_out.append(f"job {sub.job.id} was not started: the task's time budget{budget} was used up")
            else:
                timed_out.append(f"job {sub.job.id} was stopped at its time limit of {sub.time_limit_s:.0f} s, "
                                 f"what was left of the task's time budget{budget}")
    if timed_out:
        return "; ".join(dict.fromkeys(timed_out))
    return answer.error or (TOTAL_MISSING if target.label == TOTAL else "no result for this property")


# ---------------------------------------------------------------------------------------------
# Outputs
# ---------------------------------------------------------------------------------------------


def write_outputs(outcome: SolveOutcome, backend: TaskBackend | None) -> None:
    workdir = outcome.workdir
    tmp = workdir / (FINAL_ANSWER + ".tmp")
    tmp.write_text(json.dumps(outcome.final_answer, indent=2) + "\n")
    tmp.replace(workdir / FINAL_ANSWER)
    (workdir / REPORT).write_text(render_report(outcome, backend))


def _fmt(value: float | None, uncertainty: float | None = None) -> str:
    if value is None:
        return "-"
    return f"{value:.6g}" + (f" ± {uncertainty:.2g}" if uncertainty else "")


def _metric_unit(m: MetricOutcome) -> str:
    """The unit column of one result: the engine's note, the unit the task asked (and where it was
    read), or the protocol's own unit when none was asked."""
    t = m.target
    if t.note and m.result is not None:
        return f"{m.result.unit} ({t.note})"
    if t.unit:
        return f"{t.unit} (from the {t.unit_source})"
    if m.result is not None:
        return f"{m.result.unit or 'none'} (no unit asked: the protocol's unit)"
    return "-"


def _result_row(m: MetricOutcome) -> str:
    """One metric's row of the results table; the uncertainty scaled to the reported unit."""
    t = m.target
    err = "-"
    if m.result is not None and m.result.uncertainty is not None and m.value is not None and m.result.value:
        err = f"{abs(m.result.uncertainty * m.value / m.result.value):.2g}"
    how = m.result.method.replace("|", "/") if m.result else ""
    at = {"average": "", "last_step": " (last step)", "step": f" (step {t.step})"}[t.at]
    return f"| `{t.metric}` | {t.property or '-'}{at} | {_metric_unit(m)} | {_fmt(m.value)} | {err} | {how} |"


def _report_head(outcome: SolveOutcome) -> list[str]:
    """Title, budget and count of metrics computed, the task's text, the results table and what was
    not computed."""
    task = outcome.task
    lines = [
        f"# simagent solve: {task.id}",
        "",
        f"Engine {task.engine}, level {task.level}, budget {outcome.budget_s:g} s (the harness allows "
        f"{task.budget_s:g} s: {task.budget_rule}), used {outcome.elapsed_s:.0f} s. "
        f"Metrics computed: {len(outcome.final_answer)} of {len(task.metrics)} (exit code {outcome.exit_code}).",
        "",
        "## Task",
        "",
        task.problem_description.strip(),
        "",
        "## Results",
        "",
        "| metric | property | unit | value | ± (1 s.e.) | how |",
        "|---|---|---|---|---|---|",
    ]
    lines += [_result_row(m) for m in outcome.metrics]
    lines += ["", "## Not computed", ""]
    return lines + ([f"- `{k}`: {v}" for k, v in outcome.not_computed.items()]
                    or ["- none: every metric has a value."])


def _ground_truth_lines(outcome: SolveOutcome) -> list[str]:
    """The task's own ground truth, when the task file has one, against each value."""
    task = outcome.task
    if not task.ground_truth:
        return []
    lines = ["", "## Comparison with the task's ground truth", ""]
    for name, value in outcome.final_answer.items():
        ref = task.ground_truth.get(name)
        if isinstance(ref, int | float) and ref:
            lines.append(f"- `{name}`: {value:.6g} vs {ref:.6g} ({100 * (value / ref - 1):+.2f} %)")
    reference = getattr(task, "reference", None)
    if reference:
        lines.append(f"- reference: {reference}")
    return lines


def _described_run_lines(outcome: SolveOutcome, spec: TaskSpec, backend: TaskBackend,
                         desc: SimulationDescription) -> list[str]:
    """What was run when the typed description was executed: that description, not the free-text
    reader's view of the text."""
    return [f"- engine {spec.engine}; protocol {DESCRIBED}: the task's description, run literally",
            "- properties computed: " + (", ".join(p.name for p in spec.properties) or "none"),
            *executed_lines(desc, _described_input(outcome.workdir)),
            *(f"- {line}" for line in backend.fill.lines())]


def _properties_line(spec: TaskSpec) -> str:
    if not spec.properties:
        return "- properties computed: none"
    return "- properties computed: " + ", ".join(
        f"{p.name}" + ("" if p.at == "average" else f" ({p.at}{' ' + str(p.step) if p.step is not None else ''})")
        for p in spec.properties)


def _description_state(desc: SimulationDescription | None) -> list[str]:
    """Whether the typed description was read complete (its stages) or why it was not run."""
    if desc is not None and desc.renderable:
        return ["- the description, read into a typed simulation description and run literally: "
                + "; ".join(_stage_line(st) for st in desc.stages)]
    if desc is not None and (desc.unsupported or desc.missing):
        return ["- the typed simulation description was not run: " + "; ".join(
            [f"not rendered: {', '.join(desc.unsupported)}"] * bool(desc.unsupported)
            + [f"not stated: {', '.join(desc.missing)}"] * bool(desc.missing))]
    return []


def _reading_lines(spec: TaskSpec, backend: TaskBackend | None) -> list[str]:
    """What was run as the free-text reader saw the task: system, conditions, potential, controls,
    properties, the typed description's state, the fills, and what was not understood or is lacking."""
    desc = backend.description if backend else None
    system = spec.system.name if spec.system else "no system recognised"
    lines = [f"- system: {system}; units {spec.units_style}; engine {spec.engine}"]
    if spec.conditions.model_dump(exclude_defaults=True):
        lines.append("- conditions: " + _compact(spec.conditions.model_dump(exclude_defaults=True)))
    if spec.potential is not None:
        lines.append("- potential: " + _compact(spec.potential.model_dump(exclude_defaults=True)))
    controls = spec.controls.model_dump(exclude_defaults=True)
    if controls:
        lines.append("- protocol as read from the description: " + _compact(controls))
    lines.append(_properties_line(spec))
    if backend and backend.reader_properties:
        lines.append("- properties the description itself names: " + ", ".join(backend.reader_properties))
    lines += _description_state(desc)
    if backend is not None:
        lines += [f"- {line}" for line in backend.fill.lines()]
    if spec.unparsed:
        lines.append("- sentences not understood (their content was not used): "
                     + " | ".join(f"“{s}”" for s in spec.unparsed))
    if spec.missing:
        lines.append("- information the description lacks: " + ", ".join(spec.missing))
    return lines


def _what_was_run(outcome: SolveOutcome, backend: TaskBackend | None) -> list[str]:
    """The section 'What was run': the description or the reading, the graph's decisions, the job
    folders, the inputs as run with their cores, and the supplied files."""
    spec, answer = outcome.spec, outcome.answer
    lines = ["", "## What was run", ""]
    desc = backend.description if backend else None
    if spec is not None and backend is not None and backend.ran_described and desc is not None:
        lines += _described_run_lines(outcome, spec, backend, desc)
    elif spec is not None:
        lines += _reading_lines(spec, backend)
    if answer is not None:
        lines += [f"- decision {d.decision} ({d.backend}): {d.detail}" for d in answer.decisions
                  if d.decision != "warning"]
        if answer.jobs:
            lines.append("- job folders (kept): " + ", ".join(answer.jobs))
    if (outcome.workdir / INPUTS).is_dir():
        lines.append(f"- inputs as run: {INPUTS}/<job id>/")
        lines += _cores_lines(outcome.workdir / INPUTS)
    return lines + _provided_lines(outcome)


def _provided_lines(outcome: SolveOutcome) -> list[str]:
    """The files copied into every job folder: the task's supplied files, and published files
    extracted from OpenKIM items with their item, SHA-1 and source."""
    lines = []
    if outcome.supplied:
        lines.append("- supplied data files, copied into every job folder: "
                     + ", ".join(str(p) for p in outcome.supplied))
    lines += [f"- published file {f.path.name}, copied into every job folder: extracted to {f.path} from "
              f"{f.source}; SHA-1 {f.sha1} (as the item publishes it)" for f in outcome.published]
    return lines


def _section(title: str, items: list[str]) -> list[str]:
    """A report section of bullet items; nothing when there are none."""
    return ["", f"## {title}", "", *(f"- {item}" for item in items)] if items else []


def _report_tail(outcome: SolveOutcome) -> list[str]:
    """Defaults applied, warnings kept with the run, corrections and notes (each section only when it has items)."""
    answer = outcome.answer
    defaults = [f"{d.parameter} = {d.value}" + (f" ({d.reason})" if d.reason else "")
                for d in answer.defaults_applied] if answer is not None else []
    warnings = [f"{d.backend}: {d.detail}" for d in answer.decisions if d.decision == "warning"] if answer else []
    warnings += [f"`{m.target.metric}`: {w}" for m in outcome.metrics if m.result is not None
                 for w in m.result.warnings]
    corrections = ([f"{c.job}: {c.action} ({c.handler}; {c.reason})" for c in answer.corrections]
                   if answer is not None else [])
    notes = list(outcome.notes) + ([f"the graph reported: {answer.error}"] if answer is not None and answer.error
                                   else [])
    return (_section("Defaults applied (not fixed by the description)", defaults)
            + _section("Warnings (the run was kept as the description prescribes it)", warnings)
            + _section("Corrections", corrections) + _section("Notes", notes))


def render_report(outcome: SolveOutcome, backend: TaskBackend | None) -> str:
    """report.md: the results, the ground-truth comparison, what was run, then defaults, warnings,
    corrections and notes."""
    lines = _report_head(outcome) + _ground_truth_lines(outcome) + _what_was_run(outcome, backend)
    return "\n".join(lines + _report_tail(outcome)) + "\n"


def _cores_lines(inputs: Path) -> list[str]:
    """How many MPI ranks and OpenMP threads each job ran on (Settings.job_cores): a run spread over
    several cores sums in another order, so it is not bit-identical to a one-core run of the same input."""
    lines = []
    for path in sorted(inputs.glob("*/job.json")):
        try:
            job = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        ranks, threads = job.get("ranks", 1), job.get("threads", 1)
        if ranks * threads > 1:
            lines.append(f"- job {job.get('id', path.parent.name)} ran on {ranks} MPI rank(s) x {threads} "
                         "thread(s) (job_cores; not bit-identical to a one-core run)")
    return lines


def _described_input(workdir: Path) -> str | None:
    """The LAMMPS input the described protocol ran (kept under inputs/), if any."""
    for path in sorted((workdir / INPUTS).glob("*described*/in.lammps")):
        return path.read_text()
    return None


def _stage_line(stage: Any) -> str:
    if stage.kind == "minimize":
        m = stage.minimize
        return f"{stage.name}: minimize {m.style} etol {m.etol:g} ftol {m.ftol:g} ({m.max_iterations} iterations)"
    d = stage.dynamics
    how = d.ensemble + (f" + {d.thermostat}" if d.thermostat and d.ensemble == "nve" else "")
    target = f" at T {d.t_stop:g}" if d.t_stop is not None else ""
    if d.ensemble in ("npt", "nph") and d.p_stop is not None:
        target += f", P {d.p_stop:g}" + (f" on {d.p_axes}" if d.p_axes else "")
    deform = getattr(stage, "deform", None)
    if deform is not None:
        target += f", box deformed along {deform.axis} ({deform.style} {deform.rate:g})"
    return f"{stage.name}: {stage.steps} steps {how}{target}" + (" (timestep reset)" if stage.reset_timestep else "")


def _compact(data: dict) -> str:
    def show(value: Any) -> str:
        if isinstance(value, dict) and set(value) == {"value", "unit"}:
            return f"{value['value']:g} {value['unit']}"
        if isinstance(value, list):
            return "[" + ", ".join(show(v) for v in value) + "]"
        if isinstance(value, dict):
            return "{" + ", ".join(f"{k}: {show(v)}" for k, v in value.items()) + "}"
        return str(value)

    return ", ".join(f"{k} = {show(v)}" for k, v in data.items())
