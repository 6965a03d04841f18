"""The one reader of GROMACS output, used by the handlers, the physics gates and the analyses.

`read_output(job_dir)` reads a job folder once: the screens (the user's stdout/stderr, gmx-grompp.out,
gmx-mdrun.out, md.log) with their message blocks, and, for a protocol job, every step the driver ran
(driver.json, gmx-<step>.out). `read_energies` reads an .edr (pyedr) for the gates (handlers.run_data)
and the analyses alike; `mdrun_timing` reads mdrun's own accounting from its log.

Message blocks ("NOTE 1 [file x.mdp]:", "WARNING 1 [...]:", "ERROR 1 [...]:", "Fatal error:") are
found by one scanner (`messages`) and shown two ways: per grompp step with the file they name
(`grompp_messages`, for the protocols' method text and the dry run) and as the handlers match them
(`GromacsOutput.errors` / `.warnings`). grompp notes and warnings are surfaced, never hidden."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from simagent.errors import ReadError
from tools.gromacs.driver import RECORD_FILE, DriverRecord, fatal_error

# The screens a job's messages are read from, in this order: a user's job (grompp then mdrun into
# stdout.txt, stderr.txt, md.log) and a protocol stage's grompp and mdrun steps.
SCREEN = "stdout.txt"
SCREENS = (SCREEN, "stderr.txt", "gmx-grompp.out", "gmx-mdrun.out", "md.log")
_HEADER = re.compile(r"^(NOTE|WARNING|ERROR) \d+ \[([^\]]*)\]:(.*)$")
_TIME = re.compile(r"^\s*Time:\s+([0-9.eE+-]+)\s+([0-9.eE+-]+)")
_PERF = re.compile(r"^Performance:\s+([0-9.eE+-]+)")
# A non-finite number as C's printf writes it ("nan", "-nan", "inf", "-inf"), as a whole word.
_NON_FINITE = r"[-+]?\b(?:nan|inf)\b"
# GROMACS' own words for dynamics going unstable (mdrun's constraint, SETTLE, domain decomposition and
# energy checks; the minimisers' summary and -v progress lines). The first line of each kind is kept
# as a warning. Whole phrases only: every md.log holds "epsilon-rf = inf" in its parameter dump and
# the SETTLE paper in its citations, every fatal error ends "For more information ...", and none of
# those says that a run went wrong.
_UNSTABLE_LINES = (
    r"LINCS WARNING",
    r"can not be settled",
    r"Segmentation fault",
    r"moved more than the distance allowed",
    r"is not within the domain",
    # "Step 12: The total potential energy is nan, which is not finite. ..." and "At step 12 detected
    # non-finite forces on 3 atoms" (mdrun), "... the force on at least one atom is not finite." (minimisers)
    rf"potential energy is {_NON_FINITE}|is not finite|detected non-finite forces",
    # the minimisers' "Potential Energy  = -nan", "Maximum force     =   inf on atom 5", "Fmax= inf"
    rf"(?:Potential Energy|Maximum force|Norm of force)\s*=\s*{_NON_FINITE}|\b(?:Epot|Fmax)=\s*{_NON_FINITE}",
)
# Any of these in the screens: the run was (or went) unstable.
_UNSTABLE = re.compile("|".join(_UNSTABLE_LINES))


@dataclass
class Message:
    """One message block: its kind (NOTE, WARNING, ERROR or FATAL), the place grompp names ("" for a
    Fatal error), the header line, any text after the header's colon, and the lines under it up to a
    blank line (or GROMACS' "For more information" footer)."""

    kind: str
    where: str
    header: str
    rest: str
    lines: list[str]

    @property
    def body(self) -> str:
        return " ".join([self.rest, *self.lines] if self.rest else self.lines)


def messages(text: str) -> list[Message]:
    """Every NOTE/WARNING/ERROR block and Fatal error paragraph of grompp/mdrun output, in order."""
    found = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        header = _HEADER.match(line)
        if header is None and not line.startswith("Fatal error:"):
            i += 1
            continue
        kind, where, rest = header.groups() if header else ("FATAL", "", line.removeprefix("Fatal error:"))
        body = []
        i += 1
        while i < len(lines) and lines[i].strip() and not lines[i].startswith("For more information"):
            body.append(lines[i].strip())
            i += 1
        found.append(Message(kind=kind, where=where, header=line, rest=rest.strip(), lines=body))
    return found


@dataclass
class GromppMessages:
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def grompp_messages(text: str) -> GromppMessages:
    """NOTE/WARNING/ERROR blocks of grompp output, each joined into one line and followed by the place
    it names ("... [file x.mdp]"), plus the Fatal error paragraph if any."""
    found = GromppMessages()
    lists = {"NOTE": found.notes, "WARNING": found.warnings, "ERROR": found.errors}
    for message in messages(text):
        if message.kind in lists:
            lists[message.kind].append(f"{message.body} [{message.where}]")
    fatal = fatal_error(text)
    if fatal:
        found.errors.append(fatal)
    return found


def handler_messages(text: str) -> tuple[list[str], list[str]]:
    """(errors, warnings) as the handlers match them: Fatal error and ERROR blocks without their
    headers, WARNING blocks with theirs, each once; then the first line of each kind of instability."""
    errors: list[str] = []
    warnings: list[str] = []
    for message in messages(text):
        if message.kind == "NOTE":
            continue
        joined = " ".join([message.header, *message.lines])
        joined = re.sub(r"^(Fatal error:|ERROR \d+ \[[^\]]*\]:)\s*(ERROR:\s*)?", "", joined).strip()
        kind = warnings if message.kind == "WARNING" else errors
        if joined and joined not in kind:
            kind.append(joined)
    lines = text.splitlines()
    for pattern in _UNSTABLE_LINES:
        for line in lines:
            if re.search(pattern, line) and line.strip() not in warnings:
                warnings.append(line.strip())
                break
    return errors, warnings


def unstable_message(text: str) -> re.Match | None:
    """The first of GROMACS' messages for a run going unstable in `text` (see _UNSTABLE_LINES)."""
    return _UNSTABLE.search(text)


def non_finite_row(text: str) -> str | None:
    """The first line made only of numbers of which one is not finite (a row of md.log's energy
    table after the run blew up), or None. Parameter lines ("epsilon-rf = inf") are not such rows."""
    for line in text.splitlines():
        if "nan" not in line and "inf" not in line:
            continue
        words = line.split()
        if not any(re.fullmatch(_NON_FINITE, w) for w in words):
            continue
        try:
            [float(w) for w in words]
        except ValueError:
            continue
        return line.strip()
    return None


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
class GromacsOutput:
    """What one job folder holds, read once (see the module docstring)."""

    exists: bool = False  # any screen output at all
    text: str = ""  # the screens joined, in SCREENS order
    errors: list[str] = field(default_factory=list)  # "Fatal error" and "ERROR n" blocks, one line each
    warnings: list[str] = field(default_factory=list)  # "WARNING n" blocks, then instability lines
    steps: list[StepOutput] = field(default_factory=list)  # the driver's steps (a protocol job)
    finished: bool = False  # the driver ran every step
    failed_step: str | None = None
    record_problem: str | None = None  # why there is no driver record (a user's job has none)

    def find(self, pattern: str, warnings: bool = False) -> re.Match | None:
        """The first error (and, with warnings, warning, then anywhere in the screens) matching."""
        for message in self.errors + (self.warnings if warnings else []):
            found = re.search(pattern, message)
            if found:
                return found
        return re.search(pattern, self.text) if warnings else None

    @property
    def unstable(self) -> bool:
        """The screens show the run going unstable: one of GROMACS' messages for it, or a non-finite
        number in an energy table of the log ("   7.38903e+03   -1.02244e+04   -nan")."""
        return unstable_message(self.text) is not None or non_finite_row(self.text) is not None

    @property
    def step_notes(self) -> list[str]:
        return [f"{s.name}: {n}" for s in self.steps for n in s.messages.notes]

    @property
    def step_warnings(self) -> list[str]:
        return [f"{s.name}: {w}" for s in self.steps for w in s.messages.warnings]

    @property
    def step_errors(self) -> list[str]:
        return [f"{s.name}: {e}" for s in self.steps for e in s.messages.errors]

    def engine_time_s(self, job_dir: Path) -> float:
        """mdrun wall time summed over the job's mdrun steps (from their .log files)."""
        record = _record(job_dir)
        commands = {step.name: step.command for step in record.steps} if record else {}
        total = 0.0
        for step in self.steps:
            if step.tool != "mdrun":
                continue
            args = commands.get(step.name, [])
            deffnm = args[args.index("-deffnm") + 1] if "-deffnm" in args else "md"
            timing = mdrun_timing(job_dir / f"{deffnm}.log")
            if timing:
                total += timing.wall_s
        return total


def _record(job_dir: Path) -> DriverRecord | None:
    path = job_dir / RECORD_FILE
    if not path.is_file():
        return None
    try:
        return DriverRecord.model_validate_json(path.read_text())
    except ValueError:
        return None


def read_output(job_dir: Path) -> GromacsOutput:
    """The screens of a job folder and, when the driver ran it, every step: exit codes, grompp
    messages, fatal errors."""
    out = GromacsOutput()
    texts = [p.read_text(errors="replace") for p in (job_dir / name for name in SCREENS) if p.is_file()]
    if texts:
        out.exists = True
        out.text = "\n".join(texts)
        out.errors, out.warnings = handler_messages(out.text)
    record = _record(job_dir)
    if record is None:
        stderr = (job_dir / "stderr.txt").read_text(errors="replace") if (job_dir / "stderr.txt").is_file() else ""
        out.record_problem = (f"no {RECORD_FILE} in {job_dir}: the driver did not start"
                              + (f" ({stderr.strip().splitlines()[-1]})" if stderr.strip() else ""))
        return out
    for step in record.steps:
        path = job_dir / f"gmx-{step.name}.out"
        text = path.read_text(errors="replace") if path.is_file() else ""
        tool = step.command[2] if len(step.command) > 2 and step.command[1] == "-quiet" else step.command[0]
        found = grompp_messages(text) if tool == "grompp" else GromppMessages(
            errors=[e for e in [fatal_error(text)] if e])
        out.steps.append(StepOutput(name=step.name, tool=tool, returncode=step.returncode, wall_s=step.wall_s,
                                    messages=found, text=text))
    out.finished, out.failed_step = record.finished, record.failed_step
    return out
