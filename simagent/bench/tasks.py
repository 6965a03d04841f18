"""Benchmark task files: the MDGym task model plus what a benchmark needs (reference, tolerance).

A task file is one JSON object in MDGym's format (id, problem_description, level, metrics,
ground_truth, time_limit, engine). simagent's suite adds `reference` (where the ground truth comes
from) and may add `tolerance` (relative, one number or one per metric). A task without ground
truth is run and reported as unscored. Every file is checked before anything runs, so a bad file
stops the session with one message and leaves no partial results.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simagent.errors import RequestError
from simagent.solve import MDGymTask, TaskFileError, load_task

DEFAULT_TOLERANCE = 0.05  # MDGym: a metric passes within 5 % of the ground truth


class BenchInputError(RequestError):
    """The benchmark cannot start: a task path, task file, agent or option is wrong (nothing written)."""

    exit_code = 2


@dataclass(frozen=True)
class BenchTask:
    """One validated task with its file, a content fingerprint (for resume) and its tolerances."""

    task: MDGymTask
    path: Path
    fingerprint: str

    @property
    def id(self) -> str:
        return self.task.id

    @property
    def engine(self) -> str:
        return self.task.engine

    @property
    def level(self) -> str:
        return "" if self.task.level is None else str(self.task.level)

    @property
    def metrics(self) -> list[str]:
        return list(self.task.metrics)

    @property
    def ground_truth(self) -> dict[str, float]:
        return {k: float(v) for k, v in self.task.ground_truth.items()}

    @property
    def scored(self) -> bool:
        return bool(self.task.ground_truth)

    @property
    def budget_s(self) -> float:
        return self.task.budget_s

    @property
    def reference(self) -> Any:
        return getattr(self.task, "reference", None)

    def tolerance_for(self, metric: str, default: float) -> float:
        """Relative tolerance of one metric: the task's own (number or per-metric map), else `default`."""
        own = getattr(self.task, "tolerance", None)
        if isinstance(own, dict):
            return float(own.get(metric, default))
        if own is not None:
            return float(own)
        return default

    def public_task(self) -> dict[str, Any]:
        """The task as the agent may see it: no ground truth, no reference, no tolerance."""
        data = self.task.model_dump(mode="json")
        for hidden in ("ground_truth", "reference", "tolerance"):
            data.pop(hidden, None)
        return data


def _check_benchmark_fields(task: MDGymTask, path: Path) -> None:
    """What MDGym's model leaves open: numeric ground truths for declared metrics, sane tolerances."""
    problems = []
    for name, value in task.ground_truth.items():
        if name not in task.metrics:
            problems.append(f"ground_truth has {name!r}, which is not one of the task's metrics")
        elif isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            problems.append(f"ground_truth[{name!r}] must be a finite number, not {value!r}")
    tolerance = getattr(task, "tolerance", None)
    if tolerance is not None:
        values = tolerance.items() if isinstance(tolerance, dict) else [("tolerance", tolerance)]
        for name, value in values:
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
                problems.append(f"tolerance {name!r} must be a relative tolerance between 0 and 1, not {value!r}")
    if problems:
        raise BenchInputError(f"task file {path} is not a valid benchmark task: " + "; ".join(problems))


def load_bench_task(path: Path) -> BenchTask:
    path = Path(path)
    try:
        task = load_task(path)
    except TaskFileError as err:
        raise BenchInputError(str(err)) from None
    _check_benchmark_fields(task, path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return BenchTask(task=task, path=path.resolve(), fingerprint=digest)


def collect_tasks(paths: list[Path]) -> list[BenchTask]:
    """Task files named directly, or every *.json in the folders given (recursively), in a stable
    order; duplicate ids are an error (each task gets a folder named after its id)."""
    if not paths:
        raise BenchInputError("no task files or folders given")
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*.json") if p.is_file())
            if not found:
                raise BenchInputError(f"folder {path} holds no task files (*.json)")
            files += found
        elif path.is_file():
            files.append(path)
        else:
            raise BenchInputError(f"task path {path} does not exist")
    tasks: list[BenchTask] = []
    seen: dict[str, Path] = {}
    for file in dict.fromkeys(p.resolve() for p in files):
        task = load_bench_task(file)
        if task.id in seen:
            raise BenchInputError(f"task id {task.id!r} is used by both {seen[task.id]} and {file}")
        seen[task.id] = file
        tasks.append(task)
    return tasks


def read_json_object(path: Path) -> dict[str, Any] | None:
    """A JSON object from a file, or None when the file is missing or not a JSON object."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None
