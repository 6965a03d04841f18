"""trajectory_log.jsonl: one JSON object per line for every agent step, tool call and engine run.

Each record has `t` (seconds since the task started), `kind` (task_start, prompt, agent_start,
agent_step, tool_call, engine_run, agent_end, answer, validation, task_end) and kind-specific
fields; engine runs carry their exit status and wall time. Writes are appended and flushed at
once, so a killed session still leaves the steps up to the kill.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

TRAJECTORY_LOG = "trajectory_log.jsonl"


class TrajectoryLog:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.started = time.monotonic()
        self._lock = threading.Lock()

    def record(self, kind: str, **fields: Any) -> dict[str, Any]:
        entry = {"t": round(time.monotonic() - self.started, 3), "kind": kind, **fields}
        line = json.dumps(entry, default=str)
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
        return entry


def read_trajectory(path: Path) -> list[dict[str, Any]]:
    """The records of a log; lines that are not JSON objects (a torn last line) are skipped."""
    records = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    for line in lines:
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(entry, dict):
            records.append(entry)
    return records
