"""Reading a LAMMPS job folder: the one output reader of the LAMMPS adapter, used by the gates and
handlers (tools.lammps.handlers) and by the protocols' analyses alike.

What it reads: ERROR/WARNING lines from the screen output, stderr and log.lammps (LAMMPS often prints
an error to the screen only), the failing input line, whether the input ran to its end, dangerous
neighbor-list builds, the loop times, the thermo tables (one per run/minimize), also of a crashed
run (a table ends at 'Loop time', an ERROR, or the end of the text), and the run a `timer timeout`
ended (WallStop).

NaN and inf in thermo are kept as they are in `thermo`, so the gates report them (the `finite` gate,
the NonFinite handler); the analyses' view (`runs`, `last_run()`) refuses them, so a diverged run
never becomes an averaged number.

Why not lammps-logfile (which the protocols used before): on the job folders of this machine (2,415
logs) both give the same tables, but lammps-logfile raises KeyError when an ERROR follows the memory
line (a crash at step 0), loses the table when a WARNING comes before its header, and its import
costs ~0.9 s (pandas, matplotlib.pyplot)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from simagent.errors import CalculationFailed, ReadError

SCREEN, LOG, STDERR = "stdout.txt", "log.lammps", "stderr.txt"
_LOOP = re.compile(r"^Loop time of ([0-9.eE+-]+) on(?: .* for (\d+) steps)?")
_WALL_LIMIT = "Wall time limit reached"  # LAMMPS `timer timeout` ended the run (later runs are skipped)
_TIMEOUT_SET = re.compile(r"^New timer settings: .*timeout=(\d+):(\d+):(\d+)")
_MEMORY = ("Per MPI rank memory allocation", "Memory usage per processor")  # the line before a thermo header


@dataclass(frozen=True)
class WallStop:
    """A run LAMMPS ended at its `timer timeout` wall-time limit: the run's index among the input's
    runs and minimisations (0-based, its thermo table's), the steps it completed, the limit in seconds.
    Every later run or minimisation of the input was skipped (LAMMPS prints no table for it); the outputs
    up to the stop are whole."""

    run: int
    steps: int
    timeout_s: int | None


@dataclass
class LammpsOutput:
    """What a LAMMPS job folder says about its run."""

    text: str = ""  # screen output, stderr and log, joined
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    last_line: str | None = None  # the input line LAMMPS names after an error
    thermo: list[dict[str, np.ndarray]] = field(default_factory=list)  # one table per run/minimize, as printed
    loop_times_s: list[float] = field(default_factory=list)
    finished: bool = False  # the input ran to its end ("Total wall time")
    dangerous_builds: int = 0
    exists: bool = False  # the folder holds any LAMMPS output
    replicas: list[str] = field(default_factory=list)  # each partition's log (log.lammps.K), a multi-replica run
    wall_stop: WallStop | None = None  # the run `timer timeout` ended, if it did

    @property
    def error(self) -> str:
        return self.errors[0] if self.errors else ""

    @property
    def engine_time_s(self) -> float:
        return float(sum(self.loop_times_s))

    def has(self, pattern: str) -> re.Match | None:
        """The first ERROR or WARNING line matching `pattern`."""
        for line in self.errors + self.warnings:
            found = re.search(pattern, line)
            if found:
                return found
        return None

    def nonfinite(self) -> list[str]:
        """Findings: each thermo column with a NaN or inf, with its table and first step."""
        found = []
        for index, table in enumerate(self.thermo):
            for name, column in table.items():
                bad = ~np.isfinite(column)
                if bad.any():
                    step = table.get("Step")
                    where = f" from step {step[np.argmax(bad)]:g}" if step is not None else ""
                    found.append(f"non-finite {name} in thermo table {index + 1}{where}")
        return found

    def refuse_nonfinite(self) -> None:
        """For an analysis: CalculationFailed when any thermo table holds a NaN or inf."""
        bad = self.nonfinite()
        if bad:
            raise CalculationFailed(f"{bad[0]}: the dynamics diverged; no number is taken from this run")

    @property
    def runs(self) -> list[dict[str, np.ndarray]]:
        """The thermo tables for an analysis (refused when any holds a NaN or inf)."""
        self.refuse_nonfinite()
        return self.thermo

    def last_run(self) -> dict[str, np.ndarray]:
        runs = self.runs
        if not runs:
            raise ReadError("the LAMMPS log has no thermo output")
        return runs[-1]


def parse_thermo(text: str) -> list[dict[str, np.ndarray]]:
    """Thermo tables from LAMMPS screen or log text. A table's header is the line after the memory
    line (WARNING lines skipped) or a line starting with 'Step'; its rows are lines of as many numbers
    (nan/inf kept); it ends at 'Loop time', an ERROR, or the end of the text."""
    tables: list[dict[str, np.ndarray]] = []
    header: list[str] | None = None
    rows: list[list[float]] = []
    expect_header = False

    def close() -> None:
        if header and rows:
            data = np.array(rows, dtype=float)
            tables.append({name: data[:, i] for i, name in enumerate(header)})

    def numbers(words: list[str]) -> list[float] | None:
        try:
            return [float(w) for w in words]
        except ValueError:
            return None

    for line in text.splitlines():
        words = line.split()
        if line.startswith(_MEMORY):
            expect_header = True
            continue
        if expect_header and words and words[0] != "WARNING:":
            expect_header = False
            if numbers(words[:1]) is None and not line.startswith("ERROR"):
                close()
                header, rows = words, []
                continue
        if words[:1] == ["Step"] and len(words) > 1 and numbers(words[1:2]) is None:
            close()
            header, rows = words, []
            continue
        if header is None:
            continue
        if len(words) == len(header):
            values = numbers(words)
            if values is not None:
                rows.append(values)
                continue
        if line.startswith(("Loop time", "ERROR")):
            close()
            header, rows = None, []
    close()
    return tables


def read_output(job_dir: Path, missing_ok: bool = False) -> LammpsOutput:
    """Read a job folder's LAMMPS output. No output at all raises ReadError, unless `missing_ok`
    (the handlers ask before anything may have run): then `exists` is False."""
    out = LammpsOutput()
    texts = {name: (job_dir / name).read_text(errors="replace") for name in (SCREEN, STDERR, LOG)
             if (job_dir / name).is_file()}
    out.replicas = [path.read_text(errors="replace") for path in _numbered(job_dir, LOG)]
    # a run on partitions (-partition): log.lammps holds the method's summary, each replica its own log and
    # screen; the thermo and the end of the input are replica 0's, the errors and warnings every replica's
    texts |= {path.name: path.read_text(errors="replace") for path in _numbered(job_dir, "screen")}
    texts |= {f"{LOG}.{k}": text for k, text in enumerate(out.replicas)}
    if not texts:
        if missing_ok:
            return out
        raise ReadError(f"no LAMMPS output in {job_dir} (neither {LOG} nor {SCREEN})")
    out.exists = True
    out.text = "\n".join(texts.values())
    for line in out.text.splitlines():
        stripped = line.strip()
        if stripped.startswith("ERROR") and stripped not in out.errors:
            out.errors.append(stripped)
        elif stripped.startswith("WARNING") and stripped not in out.warnings:
            out.warnings.append(stripped)
    lasts = re.findall(r"^Last (?:input )?(?:command|line): (.*)$", out.text, flags=re.M)
    out.last_line = lasts[-1].strip() if lasts else None
    source = out.replicas[0] if out.replicas else texts.get(LOG, next(iter(texts.values())))  # else the screen
    out.thermo = parse_thermo(source)
    timeout_s: int | None = None
    stopped = False
    for line in source.splitlines():
        match = _LOOP.match(line)
        if match:
            out.loop_times_s.append(float(match.group(1)))
            if stopped and out.wall_stop is None:
                out.wall_stop = WallStop(len(out.loop_times_s) - 1, int(match.group(2) or 0), timeout_s)
        elif line.startswith("Total wall time"):
            out.finished = True
        elif _WALL_LIMIT in line and line.startswith("WARNING"):
            stopped = True
        elif (hms := _TIMEOUT_SET.match(line)) is not None:
            timeout_s = 3600 * int(hms.group(1)) + 60 * int(hms.group(2)) + int(hms.group(3))
    builds = [int(n) for n in re.findall(r"^Dangerous builds = (\d+)", source, flags=re.M)]
    out.dangerous_builds = max(builds) if builds else 0
    return out


def _numbered(job_dir: Path, stem: str) -> list[Path]:
    """stem.0, stem.1, ... in the folder, in partition order."""
    found = [(int(p.name[len(stem) + 1:]), p) for p in job_dir.glob(f"{stem}.*") if p.name[len(stem) + 1:].isdigit()]
    return [p for _, p in sorted(found)]
