"""Zeo++ geometry of ALL CoRE MOF 2019 FSR entries, coarse to fine, on N long-lived workers (issue 15).

benchmarks/zeopp_coarse_fine.py measured both passes on a random sample and chose the error bands of
the coarse pass; this runs the coarse-to-fine pass itself over every entry:

The Zeo++ calls and the workers are tools/zeopp/coarse_fine.py:

- coarse, every entry: the plain atom network (no `-ha`): LCD and PLD (`-res`);
- fine pores (`-ha DEF -res`) only where the coarse value of the cut in use (--refine: LCD, the funnel's
  default cavity cut; PLD, its window cut; or LCD,PLD) lies within the coarse pass's error band of the
  guest's kinetic diameter (refining both costs about twice the CPU: 38 % of entries need the fine pores);
- void fraction only where the LCD passes: a 500-sample point-probe `-vol`, and the CoRE settings
  (`-vol 0 0 5000` on the DEF network) only where that value lies within its band of the cut.

Bands: the 2nd and 98th percentiles of coarse - fine on the sample in --bands (zeopp_coarse_fine.json).

Each worker is one Python process that imports pyzeo once and takes entries from its stdin; an entry's
CPU seconds come from the worker's own rusage (user + system) around that entry. A worker that crashes
or passes --timeout records the entry as failed (with the CPU its process used, from wait4) and is
replaced. Every finished entry is appended to --rows (JSON lines) at once, so a restart skips the
entries already done. Entries run in a seeded random order, so a partial run is a random sample.

Usage: nohup nice -n 5 .venv/bin/python benchmarks/zeopp_fsr_all.py [--workers 2] [--deadline 2026-11-25T00:00]
           > zeopp_fsr_all.log 2>&1 &
       .venv/bin/python benchmarks/zeopp_fsr_all.py --report     # the summary of what --rows holds
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.zeopp import coarse_fine as cf  # noqa: E402

DATASET = "2019-FSR"
RESULTS = ROOT / "benchmarks" / "results"


def bands_from_sample(path: Path) -> dict[str, tuple[float, float]]:
    """Error bands of the coarse LCD, PLD and void fraction (2nd and 98th percentiles of coarse - fine)
    from the sample's per-entry rows; coarse_fine.BANDS holds the same numbers."""
    rows = json.loads(path.read_text())["rows"]

    def band(errors: list[float], quantile: float = 0.98) -> tuple[float, float]:
        ordered = sorted(errors)
        return ordered[int((1 - quantile) * (len(ordered) - 1))], ordered[round(quantile * (len(ordered) - 1))]

    return {key: band([r["values"][f"coarse_{key}"] - r["values"][f"fine_{key}"] for r in rows])
            for key in ("LCD", "PLD", "VF")}


def decisions(row: dict, table: dict, kinetic: float, min_vf: float) -> dict:
    """Keep/cut by the cavity rule (LCD > kinetic, VF >= min) and the window rule (PLD instead), from
    this pass and from the CoRE table."""
    vf = row["VF"]
    mine_cavity = row["LCD"] > kinetic and vf is not None and vf >= min_vf
    mine_window = row["PLD"] > kinetic and vf is not None and vf >= min_vf
    t_lcd, t_pld, t_vf = float(table["LCD"]), float(table["PLD"]), float(table["AV_VF"])
    return {"keep_cavity": mine_cavity, "keep_window": mine_window,
            "table_keep_cavity": t_lcd > kinetic and t_vf >= min_vf,
            "table_keep_window": t_pld > kinetic and t_vf >= min_vf,
            "table": [t_lcd, t_pld, t_vf]}


def run(args) -> None:
    from simagent.materials import structures as st

    bands = bands_from_sample(args.bands)
    table = st.core_table(DATASET)
    order = sorted(table)
    random.Random(args.seed).shuffle(order)
    done = cf.load_rows(args.rows)
    todo = [e for e in order if e not in done][:args.limit]
    session = {"event": "session", "start_utc": datetime.now(UTC).isoformat(timespec="seconds"),
               "workers": args.workers, "nice": os.getpriority(os.PRIO_PROCESS, 0), "done_before": len(done),
               "todo": len(todo), "bands": bands, "kinetic": args.kinetic, "min_vf": args.min_vf,
               "refine": args.refine}
    print(json.dumps(session), flush=True)
    c0, w0 = time.process_time(), time.monotonic()
    paths = st.extract_core_cifs(DATASET, todo)
    session["extract_wall_s"] = round(time.monotonic() - w0, 1)
    session["extract_parent_cpu_s"] = round(time.process_time() - c0, 1)
    print(f"extracted {len(paths)} CIFs in {session['extract_wall_s']} s", flush=True)

    deadline = datetime.fromisoformat(args.deadline).replace(tzinfo=UTC) if args.deadline else None
    sessions = open(args.rows.with_suffix(".sessions.jsonl"), "a")  # noqa: SIM115
    counter = {"n": 0, "loads": []}
    started = time.monotonic()

    def progress() -> None:  # the session so far, rewritten as a new line (the report takes the last)
        session.update(entries=counter["n"], wall_s=round(time.monotonic() - started, 1),
                       load_samples=counter["loads"])
        sessions.write(json.dumps(session) + "\n")
        sessions.flush()

    def on_row(_row: dict) -> None:
        counter["n"] += 1
        if counter["n"] % 20 == 0:  # progress and the session line (wall, load) every 20 entries
            load = os.getloadavg()[0]
            counter["loads"].append(load)
            print(f"{datetime.now(UTC):%H:%M:%S} {counter['n']}/{len(todo)} this session, "
                  f"{time.monotonic() - started:.0f} s, load {load:.1f}", flush=True)
            progress()

    with open(args.rows.with_suffix(".workers.log"), "a") as log:
        _rows, workers = cf.measure_all(
            paths, args.rows, args.kinetic, args.min_vf, workers=args.workers, bands=bands, timeout=args.timeout,
            refine=tuple(args.refine.split(",")), order=todo,
            stop=lambda: bool(deadline and datetime.now(UTC) >= deadline),
            annotate=lambda row: row if "error" in row else row | decisions(row, table[row["entry"]], args.kinetic,
                                                                             args.min_vf),
            on_row=on_row, log=log)
    session |= {"end_utc": datetime.now(UTC).isoformat(timespec="seconds"),
                "worker_processes": [w.totals for w in workers],
                "children_cpu_s": round(sum(getattr(resource.getrusage(resource.RUSAGE_CHILDREN), k)
                                            for k in ("ru_utime", "ru_stime")), 1)}
    progress()
    sessions.close()
    report(args, len(order))


def report(args, total: int | None = None) -> dict:
    rows = list(cf.load_rows(args.rows).values())
    sessions_path = args.rows.with_suffix(".sessions.jsonl")
    lines = [json.loads(x) for x in sessions_path.read_text().splitlines()] if sessions_path.is_file() else []
    sessions = list({s["start_utc"]: s for s in lines}.values())  # each session's last progress line
    ok = [r for r in rows if "error" not in r]
    failed = {r["entry"]: r["error"] for r in rows if "error" in r}
    cpu = sum(r["cpu_s"] for r in rows)
    startup = sum(p["startup_cpu_s"] + p.get("unbooked_cpu_s", 0.0)  # start-up and exit of the workers
                  for s in sessions for p in s.get("worker_processes", []))
    if total is None:
        from simagent.materials import structures as st

        total = len(st.core_table(DATASET))
    loads = [x for s in sessions for x in s.get("load_samples", [])]

    def disagree(kind: str) -> list:
        return [{"entry": r["entry"], "zeopp": [round(r["LCD"], 3), round(r["PLD"], 3), r["VF"]],
                 "table": r["table"], "zeopp_keeps": r[f"keep_{kind}"]}
                for r in ok if r[f"keep_{kind}"] != r[f"table_keep_{kind}"]]

    summary = {
        "dataset": DATASET, "entries_in_set": total, "entries_done": len(rows), "entries_computed": len(ok),
        "failed": failed, "complete": len(rows) == total,
        "settings": {"kinetic_diameter_A": args.kinetic, "min_void_fraction": args.min_vf,
                     "coarse": f"no -ha; -res; -vol 0 0 {cf.COARSE_SAMPLES} (vol only where LCD passes)",
                     "fine": f"-ha DEF -res; -vol 0 0 {cf.FINE_SAMPLES} (only where a coarse value is within "
                             "its band of a cut)",
                     "refine": sorted({",".join(r.get("refine", ["LCD", "PLD"])) for r in ok}),
                     "note": "with refine LCD the PLD (window decisions) is the coarse value unless the LCD "
                             "needed the fine pores",
                     "bands_from": str(args.bands.relative_to(ROOT)) if args.bands.is_relative_to(ROOT)
                     else str(args.bands),
                     "sessions": [{k: s.get(k) for k in ("start_utc", "end_utc", "workers", "nice", "entries",
                                                         "wall_s", "extract_wall_s", "bands")} for s in sessions]},
        "fine_pores_needed": sum(r["fine_pores"] for r in ok),
        "fine_vf_needed": sum(r["fine_vf"] for r in ok),
        "cpu_s_entries": round(cpu, 1), "cpu_s_worker_startup": round(startup, 1),
        "cpu_s_per_entry_mean": round(cpu / len(rows), 3) if rows else None,
        "cpu_s_per_entry_max": max((r["cpu_s"] for r in rows), default=None),
        "cpu_h_total": round((cpu + startup) / 3600, 3),
        "estimate_wall_h_on_2_idle_cores": {
            "value": round((cpu + startup) / 2 / 3600, 3),
            "label": "ESTIMATE: measured CPU (entries + worker start-up) / 2; not an idle-machine measurement"},
        "measured_wall_s": round(sum(s.get("wall_s", 0) for s in sessions), 1),
        "load_average_samples": {"n": len(loads), "min": min(loads, default=None), "max": max(loads, default=None),
                                 "mean": round(sum(loads) / len(loads), 1) if loads else None},
        "agreement_with_core_table": {
            kind: {"agree": sum(r[f"keep_{kind}"] == r[f"table_keep_{kind}"] for r in ok), "of": len(ok),
                   "kept": sum(r[f"keep_{kind}"] for r in ok), "table_kept": sum(r[f"table_keep_{kind}"] for r in ok),
                   "differ": disagree(kind)}
            for kind in ("cavity", "window")},
    }
    if args.compare:  # another pass's rows (e.g. --refine LCD,PLD) on the entries both hold
        other = cf.load_rows(args.compare)
        common = [r for r in ok if r["entry"] in other and "error" not in other[r["entry"]]]
        summary["compared_with"] = {
            "rows": str(args.compare.name), "entries_in_both": len(common),
            "refine": sorted({",".join(other[r["entry"]].get("refine", ["LCD", "PLD"])) for r in common}),
            "cpu_s_this": round(sum(r["cpu_s"] for r in common), 1),
            "cpu_s_other": round(sum(other[r["entry"]]["cpu_s"] for r in common), 1),
            "fine_pores_this": sum(r["fine_pores"] for r in common),
            "fine_pores_other": sum(other[r["entry"]]["fine_pores"] for r in common),
            "window_decisions_differing_from_table_this": sum(r["keep_window"] != r["table_keep_window"]
                                                              for r in common),
            "window_decisions_differing_from_table_other": sum(
                other[r["entry"]]["keep_window"] != other[r["entry"]]["table_keep_window"] for r in common)}
    if not summary["complete"]:
        summary["label"] = (f"PARTIAL: {len(rows)} of {total} entries (a seeded random order, so a random "
                            f"sample); full-set figures would be extrapolated")
        if rows:
            per_entry = (cpu + startup) / len(rows)
            summary["extrapolated_full_set"] = {
                "label": f"EXTRAPOLATED from the {len(rows)} entries done (a random sample), not measured on all "
                         f"{total}", "cpu_h": round(per_entry * total / 3600, 2),
                "wall_h_on_2_idle_cores": round(per_entry * total / 2 / 3600, 2)}
    args.out.write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps({k: v for k, v in summary.items() if k != "agreement_with_core_table"}, indent=1))
    return summary


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        sys.exit(cf.worker(float(sys.argv[2]), float(sys.argv[3]), *sys.argv[4:6]))  # (older runs' workers)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7061)
    parser.add_argument("--kinetic", type=float, default=3.8, help="cut in angstrom (CH4: 3.8)")
    parser.add_argument("--min-vf", type=float, default=0.3)
    parser.add_argument("--refine", default="LCD", help="the pore diameters whose cut decides the fine pores: LCD "
                        "(the funnel's cavity cut), PLD (its window cut) or LCD,PLD")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per entry before the worker is killed")
    parser.add_argument("--bands", type=Path, default=RESULTS / "zeopp_coarse_fine.json")
    parser.add_argument("--rows", type=Path, default=RESULTS / "zeopp_fsr_all.jsonl")
    parser.add_argument("--out", type=Path, default=RESULTS / "zeopp_fsr_all.json")
    parser.add_argument("--deadline", help="UTC time (ISO, e.g. 2026-11-25T00:00): start no entry after it")
    parser.add_argument("--limit", type=int, help="at most this many entries this session (a trial)")
    parser.add_argument("--report", action="store_true", help="only summarise the rows already recorded")
    parser.add_argument("--compare", type=Path, help="with --report: another pass's rows, compared on common entries")
    args = parser.parse_args()
    if args.report:
        report(args)
    else:
        run(args)


if __name__ == "__main__":
    main()
