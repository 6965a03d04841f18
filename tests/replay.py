"""Replay fixtures: request -> answer with the engines replaced by recorded runs.

The idea is atomate2's `mock_vasp` (its test utilities check the inputs a maker writes against
reference files and copy reference outputs in instead of running VASP); this is our own version for
every protocol in simagent.protocols.PRECEDENCE.

A case (`ReplayCase`) is a request in words, the protocol the planner must choose for it, the
parameter overrides that keep the recorded run small, and the output files the gates and the
analysis read. Its recording lives in tests/files/replay/<engine>/<protocol>/<plan job id>/:
`inputs/` (the rendered inputs, the references) and `outputs/` (what the real engine wrote).

`replay_request(case, settings)` runs the whole graph (query, planner, input writer, precheck,
review, runner, postcheck/gates, analysis, response). Only the engine is replaced: the executor
compares each job's rendered inputs with the references (a unified diff on mismatch) and copies the
recorded outputs into the job folder, and the engines' dry run (which would start the engine) is
skipped; the references passed it when they were recorded.

Re-recording, intentionally (a protocol's inputs changed on purpose):

    SIMAGENT_REPLAY_RECORD=1 PYTHONPATH=$PWD .venv/bin/python -m pytest tests/test_replay.py -k <protocol>

runs the real engines (nice -n 10) through the same graph and overwrites that case's recording.
Review the diff of tests/files/replay/ before committing it: a recording is a real run's output.
"""

from __future__ import annotations

import difflib
import fnmatch
import gzip
import json
import math
import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from simagent import supervise
from simagent.engines import Launch, all_engines
from simagent.executor import (
    CANCEL_FILE,
    STATUS_FILE,
    STDERR_FILE,
    STDOUT_FILE,
    Executor,
    JobHandle,
    JobRecord,
    LocalExecutor,
    inputs_digest,
    read_record,
    write_record,
)
from simagent.models import Answer, Job, JobStatus
from simagent.protocols import get_protocol

REPLAY_ROOT = Path(__file__).parent / "files" / "replay"
RECORD_ENV = "SIMAGENT_REPLAY_RECORD"
RECORD = "record.json"  # the recorded job's status, return code and message
ANSWER = "answer.json"  # the answer of the recorded real run (status, numbers, units)
# Paths that differ between checkouts and machines, written as placeholders in the references.
_PLACES = {"@REPO@": str(Path(__file__).resolve().parents[1]), "@PREFIX@": sys.prefix}


# Files of a job folder that are never recorded outputs: the executor's and supervisor's bookkeeping,
# and the engine's terminal output (a case lists stdout.txt when its gates read it).
_NOT_OUTPUTS = {STATUS_FILE, STDERR_FILE, supervise.PROCESS_FILE, supervise.HEARTBEAT_FILE, CANCEL_FILE, "job.json"}


def recording() -> bool:
    return os.environ.get(RECORD_ENV, "") not in ("", "0")


@dataclass(frozen=True)
class ReplayCase:
    """One request answered by one protocol, recorded once from real engine runs."""

    protocol: str
    request: str
    overrides: dict = field(default_factory=dict)  # parameters that keep the recorded run small
    # glob patterns of the files (per job folder) the gates and the analysis read; the default keeps
    # every file the engine wrote except its stdout/stderr and the executor's bookkeeping
    outputs: tuple[str, ...] = ("*",)
    # True: the decision backend is told to choose `protocol` (as solve does for a complete description)
    # instead of leaving the choice to the expert backend's precedence
    select: bool = False
    # Not empty: why no engine run can be recorded here (VASP is licensed); only the inputs are kept,
    # checked, and the job replays as failed with this reason
    inputs_only: str = ""
    env: dict = field(default_factory=dict)  # environment the request needs (e.g. SIMAGENT_VASP_COMMAND)
    answered: bool = True  # False: the answer is a refusal or a failure the case documents

    @property
    def folder(self) -> Path:
        engine, name = self.protocol.split("/")
        return REPLAY_ROOT / engine / name


# Words of an input that change from run to run without changing the simulation: the creation date
# lammps-interface writes into the first line of a LAMMPS data file.
_VOLATILE = [(re.compile(r"^Created on .*$", re.MULTILINE), "Created on @DATE@")]


def _normalise(text: str) -> str:
    # the longer place first: a virtualenv inside the checkout (a fresh clone's .venv) is the prefix
    for mark, place in sorted(_PLACES.items(), key=lambda item: -len(item[1])):
        text = text.replace(place, mark)
    for pattern, mark in _VOLATILE:
        text = pattern.sub(mark, text)
    return text


# A float written with more digits than a double holds reliably: its last ones depend on the order of
# floating-point sums, which a BLAS build or processor may change (1.6890877514220436e-05 recorded,
# ...219846e-05 replayed on another machine). Compared at 12 significant digits, a real change still shows.
_LONG_FLOAT = re.compile(r"-?\d+\.\d{12,}(?:[eE][-+]?\d+)?")
REL_TOL = 1e-10


def _rounded(text: str) -> str:
    return _LONG_FLOAT.sub(lambda m: f"{float(m.group(0)):.12g}", text)


def input_digits_agree(recorded: str, rendered: str) -> bool:
    """Two rendered input texts are the same up to the last digits of long floats."""
    return recorded == rendered or _rounded(recorded) == _rounded(rendered)


def same_answer(real: object, replayed: object) -> bool:
    """The recorded real run's answer summary equals the replayed one; numbers within REL_TOL (their last
    digits are floating-point summation order, not physics)."""
    if isinstance(real, dict) and isinstance(replayed, dict):
        return real.keys() == replayed.keys() and all(same_answer(real[k], replayed[k]) for k in real)
    if isinstance(real, list) and isinstance(replayed, list):
        return len(real) == len(replayed) and all(same_answer(a, b) for a, b in zip(real, replayed, strict=True))
    if isinstance(real, float) and isinstance(replayed, float):
        return math.isclose(real, replayed, rel_tol=REL_TOL, abs_tol=0.0)
    return real == replayed


# Files larger than this are stored gzip-compressed (name + ".gz") and expanded when read.
_PLAIN_LIMIT = 64 * 1024


def _store(data: bytes, folder: Path, name: str) -> None:
    """Write one file (name may be a relative path: RASPA writes into Output/System_0/)."""
    (folder / name).parent.mkdir(parents=True, exist_ok=True)
    if len(data) > _PLAIN_LIMIT:
        (folder / (name + ".gz")).write_bytes(gzip.compress(data, mtime=0))
    else:
        (folder / name).write_bytes(data)


def _stored(folder: Path) -> dict[str, bytes]:
    """A recording folder's files by their original names (gzip expanded)."""
    if not folder.is_dir():
        return {}
    return {str(p.relative_to(folder)).removesuffix(".gz"):
            gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def input_mismatch(job: Job, reference: Path) -> str | None:
    """A unified diff between the job's rendered inputs and the reference folder (None: equal)."""
    rendered = {name: _normalise(text) for name, text in job.inputs.items()}
    recorded = {name: _normalise(data.decode()) for name, data in _stored(reference).items()}
    if not recorded:
        return f"job {job.id}: no reference inputs in {reference}"
    lines = []
    for name in sorted(set(rendered) | set(recorded)):
        old, new = recorded.get(name), rendered.get(name)
        if old == new or (old is not None and new is not None and input_digits_agree(old, new)):
            continue
        lines += difflib.unified_diff((old or "").splitlines(keepends=True), (new or "").splitlines(keepends=True),
                                      f"reference/{job.id}/{name}" if old is not None else "/dev/null",
                                      f"rendered/{job.id}/{name}" if new is not None else "/dev/null")
    return "".join(lines) or None


class ReplayExecutor(Executor):
    """Instead of the engine: check the inputs, copy the recorded outputs in, report the recorded
    status. With `record=True`: run the real engine (LocalExecutor) and store inputs, outputs and
    status. The n-th submission of a job id (an extension or a repair) has its own recording,
    `<job id>.attempt<n>`, so a repair loop replays too."""

    workers = 2

    def __init__(self, case: ReplayCase, record: bool = False) -> None:
        self.case, self.record = case, record
        self.mismatches: list[str] = []
        self.recordings: list[str] = []  # recording folder names, in submission order
        self._inner = LocalExecutor(max_parallel=1) if record and not case.inputs_only else None
        self._current: dict[str, str] = {}  # job id -> its latest recording folder name
        self._saved: set[str] = set()
        self._inputs: dict[str, dict[str, str]] = {}
        self._staged: dict[str, set[str]] = {}

    def submit(self, job: Job, job_dir: Path, command: list[str], env: dict[str, str], cores: int = 1) -> JobHandle:
        n = sum(1 for name in self.recordings if name.split(".attempt")[0] == job.id) + 1
        name = job.id if n == 1 else f"{job.id}.attempt{n}"
        self.recordings.append(name)
        self._current[job.id] = name
        folder = self.case.folder / name
        if self.record:
            self._inputs[name] = dict(job.inputs)
            self._staged[name] = {staged for names in job.stage_in.values() for staged in names}
            if self.case.inputs_only:  # nothing runs: the inputs are the whole recording
                self._save(job_dir, folder, JobRecord(job=job.id, status=JobStatus.failed, inputs_sha256="",
                                                      message=f"not run: {self.case.inputs_only}"))
                self._saved.add(name)
                return self._replay(job, job_dir, folder)
            for dep, names in job.stage_in.items():  # files a later job reads are outputs of its dependency
                for staged in names:
                    _store((job_dir / staged).read_bytes(), self.case.folder / self._current[dep] / "outputs", staged)
            return self._inner.submit(job, job_dir, ["nice", "-n", "10", *command], env, cores)
        return self._replay(job, job_dir, folder)

    def _replay(self, job: Job, job_dir: Path, folder: Path) -> JobHandle:
        recorded = json.loads((folder / RECORD).read_text()) if (folder / RECORD).is_file() else {}
        record = JobRecord(job=job.id, status=recorded.get("status", JobStatus.failed),
                           inputs_sha256=inputs_digest(job), returncode=recorded.get("returncode"),
                           message=recorded.get("message", ""), wall_s=0.0,
                           command=["replay", str(folder.relative_to(REPLAY_ROOT))])
        problem = input_mismatch(job, folder / "inputs")
        if problem:
            self.mismatches.append(problem)
            record.status, record.returncode = JobStatus.failed, 1
            record.message = "replay: the rendered inputs differ from the reference inputs"
        else:
            for output, data in _stored(folder / "outputs").items():
                (job_dir / output).parent.mkdir(parents=True, exist_ok=True)
                (job_dir / output).write_bytes(data)
        write_record(job_dir, record)
        return JobHandle(job.id, job_dir)

    def poll(self, handle: JobHandle) -> JobRecord:
        if not self.record or self.case.inputs_only:
            return read_record(handle.workdir)
        record = self._inner.poll(handle)
        name = self._current[handle.job_id]
        if record.status in (JobStatus.succeeded, JobStatus.failed) and name not in self._saved:
            self._saved.add(name)
            self._save(handle.workdir, self.case.folder / name, record)
        return record

    def cancel(self, handle: JobHandle) -> None:
        if self._inner:
            self._inner.cancel(handle)

    def shutdown(self) -> None:
        if self._inner:
            self._inner.shutdown()

    def _save(self, job_dir: Path, folder: Path, record: JobRecord) -> None:
        shutil.rmtree(folder / "inputs", ignore_errors=True)
        inputs = self._inputs[folder.name]
        for name, text in inputs.items():
            _store(_normalise(text).encode(), folder / "inputs", name)
        for path in sorted(job_dir.rglob("*")):
            name = str(path.relative_to(job_dir))
            if (not path.is_file() or path.is_symlink() or name in _NOT_OUTPUTS or name in inputs
                    or name in self._staged[folder.name]):
                continue
            if name == STDOUT_FILE and STDOUT_FILE not in self.case.outputs:
                continue
            if any(fnmatch.fnmatch(name, pattern) for pattern in self.case.outputs):
                _store(path.read_bytes(), folder / "outputs", name)
        (folder / RECORD).write_text(json.dumps(
            {"status": record.status.value, "returncode": record.returncode, "message": record.message,
             "recorded_wall_s": record.wall_s}, indent=1) + "\n")


@dataclass
class Replayed:
    answer: Answer
    job_dirs: dict[str, Path]  # plan job id -> folder the answer was computed from

    def result(self, quantity: str):
        found = [r for r in self.answer.answers if r.quantity == quantity]
        assert len(found) == 1, f"{quantity}: {[r.quantity for r in self.answer.answers]}"
        return found[0]


def _override(params: dict, overrides: dict, where: str) -> dict:
    """The parameters with the overrides applied; a dict override of a nested parameter model (e.g.
    the melt of lammps/energy_components) changes only the fields it names."""
    unknown = set(overrides) - set(params)
    assert not unknown, f"{where}: overrides that are not parameters: {sorted(unknown)}"
    merged = dict(params)
    for name, value in overrides.items():
        nested = isinstance(value, dict) and isinstance(params[name], dict)
        merged[name] = _override(params[name], value, f"{where}.{name}") if nested else value
    return merged


def replay_request(case: ReplayCase, settings, monkeypatch) -> Replayed:
    """The graph from request to answer with the engine replaced (or recorded, see the module doc)."""
    import simagent.session as session_module
    from simagent import jobrun

    record = recording()
    protocol = get_protocol(case.protocol)
    original = protocol.parameters

    def small(spec):
        params, defaults = original(spec)
        return protocol.validate_params(_override(params.model_dump(), case.overrides, case.protocol)), defaults

    monkeypatch.setattr(protocol, "parameters", small)
    if case.select:
        from simagent.backends.base import ProtocolSelection
        from simagent.backends.expert import ExpertBackend

        def select(self, spec, options):
            assert case.protocol in [o.name for o in options], f"{case.protocol} does not apply to the request"
            return ProtocolSelection(items=[ProtocolSelection.Item(protocol=case.protocol,
                                                                   properties=[p.name for p in spec.properties])],
                                     rationale="replay case: the protocol is chosen for the backend")

        monkeypatch.setattr(ExpertBackend, "select_protocols", select)
    for name, text in case.env.items():
        monkeypatch.setenv(name, text)
    executor = ReplayExecutor(case, record=record)
    monkeypatch.setattr(session_module, "executor_for", lambda settings: executor)
    if record:
        shutil.rmtree(case.folder, ignore_errors=True)
    if not record or case.inputs_only:
        for adapter in all_engines():  # the dry run starts the engine; the references passed it
            monkeypatch.setattr(adapter, "dry_run", lambda job, files=None: [])
        monkeypatch.setattr(jobrun, "engine_launch", lambda job: Launch(["replay"], {}))

    with session_module.Session(settings) as session:
        outcome = session.ask(case.request)
    if executor.mismatches:
        raise AssertionError(
            f"{case.protocol}: rendered inputs differ from the references in {case.folder}.\n"
            + "\n".join(executor.mismatches)
            + f"\nIf the change is intended, re-record from real runs: {RECORD_ENV}=1 pytest tests/test_replay.py "
            f"-k '{case.protocol}' (see tests/replay.py)")
    answer = outcome.answer
    assert answer is not None, f"{case.protocol}: no answer ({outcome.interrupt})"
    if answer.jobs:  # the protocol of the case made the plan
        assert any(case.protocol in d.detail for d in answer.decisions), (case.protocol, answer.decisions)
    summary = {"status": answer.status, "error": answer.error,
               "answers": [{"quantity": r.quantity, "value": r.value, "unit": r.unit, "uncertainty": r.uncertainty}
                           for r in answer.answers]}
    if record:  # what the real run answered, for comparison with every replay
        case.folder.mkdir(parents=True, exist_ok=True)
        (case.folder / ANSWER).write_text(json.dumps({"request": case.request, **summary}, indent=1) + "\n")
    else:
        if (case.folder / ANSWER).is_file():
            real = json.loads((case.folder / ANSWER).read_text())
            assert same_answer({k: real[k] for k in summary}, summary), (
                f"{case.protocol}: the replayed answer differs from the one of the recorded real run")
        recorded = sorted(p.name for p in case.folder.iterdir() if p.is_dir()) if case.folder.is_dir() else []
        assert sorted(executor.recordings) == recorded, (
            f"{case.protocol}: the runs {sorted(executor.recordings)} are not the recorded ones {recorded}")
    dirs = {Path(d).name: Path(d) for d in answer.jobs}
    return Replayed(answer, dirs)


# ---------------------------------------------------------------------------------------------
# Reading recorded outputs independently of the protocols' own readers (for the expectations)
# ---------------------------------------------------------------------------------------------


def printed(log: Path, **where: str) -> list[dict[str, str]]:
    """The `key=value` words of the lines a LAMMPS `print` wrote with the prefix SIMAGENT (not the
    echoed print command), those whose words include every `where` pair."""
    found = []
    for line in log.read_text().splitlines():
        if not line.startswith("SIMAGENT "):
            continue
        words = dict(word.split("=", 1) for word in line.split()[1:] if "=" in word)
        if all(words.get(k) == v for k, v in where.items()):
            found.append(words)
    return found


def value(log: Path, key: str, **where: str) -> float:
    """The last printed value of `key` (in the lines matching `where`)."""
    values = [float(words[key]) for words in printed(log, **where) if key in words]
    assert values, f"{log}: no printed {key} {where}"
    return values[-1]


def job_params(job_dir: Path) -> dict:
    """The parameters the job was rendered with (job.json, written with its inputs)."""
    return json.loads((job_dir / "job.json").read_text())["params"]


def thermo_blocks(log: Path) -> list[dict[str, list[float]]]:
    """The thermo tables of a LAMMPS log (header line starting 'Step' up to 'Loop time'), by column."""
    blocks, columns = [], None
    for line in log.read_text().splitlines():
        words = line.split()
        if words[:1] == ["Step"]:
            columns = words
            blocks.append({c: [] for c in columns})
        elif columns and line.startswith("Loop time"):
            columns = None
        elif columns and len(words) == len(columns):
            try:
                values = [float(w) for w in words]
            except ValueError:
                continue
            for c, v in zip(columns, values, strict=True):
                blocks[-1][c].append(v)
    return blocks
