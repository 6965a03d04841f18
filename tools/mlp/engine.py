"""How ML-potential jobs are launched: `python -m tools.mlp.run mlp_job.json` in the job folder (torch
and the model load in the job's own process, never in simagent's)."""

from __future__ import annotations

import sys

from simagent.engines import python_job_environment
from tools.mlp.run import JOB_FILE


def environment() -> dict[str, str]:
    return python_job_environment()


def job_command(job) -> list[str]:
    """Adapter entry point used by the runner (simagent.jobrun)."""
    return [sys.executable, "-m", "tools.mlp.run", JOB_FILE]
