"""How GROMACS is launched (the 'profile'): binary, version, environment, the job command.

We use the thread-MPI build `gmx` (Debian package `gromacs`), never `gmx_mpi`: the venv's mpich
`mpirun` shadows Debian's OpenMPI launcher (shared/ENGINES.md). A job runs the small driver
`tools.gromacs.driver`, which executes the job's step list (steps.json: grompp, mdrun, ...) as
argument lists, without a shell. Time limits are the executor's business.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

from simagent.config import engine_path
from simagent.errors import EngineNotFound

INSTALL_HINT = ("install it with `make setup`, or directly: "
                "`apt-get update && apt-get install -y gromacs` (Debian 12: GROMACS 2022.5)")
STEPS_FILE = "steps.json"
# OpenMP threads per mdrun unless a job asks for more; the local executor may run two jobs at once.
DEFAULT_THREADS = 1
# Wall-clock room for one grompp dry run (the pre-run check). grompp takes ~0.3 CPU-s for 350 SPC/E waters
# (1.4 s wall at load 13 on 2 cores); a 60 s limit was exceeded while a replay case was recorded on a machine
# shared by eight developers, and the check then refused valid inputs: a busy machine says nothing about them.
GROMPP_DRY_RUN_LIMIT_S = 300.0


def gmx_binary() -> Path:
    """Settings.engine_paths["gromacs"] ($SIMAGENT_GMX) if set, else thread-MPI `gmx` on PATH."""
    explicit = engine_path("gromacs")
    if explicit:
        if explicit.is_file() and os.access(explicit, os.X_OK):
            return explicit
        raise EngineNotFound(f"the configured GROMACS ($SIMAGENT_GMX) {explicit} is not an executable GROMACS; "
                             f"unset it or {INSTALL_HINT}")
    found = shutil.which("gmx")
    if found:
        return Path(found)
    raise EngineNotFound(f"GROMACS (`gmx`) was not found; {INSTALL_HINT}")


def share_top() -> Path | None:
    """GROMACS's own topology library (force fields, water boxes), where gmx itself looks: $GMXLIB
    (GROMACS's variable), else $GMXDATA/top, else <prefix of gmx>/share/gromacs/top, else Debian's
    /usr/share/gromacs/top."""
    if os.environ.get("GMXLIB"):
        path = Path(os.environ["GMXLIB"])
        return path if path.is_dir() else None
    candidates = [Path(os.environ["GMXDATA"]) / "top"] if os.environ.get("GMXDATA") else []
    try:
        candidates.append(gmx_binary().resolve().parent.parent / "share" / "gromacs" / "top")
    except EngineNotFound:
        pass
    candidates.append(Path("/usr/share/gromacs/top"))
    return next((c for c in candidates if c.is_dir()), None)


def environment(threads: int | None = None) -> dict[str, str]:
    """Environment for a job: OpenMP threads set, no '#file.1#' backups, no GPU detection."""
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", str(threads or DEFAULT_THREADS))
    env["GMX_MAXBACKUP"] = "-1"
    env.setdefault("GMX_DISABLE_GPU_DETECTION", "1")
    return env


def gmx_command(tool: str, args: list[str]) -> list[str]:
    return [str(gmx_binary()), "-quiet", tool, *args]


def job_command(job) -> list[str]:
    """Adapter entry point used by the runner (simagent.jobrun): the driver on the job's steps."""
    gmx_binary()  # fail early, with the install hint, when GROMACS is missing
    argv = [sys.executable, "-m", "tools.gromacs.driver", STEPS_FILE]
    if job.ranks > 1 or job.threads > 1:  # else the step list's own thread count
        argv += ["--ranks", str(job.ranks), "--threads", str(job.threads)]
    return argv


@lru_cache(maxsize=1)
def version() -> str:
    out = subprocess.run([str(gmx_binary()), "--version"], capture_output=True, text=True, timeout=60,
                         env=environment())
    match = re.search(r"GROMACS version:\s*(\S+)", out.stdout + out.stderr)
    return match.group(1) if match else "unknown"
