"""Funnel recall against exhaustive GCMC (issue 15), and its cost.

A random sample of CoRE MOF 2019 ASR entries (valid, at most --max-atoms atoms per cell) is screened
twice from the same job folders:
- exhaustive: GCMC at the conditions for every sampled entry (geometry cut off, every entry to GCMC);
- funnel: geometry cut (PLD > kinetic diameter, void fraction >= 0.3), Widom K_H, GCMC for the
  `keep` highest K_H, for several values of keep.
Recall = |funnel top-10 ∩ exhaustive top-10| / 10. Cost = engine wall time summed over the jobs each
variant needs (status.json wall_s; the shared machine's load inflates both alike).

The sample is processed in chunks (same job folders, finished jobs reused), and results.json is
rewritten after each chunk, so a run stopped at --deadline (UTC HH:MM) reports what it finished.

Usage: nice -n 10 .venv/bin/python benchmarks/screen_recall.py --n 100 [--chunk 20] [--deadline 14:15]
       [--widom-cycles 300] [--gcmc-init 200] [--gcmc-cycles 400] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from zeopp_core_agreement import atom_count  # noqa: E402  (benchmarks/, first on sys.path)

from agents.screening import KINETIC_DIAMETER_A, ScreenSpec, run_screen  # noqa: E402
from simagent.executor import LocalExecutor, read_record  # noqa: E402
from simagent.materials.structures import core_table, extract_core_cifs  # noqa: E402

TOP = 10


def sample_entries(n: int, seed: int, max_atoms: int) -> list[str]:
    table = core_table("2019-ASR")
    rng = random.Random(seed)
    names = sorted(e for e, r in table.items() if not r.get("DISORDER", "").strip() and r.get("PLD"))
    rng.shuffle(names)
    candidates = names[:3 * n]  # one pass over the archive (an xz stream cannot seek)
    paths = extract_core_cifs("2019-ASR", candidates)
    chosen = [e for e in candidates if atom_count(paths[e]) <= max_atoms][:n]
    return chosen


def wall(job_dir: str) -> float:
    record = read_record(Path(job_dir))
    return record.wall_s or 0.0 if record else 0.0


def evaluate(rows: list[dict], top: int, keeps: list[int], min_vf: float) -> dict:
    """Recall of the funnel's top-`top` against the exhaustive top-`top`, for each Widom keep count."""
    table = core_table("2019-ASR")
    kinetic = KINETIC_DIAMETER_A["CH4"]
    exhaustive = sorted(rows, key=lambda r: r["uptake"], reverse=True)
    truth = {r["entry"] for r in exhaustive[:top]}
    exhaustive_cost = sum(r["gcmc_wall_s"] for r in rows)
    geometric = [r for r in rows if float(table[r["entry"]]["PLD"]) > kinetic
                 and float(table[r["entry"]]["AV_VF"]) >= min_vf]
    by_henry = sorted(geometric, key=lambda r: r["henry"], reverse=True)
    variants = {}
    for keep in keeps:
        kept = by_henry[:keep]
        found = {r["entry"] for r in sorted(kept, key=lambda r: r["uptake"], reverse=True)[:top]}
        cost = sum(r["widom_wall_s"] for r in geometric) + sum(r["gcmc_wall_s"] for r in kept)
        variants[keep] = {"recall": len(found & truth) / min(top, len(truth)), "gcmc_jobs": len(kept),
                          "widom_jobs": len(geometric), "engine_wall_s": round(cost, 1),
                          "cost_fraction": round(cost / exhaustive_cost, 3) if exhaustive_cost else None}
    geometry_only = {r["entry"] for r in sorted(geometric, key=lambda r: r["uptake"], reverse=True)[:top]}
    return {"top": top, "mofs": len(rows), "after_geometry": len(geometric),
            "geometric_entries": sorted(r["entry"] for r in geometric),
            "exhaustive_gcmc_wall_s": round(exhaustive_cost, 1),
            "geometry_cut_recall": len(geometry_only & truth) / min(top, len(truth)),
            "exhaustive_top": sorted(truth), "funnel_by_keep": variants}


def plot(report: dict, path: Path) -> None:
    """Left: recall of the funnel's top 10 (and top 3) against its cost, one point per Widom keep count.
    Right: GCMC uptake against the Widom K_H that ranks the entries for GCMC (geometry cut marked)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2), dpi=120)
    for key, marker, label in (("result", "o", "top 10"), ("result_top3", "s", "top 3")):
        variants = report[key]["funnel_by_keep"]
        xs = [v["cost_fraction"] for v in variants.values()]
        ys = [v["recall"] for v in variants.values()]
        left.plot(xs, ys, marker=marker, ls="", label=f"{label} (keep = {', '.join(map(str, variants))})")
        for keep, x, y in zip(variants, xs, ys, strict=True):
            left.annotate(str(keep), (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
    left.plot([1.0], [1.0], "k*", ms=10, label="exhaustive GCMC")
    left.set_xlabel("cost: engine wall time / exhaustive GCMC's")
    left.set_ylabel("recall of the exhaustive top N")
    left.set_xlim(0, 1.05)
    left.set_ylim(-0.05, 1.05)
    left.legend(fontsize=7, loc="lower right")
    left.set_title(f"funnel vs exhaustive GCMC, {report['result']['mofs']} MOFs", fontsize=9)
    rows = report["rows"]
    geometric = set(report["result"].get("geometric_entries", []))
    for passed, colour, label in ((True, "tab:blue", "passes the geometry cut"), (False, "0.6", "cut by geometry")):
        chosen = [r for r in rows if (r["entry"] in geometric) == passed and r["henry"] > 0]
        right.errorbar([r["henry"] for r in chosen], [r["uptake"] for r in chosen],
                       yerr=[r["uptake_error"] for r in chosen], fmt="o", ms=3, color=colour, label=label)
    right.set_xscale("log")
    right.set_xlabel("Widom K_H of CH4 (mol/kg/Pa)")
    right.set_ylabel("GCMC uptake (cm3(STP)/cm3)")
    right.legend(fontsize=7)
    right.set_title("uptake at the conditions vs Henry coefficient", fontsize=9)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--chunk", type=int, default=20)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--max-atoms", type=int, default=300)
    parser.add_argument("--widom-cycles", type=int, default=300)
    parser.add_argument("--gcmc-init", type=int, default=200)
    parser.add_argument("--gcmc-cycles", type=int, default=400)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--deadline", help="UTC HH:MM: start no chunk after this")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/screen_recall"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    entries = sample_entries(args.n, args.seed, args.max_atoms)
    rows: list[dict] = []
    started = time.time()
    executor = LocalExecutor(max_parallel=args.workers)
    try:
        for start in range(0, len(entries), args.chunk):
            if args.deadline and datetime.now(UTC).strftime("%H:%M") >= args.deadline:
                break
            chunk = entries[start:start + args.chunk]
            spec = ScreenSpec(entries=chunk, top_n=TOP, henry_keep=len(chunk), geometry_cut=False,
                              min_void_fraction=0.0, max_atoms=args.max_atoms, widom_cycles=args.widom_cycles,
                              gcmc_init_cycles=args.gcmc_init, gcmc_cycles=args.gcmc_cycles, seed=args.seed)
            result = run_screen(spec, args.out / "runs", executor, say=lambda t: print(t, flush=True))
            for r in result.ranking:
                rows.append({"entry": r.entry, "uptake": r.uptake, "uptake_error": r.uptake_error, "henry": r.henry,
                             "gcmc_wall_s": wall(r.gcmc_job), "widom_wall_s": wall(r.widom_job)})
            report = {"settings": vars(args) | {"out": str(args.out)}, "sampled": len(entries),
                      "elapsed_s": round(time.time() - started, 1), "complete": start + args.chunk >= len(entries),
                      "result": evaluate(rows, TOP, [10, 15, 20, 30], 0.3),
                      # small samples: the top 3 with keep = 3, 5, 10 (the top 10 of 10 MOFs says nothing)
                      "result_top3": evaluate(rows, 3, [3, 5, 10], 0.3), "rows": rows}
            (args.out / "results.json").write_text(json.dumps(report, indent=2))
            plot(report, args.out / "recall_vs_cost.png")
            print(json.dumps({k: report[k] for k in ("result", "result_top3")}, indent=2), flush=True)
    finally:
        executor.shutdown()


if __name__ == "__main__":
    main()
