"""The command line as a user meets it: one JSON object with --json, clear errors, exit codes."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

SIMAGENT = str(Path(sys.executable).parent / "simagent")


def run(args, tmp_path, env_extra=None, stdin=""):
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("SIMAGENT_", "OPENAI_"))}
    env["SIMAGENT_CONFIG"] = str(tmp_path / "none.toml")
    env["SIMAGENT_BACKEND"] = "expert"  # the default would be the hybrid when the local model is installed
    env.update(env_extra or {})
    return subprocess.run([SIMAGENT, *args, "--workdir", str(tmp_path / "runs")], capture_output=True,
                          text=True, env=env, input=stdin, timeout=300)


def one_json(stdout):
    lines = [line for line in stdout.splitlines() if line.strip()]
    assert len(lines) == 1, stdout
    return json.loads(lines[0])


@pytest.mark.engine
def test_ask_json_answers_with_units_and_provenance(tmp_path):
    proc = run(["ask", "--yes", "--json", "Lattice constant and cohesive energy of diamond silicon with the "
                "Stillinger–Weber potential"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    answer = one_json(proc.stdout)
    assert answer["status"] == "answered"
    by_name = {a["quantity"]: a for a in answer["answers"]}
    assert abs(by_name["lattice_constant"]["value"] - 5.431) < 0.005  # Stillinger & Weber 1985
    assert abs(by_name["cohesive_energy"]["value"] - 4.337) < 0.005
    assert by_name["cohesive_energy"]["unit"].startswith("eV")
    for key in ("defaults_applied", "corrections", "summary", "question", "jobs"):
        assert key in answer
    assert Path(answer["jobs"][0], "log.lammps").is_file()


def test_clarification_exit_code_and_question(tmp_path):
    proc = run(["ask", "--json", "What is the density?"], tmp_path)
    assert proc.returncode == 3
    answer = one_json(proc.stdout)
    assert answer["status"] == "needs_clarification" and "material" in answer["question"]
    assert answer["answers"] == []


@pytest.mark.parametrize("request_text, fragment", [
    ("", "empty"),
    ("blorp zorp", "could not find"),
    ("Lattice constant of unobtainium", "unknown material"),
    ("Self-diffusion coefficient of liquid argon at -20 K and 1.374 g/cm3", "absolute zero"),
    ("Lattice constant of fcc gold with the Stillinger-Weber potential", "Au"),
])
def test_bad_input_fails_cleanly(tmp_path, request_text, fragment):
    proc = run(["ask", "--json", "--yes", request_text], tmp_path)
    assert proc.returncode == 1
    answer = one_json(proc.stdout)
    assert answer["status"] == "failed" and fragment in answer["error"]
    assert "Traceback" not in proc.stderr and answer["answers"] == []


def test_bad_input_plain_text_has_no_traceback(tmp_path):
    proc = run(["ask", "--yes", "blorp zorp"], tmp_path)
    assert proc.returncode == 1
    assert "could not find" in proc.stdout + proc.stderr and "Traceback" not in proc.stderr


def test_missing_engine_gives_install_hint(tmp_path):
    proc = run(["ask", "--json", "--yes", "Lattice constant of fcc nickel with the Foiles EAM potential"],
               tmp_path, env_extra={"SIMAGENT_LMP": str(tmp_path / "no-lmp")})
    assert proc.returncode == 1
    answer = one_json(proc.stdout)
    assert answer["status"] == "failed" and "make setup" in answer["error"]


@pytest.mark.engine
def test_review_from_stdin_approves(tmp_path):
    proc = run(["ask", "--json", "Lattice constant of fcc nickel with the Foiles EAM potential"], tmp_path,
               stdin="a\n")
    assert proc.returncode == 0, proc.stderr
    assert "in.lammps" in proc.stderr  # the inputs were shown before running
    assert one_json(proc.stdout)["status"] == "answered"


def test_doctor_lists_engine_and_backend(tmp_path):
    proc = run(["doctor"], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "LAMMPS" in proc.stdout and "22 Jul 2025" in proc.stdout and "backend  expert" in proc.stdout
