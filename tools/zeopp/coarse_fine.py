"""Zeo++ pore geometry coarse to fine, for screening cuts (LCD or PLD above a kinetic diameter, void
fraction at least a minimum), on long-lived worker processes.

- coarse, every entry: the plain atom network (no `-ha`): LCD and PLD (`-res`);
- fine pores (`-ha DEF -res`, the CoRE MOF 2019 settings) only where the coarse value of the cut in use
  (`refine`: the LCD for the funnel's cavity cut, the PLD for its window cut, or both) lies within the
  coarse pass's error band of the kinetic diameter (a value not refined stays coarse, within its band);
- void fraction only where the LCD passes: 500-sample point-probe `-vol`, and the CoRE settings
  (`-vol 0 0 5000` on the DEF network) only where that value lies within its band of the cut.

BANDS: the 2nd and 98th percentiles of (coarse - fine) measured on 62 random CoRE MOF 2019 FSR entries
(benchmarks/zeopp_coarse_fine.py, results/zeopp_coarse_fine.json). The coarse PLD is mostly below the
fine one, so the bands are not symmetric.

pyzeo can abort a process, so the Zeo++ calls run only in `Worker` children (`python -m
tools.zeopp.coarse_fine KINETIC MIN_VF BANDS_JSON`), which import pyzeo once and take one CIF path a line
on stdin; an entry's CPU seconds are the child's own rusage around it. A child that dies or passes the
timeout records its entry as failed and is replaced. `measure_all` appends each finished entry to a JSON
lines file at once, so a rerun skips the entries done.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

COARSE_SAMPLES = 500
FINE_SAMPLES = 5000  # CoRE's -vol 0 0 5000 (pyzeo's volume() takes the total count)
BANDS: dict[str, tuple[float, float]] = {"LCD": (-0.6098, 0.3205), "PLD": (-0.6275, 0.1748), "VF": (-0.0264, 0.0386)}
ROOT = Path(__file__).resolve().parents[2]


def ambiguous(coarse: float, cut: float, band: tuple[float, float]) -> bool:
    """True when the fine value (coarse - error, error within the band) may lie on either side of the cut."""
    low, high = band
    return cut + low <= coarse <= cut + high


def decisive(row: dict, kinetic: float, min_vf: float, bands: dict = BANDS, key: str = "LCD") -> dict | None:
    """A pass's values that settle the cut (`key`, LCD or PLD, against `kinetic`, void fraction against
    `min_vf`) for a funnel whose cut may differ from the one the pass refined for; None when they do not
    (a coarse value within its band of this cut, or no void fraction for an entry that passes the size cut)."""
    if "error" in row:
        return None
    if not row["fine_pores"] and ambiguous(row[key], kinetic, bands[key]):
        return None
    if row[key] > kinetic:
        if row["VF"] is None or (not row["fine_vf"] and ambiguous(row["VF"], min_vf, bands["VF"])):
            return None
    return {"LCD": row["LCD"], "PLD": row["PLD"], "VF": row["VF"],
            "fine": bool(row["fine_pores"] or row["fine_vf"])}


# --- the worker process ---------------------------------------------------------------------------

def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(cif: str, kinetic: float, min_vf: float, bands: dict = BANDS, refine: tuple[str, ...] = ("LCD",)) -> dict:
    """One entry, coarse to fine (in a worker only): values and which of them needed the full settings;
    `refine`: the pore diameters (LCD, PLD) whose cut decides when the fine pores are computed."""
    import pyzeo.extension as zeo

    from tools.zeopp.native import VoronoiDecomposition
    from tools.zeopp.parse import parse_key_values, parse_res

    atoms = zeo.AtomNetwork.read_from_CIF(cif)

    def pores(network) -> tuple[float, float]:
        VoronoiDecomposition(network).free_sphere_file("pores.res", extended=False)
        res = parse_res(Path("pores.res").read_text())
        return res["Di"], res["Df"]

    lcd, pld = pores(atoms)
    coarse = {"LCD": lcd, "PLD": pld}
    fine_pores = any(ambiguous(coarse[key], kinetic, bands[key]) for key in refine)
    network = None
    if fine_pores:
        network = atoms.copy()
        zeo.high_accuracy_atomnet(network, "DEF")
        lcd, pld = pores(network)
    row = {"LCD": lcd, "PLD": pld, "fine_pores": fine_pores, "VF": None, "fine_vf": False, "refine": list(refine)}
    if lcd > kinetic:
        vf = float(parse_key_values(zeo.volume(atoms, 0.0, 0.0, COARSE_SAMPLES))["AV_Volume_fraction"])
        if ambiguous(vf, min_vf, bands["VF"]):
            if network is None:
                network = atoms.copy()
                zeo.high_accuracy_atomnet(network, "DEF")
            vf = float(parse_key_values(zeo.volume(atoms, 0.0, 0.0, FINE_SAMPLES,
                                                   high_accuracy_atmnet=network))["AV_Volume_fraction"])
            row["fine_vf"] = True
        row["VF"] = vf
    return row


def worker(kinetic: float, min_vf: float, bands_json: str, refine: str = "LCD,PLD") -> int:
    """Entries from stdin (one CIF path a line), one JSON result a line on the saved stdout; Zeo++'s own
    prints go to stderr (fd 1 is pointed there, so they cannot corrupt the results)."""
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    bands = {k: tuple(v) for k, v in json.loads(bands_json).items()}
    import pyzeo.extension  # noqa: F401  (the start-up cost, paid once per worker)

    import tools.zeopp.native  # noqa: F401
    out.write(json.dumps({"hello": True, "startup_cpu_s": round(_cpu(), 3)}) + "\n")
    out.flush()
    os.chdir(tempfile.mkdtemp(prefix="zeo-cf-"))
    for line in sys.stdin:
        c0, w0 = _cpu(), time.monotonic()
        try:
            row = measure(line.strip(), kinetic, min_vf, bands, tuple(refine.split(",")))
        except Exception as err:  # a Python-level failure of one entry; a crash ends the process
            row = {"error": f"{type(err).__name__}: {err}"[:200]}
        row |= {"cpu_s": round(_cpu() - c0, 4), "wall_s": round(time.monotonic() - w0, 3)}
        out.write(json.dumps(row) + "\n")
        out.flush()
    return 0


# --- the parent side ------------------------------------------------------------------------------

class Worker:
    """One long-lived worker process; replaced after a crash or a timeout."""

    def __init__(self, kinetic: float, min_vf: float, bands: dict = BANDS, timeout: float = 900.0, log=None,
                 command: list[str] | None = None, refine: tuple[str, ...] = ("LCD",)):
        self.args = [str(kinetic), str(min_vf), json.dumps(bands), ",".join(refine)]
        self.timeout, self.log = timeout, log if log is not None else subprocess.DEVNULL
        self.command = command or [sys.executable, "-m", "tools.zeopp.coarse_fine"]
        self.proc: subprocess.Popen | None = None
        self.accounted = 0.0  # CPU of the current process already booked to entries or start-up
        self.totals = {"processes": 0, "startup_cpu_s": 0.0, "unbooked_cpu_s": 0.0}

    def _start(self) -> None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
                   OMP_NUM_THREADS="1")
        self.proc = subprocess.Popen([*self.command, *self.args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log, text=True, env=env)
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the Zeo++ worker did not start (exit {self._reap()[1]})")
        self.accounted = json.loads(line)["startup_cpu_s"]
        self.totals["processes"] += 1
        self.totals["startup_cpu_s"] += self.accounted

    def _reap(self) -> tuple[float, int]:
        """Wait for the process: its CPU (wait4) not yet booked, and its wait status."""
        _pid, status, usage = os.wait4(self.proc.pid, 0)
        self.proc.returncode = status
        self.proc = None
        return max(0.0, usage.ru_utime + usage.ru_stime - self.accounted), status

    def run(self, cif: Path) -> dict:
        if self.proc is None:
            self._start()
        timer = threading.Timer(self.timeout, self.proc.kill)
        timer.start()
        try:
            self.proc.stdin.write(f"{cif}\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except BrokenPipeError:
            line = ""
        finally:
            timer.cancel()
        if line:
            row = json.loads(line)
            self.accounted += row["cpu_s"]
            return row
        cpu, status = self._reap()
        return {"error": f"Zeo++ worker died (wait status {status}; timeout {self.timeout:g} s or a crash)",
                "cpu_s": round(cpu, 3)}

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stdin.close()
            self.totals["unbooked_cpu_s"] += self._reap()[0]


def load_rows(path: Path) -> dict[str, dict]:
    """entry -> row of a pass's JSON lines (a line cut by a kill is skipped: that entry runs again)."""
    rows = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(row, dict) and "entry" in row:
                rows[row["entry"]] = row
    return rows


def measure_all(cifs: dict[str, Path], rows_path: Path, kinetic: float, min_vf: float, *, workers: int = 1,
                bands: dict = BANDS, refine: tuple[str, ...] = ("LCD",), timeout: float = 900.0,
                order: Iterable[str] | None = None,
                stop: Callable[[], bool] = lambda: False, annotate: Callable[[dict], dict] = lambda row: row,
                on_row: Callable[[dict], None] = lambda row: None, log=None,
                command: list[str] | None = None) -> tuple[dict[str, dict], list[Worker]]:
    """Rows of every entry in `cifs`: those already in rows_path are reused, the others measured on
    `workers` long-lived children and appended to rows_path as they finish (`annotate` may add fields
    first). `stop()` is asked before each entry. Returns (entry -> row, the workers with their totals)."""
    rows = load_rows(rows_path)
    todo = iter([e for e in (order if order is not None else cifs) if e in cifs and e not in rows])
    lock = threading.Lock()
    rows_path.parent.mkdir(parents=True, exist_ok=True)
    pool = [Worker(kinetic, min_vf, bands, timeout, log, command, refine) for _ in range(max(1, workers))]

    def loop(w: Worker) -> None:
        try:
            while True:
                with lock:
                    entry = None if stop() else next(todo, None)
                if entry is None:
                    return
                row = annotate({"entry": entry} | w.run(cifs[entry]))
                with lock:
                    with open(rows_path, "a") as handle:
                        handle.write(json.dumps(row) + "\n")
                    rows[entry] = row
                    on_row(row)
        finally:
            w.stop()

    threads = [threading.Thread(target=loop, args=(w,)) for w in pool]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {e: rows[e] for e in cifs if e in rows}, pool


if __name__ == "__main__":
    sys.exit(worker(float(sys.argv[1]), float(sys.argv[2]), *sys.argv[3:5]))
