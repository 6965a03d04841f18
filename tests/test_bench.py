"""Benchmark harness (simagent.bench): validators, budget, resume, failure taxonomy, outputs, CLI.

Agents here are tiny Python scripts run through the `command` agent, so every test exercises the
real subprocess path; one test runs simagent itself on a two-second LAMMPS task (engine)."""

from __future__ import annotations

import csv
import json
import shlex
import sys
import time
from pathlib import Path

import pytest

from simagent.bench import orchestrator as orch_module
from simagent.bench.agents import CommandAgent, SimagentAgent, make_agent
from simagent.bench.orchestrator import Orchestrator, build_prompt, run_session
from simagent.bench.tasks import BenchInputError, collect_tasks, load_bench_task
from simagent.bench.trajectory import read_trajectory
from simagent.bench.validate import validator_for

REPO = Path(__file__).resolve().parents[1]
SUITE = REPO / "benchmarks" / "tasks"

REAL_ENGINE_VERSIONS = orch_module.engine_versions  # before the autouse fixture replaces it
LAMMPS_LOG_OK = "LAMMPS (22 Jul 2025)\nStep Temp\n0 1.0\nLoop time of 0.1\nTotal wall time: 0:00:01\n"


@pytest.fixture(autouse=True)
def no_engine_version_probe(monkeypatch):
    """Engine versions need the engines (seconds each); the test that checks them restores the probe."""
    monkeypatch.setattr(orch_module, "engine_versions", lambda engines: {e: "test" for e in sorted(engines)})


def write_task(folder: Path, task_id: str = "t1", ground_truth=None, metrics=None, **extra) -> Path:
    metrics = metrics or ["alpha", "Beta Value"]
    data = {"id": task_id, "problem_description": "Compute alpha and beta.", "level": "1", "metrics": metrics,
            "ground_truth": {"alpha": 1.0, "Beta Value": -2.0} if ground_truth is None else ground_truth,
            "time_limit": 10, "engine": "lammps", **extra}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{task_id}.json"
    path.write_text(json.dumps(data))
    return path


def script_agent(tmp_path: Path, body: str, name: str = "agent.py") -> CommandAgent:
    """A command agent running `body` as a Python script; `workdir` (a Path) is defined for it."""
    script = tmp_path / name
    script.write_text("import json, os, sys, time\nfrom pathlib import Path\nworkdir = Path(sys.argv[1])\n" + body)
    return CommandAgent(f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {{workdir}}")


def log_body(log: str, folder: str = "run1") -> str:
    """Script lines that leave a LAMMPS log in workdir/folder."""
    return f"(workdir / {folder!r}).mkdir()\n(workdir / {folder!r} / 'log.lammps').write_text({log!r})\n"


def answer_body(answer: dict, log: str | None = None) -> str:
    """Script lines that (optionally leave a LAMMPS log and) write final_answer.json."""
    head = log_body(log) if log is not None else ""
    return head + f"(workdir / 'final_answer.json').write_text(json.dumps({answer!r}))\n"


def run_one(tmp_path: Path, agent, task_path: Path, **kwargs):
    outcomes = Orchestrator(agent, tmp_path / "out", **kwargs).run(collect_tasks([task_path]))
    assert len(outcomes) == 1
    return outcomes[0]


def categories(outcome) -> list[str]:
    return [f["category"] for f in outcome.findings]


# ---------------------------------------------------------------------------------------------
# Task files
# ---------------------------------------------------------------------------------------------


def test_suite_is_valid_and_cites_every_ground_truth():
    tasks = collect_tasks([SUITE])
    assert len(tasks) >= 20
    assert {t.engine for t in tasks} == {"lammps", "gromacs", "zeopp", "raspa"}
    for task in tasks:
        assert task.reference and task.reference.get("citation"), task.id
        assert set(task.ground_truth) <= set(task.metrics), task.id
    assert any(not t.scored for t in tasks)  # an unscored task is part of the suite


@pytest.mark.parametrize("content, fragment", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "one JSON object"),
    (json.dumps({"id": "x", "problem_description": "d", "metrics": ["a"], "time_limit": 5, "engine": "cp2k"}),
     "'cp2k'"),
    (json.dumps({"id": "x", "problem_description": "d", "metrics": ["a"], "time_limit": 5, "engine": "lammps",
                 "ground_truth": {"b": 1.0}}), "not one of the task's metrics"),
    (json.dumps({"id": "x", "problem_description": "d", "metrics": ["a"], "time_limit": 5, "engine": "lammps",
                 "ground_truth": {"a": "1.0 eV"}}), "finite number"),
    (json.dumps({"id": "x", "problem_description": "d", "metrics": ["a"], "time_limit": 5, "engine": "lammps",
                 "tolerance": 5}), "between 0 and 1"),
])
def test_malformed_task_files_are_named(tmp_path, content, fragment):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(BenchInputError) as err:
        load_bench_task(path)
    assert fragment in str(err.value) and str(path) in str(err.value)


def test_duplicate_ids_and_missing_paths(tmp_path):
    write_task(tmp_path / "a")
    write_task(tmp_path / "b")
    with pytest.raises(BenchInputError, match="used by both"):
        collect_tasks([tmp_path / "a", tmp_path / "b"])
    with pytest.raises(BenchInputError, match="does not exist"):
        collect_tasks([tmp_path / "nope.json"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(BenchInputError, match="holds no task files"):
        collect_tasks([tmp_path / "empty"])


def test_prompt_names_metrics_files_and_answer_rules(tmp_path):
    task = load_bench_task(write_task(tmp_path))
    prompt = build_prompt(task, tmp_path / "w", [tmp_path / "data" / "Ni_u3.eam"])
    assert "`alpha`" in prompt and "`Beta Value`" in prompt and "Ni_u3.eam" in prompt
    assert str(tmp_path / "w" / "final_answer.json") in prompt and "unitless" in prompt
    assert "310 s" in prompt  # the published harness: 300 s + time_limit (10 s)
    assert "-2.0" not in prompt  # never the ground truth
    public = task.public_task()
    assert "ground_truth" not in public and public["metrics"] == ["alpha", "Beta Value"]


def test_supplied_files_come_from_the_data_root(tmp_path):
    root = tmp_path / "data"
    (root / "LAMMPS" / "potentials" / "t1").mkdir(parents=True)
    (root / "LAMMPS" / "potentials" / "t1" / "Ni_u3.eam").write_text("x")
    (root / "GROMACS" / "structures" / "t1").mkdir(parents=True)
    (root / "GROMACS" / "structures" / "t1" / "conf.gro").write_text("x")  # another engine's folder
    agent = script_agent(tmp_path, "pass\n")
    outcome = run_one(tmp_path, agent, write_task(tmp_path / "tasks"), data_root=root)
    prompt = (outcome.folder / "workdir" / "prompt.md").read_text()
    assert str(root / "LAMMPS" / "potentials" / "t1" / "Ni_u3.eam") in prompt and "conf.gro" not in prompt


# ---------------------------------------------------------------------------------------------
# Validators
# ---------------------------------------------------------------------------------------------


def test_relative_tolerance_partial_credit_and_key_hint(tmp_path):
    task = load_bench_task(write_task(tmp_path))
    validator = validator_for("lammps")
    assert validator.tolerance == 0.05 and type(validator).__name__ == "LammpsValidator"
    inside = validator.validate(task, {"alpha": 1.049, "Beta Value": -2.09})
    assert inside.score == 1.0 and inside.success is True
    outside = validator.validate(task, {"alpha": 1.051, "Beta Value": -2.0})
    assert outside.score == 0.5 and outside.success is False
    assert outside.checks[0].passed is False and outside.checks[0].relative_error == pytest.approx(0.051)
    spelled = validator.validate(task, {"alpha": 1.0, "beta_value": -2.0})
    assert spelled.score == 0.5 and spelled.extra_keys == ["beta_value"]
    assert "'Beta Value'" in spelled.key_hints[0] and "exactly" in spelled.key_hints[0]
    wrong_type = validator.validate(task, {"alpha": "1.0", "Beta Value": float("nan")})
    assert wrong_type.score == 0.0 and "not a number" in wrong_type.checks[0].note
    assert "not finite" in wrong_type.checks[1].note
    assert validator.validate(task, None).score == 0.0


def test_tolerances_from_the_task_and_the_command_line(tmp_path):
    per_metric = load_bench_task(write_task(tmp_path / "a", tolerance={"alpha": 0.2}))
    result = validator_for("lammps").validate(per_metric, {"alpha": 1.15, "Beta Value": -2.15})
    assert [c.passed for c in result.checks] == [True, False]
    loose = validator_for("gromacs", tolerance=0.1).validate(per_metric, {"alpha": 1.15, "Beta Value": -2.15})
    assert [c.passed for c in loose.checks] == [True, True]
    zero = load_bench_task(write_task(tmp_path / "b", ground_truth={"alpha": 0.0}, metrics=["alpha"]))
    assert validator_for("zeopp").validate(zero, {"alpha": 0.04}).success is True
    assert validator_for("zeopp").validate(zero, {"alpha": 0.06}).success is False


def test_task_without_ground_truth_is_unscored(tmp_path):
    task = load_bench_task(write_task(tmp_path, ground_truth={}))
    result = validator_for("raspa").validate(task, {"alpha": 3.0})
    assert result.score is None and result.success is None
    assert result.checks[0].value == 3.0 and result.checks[0].passed is None


# ---------------------------------------------------------------------------------------------
# Orchestrator: outputs, budget, resume
# ---------------------------------------------------------------------------------------------


def test_session_outputs(tmp_path):
    tasks = tmp_path / "tasks"
    write_task(tasks, "good")
    write_task(tasks, "free", ground_truth={})
    agent = script_agent(tmp_path, answer_body({"alpha": 1.0, "Beta Value": -2.0}, log=LAMMPS_LOG_OK))
    outcomes = Orchestrator(agent, tmp_path / "out").run(collect_tasks([tasks]))
    out = tmp_path / "out"
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert [r["id"] for r in rows] == ["free", "good"]
    for column in ("id", "engine", "level", "score", "success", "wall_s", "failure_categories"):
        assert column in rows[0]
    assert rows[1]["score"] == "1.0" and rows[1]["success"] == "true" and rows[1]["failure_categories"] == ""
    assert rows[0]["score"] == "" and rows[0]["scored"] == "false"
    summary = (out / "summary.md").read_text()
    assert "## By engine" in summary and "| lammps | 2 | 1 | 1.00 | 1/1 |" in summary
    assert "## By level" in summary and "score_by_level.png" in summary
    assert (out / "score_by_level.png").read_bytes()[:4] == b"\x89PNG"
    task_dir = out / "tasks" / "good"
    assert json.loads((task_dir / "final_answer.json").read_text()) == {"alpha": 1.0, "Beta Value": -2.0}
    saved = json.loads((task_dir / "validation.json").read_text())
    assert saved["score"] == 1.0 and saved["budget_s"] == 310.0
    kinds = [r["kind"] for r in read_trajectory(task_dir / "trajectory_log.jsonl")]
    assert kinds[0] == "task_start" and kinds[-1] == "task_end"
    assert {"prompt", "agent_start", "tool_call", "engine_run", "agent_end", "answer", "validation"} <= set(kinds)
    engine_run = next(r for r in read_trajectory(task_dir / "trajectory_log.jsonl") if r["kind"] == "engine_run")
    assert engine_run["succeeded"] is True and engine_run["engine"] == "lammps" and engine_run["folder"] == "run1"
    assert json.loads((out / "session.json").read_text())["engine_versions"] == {"lammps": "test"}
    assert [o.task.id for o in outcomes] == ["free", "good"]


def test_budget_stops_a_slow_agent(tmp_path):
    task = write_task(tmp_path / "tasks")
    agent = script_agent(tmp_path, "time.sleep(60)\n(workdir / 'final_answer.json').write_text('{}')\n")
    started = time.monotonic()
    outcome = run_one(tmp_path, agent, task, budget_for=lambda t: 1.5)
    assert time.monotonic() - started < 20
    assert outcome.agent_run["timed_out"] is True and outcome.score == 0.0
    assert categories(outcome) == ["premature_termination"]
    assert "budget" in outcome.findings[0]["evidence"]
    assert not (outcome.folder / "final_answer.json").exists()


def test_budget_also_stops_engines_that_left_the_agents_process_group(tmp_path):
    body = ("import subprocess\n(workdir / 'run').mkdir()\n"
            "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], cwd=workdir / 'run',"
            " start_new_session=True)\n(workdir.parent / 'engine.pid').write_text(str(p.pid))\ntime.sleep(60)\n")
    # 6 s: time for the agent to start its engine even on a loaded machine
    outcome = run_one(tmp_path, script_agent(tmp_path, body), write_task(tmp_path / "tasks"), budget_for=lambda t: 6.0)
    pid = int((outcome.folder / "engine.pid").read_text())
    time.sleep(0.5)
    state = Path(f"/proc/{pid}/stat").read_text().split()[2] if Path(f"/proc/{pid}").exists() else "gone"
    assert state in ("gone", "Z"), state  # killed (a zombie until its parent, the killed agent, is reaped)
    assert outcome.agent_run["timed_out"] is True


def test_interrupted_session_stops_its_agents_and_records_nothing(tmp_path):
    """SIGTERM to `simagent bench run`: the agent and the engine it left running are stopped, the
    task gets no validation.json, and the next run does it again."""
    import signal
    import subprocess

    task = write_task(tmp_path / "tasks")
    body = ("import subprocess\n(workdir / 'run').mkdir()\n"
            "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], cwd=workdir / 'run',"
            " start_new_session=True)\n(workdir.parent / 'engine.pid').write_text(str(p.pid))\n"
            "(workdir.parent / 'agent.pid').write_text(str(os.getpid()))\ntime.sleep(60)\n")
    agent = script_agent(tmp_path, body)
    out = tmp_path / "out"
    harness = subprocess.Popen([sys.executable, "-m", "simagent.cli", "bench", "run", str(task), "--agent", "command",
                                "--command", agent.template, "--out", str(out), "-q"], cwd=REPO)
    folder = out / "tasks" / "t1"
    deadline = time.monotonic() + 60
    while not (folder / "agent.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert (folder / "agent.pid").exists(), "the agent never started"
    harness.send_signal(signal.SIGTERM)
    assert harness.wait(timeout=30) != 0
    for name in ("agent.pid", "engine.pid"):
        pid = int((folder / name).read_text())
        alive = Path(f"/proc/{pid}").exists() and Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
        assert not alive, name
    assert not (folder / "validation.json").exists()
    steps = read_trajectory(folder / "trajectory_log.jsonl")
    assert steps[-1]["kind"] == "interrupted"


def test_default_budget_is_300_s_plus_the_time_limit(tmp_path):
    task = write_task(tmp_path / "tasks")
    agent = script_agent(tmp_path, "print(os.environ['BENCH_TIMEOUT_S'])\n")
    outcome = run_one(tmp_path, agent, task)
    steps = read_trajectory(outcome.folder / "trajectory_log.jsonl")
    assert steps[0]["budget_s"] == 310.0  # M3RG-IITD/MDGYM main.py: timeout = 300 + int(time_limit)
    assert any(s["kind"] == "agent_step" and s["output"] == "310" for s in steps)


def test_resume_skips_finished_tasks_and_redoes_changed_or_unfinished_ones(tmp_path):
    tasks = tmp_path / "tasks"
    write_task(tasks, "a")
    b = write_task(tasks, "b")
    counter = tmp_path / "calls.txt"
    body = (f"open({str(counter)!r}, 'a').write(workdir.parent.name + '\\n')\n"
            + answer_body({"alpha": 1.0, "Beta Value": -2.0}, log=LAMMPS_LOG_OK))
    agent = script_agent(tmp_path, body)
    out = tmp_path / "out"
    Orchestrator(agent, out).run(collect_tasks([tasks]))
    assert counter.read_text().split() == ["a", "b"]
    again = Orchestrator(agent, out).run(collect_tasks([tasks]))
    assert counter.read_text().split() == ["a", "b"]  # nothing re-run
    assert [o.resumed for o in again] == [True, True] and [o.score for o in again] == [1.0, 1.0]
    assert list(csv.DictReader((out / "results.csv").open()))[0]["resumed"] == "true"
    data = json.loads(b.read_text())
    data["ground_truth"]["alpha"] = 5.0  # a changed task file is run again
    b.write_text(json.dumps(data))
    (out / "tasks" / "a" / "validation.json").unlink()  # an interrupted task is run again
    third = Orchestrator(agent, out).run(collect_tasks([tasks]))
    assert counter.read_text().split() == ["a", "b", "a", "b"]
    assert [o.resumed for o in third] == [False, False] and third[1].score == 0.5
    Orchestrator(agent, out, tolerance=0.5).run(collect_tasks([tasks]))  # another tolerance: scored again
    assert counter.read_text().split() == ["a", "b", "a", "b", "a", "b"]


def test_out_folder_of_another_agent_is_refused(tmp_path):
    task = write_task(tmp_path / "tasks")
    run_one(tmp_path, script_agent(tmp_path, "pass\n"), task)
    other = script_agent(tmp_path, "pass\n", name="other.py")
    with pytest.raises(BenchInputError, match="use another --out"):
        Orchestrator(other, tmp_path / "out").run(collect_tasks([task]))


def test_parallel_tasks_keep_their_order(tmp_path):
    tasks = tmp_path / "tasks"
    for name in ("c", "a", "b"):
        write_task(tasks, name)
    agent = script_agent(tmp_path, "time.sleep(0.3)\n" + answer_body({"alpha": 1.0}, log=LAMMPS_LOG_OK))
    outcomes = Orchestrator(agent, tmp_path / "out", parallel=3).run(collect_tasks([tasks]))
    assert [o.task.id for o in outcomes] == ["a", "b", "c"] and all(o.score == 0.5 for o in outcomes)


# ---------------------------------------------------------------------------------------------
# Failure taxonomy
# ---------------------------------------------------------------------------------------------


def test_made_up_answer_scores_zero_as_fabricated(tmp_path):
    """Right numbers without any engine run: still 0, and classified as fabricated."""
    agent = script_agent(tmp_path, answer_body({"alpha": 1.0, "Beta Value": -2.0}))
    outcome = run_one(tmp_path, agent, write_task(tmp_path / "tasks"))
    assert outcome.score == 0.0 and outcome.success is False
    assert categories(outcome) == ["fabricated_answer"]
    assert "no engine run at all" in outcome.findings[0]["evidence"]
    assert outcome.validation["disqualified"]


def test_status_json_without_engine_log_is_no_evidence(tmp_path):
    status = {"job": "j", "status": "succeeded", "inputs_sha256": "x", "returncode": 0, "wall_s": 1.0}
    body = (f"(workdir / 'jobs' / 'j').mkdir(parents=True)\n"
            f"(workdir / 'jobs' / 'j' / 'status.json').write_text(json.dumps({status!r}))\n"
            + answer_body({"alpha": 1.0, "Beta Value": -2.0}))
    outcome = run_one(tmp_path, script_agent(tmp_path, body), write_task(tmp_path / "tasks"))
    assert categories(outcome) == ["fabricated_answer"] and outcome.score == 0.0


def test_simagent_job_folder_counts_as_evidence(tmp_path):
    status = {"job": "j", "status": "succeeded", "inputs_sha256": "x", "returncode": 0, "wall_s": 1.5,
              "command": ["lmp", "-in", "in.lammps"]}
    body = (f"job = workdir / 'runs' / 'jobs' / 'j'\njob.mkdir(parents=True)\n"
            f"(job / 'status.json').write_text(json.dumps({status!r}))\n"
            "(job / 'job.json').write_text(json.dumps({'engine': 'lammps', 'params': {'velocity_seed': 4928459}}))\n"
            f"(job / 'log.lammps').write_text({LAMMPS_LOG_OK!r})\n"
            + answer_body({"alpha": 1.0, "Beta Value": -2.0}))
    outcome = run_one(tmp_path, script_agent(tmp_path, body), write_task(tmp_path / "tasks"))
    assert outcome.score == 1.0 and outcome.findings == []
    assert outcome.seeds == {"runs/jobs/j": {"velocity_seed": 4928459}}
    steps = read_trajectory(outcome.folder / "trajectory_log.jsonl")
    run = next(s for s in steps if s["kind"] == "engine_run")
    assert run["exit_status"] == 0 and run["wall_s"] == 1.5 and run["source"] == "status.json"
    assert any(s["kind"] == "tool_call" and s.get("command") == ["lmp", "-in", "in.lammps"] for s in steps)


def test_syntax_error(tmp_path):
    log = "LAMMPS (22 Jul 2025)\nERROR: Unknown command: pair_stile lj/cut 2.5 (src/input.cpp:314)\n"
    outcome = run_one(tmp_path, script_agent(tmp_path, log_body(log)), write_task(tmp_path / "tasks"))
    assert "syntax_error" in categories(outcome) and "environment_misunderstanding" not in categories(outcome)
    assert "Unknown command" in next(f["evidence"] for f in outcome.findings if f["category"] == "syntax_error")


def test_environment_misunderstanding(tmp_path):
    log = "LAMMPS (22 Jul 2025)\nERROR on proc 0: cannot open EAM potential file Ni_u3.eam: No such file or directory\n"
    body = answer_body({"alpha": 7.0}, log=log)
    outcome = run_one(tmp_path, script_agent(tmp_path, body), write_task(tmp_path / "tasks"))
    assert categories(outcome) == ["fabricated_answer", "environment_misunderstanding"]
    assert outcome.score == 0.0


def test_environment_misunderstanding_from_the_agent_output(tmp_path):
    body = "sys.stderr.write('/bin/sh: 1: lmp_serial: command not found\\n')\nsys.exit(127)\n"
    outcome = run_one(tmp_path, script_agent(tmp_path, body), write_task(tmp_path / "tasks"))
    assert categories(outcome) == ["premature_termination", "environment_misunderstanding"]
    assert "exited with code 127" in outcome.findings[0]["evidence"]


def test_premature_termination_without_answer(tmp_path):
    outcome = run_one(tmp_path, script_agent(tmp_path, "pass\n"), write_task(tmp_path / "tasks"))
    assert categories(outcome) == ["premature_termination"] and outcome.agent_run["timed_out"] is False


def test_empty_answer_is_premature_not_fabricated(tmp_path):
    """An agent that gives up ({}, as simagent does for metrics it cannot read) claims no value."""
    agent = script_agent(tmp_path, answer_body({}) + "sys.exit(1)\n")
    outcome = run_one(tmp_path, agent, write_task(tmp_path / "tasks"))
    assert categories(outcome) == ["premature_termination"] and outcome.score == 0.0
    assert "answers none of the metrics" in outcome.findings[0]["evidence"]


def test_incorrect_post_processing(tmp_path):
    body = answer_body({"alpha": 1.0, "Beta Value": -3.0}, log=LAMMPS_LOG_OK)
    outcome = run_one(tmp_path, script_agent(tmp_path, body), write_task(tmp_path / "tasks"))
    assert outcome.score == 0.5 and categories(outcome) == ["incorrect_post_processing"]
    assert "Beta Value" in outcome.findings[0]["evidence"] and "50.0 % off" in outcome.findings[0]["evidence"]


def test_answer_that_is_not_an_object(tmp_path):
    body = "(workdir / 'final_answer.json').write_text('[1, 2]')\n"
    outcome = run_one(tmp_path, script_agent(tmp_path, body), write_task(tmp_path / "tasks"))
    assert outcome.validation["problems"] == ["final_answer.json is not a JSON object"]
    assert categories(outcome) == ["premature_termination"]


# ---------------------------------------------------------------------------------------------
# Agents
# ---------------------------------------------------------------------------------------------


def test_command_template_is_not_run_through_a_shell(tmp_path):
    """A workdir with shell syntax in its name stays one argument."""
    agent = script_agent(tmp_path, "(workdir / 'final_answer.json').write_text(json.dumps({'n': len(sys.argv)}))\n")
    workdir = tmp_path / "a b; touch pwned"
    workdir.mkdir()
    agent.execute("prompt", workdir, 30, "lammps")
    assert json.loads((workdir / "final_answer.json").read_text()) == {"n": 2}
    assert not (tmp_path / "pwned").exists() and (workdir / "prompt.md").read_text() == "prompt"
    braces = CommandAgent(f"{shlex.quote(sys.executable)} -c \"print({{'a': 1}})\" {{workdir}}")
    assert braces.argv(Path("/w"), Path("/w/p.md")) == [sys.executable, "-c", "print({'a': 1})", "/w"]


def test_agent_names_and_templates(tmp_path):
    assert isinstance(make_agent("simagent"), SimagentAgent)
    with pytest.raises(BenchInputError, match="unknown agent 'gpt'"):
        make_agent("gpt")
    with pytest.raises(BenchInputError, match="needs --command"):
        make_agent("command")
    with pytest.raises(BenchInputError, match="was not found"):
        make_agent("command", command="no-such-agent-binary {workdir}")
    with pytest.raises(BenchInputError, match="only for --agent command"):
        make_agent("simagent", command="echo")


def test_simagent_agent_budget_and_steps(tmp_path, monkeypatch):
    """A scripted stand-in for the solver child: its BENCH-STEP lines become agent steps."""
    agent = SimagentAgent(data_root=tmp_path)
    argv = agent.command(tmp_path, 330.0)
    assert argv[1:4] == ["-m", "simagent.bench.solver", "task.json"]
    assert float(argv[argv.index("--budget") + 1]) == 310.0 and argv[argv.index("--data-root") + 1] == str(tmp_path)
    assert agent.solver_budget(20.0) == 18.0
    fake = ("import json, sys\n"
            "print('BENCH-STEP ' + json.dumps({'event': 'stage', 'name': 'query'}), file=sys.stderr)\n"
            "open('final_answer.json', 'w').write(json.dumps({'alpha': 1.0}))\n"
            "print(json.dumps({'not_computed': {'Beta Value': 'names no property'}}))\nsys.exit(1)\n")
    monkeypatch.setattr(SimagentAgent, "command", lambda self, workdir, timeout: [sys.executable, "-c", fake])
    outcome = run_one(tmp_path, agent, write_task(tmp_path / "tasks"))
    steps = read_trajectory(outcome.folder / "trajectory_log.jsonl")
    assert any(s["kind"] == "agent_step" and s.get("name") == "query" for s in steps)
    task_file = json.loads((outcome.folder / "workdir" / "task.json").read_text())
    assert "ground_truth" not in task_file and task_file["id"] == "t1"
    assert categories(outcome) == ["fabricated_answer"]
    assert outcome.agent_run["message"] == "not computed: Beta Value: names no property"


# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------


def cli(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    from simagent import cli as cli_module

    monkeypatch.setattr(sys, "argv", ["simagent", "bench", "run", *args])
    with pytest.raises(SystemExit) as exit_info:
        cli_module.main()
    captured = capsys.readouterr()
    return exit_info.value.code, captured.out, captured.err


@pytest.mark.parametrize("case", ["missing", "malformed", "unknown_agent", "no_command", "bad_parallel"])
def test_bad_input_exits_2_and_writes_nothing(tmp_path, monkeypatch, capsys, case):
    good = write_task(tmp_path / "tasks")
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    args = {
        "missing": [str(tmp_path / "nope.json")],
        "malformed": [str(good), str(bad)],
        "unknown_agent": [str(good), "--agent", "gpt"],
        "no_command": [str(good), "--agent", "command"],
        "bad_parallel": [str(good), "--parallel", "0"],
    }[case]
    code, out, err = cli(monkeypatch, capsys, *args, "--out", str(tmp_path / "out"))
    assert code == 2, (out, err)
    assert "Traceback" not in out + err and "error" in err.lower()
    assert not (tmp_path / "out").exists()


def test_cli_json_and_exit_codes(tmp_path, monkeypatch, capsys):
    task = write_task(tmp_path / "tasks")
    script = tmp_path / "fake.py"
    script.write_text("import json, sys\n"
                      "open(sys.argv[1] + '/final_answer.json', 'w').write(json.dumps({'alpha': 1}))\n")
    template = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {{workdir}}"
    code, out, _ = cli(monkeypatch, capsys, str(task), "--agent", "command", "--command", template,
                       "--out", str(tmp_path / "out"), "--json")
    summary = json.loads(out)
    assert code == 1 and summary["mean_score"] == 0.0 and summary["solved"] == 0
    assert summary["results"][0]["failure_categories"] == "fabricated_answer"


def test_run_session_checks_before_writing(tmp_path):
    good = write_task(tmp_path / "tasks")
    with pytest.raises(BenchInputError, match="data root"):
        run_session([good], "simagent", tmp_path / "out", data_root=tmp_path / "missing")
    assert not (tmp_path / "out").exists()


def test_engine_versions_are_recorded():
    versions = REAL_ENGINE_VERSIONS({"zeopp", "nosuchengine"})
    assert versions["zeopp"] != "" and versions["nosuchengine"].startswith("unavailable")


@pytest.mark.engine
def test_simagent_solves_a_level_1_task(tmp_path):
    """The real solver on Foiles' Cu (a few seconds of LAMMPS): full score, engine run in the log."""
    outcomes = run_session([SUITE / "lammps" / "cu_eam_foiles_u3.json"], "simagent", tmp_path / "out",
                           backend="expert")
    outcome = outcomes[0]
    assert outcome.score == 1.0 and outcome.findings == [], outcome.validation
    steps = read_trajectory(outcome.folder / "trajectory_log.jsonl")
    assert any(s["kind"] == "engine_run" and s["succeeded"] and s["engine"] == "lammps" for s in steps)
    assert any(s["kind"] == "agent_step" and s.get("name") == "runner" for s in steps)
