"""Score a solver run of the MDGym dev set against the independent references (references.json).

Reads a results folder written by `simagent bench run --out OUT` (OUT/tasks/<id>/final_answer.json,
workdir/report.md) or by `simagent solve --workdir DIR/<id>` for several tasks (DIR/<id>/...), or
one solve workdir, and reports, by engine and level, for the dev tasks that need no supplied files
(SUPPLIED.tsv):
* complete answers: final_answer.json has exactly the task's metric names, each a finite number;
* metrics within 5 % of the references (MDGym's tolerance), out of all the metrics of those tasks
  and out of the metrics that have a reference;
* the failure category of every task without a complete answer, in triage.json's categories (file,
  metric, not rendered, clarification, protocol, reading), `budget` (refused before any run as estimated over
  the task's time budget) read from the reasons report.md gives, plus `run` (the
  plan ran but gave no complete answer), `unfinished` (a bench task still running or interrupted)
  and `not run` (no folder for the task in the results).

It shares no code with the solver (it reads the files the solver writes), so the references never
enter the solver's code path.

A task can also be carried from an earlier measurement whose folders are gone: `--carry TABLE.md`
reads the per-metric rows an earlier run of this script printed (e.g. solve_stop22.md) and takes each
task's values (the 6 significant digits the table shows), complete flag and category/reason from them;
they are scored again against today's references. A results folder's task wins over a carried row,
and --not-run over both.

    python benchmarks/mdgym_dev/compare.py [RESULTS ...] [--carry TABLE.md] [--only-run] [--mdgym DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

try:  # imported as a package module (tests) or run as a script from this folder
    from benchmarks.mdgym_dev.triage import no_file_tasks
except ImportError:
    from triage import no_file_tasks

HERE = Path(__file__).parent
TOLERANCE = 0.05
ANSWER = "final_answer.json"
REPORT = "report.md"

# report.md's reasons for a metric not computed, in the categories triage.py gives before any run
REASON_CATEGORIES = [
    ("file", r"not supplied|neither supplied|named files? .*(?:missing|not found)|needs? the file"
             r"|file .* not (?:there|found)"),
    ("metric", r"metric names? not computed|names no property|not a metric simagent computes"
               r"|no analysis (?:computes|for)"),
    ("not rendered", r"which simagent does not render"),  # the described run's blocker, named
    ("budget", r"cannot finish in the task's time budget"),  # refused before any run: estimated over the budget
    ("clarification", r"description lacks|stated, not understood|lacks information"),
    ("protocol", r"no protocol|prescribes|runs no substitute|another engine is not run|not supported|cannot run"),
    ("reading", r"unknown (?:framework|material)|not understood|could not read"),
]


@dataclass
class TaskResult:
    id: str
    engine: str
    level: str
    metrics: list[str]
    ran: bool = False
    answer: dict = field(default_factory=dict)
    complete: bool = False
    category: str = ""
    detail: str = ""
    scored: dict[str, dict] = field(default_factory=dict)  # metric -> value, reference, rel_error, within, seed_sd


@dataclass
class Carried:
    """A task's result as an earlier compare.py table printed it (its folder is gone)."""
    answer: dict[str, float]
    metrics: list[str]
    complete: bool
    category: str
    detail: str


ROW_CELLS = 9  # task | level | complete | metric | value | reference | error | seed spread | category / reason


def carried_rows(table: Path) -> dict[str, Carried]:
    """Task id -> its carried result, from the per-metric rows of a table render() wrote."""
    carried: dict[str, Carried] = {}
    for number, line in enumerate(table.read_text().splitlines(), 1):
        if not line.startswith("| "):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != ROW_CELLS or cells[2] not in ("yes", "no"):
            continue  # the summary table, a header or a separator
        tid, _, complete, metric, value = cells[:5]
        row = carried.setdefault(tid, Carried({}, [], complete == "yes", "", ""))
        if row.complete != (complete == "yes"):
            raise ValueError(f"{table}:{number}: task {tid} is both complete and not")
        row.metrics.append(metric)
        if value:
            row.answer[metric] = float(value)
        if complete == "no" and not row.category:
            category, _, detail = cells[8].partition(": ")
            row.category, row.detail = category, detail
    return carried


def default_mdgym() -> Path:
    for parent in HERE.parents:
        if (parent / "shared" / "mdgym").is_dir():
            return parent / "shared" / "mdgym"
    return HERE.parents[2] / "shared" / "mdgym"


def dev_tasks(mdgym: Path) -> dict[str, dict]:
    """Every dev task file by id, with `no_file` telling whether SUPPLIED.tsv lists no file for it."""
    no_file = {p.resolve() for engine in ("lammps", "gromacs") for p in no_file_tasks(mdgym, engine)}
    tasks = {}
    for path in sorted(mdgym.glob("*/*.json")):
        try:
            task = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if isinstance(task, dict) and "id" in task and "metrics" in task:
            tasks[task["id"]] = {**task, "no_file": path.resolve() in no_file, "path": str(path)}
    return tasks


def task_folders(results: Path) -> dict[str, Path]:
    """Task id -> the folder holding its final_answer.json / report.md."""
    if (results / ANSWER).is_file() or (results / REPORT).is_file():
        return {results.name: results}
    base = results / "tasks" if (results / "tasks").is_dir() else results
    return {p.name: p for p in sorted(base.iterdir()) if p.is_dir()}


def find(folder: Path, name: str) -> Path | None:
    for candidate in (folder / name, folder / "workdir" / name):
        if candidate.is_file():
            return candidate
    return None


def is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def reason_category(report: str) -> tuple[str, str]:
    """The category of the first reason report.md gives for a metric not computed."""
    section = report.split("## Not computed", 1)[1] if "## Not computed" in report else report
    section = section.split("\n## ", 1)[0]
    reasons = [line[2:] for line in section.splitlines() if line.startswith("- ")]
    for reason in reasons or [section]:
        for category, pattern in REASON_CATEGORIES:
            if re.search(pattern, reason, re.IGNORECASE):
                return category, reason.strip()[:160]
    return "run", (reasons[0].strip()[:160] if reasons else "no complete answer; report.md gives no reason")


def seed_spreads(task_id: str, references: dict) -> dict[str, dict]:
    """metric -> seed_spread of the task's reference: how far the reference moves with its random seeds
    alone (run_references.py --reseed). A cited reference takes it from a run of the same task kept beside
    it (key "<id> (...)")."""
    spreads: dict[str, dict] = {}
    for key, entry in references.items():
        if key == task_id or key.startswith(f"{task_id} ("):
            for metric, ref in entry.get("metrics", {}).items():
                if "seed_spread" in ref and (key == task_id or metric not in spreads):
                    spreads[metric] = ref["seed_spread"]
    return spreads


def score(task: dict, folder: Path | None, references: dict, triage: dict,
          carried: Carried | None = None) -> TaskResult:
    result = TaskResult(task["id"], task.get("engine", "?"), str(task.get("level", "?")), list(task["metrics"]))
    ref = references.get(task["id"], {}).get("metrics", {})
    spreads = seed_spreads(task["id"], references)
    answer_file = find(folder, ANSWER) if folder else None
    if folder is None and carried is not None and carried.category == "not run":
        result.category, result.detail = "not run", carried.detail
    elif folder is None and carried is not None:
        if sorted(carried.metrics) != sorted(result.metrics):
            raise ValueError(f"carried task {task['id']} has metrics {carried.metrics}, the task file {result.metrics}")
        result.ran, result.answer = True, dict(carried.answer)
        result.complete = set(result.answer) == set(result.metrics) and all(map(is_number, result.answer.values()))
        if result.complete != carried.complete:
            raise ValueError(f"carried task {task['id']}: its row says complete={carried.complete}, its values do not")
        if not result.complete:
            result.category, result.detail = carried.category or "run", carried.detail
    elif folder is None:
        result.category, result.detail = "not run", triage.get(task["id"], {}).get("stage", "")
    else:
        result.ran = True
        try:
            loaded = json.loads(answer_file.read_text()) if answer_file else None
        except (OSError, json.JSONDecodeError):
            loaded = None
        result.answer = loaded if isinstance(loaded, dict) else {}
        result.complete = (set(result.answer) == set(result.metrics)
                           and all(is_number(v) for v in result.answer.values()))
    for metric in result.metrics:
        value = result.answer.get(metric)
        reference = ref.get(metric, {}).get("value")
        entry: dict = {"value": value if is_number(value) else None, "reference": reference}
        if metric in spreads:  # relative sd of the reference over reseeded runs, and how many runs
            entry["seed_sd"], entry["seed_n"] = spreads[metric]["rel_sd"], spreads[metric]["n"]
        if is_number(value) and is_number(reference) and reference != 0:
            entry["rel_error"] = (value - reference) / abs(reference)
            entry["within"] = abs(entry["rel_error"]) <= TOLERANCE
        result.scored[metric] = entry
    if result.ran and not result.complete and folder is not None:
        report = find(folder, REPORT)
        if report is None and folder.parent.name == "tasks" and not (folder / "validation.json").is_file():
            result.category, result.detail = "unfinished", "the bench session has not finished this task"
        elif report is None:
            result.category, result.detail = "run", "no report.md"
        else:
            result.category, result.detail = reason_category(report.read_text(errors="replace"))
    return result


def summarise(results: list[TaskResult]) -> dict:
    groups: dict[tuple[str, str], list[TaskResult]] = defaultdict(list)
    for r in results:
        groups[(r.engine, r.level)].append(r)
        groups[(r.engine, "all")].append(r)
    groups[("all", "all")] = list(results)
    table = {}
    for key, rows in sorted(groups.items()):
        metrics = [m for r in rows for m in r.scored.values()]
        table["/".join(key)] = {
            "tasks": len(rows),
            "run": sum(r.ran for r in rows),
            "complete": sum(r.complete for r in rows),
            "metrics": len(metrics),
            "with_reference": sum(is_number(m["reference"]) for m in metrics),
            "answered": sum(m["value"] is not None for m in metrics),
            "within_5pct": sum(bool(m.get("within")) for m in metrics),
            # references whose seed spread alone is at least the tolerance: a 5 % test there is below the noise
            "seed_noisy": sum(m.get("seed_sd", 0.0) >= TOLERANCE for m in metrics),
            "failures": dict(Counter(r.category for r in rows if not r.complete).most_common()),
        }
    return table


def pct(part: int, whole: int) -> str:
    return f"{part} ({100 * part / whole:.0f} %)" if whole else "0"


SUMMARY_HEADER = ["| engine/level | tasks | run | complete answers | metrics | with reference | answered "
                  "| within 5 % of reference (of all metrics) | within 5 % (of referenced) "
                  "| references with seed spread ≥ 5 % | failure categories |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]


def summary_rows(table: dict) -> list[str]:
    lines = []
    for key, s in table.items():
        fails = ", ".join(f"{k} {v}" for k, v in s["failures"].items())
        lines.append(f"| {key} | {s['tasks']} | {s['run']} | {pct(s['complete'], s['tasks'])} | {s['metrics']} "
                     f"| {s['with_reference']} | {s['answered']} | {pct(s['within_5pct'], s['metrics'])} "
                     f"| {pct(s['within_5pct'], s['with_reference'])} | {s['seed_noisy']} | {fails} |")
    return lines


def needs_a_file(results: list[TaskResult], triage: dict) -> list[str]:
    """The tasks whose text names or needs an input file that is neither supplied nor shipped (triage.json's
    `file` category, read from the text before any run)."""
    return [r.id for r in results if triage.get(r.id, {}).get("stage") == "file"]


def render(table: dict, results: list[TaskResult], source: str, triage: dict | None = None) -> str:
    lines = [f"# MDGym dev tasks without supplied files: {source}", "", *SUMMARY_HEADER, *summary_rows(table)]
    excluded = needs_a_file(results, triage or {})
    if excluded:
        subset = summarise([r for r in results if r.id not in excluded])
        lines += ["", f"The same, without the {len(excluded)} tasks whose text needs an input file that neither the "
                  "task nor LAMMPS supplies (triage.json stage `file`, read from the text before any run: "
                  f"{', '.join(sorted(excluded))}):", "", *SUMMARY_HEADER, *summary_rows(subset)]
    lines += ["", "Seed spread: the relative standard deviation of the reference over runs of the same input with "
              "other random seeds (n runs, run_references.py --reseed; README). Where it is 5 % or more, a 5 % "
              "agreement test is below the noise of a single trajectory.", "",
              "| task | level | complete | metric | value | reference | error | reference seed spread | "
              "category / reason |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in results:  # a task not run is listed too: it counts in the figures above
        for metric, m in r.scored.items():
            err = f"{100 * m['rel_error']:+.1f} %" if "rel_error" in m else ""
            value = "" if m["value"] is None else f"{m['value']:.6g}"
            ref = "" if m["reference"] is None else f"{m['reference']:.6g}"
            why = "" if r.complete else (f"{r.category}: {r.detail}" if r.detail else r.category).replace("|", "/")
            spread = ""
            if "seed_sd" in m:
                spread = f"±{100 * m['seed_sd']:.1f} % (n={m['seed_n']})" + (
                    " ≥ 5 %: below the noise" if m["seed_sd"] >= TOLERANCE else "")
            lines.append(f"| {r.id} | {r.level} | {'yes' if r.complete else 'no'} | {metric} | {value} | {ref} "
                         f"| {err} | {spread} | {why} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, nargs="*",
                        help="bench run --out folder(s), or folder(s) of solve workdirs; a later folder's task wins")
    parser.add_argument("--carry", type=Path, action="append", default=[], metavar="TABLE.md",
                        help="an earlier table of this script (e.g. solve_stop22.md) whose tasks are carried where "
                             "no results folder holds them (repeatable; a later table's task wins)")
    parser.add_argument("--mdgym", type=Path, default=default_mdgym())
    parser.add_argument("--references", type=Path, default=HERE / "references.json")
    parser.add_argument("--triage", type=Path, default=HERE / "triage.json")
    parser.add_argument("--only-run", action="store_true", help="count only the tasks the results folder holds")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--not-run", action="append", default=[], metavar="ID=REASON",
                        help="a task whose older results no longer hold and that was not run again: counted "
                             "`not run` with this reason (repeatable)")
    args = parser.parse_args(argv)
    if not args.results and not args.carry:
        parser.error("give results folder(s), --carry table(s) or both")
    for table in args.carry:
        if not table.is_file():
            parser.error(f"carried table {table} does not exist")
    for results in args.results:
        if not results.is_dir():
            parser.error(f"results folder {results} does not exist")
    if not (args.mdgym / "SUPPLIED.tsv").is_file():
        parser.error(f"{args.mdgym} is not the MDGym dev set (no SUPPLIED.tsv)")
    tasks = dev_tasks(args.mdgym)
    references = json.loads(args.references.read_text()) if args.references.is_file() else {}
    triage = {}
    if args.triage.is_file():
        triage = {row["id"]: row for row in json.loads(args.triage.read_text())}
    folders = {tid: folder for results in args.results for tid, folder in task_folders(results).items()}
    try:
        carried = {tid: row for table in args.carry for tid, row in carried_rows(table).items()}
    except ValueError as err:
        parser.error(str(err))
    scope = [t for t in tasks.values() if t["no_file"]]
    not_run = dict(item.split("=", 1) if "=" in item else (item, "") for item in args.not_run)
    for tid, reason in not_run.items():
        folders.pop(tid, None)
        carried.pop(tid, None)
        triage[tid] = {**triage.get(tid, {}), "stage": reason or "not run again"}
    for t in scope:  # a solve workdir is named after the task file, which may differ from the task's id
        stem = Path(t["path"]).stem
        if t["id"] not in folders and stem in folders and stem not in not_run:
            folders[t["id"]] = folders.pop(stem)
    scope = [t for t in scope if not args.only_run or t["id"] in folders or t["id"] in carried]
    try:
        results = [score(t, folders.get(t["id"]), references, triage,
                         None if t["id"] in folders else carried.get(t["id"])) for t in scope]
    except ValueError as err:
        parser.error(str(err))
    table = summarise(results)
    if args.json:
        excluded = needs_a_file(results, triage)
        subset = summarise([r for r in results if r.id not in excluded])
        print(json.dumps({"summary": table, "tasks": [r.__dict__ for r in results],
                          "without_file_tasks": {"excluded": excluded, "summary": subset}}, indent=1))
    else:
        source = ", ".join([*map(str, args.results), *(f"carried from {t.name}" for t in args.carry)])
        print(render(table, results, source, triage), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
