"""Validators: an agent's final_answer.json against the task's ground truth, one validator per engine.

A metric passes when its key is present exactly as the task spells it, its value is a finite
number, and |value - truth| <= tolerance x |truth| (MDGym's rule; 5 % by default). For a ground
truth of exactly 0 the relative rule is meaningless, so |value| <= tolerance is used instead.
Score = fraction of scored metrics that pass; success = every scored metric passes; an answer
the taxonomy finds fabricated (no engine run behind it) scores 0 whatever its values. A key that
matches a metric only after normalisation (case, spaces, '_' and '-') does not pass, but the
validation says so, so a reader can tell a spelling slip from a wrong number.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from simagent.bench.tasks import DEFAULT_TOLERANCE, BenchTask


def normalize_key(key: str) -> str:
    return re.sub(r"[\s_\-]+", "", key).lower()


@dataclass
class MetricCheck:
    metric: str
    ground_truth: float | None
    value: float | None = None
    relative_error: float | None = None
    tolerance: float | None = None
    passed: bool | None = None  # None: unscored (no ground truth)
    note: str = ""


@dataclass
class Validation:
    task: str
    engine: str
    validator: str
    scored: bool
    answer_found: bool
    checks: list[MetricCheck] = field(default_factory=list)
    answered: list[str] = field(default_factory=list)  # metrics the answer has a key for
    extra_keys: list[str] = field(default_factory=list)
    key_hints: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    disqualified: str = ""  # why the answer earns nothing whatever its values (a fabricated answer)

    def disqualify(self, reason: str) -> None:
        self.disqualified = reason

    @property
    def scored_checks(self) -> list[MetricCheck]:
        return [c for c in self.checks if c.passed is not None]

    @property
    def score(self) -> float | None:
        scored = self.scored_checks
        if not self.scored or not scored:
            return None
        if self.disqualified:
            return 0.0
        return sum(c.passed for c in scored) / len(scored)

    @property
    def success(self) -> bool | None:
        score = self.score
        return None if score is None else score == 1.0

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(score=self.score, success=self.success)
        return data


class Validator:
    """Relative-tolerance check of every metric. Every engine uses MDGym's 5 % today; the engine
    subclasses are where an engine-specific default tolerance or value reading (`read_value`) goes,
    and validation.json names the validator that scored a task."""

    engine = "any"
    default_tolerance = DEFAULT_TOLERANCE

    def __init__(self, tolerance: float | None = None) -> None:
        self.tolerance = self.default_tolerance if tolerance is None else tolerance

    def read_value(self, raw: Any) -> tuple[float | None, str]:
        """(number, problem). Answers must be unitless numbers; strings with units do not count."""
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            return None, f"value {raw!r} is not a number"
        if not math.isfinite(raw):
            return None, f"value {raw!r} is not finite"
        return float(raw), ""

    def check_metric(self, task: BenchTask, metric: str, answer: dict[str, Any]) -> MetricCheck:
        truth = task.ground_truth.get(metric)
        check = MetricCheck(metric=metric, ground_truth=truth)
        if truth is not None:
            check.tolerance = task.tolerance_for(metric, self.tolerance)
        if metric not in answer:
            check.note = "missing from final_answer.json"
            if truth is not None:
                check.passed = False
            return check
        value, problem = self.read_value(answer[metric])
        check.value = value
        if truth is None:
            check.note = problem or "no ground truth: not scored"
            return check
        if value is None:
            check.passed, check.note = False, problem
            return check
        if truth == 0.0:
            check.relative_error = None
            check.passed = abs(value) <= check.tolerance
            check.note = "ground truth 0: absolute tolerance"
        else:
            check.relative_error = abs(value - truth) / abs(truth)
            check.passed = check.relative_error <= check.tolerance
        return check

    def validate(self, task: BenchTask, answer: dict[str, Any] | None, problem: str = "") -> Validation:
        result = Validation(task=task.id, engine=task.engine, validator=type(self).__name__, scored=task.scored,
                            answer_found=answer is not None)
        if problem:
            result.problems.append(problem)
        answer = answer or {}
        result.checks = [self.check_metric(task, metric, answer) for metric in task.metrics]
        result.answered = [m for m in task.metrics if m in answer]
        result.extra_keys = [k for k in answer if k not in task.metrics]
        by_form: dict[str, str] = {normalize_key(m): m for m in task.metrics}
        for key in result.extra_keys:
            metric = by_form.get(normalize_key(key))
            if metric is not None and metric not in answer:
                result.key_hints.append(f"key {key!r} matches metric {metric!r} only after normalising case and "
                                        "spacing; keys must match exactly, so it was not scored")
        return result


class LammpsValidator(Validator):
    engine = "lammps"


class GromacsValidator(Validator):
    engine = "gromacs"


class RaspaValidator(Validator):
    engine = "raspa"


class ZeoppValidator(Validator):
    engine = "zeopp"


VALIDATORS: dict[str, type[Validator]] = {v.engine: v for v in (LammpsValidator, GromacsValidator, RaspaValidator,
                                                               ZeoppValidator)}


def validator_for(engine: str, tolerance: float | None = None) -> Validator:
    return VALIDATORS.get(engine, Validator)(tolerance)
