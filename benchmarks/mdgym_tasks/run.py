"""Solve simagent's own MDGym-format task files and score them as MDGym does (within 5 %).

    python benchmarks/mdgym_tasks/run.py [--tasks 'tasks/lj*.json'] [--workdir DIR] [--out results.json]

Each task in tasks/ carries a `ground_truth` from a published or independently computed source
(its `reference` field; see references.py) - never from simagent's own output. A metric counts as
solved when final_answer.json holds it within 5 % of the ground truth; the script prints one line
per metric and the fractions of metrics and of tasks solved, and writes them to --out.
"""

from __future__ import annotations

import argparse
import glob
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # run from a checkout without installing

from simagent.config import load_settings  # noqa: E402
from simagent.errors import SimagentError  # noqa: E402
from simagent.solve import load_task, solve  # noqa: E402

TOLERANCE = 0.05  # MDGym: |value - ground truth| <= 5 % of |ground truth|


def within(value: float | None, truth: float) -> bool:
    return value is not None and abs(value - truth) <= TOLERANCE * abs(truth)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=str(HERE / "tasks" / "*.json"), help="glob of task files")
    parser.add_argument("--workdir", default="simagent-runs/mdgym_tasks", help="one sub-folder per task")
    parser.add_argument("--data-root", default=None, help="DATA_ROOT with supplied structure/potential files")
    parser.add_argument("--out", default=str(HERE / "results.json"), help="summary JSON")
    args = parser.parse_args(argv)

    paths = sorted(glob.glob(args.tasks))
    if not paths:
        print(f"no task files match {args.tasks}")
        return 2
    settings = load_settings(backend="expert")
    rows, tasks_ok, metric_rows = [], 0, 0
    solved_metrics = 0
    for path in paths:
        task = load_task(Path(path))
        start = time.monotonic()
        try:
            outcome = solve(Path(path), Path(args.workdir) / task.id, args.data_root, settings)
            answer, missing, wall = outcome.final_answer, outcome.not_computed, outcome.elapsed_s
        except SimagentError as err:
            answer, missing, wall = {}, {m: str(err) for m in task.metrics}, time.monotonic() - start
        all_ok = True
        for metric in task.metrics:
            truth = task.ground_truth.get(metric)
            value = answer.get(metric)
            ok = isinstance(truth, int | float) and within(value, float(truth))
            all_ok &= ok
            solved_metrics += ok
            metric_rows += 1
            deviation = None if value is None or not truth else 100 * (value / truth - 1)
            rows.append({"task": task.id, "metric": metric, "value": value, "ground_truth": truth,
                         "deviation_percent": deviation, "within_5_percent": ok,
                         "why_missing": missing.get(metric), "wall_s": round(wall, 1)})
            shown = "-" if value is None else f"{value:.6g}"
            dev = "" if deviation is None else f" ({deviation:+.2f} %)"
            print(f"{'ok ' if ok else 'BAD'} {task.id:36s} {metric:40s} {shown:>12s} vs {truth!s:>10s}{dev}"
                  + (f"  [{missing[metric]}]" if metric in missing else ""), flush=True)
        tasks_ok += all_ok
    summary = {
        "tolerance": TOLERANCE,
        "metrics_within_tolerance": f"{solved_metrics}/{metric_rows}",
        "metric_fraction": solved_metrics / metric_rows,
        "tasks_all_within_tolerance": f"{tasks_ok}/{len(paths)}",
        "task_fraction": tasks_ok / len(paths),
        "rows": rows,
    }
    Path(args.out).write_text(json.dumps(summary, indent=1) + "\n")
    print(f"\nmetrics within 5 %: {solved_metrics}/{metric_rows} ({100 * summary['metric_fraction']:.0f} %); "
          f"tasks fully solved: {tasks_ok}/{len(paths)} ({100 * summary['task_fraction']:.0f} %)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
