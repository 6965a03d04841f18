"""Independent references for the MDGym dev set (benchmarks/mdgym_dev/<task>/in.lammps).

Each folder holds a LAMMPS input written by hand, literally from the task description, and
metrics.json naming which thermo column of which run each metric averages. This script runs the
inputs (nice -n 10, one at a time), averages the columns over the named run's thermo rows and
writes references.json: value, how it was obtained, LAMMPS version, wall time. It shares no code
with simagent's solver (its own log parser), so the references stay independent; they never
enter the solver.

    python benchmarks/mdgym_dev/run_references.py [TASK ...] [--reparse]
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import fmean

HERE = Path(__file__).parent
OUT = HERE / "references.json"


def thermo_runs(log: str) -> list[dict[str, list[float]]]:
    """Thermo blocks of a LAMMPS log, one per run: standard ('Step Temp ...' rows up to 'Loop
    time') or YAML ('keywords: [...]' then '- [...]' rows)."""
    runs: list[dict[str, list[float]]] = []
    lines = log.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if line.startswith("keywords: ["):
            names = [w.strip().strip("'\"") for w in line[len("keywords: ["):].rstrip("]").split(",") if w.strip()]
            block: dict[str, list[float]] = {n: [] for n in names}
            i += 1
            while i < len(lines) and not lines[i].startswith("..."):
                row = lines[i].strip()
                if row.startswith("- ["):
                    values = [v.strip() for v in row[3:].rstrip("]").split(",") if v.strip()]
                    for name, value in zip(names, values, strict=False):
                        block[name].append(float(value))
                i += 1
            runs.append(block)
        elif line.startswith("Step ") or line.split()[:1] == ["Step"]:
            names = line.split()
            block = {n: [] for n in names}
            i += 1
            while i < len(lines) and not lines[i].startswith("Loop time"):
                words = lines[i].split()
                if len(words) == len(names):
                    try:
                        values = [float(w) for w in words]
                    except ValueError:
                        values = []
                    for name, value in zip(names, values, strict=False):
                        block[name].append(value)
                i += 1
            runs.append(block)
        i += 1
    return runs


def lammps() -> str:
    for name in ("lmp", "lmp_serial", "lmp_mpi"):
        beside = Path(sys.executable).parent / name  # the venv's LAMMPS
        if beside.exists():
            return str(beside)
        if shutil.which(name):
            return str(shutil.which(name))
    raise SystemExit("LAMMPS (lmp) not found")


def run_task(folder: Path, lmp: str, rerun: bool = True) -> dict:
    spec = json.loads((folder / "metrics.json").read_text())
    if not rerun and (folder / "log.reference").is_file():
        log = (folder / "log.reference").read_text()
        return summarise(folder, spec, log, None)
    with tempfile.TemporaryDirectory(prefix=f"mdgym-ref-{folder.name}-") as tmp:
        for item in folder.iterdir():
            if item.is_file():
                shutil.copy2(item, tmp)
        started = time.monotonic()
        proc = subprocess.run(["nice", "-n", "10", lmp, "-in", "in.lammps", "-log", "log.lammps"], cwd=tmp,
                              capture_output=True, text=True, timeout=3600)
        wall = time.monotonic() - started
        log = (Path(tmp) / "log.lammps").read_text()
        (folder / "log.reference").write_text(log)  # kept: the reference can be re-read without a rerun
        if proc.returncode != 0:
            raise RuntimeError(f"{folder.name}: LAMMPS failed: {proc.stdout[-800:]}")
    return summarise(folder, spec, log, wall)


def summarise(folder: Path, spec: dict, log: str, wall: float | None) -> dict:
    version = log.splitlines()[0].strip() if log else "?"
    runs = thermo_runs(log)
    values = {}
    for metric, how in spec["metrics"].items():
        block = runs[how.get("run", -1)]
        column = block[how["column"]]
        scale = how.get("scale", 1.0)
        values[metric] = {
            "value": fmean(column) * scale,
            "how": f"mean of {how['column']} over the {len(column)} thermo rows of run {how.get('run', -1)}"
                   + (f", x {scale}" if scale != 1.0 else "") + f" of benchmarks/mdgym_dev/{folder.name}/in.lammps",
        }
    return {"task": spec["task"], "metrics": values, "lammps": version,
            "wall_s": None if wall is None else round(wall, 1),
            "note": spec.get("note", "")}


def main(names: list[str]) -> None:
    rerun = "--reparse" not in names  # --reparse: read the kept logs again, no LAMMPS run
    names = [n for n in names if n != "--reparse"]
    lmp = lammps() if rerun else ""
    folders = [HERE / n for n in names] if names else sorted(p for p in HERE.iterdir() if (p / "in.lammps").is_file())
    refs = json.loads(OUT.read_text()) if OUT.is_file() else {}
    for folder in folders:
        print(f"{folder.name} ...", flush=True)
        refs[folder.name] = run_task(folder, lmp, rerun)
        print(json.dumps(refs[folder.name]["metrics"], indent=1), f"({refs[folder.name]['wall_s']} s)", flush=True)
        OUT.write_text(json.dumps(refs, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
