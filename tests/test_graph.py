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
