"""The engine registry (simagent.engines) is the one list of engines: every other list derives
from it or is checked against it here, and every adapter fulfils the contract."""

import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest

from simagent.engines import EngineAdapter, Launch, all_engines, engine_names, get_engine, guess_engine
from simagent.errors import InputError
from simagent.models import Engine, Job
from simagent.protocols import all_protocols


def test_models_engine_literal_matches_the_registry():
    assert set(engine_names()) <= set(get_args(Engine))
    # VASP may be named by a request (inputs and recovery are written, nothing runs here)
    assert set(get_args(Engine)) - set(engine_names()) <= {"vasp"}


def test_every_protocol_runs_on_a_registered_engine_and_every_engine_has_a_protocol():
    engines = {p.engine for p in all_protocols()}
    assert engines <= set(engine_names())
    assert set(engine_names()) <= engines


def test_solve_accepts_exactly_the_registered_engines():
    from simagent.solve import MDGymTask

    for name in engine_names():
        assert MDGymTask._engine(name.upper()) == name
    with pytest.raises(ValueError, match="not an engine simagent runs"):
        MDGymTask._engine("vasp-but-not-registered")


def test_user_inputs_engines_come_from_the_registry():
    from simagent.usercli import user_engines

    assert user_engines() == [a.name for a in all_engines() if a.user_inputs]
    assert set(user_engines()) == {"lammps", "gromacs", "raspa"}


def test_unknown_engine_is_a_clear_error():
    with pytest.raises(InputError, match="unknown engine 'nope'"):
        get_engine("nope")


def test_guess_engine_asks_the_catch_all_engine_last(tmp_path):
    assert guess_engine(Path("x/md.mdp")) == "gromacs"
    assert guess_engine(Path("x/simulation.input")) == "raspa"
    assert guess_engine(Path("x/in.melt")) == "lammps"
    (tmp_path / "grompp.mdp").write_text("integrator = md\n")
    assert guess_engine(tmp_path) == "gromacs"


def test_every_adapter_fulfils_the_contract():
    for adapter in all_engines():
        assert isinstance(adapter, EngineAdapter)
        assert adapter.name and adapter.label
        job = Job(id="j", protocol=f"{adapter.name}/x", engine=adapter.name, inputs={})
        assert isinstance(adapter.handlers(), list)
        assert all(h.stage in ("input", "output") for h in adapter.handlers())
        assert adapter.main_input(job) == adapter.main_input_name
        status = adapter.status()  # found or not, never an exception
        assert status.found == bool(status.binary)
        assert status.found or "install" in status.detail or "not" in status.detail


def test_launch_of_a_protocol_job_and_of_a_users_job_go_through_the_adapter(tmp_path):
    lammps = get_engine("lammps")
    if not lammps.status().found:
        pytest.skip("LAMMPS not installed")
    script = tmp_path / "in.melt"
    script.write_text("units lj\n")
    user, _ = lammps.load_user_job(script)
    protocol = Job(id="p", protocol="lammps/crystal_relax", engine="lammps", inputs={"in.lammps": ""})
    for job in (user, protocol):
        launch = lammps.launch(job)
        assert isinstance(launch, Launch)
        assert launch.argv[0] == str(lammps.binary()) and "-in" in launch.argv
        assert launch.env["OMP_NUM_THREADS"]


def test_configured_binary_path_comes_from_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMAGENT_CONFIG", str(tmp_path / "config.toml"))
    (tmp_path / "config.toml").write_text(f'[engine_paths]\ngromacs = "{tmp_path / "no-gmx"}"\n')
    from simagent.errors import EngineNotFound

    with pytest.raises(EngineNotFound, match="no-gmx"):
        get_engine("gromacs").binary()
    monkeypatch.setenv("SIMAGENT_GROMACS_PATH", str(tmp_path / "other-gmx"))
    with pytest.raises(EngineNotFound, match="other-gmx"):
        get_engine("gromacs").binary()


def test_doctor_reports_every_registered_engine(tmp_path):
    exe = Path(sys.executable).parent / "simagent"
    proc = subprocess.run([str(exe), "doctor", "--workdir", str(tmp_path)], capture_output=True, text=True,
                          timeout=120, env={**__import__("os").environ, "SIMAGENT_CONFIG": str(tmp_path / "none")})
    for adapter in all_engines():
        assert adapter.label in proc.stdout, proc.stdout
    assert "Traceback" not in proc.stderr
    found_all = all(a.status().found for a in all_engines() if a.required)  # VASP is optional (licensed)
    assert proc.returncode == (0 if found_all else 1)
