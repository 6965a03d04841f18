"""The orchestrator: one folder per task, the prompt, the agent within its budget, the answer, the
validation and the failure taxonomy; resume skips tasks that already finished.

Session layout (OUT):
    session.json               agent, tolerance, engine versions, harness version
    results.csv, summary.md, score_by_level.png
    tasks/<id>/trajectory_log.jsonl, final_answer.json (a copy), validation.json
    tasks/<id>/workdir/        the agent's folder: prompt.md, task.json (no ground truth), its runs
validation.json is written last, so its presence marks a finished task; a task whose folder lacks
it (interrupted session) is run again from a clean folder.
"""

from __future__ import annotations

import json
import shutil
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simagent.bench.agents import AGENT_STDERR, STOPPING, Agent, AgentRun, SimagentAgent, make_agent, stop_all_agents
from simagent.bench.evidence import scan_engine_runs, seeds_in
from simagent.bench.tasks import DEFAULT_TOLERANCE, BenchInputError, BenchTask, collect_tasks, read_json_object
from simagent.bench.taxonomy import as_dicts, classify, fabrication
from simagent.bench.trajectory import TRAJECTORY_LOG, TrajectoryLog, read_trajectory
from simagent.bench.validate import Validation, validator_for

FINAL_ANSWER = "final_answer.json"
VALIDATION = "validation.json"
SESSION = "session.json"
PROMPT = "prompt.md"
TASKS_DIR = "tasks"
WORKDIR = "workdir"
DATA_KINDS = ("structures", "potentials")


class SessionInterrupted(Exception):
    """Raised in a task thread whose agent was stopped because the session is ending."""


def _terminate_as_interrupt():
    """SIGTERM ends a session like Ctrl-C (agents stopped, nothing recorded for unfinished tasks);
    returns the function that puts the previous handler back. Only the main thread may do this."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def interrupt(signum, frame):  # noqa: ARG001
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    return lambda: signal.signal(signal.SIGTERM, previous)


@dataclass
class TaskOutcome:
    """One task's result, as written to validation.json and to one row of results.csv."""

    task: BenchTask
    folder: Path
    validation: dict[str, Any]
    findings: list[dict[str, str]]
    agent_run: dict[str, Any]
    wall_s: float
    seeds: dict[str, dict[str, int]] = field(default_factory=dict)
    resumed: bool = False

    @property
    def score(self) -> float | None:
        return self.validation.get("score")

    @property
    def success(self) -> bool | None:
        return self.validation.get("success")

    def row(self) -> dict[str, Any]:
        checks = [c for c in self.validation.get("checks", []) if c.get("passed") is not None]
        return {
            "id": self.task.id, "engine": self.task.engine, "level": self.task.level,
            "score": "" if self.score is None else round(self.score, 4),
            "success": "" if self.success is None else str(self.success).lower(),
            "scored": str(self.task.scored).lower(),
            "metrics_passed": f"{sum(bool(c['passed']) for c in checks)}/{len(checks)}" if checks else "",
            "wall_s": round(self.wall_s, 1), "budget_s": round(self.task.budget_s, 1),
            "failure_categories": ";".join(dict.fromkeys(f["category"] for f in self.findings)),
            "timed_out": str(bool(self.agent_run.get("timed_out"))).lower(),
            "agent_exit_code": "" if self.agent_run.get("exit_code") is None else self.agent_run["exit_code"],
            "seeds": json.dumps(self.seeds, sort_keys=True) if self.seeds else "",
            "resumed": str(self.resumed).lower(),
            "folder": str(self.folder),
        }  # fmt: skip


def supplied_files(data_root: Path | None, task: BenchTask) -> list[Path]:
    """Files under DATA_ROOT/<ENGINE>/{structures,potentials}/<ID>/ (engine folder in any case)."""
    if data_root is None:
        return []
    found: list[Path] = []
    for engine_dir in sorted(p for p in Path(data_root).iterdir() if p.is_dir() and p.name.lower() == task.engine):
        for kind in DATA_KINDS:
            folder = engine_dir / kind / task.id
            if folder.is_dir():
                found += sorted(p.resolve() for p in folder.iterdir() if p.is_file())
    return found


def build_prompt(task: BenchTask, workdir: Path, supplied: list[Path]) -> str:
    """The task as an agent reads it: what to compute, which files it has, where the answer goes."""
    metrics = "\n".join(f"- `{m}`" for m in task.metrics)
    files = "\n".join(f"- {p}" for p in supplied) or "- none (the description names what to use)"
    example = json.dumps({m: 0.0 for m in task.metrics})
    return f"""# Task {task.id} ({task.engine}, level {task.level or '-'})

{task.task.problem_description.strip()}

## Required metrics

{metrics}

## Supplied files

{files}

## Working folder and answer

Work in {workdir}. Run the simulations you need there (engine: {task.engine}); the task file without
its ground truth is {workdir / SimagentAgent.TASK_FILE}.
When done, write {workdir / FINAL_ANSWER}: one JSON object whose keys are exactly the metric names
above (same spelling, case and spacing) and whose values are plain unitless numbers in the units the
description asks for, e.g. {example}. Leave out a metric you could not compute; do not guess.

Time budget: {task.budget_s:.0f} s ({task.task.budget_rule}); the agent is stopped when it
runs out.
"""


def engine_versions(engines: set[str]) -> dict[str, str]:
    """The version of each engine the tasks use, or why it could not be read."""
    from simagent.engines import get_engine

    versions: dict[str, str] = {}
    for engine in sorted(engines):
        try:
            versions[engine] = str(get_engine(engine).version())
        except Exception as err:  # noqa: BLE001 - a missing engine is a fact to record, not a crash
            versions[engine] = f"unavailable ({type(err).__name__}: {err})"
    return versions


class Orchestrator:
    """Runs tasks through one agent into `out`, resuming finished ones."""

    def __init__(self, agent: Agent, out: Path, tolerance: float | None = None, parallel: int = 1,
                 data_root: Path | None = None, progress: Callable[[str], None] | None = None,
                 budget_for: Callable[[BenchTask], float] | None = None) -> None:
        if parallel < 1:
            raise BenchInputError("--parallel must be at least 1")
        if tolerance is not None and not 0 < tolerance < 1:
            raise BenchInputError("--tolerance must be a relative tolerance between 0 and 1 (0.05 = 5 %)")
        if data_root is not None and not Path(data_root).is_dir():
            raise BenchInputError(f"data root {data_root} is not a folder")
        self.agent = agent
        self.out = Path(out).resolve()
        self.tolerance = tolerance
        self.parallel = parallel
        self.data_root = Path(data_root).resolve() if data_root else None
        self.progress = progress or (lambda line: None)
        self.budget_for = budget_for or (lambda task: task.budget_s)

    # -- session -----------------------------------------------------------------------------

    def session_info(self, tasks: list[BenchTask]) -> dict[str, Any]:
        from simagent import __version__

        return {
            "agent": self.agent.describe(),
            "tolerance": self.tolerance if self.tolerance is not None else DEFAULT_TOLERANCE,
            "data_root": str(self.data_root) if self.data_root else None,
            "simagent_version": __version__,
            "engine_versions": engine_versions({t.engine for t in tasks}),
        }

    def check_out_folder(self) -> None:
        """A folder made by another agent is not resumed into (its results would mix)."""
        previous = read_json_object(self.out / SESSION)
        if previous is not None and previous.get("agent") != self.agent.describe():
            raise BenchInputError(f"{self.out} holds a session of agent {previous.get('agent')}; "
                                  f"use another --out for agent {self.agent.describe()}")
        if self.out.exists() and not self.out.is_dir():
            raise BenchInputError(f"--out {self.out} is a file, not a folder")

    def run(self, tasks: list[BenchTask]) -> list[TaskOutcome]:
        self.check_out_folder()
        self.out.mkdir(parents=True, exist_ok=True)
        info = self.session_info(tasks)
        info["tasks"] = [t.id for t in tasks]
        info["started_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        (self.out / SESSION).write_text(json.dumps(info, indent=2) + "\n")
        STOPPING.clear()
        pool = ThreadPoolExecutor(max_workers=self.parallel)
        restore = _terminate_as_interrupt()
        try:
            futures = [pool.submit(self.run_task, task) for task in tasks]
            outcomes = [future.result() for future in futures]
        except BaseException:
            # interrupted (Ctrl-C, SIGTERM): stop the agents now, record nothing for unfinished tasks
            stop_all_agents()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        finally:
            pool.shutdown(wait=True)
            restore()
        from simagent.bench.report import write_reports

        write_reports(self.out, outcomes, info)
        return outcomes

    # -- one task ------------------------------------------------------------------------------

    def task_folder(self, task: BenchTask) -> Path:
        return self.out / TASKS_DIR / task.id

    def finished(self, task: BenchTask) -> TaskOutcome | None:
        """The earlier outcome when this exact task file already finished with this agent and tolerance."""
        folder = self.task_folder(task)
        saved = read_json_object(folder / VALIDATION)
        if saved is None or saved.get("fingerprint") != task.fingerprint or saved.get("agent") != self.agent.describe():
            return None
        if saved.get("tolerance") != self.tolerance:  # scored under another --tolerance: score again
            return None
        return TaskOutcome(task=task, folder=folder, validation=saved["validation"],
                           findings=saved["failure_categories"],
                           agent_run=saved["agent_run"], wall_s=saved["wall_s"], seeds=saved.get("seeds", {}),
                           resumed=True)

    def run_task(self, task: BenchTask) -> TaskOutcome:
        done = self.finished(task)
        if done is not None:
            self.progress(f"{task.id}: finished earlier (score {done.score}), skipped")
            return done
        folder = self.task_folder(task)
        if folder.exists():
            shutil.rmtree(folder)  # an unfinished earlier attempt: start clean
        workdir = folder / WORKDIR
        workdir.mkdir(parents=True)
        log = TrajectoryLog(folder / TRAJECTORY_LOG)
        budget = self.budget_for(task)
        log.record("task_start", task=task.id, engine=task.engine, level=task.level, budget_s=budget,
                   agent=self.agent.describe())
        supplied = supplied_files(self.data_root, task)
        prompt = build_prompt(task, workdir, supplied)
        (workdir / PROMPT).write_text(prompt, encoding="utf-8")
        (workdir / SimagentAgent.TASK_FILE).write_text(json.dumps(task.public_task(), indent=2) + "\n")
        log.record("prompt", file=str(workdir / PROMPT), supplied=[str(p) for p in supplied])
        self.progress(f"{task.id}: running agent {self.agent.name} (budget {budget:.0f} s)")
        started = time.monotonic()
        log.record("agent_start", agent=self.agent.name, timeout_s=budget)
        try:
            agent_run = self.agent.execute(prompt, workdir, budget, task.engine, log=log)
        except Exception as err:  # noqa: BLE001 - an agent's crash is this task's failure, not the session's
            agent_run = AgentRun(exit_code=None, timed_out=False, wall_s=time.monotonic() - started,
                                 message=f"the agent raised {type(err).__name__}: {err}")
        wall = time.monotonic() - started
        if STOPPING.is_set():
            log.record("interrupted", wall_s=round(wall, 3))
            raise SessionInterrupted(f"{task.id}: the session was interrupted; the task runs again on resume")
        log.record("agent_end", exit_code=agent_run.exit_code, timed_out=agent_run.timed_out,
                   wall_s=round(agent_run.wall_s, 3), message=agent_run.message)
        answer, problem = self.read_answer(workdir, folder)
        log.record("answer", found=answer is not None, keys=sorted(answer) if answer else [], problem=problem)
        validation = validator_for(task.engine, self.tolerance).validate(task, answer, problem)
        runs = scan_engine_runs(workdir)
        agent_errors = _tail_text(workdir / AGENT_STDERR)
        logged = read_trajectory(folder / TRAJECTORY_LOG)
        fabricated = fabrication(validation, runs, logged)
        if fabricated is not None:
            validation.disqualify(fabricated.evidence)
        findings = as_dicts(classify(validation, agent_run, runs, logged, agent_errors))
        seeds = seeds_in(workdir)
        outcome = TaskOutcome(task=task, folder=folder, validation=validation.as_dict(), findings=findings,
                              agent_run=_run_dict(agent_run), wall_s=wall, seeds=seeds)
        log.record("validation", score=validation.score, success=validation.success,
                   failure_categories=[f["category"] for f in findings])
        self.save(outcome, validation)
        log.record("task_end", wall_s=round(wall, 3))
        shown = "unscored" if validation.score is None else f"score {validation.score:.2f}"
        cats = f" [{', '.join(f['category'] for f in findings)}]" if findings else ""
        self.progress(f"{task.id}: {shown} in {wall:.0f} s{cats}")
        return outcome

    @staticmethod
    def read_answer(workdir: Path, folder: Path) -> tuple[dict[str, Any] | None, str]:
        source = workdir / FINAL_ANSWER
        if not source.is_file():
            return None, ""
        shutil.copy2(source, folder / FINAL_ANSWER)
        answer = read_json_object(source)
        if answer is None:
            return None, "final_answer.json is not a JSON object"
        return answer, ""

    def save(self, outcome: TaskOutcome, validation: Validation) -> None:
        data = {
            "task": outcome.task.id, "task_file": str(outcome.task.path), "fingerprint": outcome.task.fingerprint,
            "agent": self.agent.describe(), "engine": outcome.task.engine, "level": outcome.task.level,
            "reference": outcome.task.reference, "score": validation.score, "success": validation.success,
            "validation": outcome.validation, "failure_categories": outcome.findings,
            "agent_run": outcome.agent_run, "wall_s": outcome.wall_s, "budget_s": self.budget_for(outcome.task),
            "seeds": outcome.seeds, "tolerance": self.tolerance,
        }  # fmt: skip
        tmp = outcome.folder / (VALIDATION + ".tmp")
        tmp.write_text(json.dumps(data, indent=2, default=str) + "\n")
        tmp.replace(outcome.folder / VALIDATION)


def _run_dict(run: AgentRun) -> dict[str, Any]:
    return {"exit_code": run.exit_code, "timed_out": run.timed_out, "wall_s": round(run.wall_s, 3),
            "message": run.message}


def _tail_text(path: Path, size: int = 4000) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[-size:]
    except OSError:
        return ""


def run_session(task_paths: list[Path], agent_name: str, out: Path, *, data_root: Path | None = None,
                parallel: int = 1, command: str | None = None, tolerance: float | None = None,
                backend: str | None = None, progress: Callable[[str], None] | None = None) -> list[TaskOutcome]:
    """`simagent bench run`: every input is checked (tasks, agent, options, --out) before anything
    is written, so bad input leaves no partial results."""
    tasks = collect_tasks(list(task_paths))
    agent = make_agent(agent_name, command=command, data_root=data_root, backend=backend)
    orchestrator = Orchestrator(agent, out, tolerance=tolerance, parallel=parallel, data_root=data_root,
                                progress=progress)
    orchestrator.check_out_folder()
    return orchestrator.run(tasks)
