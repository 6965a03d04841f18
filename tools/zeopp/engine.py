"""How Zeo++ is launched (the 'profile'): pyzeo in a child Python process, never in simagent's own.

pyzeo 0.2.0 has Zeo++ compiled in (no `network` binary). Its C++ code can abort the process, so
every job runs `python -m tools.zeopp.run zeopp.json` in its job folder (tools/zeopp/run.py).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from simagent.errors import EngineNotFound
from tools.zeopp.inputs import SETTINGS_NAME

INSTALL_HINT = "install it with `pip install pyzeo==0.2.0` in simagent's venv"


def check_installed() -> None:
    if importlib.util.find_spec("pyzeo") is None:
        raise EngineNotFound(f"Zeo++ (Python package pyzeo) was not found; {INSTALL_HINT}")


@lru_cache(maxsize=1)
def version() -> str:
    try:
        return metadata.version("pyzeo")
    except metadata.PackageNotFoundError:
        return "not installed"


def _source_root() -> Path:
    """Folder that holds the `tools` package (so `-m tools.zeopp.run` imports from any job folder)."""
    return Path(__file__).resolve().parents[2]


def environment() -> dict[str, str]:
    env = dict(os.environ)
    root = str(_source_root())
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("OMP_NUM_THREADS", "1")
    env["MPLBACKEND"] = "Agg"
    return env


def command(settings: str = SETTINGS_NAME) -> list[str]:
    return [sys.executable, "-m", "tools.zeopp.run", settings]


def job_command(job) -> list[str]:
    """Adapter entry point used by the runner (simagent.jobrun)."""
    check_installed()
    return command(SETTINGS_NAME)
