"""How ML-potential jobs are launched: `python -m tools.mlp.run mlp_job.json` in the job folder (torch
and the model load in the job's own process, never in simagent's)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tools.mlp.run import JOB_FILE


def environment() -> dict[str, str]:
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["OMP_NUM_THREADS"] = "1"
    env["MPLBACKEND"] = "Agg"
    return env


def job_command(job) -> list[str]:
    """Adapter entry point used by the runner (simagent.jobrun)."""
    return [sys.executable, "-m", "tools.mlp.run", JOB_FILE]
