"""Handler library: the generic machinery (actions, modder, limits, log) and every engine handler
on its smallest recorded failing run (tests/files/<engine>/<case>/{inputs,outputs}, custodian
style: copy into a temp folder, check, correct, assert on the correction). Plus a few real LAMMPS
runs of the repair loop (seconds)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from simagent.backends.base import RepairAction
from simagent.engines import get_engine
from simagent.errors import InputError
from simagent.handlers import (
    CORRECTIONS_FILE,
    CorrectionLog,
    CorrectionRecord,
    ErrorHandler,
    apply_actions,
    apply_file_action,
    backend_diagnosis,
    diagnose,
    engine_handlers,
    input_diff,
    reapply_edit,
    repair_action_to_actions,
)
from simagent.models import Correction, Job

FILES = Path(__file__).parent / "files"


# ---------------------------------------------------------------------------------------------
# The action language and the input modder
# ---------------------------------------------------------------------------------------------

SCRIPT = """units lj
timestep 0.005
fix 1 all nve
run 100
"""


def job_with(text: str = SCRIPT, **params) -> Job:
    return Job(id="run", protocol="user/lammps", inputs={"in.lammps": text}, params=params)


def test_set_option_replaces_or_inserts_before_run():
    new, change = apply_file_action(SCRIPT, {"_set_option": {"key": "timestep", "value": "0.002"}}, "lammps")
    assert "timestep        0.002" in new and "0.005" not in new and "->" in change
    new, change = apply_file_action(SCRIPT, {"_set_option": {"key": "neigh_modify", "value": "every 1"}}, "lammps")
    lines = new.splitlines()
    assert lines.index("neigh_modify    every 1") == lines.index("run 100") - 1 and change.startswith("added")


def test_mdp_and_raspa_option_syntax():
    mdp = "integrator = md\ntau_t = 0.1 ; comment\n"
    new, _ = apply_file_action(mdp, {"_set_option": {"key": "tau-t", "value": "1.0"}}, "mdp")
    assert "tau-t" in new and "0.1" not in new  # tau_t and tau-t are the same mdp key
    raspa = "NumberOfCycles 100\nComponent 0 MoleculeName methane\n  SwapProbability 1.0\n"
    new, _ = apply_file_action(raspa, {"_set_option": {"key": "UnitCells", "value": "2 2 2"}}, "raspa")
    assert new.splitlines()[1].startswith("UnitCells") and new.splitlines()[2].startswith("Component")


def test_line_actions_and_after_qualifier():
    text = "units lj\nmass 1 1\nunits lj\n"
    new, _ = apply_file_action(text, {"_delete_line": {"match": r"^units lj$", "after": r"^mass"}}, "lammps")
    assert new == "units lj\nmass 1 1\n"
    new, _ = apply_file_action(text, {"_insert_line": {"before": r"^mass", "text": "region box"}}, "lammps")
    assert new.splitlines()[1] == "region box"
    new, _ = apply_file_action(text, {"_substitute": {"match": "^mass", "old": r"1 1", "new": "1 2.0"}}, "lammps")
    assert "mass 1 2.0" in new
    with pytest.raises(InputError):
        apply_file_action(text, {"_replace_line": {"match": "^nothing", "text": "x"}}, "lammps")


def test_param_actions_and_modder_scope():
    job = job_with(timestep=0.01, production_steps=100)
    actions = [{"param": "timestep", "_scale": 0.5}, {"param": "production_steps", "_scale": 2}]
    new, changes = apply_actions(job, actions)
    assert new.params == {"timestep": 0.005, "production_steps": 200} and changes[1] == "production_steps: 100 -> 200"
    with pytest.raises(InputError):
        apply_actions(job, [{"file": "../in.lammps", "_delete_file": True}])
    with pytest.raises(InputError):
        apply_actions(job, [{"file": "x.eam", "_copy_from": "/etc/passwd"}])
    new, changes = apply_actions(job, [{"file": "x.eam", "_copy_from": "user:x.eam"}], resolver=lambda s: "data")
    assert new.inputs["x.eam"] == "data" and "user:x.eam" in changes[0]
    assert "+timestep        0.001" in input_diff(job, apply_actions(job, [
        {"file": "in.lammps", "_set_option": {"key": "timestep", "value": "0.001"}}])[0])


def test_correction_log_limits_and_file(tmp_path):
    class Once(ErrorHandler):
        max_num_corrections = 1

        def check(self, job_dir, job):
            return True

        def correct(self, job_dir, job):
            return {"errors": ["x"], "actions": []}

    log = CorrectionLog(max_per_job=2, max_total=3)
    assert log.allows("a", Once()) is None
    log.add(CorrectionRecord("a", "Once", "c", ["e"], [], ["change"], 1))
    assert "already corrected" in log.allows("a", Once())
    log.add(CorrectionRecord("a", "Other", "c", ["e"], [], ["change"], 2))
    assert "for job a" in log.allows("a")
    log.add(CorrectionRecord("b", "Other", "c", ["e"], [], ["change"], 1))
    assert "per run" in log.allows("c")
    log.write(tmp_path, "a")
    saved = json.loads((tmp_path / CORRECTIONS_FILE).read_text())
    assert [r["handler"] for r in saved] == ["Once", "Other"] and CorrectionLog.read(tmp_path)[0].changes == ["change"]
    rebuilt = CorrectionLog.from_corrections([Correction(job="a", handler="Once", action="x", reason="y"),
                                              Correction(job="a", handler="reviewer", action="x", reason="y")])
    assert rebuilt.count("a") == 1


def test_backend_answers_use_the_same_action_language():
    job = job_with()
    assert repair_action_to_actions(RepairAction(action="scale", parameter="timestep", value="0.5"), job) == \
        [{"param": "timestep", "_scale": 0.5}]
    actions = repair_action_to_actions(RepairAction(action="replace_line", parameter="fix 1 all nve",
                                                    value="fix 1 all nvt temp 1 1 0.5"), job)
    new, _ = apply_actions(job, actions)
    assert "fix 1 all nvt temp 1 1 0.5" in new.inputs["in.lammps"]
    assert repair_action_to_actions(RepairAction(action="give_up"), job) == []


def test_line_actions_from_a_backend_match_the_line_whatever_its_spacing():
    job = job_with("units lj\nfix             1 all  nve   \nrun 100\n")
    actions = repair_action_to_actions(RepairAction(action="delete_line", parameter=" fix 1 all nve", value=""), job)
    new, changes = apply_actions(job, actions)
    assert new.inputs["in.lammps"] == "units lj\nrun 100\n" and changes[0].startswith("in.lammps: removed")
    assert repair_action_to_actions(RepairAction(action="replace_line", parameter="  ", value="x"), job) == []


class ScriptedBackend:
    """A decision backend that answers every repair with one RepairAction."""

    def __init__(self, name: str, answer: RepairAction) -> None:
        self.name, self.answer, self.asked = name, answer, []

    def repair(self, diagnosis, protocol, current, schema):
        self.asked.append(diagnosis)
        return self.answer


def test_backend_repair_review_flag_and_line_actions_by_job_kind(tmp_path):
    scale = RepairAction(action="scale", parameter="timestep", value="0.5")
    protocol_job = Job(id="p", protocol="lammps/fluid_md", inputs={"in.lammps": SCRIPT}, params={"timestep": 0.005})
    for name, review in (("expert", False), ("hybrid(expert)", False), ("openai", True), ("hybrid(local)", True)):
        found = backend_diagnosis(ScriptedBackend(name, scale), protocol_job, "blew up", "lammps/fluid_md",
                                  {"timestep": 0.005}, {}, CorrectionLog())
        assert found.fixable and found.needs_review is review and found.handler == f"{name} repair"
    # a line action is for free-form inputs only: a protocol job is repaired through its parameters
    edit = RepairAction(action="replace_line", parameter="timestep 0.005", value="timestep 0.001")
    found = backend_diagnosis(ScriptedBackend("openai", edit), protocol_job, "blew up", "lammps/fluid_md",
                              {"timestep": 0.005}, {}, CorrectionLog())
    assert not found.fixable and "through their parameters" in found.errors[-1]
    # a user's job: the backend sees the files (and the output tail), and its line action is applied
    (tmp_path / "stdout.txt").write_text("step 10\nERROR: Out of range atoms - cannot compute PPPM\n")
    backend = ScriptedBackend("openai", edit)
    found = backend_diagnosis(backend, job_with(), "engine exited with code 1", "user/lammps", {}, {},
                              CorrectionLog(), job_dir=tmp_path)
    assert found.fixable and found.needs_review
    assert "--- file: in.lammps ---\nunits lj" in backend.asked[0] and "Out of range atoms" in backend.asked[0]
    assert "timestep 0.001" in apply_actions(job_with(), found.actions)[0].inputs["in.lammps"]
    # ... unless it quotes a line that is not there
    absent = RepairAction(action="delete_line", parameter="fix 2 all langevin 1 1 1 1", value="")
    found = backend_diagnosis(ScriptedBackend("openai", absent), job_with(), "x", "user/lammps", {}, {},
                              CorrectionLog())
    assert not found.fixable and "does not apply" in found.errors[-1]
    # the expert's keyword rules see the diagnosis alone, not the screen output
    expert = ScriptedBackend("expert", scale)
    backend_diagnosis(expert, protocol_job, "engine exited with code 1", "lammps/fluid_md", {"timestep": 0.005},
                      {}, CorrectionLog(), job_dir=tmp_path)
    assert expert.asked == ["engine exited with code 1"]


def test_repair_prompt_describes_the_line_actions():
    from simagent.backends.prompts import REPAIR

    for action in ("set", "scale", "replace_line", "delete_line", "insert_line", "give_up"):
        assert f'"{action}"' in REPAIR
    assert "user/<engine>" in REPAIR and "exactly" in REPAIR


RENDERED = "units metal\nthermo 50\nfix 1 all box/relax iso 0.0 vmax 0.001\nminimize 0 1e-10 1000 10000\nrun 0\n"


def test_reviewer_edit_is_merged_into_a_new_rendering():
    edited = RENDERED.replace("thermo 50\n", "thermo 50\nthermo_modify norm no\n").replace("run 0\n", "")
    fresh = RENDERED.replace("vmax 0.001", "vmax 0.0005")
    merged = reapply_edit(RENDERED, edited, fresh)
    assert merged == edited.replace("vmax 0.001", "vmax 0.0005")
    assert reapply_edit(RENDERED, edited, RENDERED) == edited  # nothing re-rendered differently
    assert reapply_edit(RENDERED, RENDERED, fresh) == fresh  # no edit
    assert reapply_edit(RENDERED, fresh, fresh) == fresh  # the repair did what the reviewer did
    # an edit of the last line of a file without a final newline
    assert reapply_edit("a\nb", "a\nB", "x\nb") == "x\nB"


@pytest.mark.parametrize("edited", [
    RENDERED.replace("vmax 0.001", "vmax 0.002"),  # the same line
    RENDERED.replace("fix 1 all box/relax iso 0.0 vmax 0.001\nminimize 0 1e-10 1000 10000\n", "min_style fire\n"),
])
def test_reviewer_edit_that_overlaps_the_new_rendering_is_refused(edited):
    fresh = RENDERED.replace("vmax 0.001", "vmax 0.0005")
    with pytest.raises(InputError, match=r"both change line"):
        reapply_edit(RENDERED, edited, fresh)


def test_insertions_at_the_same_place_are_a_conflict():
    with pytest.raises(InputError, match="line 2"):
        reapply_edit("a\nb\n", "a\nmine\nb\n", "a\ntheirs\nb\n")
    assert reapply_edit("a\nb\n", "a\nsame\nb\n", "a\nsame\nb\n") == "a\nsame\nb\n"


def test_every_engine_has_a_handler_library():
    for engine in ("lammps", "gromacs", "raspa", "zeopp"):
        handlers = engine_handlers(engine)
        assert handlers and all(h.category for h in handlers), engine
        assert all(isinstance(h.max_num_corrections, int) for h in handlers)


# ---------------------------------------------------------------------------------------------
# LAMMPS handlers on recorded runs
# ---------------------------------------------------------------------------------------------


def recorded(engine_dir: str, case: str, tmp_path: Path):
    """(job, job folder) for a recorded case: inputs loaded like a user's file, outputs copied."""
    src = FILES / engine_dir / case
    inputs = tmp_path / "inputs"
    shutil.copytree(src / "inputs", inputs)
    job_dir = tmp_path / "job"
    if (src / "outputs").is_dir():
        shutil.copytree(src / "outputs", job_dir)
    else:
        job_dir.mkdir()
    engine = engine_dir.split("/")[-1]
    if engine == "lammps":
        from tools.lammps.handlers import load_user_job

        job, _ = load_user_job(inputs / "in.lammps")
    elif engine == "gromacs":
        from tools.gromacs.handlers import load_user_job

        job, _ = load_user_job(inputs / "md.mdp")
    else:
        from tools.raspa.handlers import load_user_job

        job, _ = load_user_job(inputs / "simulation.input")
    return job, job_dir


def resolver_for(tmp_path: Path):
    return lambda source: (tmp_path / "inputs" / source.split(":", 1)[1]).read_text()


# case, handler expected from diagnose(), text expected in the corrected inputs, run succeeded
LAMMPS_CASES = [
    ("unknown-command", "UnknownCommand", "\nthermo         50", False),
    ("unknown-style", "UnknownStyle", "all nve", False),
    ("velocity-no-seed", "IllegalArguments", "velocity all create 1.5 4928459", False),
    ("undefined-variable", "UndefinedId", "${nsteps}", False),
    ("potential-file-missing", "PotentialFileMissing", "Cu_", False),
    ("potential-elements", "PotentialElements", "Cu_mishin1.eam.alloy Cu", False),
    ("kspace-missing", "KspaceMissing", "kspace_style    pppm 1.0e-5", False),
    ("data-section", "DataFileSection", "Atoms # atomic", False),
    ("data-count", "DataFileCount", "216 atoms", False),
    ("data-file-name", "InputFileMissing", "read_data       lj.data", False),
    ("compute-id", "UndefinedId", "c_myT ", False),
    ("double-integration", "DoubleIntegration", "fix             2 all nvt", False),
    ("thermo-keyword", "ThermoKeyword", "custom step temp pe", False),
    ("units-timestep", "TimestepTooLarge", "timestep        0.002", False),
    ("region-id", "UndefinedId", "create_atoms    1 region box", False),
    ("lost-atoms", "TimestepTooLarge", "timestep        0.005", False),
    ("overlapping-start", "OverlappingStart", "minimize", False),
    ("pppm-out-of-range", "TimestepTooLarge", "timestep", False),
    ("neighbor-overflow", "NeighborOverflow", "one 10000 page 100000", False),
    ("dangerous-builds", "DangerousBuilds", "every 1 delay 0 check yes", True),
    ("energy-drift", "EnergyDrift", "timestep        0.01", True),
    ("mass-before-box", "ScriptOrder", "create_atoms    1 box\nmass            1 1.0", False),
    ("units-after-box", "ScriptOrder", None, False),
    ("fixed-boundary", "FixedBoundaryLoss", "boundary        s s s", False),
    ("npt-nonperiodic", "NonPeriodicBarostat", "boundary        p p p", False),
    ("thermostat-damping", "ThermostatDamping", "temp 1.5 1.5 0.5", False),
    ("thermostat-args", "IllegalArguments", "temp 1.5 1.5 0.5", False),
    ("bond-atoms-missing", "TimestepTooLarge", "timestep        0.005", False),
]


@pytest.mark.parametrize(("case", "handler", "expected", "succeeded"), LAMMPS_CASES, ids=[c[0] for c in LAMMPS_CASES])
def test_lammps_handler_on_recorded_run(case, handler, expected, succeeded, tmp_path):
    job, job_dir = recorded("lammps", case, tmp_path)
    found = diagnose(job_dir, job, CorrectionLog(), succeeded=succeeded)
    assert found is not None and found.handler == handler, found
    assert found.fixable and found.category and found.errors
    new, changes = apply_actions(job, found.actions, resolver_for(tmp_path))
    assert changes
    text = "\n".join(new.inputs.values())
    if expected:
        assert expected in text, text
    if case == "units-after-box":
        assert sum(line.startswith("units") for line in new.inputs["in.lammps"].splitlines()) == 1


@pytest.mark.parametrize(("case", "handler_name"), [
    ("lost-atoms", "LostAtoms"), ("pppm-grid", "PPPMOutOfRange"), ("bond-atoms-missing", "BondAtomsMissing"),
])
def test_lammps_symptom_fallbacks_halve_the_timestep(case, handler_name, tmp_path):
    """Without a root cause the generic handlers halve the timestep (protocol jobs: a parameter)."""
    from tools.lammps import handlers

    job, job_dir = recorded("lammps", case, tmp_path)
    handler = getattr(handlers, handler_name)()
    assert handler.check(job_dir, job)
    result = handler.correct(job_dir, job)
    assert result["actions"][0]["_set_option"]["key"] == "timestep"
    protocol_job = job.model_copy(update={"protocol": "lammps/fluid_md", "params": {"timestep": 0.05}})
    assert handler.correct(job_dir, protocol_job)["actions"][0] == {"param": "timestep", "_scale": 0.5}


def test_a_timestep_diagnosis_after_a_crash_says_the_run_was_tried(tmp_path):
    """Before a run the bound alone is named; after a run that lost atoms the diagnosis also says what
    that run did (its error and the last step it printed), so a refusal to change a prescribed timestep
    never reads as if nothing was run."""
    from simagent.engines import NO_OUTPUT
    from tools.lammps.handlers import TimestepTooLarge

    job, job_dir = recorded("lammps", "lost-atoms", tmp_path)
    log = (job_dir / "log.lammps").read_text().splitlines()
    error = next(line for line in log if line.startswith("ERROR:")).removeprefix("ERROR:").strip()
    rows = [line.split() for line in log[:log.index(next(x for x in log if x.startswith("ERROR:")))]]
    last_step = next(r[0] for r in reversed(rows) if r and r[0].isdigit())
    found = diagnose(job_dir, job, CorrectionLog())
    assert found.handler == "TimestepTooLarge"
    assert "the run was tried with it and stopped" in found.summary()
    assert f"after step {last_step}: {error}" in found.summary()

    before = TimestepTooLarge()
    assert before.check(NO_OUTPUT, job)
    (message,) = before.correct(NO_OUTPUT, job)["errors"]
    assert message.startswith("timestep 0.05 exceeds") and "tried" not in message


def test_lammps_unfixable_failure_is_recognised_not_fixed(tmp_path):
    job, job_dir = recorded("lammps", "pair-coeffs-missing", tmp_path)
    found = diagnose(job_dir, job, CorrectionLog())
    assert found.handler == "PairCoeffsMissing" and not found.fixable
    assert "atom type(s) 2" in found.summary()


def test_lammps_handlers_quiet_on_a_good_run(tmp_path):
    job, job_dir = recorded("lammps", "good-nve", tmp_path)
    assert diagnose(job_dir, job, CorrectionLog(), succeeded=True) is None


def test_handler_limit_blocks_a_second_identical_correction(tmp_path):
    job, job_dir = recorded("lammps", "neighbor-overflow", tmp_path)
    log = CorrectionLog()
    first = diagnose(job_dir, job, log)
    log.add(CorrectionRecord(job.id, first.handler, first.category, first.errors, first.actions, ["x"], 1))
    log.add(CorrectionRecord(job.id, first.handler, first.category, first.errors, first.actions, ["x"], 2))
    second = diagnose(job_dir, job, log)
    assert second.handler == "NeighborOverflow" and not second.fixable and "already corrected" in second.blocked


def test_lammps_static_handlers_before_a_run():
    precheck_findings = get_engine("lammps").precheck_findings

    salt_cut = (FILES / "lammps" / "charges-without-kspace" / "inputs" / "in.lammps").read_text()
    findings = precheck_findings(job_with(salt_cut), dry_run=False)
    assert any(f.handler == "ChargesWithoutKspace" and f.actions for f in findings)
    real_tiny = SCRIPT.replace("units lj", "units real\nmass 1 12.0").replace("0.005", "0.001")
    findings = precheck_findings(job_with(real_tiny), dry_run=False)
    assert any(f.handler == "TimestepTooSmall" and f.category == "units" for f in findings)


def test_zeopp_radius_handler_strips_oxidation_states(tmp_path):
    from tools.zeopp.handlers import RadiusTableFailure

    cif = "loop_\n_atom_site_label\n_atom_site_type_symbol\n_atom_site_fract_x\nCu1 Cu2+ 0.1\nO1 O2- 0.2\n"
    job = Job(id="z", protocol="zeopp/pore_geometry", engine="zeopp", inputs={"mof.cif": cif})
    (tmp_path / "stderr.txt").write_text("Unable to find radius for Cu2+\n")
    handler = RadiusTableFailure()
    assert handler.check(tmp_path, job)
    new, _ = apply_actions(job, handler.correct(tmp_path, job)["actions"])
    assert "Cu1 Cu 0.1" in new.inputs["mof.cif"] and "O1 O 0.2" in new.inputs["mof.cif"]


# ---------------------------------------------------------------------------------------------
# GROMACS and RASPA handlers on recorded runs (no engine needed)
# ---------------------------------------------------------------------------------------------

GROMACS_CASES = [
    ("G01-mdp-typo", "UnknownMdpOption", "tau-t"),
    ("G02-mdp-enum", "InvalidMdpValue", "integrator              = md"),
    ("G03-mttk-constraints", "BarostatIncompatible", "C-rescale"),
    ("G04-pr-equilibration", "BarostatIncompatible", "C-rescale"),
    ("G05-include-missing", "IncludeNotFound", '"oplsaa.ff/spce.itp"'),
    ("G06-index-group", "GroupNotFound", "tc-grps                 = System"),
    ("G07-atom-count", "CoordinateTopologyMismatch", "SOL             221"),
    ("G08-posres-missing", "IncludeNotFound", None),
    ("G09-lincs", "TimestepTooLarge", "dt                      = 0.0005"),
    ("G10-blow-up", "TimestepTooLarge", "dt                      = 0.002"),
    ("G11-box-cutoff", "CutoffLongerThanHalfBox", "rvdw                    = 0.9"),
    ("G12-pme-order", "PmeOrder", "pme-order               = 4"),
]


@pytest.mark.parametrize(("case", "handler", "expected"), GROMACS_CASES, ids=[c[0] for c in GROMACS_CASES])
def test_gromacs_handler_on_recorded_run(case, handler, expected, tmp_path):
    job, job_dir = recorded("faults/gromacs", case, tmp_path)
    found = diagnose(job_dir, job, CorrectionLog())
    assert found is not None and found.handler == handler and found.fixable, found
    new, _ = apply_actions(job, found.actions)
    if expected:
        assert expected in "\n".join(new.inputs.values())
    if case == "G08-posres-missing":
        assert found.category == "position restraint" and "POSRES" not in new.inputs["md.mdp"]


def test_gromacs_missing_parameters_recognised(tmp_path):
    job, job_dir = recorded("faults/gromacs", "G13-atomtype", tmp_path)
    found = diagnose(job_dir, job, CorrectionLog())
    assert found.handler == "AtomtypeNotFound" and found.category == "missing force-field parameters"
    assert not found.fixable


def _mdp_set(job: Job, key: str, value: str) -> Job:
    lines = [line for line in job.inputs["md.mdp"].splitlines() if line.split("=")[0].strip() != key]
    return job.model_copy(update={"inputs": {**job.inputs, "md.mdp": "\n".join([*lines, f"{key} = {value}"]) + "\n"}})


@pytest.mark.parametrize(("key", "value", "handler"), [("dt", "0.003", "TimestepTooLarge"),
                                                       ("gen-temp", "1000", "GenTemperature")])
def test_gromacs_timestep_and_gen_temp_blamed_only_after_an_unstable_run(key, value, handler, tmp_path):
    """dt = 3 fs with h-bond constraints is beyond TimestepTooLarge's 2.5 fs bound; velocities drawn at
    1000 K for a run coupled at 300 K are what GenTemperature looks for. After a run they are the cause
    only when the run went unstable: the recorded blow-up (G10), not a grompp failure for another
    reason (G13, an atom type the force field lacks: not fixable, so a later fixable handler would
    win) nor a run that finished. (A bare 'inf' in the instability pattern used to match the
    "For more information" footer and md.log's "epsilon-rf = inf", so both were blamed on dt.)"""
    from tools.gromacs.handlers import GenTemperature, TimestepTooLarge

    check = {"TimestepTooLarge": TimestepTooLarge, "GenTemperature": GenTemperature}[handler]
    job, job_dir = recorded("faults/gromacs", "G10-blow-up", tmp_path / "g10")
    assert check().check(job_dir, _mdp_set(job, key, value))
    job, job_dir = recorded("faults/gromacs", "G13-atomtype", tmp_path / "g13")
    job = _mdp_set(job, key, value)
    assert not check().check(job_dir, job)
    found = diagnose(job_dir, job, CorrectionLog())
    assert found.handler == "AtomtypeNotFound" and not found.fixable
    job, job_dir = recorded("gromacs", "finished_run", tmp_path / "done")
    assert not check().check(job_dir, _mdp_set(job, key, value))


# GROMACS 2022's fatal error when the energy stops being finite (src/gromacs/mdlib/sim_util.cpp,
# checkPotentialEnergyValidity), as mdrun prints it.
NON_FINITE_FATAL = """
Fatal error:
Step 25: The total potential energy is inf, which is not finite. The LJ and
electrostatic contributions to the energy are inf and -10224.4, respectively. A
non-finite potential energy can be caused by overlapping interactions in bonded
interactions or very large or Nan coordinate values. Usually this is caused by
a badly- or non-equilibrated initial configuration, incorrect interactions or
parameters in the topology.

For more information and tips for troubleshooting, please check the GROMACS
website at http://www.gromacs.org/Documentation/Errors
"""


def test_gromacs_non_finite_energy_halves_the_timestep(tmp_path):
    """mdrun stopping on an infinite energy is a blow-up: dt is halved (the pattern used to know only
    'potential energy is nan'). The run is the recorded finished one with that error appended."""
    job, job_dir = recorded("gromacs", "finished_run", tmp_path)
    with open(job_dir / "stderr.txt", "a") as screen:
        screen.write(NON_FINITE_FATAL)
    found = diagnose(job_dir, job, CorrectionLog())
    assert found.handler == "ConstraintFailure" and found.category == "energy blow-up" and found.fixable
    new, _ = apply_actions(job, found.actions)
    assert re.search(r"^dt\s*=\s*0\.001$", new.inputs["md.mdp"], re.MULTILINE)  # from 0.002


RASPA_CASES = [
    ("R01-molecule-missing", "MoleculeDefinitionMissing", "MoleculeName             methane"),
    ("R02-pseudo-atom", "PseudoAtomMissing", "GenericMOFs"),
    ("R03-framework-missing", "FrameworkMissing", "FrameworkName   IRMOF-1"),
    ("R05-no-swap", "NoInsertionMoves", "SwapProbability          1.0"),
]


@pytest.mark.parametrize(("case", "handler", "expected"), RASPA_CASES, ids=[c[0] for c in RASPA_CASES])
def test_raspa_handler_on_recorded_run(case, handler, expected, tmp_path):
    pytest.importorskip("RASPA2")  # the library's molecule and force-field lists
    job, job_dir = recorded("faults/raspa", case, tmp_path)
    found = diagnose(job_dir, job, CorrectionLog(), succeeded=True)  # RASPA2 exits with 0 on errors
    assert found is not None and found.handler == handler and found.fixable, found
    new, _ = apply_actions(job, found.actions)
    assert expected in new.inputs["simulation.input"]


def test_raspa_unit_cell_check_before_the_run(tmp_path):
    pytest.importorskip("RASPA2")
    precheck_findings = get_engine("raspa").precheck_findings

    job, _ = recorded("faults/raspa", "R04-unit-cell", tmp_path)
    finding = next(f for f in precheck_findings(job) if f.handler == "UnitCellTooSmall")
    new, _ = apply_actions(job, finding.actions)
    assert "UnitCells       2 2 2" in new.inputs["simulation.input"]


# ---------------------------------------------------------------------------------------------
# The repair loop on real LAMMPS runs (seconds)
# ---------------------------------------------------------------------------------------------


@pytest.mark.engine
@pytest.mark.parametrize(("case", "handlers"), [
    ("unknown-command", ["UnknownCommand"]),
    ("lost-atoms", ["TimestepTooLarge"]),
    ("data-file-name", ["InputFileMissing"]),
])
def test_repair_loop_runs_to_a_gated_success(case, handlers, tmp_path):
    from simagent.usercli import run_file

    src = FILES / "lammps" / case / "inputs"
    shutil.copytree(src, tmp_path / "input")
    report = run_file(tmp_path / "input" / "in.lammps", "lammps", tmp_path / "run", yes=True, time_limit_s=120)
    assert report.status == "succeeded", report.message
    assert [c["handler"] for c in report.corrections] == handlers
    job_dir = Path(report.job_dir)
    saved = json.loads((job_dir / CORRECTIONS_FILE).read_text())
    assert [r["handler"] for r in saved] == handlers
    if report.attempts > 1:
        assert (job_dir.parent / "run.failed1" / CORRECTIONS_FILE).is_file()
