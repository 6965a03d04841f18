"""Plots an analysis saves beside its numbers (PNG in the job folder), where a picture shows how a
number was obtained: the thermodynamic series with the equilibration cut, g(r) with the
coordination-number integral, the MSD with the fitted window and line.

matplotlib's object API (Figure, Agg canvas): no pyplot global state, safe in worker threads.
Plotting never decides a result: a failure to draw is the caller's to ignore."""

from __future__ import annotations

from pathlib import Path

import numpy as np

SIZE = (5.5, 3.6)
DPI = 100


def _figure():
    from matplotlib.figure import Figure

    return Figure(figsize=SIZE)


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    return path


def thermo_series(path: Path, steps: np.ndarray, series: dict[str, np.ndarray], cut: int,
                  cut_label: str = "equilibration cut") -> Path:
    """One panel per series (e.g. potential energy per atom, temperature) against the step, the
    samples before `cut` (index of the first averaged sample) shaded as discarded."""
    fig = _figure()
    axes = fig.subplots(len(series), 1, sharex=True, squeeze=False)[:, 0]
    cut_step = float(steps[min(max(cut, 0), len(steps) - 1)])
    for ax, (label, values) in zip(axes, series.items(), strict=True):
        ax.plot(steps, values, lw=0.8)
        if cut > 0:
            ax.axvspan(float(steps[0]), cut_step, color="gray", alpha=0.2)
            ax.axvline(cut_step, ls="--", c="gray", label=f"{cut_label} (step {cut_step:g})")
        ax.axhline(float(np.mean(values[cut:])), c="C1", lw=0.8, label="mean after the cut")
        ax.set_ylabel(label)
    axes[0].legend(fontsize=7, loc="best")
    axes[-1].set_xlabel("step")
    return _save(fig, path)


def rdf_with_cn(path: Path, r: np.ndarray, g: np.ndarray, cumulative: np.ndarray, r_min: float, cn: float) -> Path:
    """g(r) and the running coordination number n(r) on a second axis, read at the first minimum."""
    fig = _figure()
    ax = fig.subplots()
    ax.plot(r, g, c="C0", label="g(r)")
    ax.axhline(1.0, c="lightgray", lw=0.8)
    ax.axvline(r_min, ls="--", c="gray", label=f"first minimum r = {r_min:.3g}")
    ax.set_xlabel("r")
    ax.set_ylabel("g(r)")
    twin = ax.twinx()
    twin.plot(r, cumulative, c="C2", lw=1.0, label="n(r)")
    twin.plot([r_min], [cn], "o", c="C2", label=f"CN = {cn:.3g}")
    twin.set_ylabel("coordination number n(r)")
    twin.set_ylim(0, max(1.0, 1.5 * cn))
    lines = ax.get_legend_handles_labels()
    more = twin.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=7, loc="upper left")
    return _save(fig, path)


def msd_with_fit(path: Path, t: np.ndarray, msd: np.ndarray, window: tuple[float, float], slope: float,
                 intercept: float, d: float, dimension: int = 3) -> Path:
    """The MSD against lag time on log-log axes, the fit window shaded, the fitted line drawn."""
    fig = _figure()
    ax = fig.subplots()
    keep = t > 0
    ax.loglog(t[keep], msd[keep], c="C0", label="MSD")
    ax.axvspan(*window, color="orange", alpha=0.2, label="fit window")
    fit_t = np.linspace(window[0], window[1], 50)
    ax.loglog(fit_t, slope * fit_t + intercept, c="C3", lw=1.5, label=f"fit: {2 * dimension} D t, D = {d:.3g}")
    ax.set_xlabel("lag time t")
    ax.set_ylabel("MSD")
    ax.legend(fontsize=7, loc="upper left")
    return _save(fig, path)
