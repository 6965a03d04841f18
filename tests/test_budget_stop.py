"""A described run that its time budget ends early (tools.lammps.described_budget): LAMMPS stops itself
at the wall-time limit the runner passes (simagent.executor.CLEAN_STOP_ENV), its outputs whole up to
there; a Young's modulus is kept only when its fit window was recorded whole, with a warning; averages
never. Real runs are small (64 Tersoff atoms, 10 s of LAMMPS each, through the runner's JobWatch);
the window rule's edges are checked on records built by hand. The descriptions are written for these
tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from described_helpers import run_inputs

from simagent.described.reading import read_description
from simagent.errors import CalculationFailed
from simagent.executor import (
    CLEAN_STOP_ENV,
    JobRecord,
    JobWatch,
    clean_stop_s,
    finished_ok,
    inputs_digest,
    write_inputs,
)
from simagent.models import JobStatus, PropertyRequest, TaskSpec
from tools.lammps import engine
from tools.lammps.described_budget import BudgetStop
from tools.lammps.described_solids import STRESS_STRAIN_FILE, sample_every, youngs_modulus
from tools.lammps.protocols.described import DescribedRun

# the job's time limit: LAMMPS stops itself at 10 s (half a short limit), the runner would kill it at 20 s (on
# this shared machine the supervisor's and LAMMPS's start and exit took 2-4 s at load 10-13, and with a 12 s
# limit a run was once killed during a suite at load ~13)
LIMIT_S = 20.0


def cold_pull(rate: str) -> str:
    return ("Metal units. Silicon in the diamond structure, lattice constant 5.431 angstrom, a periodic block of "
            "2 x 2 x 2 unit cells, Tersoff potential (Si.tersoff). The atoms start at rest. Integrate 10 steps of "
            f"NVE with a 1 fs timestep; then stretch the box along y at an engineering strain rate of {rate} /s for "
            "2000000 steps, still NVE.")


def run_with_limit(text: str, names: list[str], tmp_path: Path):
    """The described protocol's job run through the runner's JobWatch with LIMIT_S: (params, spec, job
    folder, record)."""
    protocol = DescribedRun()
    spec = TaskSpec(request=text, properties=[PropertyRequest(name=n) for n in names], engine="lammps")
    assert protocol.applies_to(spec)
    params, _ = protocol.parameters(spec)
    (job,) = protocol.jobs(params)
    job_dir = tmp_path / job.id
    write_inputs(job, job_dir)
    argv = engine.job_command(job)  # the LAMMPS adapter's command (simagent.jobrun.engine_launch loads every engine)
    record = JobRecord(job=job.id, status=JobStatus.pending, inputs_sha256=inputs_digest(job), command=argv)
    record = JobWatch(job_dir, record, LIMIT_S).run(argv, engine.environment())
    return params, spec, job_dir, record


def test_only_a_run_that_ended_before_its_clean_stop_time_counts_as_done(tmp_path: Path):
    """Resume skips a job that succeeded with the same inputs, unless it ran past the time its engine
    was told to stop itself at (it may have ended early: LAMMPS exits 0 after its timer fires)."""
    import sys

    from simagent.models import Job

    reads_it = f"variable cleanstop getenv {CLEAN_STOP_ENV}"
    # start-up of the supervisor took up to 2-4 s under load; an input that does not read the variable
    # cannot have been stopped by it: a long run of it is done
    for seconds, text, done in ((0.0, reads_it, True), (7.0, reads_it, False), (7.0, "run 10", True)):
        job = Job(id=f"sleep{seconds:g}{len(text)}", engine="lammps", protocol="described", inputs={"in.txt": text},
                  time_limit_s=12.0)  # clean stop at 6 s (half a short limit)
        job_dir = tmp_path / job.id
        write_inputs(job, job_dir)
        argv = [sys.executable, "-c", f"import time; time.sleep({seconds})"]
        record = JobRecord(job=job.id, status=JobStatus.pending, inputs_sha256=inputs_digest(job), command=argv)
        record = JobWatch(job_dir, record, job.time_limit_s).run(argv, {})
        assert record.status == JobStatus.succeeded and record.clean_stop_s == 6
        assert finished_ok(job, job_dir) is done, record.wall_s


def test_the_clean_stop_leaves_the_runner_a_margin():
    assert clean_stop_s(3600) == 3420  # 5 % of a long limit
    assert clean_stop_s(300) == 270  # at least 30 s
    assert clean_stop_s(LIMIT_S) == 10 and clean_stop_s(1.5) == 1  # half a short one, never below 1 s


def test_a_stop_after_the_fit_window_keeps_the_modulus_with_a_warning(tmp_path: Path):
    """1e10 /s at 1 fs: 1e-5 strain per step, a sample every 24 steps, so the usual 0-0.5 % window ends at
    deformation step ~500, long before LAMMPS's 10 s limit. Expectation: a least-squares line through the
    same file's rows done here with numpy (each row's strain one step, 1e-5, before its recorded value, a row
    at strain 0 left out, the rows within 0-0.5 % strain); and, independently of any stress, the crystal's
    C11 from static energies (a crystal at rest pulled along a cube axis with its sides fixed: the slope is
    C11, see test_described_solids) within 3 %."""
    params, spec, job_dir, record = run_with_limit(cold_pull("1e10"), ["youngs_modulus"], tmp_path)
    assert record.status == JobStatus.succeeded and not record.timed_out, record.message
    log = (job_dir / "log.lammps").read_text()
    assert "New timer settings" in log and "Wall time limit reached" in log and "Total wall time" in log
    (result,) = DescribedRun().analyze(params, {"described": job_dir}, spec)

    rows = np.loadtxt(job_dir / STRESS_STRAIN_FILE)
    rows = rows[rows[:, 1] != 0.0]  # a sample before the box first moved has no lag: not in the fit
    strain, stress = rows[:, 1] - 1e-5, rows[:, 2] * 1e-4  # force strain; bar -> GPa
    window = (strain >= 0) & (strain <= 0.005 * (1 + 1e-6))
    assert strain.max() > 0.005 and window.sum() >= 8
    assert "fit window strain 0 to 0.005 " in result.method
    assert result.value == pytest.approx(np.polyfit(strain[window], stress[window], 1)[0], rel=1e-9)
    assert result.value == pytest.approx(c11_y(tmp_path), rel=0.03)

    (warning,) = result.warnings
    assert "stopped by the task's time budget at step" in warning and "of 2,000,000 of stage 2" in warning
    assert "after the fit window" in warning and "NOT the complete prescribed run" in result.method


def c11_y(tmp_path: Path, e: float = 1e-3) -> float:
    """C11 = (E(+e) + E(-e) - 2 E(0)) / (V0 e^2) of the same crystal strained along y, static energies
    (LAMMPS run 0), in GPa."""
    script = ["units metal", "atom_style atomic", "lattice diamond 5.431", "region box block 0 2 0 2 0 2",
              "create_box 1 box", "create_atoms 1 box", "mass 1 28.0855", "pair_style tersoff",
              "pair_coeff * * Si.tersoff Si", "thermo_style custom step pe vol", "thermo_modify format float %.15g",
              "run 0"]
    for scale in (1 + e, (1 - e) / (1 + e)):
        script += [f"change_box all y scale {scale!r} remap", "run 0"]
    work = run_inputs({"in.lammps": "\n".join(script) + "\n"}, tmp_path / "curvature", timeout=60)
    lines = [line.split() for line in (work / "log.lammps").read_text().splitlines()]
    (e0, v0), (e_plus, _), (e_minus, _) = [(float(r[1]), float(r[2])) for r in lines if len(r) == 3 and r[0] == "0"]
    return (e_plus + e_minus - 2 * e0) / (v0 * e**2) * 160.21766


def test_a_stop_inside_the_fit_window_gives_no_modulus(tmp_path: Path):
    """2e7 /s: the 0.5 % window needs 250,000 deformation steps, far more than 10 s of LAMMPS make here (~1,200
    steps/s at load 13; an idle core makes ~9,000)."""
    params, spec, job_dir, record = run_with_limit(cold_pull("2e7"), ["youngs_modulus"], tmp_path)
    assert record.status == JobStatus.succeeded and not record.timed_out
    (job,) = DescribedRun().jobs(params)
    assert record.clean_stop_s == 10 and not finished_ok(job, job_dir)  # a resumed solve runs it again
    with pytest.raises(CalculationFailed) as failed:
        DescribedRun().analyze(params, {"described": job_dir}, spec)
    reason = str(failed.value)
    assert "stopped by the task's time budget at step" in reason and "of stage 2" in reason
    assert "before the end of the fit window" in reason or "before the stress-strain record held a sample" in reason


def test_an_average_over_a_run_the_budget_cut_is_not_taken(tmp_path: Path):
    text = ("Metal units. Silicon in the diamond structure, lattice constant 5.431 angstrom, a periodic block of "
            "2 x 2 x 2 unit cells, Tersoff potential (Si.tersoff). Velocities are drawn for 600 K. With a 1 fs "
            "timestep, run 2000000 steps in the NVT ensemble at 600 K.")
    params, spec, job_dir, record = run_with_limit(text, ["temperature"], tmp_path)
    assert record.status == JobStatus.succeeded and not record.timed_out
    with pytest.raises(CalculationFailed) as failed:
        DescribedRun().analyze(params, {"described": job_dir}, spec)
    reason = str(failed.value)
    assert "stopped by the task's time budget at step" in reason and "of 2,000,000 of stage 1" in reason
    assert "temperature need the whole prescribed run" in reason


def test_without_the_runner_the_input_sets_no_time_limit(tmp_path: Path):
    """A rendered input run by hand (no CLEAN_STOP_ENV in its environment) runs as written."""
    import os

    assert CLEAN_STOP_ENV not in os.environ
    text = cold_pull("1e10").replace("2000000 steps", "50 steps")
    protocol = DescribedRun()
    spec = TaskSpec(request=text, properties=[PropertyRequest(name="youngs_modulus")], engine="lammps")
    (job,) = protocol.jobs(protocol.parameters(spec)[0])
    log = (run_inputs(job.inputs, tmp_path / "by_hand") / "log.lammps").read_text()
    assert "New timer settings" not in log and "Wall time limit reached" not in log


# ------------------------------------------------------------------------------------------------
# The window rule on records built by hand (E = 60 GPa, stresses lag one 1e-5 step, as LAMMPS records)
# ------------------------------------------------------------------------------------------------

SLOW_STRETCH = cold_pull("1e10").replace("2000000 steps", "400000 steps")


def record(tmp_path: Path, samples: int, noise: float, seed: int = 7) -> tuple[Path, np.ndarray, np.ndarray]:
    """A stress-strain file as the renderer's fix ave/time writes it for SLOW_STRETCH (a sample every 24 steps,
    0.024 % strain, from the deformation's start), cut after `samples` rows: (job folder, force strains,
    stresses in GPa)."""
    d = read_description(SLOW_STRETCH)
    every = sample_every(d, d.stages[-1])
    assert every == 24
    recorded = 1e-5 * every * np.arange(samples)
    seen = np.concatenate([[0.0], recorded[1:] - 1e-5])
    stress = 60.0 * seen + np.random.default_rng(seed).normal(0.0, noise, 200)[:samples]
    job = tmp_path / f"cut{samples}_{noise}"
    job.mkdir(parents=True)
    body = "\n".join(f"{10 + every * k} {e:.9g} {s * 1e4:.9g}" for k, (e, s) in enumerate(zip(recorded, stress,
                                                                                           strict=True)))
    (job / STRESS_STRAIN_FILE).write_text("# fix ave/time\n# TimeStep v_ssstrain v_ssstress\n" + body + "\n")
    return job, seen, stress


def test_a_noisy_record_must_cover_the_doubled_window(tmp_path: Path):
    """Thermal-like noise makes the fit double its 0.5 % window to 1 %. A record cut at 0.67 % strain holds
    the first window but not the doubled one the complete record's fit reads: no number. Cut at 1.007 %, it
    holds that window, but its highest stress so far lies inside it: the fit refuses a window the curve
    peaks in, and whether the complete curve does is not known (taking the cut record's peak as the curve's
    made the fit keep the 0.5 % window: 52.4 instead of 59.9 GPa). Cut at 1.42 %, the stress has risen
    past the window: the same slope as the whole record's, the least-squares line over [0, 1 %] (numpy here)."""
    d = read_description(SLOW_STRETCH)
    assert d.renderable and d.stages[-1].deform.rate == pytest.approx(0.01)
    stop = BudgetStop(stage=1, steps=0, timeout_s=60)
    whole_job, seen, stress = record(tmp_path, 200, 0.03)
    whole = youngs_modulus(whole_job, d, "described")
    assert "extended from 0.005" in whole.method and not whole.warnings
    short, _, _ = record(tmp_path, 29, 0.03)  # last force strain 0.00671
    with pytest.raises(CalculationFailed, match="before the end of the fit window .strain 0 to 0.01."):
        youngs_modulus(short, d, "described", stop)
    past, seen_past, stress_past = record(tmp_path, 43, 0.03)  # last force strain 0.01007
    assert seen_past[np.argmax(stress_past)] < 0.01
    with pytest.raises(CalculationFailed, match="highest stress so far inside it"):
        youngs_modulus(past, d, "described", stop)
    enough, _, _ = record(tmp_path, 60, 0.03)  # last force strain 0.01415
    cut = youngs_modulus(enough, d, "described", stop)
    window = (seen > 0) & (seen <= 0.01 * (1 + 1e-6))
    assert cut.value == pytest.approx(whole.value, rel=1e-12)
    assert cut.value == pytest.approx(np.polyfit(seen[window], stress[window], 1)[0], rel=1e-9)
    assert "stopped by the task's time budget" in cut.warnings[0]


def test_a_clean_record_needs_only_its_first_window(tmp_path: Path):
    """Without noise the 0.5 % window is not extended, so a record cut at 0.58 % holds all that the complete
    record's fit reads (E = 60 exactly); cut at 0.38 % it does not."""
    d = read_description(SLOW_STRETCH)
    stop = BudgetStop(stage=1, steps=0, timeout_s=60)
    job, _, _ = record(tmp_path, 25, 0.0)  # last force strain 0.00575
    assert youngs_modulus(job, d, "described", stop).value == pytest.approx(60.0, rel=1e-9)
    job, _, _ = record(tmp_path, 17, 0.0)  # 0.00383
    with pytest.raises(CalculationFailed, match="before the end of the fit window .strain 0 to 0.005."):
        youngs_modulus(job, d, "described", stop)
    with pytest.raises(CalculationFailed, match="before the deformation .stage 2. began"):
        youngs_modulus(job, d, "described", BudgetStop(stage=0, steps=5, timeout_s=60))


@pytest.mark.slow
def test_solve_answers_a_modulus_from_a_budget_stopped_run_and_says_so(tmp_path: Path, settings):
    """The whole path: `solve` with a 40 s budget on a pull prescribed for 2,000,000 steps. The job's time
    limit is what is left of the budget; LAMMPS stops itself half-way through it (a short limit), long after
    the 0.5 % window. final_answer.json holds the least-squares slope of the job's own record (numpy here,
    as in the test above); report.md lists the stop under its warnings and names the stop in the method."""
    import json

    from simagent.solve import FINAL_ANSWER, REPORT, solve

    task = tmp_path / "task.json"
    task.write_text(json.dumps({"id": "cut_pull", "problem_description": "Compute the Young's modulus in GPa. "
                                + cold_pull("1e10"), "level": 1, "engine": "lammps",
                                "metrics": ["youngs_modulus"], "time_limit": 0}))
    outcome = solve(task, tmp_path / "out", settings=settings, budget_s=40.0)
    report = (tmp_path / "out" / REPORT).read_text()
    assert outcome.exit_code == 0, report
    (record_file,) = (tmp_path / "out").glob(f"runs/*/jobs/*/{STRESS_STRAIN_FILE}")
    rows = np.loadtxt(record_file)
    rows = rows[rows[:, 1] != 0.0]
    strain, stress = rows[:, 1] - 1e-5, rows[:, 2] * 1e-4
    window = (strain >= 0) & (strain <= 0.005 * (1 + 1e-6))
    answer = json.loads((tmp_path / "out" / FINAL_ANSWER).read_text())
    assert answer["youngs_modulus"] == pytest.approx(np.polyfit(strain[window], stress[window], 1)[0], rel=1e-6)
    warnings = report.split("## Warnings", 1)[1]
    assert "stopped by the task's time budget at step" in warnings and "after the fit window" in warnings
    assert "NOT the complete prescribed run" in report


def test_a_loading_over_two_run_commands_is_one_record(tmp_path: Path):
    """A pull that goes on in a second run command keeps one fix deform and one record: a stop in its first
    run, past the window, is a stop inside the loading (not before it), and the complete record's reach is
    both runs'. Cut at 1.42 % strain with noise, the slope is the whole record's, as in the one-run case;
    a stop before the loading's first run gives no number."""
    d = read_description(SLOW_STRETCH.replace("400000 steps", "100000 steps")
                         + " After that the simulation runs for 300000 more steps.")
    assert [s.deform is not None and s.deform.continued for s in d.stages] == [False, False, True]
    whole_job, _, _ = record(tmp_path, 200, 0.03)
    whole = youngs_modulus(whole_job, d, "described")
    enough, _, _ = record(tmp_path, 60, 0.03)
    cut = youngs_modulus(enough, d, "described", BudgetStop(stage=1, steps=1400, timeout_s=60))
    assert cut.value == pytest.approx(whole.value, rel=1e-12)
    assert "of the deformation's 4" in cut.warnings[0] and "the 1 later stage did not run" in cut.warnings[0]
    with pytest.raises(CalculationFailed, match="before the deformation .stage 2. began"):
        youngs_modulus(enough, d, "described", BudgetStop(stage=0, steps=5, timeout_s=60))
