"""Physics gates: PASS / EXTEND / FAIL on synthetic series and recorded runs, and their wiring into
the error agent's post-run step (agents.error.postcheck)."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from simagent import gates
from simagent.gates import Outcome, RunData

FILES = Path(__file__).parent / "files"
RNG = np.random.default_rng(7)


def noisy(mean: float, n: int = 200, sd: float = 1.0) -> np.ndarray:
    return mean + sd * RNG.standard_normal(n)


def nvt_data(**series) -> RunData:
    data = RunData(engine="lammps", ensemble="nvt", kB=1.0, per_atom=True, n_atoms=500, target_temperature=1.5)
    data.series = {"temperature": noisy(1.5, sd=0.03), "potential_energy": noisy(-5.0, sd=0.01),
                   "atoms": np.full(200, 500.0), **series}
    return data


def test_good_nvt_run_passes():
    report = gates.run_gates(nvt_data())
    assert report.outcome == Outcome.PASS and report.summary() == "all gates passed"


def test_nan_fails_and_stops_the_statistics():
    pe = noisy(-5.0, sd=0.01)
    pe[150:] = np.nan
    report = gates.run_gates(nvt_data(potential_energy=pe, step=np.arange(200) * 10.0))
    assert report.outcome == Outcome.FAIL and "from step 1500" in report.summary()
    assert len(report.results) == 1


def test_lost_atoms_fail():
    atoms = np.full(200, 500.0)
    atoms[100:] = 498
    assert gates.run_gates(nvt_data(atoms=atoms)).outcome == Outcome.FAIL


def test_atoms_added_by_an_insertion_are_no_loss():
    """fix deposit / pour add atoms during the run: a count that only grows passes; a later drop
    (an atom lost after the insertions) still fails."""
    grown = np.minimum(500.0 + np.arange(200) // 2, 560.0)
    assert gates.atoms_gate(nvt_data(atoms=grown)).outcome == Outcome.PASS
    grown[150:] -= 1
    assert gates.atoms_gate(nvt_data(atoms=grown)).outcome == Outcome.FAIL


def test_missed_thermostat_target_asks_for_more():
    report = gates.run_gates(nvt_data(temperature=noisy(1.2, sd=0.03)))
    assert report.outcome == Outcome.EXTEND and "misses the target 1.5" in report.summary()


def test_drifting_energy_asks_for_more():
    drifting = np.linspace(-4.0, -5.0, 200) + noisy(0.0, sd=0.005)
    report = gates.run_gates(nvt_data(potential_energy=drifting))
    assert report.outcome == Outcome.EXTEND and "drifting" in report.summary()


def test_nve_energy_drift_fails():
    data = nvt_data(total_energy=np.linspace(-3.0, -2.9, 200))
    data.ensemble = "nve"
    result = gates.energy_drift_gate(data)
    assert result.outcome == Outcome.FAIL and "kT" in result.reason
    data.series["total_energy"] = -3.0 + noisy(0.0, sd=1e-4)
    assert gates.energy_drift_gate(data).outcome == Outcome.PASS


def test_pressure_target_of_a_barostat():
    data = nvt_data(pressure=noisy(500.0, sd=50.0))
    data.ensemble, data.target_pressure, data.pressure_unit = "npt", 1.0, "bar"
    assert gates.pressure_gate(data).outcome == Outcome.EXTEND
    data.series["pressure"] = noisy(1.0, sd=50.0)
    assert gates.pressure_gate(data).outcome == Outcome.PASS


def test_msd_needs_a_linear_regime():
    t = np.linspace(0.0, 100.0, 200)
    data = nvt_data()
    data.msd_time, data.msd = t, 6 * 0.05 * t + 0.1
    assert gates.msd_gate(data).outcome == Outcome.PASS
    data.msd = 3.0 * t**2  # ballistic
    assert gates.msd_gate(data).outcome == Outcome.EXTEND
    data.msd = 0.5 * (1 - np.exp(-t))  # caged: a solid
    assert "sub-diffusive" in gates.msd_gate(data).reason


def test_msd_from_frames_of_a_random_walk():
    steps = RNG.standard_normal((400, 50, 3)) * 0.1
    frames = list(np.cumsum(steps, axis=0))
    t, msd = gates.msd_from_frames(np.arange(400.0), frames)
    slope = np.polyfit(np.log(t[50:250]), np.log(msd[50:250]), 1)[0]
    assert abs(slope - 1.0) < 0.15


def test_gcmc_blocks():
    data = RunData(engine="raspa", ensemble="gcmc", blocks={"loading CH4": [2.6, 2.3, 2.3, 2.5, 2.2]})
    assert gates.gcmc_gate(data).outcome == Outcome.PASS
    data.blocks = {"loading CH4": [0.5, 1.0, 1.5, 2.0, 2.5]}
    assert gates.gcmc_gate(data).outcome == Outcome.EXTEND


def test_minimisation_is_not_judged_as_dynamics():
    data = RunData(engine="lammps", ensemble="minimize", series={"potential_energy": np.linspace(0, -1, 50)})
    assert gates.run_gates(data).outcome == Outcome.PASS


# ---------------------------------------------------------------------------------------------
# Recorded runs
# ---------------------------------------------------------------------------------------------


def recorded_job(case: str, tmp_path: Path):
    from tools.lammps.handlers import load_user_job

    shutil.copytree(FILES / "lammps" / case, tmp_path / case)
    job, _ = load_user_job(tmp_path / case / "inputs" / "in.lammps")
    return job, tmp_path / case / "outputs"


def test_recorded_good_run_passes(tmp_path):
    job, job_dir = recorded_job("good-nve", tmp_path)
    assert gates.evaluate(job_dir, job).outcome == Outcome.PASS


def test_recorded_copper_at_20_fs_fails_the_drift_gate(tmp_path):
    job, job_dir = recorded_job("energy-drift", tmp_path)
    report = gates.evaluate(job_dir, job)
    assert report.outcome == Outcome.FAIL and "energy drift" in report.summary()


def test_recorded_raspa_output_feeds_the_gcmc_gate(tmp_path):
    pytest.importorskip("RASPA2")
    from tools.raspa.handlers import load_user_job

    shutil.copytree(FILES / "faults" / "raspa" / "good-gcmc", tmp_path / "case")
    job, _ = load_user_job(tmp_path / "case" / "inputs" / "simulation.input")
    data = gates.evaluate(tmp_path / "case" / "outputs", job)
    assert data.outcome == Outcome.PASS
    missing = gates.evaluate(tmp_path / "case" / "inputs", job)  # no Output/ folder: RASPA stopped early
    assert missing.outcome == Outcome.FAIL and "Output/System_0" in missing.summary()


# ---------------------------------------------------------------------------------------------
# Wiring: agents.error.postcheck
# ---------------------------------------------------------------------------------------------


def fluid_state(tmp_path: Path, outputs: str, succeeded: bool):
    """A RunState with one lammps/fluid_md run whose job folder holds recorded outputs."""
    from simagent.models import (
        Conditions,
        JobStatus,
        Plan,
        PotentialSpec,
        PropertyRequest,
        ProtocolRun,
        Quantity,
        SystemSpec,
        TaskSpec,
    )
    from simagent.protocols import get_protocol
    from simagent.state import RunState

    spec = TaskSpec(request="x", system=SystemSpec(name="LJ", kind="lj_fluid", phase="liquid"),
                    potential=PotentialSpec(family="lj"), properties=[PropertyRequest(name="pressure")],
                    conditions=Conditions(temperature=Quantity(value=1.5, unit="reduced"),
                                          density=Quantity(value=0.8, unit="reduced")))
    protocol = get_protocol("lammps/fluid_md")
    params, _ = protocol.parameters(spec)
    job = protocol.jobs(params)[0]
    job_dir = tmp_path / "jobs" / "fluid_md-md"
    shutil.copytree(FILES / "lammps" / outputs / "outputs", job_dir)
    job = job.model_copy(update={"id": "fluid_md-md", "workdir": str(job_dir),
                                 "status": JobStatus.succeeded if succeeded else JobStatus.failed})
    run = ProtocolRun(protocol="lammps/fluid_md", properties=["pressure"], params=params.model_dump(mode="json"),
                      jobs={"md": "fluid_md-md"})
    return RunState(request="x", thread_id="t", root=str(tmp_path), spec=spec, plan=Plan(jobs=[job], runs=[run]))


def runtime_for(settings):
    from simagent.backends.expert import ExpertBackend

    context = SimpleNamespace(settings=settings, backend=ExpertBackend(), auto_approve=True,
                              report=lambda *a, **k: None)
    return SimpleNamespace(context=context)


def test_postcheck_repairs_a_failed_protocol_job_by_parameter(tmp_path, settings):
    from agents.error import postcheck

    state = fluid_state(tmp_path, "lost-atoms", succeeded=False)
    old_dt = state.plan.runs[0].params["timestep"]
    command = postcheck(state, runtime_for(settings))
    assert command.goto == "input_writer"
    new_params = command.update["plan"].runs[0].params
    assert new_params["timestep"] < old_dt
    correction = command.update["corrections"][-1]
    assert correction.job == "fluid_md-md" and "timestep" in correction.action
    archived = tmp_path / "jobs" / "fluid_md-md.failed1" / "corrections.json"
    assert archived.is_file() and command.update["repairs"] == 1


def test_postcheck_gate_failure_reports_no_number(tmp_path, settings):
    from agents.error import postcheck
    from simagent.models import JobStatus

    state = fluid_state(tmp_path, "nan-thermo", succeeded=True)
    command = postcheck(state, runtime_for(settings.model_copy(update={"max_repairs": 0})))
    assert command.goto == "analysis"
    job = command.update["plan"].jobs[0]
    assert job.status == JobStatus.failed and "physics gate" in job.message
    assert any("no result reported" in f for f in command.update["failures"])


@pytest.mark.parametrize("fixes, ensemble, target", [
    # plain NVE started from velocities at 1.44: the 1.44 is no target (the drop is the result)
    ([("1", "all", "nve", [])], "nve", None),
    # NVE integration with a Langevin thermostat is thermostatted: its set point is the target
    ([("1", "all", "nve", []), ("2", "all", "langevin", ["1.0", "1.0", "0.5", "48279"])], "nvt", 1.0),
    # so is NVE integration under a Berendsen or a rescaling thermostat
    ([("1", "all", "nve", []), ("2", "all", "temp/berendsen", ["1.0", "1.0", "0.5"])], "nvt", 1.0),
    ([("1", "all", "nve", []), ("2", "all", "temp/rescale", ["10", "1.0", "1.0", "0.02", "1.0"])], "nvt", 1.0),
    # NVE/limit started at 1.44 has no target either
    ([("1", "all", "nve/limit", ["0.05"])], "nve", None),
    # a ramp has no single target
    ([("1", "all", "nvt", ["temp", "0.5", "1.5", "0.5"])], "nvt", None),
])  # fmt: skip
def test_the_ensemble_decides_the_temperature_target(fixes, ensemble, target):
    from tools.lammps.check import Fix
    from tools.lammps.handlers import ensemble_of, targets_of

    parsed = [Fix(id=i, group=g, style=s, args=a, line=n) for n, (i, g, s, a) in enumerate(fixes, 1)]
    assert ensemble_of(parsed) == ensemble and targets_of(parsed)[0] == target
    data = RunData(engine="lammps", ensemble=ensemble, kB=1.0, per_atom=True, n_atoms=500, target_temperature=target)
    data.series = {"temperature": noisy(0.73, sd=0.01), "potential_energy": noisy(-5.7, sd=0.01)}
    assert gates.temperature_gate(data).outcome == (Outcome.PASS if target is None else Outcome.EXTEND)
