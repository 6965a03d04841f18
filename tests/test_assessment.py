"""simagent.assessment: the verdict on a finished job that both repair loops act on (the graph's
postcheck and `simagent run`)."""

from simagent import assessment, gates
from simagent.handlers import CorrectionLog, CorrectionRecord
from simagent.models import Job


def gate_report(outcome: gates.Outcome) -> gates.GateReport:
    return gates.GateReport([gates.GateResult("energy drift", outcome, "drift 3 % of |E|")])


def protocol_job() -> Job:
    return Job(id="prod", protocol="lammps/fluid_md", engine="lammps", params={"production_steps": 1000},
               inputs={"in.lammps": "run 1000\n"})


def extension(n: int) -> CorrectionRecord:
    return CorrectionRecord(job="prod", handler=assessment.EXTEND_HANDLER, category="equilibration", errors=["x"],
                            actions=[], changes=["longer"], attempt=n)


def test_extend_until_the_limit_then_fail(tmp_path, monkeypatch):
    monkeypatch.setattr(gates, "evaluate", lambda job_dir, job: gate_report(gates.Outcome.EXTEND))
    job, log = protocol_job(), CorrectionLog()
    verdict = assessment.assess_finished(tmp_path, job, log, param_only=True)
    assert verdict.verdict == "extend"
    assert verdict.diagnosis.actions == [{"param": "production_steps", "_scale": 2.0}]
    for n in range(assessment.MAX_EXTENSIONS):
        log.add(extension(n))
    verdict = assessment.assess_finished(tmp_path, job, log, param_only=True)
    assert verdict.verdict == "fail" and verdict.reasons == ["energy drift: drift 3 % of |E|"]


def test_a_prescribed_run_length_passes_with_its_reasons(tmp_path, monkeypatch):
    monkeypatch.setattr(gates, "evaluate", lambda job_dir, job: gate_report(gates.Outcome.EXTEND))
    verdict = assessment.assess_finished(tmp_path, protocol_job(), CorrectionLog(), extend=False)
    assert verdict.verdict == "pass" and verdict.gates.outcome == gates.Outcome.EXTEND and verdict.reasons


def test_an_extension_the_protocol_cannot_express_is_noted_not_planned(tmp_path, monkeypatch):
    monkeypatch.setattr(gates, "evaluate", lambda job_dir, job: gate_report(gates.Outcome.EXTEND))
    user = Job(id="prod", protocol="user/lammps", engine="lammps",
               inputs={"in.lammps": "units lj\nfix 1 all nve\nrun 1000\n"})
    assert assessment.assess_finished(tmp_path, user, CorrectionLog()).verdict == "extend"  # `simagent run`
    verdict = assessment.assess_finished(tmp_path, user, CorrectionLog(), param_only=True)  # the graph
    assert verdict.verdict == "fail" and "cannot express" in verdict.notes[0]


def test_a_failed_job_without_a_known_cause_fails(tmp_path):
    (tmp_path / "stdout.txt").write_text("something nobody recognises\n")
    verdict = assessment.assess_failed(tmp_path, protocol_job(), CorrectionLog())
    assert verdict.verdict == "fail" and verdict.diagnosis is None
