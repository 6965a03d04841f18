"""simagent/plots.py on synthetic data: each plot is a readable PNG of the expected size, drawn
from worker threads (the web runs analyses off the main thread; no pyplot state is involved)."""

from __future__ import annotations

import threading

import numpy as np
from PIL import Image

from simagent import plots


def check_png(path) -> None:
    with Image.open(path) as image:
        assert image.format == "PNG"
        assert image.size == (int(plots.SIZE[0] * plots.DPI), int(plots.SIZE[1] * plots.DPI))
        # something was drawn: more than a blank canvas
        assert len(image.convert("L").getcolors(maxcolors=1 << 16) or []) > 10


def test_thermo_rdf_and_msd_plots(tmp_path):
    rng = np.random.default_rng(1)
    steps = np.arange(0, 5000, 10)
    energy = -3.7 + 0.5 * np.exp(-steps / 300) + 0.01 * rng.standard_normal(steps.size)
    r = np.linspace(0.01, 2.5, 250)
    g = 1 + np.exp(-((r - 1.1) / 0.08) ** 2) * 2 - np.exp(-((r - 1.6) / 0.1) ** 2) * 0.3
    g[r < 0.9] = 0
    cumulative = 4 * np.pi * 0.8 * np.cumsum(g * r**2) * (r[1] - r[0])
    t = np.arange(200) * 0.05
    msd = 6 * 0.1 * t
    jobs = [
        lambda: plots.thermo_series(tmp_path / "thermo.png", steps, {"PE/atom": energy, "T": 1 + 0 * energy}, 40),
        lambda: plots.rdf_with_cn(tmp_path / "gr.png", r, g, cumulative, 1.6, float(np.interp(1.6, r, cumulative))),
        lambda: plots.msd_with_fit(tmp_path / "msd.png", t, msd, (2.0, 6.0), 0.6, 0.0, 0.1),
    ]
    threads = [threading.Thread(target=job) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for name in ("thermo.png", "gr.png", "msd.png"):
        check_png(tmp_path / name)
