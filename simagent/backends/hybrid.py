"""The `hybrid` decision backend: the expert rules answer first, an LLM only where they are unsure.

Routing of the request reading (task_spec), the one decision with real ambiguity:
- the expert answers with a confidence (simagent.backends.expert.reader._confidence);
- the LLM (settings.hybrid_llm: the offline `local` model or an `openai` endpoint) reads the
  request when that confidence is below settings.hybrid_threshold, when the expert reports
  sentences it could not read, or when it raises RequestError (nothing it could read);
- the LLM's spec must pass the same schema and the same code checks (spec_checks.validate_spec:
  units of the right dimension, physical ranges, real elements, values written in the request);
  an invalid or failed LLM answer falls back to the expert's answer (whose gaps make the graph
  ask the user) or, when the expert had none, to the expert's own error message;
- the LLM never makes a silent choice: before the merge, everything of its reading the request
  does not state is dropped (spec_checks.strip_unstated: a property needs words of the request
  that name it, a potential or force field must be written there, a number must be written, run
  controls are the rules' alone), so an unstated field is asked (a gap) or left to the protocol's
  documented default, which the answer reports in defaults_applied;
- a valid LLM reading fills what the expert left empty, field by field; what the expert's rules
  found (anchored on vocabulary and number+unit patterns) is kept, and so is what the request
  names (engine, units style and method words follow the rules). Gaps are recomputed in code.
  The route's detail quotes the request's words for each property the LLM supplied.

The other decisions: protocol selection is a lookup the expert always answers; reviewer feedback
goes to the LLM only when the expert understood none of it; a repair goes to the LLM only when
no expert rule applies (its answer is validated by the LLM backend as for any endpoint).

`name` reports who decided the last call ("hybrid(expert)", "hybrid(local)", "hybrid(openai)"), so
the graph's Decision records show which backend made each decision; `last_detail` says why.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from simagent.backends.allowance import MIN_CALL_S, TimeAllowance
from simagent.backends.base import (
    DecisionBackend,
    ParameterOverrides,
    ProtocolInfo,
    ProtocolSelection,
    RepairAction,
)
from simagent.backends.expert import ExpertBackend
from simagent.backends.expert.reader import property_evidence
from simagent.backends.spec_checks import (
    engine_for,
    request_numbers,
    required_gaps,
    strip_unstated,
    units_style_for,
    validate_spec,
)
from simagent.config import Settings
from simagent.errors import BackendError, RequestError
from simagent.models import TaskSpec

log = logging.getLogger(__name__)

# Why 0.75. The expert's confidence is 1 - 0.2 per unparsed sentence - 0.3 per missing item - 0.3
# for suspected misspellings (reader._confidence), so it takes the values 1.0, 0.8, 0.7, 0.6, ...:
# 0.75 sends every reading with a gap, a misspelling or two unread sentences to the LLM and keeps
# every complete, cleanly spelled reading with the rules. On the understanding benchmark
# (benchmarks/understanding/results/summary.md) the readings at 1.0 are where the expert is right
# (its remaining errors there are confident misreadings no threshold reaches), while the readings
# at 0.7 (paraphrases and typos the rules half-read) are where the LLM fixed the properties; with
# the code checks (spec_checks) a routed request was never made worse on any field. A threshold
# above 0.8 would add nothing (no confidence lies in between); 0.5 would keep the 0.7 readings
# that the LLM fixes.
DEFAULT_THRESHOLD = 0.75


@dataclass
class Route:
    """How one decision was made (for traces and the benchmark)."""

    decision: str
    decider: str
    reason: str
    expert_confidence: float | None = None
    llm_latency_s: float | None = None
    llm_problem: str | None = None


class HybridBackend(DecisionBackend):
    """Expert first; the configured LLM backend where the expert is unsure (see module doc)."""

    def __init__(
        self,
        settings: Settings,
        expert: DecisionBackend | None = None,
        llm: DecisionBackend | None = None,
        llm_factory: Callable[[], DecisionBackend] | None = None,
    ) -> None:
        self.settings = settings
        self.expert = expert or ExpertBackend()
        self.threshold = settings.hybrid_threshold
        self.llm_name = settings.hybrid_llm
        self._llm = llm
        self._llm_factory = llm_factory or (lambda: make_llm(self._llm_settings()))
        self.allowance: TimeAllowance | None = None  # set by limit_llm: a bounded share of a task's time
        self._llm_error: BackendError | None = None  # an LLM that cannot start is not retried
        self.last_decider = "expert"
        self.last_detail = ""
        self.routes: list[Route] = []

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"hybrid({self.last_decider})"

    def __repr__(self) -> str:
        return f"HybridBackend(threshold={self.threshold}, llm={self.llm_name!r})"

    # -- the LLM, started on first need ----------------------------------------------------------

    def limit_llm(self, allowance: TimeAllowance) -> None:
        """Bound the LLM's wall time (its start included) by `allowance` (simagent.backends.allowance)."""
        self.allowance = allowance
        if self._llm is not None:
            self._llm.allowance = allowance  # type: ignore[attr-defined]

    def _llm_settings(self) -> Settings:
        if self.allowance is None:
            return self.settings
        start = min(self.settings.llm_start_timeout_s, self.allowance.left())
        return self.settings.model_copy(update={"llm_start_timeout_s": max(start, 1.0)})

    def llm(self) -> DecisionBackend:
        if self._llm is None:
            if self._llm_error is not None:
                raise self._llm_error
            try:
                if self.allowance is None:
                    self._llm = self._llm_factory()
                else:
                    self.allowance.check("starting the local model")
                    with self.allowance.timing():
                        self._llm = self._llm_factory()
                    self._llm.allowance = self.allowance  # type: ignore[attr-defined]
            except BackendError as err:
                if self.allowance is not None and self.allowance.left() < MIN_CALL_S and "share" not in str(err):
                    err = BackendError(f"{err} ({self.allowance.what()} is used up)")
                self._llm_error = err
                raise err from None
        return self._llm

    def close(self) -> None:
        close = getattr(self._llm, "close", None)
        if callable(close):
            close()

    def _decided(self, route: Route) -> None:
        self.last_decider = route.decider
        self.last_detail = route.reason
        self.routes.append(route)
        log.info("%s decided by %s: %s", route.decision, route.decider, route.reason)

    # -- task_spec -------------------------------------------------------------------------------

    def route_reason(self, spec: TaskSpec | None, error: RequestError | None) -> str | None:
        """Why the expert's reading needs the LLM (None: it does not)."""
        if error is not None:
            return f"expert could not read the request ({error})"
        assert spec is not None
        if spec.unsupported:
            return None  # refused or routed as a whole: nothing for an LLM to fill in
        if spec.unparsed:
            return f"expert did not read {len(spec.unparsed)} sentence(s)"
        if spec.confidence < self.threshold:
            return f"expert confidence {spec.confidence:.2f} < {self.threshold:.2f}"
        return None

    def task_spec(self, request: str) -> TaskSpec:
        expert_spec: TaskSpec | None = None
        expert_error: RequestError | None = None
        try:
            expert_spec = self.expert.task_spec(request)
        except RequestError as err:
            expert_error = err
        confidence = expert_spec.confidence if expert_spec is not None else None
        reason = self.route_reason(expert_spec, expert_error)
        if reason is None:
            assert expert_spec is not None
            self._decided(Route("task_spec", "expert", f"expert confidence {confidence:.2f}", confidence))
            return expert_spec

        began = time.perf_counter()
        problem: str | None = None
        llm_spec: TaskSpec | None = None
        try:
            llm_spec = self.llm().task_spec(request)
        except BackendError as err:
            problem = str(err)
        else:
            # details the request does not state count as unstated (the local backend drops them itself)
            removed = [*getattr(self.llm(), "last_removed", []), *strip_unstated(llm_spec)]
            if removed:
                log.info("hybrid: dropped from the LLM reading: %s", "; ".join(removed))
            problems = validate_spec(llm_spec)
            if problems:
                problem = "; ".join(problems)
        latency = time.perf_counter() - began

        if llm_spec is not None and problem is None:
            merged, filled = merge_specs(expert_spec, llm_spec)
            decider = self.llm_name if filled else "expert"
            detail = (f"{reason}; the {self.llm_name} LLM filled {', '.join(filled)}" if filled
                      else f"{reason}; the {self.llm_name} LLM added nothing")
            if {"properties", "everything"} & set(filled) and merged.properties:
                detail += "; the request's words: " + ", ".join(
                    f"{p.name} “{property_evidence(p.name, request)}”" for p in merged.properties)
            if removed:
                detail += f"; dropped as unstated: {'; '.join(removed)}"
            self._decided(Route("task_spec", decider, detail, confidence, latency))
            return merged

        log.warning("hybrid: the %s LLM answer was not used: %s", self.llm_name, problem)
        if expert_spec is not None:
            self._decided(Route("task_spec", "expert", f"{reason}; LLM answer rejected: {problem}",
                                confidence, latency, problem))
            return expert_spec
        self._decided(Route("task_spec", "expert", f"{reason}; LLM answer rejected: {problem}",
                            confidence, latency, problem))
        assert expert_error is not None
        raise expert_error

    def rules_task_spec(self, request: str, why: str = "the description's rules read the whole run") -> TaskSpec:
        """The expert's reading alone, for a caller whose own rules settle the request (solve: a described
        run with nothing left open, or one that prescribes what is not rendered): the LLM is not asked
        what its reading cannot change."""
        self._decided(Route("task_spec", "expert", f"the LLM was not asked: {why}"))
        return self.expert.task_spec(request)

    # -- the other decisions ---------------------------------------------------------------------

    def select_protocols(self, spec: TaskSpec, candidates: list[ProtocolInfo]) -> ProtocolSelection:
        selection = self.expert.select_protocols(spec, candidates)
        self._decided(Route("select_protocols", "expert", "protocol choice is a lookup"))
        return selection

    def parameter_overrides(self, feedback: str, protocol: str, current: dict, schema: dict) -> ParameterOverrides:
        result = self.expert.parameter_overrides(feedback, protocol, current, schema)
        if result.overrides:
            self._decided(Route("parameter_overrides", "expert", "expert rules matched the feedback"))
            return result
        try:
            llm_result = self.llm().parameter_overrides(feedback, protocol, current, schema)
        except BackendError as err:
            self._decided(Route("parameter_overrides", "expert", "LLM failed", llm_problem=str(err)))
            return result
        self._decided(Route("parameter_overrides", self.llm_name, "expert understood none of the feedback"))
        return llm_result

    def repair(self, diagnosis: str, protocol: str, current: dict, schema: dict) -> RepairAction:
        action = self.expert.repair(diagnosis, protocol, current, schema)
        if action.action != "give_up":
            self._decided(Route("repair", "expert", "an expert rule applies"))
            return action
        try:
            llm_action = self.llm().repair(diagnosis, protocol, current, schema)
        except BackendError as err:
            self._decided(Route("repair", "expert", "LLM failed", llm_problem=str(err)))
            return action
        self._decided(Route("repair", self.llm_name, "no expert rule applies"))
        return llm_action


def merge_specs(expert: TaskSpec | None, llm: TaskSpec) -> tuple[TaskSpec, list[str]]:
    """The expert's findings, with the LLM's reading in the fields the expert left empty.

    Returns the merged spec and the names of the fields the LLM supplied."""
    if expert is None:
        spec = llm.model_copy(deep=True)
        spec.units_style = units_style_for(spec)  # type: ignore[assignment]
        spec.engine = engine_for(spec)  # type: ignore[assignment]
        spec.missing = required_gaps(spec)
        spec.unparsed = []
        spec.confidence = max(0.0, 1.0 - 0.3 * len(spec.missing))
        return spec, ["everything"]
    spec = expert.model_copy(deep=True)
    filled: list[str] = []
    if spec.system is None and llm.system is not None:
        spec.system = llm.system.model_copy(deep=True)
        spec.units_style = units_style_for(spec)  # type: ignore[assignment]
        filled.append("system")
    if not spec.properties and llm.properties:
        spec.properties = [p.model_copy() for p in llm.properties]
        filled.append("properties")
    if llm.potential is not None:
        if spec.potential is None:
            spec.potential = llm.potential.model_copy(deep=True)
            filled.append("potential")
        else:
            for field in ("family", "name_hint", "force_field"):
                if getattr(spec.potential, field) is None and getattr(llm.potential, field) is not None:
                    setattr(spec.potential, field, getattr(llm.potential, field))
                    filled.append(f"potential.{field}")
    # each written number states one condition: a number the rules already read as one is not the LLM's
    # to reuse for another (a number written nowhere was dropped before, spec_checks.strip_unstated)
    unused, used = request_numbers(spec.request), []
    cond = spec.conditions
    for q in [cond.temperature, cond.pressure, cond.density, cond.probe_radius, *cond.pressures, *cond.temperatures]:
        if q is not None and (n := _number_in(q.value, unused)) is not None:
            unused.remove(n)
            used.append(n)
    for field in ("temperature", "pressure", "density"):
        if getattr(spec.conditions, field) is None and getattr(llm.conditions, field) is not None:
            if field == "pressure" and spec.conditions.pressures:
                continue  # an isotherm's pressure list already covers it
            value = getattr(llm.conditions, field).value
            if (n := _number_in(value, unused)) is not None:
                unused.remove(n)
            elif _number_in(value, used) is not None:
                continue  # its number states a condition the rules read
            setattr(spec.conditions, field, getattr(llm.conditions, field))
            filled.append(field)
    if "system" in filled and spec.engine == "lammps":  # an engine the expert read (gromacs, qe) stays
        spec.engine = engine_for(spec)  # type: ignore[assignment]
    # Gaps the expert's domain modules know beyond required_gaps' (kept as they are).
    spec.missing = required_gaps(spec) + [m for m in expert.missing if m not in _GAP_KEYS]
    spec.unparsed = [] if filled else spec.unparsed
    spec.confidence = max(0.0, 1.0 - 0.3 * len(spec.missing))
    return spec, filled


def _number_in(value: float, numbers: list[float]) -> float | None:
    return next((n for n in numbers if abs(n - value) <= 1e-9 * max(1.0, abs(n))), None)


_GAP_KEYS = {"property", "system", "temperature", "density", "structure"}


def make_llm(settings: Settings) -> DecisionBackend:
    """The LLM behind the hybrid: the offline local model or an OpenAI-compatible endpoint."""
    if settings.hybrid_llm == "openai":
        from simagent.backends.openai_backend import OpenAIBackend

        return OpenAIBackend(settings)
    from simagent.backends.local import LocalBackend

    return LocalBackend(settings)
