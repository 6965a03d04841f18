"""Wall time of a 5-point isotherm: CH4 in HKUST-1 (CoRE MOF 2019 FIQCEN_clean) at 298 K, 1-65 bar,
read from the request text by the expert backend; one GCMC job per pressure plus the helium job, run
concurrently on all cores (LocalExecutor, max_parallel = os.cpu_count()). The request's precision
words set the MC cycles (tools.raspa.protocols.adsorption.requested_precision).

Usage: .venv/bin/python benchmarks/isotherm_time.py [--request "..."] [--out benchmarks/results/isotherm_time.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from raspa_throughput import measure  # noqa: E402

from simagent.backends.expert import ExpertBackend  # noqa: E402
from simagent.protocols import protocols_for  # noqa: E402

REQUEST = "Methane adsorption isotherm in HKUST-1 at 298 K: 1, 5, 10, 35 and 65 bar"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--request", default=REQUEST)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "isotherm_time.json")
    args = parser.parse_args()
    spec = ExpertBackend().task_spec(args.request)
    protocol = protocols_for(spec)[0]
    report = {"request": args.request, "cpus": os.cpu_count(), "load_average": os.getloadavg()}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="isotherm-bench-") as tmp:
        row = measure(args.request, protocol.name, spec, {}, Path(tmp))
    report.update(row, total_s=time.perf_counter() - start, load_average_after=os.getloadavg())
    print(f"{protocol.name}: {len(row['jobs'])} jobs, plan wall {row['plan_wall_s']:.0f} s, total "
          f"{report['total_s']:.0f} s on {os.cpu_count()} cores (load {report['load_average'][0]:.1f})")
    for job in row["jobs"]:
        print(f"    {job['job']:<10} wall {job['wall_s'] or 0:.0f} s, {job['production_cycles']} cycles")
    for result in row["results"]:
        print(f"    {result['quantity']} = {result['value']:.4g} +/- {result['uncertainty'] or 0:.2g} {result['unit']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, default=str))


if __name__ == "__main__":
    main()
