"""Zeo++ job runner, started by the executor in the job folder:

    python -m tools.zeopp.run zeopp.json

pyzeo can abort the whole process (uncatchable C++ errors such as "Unable to add edge because
nodes have not been added" on exactly degenerate, high-symmetry structures), so this supervisor does
no Zeo++ work itself: it starts a worker (`--worker`) in a child process, and when the worker dies
in a way that points to a Voronoi degeneracy it retries once with every atom moved by 1e-3 A (fixed
seed; recorded in the results). The worker writes zeopp_results.json; a failure writes
zeopp_error.json with the reason and exits non-zero.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tools.zeopp import inputs
from tools.zeopp.parse import ERROR_FILE, RESULTS_FILE

# Worker failures that a tiny displacement of the atoms cures (a known Zeo++ trap: exact Voronoi
# degeneracies of high-symmetry cells).
DEGENERACY_SIGNS = ("Unable to add edge", "nodes have not been added", "bad_alloc", "Segmentation", "Aborted")
# ... and failures it cannot cure: an element without a radius in Zeo++'s table.
INPUT_SIGNS = ("Unable to find radius",)
LOG_TAIL = 1500


def _tail(path: Path) -> str:
    if not path.is_file():
        return ""
    text = path.read_text(errors="replace")
    return text[-LOG_TAIL:]


def retry_with_nudge(returncode: int, log_tail: str) -> bool:
    """Whether a failed worker is worth one more try with nudged atoms."""
    if any(sign in log_tail for sign in INPUT_SIGNS):
        return False
    if any(sign in log_tail for sign in DEGENERACY_SIGNS):
        return True
    # Zeo++ ends the process itself (a signal, or exit(1) without a Python traceback)
    return returncode < 0 or returncode > 128 or "Traceback (most recent call last)" not in log_tail


def _error(message: str, **extra) -> int:
    Path(ERROR_FILE).write_text(json.dumps({"message": message, **extra}, indent=2))
    print(f"zeopp: {message}", file=sys.stderr)
    return 1


def supervise(settings_path: str) -> int:
    try:
        settings = json.loads(Path(settings_path).read_text())
    except (OSError, ValueError) as err:
        return _error(f"cannot read {settings_path}: {err}")
    cif = settings.get("cif", inputs.CIF_NAME)
    if not Path(cif).is_file():
        return _error(f"no structure file {cif} in the job folder")
    for stale in (RESULTS_FILE, ERROR_FILE):
        Path(stale).unlink(missing_ok=True)
    attempts = [(cif, False)]
    history = []
    while attempts:
        cif_file, was_nudged = attempts.pop(0)
        log = Path(f"zeopp_worker{len(history) + 1}.log")
        start = time.monotonic()
        with open(log, "wb") as out:
            proc = subprocess.run([sys.executable, "-m", "tools.zeopp.run", "--worker", settings_path, cif_file,
                                   "nudged" if was_nudged else "as-given"], stdout=out, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, check=False)
        tail = _tail(log)
        history.append({"cif": cif_file, "returncode": proc.returncode, "wall_s": round(time.monotonic() - start, 2),
                        "log": str(log)})
        if proc.returncode == 0 and Path(RESULTS_FILE).is_file():
            results = json.loads(Path(RESULTS_FILE).read_text())
            results["attempts"] = history
            Path(RESULTS_FILE).write_text(json.dumps(results, indent=2))
            print(f"zeopp: finished ({len(history)} attempt(s))")
            return 0
        reason = (f"killed by signal {signal.Signals(-proc.returncode).name}" if proc.returncode < 0
                  else f"exit code {proc.returncode}")
        if not was_nudged and retry_with_nudge(proc.returncode, tail):
            text = inputs.write_cif(inputs.nudged(inputs.read_cif(Path(cif_file).read_text())))
            nudged_file = "framework_nudged.cif"
            Path(nudged_file).write_text(text)
            print(f"zeopp: worker failed ({reason}); retrying with atoms moved by {inputs.NUDGE_ANGSTROM:g} A")
            attempts.append((nudged_file, True))
            continue
        last = [line for line in tail.splitlines() if line.strip()][-3:]
        return _error(f"Zeo++ worker failed ({reason}): {' | '.join(last)}", attempts=history)
    return _error("Zeo++ worker failed", attempts=history)


# ---------------------------------------------------------------------------------------------
# Worker: all pyzeo calls happen here
# ---------------------------------------------------------------------------------------------


def _bytes_text(value) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _psd_outputs(histogram: dict, bin_size: float) -> dict:
    """CSV and PNG of the pore-size distribution; the modal pore diameter."""
    rows = histogram["rows"]
    with open("psd.csv", "w") as handle:
        handle.write("pore_diameter_A,count,cumulative_fraction,derivative_distribution\n")
        for row in rows:
            handle.write(",".join(f"{x:g}" for x in row) + "\n")
    counts = [r[1] for r in rows]
    best = max(range(len(rows)), key=lambda i: counts[i])
    populated = [r for r in rows if r[1] > 0]
    result = {"csv": "psd.csv", "mode_diameter_A": rows[best][0] + bin_size / 2,
              "max_diameter_A": (populated[-1][0] + bin_size) if populated else 0.0,
              "header": histogram["header"]}
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        upper = result["max_diameter_A"] + 1.0
        shown = [r for r in rows if r[0] <= upper]
        fig, ax = plt.subplots(figsize=(5, 3.2), dpi=120)
        ax.bar([r[0] + bin_size / 2 for r in shown], [r[3] for r in shown], width=bin_size, color="#3b6ea5")
        ax.set_xlabel("pore diameter (Å)")
        ax.set_ylabel("derivative distribution (1/Å)")
        ax.set_title("Pore-size distribution (Zeo++ -psd)")
        fig.tight_layout()
        fig.savefig("psd.png")
        plt.close(fig)
        result["png"] = "psd.png"
    except Exception as err:  # noqa: BLE001 - the plot is a convenience, the CSV is the data
        result["png_error"] = str(err)
    return result


@dataclass
class _Framework:
    """What every Zeo++ task of one worker shares: pyzeo, the framework as read (Zeo++'s default
    radii), its high-accuracy network, and the Voronoi decomposition when a task needs it."""

    zeo: object
    cif_file: str
    atoms: object
    network: object
    decomposition: object | None = None
    native_unavailable: str | None = None


def _free_sphere(fw: _Framework, p: None) -> dict:
    from tools.zeopp.parse import parse_res

    if fw.decomposition is not None:
        fw.decomposition.free_sphere_file("framework.res", extended=True)
        how = "compiled calculateFreeSphereParameters (as `network -ha DEF -resex`)"
    else:  # pyzeo's own method: same routine behind an O(E^2) Python loop
        fw.network.calculate_free_sphere_parameters("framework.res")
        how = "pyzeo AtomNetwork.calculate_free_sphere_parameters"
    return {**parse_res(Path("framework.res").read_text()), "how": how}


def _surface_area(fw: _Framework, p: dict) -> dict:
    from tools.zeopp.parse import parse_key_values

    text = fw.zeo.surface_area(fw.atoms, p["channel_radius"], p["probe_radius"], p["samples_per_atom"],
                               high_accuracy_atmnet=fw.network)
    Path("framework.sa").write_text(_bytes_text(text))
    return {**parse_key_values(text), **p}


def _volume(fw: _Framework, p: dict) -> dict:
    from tools.zeopp.parse import parse_key_values

    text = fw.zeo.volume(fw.atoms, p["channel_radius"], p["probe_radius"], p["samples"],
                         high_accuracy_atmnet=fw.network)
    Path("framework.vol").write_text(_bytes_text(text))
    return {**parse_key_values(text), **p}


def _psd(fw: _Framework, p: dict) -> dict:
    from tools.zeopp.parse import parse_psd

    # The standard (not high-accuracy) network: pyzeo builds a "LOW" one when asked for high
    # accuracy here, and the DEF network of small spheres must not stand in for the atoms.
    fw.zeo.calc_pore_size_distribution(fw.atoms, p["channel_radius"], p["probe_radius"], p["samples"],
                                       b"framework.psd_histo", False, False, b"", b"", b"")
    histogram = parse_psd(Path("framework.psd_histo").read_text())
    return {**_psd_outputs(histogram, histogram["header"].get("Bin size (A)", 0.1)), **p}


def _channels(fw: _Framework, p: dict) -> dict:
    import numpy as np

    from tools.zeopp import parse

    if fw.decomposition is None:
        return {"error": "no Voronoi network" if fw.native_unavailable is None else fw.native_unavailable}
    fw.decomposition.nt2_file("framework.nt2", 0.0)
    graph = parse.parse_nt2(Path("framework.nt2").read_text())
    report = parse.channels(graph, p["probe_radius"])
    cell = inputs.read_cif(Path(fw.cif_file).read_text())
    to_fractional = np.linalg.inv(np.array(inputs.cell_matrix(cell)))
    spheres = parse.blocking_spheres(graph, report, to_fractional)
    block = "framework.block"
    Path(block).write_text(f"{len(spheres)}\n" + "".join(
        f"{x:.6f} {y:.6f} {z:.6f} {r:.4f}\n" for x, y, z, r in spheres))
    return {
        **p, "dimensionality": report.dimensionality, "n_channels": len(report.channels),
        "channel_dimensionalities": [c.dimensionality for c in report.channels],
        "channel_largest_sphere_A": [round(2 * c.largest_node_radius, 4) for c in report.channels],
        "n_pockets": len(report.pockets), "block_file": block, "n_blocking_spheres": len(spheres),
    }


def _pov(fw: _Framework, p: dict) -> dict:
    import numpy as np

    from tools.zeopp.pov import probe_occupiable_volume

    cell = inputs.read_cif(Path(fw.cif_file).read_text())
    radii = {s: float(fw.zeo.lookupRadius(s.encode())) for s in set(cell.symbols)}
    found = probe_occupiable_volume(np.array(cell.frac), np.array([radii[s] for s in cell.symbols]),
                                    np.array(inputs.cell_matrix(cell)), p["probe_radius"], p["spacing"])
    return {**p, **found, "radii_A": radii}


# The tasks a worker runs, in this order, each timed; each takes its settings entry (free_sphere has none).
_TASKS = (("free_sphere", _free_sphere), ("surface_area", _surface_area), ("volume", _volume), ("psd", _psd),
          ("channels", _channels), ("pov", _pov))


def work(settings_path: str, cif_file: str, mode: str) -> int:
    settings = json.loads(Path(settings_path).read_text())
    tasks = set(settings["tasks"])
    timings: dict[str, float] = {}
    results: dict = {"structure": settings.get("structure", {}), "cif_used": cif_file, "nudged": mode == "nudged",
                     "high_accuracy": settings["high_accuracy"]}
    from importlib import metadata

    import pyzeo.extension as zeo

    results["pyzeo"] = metadata.version("pyzeo")
    t0 = time.monotonic()
    atoms = zeo.AtomNetwork.read_from_CIF(cif_file)  # Zeo++ default radii (CCDC table)
    network = atoms.copy()
    zeo.high_accuracy_atomnet(network, settings["high_accuracy"])  # `network -ha DEF`, in place
    timings["read_and_high_accuracy"] = time.monotonic() - t0
    fw = _Framework(zeo=zeo, cif_file=cif_file, atoms=atoms, network=network)

    if tasks & {"free_sphere", "channels"}:
        t0 = time.monotonic()
        try:
            from tools.zeopp.native import NativeUnavailable, VoronoiDecomposition

            fw.decomposition = VoronoiDecomposition(network)
            results["voronoi_nodes"] = fw.decomposition.size
        except NativeUnavailable as err:
            fw.native_unavailable = results["native_unavailable"] = str(err)
        timings["voronoi"] = time.monotonic() - t0

    for name, task in _TASKS:
        if name in tasks:
            t0 = time.monotonic()
            results[name] = task(fw, settings.get(name))
            timings[name] = time.monotonic() - t0

    results["timings_s"] = {k: round(v, 3) for k, v in timings.items()}
    tmp = Path(RESULTS_FILE + ".tmp")
    tmp.write_text(json.dumps(results, indent=2))
    tmp.replace(RESULTS_FILE)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "--worker":
        sys.stdout.flush()
        return work(argv[1], argv[2], argv[3] if len(argv) > 3 else "as-given")
    if len(argv) != 1:
        print("usage: python -m tools.zeopp.run zeopp.json", file=sys.stderr)
        return 2
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    return supervise(argv[0])


if __name__ == "__main__":
    sys.exit(main())
