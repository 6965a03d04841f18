"""Reading GROMACS output: energies from .edr (pyedr), grompp NOTE/WARNING/ERROR blocks and
mdrun fatal errors from the step outputs the driver keeps, mdrun's own timing from its log.

grompp notes and warnings are surfaced, never hidden: `read_job` collects them per step, and the
protocols put them into each Result's method text."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from simagent.errors import ReadError
from tools.gromacs.driver import RECORD_FILE, DriverRecord, fatal_error

_MESSAGE = re.compile(r"^(NOTE|WARNING|ERROR) \d+ \[([^\]]*)\]:\s*$")
_TIME = re.compile(r"^\s*Time:\s+([0-9.eE+-]+)\s+([0-9.eE+-]+)")
_PERF = re.compile(r"^Performance:\s+([0-9.eE+-]+)")


@dataclass
class GromppMessages:
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def grompp_messages(text: str) -> GromppMessages:
    """NOTE/WARNING/ERROR blocks of grompp output ("WARNING 1 [file x.mdp]:" then indented lines
    up to a blank line), each joined into one line, plus the Fatal error paragraph if any."""
    found = GromppMessages()
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        match = _MESSAGE.match(lines[i].strip())
        if match:
            kind, where = match.groups()
            body = []
            i += 1
            while i < len(lines) and lines[i].strip():
                body.append(lines[i].strip())
                i += 1
            message = f"{' '.join(body)} [{where}]"
            {"NOTE": found.notes, "WARNING": found.warnings, "ERROR": found.errors}[kind].append(message)
        i += 1
    fatal = fatal_error(text)
    if fatal:
        found.errors.append(fatal)
    return found


def read_energies(edr: Path) -> dict[str, np.ndarray]:
    """All energy terms of an .edr file ('Time' in ps, energies kJ/mol, 'Density' kg/m^3...)."""
    if not edr.is_file():
        raise ReadError(f"{edr.name} was not written")
    import pyedr

    try:
        data = pyedr.edr_to_dict(str(edr))
    except Exception as exc:  # noqa: BLE001 - pyedr raises plain exceptions on truncated files
        raise ReadError(f"cannot read {edr.name}: {exc}") from None
    return {k: np.asarray(v, dtype=float) for k, v in data.items()}


@dataclass
class MdrunTiming:
    core_s: float
    wall_s: float
    ns_per_day: float | None


def mdrun_timing(log: Path) -> MdrunTiming | None:
    """mdrun's own accounting at the end of its .log ('Time: core wall', 'Performance: ns/day')."""
    if not log.is_file():
        return None
    core = wall = perf = None
    for line in log.read_text(errors="replace").splitlines():
        match = _TIME.match(line)
        if match:
            core, wall = float(match.group(1)), float(match.group(2))
        match = _PERF.match(line)
        if match:
            perf = float(match.group(1))
    if wall is None:
        return None
    return MdrunTiming(core_s=core, wall_s=wall, ns_per_day=perf)


@dataclass
class StepOutput:
    name: str
    tool: str
    returncode: int | None
    wall_s: float | None
    messages: GromppMessages
    text: str


@dataclass
class GromacsJobOutput:
    steps: list[StepOutput]
    finished: bool
    failed_step: str | None

    @property
    def notes(self) -> list[str]:
        return [f"{s.name}: {n}" for s in self.steps for n in s.messages.notes]

    @property
    def warnings(self) -> list[str]:
        return [f"{s.name}: {w}" for s in self.steps for w in s.messages.warnings]

    @property
    def errors(self) -> list[str]:
        return [f"{s.name}: {e}" for s in self.steps for e in s.messages.errors]

    def engine_time_s(self, job_dir: Path) -> float:
        """mdrun wall time summed over the job's mdrun steps (from their .log files)."""
        total = 0.0
        for step in self.steps:
            if step.tool != "mdrun":
                continue
            record_args = step_args(job_dir, step.name)
            deffnm = record_args[record_args.index("-deffnm") + 1] if "-deffnm" in record_args else "md"
            timing = mdrun_timing(job_dir / f"{deffnm}.log")
            if timing:
                total += timing.wall_s
        return total


def step_args(job_dir: Path, name: str) -> list[str]:
    record = _record(job_dir)
    for step in record.steps if record else []:
        if step.name == name:
            return step.command
    return []


def _record(job_dir: Path) -> DriverRecord | None:
    path = job_dir / RECORD_FILE
    if not path.is_file():
        return None
    try:
        return DriverRecord.model_validate_json(path.read_text())
    except ValueError:
        return None


def read_job(job_dir: Path) -> GromacsJobOutput:
    """Every step the driver ran in this job folder: exit codes, grompp messages, fatal errors."""
    record = _record(job_dir)
    if record is None:
        stderr = (job_dir / "stderr.txt").read_text(errors="replace") if (job_dir / "stderr.txt").is_file() else ""
        raise ReadError(f"no {RECORD_FILE} in {job_dir}: the driver did not start"
                        + (f" ({stderr.strip().splitlines()[-1]})" if stderr.strip() else ""))
    steps = []
    for step in record.steps:
        path = job_dir / f"gmx-{step.name}.out"
        text = path.read_text(errors="replace") if path.is_file() else ""
        tool = step.command[2] if len(step.command) > 2 and step.command[1] == "-quiet" else step.command[0]
        messages = grompp_messages(text) if tool == "grompp" else GromppMessages(
            errors=[e for e in [fatal_error(text)] if e])
        steps.append(StepOutput(name=step.name, tool=tool, returncode=step.returncode, wall_s=step.wall_s,
                                messages=messages, text=text))
    return GromacsJobOutput(steps=steps, finished=record.finished, failed_step=record.failed_step)


def diagnose(job_dir: Path, message: str = "") -> str:
    """One line for the error agent: the failing step's fatal error, else the executor's message."""
    try:
        out = read_job(job_dir)
    except ReadError as err:
        return message or str(err)
    lines = out.errors[:3] or ([f"step {out.failed_step} failed"] if out.failed_step else []) or [message]
    return "; ".join(line for line in lines if line)
