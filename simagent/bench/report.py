"""Session reports: results.csv (one row per task), summary.md (by engine and level) and a plot.

Scores are means over scored tasks (unscored tasks are counted but not averaged); "solved" counts
tasks whose every metric passed. The plot needs matplotlib (pinned in requirements.lock); without
it summary.md says so and the rest is written anyway.
"""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from simagent.bench.orchestrator import TaskOutcome

RESULTS_CSV = "results.csv"
SUMMARY_MD = "summary.md"
PLOT_PNG = "score_by_level.png"
COLUMNS = ["id", "engine", "level", "score", "success", "scored", "metrics_passed", "wall_s", "budget_s",
           "failure_categories", "timed_out", "agent_exit_code", "seeds", "resumed", "folder"]


def write_csv(path: Path, outcomes: list[TaskOutcome]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        for outcome in outcomes:
            writer.writerow(outcome.row())


def group_stats(outcomes: list[TaskOutcome], key) -> dict[str, dict[str, Any]]:
    """{group: tasks, scored, mean score, solved, wall} for groups named by key(outcome)."""
    groups: dict[str, list[TaskOutcome]] = {}
    for outcome in outcomes:
        groups.setdefault(key(outcome) or "-", []).append(outcome)
    stats = {}
    for name in sorted(groups):
        members = groups[name]
        scored = [o for o in members if o.score is not None]
        stats[name] = {
            "tasks": len(members),
            "scored": len(scored),
            "mean_score": sum(o.score for o in scored) / len(scored) if scored else None,
            "solved": sum(bool(o.success) for o in scored),
            "wall_s": sum(o.wall_s for o in members),
        }
    return stats


def _table(title: str, stats: dict[str, dict[str, Any]]) -> list[str]:
    lines = [f"| {title} | tasks | scored | mean score | solved (all metrics) | wall (s) |",
             "|---|---|---|---|---|---|"]
    for name, s in stats.items():
        mean = "-" if s["mean_score"] is None else f"{s['mean_score']:.2f}"
        lines.append(f"| {name} | {s['tasks']} | {s['scored']} | {mean} | {s['solved']}/{s['scored']} | "
                     f"{s['wall_s']:.0f} |")
    return lines


def write_plot(path: Path, by_level: dict[str, dict[str, Any]]) -> str:
    """Mean score per level as a bar chart; returns '' or why no plot was made."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed in this environment: no plot"
    levels = [name for name, s in by_level.items() if s["mean_score"] is not None]
    if not levels:
        return "no scored task: no plot"
    fig, ax = plt.subplots(figsize=(5, 3.2))
    scores = [by_level[name]["mean_score"] for name in levels]
    bars = ax.bar([f"level {name}" for name in levels], scores, color="#4c72b0")
    for bar, name in zip(bars, levels, strict=True):
        s = by_level[name]
        ax.annotate(f"{s['solved']}/{s['scored']} solved", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center", va="bottom", fontsize=8)
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("mean score")
    ax.set_title("Score by level (fraction of metrics within tolerance)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return ""


def _agent_text(agent: dict[str, Any]) -> str:
    details = ", ".join(f"{k} `{v}`" for k, v in agent.items() if k != "name" and v is not None)
    return f"`{agent.get('name', '?')}`" + (f" ({details})" if details else "")


def render_summary(outcomes: list[TaskOutcome], info: dict[str, Any], plot_note: str) -> str:
    scored = [o for o in outcomes if o.score is not None]
    overall = sum(o.score for o in scored) / len(scored) if scored else None
    solved = sum(bool(o.success) for o in scored)
    by_engine = group_stats(outcomes, lambda o: o.task.engine)
    by_level = group_stats(outcomes, lambda o: o.task.level)
    tolerance = info.get("tolerance")
    lines = [
        "# Benchmark summary",
        "",
        f"Agent: {_agent_text(info.get('agent') or {})}; relative tolerance {100 * tolerance:g} % "
        "unless a task sets its own; "
        f"started {info.get('started_utc', '-')}.",
        "",
        f"**Overall: mean score {'-' if overall is None else f'{overall:.2f}'} over {len(scored)} scored tasks; "
        f"{solved}/{len(scored)} solved (every metric within tolerance); {len(outcomes) - len(scored)} unscored.**",
        "",
        "## By engine",
        "",
        *_table("engine", by_engine),
        "",
        "## By level",
        "",
        *_table("level", by_level),
        "",
    ]
    lines += [f"![score by level]({PLOT_PNG})" if not plot_note else f"(no plot: {plot_note})", ""]
    categories = Counter(f["category"] for o in outcomes for f in o.findings)
    lines += ["## Failure categories", ""]
    lines += [f"- {name}: {count} task(s)" for name, count in categories.most_common()] or ["- none"]
    lines += ["", "## Tasks", "", "| task | engine | level | score | failure categories | wall (s) |",
              "|---|---|---|---|---|---|"]
    for o in outcomes:
        score = "unscored" if o.score is None else f"{o.score:.2f}"
        cats = ", ".join(dict.fromkeys(f["category"] for f in o.findings)) or "-"
        lines.append(f"| {o.task.id} | {o.task.engine} | {o.task.level or '-'} | {score} | {cats} | {o.wall_s:.0f} |")
    lines += ["", "## Engine versions", ""]
    lines += [f"- {name}: {version}" for name, version in info.get("engine_versions", {}).items()] or ["- none"]
    seeded = [o for o in outcomes if o.seeds]
    if seeded:
        lines += ["", "Random seeds of each run are in results.csv (`seeds`) and in each validation.json."]
    return "\n".join(lines) + "\n"


def write_reports(out: Path, outcomes: list[TaskOutcome], info: dict[str, Any]) -> None:
    write_csv(out / RESULTS_CSV, outcomes)
    by_level = group_stats(outcomes, lambda o: o.task.level)
    note = write_plot(out / PLOT_PNG, by_level)
    (out / SUMMARY_MD).write_text(render_summary(outcomes, info, note), encoding="utf-8")


def summary_dict(outcomes: list[TaskOutcome]) -> dict[str, Any]:
    """The session in one JSON-able object (for `--json`)."""
    scored = [o for o in outcomes if o.score is not None]
    return {
        "tasks": len(outcomes),
        "scored": len(scored),
        "mean_score": sum(o.score for o in scored) / len(scored) if scored else None,
        "solved": sum(bool(o.success) for o in scored),
        "by_engine": group_stats(outcomes, lambda o: o.task.engine),
        "by_level": group_stats(outcomes, lambda o: o.task.level),
        "results": [o.row() for o in outcomes],
    }
