"""Which dev tasks could a change have moved? (no engine; for deciding what a measurement re-runs)

For every no-file LAMMPS dev task, the reading and plan exactly as `simagent solve` makes them (expert
backend, triage.py's path) and, when planned, the sha256 of every rendered job input. Run it on two
checkouts and compare: a task whose stage, reason or input digests differ has to be run again; the
others can carry their earlier result (their analysis code permitting: check that separately).

    PYTHONPATH=. python benchmarks/mdgym_dev/render_check.py OUT.json [MDGYM]  # in a checkout
    python benchmarks/mdgym_dev/render_check.py --diff OLD.json NEW.json       # the tasks that changed
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from types import SimpleNamespace

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))


def rendered(path: Path) -> dict[str, str]:
    from triage import task_files

    from agents.input_writer import render_plan
    from agents.planner import plan_runs
    from simagent.backends.expert import ExpertBackend
    from simagent.engines import supplying
    from simagent.solve import TaskBackend, load_task, read_metrics

    task = load_task(path)
    known, provided = task_files(task)

    def targets_for(spec):
        reduced = spec.units_style == "lj" or (spec.system is not None and spec.system.kind == "lj_fluid")
        return read_metrics(task, reduced)

    backend = TaskBackend(ExpertBackend(), targets_for, known, task.engine)
    with supplying(provided):
        runs, _, _ = plan_runs(backend.task_spec(task.problem_description), SimpleNamespace(backend=backend))
        return {f"{job.id}/{name}": hashlib.sha256(text.encode()).hexdigest()[:16]
                for job in render_plan(runs, 600).jobs for name, text in sorted(job.inputs.items())}


def snapshot(out: Path, mdgym: Path) -> None:
    from triage import no_file_tasks, triage

    rows = {}
    for path in no_file_tasks(mdgym):
        row = triage(path)
        if row["stage"] == "planned":
            row["inputs"] = rendered(path)
        rows[row["id"]] = row
        print(row["id"], row["stage"], flush=True)
    out.write_text(json.dumps(rows, indent=1) + "\n")


def diff(old: dict, new: dict) -> list[str]:
    changed = []
    for tid in sorted(new):
        before, after = old.get(tid, {}), new[tid]
        why = []
        if before.get("stage") != after.get("stage"):
            why.append(f"stage {before.get('stage')} -> {after.get('stage')}")
        elif before.get("detail") != after.get("detail"):
            why.append("reason changed")
        if before.get("inputs") != after.get("inputs"):
            why.append("inputs changed")
        if why:
            changed.append(tid)
            print(f"{tid:38s} {'; '.join(why)} | {after.get('detail', '')[:100]}")
    return changed


if __name__ == "__main__":
    if sys.argv[1:2] == ["--diff"]:
        print(" ".join(diff(json.loads(Path(sys.argv[2]).read_text()), json.loads(Path(sys.argv[3]).read_text()))))
    else:
        from compare import default_mdgym

        snapshot(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else default_mdgym())
