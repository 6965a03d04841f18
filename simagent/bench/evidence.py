"""What engine runs happened in a task's folder, read from the files they left behind.

Two kinds of evidence, so any agent can be judged the same way:
* simagent job folders: `status.json` (simagent.executor) with the exit status, plus the engine's
  own log in the same folder; a run counts as successful only when both say so;
* bare engine logs an agent left without simagent: a LAMMPS log that reached "Total wall time",
  a GROMACS md.log that reached "Finished mdrun", a RASPA output that reached "Simulation finished",
  Zeo++ result files (.res, .sa, .vol, .psd_histo) that are not empty.
Each engine's adapter declares its logs and their end marker (simagent.engines: `log_patterns`,
`finished_marker`, `run_logs`); this module names no engine.
A log file can of course be forged by a determined agent; the rule is the one MDGym applies (an
answer must be backed by a run in the task's folder), not a proof.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from simagent.engines import all_engines, get_engine
from simagent.executor import STATUS_FILE, STDERR_FILE, STDOUT_FILE, read_record

TAIL_CHARS = 4000  # how much of a log's end is kept to classify a failure


@dataclass
class EngineRun:
    folder: str  # relative to the scanned root
    engine: str
    succeeded: bool
    source: str  # "status.json" or the log file's name
    exit_status: int | None = None
    wall_s: float | None = None
    timed_out: bool = False
    message: str = ""
    logs: list[str] = field(default_factory=list)
    error_text: str = ""  # the end of the log / stderr of a failed run

    def as_dict(self) -> dict:
        data = asdict(self)
        data.pop("error_text")
        return data


def _tail(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - TAIL_CHARS))
            return handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def _engine_logs(folder: Path) -> dict[str, list[Path]]:
    """Engine logs in `folder`, per registered engine (each adapter's `run_logs`)."""
    found: dict[str, list[Path]] = {}
    if folder.is_dir():
        for adapter in all_engines():
            logs = adapter.run_logs(folder)
            if logs:
                found[adapter.name] = logs
    return found


def _log_finished(engine: str, path: Path) -> bool:
    marker = get_engine(engine).finished_marker
    return marker in _tail(path) if marker else path.stat().st_size > 0


def _job_engine(folder: Path) -> str:
    try:
        return str(json.loads((folder / "job.json").read_text()).get("engine", ""))
    except (OSError, ValueError, AttributeError):
        return ""


def scan_engine_runs(root: Path) -> list[EngineRun]:
    """Every folder under `root` that holds a simagent job record or an engine log, as one run."""
    root = Path(root)
    if not root.is_dir():
        return []
    folders = {p.parent for p in root.rglob(STATUS_FILE)}
    for pattern in {pattern for adapter in all_engines() for pattern in adapter.log_patterns}:
        # the run folder holds the log (a pattern 'Output/System_*/*.data' reaches two folders down)
        folders |= {p.parents[pattern.count("/")] for p in root.rglob(pattern) if p.is_file()}
    runs = []
    for folder in sorted(folders):
        logs = _engine_logs(folder)
        record = read_record(folder)
        rel = str(folder.relative_to(root)) or "."
        if record is None and not logs:
            continue
        engine = _job_engine(folder) or (next(iter(logs)) if logs else "")
        log_files = [p for paths in logs.values() for p in paths]
        log_names = [str(p.relative_to(folder)) for p in log_files]
        if record is not None:
            has_log = bool(logs.get(engine)) if engine else bool(logs)
            ok = record.status.value == "succeeded" and has_log
            message = record.message or ("" if has_log or record.status.value != "succeeded"
                                         else "status.json says succeeded but no engine log is present")
            run = EngineRun(folder=rel, engine=engine, succeeded=ok, source=STATUS_FILE,
                            exit_status=record.returncode, wall_s=record.wall_s, timed_out=record.timed_out,
                            message=message, logs=log_names)
        else:
            ok = any(_log_finished(name, p) for name, paths in logs.items() for p in paths)
            run = EngineRun(folder=rel, engine=engine, succeeded=ok, source=log_names[0], logs=log_names,
                            message="" if ok else "the engine log never reached its normal end")
        if not run.succeeded:
            parts = [_tail(p) for p in log_files]
            parts += [_tail(folder / name) for name in (STDERR_FILE, STDOUT_FILE)]
            parts.append(run.message)
            run.error_text = "\n".join(x for x in parts if x)
        runs.append(run)
    return runs


def seeds_in(root: Path) -> dict[str, dict[str, int]]:
    """Random seeds the runs used, from simagent's job.json files: {job folder: {param: seed}}."""
    seeds: dict[str, dict[str, int]] = {}
    for status in sorted(Path(root).rglob(STATUS_FILE)):  # job folders only, not copies of their inputs
        job_file = status.parent / "job.json"
        try:
            params = json.loads(job_file.read_text()).get("params", {})
        except (OSError, ValueError, AttributeError):
            continue
        found = {k: v for k, v in params.items() if "seed" in k.lower() and isinstance(v, int)}
        if found:
            seeds[str(job_file.parent.relative_to(root))] = found
    return seeds
