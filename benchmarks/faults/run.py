"""Fault benchmark: broken or physically wrong inputs through the error agent.

Each case (cases/<engine>/<id>/case.json + input files) is labelled with an MDGym error category and
an expectation: "repair" (the agent should fix it), "detect" (recognise it; no safe automatic fix
exists, e.g. force-field parameters that would have to be invented) or "reject" (unsafe input).

For every case: `simagent check` (pre-run findings), then `simagent run --yes` (pre-run
corrections, runs, handlers, gates; no LLM). Reported per category:
  detected  - a pre-run finding, a recognised failure mode (handler) or a failed gate;
  repaired  - the run ended `succeeded` (all gates passed) after at least one correction;
  unsafe    - for "reject" cases: rejected, nothing run, and the canary file was not created.
False alarms: the pre-run check on every registered protocol's rendered inputs (a few TaskSpecs
each), plus the gates and warning handlers on real runs of them with --good-runs.

    .venv/bin/python benchmarks/faults/run.py [--only L0] [--good-runs] [--json results.json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from simagent.usercli import check_file, run_file  # noqa: E402

ENGINE_AVAILABLE = {}


def engine_available(engine: str) -> bool:
    if engine not in ENGINE_AVAILABLE:
        try:
            if engine == "lammps":
                from tools.lammps.engine import lmp_binary

                lmp_binary()
            elif engine == "gromacs":
                from tools.gromacs.handlers import gmx_binary

                gmx_binary()
            elif engine == "raspa":
                from tools.raspa.handlers import simulate_binary

                simulate_binary()
            ENGINE_AVAILABLE[engine] = True
        except Exception:  # noqa: BLE001
            ENGINE_AVAILABLE[engine] = False
    return ENGINE_AVAILABLE[engine]


def run_case(folder: Path, scratch: Path) -> dict:
    meta = json.loads((folder / "case.json").read_text())
    work = scratch / meta["id"]
    shutil.copytree(folder, work / "input")
    (work / "input" / "case.json").unlink()
    target = work / "input" / meta["file"]
    result = {**meta, "skipped": False}
    if not engine_available(meta["engine"]):
        return {**result, "skipped": True}
    canary = Path(meta["canary"]) if meta.get("canary") else None
    if canary and canary.exists():
        canary.unlink()
    start = time.monotonic()
    checked = check_file(target, meta["engine"])
    result["findings"] = [f"{f.severity}: {f.message}" for f in checked.findings]
    report = run_file(target, meta["engine"], work / "run", yes=True, backend=None, time_limit_s=300,
                      stall_limit_s=120)
    result.update(status=report.status, attempts=report.attempts, message=report.message,
                  corrections=[f"{c['handler']}: {'; '.join(c['changes'])}" for c in report.corrections],
                  diagnoses=[f"{d['handler']} [{d['category']}]" for d in report.diagnoses],
                  wall_s=round(time.monotonic() - start, 1))
    recognised = [d for d in report.diagnoses if d["handler"]]
    result["detected"] = bool(checked.findings or report.corrections or recognised or report.status == "rejected")
    result["repaired"] = report.status == "succeeded" and bool(report.corrections)
    if meta["expect"] == "reject":
        executed = report.attempts > 0 or (canary is not None and canary.exists())
        result["unsafe_executed"] = executed
        result["detected"] = checked.unsafe and report.status == "rejected"
    return result


def false_alarms(good_runs: bool, scratch: Path, time_limit_s: float = 900.0) -> dict:
    """Findings on the protocols' own inputs (pre-run: up to three requests per protocol); with
    good_runs, one request per protocol is also run and its jobs go through the gates and the
    warning handlers. A run that fails or hits the time limit is listed apart (not a false alarm of
    the checks)."""
    from agents.error import job_findings
    from benchmarks.faults.good_inputs import good_jobs, good_plans
    from simagent import gates
    from simagent.handlers import CorrectionLog, diagnose
    from simagent.jobrun import run_plan
    from simagent.models import Plan

    checked, alarms, runs, unjudged = 0, [], 0, []
    for label, job in good_jobs():
        checked += 1
        for finding in job_findings(job):
            alarms.append(f"{label} {job.id}: pre-run {finding}")
    if good_runs:
        for n, (label, jobs) in enumerate(good_plans()):
            jobs = [j.model_copy(update={"time_limit_s": min(j.time_limit_s, time_limit_s)}) for j in jobs]
            root = scratch / "good" / f"plan{n}"
            start = time.monotonic()
            records = run_plan(Plan(jobs=jobs), root)
            print(f"good run {label}: {time.monotonic() - start:.0f} s", flush=True)
            for job in jobs:
                runs += 1
                record = records[job.id]
                if record.status.value != "succeeded":
                    unjudged.append(f"{label} {job.id}: {record.status.value} {record.message}")
                    continue
                job_dir = root / job.id
                report = gates.evaluate(job_dir, job)
                if report.outcome != gates.Outcome.PASS:
                    alarms.append(f"{label} {job.id}: gates {report.outcome.value}: {report.summary()}")
                warning = diagnose(job_dir, job, CorrectionLog(), succeeded=True)
                if warning is not None:
                    alarms.append(f"{label} {job.id}: handler {warning.handler}: {warning.summary()}")
    return {"inputs_checked": checked, "inputs_run": runs, "false_alarms": alarms, "not_judged": unjudged}


def summarise(results: list[dict], good: dict) -> str:
    rows = defaultdict(lambda: {"n": 0, "detected": 0, "repair_n": 0, "repaired": 0})
    for r in results:
        if r["skipped"]:
            continue
        key = (r["engine"] if r["category"] != "unsafe input" else "unsafe", r["category"])
        row = rows[key]
        row["n"] += 1
        row["detected"] += bool(r["detected"])
        if r["expect"] == "repair":
            row["repair_n"] += 1
            row["repaired"] += bool(r["repaired"])
    lines = [f"{'engine':8} {'category':40} {'cases':>5} {'detected':>9} {'repaired':>9}"]
    total = {"n": 0, "detected": 0, "repair_n": 0, "repaired": 0}
    for (engine, category), row in sorted(rows.items()):
        repaired = f"{row['repaired']}/{row['repair_n']}" if row["repair_n"] else "-"
        lines.append(f"{engine:8} {category:40} {row['n']:>5} {row['detected']:>5}/{row['n']:<3} {repaired:>9}")
        for k in total:
            total[k] += row[k]
    fixable = [r for r in results if not r["skipped"] and r["category"] != "unsafe input"]
    unsafe = [r for r in results if not r["skipped"] and r["category"] == "unsafe input"]
    lines.append("")
    lines.append(f"detected: {total['detected']}/{total['n']} = {100 * total['detected'] / max(total['n'], 1):.0f} %")
    lines.append(f"repaired (cases expecting a repair): {total['repaired']}/{total['repair_n']} = "
                 f"{100 * total['repaired'] / max(total['repair_n'], 1):.0f} %")
    all_fixable = sum(bool(r["repaired"]) for r in fixable)
    lines.append(f"repaired (all non-unsafe cases): {all_fixable}/{len(fixable)} = "
                 f"{100 * all_fixable / max(len(fixable), 1):.0f} %")
    executed = sum(bool(r.get("unsafe_executed")) for r in unsafe)
    lines.append(f"unsafe inputs: {len(unsafe)}, rejected {sum(bool(r['detected']) for r in unsafe)}, "
                 f"unsafe lines executed: {executed}")
    lines.append(f"false alarms: {len(good['false_alarms'])} on {good['inputs_checked']} protocol inputs "
                 f"({good['inputs_run']} run)")
    lines += [f"  {a}" for a in good["false_alarms"]]
    if good.get("not_judged"):
        lines.append(f"good runs that did not finish (not judged): {len(good['not_judged'])}")
        lines += [f"  {a}" for a in good["not_judged"]]
    skipped = [r["id"] for r in results if r["skipped"]]
    if skipped:
        lines.append(f"skipped (engine not installed): {', '.join(skipped)}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="run cases whose id starts with this")
    parser.add_argument("--good-runs", action="store_true", help="also run the protocols' good inputs (minutes)")
    parser.add_argument("--good-only", action="store_true", help="only the false-alarm part")
    parser.add_argument("--json", type=Path, default=HERE / "results.json")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="simagent-faults-"))
    results = []
    try:
        for folder in sorted(HERE.glob("cases/*/*")):
            if args.good_only or not (folder / "case.json").is_file() or not folder.name.startswith(args.only):
                continue
            result = run_case(folder, scratch)
            results.append(result)
            flag = "skip" if result["skipped"] else ("detected" if result["detected"] else "MISSED") + \
                (", repaired" if result.get("repaired") else "")
            print(f"{result['id']:32} {result['category']:38} {flag:20} {result.get('wall_s', 0):6.1f} s  "
                  f"{result.get('message', '')[:90]}", flush=True)
        good = false_alarms(args.good_runs or args.good_only, scratch)
        text = summarise(results, good)
        print("\n" + text)
        args.json.write_text(json.dumps({"cases": results, "good_inputs": good, "summary": text}, indent=1))
    finally:
        if args.keep:
            print(f"scratch kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
