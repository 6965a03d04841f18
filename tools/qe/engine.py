"""How QE jobs are launched: `python -m tools.qe.run qe_job.json` in the job folder (the runner
starts pw.x, serially by default: on 2 shared cores a serial Si2 SCF took 1.6 s wall against 3.6 s
with `mpirun.openmpi -np 2`, see benchmarks/dft_timings.py). MPI runs go through Debian's
`mpirun.openmpi --allow-run-as-root`, never the `mpirun` of the mpich wheel, which shadows it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from functools import lru_cache

from simagent.engines import python_job_environment
from simagent.errors import EngineNotFound
from tools.qe.workflow import JOB_FILE

INSTALL_HINT = "install it with `make setup` (Debian package quantum-espresso)"
MPI_LAUNCHER = ("mpirun.openmpi", "--allow-run-as-root")


def pw_binary() -> str:
    found = shutil.which("pw.x")
    if not found:
        raise EngineNotFound(f"Quantum ESPRESSO (pw.x) was not found; {INSTALL_HINT}")
    return found


def pw_command(ranks: int = 1) -> list[str]:
    if ranks <= 1:
        return [pw_binary()]
    launcher = shutil.which(MPI_LAUNCHER[0])
    if not launcher:
        raise EngineNotFound(f"{MPI_LAUNCHER[0]} was not found for a {ranks}-rank pw.x run; use 1 rank or "
                             "install Debian's openmpi-bin")
    return [launcher, *MPI_LAUNCHER[1:], "-np", str(ranks), pw_binary()]


@lru_cache(maxsize=1)
def version() -> str:
    """QE version from the banner of a pw.x started with no input (exits at once)."""
    try:
        with tempfile.TemporaryDirectory() as scratch:  # pw.x leaves CRASH and input_tmp.in behind
            proc = subprocess.run([pw_binary()], input="", capture_output=True, text=True, timeout=30, check=False,
                                  cwd=scratch)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    for line in proc.stdout.splitlines():
        if "Program PWSCF" in line:
            return line.split("Program PWSCF", 1)[1].split("starts")[0].strip().lstrip("v.")
    return "unknown"


def environment() -> dict[str, str]:
    return python_job_environment()


def job_command(job) -> list[str]:
    """Adapter entry point used by the runner (simagent.jobrun)."""
    pw_binary()
    return [sys.executable, "-m", "tools.qe.run", JOB_FILE]
