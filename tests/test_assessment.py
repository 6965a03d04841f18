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


# A prescribed run (solve): no repair or extension may change its timestep or a run length. Every
# action the engines' handlers and the backend can propose for that, and one that is allowed.
def _lammps_actions():
    from tools.lammps import check
    from tools.lammps.handlers import extend_actions, halve_timestep, timestep_action

    proto = Job(id="p", protocol="lammps/fluid_md", engine="lammps", params={"timestep": 0.005, "production_steps": 10},
                inputs={"in.lammps": "units lj\ntimestep 0.005\nfix 1 all nve\nrun 10\n"})
    user = Job(id="u", protocol="user/lammps", engine="lammps",
               inputs={"in.lammps": "units lj\ntimestep 0.005\nfix 1 all nve\nrun 10\n"})
    model = check.read_script(user.inputs)
    return [
        (halve_timestep(proto, model, "drift")["actions"], ["timestep"]),
        ([timestep_action(user, model, 0.002)], ["timestep"]),
        (extend_actions(proto), ["production_steps"]),
        (extend_actions(user), ["the line 'run 20'"]),
    ]


def test_every_action_that_changes_a_timestep_or_run_length_is_named():
    from simagent.backends.base import RepairAction
    from simagent.handlers import repair_action_to_actions
    from tools.gromacs.handlers import extend_actions as gromacs_extend
    from tools.raspa.handlers import extend_actions as raspa_extend

    gmx = Job(id="g", protocol="gromacs/liquid_md", engine="gromacs", stage="prod", params={"production_steps": 500})
    raspa = Job(id="r", protocol="raspa/gcmc_uptake", engine="raspa", stage="gcmc", params={})
    job = Job(id="p", protocol="lammps/fluid_md", engine="lammps", params={"timestep": 0.005})
    cases = [
        *_lammps_actions(),
        (gromacs_extend(gmx), ["production_steps"]),
        (raspa_extend(raspa), ["production_cycles"]),
        (repair_action_to_actions(RepairAction(action="scale", parameter="timestep", value="0.5", reason="x"), job),
         ["timestep"]),
        (repair_action_to_actions(RepairAction(action="set", parameter="nvt_steps", value="4000", reason="x"), job),
         ["nvt_steps"]),
        ([{"param": "dt", "_scale": 0.5}], ["dt"]),
        ([{"file": "grompp.mdp", "_set_option": {"key": "nsteps", "value": "100"}}], ["nsteps"]),
        # allowed: a damping, a seed, a neighbour setting (not the timestep nor a run length)
        ([{"param": "thermostat_damp_steps", "_set": 100}, {"param": "seed", "_unset": True},
          {"file": "in.lammps", "_insert_line": {"at": "start", "text": "neigh_modify every 1 delay 0"}}], []),
    ]
    for actions, named in cases:
        assert assessment.prescribed_changes(actions) == named, actions


def _drift(reason: str) -> gates.GateReport:
    return gates.GateReport([gates.GateResult("energy drift", gates.Outcome.FAIL, reason),
                             gates.GateResult("temperature", gates.Outcome.PASS)])


def test_a_prescribed_run_that_drifts_keeps_its_number_and_a_free_one_is_repaired(tmp_path, monkeypatch):
    from simagent import handlers

    monkeypatch.setattr(gates, "evaluate", lambda job_dir, job: _drift("wandered by 0.2 = 0.3 kT"))
    halve = handlers.Diagnosis(job="prod", errors=["drift"], handler="EnergyDrift", category="energy divergence",
                               actions=[{"param": "timestep", "_scale": 0.5}])
    monkeypatch.setattr(assessment, "diagnose", lambda *a, **k: halve)
    job = protocol_job()
    free = assessment.assess_finished(tmp_path, job, CorrectionLog(), param_only=True)  # ask: repaired, no number
    assert free.verdict == "repair" and free.diagnosis.actions == [{"param": "timestep", "_scale": 0.5}]
    kept = assessment.assess_finished(tmp_path, job, CorrectionLog(), extend=False, param_only=True, prescribed=True)
    assert kept.verdict == "pass" and kept.diagnosis is None and "0.3 kT" in kept.reasons[0]
    # a non-finite energy is no number to keep, and its repair would change the prescribed timestep
    monkeypatch.setattr(gates, "evaluate", lambda job_dir, job: _drift("non-finite total energy"))
    broken = assessment.assess_finished(tmp_path, job, CorrectionLog(), extend=False, param_only=True, prescribed=True)
    assert broken.verdict == "fail" and "not repaired: EnergyDrift would change the timestep" in broken.notes[0]


def test_a_prescribed_run_that_crashed_is_not_repaired_by_a_new_timestep(tmp_path, monkeypatch):
    from simagent import handlers

    lost = handlers.Diagnosis(job="prod", errors=["atoms were lost"], handler="LostAtoms", category="x",
                              actions=[{"param": "timestep", "_scale": 0.5}])
    monkeypatch.setattr(assessment, "diagnose", lambda *a, **k: lost)
    assert assessment.assess_failed(tmp_path, protocol_job(), CorrectionLog(), param_only=True).verdict == "repair"
    verdict = assessment.assess_failed(tmp_path, protocol_job(), CorrectionLog(), param_only=True, prescribed=True)
    assert verdict.verdict == "fail" and "would change the timestep" in verdict.notes[0]
