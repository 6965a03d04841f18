"""Screening funnel over CoRE MOF 2019 (issue 15): the request recognizer, the declared cuts, and an
end-to-end screen of a small subset with few RASPA cycles (ranking, resume after SIGKILL, CSV + plot)."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agents.screen_request import looks_like_screen, read_screen
from agents.screening import EmptyScreen, ScreenSpec, run_screen
from simagent.errors import RequestError

pytest.importorskip("CoRE_MOF")
ROOT = Path(__file__).resolve().parents[1]
SMALL = ["POFSIN03_clean", "VOGTIV_clean_h", "FAVKAP_clean", "XISPEW_clean"]  # 40-68 atoms per cell, PLD > 4.5 A


# ---------------------------------------------------------------------------------------------
# Recognizer (the sentence and paraphrases written for this test)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("request_text, guest, bar, kelvin, top", [
    ("Screen the CoRE MOF database and give me the 10 MOFs with the highest methane uptake at 65 bar and 298 K",
     "CH4", 65.0, 298.0, 10),
    ("Which 5 frameworks in CoRE MOF adsorb the most CH4 at 35 bar and 25 °C?", "CH4", 35.0, 298.15, 5),
    ("high-throughput screening: top 20 materials for xenon uptake, 1 bar, 273 K", "Xe", 1.0, 273.0, 20),
    ("From all the MOFs in the database, list the best ten for krypton adsorption at 100 kPa and 298 K",
     "Kr", 1.0, 298.0, 10),
])
def test_screen_requests_are_recognized(request_text, guest, bar, kelvin, top):
    assert looks_like_screen(request_text)
    spec = read_screen(request_text)
    assert (spec.guest, spec.top_n) == (guest, top)
    assert spec.pressure_bar == pytest.approx(bar) and spec.temperature_K == pytest.approx(kelvin)


@pytest.mark.parametrize("request_text", [
    "Methane uptake in HKUST-1 at 65 bar and 298 K",
    "CO2 diffusion coefficient in UiO-66 at 298 K?",
    "Lattice constant of fcc nickel with the Foiles EAM potential",
])
def test_single_material_requests_are_not_screens(request_text):
    assert not looks_like_screen(request_text)


def test_a_screen_without_conditions_says_what_is_missing():
    with pytest.raises(RequestError, match="pressure.*temperature"):
        read_screen("Screen CoRE MOF for the top 10 methane uptakes")


def test_cli_screen_request_missing_temperature_is_a_clear_error(tmp_path):
    proc = subprocess.run([str(Path(sys.executable).parent / "simagent"), "ask", "--workdir", str(tmp_path),
                           "Screen the CoRE MOF database for the 10 best methane uptakes at 65 bar"],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 1 and "temperature" in proc.stderr and "Traceback" not in proc.stderr


# ---------------------------------------------------------------------------------------------
# Declared cuts
# ---------------------------------------------------------------------------------------------


def test_a_cut_that_removes_everything_is_named(tmp_path):
    spec = ScreenSpec(entries=SMALL, min_void_fraction=0.99)
    with pytest.raises(EmptyScreen, match=r"after the 'geometry' stage .*void fraction >= 0.99.*all 4"):
        run_screen(spec, tmp_path)


def test_unknown_entries_and_charged_guests_are_refused(tmp_path):
    with pytest.raises(RequestError, match="NOT_A_MOF"):
        run_screen(ScreenSpec(entries=["NOT_A_MOF"]), tmp_path)
    with pytest.raises(RequestError, match="charges"):
        run_screen(ScreenSpec(guest="CO2", entries=SMALL), tmp_path)


# ---------------------------------------------------------------------------------------------
# End to end on four small MOFs (RASPA, short runs)
# ---------------------------------------------------------------------------------------------

SCREEN = """
import sys
from pathlib import Path
from agents.screening import ScreenSpec, run_screen
run_screen(ScreenSpec.model_validate_json(sys.argv[1]), Path(sys.argv[2]))
"""


@pytest.mark.slow  # ~1-3 min of RASPA on a loaded 2-core machine
def test_screen_ranks_resumes_after_sigkill_and_writes_table_and_plot(tmp_path):
    spec = ScreenSpec(entries=SMALL, top_n=2, henry_keep=3, widom_cycles=300, gcmc_init_cycles=100, gcmc_cycles=300)
    out = tmp_path / "screen"
    owner = subprocess.Popen([sys.executable, "-c", SCREEN, spec.model_dump_json(), str(out)],
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 600
        while not any(_succeeded(p) for p in (out / "jobs").glob("widom-*")):
            assert time.monotonic() < deadline and owner.poll() is None
            time.sleep(0.2)
        owner.send_signal(signal.SIGKILL)
        owner.wait()
    finally:
        owner.kill()
    finished = {p.name: (p / "status.json").stat().st_mtime for p in (out / "jobs").glob("widom-*") if _succeeded(p)}
    result = run_screen(spec, out)
    for name, mtime in finished.items():  # resume: finished jobs were not run again
        assert (out / "jobs" / name / "status.json").stat().st_mtime == mtime
    assert [s.name for s in result.stages] == ["validity", "geometry", "structure and size", "Henry coefficient",
                                               "GCMC"]
    henry = result.stages[3]
    assert (henry.n_in, henry.n_out) == (4, 3) and len(henry.removed) == 1
    uptakes = [r.uptake for r in result.ranking]
    assert uptakes == sorted(uptakes, reverse=True) and len(result.top) == 2
    for r in result.ranking:  # every ranked value traces to its job
        record = json.loads((Path(r.gcmc_job) / "status.json").read_text())
        assert record["status"] == "succeeded" and r.uptake > 0 and r.uptake_error >= 0
        assert r.unit == "cm3(STP)/cm3"
    rows = list(csv.DictReader(open(result.files["table"])))
    assert [row["entry"] for row in rows] == [r.entry for r in result.ranking]
    assert Path(result.files["plot"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads(Path(result.files["funnel"]).read_text())["stages"][1]["name"] == "geometry"


def _succeeded(job_dir: Path) -> bool:
    try:
        return json.loads((job_dir / "status.json").read_text())["status"] == "succeeded"
    except (OSError, ValueError, KeyError):
        return False


def test_cli_screen_names_the_cut_that_emptied_it(tmp_path):
    args = [str(Path(sys.executable).parent / "simagent"), "screen", "--workdir", str(tmp_path),
            "--min-void-fraction", "0.99", *[a for e in SMALL for a in ("--entry", e)]]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 1 and "'geometry' stage" in proc.stderr and "Traceback" not in proc.stderr
