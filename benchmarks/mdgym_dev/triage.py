"""Where does each MDGym dev task stand before any engine runs? (reading and planning only)

For each task file (default: every LAMMPS task of ../shared/mdgym with no supplied files, per
SUPPLIED.tsv), this runs what `simagent solve` does up to the plan, with the expert backend:
named input files present?, metric names understood?, description complete?, a protocol that
computes every metric?, and the plan's size. It writes triage.md/triage.json next to this file
and prints one line per task. No engine runs; seconds per task.

    python benchmarks/mdgym_dev/triage.py [--mdgym DIR] [TASK.json ...]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

HERE = Path(__file__).parent


def no_file_tasks(mdgym: Path, engine: str = "lammps") -> list[Path]:
    supplied = set()
    with (mdgym / "SUPPLIED.tsv").open() as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            parts = row["repository_path"].split("/")
            if len(parts) > 4:
                supplied.add(parts[4])
    return sorted(p for p in mdgym.glob(f"{engine}*/*.json") if json.loads(p.read_text())["id"] not in supplied)


def task_files(task) -> tuple[list[str], list[Path]]:
    """The file names a task can use and the files every job would get, as `simagent solve` finds
    them with no data root: the shipped potentials plus the named files an installed OpenKIM item
    embeds (extracted, SHA-1 checked, into a scratch folder of this process)."""
    import tempfile

    from simagent.solve import _shipped_potentials, published_files

    known = _shipped_potentials()
    folder = Path(tempfile.gettempdir()) / f"mdgym-triage-{os.getpid()}" / task.id
    published = published_files(task, known, folder, [])
    return known + [f.path.name for f in published], [f.path for f in published]


def triage(path: Path) -> dict:
    from simagent.engines import supplying
    from simagent.solve import load_task

    task = load_task(path)
    known, provided = task_files(task)
    with supplying(provided):
        return _triage(task, path, known, provided)


def _triage(task, path: Path, known: list[str], provided: list[Path]) -> dict:
    from agents.planner import plan_runs
    from simagent.backends.expert import ExpertBackend
    from simagent.errors import SimagentError
    from simagent.solve import TaskBackend, missing_files, read_metrics

    row = {"id": task.id, "level": str(task.level), "metrics": len(task.metrics), "folder": path.parent.name}
    absent = missing_files(task, known, provided)
    if absent:
        return {**row, "stage": "file", "detail": "named files not supplied/shipped: " + ", ".join(absent)}

    def targets_for(spec):
        reduced = spec.units_style == "lj" or (spec.system is not None and spec.system.kind == "lj_fluid")
        return read_metrics(task, reduced)

    backend = TaskBackend(ExpertBackend(), targets_for, known, task.engine)
    try:
        spec = backend.task_spec(task.problem_description)
    except SimagentError as err:
        return {**row, "stage": stage_of(err, "reading"), "detail": str(err), "description": described(backend)}
    row["description"] = described(backend)
    unread = [t.metric for t in backend.targets if t.property is None]
    if unread:
        return {**row, "stage": "metric", "detail": "metric names not computed: " + ", ".join(unread)}
    if spec.missing:
        return {**row, "stage": "clarification", "detail": "description lacks: " + ", ".join(spec.missing)}
    context = SimpleNamespace(backend=backend)
    try:
        runs, defaults, _ = plan_runs(spec, context)
    except SimagentError as err:
        return {**row, "stage": stage_of(err, "protocol"), "detail": str(err)[:300]}
    plan = "; ".join(f"{r.protocol}: {', '.join(r.properties)}" for r in runs)
    return {**row, "stage": "planned", "detail": plan, "defaults": len(defaults)}


def stage_of(err: Exception, otherwise: str) -> str:
    """'not rendered' when the described run names something simagent does not render (solve's message)."""
    return "not rendered" if "which simagent does not render" in str(err) else otherwise


def described(backend) -> str:
    """How far the typed simulation description (simagent.described) got: complete, or what it lacks
    and what it names that the renderer does not write."""
    desc = backend.description
    if desc is None:
        return "-"
    if desc.renderable:
        return "complete"
    parts = []
    if desc.unsupported:
        parts.append("not rendered: " + ", ".join(desc.unsupported))
    if desc.missing:
        parts.append("lacks: " + ", ".join(desc.missing))
    return "; ".join(parts)


def by_level(rows: list[dict]) -> list[str]:
    stages = ["planned", "file", "metric", "not rendered", "clarification", "protocol", "reading"]
    lines = ["| level | tasks | " + " | ".join(stages) + " |", "|---" * (len(stages) + 2) + "|"]
    for level in sorted({r["level"] for r in rows}) + ["all"]:
        chosen = [r for r in rows if level in ("all", r["level"])]
        counts = Counter(r["stage"] for r in chosen)
        lines.append(f"| {level} | {len(chosen)} | " + " | ".join(str(counts.get(s, 0)) for s in stages) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", nargs="*", type=Path)
    # ../shared/mdgym from the checkout (a worktree under wt/ looks one level further up)
    default = next((p / "shared" / "mdgym" for p in HERE.parents[1].parents[:2] if (p / "shared" / "mdgym").is_dir()),
                   HERE.parents[1].parent / "shared" / "mdgym")
    parser.add_argument("--mdgym", type=Path, default=default)
    args = parser.parse_args()
    paths = args.tasks or no_file_tasks(args.mdgym)
    rows = []
    for path in paths:
        row = triage(path)
        rows.append(row)
        print(f"{row['id']:40s} L{row['level']:2s} {row['stage']:13s} {row['detail'][:150]}", flush=True)
    counts = Counter(r["stage"] for r in rows)
    (HERE / "triage.json").write_text(json.dumps(rows, indent=1) + "\n")
    lines = ["# MDGym dev set: reading and planning triage (expert backend, no engine)", "",
             f"{len(rows)} tasks: " + ", ".join(f"{k} {v}" for k, v in counts.most_common()), "",
             *by_level(rows), "",
             "| task | level | stage | detail | typed description |", "|---|---|---|---|---|"]
    lines += [f"| {r['folder']}/{r['id']} | {r['level']} | {r['stage']} | {r['detail'].replace('|', '/')[:200]} | "
              f"{r.get('description', '-').replace('|', '/')[:200]} |" for r in rows]
    (HERE / "triage.md").write_text("\n".join(lines) + "\n")
    print(dict(counts))


if __name__ == "__main__":
    main()
