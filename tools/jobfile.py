"""The job file an engine runner was started with (`python -m tools.<engine>.run <job file>`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

JobT = TypeVar("JobT", bound=BaseModel)


def read_job_file(argv: list[str], default: str, model: type[JobT] | None) -> tuple[Path, JobT | dict[str, Any]] | None:
    """(absolute path, job validated as `model`, or the plain JSON dict when model is None) of the job
    file named by argv[0] (default: `default` in the current folder). None, after saying why on
    stderr, when it cannot be read or does not validate (the runner then exits with code 2)."""
    path = Path(argv[0] if argv else default).resolve()
    try:
        text = path.read_text()
        return path, (json.loads(text) if model is None else model.model_validate_json(text))
    except (OSError, ValueError) as err:
        print(f"cannot read {path}: {err}", file=sys.stderr)
        return None
