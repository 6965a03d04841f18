"""Runs one VASP job folder: `python -m tools.vasp.run vasp_job.json`.

VASP (the configured command, an argument list) writes its log to vasp.out; after a failed run the
first custodian handler that recognises the failure corrects the inputs (tools/vasp/recovery.py,
recorded in corrections.json) and VASP runs again, at most `max_errors` times."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pydantic import BaseModel, Field

from simagent.handlers import CorrectionLog
from tools.jobfile import read_job_file
from tools.vasp.recovery import VASP_LOG, correct

JOB_FILE = "vasp_job.json"


class VaspJob(BaseModel):
    """The job file holds no command: the launcher comes from simagent's settings (vasp_command), so an
    edited job file cannot start another program."""

    max_errors: int = Field(default=5, ge=0)


def finished(folder: Path) -> bool:
    """VASP's own end marker in OUTCAR (written only by a run that ended normally)."""
    outcar = folder / "OUTCAR"
    return outcar.is_file() and "General timing and accounting informations for this job" in outcar.read_text(
        errors="replace")


def run(folder: Path, job: VaspJob, command: list[str]) -> int:
    log = CorrectionLog(max_per_job=job.max_errors, max_total=job.max_errors)
    for attempt in range(1, job.max_errors + 2):
        with open(folder / VASP_LOG, "w") as out:
            proc = subprocess.run(command, cwd=folder, stdout=out, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, check=False)
        if proc.returncode == 0 and finished(folder):
            return 0
        if attempt > job.max_errors or correct(folder, folder.name, log, attempt) is None:
            print(f"VASP failed (exit code {proc.returncode}) and no custodian handler could correct it; "
                  f"see {VASP_LOG}", file=sys.stderr)
            return 1
    return 1


def main(argv: list[str]) -> int:
    loaded = read_job_file(argv, JOB_FILE, VaspJob)
    if loaded is None:
        return 2
    path, job = loaded
    from simagent.errors import EngineNotFound
    from tools.vasp.engine import vasp_command

    try:
        command = vasp_command()
    except EngineNotFound as err:
        print(str(err), file=sys.stderr)
        return 1
    return run(path.parent, job, command)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
