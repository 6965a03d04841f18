"""`simagent check FILE` and `simagent run FILE` for users' own inputs: exit codes, the JSON
object, corrections applied and listed, referenced files resolved from the input's folder."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

FILES = Path(__file__).parent / "files"


def cli(*args: str) -> SimpleNamespace:
    """The CLI in-process (typer's runner): exit code, stdout, stderr."""
    from simagent.cli import app

    result = CliRunner().invoke(app, list(args))
    return SimpleNamespace(returncode=result.exit_code, stdout=result.stdout, stderr=result.stderr)


def test_commands_are_registered_on_the_installed_cli():
    result = subprocess.run([sys.executable, "-m", "simagent.cli", "--help"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0 and "check" in result.stdout and "run" in result.stdout


def copy_case(case: str, tmp_path: Path, engine: str = "lammps") -> Path:
    src = FILES / engine / case / "inputs" if engine == "lammps" else FILES / "faults" / engine / case / "inputs"
    shutil.copytree(src, tmp_path / case)
    return tmp_path / case


def test_check_ok_warning_and_unsafe_exit_codes(tmp_path):
    good = copy_case("good-nve", tmp_path)
    result = cli("check", str(good / "in.lammps"), "--no-dry-run", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["status"] == "ok"

    warned = copy_case("lost-atoms", tmp_path)
    result = cli("check", str(warned / "in.lammps"), "--no-dry-run", "--json")
    report = json.loads(result.stdout)
    assert result.returncode == 0 and report["findings"][0]["category"] == "timestep"
    assert report["findings"][0]["actions"]  # the suggested correction is part of the report

    unsafe = tmp_path / "unsafe.lmp"
    unsafe.write_text((good / "in.lammps").read_text() + "\nshell touch x\n")
    result = cli("check", str(unsafe), "--no-dry-run")
    assert result.returncode == 4 and "shell" in result.stdout


@pytest.mark.engine
def test_check_dry_run_finds_broken_input(tmp_path):
    broken = copy_case("unknown-command", tmp_path)
    result = cli("check", str(broken / "in.lammps"), "--json")
    report = json.loads(result.stdout)
    assert result.returncode == 1 and report["status"] == "broken"
    assert any("Unknown command: thermoo" in f["message"] for f in report["findings"])


@pytest.mark.engine
def test_run_repairs_and_reports_json(tmp_path):
    folder = copy_case("velocity-no-seed", tmp_path)
    result = cli("run", str(folder / "in.lammps"), "--yes", "--json", "--workdir", str(tmp_path / "runs"))
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["status"] == "succeeded" and report["attempts"] == 2
    assert report["corrections"][0]["handler"] == "IllegalArguments"
    assert "velocity all create 1.5 4928459" in report["corrections"][0]["changes"][0]
    final = Path(report["final_input"])
    assert final.is_file() and "4928459" in final.read_text()
    assert Path(report["log"]).name == "log.lammps" and Path(report["log"]).is_file()
    assert (final.parent / "corrections.json").is_file()


@pytest.mark.engine
def test_run_resolves_data_files_next_to_the_input(tmp_path):
    folder = copy_case("data-section", tmp_path)
    report = json.loads(cli("run", str(folder / "in.lammps"), "--yes", "--json",
                            "--workdir", str(tmp_path / "runs")).stdout)
    assert report["status"] == "succeeded"
    job_dir = Path(report["job_dir"])
    assert "Atoms # atomic" in (job_dir / "lj.data").read_text()
    assert "Atom # atomic" in (folder / "lj.data").read_text()  # the user's own file is never modified


@pytest.mark.engine
def test_run_fails_cleanly_when_nothing_can_fix_it(tmp_path):
    folder = copy_case("pair-coeffs-missing", tmp_path)
    result = cli("run", str(folder / "in.lammps"), "--yes", "--json", "--workdir", str(tmp_path / "runs"))
    report = json.loads(result.stdout)
    assert result.returncode == 1 and report["status"] == "failed"
    assert "pair coefficients" in report["message"] and report["corrections"] == []


def test_run_rejects_unsafe_input_without_running(tmp_path):
    script = tmp_path / "in.lammps"
    script.write_text("units lj\nvariable h getenv HOME\nrun 10\n")
    result = cli("run", str(script), "--yes", "--json", "--workdir", str(tmp_path / "runs"))
    report = json.loads(result.stdout)
    assert result.returncode == 4 and report["status"] == "rejected" and report["attempts"] == 0


@pytest.mark.engine
def test_run_without_yes_asks_before_applying_a_correction(tmp_path, monkeypatch):
    """Review mode: the correction is shown as a diff; declining stops before anything reruns."""
    from simagent.usercli import run_file

    folder = copy_case("lost-atoms", tmp_path)
    seen = []

    def decline(what, diff):
        seen.append(diff)
        return False

    report = run_file(folder / "in.lammps", "lammps", tmp_path / "runs", yes=False, confirm=decline)
    assert seen and "-timestep        0.05" in seen[0] and "+timestep        0.005" in seen[0]
    assert report.corrections == []


def test_missing_file_is_a_clean_error(tmp_path):
    result = cli("run", str(tmp_path / "nope.lmp"), "--json")
    assert result.returncode == 1 and json.loads(result.stdout)["status"] == "failed"


@pytest.mark.engine
def test_gromacs_run_repairs_an_mdp_typo(tmp_path):
    if shutil.which("gmx") is None:
        pytest.skip("GROMACS (gmx) is not installed")
    folder = copy_case("G01-mdp-typo", tmp_path, engine="gromacs")
    result = cli("run", str(folder / "md.mdp"), "--yes", "--json", "--workdir", str(tmp_path / "runs"))
    report = json.loads(result.stdout)
    assert report["status"] == "succeeded", report["message"]
    assert report["corrections"][0]["handler"] == "UnknownMdpOption"
    assert Path(report["log"]).name == "md.log"


def test_engine_is_guessed_from_the_file():
    from simagent.usercli import guess_engine

    assert guess_engine(Path("x/md.mdp")) == "gromacs"
    assert guess_engine(Path("x/simulation.input")) == "raspa"
    assert guess_engine(Path("x/in.melt")) == "lammps"
