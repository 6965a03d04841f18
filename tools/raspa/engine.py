"""How RASPA2 is launched (the 'profile'): interpreter and runner, RASPA's data folder, version.
Nothing about inputs.

The PyPI package `RASPA2` (2.0.4) builds libraspa2 and installs `simulate`, a Python entry point that
runs the library in a multiprocessing child and always exits 0, even when RASPA stops on an error.
Jobs therefore run tools/raspa/run.py, which calls the library in its own process and exits non-zero
when RASPA fails or does not finish. RASPA looks for every file it reads (framework CIF,
pseudo_atoms.def, force_field*.def, molecule .def, .block) in the current folder first and only then
under its share folder; simagent writes all of them into the job folder, so the share folder is used
only to find structures that ship with RASPA (their P1 copies are written into the job folder)."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import sys
from functools import lru_cache
from pathlib import Path

from simagent.config import engine_path
from simagent.errors import EngineNotFound
from simagent.materials.structures import raspa_package_dir as package_dir
from simagent.materials.structures import raspa_share_dir as share_dir

INSTALL_HINT = "install it with `make setup` (or `pip install raspa2==2.0.4` in simagent's venv)"
MAIN_INPUT = "simulation.input"
PACKAGE = "RASPA2"


RUNNER = Path(__file__).with_name("run.py")


def python_with_raspa() -> Path:
    """The interpreter that runs RASPA jobs: Settings.engine_paths["raspa"] ($SIMAGENT_RASPA_PYTHON), else
    the running Python (the venv), which must have the RASPA2 package."""
    explicit = engine_path("raspa")
    if explicit:
        if explicit.is_file() and os.access(explicit, os.X_OK):
            return explicit
        raise EngineNotFound(f"the configured RASPA Python ($SIMAGENT_RASPA_PYTHON) {explicit} is not an "
                             f"executable; unset it or {INSTALL_HINT}")
    if package_dir() is None or library() is None:
        raise EngineNotFound(f"RASPA2 was not found in {sys.executable}'s environment; {INSTALL_HINT}")
    return Path(sys.executable)


def library() -> Path | None:
    """libraspa2 inside the RASPA2 package."""
    root = package_dir()
    if root is None:
        return None
    found = sorted((root / "simulations" / "lib").glob("libraspa*"))
    return found[0] if found else None


def simulate_binary() -> Path:
    """RASPA2's own `simulate` entry point (used for users' own inputs only: it always exits 0, so
    their failures are read from the output, see handlers.output_problem)."""
    candidate = Path(sys.executable).parent / "simulate"
    if candidate.is_file():
        return candidate
    found = shutil.which("simulate")
    if not found:
        raise EngineNotFound(f"RASPA2 (`simulate`) was not found; {INSTALL_HINT}")
    return Path(found)


def shipped_structure(name: str) -> Path | None:
    """A framework CIF that ships with RASPA (e.g. 'IRMOF-1', 'MFI_SI'), matched case-insensitively."""
    share = share_dir()
    if share is None:
        return None
    folder = share / "structures" / "cif"
    exact = folder / f"{name}.cif"
    if exact.is_file():
        return exact
    wanted = name.lower().removesuffix(".cif")
    for path in folder.glob("*.cif"):
        if path.stem.lower() == wanted:
            return path
    return None


def shipped_block_file(name: str) -> Path | None:
    """RASPA's blocking-pocket file for a shipped structure (e.g. 'FAU.block'), if any."""
    share = share_dir()
    if share is None:
        return None
    path = share / "structures" / "block" / f"{name}.block"
    return path if path.is_file() else None


def environment() -> dict[str, str]:
    """Environment of a RASPA job. RASPA_DIR is not needed: the `simulate` wrapper passes the package
    folder to the library itself, and all files are read from the job folder."""
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def command(input_name: str = MAIN_INPUT) -> list[str]:
    """Command line run inside the job folder; RASPA writes Output/System_0/*.data there."""
    return [str(python_with_raspa()), str(RUNNER), input_name]


def job_command(job) -> list[str]:  # noqa: ANN001 - simagent.models.Job
    """Adapter entry point used by the runner (simagent.jobrun)."""
    return command(MAIN_INPUT)


@lru_cache(maxsize=1)
def version() -> str:
    """Version of the installed RASPA2 package, e.g. 'RASPA2 2.0.4'."""
    try:
        return f"RASPA2 {importlib.metadata.version(PACKAGE)}"
    except importlib.metadata.PackageNotFoundError:
        return "unknown"
