"""The language model fills what the reading rules left open in a SimulationDescription; it may only
read, never invent.

After the rules (simagent.described.reading), the gaps a description lists (`missing`: the unit
system, the lattice, the box, the pair parameters, the dynamics of a stated run, a thermostat's set
point, ...) and a timestep the rules defaulted although the text speaks of one are asked of the
decision backend's LLM, with a JSON schema made for just those fields: each answer is a value and
the words of the text it rests on. Code then checks every answer before it is used:

- the quote must occur in the text (case and spacing aside);
- a number must be written in its quote, and the quote must name the field (a timestep quote says
  'timestep', 'time step', 'dt', ...; a cutoff quote says 'cut');
- an ensemble or lattice must be named by a word of its own in the quote ('microcanonical' is nve).

An accepted answer is written into the text in the rules' own words at the place it belongs (a
stage's set point into that stage's sentence) and the text is read again by the same rules, so
everything that depends on it (the box in lattice units, the stages) follows as for a stated
value. The answer is kept only when the gap it was asked for is gone and nothing the text does not
render was added; its fields then record origin 'llm' with the quote. A rejected answer is listed
with its reason. The LLM never overrides what the rules read.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, create_model

from simagent.backends.expert.protocol_text import read_controls
from simagent.described.model import LatticeStyle, SimulationDescription
from simagent.described.reading import MINIMIZE, normalise, read_description
from simagent.errors import BackendError

log = logging.getLogger(__name__)

DECISION = "description_gaps"
MAX_TOKENS = 512  # a handful of fields, each a value and a short quote
MAX_QUOTE = 200

Ensemble = Literal["nve", "nvt", "npt", "langevin", "berendsen"]


class Quoted(BaseModel):
    """One answer: the value and the exact words of the text it is read from."""

    quote: str = Field(max_length=MAX_QUOTE, description="the words of the text that state the value, copied exactly")


def _quoted(name: str, value_type: Any) -> type[BaseModel]:
    return create_model(name, value=(value_type, ...), __base__=Quoted)


@dataclass(frozen=True)
class Gap:
    """A field to ask for: its name in the answer, what it means, its value type, the origin keys it
    fills, the `missing` entry it closes (None: a defaulted field), and (for a stage) the run's steps."""

    name: str
    meaning: str
    value_type: Any
    origin_keys: tuple[str, ...]
    closes: str | None
    steps: int | None = None
    stage: str | None = None
    minimize: bool = False  # a field of the minimisation: written into its sentence


# The field's word that a quote must contain (numbers and styles are checked separately).
FIELD_WORDS = {
    "units": r"unit|lj\b|lennard|reduced|real|metal",
    "lattice_style": r"lattice|crystal|cubic|fcc|bcc|diamond|square|hex|sq2?\b|\bsc\b",
    "lattice_scale": r"densit|lattice|constant|parameter|spacing|rho",
    "box": r"box|cell|block|domain|region|lattice|unit|extent|size|length|edge|side|container",
    "mass": r"mass",
    "lj_epsilon": r"epsilon|well|energy",
    "lj_sigma": r"sigma|diameter|size|length",
    "pair_cutoff": r"cut",
    "timestep": r"time ?step|\bdt\b|step size|increment|integration step|delta ?t",
    "temperature": r"temperat|\bt\b|\bkt\b|k_?b ?t",
    "run_steps": r"step|iteration",
    "pressure": r"pressur|\bbar\b|\batm\b|\bp_?0?\b",
    "minimisation_tolerances": r"tol|converg|criteri|threshold|accura|precision|stop|energ",
    "minimisation_max_iterations": r"iteration|step|cycle",
}
# Words that name each ensemble or thermostat (one of them must be in the quote).
ENSEMBLE_WORDS = {
    "nve": r"\bnve\b|micro-?canonical|constant (?:total )?energy|energy[- ]conserving|velocity[- ]verlet|newton",
    "nvt": r"\bnvt\b|(?<!micro)(?<!micro-)canonical|nos[eé]|hoover|constant temperature",
    "npt": r"\bnpt\b|isobaric|barostat|constant pressure",
    "langevin": r"langevin",
    "berendsen": r"berendsen",
}
LATTICE_WORDS = {
    "fcc": r"fcc|face[- ]cent", "bcc": r"bcc|body[- ]cent", "sc": r"simple cubic|\bsc\b", "diamond": r"diamond",
    "sq": r"square|\bsq\b", "sq2": r"sq2|centred square|centered square", "hex": r"hex",
}
# The rules' own words for an accepted value (simagent.described.reading reads them).
CANONICAL = {
    "units": "units {value}",
    "lattice_style": "{value} lattice",
    "lattice_scale": "{scale_word} of {value}",
    "box": "a box of {value} lattice units",
    "mass": "mass of {value}",
    "lj_epsilon": "epsilon = {value}",
    "lj_sigma": "sigma = {value}",
    "pair_cutoff": "cutoff of {value}",
    "timestep": "timestep of {value}",
}
STAGE_CANONICAL = {
    "nve": "in the nve ensemble", "nvt": "in the nvt ensemble", "npt": "in the npt ensemble",
    "langevin": "with a langevin thermostat", "berendsen": "with a berendsen thermostat",
}


def gaps(desc: SimulationDescription, text: str) -> list[Gap]:
    """The fields of `desc` to ask the LLM for: its listed gaps that one value closes, a timestep the
    rules defaulted although the text speaks of a timestep, and likewise a barostat pressure the rules
    defaulted although the text writes a pressure value."""
    found: list[Gap] = []
    for entry in desc.missing:
        if entry == "unit system":
            found.append(Gap("units", "the LAMMPS unit style: lj (reduced Lennard-Jones units), real or metal",
                             Literal["lj", "real", "metal"], ("units",), entry))
        elif entry == "initial configuration (lattice)":
            found.append(Gap("lattice_style", "the lattice the atoms start on", LatticeStyle, ("lattice",), entry))
        elif entry == "lattice scale (density or lattice constant)":
            what = "the reduced number density" if desc.units == "lj" else "the lattice constant in angstrom"
            found.append(Gap("lattice_scale", what + " of the starting lattice", float, ("lattice",), entry))
        elif entry == "box size":
            found.append(Gap("box", "the box edges in lattice units (x, y, z; one number for a cube)",
                             list[float], ("box",), entry))
        elif entry == "atom masses":
            found.append(Gap("mass", "the mass of the atoms", float, ("masses",), entry))
        elif entry in ("LJ epsilon", "LJ sigma"):
            name = "lj_" + entry.split()[1]
            found.append(Gap(name, f"the Lennard-Jones {entry.split()[1]}", float, (f"pair.{entry.split()[1]}",),
                             entry))
        elif entry == "pair cutoff":
            found.append(Gap("pair_cutoff", "the cutoff distance of the pair potential", float, ("pair.cutoff",),
                             entry))
        elif hit := re.match(r"the dynamics \(ensemble\) of the (\d+)-step run\b", entry):
            steps = int(hit.group(1))
            found.append(Gap(f"dynamics_of_{steps}_step_run", f"how the atoms move during the {steps}-step run: "
                             "nve, nvt, npt, or nve with a langevin or berendsen thermostat", Ensemble,
                             (f"dynamics of the {steps}-step run",), entry, steps=steps))
        elif hit := re.fullmatch(r"the (thermostat temperature|barostat pressure) of stage (run\d+)", entry):
            stage = next((s for s in desc.stages if s.name == hit.group(2)), None)
            if stage is not None:
                device, quantity = hit.group(1).split()
                found.append(Gap(f"{device}_{quantity}_of_{stage.name}", f"the {device}'s target {quantity} during "
                                 f"the {stage.steps}-step run", float,
                                 (f"{stage.name}.{'t' if device == 'thermostat' else 'p'}_stop",), entry,
                                 steps=stage.steps, stage=stage.name))
        elif entry == "the minimisation tolerances (etol, ftol)":
            found.append(Gap("minimisation_tolerances", "the energy minimisation's stopping tolerances: [energy "
                             "tolerance etol, force tolerance ftol]", list[float], ("minimisation",), entry,
                             minimize=True))
            if "max_iterations" not in read_controls(_minimize_sentence(normalise(text))):
                found.append(Gap("minimisation_max_iterations", "the energy minimisation's maximum number of "
                                 "iterations", int, ("minimisation.max_iterations",),
                                 "the minimisation's maximum iterations", minimize=True))
        elif entry == "the minimisation's maximum iterations":
            found.append(Gap("minimisation_max_iterations", "the energy minimisation's maximum number of iterations",
                             int, ("minimisation.max_iterations",), entry, minimize=True))
    low = normalise(text)
    if re.search(r"pressur[^.;]{0,40}?\d|\d\s*(?:bar|atm|[kmg]?pa)\b", low):  # the text writes a pressure value
        for stage in desc.stages:
            o = desc.origin.get(f"{stage.name}.p_stop")
            if o is not None and o.source == "default" and stage.steps:  # defaulted by the rules: asked, not missed
                found.append(Gap(f"barostat_pressure_of_{stage.name}", f"the barostat's target pressure during the "
                                 f"{stage.steps}-step run", float, (f"{stage.name}.p_stop",), None,
                                 steps=stage.steps, stage=stage.name))
    origin = desc.origin.get("timestep")
    # a timestep the rules read for one stage (an SRD run's own) is not missed: the default is for the others
    read_for_a_stage = any(k.endswith(".timestep") and o.source == "rules" for k, o in desc.origin.items())
    # (minimisations only, as a stacking-fault scan's 'incremental displacements': no timestep is used)
    if origin is not None and origin.source == "default" and not read_for_a_stage and desc.run_stages() and \
            _speaks_of_a_timestep(normalise(text)):
        found.append(Gap("timestep", f"the integration timestep (in the {desc.units} unit style's time unit)", float,
                         ("timestep",), None))
    return found


def _minimize_sentence(low: str) -> str:
    hit = MINIMIZE.search(low)
    if hit is None:
        return ""
    start, end = _sentence_span(low, hit.start())
    return low[start:end]


def _speaks_of_a_timestep(low: str) -> bool:
    """A timestep word with a number soon after it, not a run length ('1000 timesteps') nor a reset.

    A word multiplied or divided in a formula ('slope/(10*dt)') is a symbol, not a value, a number
    multiplied or divided in a formula ('dt = 0.2*h/c') is a factor, not the timestep, and a
    dimension ('2D', '3-d') is no number."""
    for hit in re.finditer(FIELD_WORDS["timestep"], low):
        before = low[max(0, hit.start() - 20):hit.start()]
        if re.search(r"\d[\d,]*\s*(?:md |more |additional )?$|reset\w*\s+(?:the\s+)?$|[*/×·]\s*$", before):
            continue
        after = re.match(r"(?:[^.;]|\.(?=\d)){0,30}", low[hit.end():]).group(0)  # (a decimal point goes on)
        if re.search(r"\d", FORMULA_NUMBER.sub(" ", re.sub(r"\b[123] ?-?d\b", " ", after))):
            return True
    return False


# A number that is an operand of a formula ('0.2*h', 'h/3', '2^k'): a factor, not a stated value
# (normalise() has already made '1×10^(-3)' and '5 × 10⁻⁴' plain numbers, 1e-3 and 5e-4).
_NUMBER = r"\d+(?:\.\d*)?(?:e[-+]?\d+)?"
FORMULA_NUMBER = re.compile(rf"[*/×·^]\s*{_NUMBER}|(?<![\w.]){_NUMBER}(?=\s*[*/×·^])")


def answer_model(asked: list[Gap]) -> type[BaseModel]:
    """The strict schema of one answer: each asked field, a quoted value or null."""
    fields: dict[str, Any] = {g.name: (_quoted(f"Quoted_{g.name}", g.value_type) | None, ...) for g in asked}
    return create_model("DescriptionGaps", **fields)


SYSTEM = """\
You read a molecular-dynamics task description and answer with compact JSON.
For each field asked, give the value the text states and `quote`: the words of the text that state it,
copied exactly (at most a sentence). If the text does not state the field, answer null.
Never guess, never use a usual or default value, never compute a value from others: only read."""


def question(text: str, asked: list[Gap]) -> str:
    lines = [f"- {g.name}: {g.meaning}" for g in asked]
    return "Text:\n" + text.strip() + "\n\nFields:\n" + "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Checking and applying an answer
# ---------------------------------------------------------------------------------------------


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", normalise(text)).strip(" .;,")


def _numbers(text: str) -> list[float]:
    return [float(n) for n in re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", text)]


def _written(value: float, quote: str, *, alone: bool = True) -> bool:
    """`value` is written in `quote`; `alone`: as a number of its own, not as a factor of a formula
    (a list of edges may be written '20*20*10')."""
    low = normalise(quote)
    return any(_same(value, n) for n in _numbers(FORMULA_NUMBER.sub(" ", low) if alone else low))


def check(gap: Gap, value: Any, quote: str, text: str) -> str | None:
    """Why the answer is rejected (None: accepted)."""
    q = _flat(quote)
    if not q:
        return "no quote"
    if q not in _flat(text):
        return f"the quote “{quote.strip()[:80]}” is not in the text"
    key = "temperature" if gap.name.startswith("thermostat_temperature") else \
        "pressure" if gap.name.startswith("barostat_pressure") else gap.name
    if gap.name.startswith("dynamics_of"):
        return None if re.search(ENSEMBLE_WORDS[value], q) else f"the quote does not name {value}"
    if gap.name == "lattice_style":
        return None if re.search(LATTICE_WORDS[value], q) else f"the quote does not name a {value} lattice"
    if gap.name == "units":
        names = {"lj": r"\blj\b|lennard|reduced", "real": r"\breal\b", "metal": r"\bmetal\b"}[value]
        return None if re.search(names, q) else f"the quote does not name {value} units"
    if not re.search(FIELD_WORDS[key], q):
        return f"the quote does not speak of the {gap.name.replace('_', ' ')}"
    values = value if isinstance(value, list) else [value]
    if gap.name == "box" and not 1 <= len(values) <= 3:
        return "a box needs one to three edges"
    if gap.name == "minimisation_tolerances" and len(values) != 2:
        return "the tolerances are two numbers (etol, ftol)"
    absent = [v for v in values if not _written(float(v), q, alone=not isinstance(value, list))]
    if absent:
        shown = ", ".join(f"{v:g}" for v in absent)
        if all(_written(float(v), q, alone=False) for v in absent):
            return f"{shown} is a factor of a formula in the quote, not a stated value (the LLM never computes)"
        return f"{shown} is not written in the quote"
    if key == "pressure":  # any sign: zero or a tension is a valid set point
        return None
    if gap.name == "minimisation_tolerances":  # LAMMPS allows a zero tolerance (that criterion off)
        return "a negative tolerance" if any(float(v) < 0 for v in values) else None
    if any(float(v) <= 0 for v in values):
        return "not a positive number"
    return None


def taken(value: Any, desc: SimulationDescription, text: str, claimed: list[float]) -> str | None:
    """Why a number of the answer belongs to another field (None: it is free).

    Each written number states one thing: a number the rules already read into a field (its origin's
    words), or an earlier answer took, is not the LLM's to reuse for another, unless the text writes it
    more often ('density 0.8' read as the lattice is no box edge of 0.8)."""
    if isinstance(value, str):
        return None
    used = [n for o in desc.origin.values() if o.source == "rules" for n in _numbers(o.evidence)] + claimed
    written = _numbers(normalise(text))
    for v in {float(x) for x in (value if isinstance(value, list) else [value])}:
        if sum(_same(v, n) for n in written) <= sum(_same(v, n) for n in used):
            return f"{v:g} is a number already read as another field"
    return None


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a))


def _sentence_span(low: str, anchor: int) -> tuple[int, int]:
    start = max(low.rfind(". ", 0, anchor), low.rfind("; ", 0, anchor))
    ends = [i for i in (low.find(". ", anchor), low.find("; ", anchor)) if i >= 0]
    return start + 2 if start >= 0 else 0, min(ends) if ends else len(low.rstrip(" ."))


def _run_position(low: str, steps: int) -> int | None:
    hit = re.search(rf"\b{steps}[- ](?:\w+[- ]){{0,3}}?(?:time ?)?steps?\b", low)
    return hit.end() if hit else None


def _insert(low: str, gap: Gap, value: Any, desc: SimulationDescription) -> str | None:
    """`low` with the value written in the rules' words where it belongs (None: no place found)."""
    if gap.steps is not None:  # a stage's field: into the sentence of its run
        at = _run_position(low, gap.steps)
        if at is None:
            return None
        _, end = _sentence_span(low, at)
        words = STAGE_CANONICAL[value] if gap.name.startswith("dynamics_of") else \
            f"at a pressure of {value:g}" if gap.name.startswith("barostat_pressure") else \
            f"at a temperature of {value:g}"
        return f"{low[:end]}, {words}{low[end:]}"
    if gap.minimize:  # into the minimisation's sentence, in the words simagent.described.reading reads
        hit = MINIMIZE.search(low)
        if hit is None:
            return None
        _, end = _sentence_span(low, hit.start())
        words = f"with energy tolerance {value[0]:g} and force tolerance {value[1]:g}" if \
            gap.name == "minimisation_tolerances" else f"with maximum iterations of {int(value)}"
        return f"{low[:end]}, {words}{low[end:]}"
    if gap.name == "box":
        edges = [float(v) for v in value] * (3 if len(value) == 1 else 1)
        words = CANONICAL["box"].format(value=" x ".join(f"{v:g}" for v in edges[:3]))
    elif gap.name == "lattice_scale":
        scale_word = "reduced density" if desc.units == "lj" else "lattice constant"
        unit = "" if desc.units == "lj" else " angstrom"
        words = CANONICAL["lattice_scale"].format(scale_word=scale_word, value=f"{value:g}{unit}")
    else:
        words = CANONICAL[gap.name].format(value=value if isinstance(value, str) else f"{value:g}")
    return low.rstrip(" .") + f". {words}."


@dataclass
class FillReport:
    """What the LLM filled (field -> value and quote) and what was not used (with the reason)."""

    filled: dict[str, str] = field(default_factory=dict)
    rejected: list[str] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)
    problem: str | None = None  # the LLM was not asked or gave no usable answer at all

    def lines(self) -> list[str]:
        out = [f"read by the language model: {k} = {v}" for k, v in self.filled.items()]
        out += [f"the language model's answer was not used: {r}" for r in self.rejected]
        if self.problem:
            out.append(f"the language model was not used: {self.problem}")
        unanswered = [a for a in self.asked if a not in self.filled and not any(r.startswith(a + " ") for r in
                                                                                self.rejected)]
        if unanswered and not self.problem:
            out.append(f"the language model found no statement of: {', '.join(unanswered)}")
        return out


def apply(desc: SimulationDescription, text: str, answers: dict[str, Any], asked: list[Gap],
          report: FillReport) -> SimulationDescription:
    """Check each answer and, in the rules' words, read the text again with it (module docstring)."""
    low = normalise(text)
    current = desc
    claimed: list[float] = []  # the numbers of accepted answers
    for gap in asked:
        answer = answers.get(gap.name)
        if answer is None:
            continue
        value, quote = answer["value"], answer["quote"]
        why = check(gap, value, quote, text) or taken(value, current, text, claimed)
        if why is None:
            changed = _insert(low, gap, value, current)
            if changed is None:
                why = f"no {gap.steps}-step run found to give it to"
            else:
                again = read_description(changed)
                if gap.closes is not None and gap.closes in again.missing:
                    why = f"the value {value} did not close the gap ({gap.closes})"
                elif gap.name == "minimisation_max_iterations" and not any(st.kind == "minimize"
                                                                            for st in again.stages):
                    why = "the minimisation still lacks its tolerances"
                elif set(again.unsupported) - set(current.unsupported):
                    why = f"the value {value} makes the text prescribe {', '.join(again.unsupported)}"
                elif moved := [k for k, o in current.origin.items()
                               if o.source == "rules" and again.origin.get(k) != o]:
                    why = f"the value {value} would change what the rules read ({', '.join(moved)})"
                else:
                    low, current = changed, again
        if why is not None:
            report.rejected.append(f"{gap.name} = {value!r}: {why}")
            continue
        if not isinstance(value, str):
            claimed += sorted({float(v) for v in (value if isinstance(value, list) else [value])})
        shown = value if isinstance(value, str) else json.dumps(value)
        report.filled[gap.name] = f"{shown} (“{quote.strip()}”)"
    if current is desc:
        return desc
    # what the rules read stays theirs; the fields the LLM closed record its quote
    for gap in asked:
        if gap.name in report.filled:
            quote = answers[gap.name]["quote"].strip()
            for key in gap.origin_keys:
                current.note(key, "llm", f"“{quote}”")
    return current


def fill(desc: SimulationDescription, text: str, backend: Any) -> tuple[SimulationDescription, FillReport]:
    """`desc` with the gaps the LLM could read from `text` filled (see the module docstring).

    `backend`: the decision backend whose LLM is asked (reading_llm); the expert backend has none.
    Only a description that nothing unrenderable blocks is worth asking about."""
    report = FillReport()
    asked = gaps(desc, text)
    if not asked or desc.unsupported:
        return desc, report
    report.asked = [g.name for g in asked]
    llm, why = reading_llm(backend)
    if llm is None:
        report.problem = why
        return desc, report
    model = answer_model(asked)

    def parse(content: str) -> dict[str, Any]:
        data = json.loads(content)
        if not isinstance(data, dict):
            raise ValueError("the answer must be a JSON object")
        return model.model_validate(data).model_dump()

    from simagent.backends import openai_backend

    openai_backend.MAX_TOKENS.setdefault(DECISION, MAX_TOKENS)
    try:
        answers = llm.ask(DECISION, SYSTEM, question(text, asked), model, parse)
    except (BackendError, ValidationError) as err:
        report.problem = str(err)[:300]
        log.info("description gaps: the LLM gave no usable answer: %s", err)
        return desc, report
    return apply(desc, text, answers, asked, report), report


def reading_llm(backend: Any) -> tuple[Any | None, str]:
    """(the LLM behind a decision backend: itself (openai, local) or the hybrid's; why there is none)."""
    from simagent.backends.openai_backend import OpenAIBackend

    if isinstance(backend, OpenAIBackend):
        return backend, ""
    start = getattr(backend, "llm", None)
    if not callable(start):
        return None, f"the {getattr(backend, 'name', 'configured')} backend has no language model (rules only)"
    try:
        llm = start()
    except BackendError as err:
        return None, f"the language model did not start: {err}"[:300]
    if not isinstance(llm, OpenAIBackend):
        return None, f"the language model {type(llm).__name__} cannot answer a constrained question"
    return llm, ""
