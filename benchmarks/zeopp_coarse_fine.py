"""Zeo++ geometry of all CoRE MOF 2019 FSR entries, coarse to fine (issue 15): measured on a sample,
extrapolated to the 7,061 entries (the whole set is NOT run here).

The screening funnel's geometry stage needs only two cuts: PLD above the guest's kinetic diameter and
a void fraction of at least 0.3. Neither needs the accessible surface area, and most entries are far
from both cuts. So:

- coarse, every entry: Zeo++ on the plain atom network (no `-ha`): LCD and PLD (`-res`), and the
  point-probe void fraction with few Monte Carlo samples (`-vol 0 0 COARSE`);
- fine, only where a coarse value lies within the coarse pass's error band of a cut: the CoRE
  settings (`-ha DEF -res`, `-vol 0 0 5000`); ASA only for entries a later stage asks about.

Each sampled entry runs every variant (coarse and fine) in a fresh child process (pyzeo can abort a
process), with CPU time per step measured in the child (`time.process_time`), so the band of the
coarse error, the entries that fall in it, and the cost of each pass come from the same sample. The
decisions are checked against the CoRE table (which was made with the fine settings).

Each entry's measurements are kept in --cache (a rerun resumes), and the summary is rewritten every 10
entries, so a run stopped at --deadline (UTC HH:MM) reports the entries it finished (marked partial).

Usage: nice -n 15 .venv/bin/python benchmarks/zeopp_coarse_fine.py [--n 100] [--seed 7061]
       [--kinetic 3.8] [--min-vf 0.3] [--coarse-samples 500] [--deadline 17:15] [--cache DIR]
       [--out benchmarks/results/zeopp_coarse_fine.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DATASET = "2019-FSR"
FINE_SAMPLES = 5000  # CoRE's -vol 0 0 5000 (pyzeo's volume() takes the total count)
WORKER_TIMEOUT_S = 900


def worker(cif: str, coarse_samples: int, out: str) -> int:
    """All pyzeo calls: coarse then fine, CPU seconds per step, values; written to `out` as JSON."""
    import pyzeo.extension as zeo

    from tools.zeopp.native import VoronoiDecomposition
    from tools.zeopp.parse import parse_key_values, parse_res

    cpu: dict[str, float] = {}
    values: dict[str, float] = {}

    def step(name: str, fn):
        t0 = time.process_time()
        result = fn()
        cpu[name] = round(time.process_time() - t0, 4)
        return result

    atoms = step("read", lambda: zeo.AtomNetwork.read_from_CIF(cif))
    coarse = step("coarse_res", lambda: VoronoiDecomposition(atoms))
    step("coarse_res_write", lambda: coarse.free_sphere_file("coarse.res", extended=False))
    res = parse_res(Path("coarse.res").read_text())
    values["coarse_LCD"], values["coarse_PLD"] = res["Di"], res["Df"]
    vol = step("coarse_vol", lambda: parse_key_values(zeo.volume(atoms, 0.0, 0.0, coarse_samples)))
    values["coarse_VF"] = float(vol["AV_Volume_fraction"])

    def fine_network():
        network = atoms.copy()
        zeo.high_accuracy_atomnet(network, "DEF")
        return network

    network = step("fine_ha", fine_network)
    fine = step("fine_res", lambda: VoronoiDecomposition(network))
    step("fine_res_write", lambda: fine.free_sphere_file("fine.res", extended=False))
    res = parse_res(Path("fine.res").read_text())
    values["fine_LCD"], values["fine_PLD"] = res["Di"], res["Df"]
    vol = step("fine_vol", lambda: parse_key_values(
        zeo.volume(atoms, 0.0, 0.0, FINE_SAMPLES, high_accuracy_atmnet=network)))
    values["fine_VF"] = float(vol["AV_Volume_fraction"])
    Path(out).write_text(json.dumps({"cpu_s": cpu, "values": values}))
    return 0


def run_entry(cif: Path, coarse_samples: int) -> dict:
    """One entry in a child process; its CPU time (process start and imports included) from rusage."""
    with tempfile.TemporaryDirectory(prefix="zeo-cf-") as tmp:
        out = Path(tmp) / "out.json"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
        try:
            proc = subprocess.run([sys.executable, __file__, "--worker", str(cif), str(coarse_samples), str(out)],
                                  cwd=tmp, env=env, capture_output=True, text=True, timeout=WORKER_TIMEOUT_S)
            code, tail = proc.returncode, (proc.stdout + proc.stderr)[-300:]
        except subprocess.TimeoutExpired:
            code, tail = -1, f"timed out after {WORKER_TIMEOUT_S} s"
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        row = {"process_cpu_s": round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 3),
               "wall_s": round(time.monotonic() - start, 2)}
        if code != 0 or not out.is_file():
            return row | {"error": f"exit {code}: {' '.join(tail.split())[-200:]}"}
        return row | json.loads(out.read_text())


def band(errors: list[float], quantile: float = 0.98) -> tuple[float, float]:
    """The coarse pass's error band (low, high): the 2nd and 98th percentiles of coarse - fine on the
    sample. The coarse (no -ha) PLD is mostly below the fine one, so the band is not symmetric."""
    ordered = sorted(errors)
    if not ordered:
        return 0.0, 0.0
    return (ordered[int((1 - quantile) * (len(ordered) - 1))], ordered[round(quantile * (len(ordered) - 1))])


def ambiguous(coarse: float, cut: float, errors: tuple[float, float]) -> bool:
    """True when the fine value (coarse - error, error within the band) may lie on either side of the cut."""
    low, high = errors
    return cut + low <= coarse <= cut + high


def plan(rows: list[dict], kinetic: float, min_vf: float, pld_band: tuple[float, float],
         vf_band: tuple[float, float]) -> dict:
    """Coarse-to-fine decisions and their CPU cost (per entry: process overhead, read, coarse steps; the
    fine steps only where needed), checked against the fine values and the CoRE table."""
    cost_coarse = cost_fine = overheads = 0.0
    refined_pld = refined_vf = 0
    wrong_vs_fine, wrong_vs_table = [], []
    for r in rows:
        cpu = r["cpu_s"]
        overhead = max(0.0, r["process_cpu_s"] - sum(cpu.values()))
        overheads += overhead
        cost_coarse += overhead + cpu["read"] + cpu["coarse_res"] + cpu["coarse_res_write"]
        v = r["values"]
        pld = v["coarse_PLD"]
        if ambiguous(pld, kinetic, pld_band):
            refined_pld += 1
            cost_fine += cpu["fine_ha"] + cpu["fine_res"] + cpu["fine_res_write"]
            pld = v["fine_PLD"]
        passed = pld > kinetic
        if passed:  # the void fraction only for entries that pass the PLD cut
            cost_coarse += cpu["coarse_vol"]
            vf = v["coarse_VF"]
            if ambiguous(vf, min_vf, vf_band):
                refined_vf += 1
                if not ambiguous(v["coarse_PLD"], kinetic, pld_band):  # the DEF network is not built yet
                    cost_fine += cpu["fine_ha"]
                cost_fine += cpu["fine_vol"]
                vf = v["fine_VF"]
            passed = vf >= min_vf
        fine_pass = v["fine_PLD"] > kinetic and v["fine_VF"] >= min_vf
        table_pass = r["table_PLD"] > kinetic and r["table_VF"] >= min_vf
        if passed != fine_pass:
            wrong_vs_fine.append(r["entry"])
        if passed != table_pass:
            wrong_vs_table.append(r["entry"])
        r["coarse_to_fine_pass"] = passed
    n = len(rows)
    return {"entries": n, "pld_refined": refined_pld, "vf_refined": refined_vf,
            "passed": sum(r["coarse_to_fine_pass"] for r in rows),
            "cpu_s_coarse": round(cost_coarse, 1), "cpu_s_fine": round(cost_fine, 1),
            "cpu_s_per_entry": round((cost_coarse + cost_fine) / n, 3) if n else None,
            # a persistent worker pays the Python start and the pyzeo import once, not per entry
            "cpu_s_per_entry_without_process_start": round((cost_coarse + cost_fine - overheads) / n, 3) if n else None,
            "decisions_differing_from_fine": wrong_vs_fine, "decisions_differing_from_core_table": wrong_vs_table}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        sys.exit(worker(sys.argv[2], int(sys.argv[3]), sys.argv[4]))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7061)
    parser.add_argument("--kinetic", type=float, default=3.8, help="PLD cut in angstrom (CH4: 3.8)")
    parser.add_argument("--min-vf", type=float, default=0.3)
    parser.add_argument("--coarse-samples", type=int, default=500, help="total MC samples of the coarse -vol")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "zeopp_coarse_fine.json")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "zeopp_coarse_fine_cache")
    parser.add_argument("--deadline", help="UTC HH:MM: start no entry after this")
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)

    from simagent.materials import structures as st

    table = st.core_table(DATASET)
    names = sorted(table)
    sample = random.Random(args.seed).sample(names, k=min(args.n, len(names)))
    t0 = time.monotonic()
    paths = st.extract_core_cifs(DATASET, sample)
    extract_s = time.monotonic() - t0
    rows, failed = [], {}
    started = time.monotonic()
    for i, entry in enumerate(sample, 1):
        cached = args.cache / f"{entry}-{args.coarse_samples}.json"
        if cached.is_file():
            row = json.loads(cached.read_text())
        elif args.deadline and datetime.now(UTC).strftime("%H:%M") >= args.deadline:
            break  # finished entries are still reported (a rerun past the deadline only reports)
        else:
            row = run_entry(paths[entry], args.coarse_samples)
            cached.write_text(json.dumps(row))
        if "error" in row:
            failed[entry] = row["error"]
        else:
            rows.append({"entry": entry, "table_PLD": float(table[entry]["PLD"]),
                         "table_VF": float(table[entry]["AV_VF"]), **row})
        if i % 10 == 0 or i == len(sample):
            print(f"{i}/{len(sample)} entries, {len(failed)} failed, {time.monotonic() - started:.0f} s", flush=True)
            if i < len(sample):
                report(args, rows, failed, sample, len(names), extract_s, started)
    report(args, rows, failed, sample, len(names), extract_s, started)


def report(args, rows: list[dict], failed: dict, sample: list[str], total: int, extract_s: float,
           started: float) -> None:
    pld_band = band([r["values"]["coarse_PLD"] - r["values"]["fine_PLD"] for r in rows])
    vf_band = band([r["values"]["coarse_VF"] - r["values"]["fine_VF"] for r in rows])
    decisions = plan(rows, args.kinetic, args.min_vf, pld_band, vf_band)
    # held out: the band from the even-numbered entries, the decisions checked on the odd-numbered ones
    held_band = (band([r["values"]["coarse_PLD"] - r["values"]["fine_PLD"] for r in rows[::2]]),
                 band([r["values"]["coarse_VF"] - r["values"]["fine_VF"] for r in rows[::2]]))
    held_out = plan([dict(r) for r in rows[1::2]], args.kinetic, args.min_vf, *held_band)
    full = [r["process_cpu_s"] for r in rows]  # every step of both passes (what the fine-only run costs,
    # plus the coarse steps, which are cheap): an upper bound of the fine-everything cost without ASA
    fine_only = [max(0.0, r["process_cpu_s"] - sum(r["cpu_s"].values())) + r["cpu_s"]["read"]
                 + r["cpu_s"]["fine_ha"] + r["cpu_s"]["fine_res"] + r["cpu_s"]["fine_res_write"]
                 + r["cpu_s"]["fine_vol"] for r in rows]
    per_entry = decisions["cpu_s_per_entry"] or 0.0
    summary = {
        "dataset": DATASET, "seed": args.seed, "sampled": len(sample), "computed": len(rows), "failed": failed,
        "complete": len(rows) + len(failed) == len(sample),
        "settings": {"kinetic_diameter_A": args.kinetic, "min_void_fraction": args.min_vf,
                     "coarse": f"no -ha; -res; -vol 0 0 {args.coarse_samples}",
                     "fine": f"-ha DEF -res; -vol 0 0 {FINE_SAMPLES}", "asa": "not computed (no cut needs it)",
                     "band_quantiles": [0.02, 0.98], "pld_band_A": [round(x, 4) for x in pld_band],
                     "vf_band": [round(x, 4) for x in vf_band],
                     "nice": os.getpriority(os.PRIO_PROCESS, 0), "workers": 1},
        "coarse_error": {
            "PLD_abs_median_A": round(statistics.median(abs(r["values"]["coarse_PLD"] - r["values"]["fine_PLD"])
                                                        for r in rows), 4) if rows else None,
            "VF_abs_median": round(statistics.median(abs(r["values"]["coarse_VF"] - r["values"]["fine_VF"])
                                                     for r in rows), 4) if rows else None,
            "fine_PLD_vs_table_within_1pct": round(sum(abs(r["values"]["fine_PLD"] - r["table_PLD"])
                                                       <= 0.01 * max(r["table_PLD"], 1e-9) for r in rows)
                                                   / len(rows), 3) if rows else None},
        "decisions": decisions,
        "held_out_decisions": {k: held_out[k] for k in ("entries", "pld_refined", "vf_refined",
                                                        "decisions_differing_from_fine",
                                                        "decisions_differing_from_core_table")},
        "cpu_s_per_entry": {"coarse_to_fine": per_entry,
                            "fine_everything_without_asa": round(statistics.mean(fine_only), 3) if rows else None,
                            "both_passes_measured": round(statistics.mean(full), 3) if rows else None},
        "extract_s": round(extract_s, 1), "run_wall_s": round(time.monotonic() - started, 1),
        "load_average_at_end": os.getloadavg()[0],
        "extrapolated_all": {
            "label": f"EXTRAPOLATED from a random sample of {len(rows)} (not measured on all {total})",
            "entries": total, "cpu_h": round(per_entry * total / 3600, 2),
            "wall_h_on_2_idle_cores": round(per_entry * total / 2 / 3600, 2),
            "wall_h_on_2_idle_cores_one_worker_process_per_core": round(
                (decisions["cpu_s_per_entry_without_process_start"] or 0.0) * total / 2 / 3600, 2),
            "fine_everything_wall_h_on_2_idle_cores": round(statistics.mean(fine_only) * total / 2 / 3600, 2)
            if rows else None},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    print(json.dumps(summary, indent=1), flush=True)


if __name__ == "__main__":
    main()
