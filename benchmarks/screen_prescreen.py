"""Short GCMC pre-screen of the screen_recall sample (issue 15): the loading-aware stage of the funnel.

For the same sample as benchmarks/screen_recall.py (CoRE MOF 2019 ASR, seed, at most --max-atoms atoms per
cell), runs the funnel's pre-screen GCMC (agents.screening.gcmc_uptakes, job kind 'pregcmc', seed + 2 as in
the funnel) at the conditions for every sampled entry, geometry cut off, so any geometry cut can be
evaluated afterwards against the exhaustive GCMC recorded in screen_recall.json.

Resumable: finished job folders under --out are reused and the results file is rewritten after every
chunk, with the chunk's engine wall times (status.json), its CPU time (RASPA children, getrusage) and the
load average, so the cost is stated on a shared machine.

--calibrate ENTRY...: the cost of a short run against a full one, which the recorded exhaustive wall
times (taken under another load) cannot give: for each entry, one after the other on one worker, the full
GCMC of screen_recall.py (its init/production cycles and seed, so its uptake must equal the recorded one)
and the short run, each with its RASPA CPU time; written under "calibration".

Usage: nice -n 10 .venv/bin/python benchmarks/screen_prescreen.py [--init 30] [--cycles 60] [--chunk 10]
       [--deadline 20:30] [--out /tmp/i15/prescreen] [--result benchmarks/results/screen_prescreen.json]
       [--calibrate ENTRY ... [--full-init 100] [--full-cycles 300] [--full-from OTHER_RESULT.json]]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from screen_recall import sample_entries, wall  # noqa: E402  (benchmarks/, first on sys.path)

from agents.screening import ScreenSpec, gcmc_uptakes  # noqa: E402
from simagent.executor import LocalExecutor  # noqa: E402
from simagent.materials.structures import core_table, extract_core_cifs  # noqa: E402


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--max-atoms", type=int, default=200)
    parser.add_argument("--init", type=int, default=ScreenSpec().prescreen_init_cycles)
    parser.add_argument("--cycles", type=int, default=ScreenSpec().prescreen_cycles)
    parser.add_argument("--chunk", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--deadline", help="UTC HH:MM: start no chunk after this")
    parser.add_argument("--out", type=Path, default=Path("/tmp/i15/prescreen"))
    parser.add_argument("--result", type=Path, default=Path("benchmarks/results/screen_prescreen.json"))
    parser.add_argument("--first", type=int, help="run only the first FIRST sampled entries")
    parser.add_argument("--calibrate", nargs="+", metavar="ENTRY")
    parser.add_argument("--full-from", type=Path, help="reuse the full runs' CPU of this calibration")
    parser.add_argument("--full-init", type=int, default=100)
    parser.add_argument("--full-cycles", type=int, default=300)
    args = parser.parse_args()
    spec = ScreenSpec(seed=args.seed)
    if args.calibrate:
        calibrate(args, spec)
        return
    entries = sample_entries(args.n, args.seed, args.max_atoms)[:args.first]
    table = core_table(spec.dataset)
    previous = json.loads(args.result.read_text()) if args.result.exists() else {}
    rows = {r["entry"]: r for r in previous.get("rows", [])}
    chunks = previous.get("chunks", [])
    executor = LocalExecutor(max_parallel=args.workers)
    failed: dict[str, str] = {}
    try:
        todo = [e for e in entries if e not in rows]
        for start in range(0, len(todo), args.chunk):
            if args.deadline and datetime.now(UTC).strftime("%H:%M") >= args.deadline:
                break
            chunk = todo[start:start + args.chunk]
            cifs = extract_core_cifs(spec.dataset, chunk)
            load, cpu, began = os.getloadavg()[0], children_cpu(), time.time()
            found = gcmc_uptakes(spec, cifs, table, args.out / "jobs", executor, lambda t: print(t, flush=True),
                                 failed, kind="pregcmc", init_cycles=args.init, cycles=args.cycles,
                                 seed=args.seed + 2)
            chunks.append({"entries": len(chunk), "cpu_s": round(children_cpu() - cpu, 1),
                           "elapsed_s": round(time.time() - began, 1),
                           "load_before": round(load, 2), "load_after": round(os.getloadavg()[0], 2)})
            for entry, (result, job_dir) in found.items():
                rows[entry] = {"entry": entry, "uptake": result.value, "uptake_error": result.uncertainty or 0.0,
                               "unit": result.unit, "wall_s": wall(str(job_dir)), "job": str(job_dir)}
            report = {"settings": vars(args) | {"out": str(args.out), "result": str(args.result),
                                                "job_kind": "pregcmc", "gcmc_seed": args.seed + 2},
                      "sampled": len(entries), "done": len(rows), "complete": all(e in rows for e in entries),
                      "failed": failed, "chunks": chunks,
                      "rows": [rows[e] for e in entries if e in rows]}
            args.result.parent.mkdir(parents=True, exist_ok=True)
            args.result.write_text(json.dumps(report, indent=2))
            print(f"{len(rows)}/{len(entries)} done; chunk {chunks[-1]}", flush=True)
    finally:
        executor.shutdown()


def calibrate(args: argparse.Namespace, spec: ScreenSpec) -> None:
    table = core_table(spec.dataset)
    report = json.loads(args.result.read_text())
    cifs = extract_core_cifs(spec.dataset, args.calibrate)
    executor = LocalExecutor(max_parallel=1)
    # full runs measured before (--full-from: another calibration with the same full settings) are reused
    measured = {r["entry"]: r["gcmc"] | {"measured_in": str(args.full_from)}
                for r in json.loads(args.full_from.read_text())["calibration"]["runs"]} if args.full_from else {}
    runs: list[dict] = []
    failed: dict[str, str] = {}
    try:
        for entry in args.calibrate:
            row = {"entry": entry, "load_before": round(os.getloadavg()[0], 2)}
            if entry in measured:
                row["gcmc"] = measured[entry]
            for kind, init, cycles, seed in (("gcmc", args.full_init, args.full_cycles, args.seed + 1),
                                             ("pregcmc", args.init, args.cycles, args.seed + 2)):
                if kind in row:
                    continue
                cpu = children_cpu()
                found = gcmc_uptakes(spec, {entry: cifs[entry]}, table, args.out / "calibration", executor,
                                     lambda t: None, failed, kind=kind, init_cycles=init, cycles=cycles, seed=seed)
                result, job_dir = found[entry]
                row[kind] = {"cpu_s": round(children_cpu() - cpu, 2), "wall_s": wall(str(job_dir)),
                             "uptake": result.value, "uptake_error": result.uncertainty or 0.0}
            runs.append(row)
            print(row, flush=True)
            cpu_full = sum(r["gcmc"]["cpu_s"] for r in runs)
            cpu_short = sum(r["pregcmc"]["cpu_s"] for r in runs)
            report["calibration"] = {"full_cycles": [args.full_init, args.full_cycles], "runs": runs,
                                     "short_over_full_cpu": round(cpu_short / cpu_full, 4) if cpu_full else None}
            args.result.write_text(json.dumps(report, indent=2))
    finally:
        executor.shutdown()


if __name__ == "__main__":
    main()
