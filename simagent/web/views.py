"""What the page shows of a thread, read from its last checkpoint: the request, its status, the
pending question or review, the plan (protocols, jobs and their dependencies, defaults applied with
reasons), the answer, and the files and plots of the run folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from simagent.executor import read_record
from simagent.session import ThreadState
from simagent.web.files import inside, list_files


def _dump(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [_dump(v) for v in value]
    if isinstance(value, dict):
        return {k: _dump(v) for k, v in value.items()}
    return value


def status_of(state: ThreadState, running: bool) -> str:
    """running | clarification | review | answered | failed | interrupted (resumable) | new."""
    if running:
        return "running"
    if state.interrupt is not None:
        return state.interrupt.get("kind", "interrupt")
    answer = state.values.get("answer")
    if answer is not None:
        return _dump(answer)["status"]
    return "interrupted" if state.unfinished else "new"


def relative(root: Path | None, path: str | None) -> str | None:
    """A path inside the run folder as a link target relative to it, else None."""
    if not path or root is None:
        return None
    candidate = Path(path)
    if not candidate.is_absolute():
        candidate = root / candidate
    if not inside(root, candidate):
        return None
    return candidate.resolve().relative_to(root).as_posix()


def plan_view(plan: dict | None, root: Path | None) -> dict[str, Any] | None:
    if not plan:
        return None
    jobs = []
    for job in plan.get("jobs", []):
        folder = relative(root, job.get("workdir"))
        record = read_record(root / folder) if folder and root is not None else None
        jobs.append({
            "id": job["id"], "protocol": job["protocol"], "engine": job["engine"], "stage": job["stage"],
            "depends_on": job["depends_on"], "status": record.status.value if record else job["status"],
            "attempts": job["attempts"], "message": (record.message if record else "") or job["message"],
            "wall_s": record.wall_s if record else None, "folder": folder,
            "inputs": sorted(job.get("inputs", {})),
        })
    runs = [{"protocol": r["protocol"], "properties": r["properties"], "jobs": list(r["jobs"].values()),
             "params": r["params"]} for r in plan.get("runs", [])]
    return {"jobs": jobs, "runs": runs}


def answer_view(answer: dict | None, root: Path | None) -> dict[str, Any] | None:
    if not answer:
        return None
    results = []
    for r in answer.get("answers", []):
        results.append({**r, "log": relative(root, r.get("log")), "data_file": relative(root, r.get("data_file"))})
    return {**answer, "answers": results, "jobs": [relative(root, j) for j in answer.get("jobs", [])]}


def thread_view(state: ThreadState, root: Path | None, running: bool) -> dict[str, Any]:
    """root None: the run folder is not servable (it leads outside the run directory)."""
    values = _dump(state.values)
    files = list_files(root) if root is not None else []
    return {
        "thread_id": state.thread_id,
        "request": values.get("request", ""),
        "status": status_of(state, running),
        "interrupt": _dump(state.interrupt),
        "spec": values.get("spec"),
        "plan": plan_view(values.get("plan"), root),
        "defaults_applied": values.get("defaults_applied", []),
        "decisions": values.get("decisions", []),
        "corrections": values.get("corrections", []),
        "problems": values.get("problems", []),
        "failures": values.get("failures", []),
        "error": values.get("error"),
        "answer": answer_view(values.get("answer"), root),
        "files": files,
        "plots": [f for f in files if f.lower().endswith(".png")],
    }


def thread_summary(state: ThreadState, running: bool) -> dict[str, Any]:
    values = state.values
    return {"thread_id": state.thread_id, "request": values.get("request", ""),
            "status": status_of(state, running)}
