"""The agent graph end to end on real LAMMPS (0 K crystal relaxations take well under a second):
clarification, review with feedback and edits, safety rejection, crash and resume."""

import json
from pathlib import Path

import pytest

from simagent.protocols import get_protocol
from simagent.session import Session

NICKEL = "Cohesive energy and lattice constant of fcc nickel with the Foiles (u3) EAM potential"

pytestmark = pytest.mark.engine


def value(answer, quantity):
    return next(r for r in answer.answers if r.quantity == quantity)


def test_answer_carries_provenance(settings):
    with Session(settings) as session:
        outcome = session.ask(NICKEL)
    answer = outcome.answer
    assert answer.status == "answered"
    a = value(answer, "lattice_constant")
    assert a.unit == "angstrom" and abs(a.value - 3.52) < 0.01  # Foiles, Baskes, Daw 1986
    job_dir = Path(answer.jobs[0])
    assert (job_dir / "in.lammps").is_file() and (job_dir / "log.lammps").is_file()
    assert a.job == job_dir.name
    saved = json.loads((settings.workdir.resolve() / outcome.thread_id / "answer.json").read_text())
    assert saved["status"] == "answered" and saved["answers"][0]["value"] == answer.answers[0].value
    assert any(d.parameter == "potential" and "Ni_u3.eam" in d.value for d in answer.defaults_applied)
    assert [d.decision for d in answer.decisions] == ["task_spec", "protocols"]


def test_underspecified_request_asks_then_resumes(settings):
    with Session(settings) as session:
        first = session.ask("What is the lattice constant?")
        assert first.answer.status == "needs_clarification"
        assert "material" in first.answer.question
        assert (settings.workdir.resolve() / first.thread_id / "answer.json").is_file()
    with Session(settings) as session:  # a new process would do the same: state is in the checkpoint
        second = session.resume(first.thread_id, "fcc nickel with the Foiles EAM potential")
    assert second.answer.status == "answered"
    assert abs(value(second.answer, "lattice_constant").value - 3.52) < 0.01


def test_review_feedback_then_approve(settings):
    with Session(settings, auto_approve=False) as session:
        outcome = session.ask(NICKEL)
        assert outcome.interrupt["kind"] == "review"
        before = next(iter(outcome.interrupt["files"].values()))["in.lammps"]
        outcome = session.resume(outcome.thread_id, {"action": "feedback", "text": "use ftol = 1e-9 please"})
        assert outcome.interrupt["kind"] == "review"
        after = next(iter(outcome.interrupt["files"].values()))["in.lammps"]
        assert after != before and "1e-09" in after and "1e-10" not in after
        outcome = session.resume(outcome.thread_id, {"action": "approve"})
    assert outcome.answer.status == "answered"
    assert any(c.handler == "reviewer feedback" and "ftol" in c.action for c in outcome.answer.corrections)


def test_unsafe_edit_is_rejected_and_nothing_runs(settings):
    with Session(settings, auto_approve=False) as session:
        outcome = session.ask(NICKEL)
        job_id, files = next(iter(outcome.interrupt["files"].items()))
        evil = files["in.lammps"] + "\nshell rm -rf /tmp/something\n"
        outcome = session.resume(outcome.thread_id, {"action": "edit", "files": {job_id: {"in.lammps": evil}}})
    answer = outcome.answer
    assert answer.status == "failed" and "shell" in answer.error
    assert not (settings.workdir.resolve() / outcome.thread_id / "jobs").exists()


def test_crash_then_resume_does_not_rerun_finished_jobs(settings, monkeypatch):
    protocol = get_protocol("lammps/crystal_relax")
    original = protocol.analyze
    calls = {"n": 0}

    def crash_once(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("simulated crash of the simagent process")
        return original(*args, **kwargs)

    monkeypatch.setattr(protocol, "analyze", crash_once)
    with Session(settings) as session:
        with pytest.raises(RuntimeError):
            session.ask(NICKEL, thread_id="crashy")
    status = settings.workdir.resolve() / "crashy" / "jobs" / "crystal_relax-relax" / "status.json"
    before = status.stat().st_mtime_ns
    with Session(settings) as session:
        outcome = session.resume("crashy")
    assert outcome.answer.status == "answered"
    assert status.stat().st_mtime_ns == before  # the job was not run again


def finished_liquid_md_plan(settings, root):
    """A GROMACS liquid_md plan (SPC/E water) whose jobs all count as succeeded in folders under `root`
    (no engine: the tests script the gates)."""
    from agents.input_writer import render_plan
    from simagent.models import JobStatus, ProtocolRun

    protocol = get_protocol("gromacs/liquid_md")
    params = protocol.Params(model="spce", n_molecules=216, temperature=298.15, pressure=1.0, cutoff=0.85,
                             timestep=0.002, em_steps=500, nvt_steps=500, npt_steps=2000, production_steps=4000,
                             energy_every=20, compressibility=4.5e-5).model_dump(mode="json")
    run = ProtocolRun(protocol="gromacs/liquid_md", properties=["density"], params=params, jobs={})
    plan = render_plan([run], settings.job_time_limit_s)
    jobs = []
    for job in plan.jobs:
        (root / job.id).mkdir(parents=True)
        jobs.append(job.model_copy(update={"status": JobStatus.succeeded, "workdir": str(root / job.id)}))
    return params, plan.model_copy(update={"jobs": jobs})


@pytest.mark.parametrize("stage", ["nvt", "prod"])
def test_gromacs_stage_extension_reaches_the_protocol_and_reruns_what_follows(settings, monkeypatch, tmp_path,
                                                                              stage):
    """tools.gromacs.handlers.extend_actions gives a parameter action per stage; postcheck applies
    it to the protocol run, keeps the attempt as <job>.failed1 and moves the finished jobs that
    read the extended stage's output aside, so they run again (no engine: gates are scripted)."""
    from types import SimpleNamespace

    from agents.error import postcheck
    from agents.input_writer import render_plan
    from simagent import gates
    from simagent.executor import LocalExecutor
    from simagent.state import RunContext, RunState

    root = tmp_path / "jobs"
    params, plan = finished_liquid_md_plan(settings, root)
    extended = f"liquid_md-{stage}"

    def scripted(job_dir, job):
        outcome = gates.Outcome.EXTEND if job.id == extended else gates.Outcome.PASS
        return gates.GateReport([gates.GateResult("equilibration", outcome, "still drifting")])

    monkeypatch.setattr(gates, "evaluate", scripted)
    executor = LocalExecutor()
    context = RunContext(settings=settings, backend=None, executor=executor)
    state = RunState(request="x", thread_id="t", root=str(tmp_path), plan=plan)
    try:
        command = postcheck(state, SimpleNamespace(context=context))
    finally:
        executor.shutdown()
    assert command.goto == "input_writer"
    name = {"nvt": "nvt_steps", "prod": "production_steps"}[stage]
    new_params = command.update["plan"].runs[0].params
    assert new_params[name] == 2 * params[name]
    assert [c.action for c in command.update["corrections"]] == [f"{name}: {params[name]} -> {2 * params[name]}"]
    assert (root / f"{extended}.failed1").is_dir()
    after = {"nvt": ["liquid_md-npt", "liquid_md-prod"], "prod": []}[stage]
    assert sorted(p.name for p in root.iterdir() if ".superseded" in p.name) == [f"{j}.superseded1" for j in after]
    rendered = {job.id: job for job in render_plan(command.update["plan"].runs, settings.job_time_limit_s).jobs}
    assert f"nsteps                  = {2 * params[name]}" in rendered[extended].inputs[f"{stage}.mdp"]


def test_a_prescribed_run_is_kept_and_the_gate_finding_is_a_warning(settings, monkeypatch, tmp_path):
    """solve (gate_extensions False): an EXTEND finding never lengthens the run the description
    prescribes; the job stays succeeded and the finding is a warning. A FAIL still fails."""
    from types import SimpleNamespace

    from agents.error import postcheck
    from simagent import gates
    from simagent.executor import LocalExecutor
    from simagent.state import RunContext, RunState

    _, plan = finished_liquid_md_plan(settings, tmp_path)
    verdict = {"liquid_md-prod": gates.Outcome.EXTEND}

    def scripted(job_dir, job):
        outcome = verdict.get(job.id, gates.Outcome.PASS)
        return gates.GateReport([gates.GateResult("temperature", outcome, "misses the target")])

    monkeypatch.setattr(gates, "evaluate", scripted)
    executor = LocalExecutor()
    context = RunContext(settings=settings.model_copy(update={"gate_extensions": False}), backend=None,
                         executor=executor)
    try:
        command = postcheck(RunState(request="x", thread_id="t", root=str(tmp_path), plan=plan),
                            SimpleNamespace(context=context))
        assert command.goto == "analysis"
        assert command.update["plan"].runs[0].params["production_steps"] == 4000  # as prescribed
        warnings = [d.detail for d in command.update["decisions"] if d.decision == "warning"]
        assert warnings and "kept as prescribed" in warnings[0] and "misses the target" in warnings[0]
        verdict["liquid_md-prod"] = gates.Outcome.FAIL
        command = postcheck(RunState(request="x", thread_id="t", root=str(tmp_path), plan=plan),
                            SimpleNamespace(context=context))
        assert any("physics gates failed" in f for f in command.update["failures"])
    finally:
        executor.shutdown()
