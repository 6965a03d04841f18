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
from agents.screening import EmptyScreen, ScreenSpec, prescreen_keep, run_screen
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


@pytest.mark.parametrize("request_text, guest, bar, kelvin, top, entries", [
    # the example and paraphrases written for this test
    ("top 3 of these 5 CoRE MOFs for methane at 10 bar and 298 K: POFSIN03_clean, VOGTIV_clean_h, FAVKAP_clean, "
     "XISPEW_clean, ABETAE_clean", "CH4", 10.0, 298.0, 3, SMALL + ["ABETAE_clean"]),
    ("Which two of ABETAE, XAFBEN and YORNIE adsorb the most CH4 at 298 K and 10 bar?", "CH4", 10.0, 298.0, 2,
     ["ABETAE_clean", "XAFBEN_clean", "YORNIE_clean"]),
    ("Rank FAVKAP_clean and XISPEW_clean by krypton uptake at 100 kPa, 273 K", "Kr", 1.0, 273.0, 2,
     ["FAVKAP_clean", "XISPEW_clean"]),
    ("Give me the 10 MOFs with the highest methane uptake at 65 bar and 298 K", "CH4", 65.0, 298.0, 10, None),
])
def test_screens_of_named_entries_and_counts_are_read(request_text, guest, bar, kelvin, top, entries):
    assert looks_like_screen(request_text)
    spec = read_screen(request_text)
    assert (spec.guest, spec.top_n, spec.entries) == (guest, top, entries)
    assert spec.pressure_bar == pytest.approx(bar) and spec.temperature_K == pytest.approx(kelvin)


@pytest.mark.parametrize("request_text", [
    "Methane uptake of IRMOF-1 and HKUST-1 at 65 bar and 298 K",  # two named, no ranking asked
    "What is the best force field for methane in MOFs?",
    "Which MOF has the highest methane uptake at 65 bar according to the literature?",
])
def test_requests_that_rank_nothing_or_no_uptake_are_not_screens(request_text):
    assert not looks_like_screen(request_text)


def test_the_query_agent_sends_a_screen_to_the_screening_node():
    from types import SimpleNamespace

    from agents.query import query
    from simagent.state import RunState

    runtime = SimpleNamespace(context=SimpleNamespace(backend=None, report=lambda *a, **k: None))
    request = "top 2 of these 3 CoRE MOFs for methane at 10 bar and 298 K: POFSIN03, FAVKAP, XISPEW"
    assert query(RunState(request=request, thread_id="t", root="/tmp/none"), runtime).goto == "screen"


def test_a_screen_in_conversation_without_a_temperature_asks_for_it(settings):
    from simagent.session import Session

    with Session(settings) as session:
        answer = session.ask("Which 2 of FAVKAP_clean, XISPEW_clean and POFSIN03_clean hold the most methane "
                             "at 10 bar?").answer
    assert answer.status == "failed" and "temperature" in answer.error and not answer.jobs


@pytest.mark.slow  # RASPA short + full GCMC of three small MOFs through the graph (~1 min on a loaded machine)
def test_a_screen_in_conversation_runs_the_funnel_with_progress_and_files(settings, monkeypatch):
    """The graph answers a screen end to end: progress lines, the top N each from its GCMC job (the job's
    own output holds the number), the CSV and the plot in the run folder. Cycles are shortened here."""
    import agents.screen as node
    from simagent.session import Session

    real = node.read_screen
    monkeypatch.setattr(node, "read_screen", lambda text: real(text).model_copy(
        update={"prescreen_init_cycles": 20, "prescreen_cycles": 40, "gcmc_init_cycles": 100,
                "gcmc_cycles": 300}))
    events = []
    request = "top 2 of these 3 CoRE MOFs for methane at 10 bar and 298 K: POFSIN03_clean, FAVKAP_clean, XISPEW_clean"
    with Session(settings, progress=lambda event, info: events.append((event, info))) as session:
        answer = session.ask(request).answer
    assert answer.status == "answered", answer.error
    assert [r.label for r in answer.answers] and len(answer.answers) == 2
    assert any(e == "plan" and "GCMC" in i["line"] and "done" in i["line"] for e, i in events)
    # independent RASPA jobs run side by side (settings.max_parallel = 2 cores here)
    assert any(e == "plan" and "2 running" in i["line"] for e, i in events)
    table = next(line.split(": ", 1)[1] for line in answer.summary.splitlines() if line.startswith("table: "))
    plot = next(line.split(": ", 1)[1] for line in answer.summary.splitlines() if line.startswith("plot: "))
    rows = list(csv.DictReader(open(table)))
    assert [row["entry"] for row in rows[:2]] == [r.label for r in answer.answers]
    assert Path(plot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    values = [r.value for r in answer.answers]
    assert values == sorted(values, reverse=True)
    for r in answer.answers:  # the number is the job's own RASPA output, in a folder of this run
        assert Path(r.job).is_relative_to(Path(settings.workdir)) and json.loads(
            (Path(r.job) / "status.json").read_text())["status"] == "succeeded"
        output = next((Path(r.job) / "Output" / "System_0").glob("*.data")).read_text()
        assert "Average loading absolute [cm^3 (STP)/cm^3 framework]" in output


@pytest.mark.parametrize("request_text, words", [
    ("Screen 100 MOFs for methane deliverable capacity between 5 and 65 bar at 298 K", "deliverable"),
    ("Top 5 CoRE MOFs by CH4 working capacity, 5 bar to 65 bar, 298 K", "working capacity"),
    ("Rank these CoRE MOFs by CO2/N2 selectivity at 1 bar and 298 K: FAVKAP, XISPEW", "selectivity"),
    ("Screen the CoRE MOF database: best 10 for methane uptake at 5 bar and at 65 bar, 298 K", "several pressures"),
])
def test_rankings_the_funnel_does_not_compute_are_refused_by_name(request_text, words):
    """Never a silent substitute: a deliverable capacity is not the uptake at the higher pressure."""
    assert looks_like_screen(request_text)
    with pytest.raises(RequestError, match=words):
        read_screen(request_text)


def test_a_screen_without_conditions_says_what_is_missing():
    with pytest.raises(RequestError, match="pressure.*temperature"):
        read_screen("Screen CoRE MOF for the top 10 methane uptakes")


def test_cli_screen_request_missing_temperature_is_a_clear_error(tmp_path):
    proc = subprocess.run([str(Path(sys.executable).parent / "simagent"), "ask", "--workdir", str(tmp_path),
                           "Screen the CoRE MOF database for the 10 best methane uptakes at 65 bar"],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 1 and "temperature" in proc.stdout and "Traceback" not in proc.stderr + proc.stdout


# ---------------------------------------------------------------------------------------------
# Declared cuts
# ---------------------------------------------------------------------------------------------


def test_a_cut_that_removes_everything_is_named(tmp_path):
    spec = ScreenSpec(entries=SMALL, min_void_fraction=0.99)
    with pytest.raises(EmptyScreen, match=r"after the 'geometry' stage .*void fraction >= 0.99.*all 4"):
        run_screen(spec, tmp_path)


@pytest.mark.parametrize("geometry, stage, left", [("cavity", "structure and size", 2), ("window", "geometry", 3)])
def test_geometry_cut_on_the_cavity_keeps_large_cages_behind_narrow_windows(tmp_path, geometry, stage, left):
    # CoRE MOF 2019 table (Chung et al. 2019): HAKTAR_clean LCD 8.14 A / PLD 3.27 A, NOGDAP_clean 6.91 / 3.49,
    # MUFHUR_clean 3.42 / 2.69; CH4 kinetic diameter 3.8 A (Breck 1974). The cavity cut keeps the first two
    # (the size stage, at most 1 atom, then empties the screen and names how many reached it); the window cut
    # removes all three.
    spec = ScreenSpec(entries=["HAKTAR_clean", "NOGDAP_clean", "MUFHUR_clean"], geometry=geometry, max_atoms=1)
    with pytest.raises(EmptyScreen, match=rf"after the '{stage}' stage .*all {left}\b"):
        run_screen(spec, tmp_path)


# CoRE MOF 2019 ASR table (Chung et al. 2019, Zeo++ -ha DEF): LCD / PLD in angstrom, void fraction
CORE_GEOMETRY = {"HAKTAR_clean": (8.14, 3.27), "NOGDAP_clean": (6.91, 3.49), "MUFHUR_clean": (3.42, 2.69)}


def test_geometry_from_our_zeopp_pass_agrees_with_the_core_table_and_resumes(tmp_path):
    pytest.importorskip("pyzeo")
    from tools.zeopp.coarse_fine import BANDS

    def rows_of(key: str) -> dict[str, dict]:
        (path,) = (tmp_path / "geometry").glob(f"*_{key}_*.jsonl")
        return {r["entry"]: r for r in map(json.loads, path.read_text().splitlines())}

    def agree_with_table(rows: dict[str, dict], key: str) -> None:
        assert set(rows) == set(CORE_GEOMETRY)
        for entry, (lcd, pld) in CORE_GEOMETRY.items():
            row, table = rows[entry], {"LCD": lcd, "PLD": pld}[key]
            if row["fine_pores"]:  # the CoRE settings: the table's value (to its 2 decimals)
                assert row[key] == pytest.approx(table, abs=0.01), (entry, key)
            else:  # coarse: within the coarse pass's measured error band of the table's value
                assert BANDS[key][0] - 0.01 <= row[key] - table <= BANDS[key][1] + 0.01, (entry, key)

    spec = ScreenSpec(entries=list(CORE_GEOMETRY), geometry_source="zeopp", max_atoms=1)
    with pytest.raises(EmptyScreen, match=r"after the 'structure and size' stage .*all 2\b"):
        run_screen(spec, tmp_path)
    rows = rows_of("LCD")
    agree_with_table(rows, "LCD")
    # MUFHUR's LCD (3.42 A) is within the band of CH4's 3.8 A, so the CoRE settings were needed; its LCD
    # is below the cut, so no void fraction was computed
    assert rows["MUFHUR_clean"]["fine_pores"] and rows["MUFHUR_clean"]["VF"] is None
    # a rerun on the same folder reuses the rows (no new line)
    with pytest.raises(EmptyScreen, match=r"'structure and size' stage"):
        run_screen(spec, tmp_path)
    assert sum(len(path.read_text().splitlines()) for path in (tmp_path / "geometry").glob("*.jsonl")) == 3
    # the window cut refines the PLD instead and names its source
    with pytest.raises(EmptyScreen, match=r"after the 'geometry' stage .*Zeo\+\+ coarse to fine .* 3 of 3 .*all 3"):
        run_screen(spec.model_copy(update={"geometry": "window"}), tmp_path)
    agree_with_table(rows_of("PLD"), "PLD")


def test_geometry_rows_of_an_earlier_pass_are_reused_only_where_they_settle_the_cut(tmp_path):
    from tools.zeopp.coarse_fine import decisive

    # hand-made rows: a fine LCD of 3.0 A settles CH4's 3.8 A cut (removed, so no Zeo++ run here)
    rows = tmp_path / "pass.jsonl"
    rows.write_text(json.dumps({"entry": "HAKTAR_clean", "LCD": 3.0, "PLD": 2.0, "fine_pores": True, "VF": None,
                                "fine_vf": False}) + "\n")
    spec = ScreenSpec(entries=["HAKTAR_clean"], geometry_source="zeopp", zeopp_rows=str(rows))
    with pytest.raises(EmptyScreen, match=r"'geometry' stage .*1 of 1 entries \(1 from .*pass.jsonl, 0 computed"):
        run_screen(spec, tmp_path / "screen")
    with pytest.raises(RequestError, match="no Zeo\\+\\+ pass rows"):
        run_screen(spec.model_copy(update={"zeopp_rows": str(tmp_path / "missing.jsonl")}), tmp_path / "screen")
    # bands (coarse - fine) LCD [-0.61, 0.32], VF [-0.026, 0.039]: a coarse LCD of 4.0 A may be a fine 3.7 A
    # (not settled for 3.8 A, settled for 3.3 A); a coarse void fraction of 0.31 may be a fine 0.29
    coarse = {"LCD": 4.0, "PLD": 2.0, "fine_pores": False, "VF": 0.5, "fine_vf": False}
    assert decisive(coarse, 3.8, 0.3) is None and decisive(coarse, 3.3, 0.3)["LCD"] == 4.0
    assert decisive(coarse | {"LCD": 6.0, "VF": 0.31}, 3.3, 0.3) is None
    assert decisive(coarse | {"LCD": 6.0, "VF": 0.31, "fine_vf": True}, 3.3, 0.3)["VF"] == 0.31
    assert decisive(coarse | {"LCD": 6.0, "VF": None}, 3.3, 0.3) is None  # no void fraction for a passing LCD
    assert decisive({"error": "worker died"}, 3.8, 0.3) is None


def test_pocket_blocking_removes_cages_the_guest_cannot_reach_and_blocks_them(tmp_path):
    pytest.importorskip("pyzeo")
    from simagent.materials.frameworks import read_block_file

    # HAKTAR_clean and NOGDAP_clean pass the cavity cut (LCD 8.14 and 6.91 A > 3.8 A) but their windows (PLD 3.27
    # and 3.49 A, CoRE MOF 2019 table) are narrower than CH4 (3.8 A, Breck 1974): a 1.9 A probe finds no
    # channel, so the accessibility stage removes both
    spec = ScreenSpec(entries=["HAKTAR_clean", "NOGDAP_clean"], blocking="zeopp")
    with pytest.raises(EmptyScreen, match=r"after the 'accessibility' stage .*probe radius 1.9 A.*all 2\b"):
        run_screen(spec, tmp_path)
    # the cages are pockets: the widest blocking sphere is the largest cavity (radius = LCD / 2 from the table)
    for entry, (lcd, _pld) in (("HAKTAR_clean", CORE_GEOMETRY["HAKTAR_clean"]),
                               ("NOGDAP_clean", CORE_GEOMETRY["NOGDAP_clean"])):
        spheres = read_block_file(tmp_path / "jobs" / f"zeopp-{entry}" / "framework.block")
        assert max(r for *_xyz, r in spheres) == pytest.approx(lcd / 2, abs=0.02), entry
    # a GCMC job of the funnel with that entry's blocks: RASPA blocks the pockets (input and .block file)
    from agents.screening import gcmc_jobs
    from simagent.materials.structures import core_table, extract_core_cifs

    block = tmp_path / "jobs" / "zeopp-HAKTAR_clean" / "framework.block"
    ((_params, _local, job),) = gcmc_jobs(spec, extract_core_cifs("2019-ASR", ["HAKTAR_clean"]), core_table("2019-ASR"),
                                          kind="gcmc", init_cycles=1, cycles=1, seed=1,
                                          blocks={"HAKTAR_clean": {"block_file": str(block)}}).values()
    (block_name,) = [name for name in job.inputs if name.endswith(".block")]
    assert "BlockPockets             yes" in job.inputs["simulation.input"]
    assert job.inputs[block_name].split()[0] == block.read_text().split()[0] == str(len(read_block_file(block)))


def test_prescreen_keeps_what_cannot_be_excluded_from_the_top_n():
    # hand-computed with z = 2: the edge (top 1) is a = 10 +/- 1; b: 9 + 2*sqrt(1 + 1) = 11.8 >= 10, kept;
    # c: 5 + 2*sqrt(2) = 7.8 < 10, cut; d: 8.5 + 2*sqrt(0.01 + 1) = 10.5 >= 10, kept
    values = {"a": (10.0, 1.0), "b": (9.0, 1.0), "c": (5.0, 1.0), "d": (8.5, 0.1)}
    assert prescreen_keep(values, top_n=1, most=5, z=2.0) == ["a", "b", "d"]
    assert prescreen_keep(values, top_n=1, most=2, z=2.0) == ["a", "b"]  # at most `most`
    assert prescreen_keep(values, top_n=3, most=1, z=0.0) == ["a", "b", "d"]  # at least top_n
    assert prescreen_keep({"a": (1.0, 0.0)}, top_n=2, most=5, z=2.0) == ["a"]


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
    spec = ScreenSpec(entries=SMALL, top_n=2, gcmc_keep=3, prescreen_init_cycles=10, prescreen_cycles=20,
                      gcmc_init_cycles=50, gcmc_cycles=150)
    out = tmp_path / "screen"
    owner = subprocess.Popen([sys.executable, "-c", SCREEN, spec.model_dump_json(), str(out)],
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 600
        while not any(_succeeded(p) for p in (out / "jobs").glob("pregcmc-*")):
            assert time.monotonic() < deadline and owner.poll() is None
            time.sleep(0.2)
        owner.send_signal(signal.SIGKILL)
        owner.wait()
    finally:
        owner.kill()
    finished = {p.name: (p / "status.json").stat().st_mtime for p in (out / "jobs").glob("pregcmc-*")
                if _succeeded(p)}
    result = run_screen(spec, out)
    for name, mtime in finished.items():  # resume: finished jobs were not run again
        assert (out / "jobs" / name / "status.json").stat().st_mtime == mtime
    assert [s.name for s in result.stages] == ["validity", "geometry", "structure and size", "short GCMC", "GCMC"]
    short = result.stages[3]
    assert short.n_in == 4 and 2 <= short.n_out <= 3 and len(short.removed) == 4 - short.n_out
    pre = {p.entry: p for p in result.prescreened}
    second = sorted(pre.values(), key=lambda p: -p.value)[1]
    weakest_kept = min(p.value for p in pre.values() if p.kept)
    for entry in short.removed:  # cut: > 2 combined standard errors below the 2nd best short run, or by the cap
        p = pre[entry]
        below = p.value + 2 * (p.error ** 2 + second.error ** 2) ** 0.5 < second.value
        assert not p.kept and (below or (short.n_out == 3 and p.value <= weakest_kept))
        assert json.loads((Path(p.job) / "status.json").read_text())["status"] == "succeeded"
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
