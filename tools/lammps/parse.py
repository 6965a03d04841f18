"""Reading LAMMPS output: thermo blocks (lammps-logfile, which keeps unterminated blocks of crashed
runs), and ERROR/WARNING lines from both log.lammps and the screen output (LAMMPS often prints
errors only to the screen)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from simagent.errors import ReadError

_LOOP = re.compile(r"^Loop time of ([0-9.eE+-]+) on")


@dataclass
class LammpsOutput:
    runs: list[dict[str, np.ndarray]] = field(default_factory=list)  # one per run/minimize block
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    loop_times_s: list[float] = field(default_factory=list)
    finished: bool = False  # the input ran to its end ("Total wall time")

    @property
    def engine_time_s(self) -> float:
        return float(sum(self.loop_times_s))

    def last_run(self) -> dict[str, np.ndarray]:
        if not self.runs:
            raise ReadError("the LAMMPS log has no thermo output")
        return self.runs[-1]


def read_output(job_dir: Path, log_name: str = "log.lammps", screen_name: str = "stdout.txt") -> LammpsOutput:
    """Parse a job folder's LAMMPS log and screen output."""
    log_path = job_dir / log_name
    screen_path = job_dir / screen_name
    out = LammpsOutput()
    texts = []
    for path in (log_path, screen_path):
        if path.is_file():
            texts.append(path.read_text(errors="replace"))
    if not texts:
        raise ReadError(f"no LAMMPS output in {job_dir} (neither {log_name} nor {screen_name})")
    if log_path.is_file():
        import lammps_logfile  # imported here: it pulls in matplotlib.pyplot (slow start-up)

        try:
            parsed = lammps_logfile.File(str(log_path))
            out.runs = [
                {k: np.asarray(v, dtype=float) for k, v in part.items()} for part in parsed.partial_logs
            ]
        except (ValueError, IndexError) as exc:
            raise ReadError(f"cannot parse thermo output of {log_path}: {exc}") from None
        for line in log_path.read_text(errors="replace").splitlines():
            match = _LOOP.match(line)
            if match:
                out.loop_times_s.append(float(match.group(1)))
            if line.startswith("Total wall time"):
                out.finished = True
    seen: set[str] = set()
    for text in texts:
        for line in text.splitlines():
            stripped = line.strip()
            if stripped in seen:
                continue
            if stripped.startswith("ERROR"):
                out.errors.append(stripped)
                seen.add(stripped)
            elif stripped.startswith("WARNING"):
                out.warnings.append(stripped)
                seen.add(stripped)
    return out
