"""Repairs and review: an LLM repair is shown as a diff before it runs (review mode), reviewer
edits of generated inputs survive re-rendering (or stop the run when they no longer apply), and
line actions from an LLM repair a user's own input. Real LAMMPS runs of under a second each;
the LLM is a scripted OpenAI-compatible server (tests/fake_openai_server.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_openai_server import FakeOpenAIServer

from simagent.handlers import CORRECTIONS_FILE
from simagent.protocols import get_protocol
from simagent.session import Session
from simagent.usercli import run_file

NICKEL = "Cohesive energy and lattice constant of fcc nickel with the Foiles (u3) EAM potential"
JOB = "crystal_relax-relax"
FILES = Path(__file__).parent / "files"

# A failure no deterministic handler knows: LAMMPS stops with "ERROR: Fix halt condition ... met"
# (the expert's repair rules give up on it too, so the hybrid backend asks the LLM).
HALT = "variable        stop_now equal 1\nfix             stop all halt 1 v_stop_now > 0.5 error hard\n"
ANCHOR = "min_style       cg\n"
LLM_REPAIR = {"action": "set", "parameter": "vmax", "value": "0.0005", "file": None,
              "reason": "the box may change too fast per iteration"}

pytestmark = pytest.mark.engine


@pytest.fixture
def halts_at_large_vmax(monkeypatch):
    """crystal_relax renders an input that halts with an error while vmax > 0.0005."""
    protocol = get_protocol("lammps/crystal_relax")
    original = protocol.jobs

    def jobs(params):
        rendered = original(params)
        if params.vmax <= 0.0005:
            return rendered
        out = []
        for job in rendered:
            text = job.inputs["in.lammps"]
            assert ANCHOR in text
            out.append(job.model_copy(update={"inputs": {**job.inputs,
                                                         "in.lammps": text.replace(ANCHOR, ANCHOR + HALT, 1)}}))
        return out

    monkeypatch.setattr(protocol, "jobs", jobs)


def hybrid(settings, base_url: str):
    """Expert rules first, the scripted server as the LLM where they give up."""
    return settings.model_copy(update={"backend": "hybrid", "hybrid_llm": "openai", "base_url": base_url,
                                       "model": "fake-model", "llm_retries": 0})


def repair_replies(body: dict) -> str:
    name = body["response_format"]["json_schema"]["name"]
    assert name == "RepairAction", f"only the repair should reach the LLM, not {name}"
    return json.dumps(LLM_REPAIR)


def until_repair_review(session: Session, outcome):
    """Approve the first review; the run fails, the LLM repairs, review shows the repair."""
    assert outcome.interrupt["kind"] == "review" and "repair" not in outcome.interrupt
    outcome = session.resume(outcome.thread_id, {"action": "approve"})
    assert outcome.interrupt is not None and outcome.interrupt["kind"] == "review"
    assert "repair" in outcome.interrupt and "reject" in outcome.interrupt["actions"]
    return outcome


def test_llm_repair_is_shown_as_a_diff_then_approved(settings, halts_at_large_vmax):
    server = FakeOpenAIServer(repair_replies)
    with server as base_url, Session(hybrid(settings, base_url), auto_approve=False) as session:
        outcome = until_repair_review(session, session.ask(NICKEL))
        repair = outcome.interrupt["repair"]
        assert [c["handler"] for c in repair["changes"]] == ["hybrid(openai) repair"]
        assert repair["changes"][0]["action"] == "vmax: 0.001 -> 0.0005"
        diff = repair["diff"]
        assert diff.startswith(f"--- a/{JOB}/in.lammps\n+++ b/{JOB}/in.lammps\n")
        assert "-fix             stop all halt 1 v_stop_now > 0.5 error hard\n" in diff
        assert "-fix             relax all box/relax iso 0.0 vmax 0.001\n" in diff
        assert "+fix             relax all box/relax iso 0.0 vmax 0.0005\n" in diff
        assert repair["diffs"] == {JOB: diff}
        # nothing ran with the repair yet: only the failed attempt is on disk
        jobs = settings.workdir.resolve() / outcome.thread_id / "jobs"
        assert sorted(p.name for p in jobs.iterdir()) == [f"{JOB}.failed1"]
        outcome = session.resume(outcome.thread_id, {"action": "approve"})
    answer = outcome.answer
    assert answer.status == "answered", answer.error
    assert any(c.handler == "hybrid(openai) repair" and "vmax" in c.action for c in answer.corrections)
    assert len(server.requests) == 1
    asked = server.requests[0]["messages"][1]["content"]
    assert "Fix halt condition" in asked  # the LLM saw the engine's error, not only the exit code
    saved = json.loads((jobs / JOB / CORRECTIONS_FILE).read_text())
    assert saved[0]["handler"] == "hybrid(openai) repair" and saved[0]["actions"] == [{"param": "vmax", "_set": 0.0005}]


def test_rejected_llm_repair_does_not_run(settings, halts_at_large_vmax):
    with FakeOpenAIServer(repair_replies) as base_url, \
            Session(hybrid(settings, base_url), auto_approve=False) as session:
        outcome = until_repair_review(session, session.ask(NICKEL))
        outcome = session.resume(outcome.thread_id, {"action": "reject"})
    answer = outcome.answer
    assert answer.status == "failed" and answer.answers == []
    assert "rejected by the reviewer" in answer.error
    assert not any(c.handler == "hybrid(openai) repair" for c in answer.corrections)
    assert any(d.decision == "repair_review" and d.detail.startswith("rejected") for d in answer.decisions)
    jobs = settings.workdir.resolve() / outcome.thread_id / "jobs"
    assert sorted(p.name for p in jobs.iterdir()) == [f"{JOB}.failed1"]


def test_llm_repair_runs_without_review_with_yes(settings, halts_at_large_vmax):
    with FakeOpenAIServer(repair_replies) as base_url, Session(hybrid(settings, base_url)) as session:
        outcome = session.ask(NICKEL)
    assert outcome.interrupt is None and outcome.answer.status == "answered"
    assert any(c.handler == "hybrid(openai) repair" for c in outcome.answer.corrections)


def test_reviewer_edit_survives_the_repair_rerender(settings, halts_at_large_vmax):
    with FakeOpenAIServer(repair_replies) as base_url, \
            Session(hybrid(settings, base_url), auto_approve=False) as session:
        outcome = session.ask(NICKEL)
        text = outcome.interrupt["files"][JOB]["in.lammps"]
        edited = text.replace("thermo          50\n", "thermo          50\nprint           \"SIMAGENT reviewer=1\"\n")
        assert edited != text
        outcome = session.resume(outcome.thread_id, {"action": "edit", "files": {JOB: {"in.lammps": edited}}})
        outcome = until_repair_review(session, outcome)
        repaired = outcome.interrupt["files"][JOB]["in.lammps"]
        assert 'print           "SIMAGENT reviewer=1"' in repaired and "vmax 0.0005" in repaired
        assert "reviewer=1" not in outcome.interrupt["repair"]["diff"]  # unchanged by the repair
        outcome = session.resume(outcome.thread_id, {"action": "approve"})
    answer = outcome.answer
    assert answer.status == "answered", answer.error
    final = Path(answer.jobs[0]) / "in.lammps"
    assert "SIMAGENT reviewer=1" in final.read_text() and "vmax 0.0005" in final.read_text()
    assert "SIMAGENT reviewer=1" in (final.parent / "log.lammps").read_text()


def test_reviewer_edit_that_no_longer_applies_stops_the_run(settings, halts_at_large_vmax):
    with FakeOpenAIServer(repair_replies) as base_url, \
            Session(hybrid(settings, base_url), auto_approve=False) as session:
        outcome = session.ask(NICKEL)
        text = outcome.interrupt["files"][JOB]["in.lammps"]
        # the reviewer changes the very line the repair re-renders
        edited = text.replace("box/relax iso 0.0 vmax 0.001\n", "box/relax iso 0.0 vmax 0.002\n", 1)
        outcome = session.resume(outcome.thread_id, {"action": "edit", "files": {JOB: {"in.lammps": edited}}})
        outcome = session.resume(outcome.thread_id, {"action": "approve"})
    answer = outcome.answer
    assert answer.status == "failed"
    assert f"your edit of {JOB}/in.lammps no longer applies cleanly" in answer.error
    assert "vmax 0.002" in answer.error and "vmax 0.0005" in answer.error
    jobs = settings.workdir.resolve() / outcome.thread_id / "jobs"
    assert sorted(p.name for p in jobs.iterdir()) == [f"{JOB}.failed1"]  # nothing ran after the stop


def test_unsafe_reviewer_edit_after_a_repair_is_rejected(settings, halts_at_large_vmax):
    with FakeOpenAIServer(repair_replies) as base_url, \
            Session(hybrid(settings, base_url), auto_approve=False) as session:
        outcome = until_repair_review(session, session.ask(NICKEL))
        text = outcome.interrupt["files"][JOB]["in.lammps"]
        outcome = session.resume(outcome.thread_id, {"action": "edit",
                                                     "files": {JOB: {"in.lammps": text + "shell touch x\n"}}})
    answer = outcome.answer
    assert answer.status == "failed" and "shell" in answer.error
    jobs = settings.workdir.resolve() / outcome.thread_id / "jobs"
    assert sorted(p.name for p in jobs.iterdir()) == [f"{JOB}.failed1"]


# ---------------------------------------------------------------------------------------------
# A user's own input: the LLM answers with a line action
# ---------------------------------------------------------------------------------------------

HALTING_USER_INPUT = (FILES / "lammps" / "good-nve" / "inputs" / "in.lammps").read_text().replace(
    "fix             1 all nve\n",
    "fix             1 all nve\nvariable        t equal temp\nfix             stop all halt 10 v_t > 0.1 error hard\n")


def user_backend(settings, base_url: str):
    from simagent.backends.openai_backend import OpenAIBackend

    return OpenAIBackend(settings.model_copy(update={"backend": "openai", "base_url": base_url,
                                                     "model": "fake-model", "llm_retries": 1}))


def test_llm_line_action_repairs_a_user_input(settings, tmp_path):
    script = tmp_path / "in.lammps"
    script.write_text(HALTING_USER_INPUT)
    # the LLM quotes the line with other spacing: it still matches that one line
    reply = {"action": "delete_line", "parameter": "fix stop all  halt 10 v_t > 0.1 error hard",
             "value": "", "file": "in.lammps", "reason": "the halt condition stops the run at once"}
    server = FakeOpenAIServer([json.dumps(reply)])
    with server as base_url:
        report = run_file(script, workdir=tmp_path / "runs", yes=True, backend=user_backend(settings, base_url))
    assert report.status == "succeeded", report.message
    assert [c["source"] for c in report.corrections] == ["backend"]
    assert "removed `fix             stop all halt 10 v_t > 0.1 error hard`" in report.corrections[0]["changes"][0]
    final = Path(report.final_input).read_text()
    assert "halt" not in final and "fix             1 all nve" in final
    request = server.requests[0]["messages"]
    assert "replace_line" in request[0]["content"] and "delete_line" in request[0]["content"]
    asked = request[1]["content"]
    assert "--- file: in.lammps ---" in asked and "fix             stop all halt" in asked


def test_llm_line_action_quoting_an_absent_line_is_not_applied(settings, tmp_path):
    script = tmp_path / "in.lammps"
    script.write_text(HALTING_USER_INPUT)
    reply = {"action": "replace_line", "parameter": "fix 9 all halt 5 temp > 0.1", "value": "fix 1 all nve",
             "file": None, "reason": "invented"}
    with FakeOpenAIServer([json.dumps(reply)]) as base_url:
        report = run_file(script, workdir=tmp_path / "runs", yes=True, backend=user_backend(settings, base_url))
    assert report.status == "failed" and report.corrections == []
    assert "the proposed replace_line does not apply" in report.message
