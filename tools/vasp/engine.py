"""How VASP is launched: the command comes from simagent's settings (`vasp_command`, e.g.
"srun vasp_std" or "mpirun -np 4 vasp_std"; env SIMAGENT_VASP_COMMAND), split into an argument list,
never run through a shell. tools/vasp/run.py starts it; its log goes to vasp.out, which custodian's
handlers read."""

from __future__ import annotations

import shlex
import shutil
import sys

from simagent.config import load_settings
from simagent.engines import python_job_environment
from simagent.errors import EngineNotFound
from tools.vasp.run import JOB_FILE

NOT_CONFIGURED = ("VASP is not configured on this machine (it is licensed software): set `vasp_command` in "
                  "simagent's config file or SIMAGENT_VASP_COMMAND (e.g. 'mpirun -np 4 vasp_std'), and "
                  "PMG_VASP_PSP_DIR in ~/.pmgrc.yaml for the POTCARs")


def vasp_command() -> list[str]:
    command = load_settings().vasp_command
    if not command:
        raise EngineNotFound(NOT_CONFIGURED)
    argv = shlex.split(command)
    if not any(shutil.which(part) for part in argv[:1]):
        raise EngineNotFound(f"the configured VASP command {command!r} does not start: {argv[0]} was not found")
    return argv


def environment() -> dict[str, str]:
    return python_job_environment()


def job_command(job) -> list[str]:
    """Adapter entry point used by the runner (simagent.jobrun): tools/vasp/run.py runs the command with
    custodian's recovery."""
    vasp_command()
    return [sys.executable, "-m", "tools.vasp.run", JOB_FILE]
