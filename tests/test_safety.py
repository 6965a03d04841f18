"""Safety: the input policy (nothing unsafe runs, nothing good is flagged) and execution safety
(wall-time limit, hung-process watchdog, memory limit)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from simagent.executor import LocalExecutor, write_inputs
from simagent.models import Job, JobStatus
from tools.lammps.check import safety_findings, safety_problems

GOOD = """units lj
atom_style atomic
lattice fcc 0.8442
region box block 0 4 0 4 0 4
create_box 1 box
create_atoms 1 box
mass 1 1.0
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
fix 1 all nve
thermo_style custom step temp pe
dump d all custom 100 out/dump.lammpstrj id type x y z
log log.second append
print "wrote /usr/share-like text is fine in a message" file notes.txt
variable a equal 2*v_b/3
write_data final.data
run 100
"""

UNSAFE = {
    "shell": "shell rm -rf /",
    "shell-cd": "shell cd ..",
    "python-command": 'python f input 1 SELF format p here """\nimport os\n"""',
    "python-fix": "fix p all python/invoke 10 post_force f",
    "python-pair": "pair_style python 2.5",
    "python-hybrid": "pair_style hybrid lj/cut 2.5 python 2.5",
    "plugin": "plugin load x.so",
    "geturl": "geturl https://example.org/x",
    "kim": "kim query a0 get_lattice_constant_cubic",
    "mdi": "fix q all mdi/qm",
    "ipi": "fix i all ipi host 1234",
    "external": "fix e all external pf/callback 1 1",
    "dump-movie": "dump m all movie 10 movie.mpg type type",
    "getenv": "variable h getenv HOME",
    "getenv-simagent": "variable h getenv SIMAGENT_LMP",
    "getenv-clean-stop-and-more": "variable h getenv SIMAGENT_CLEAN_STOP_S HOME",
    "python-variable": "variable p python f",
    "absolute-log": "log /tmp/x.log",
    "home-path": "write_data ~/x.data",
    "parent-path": "read_data ../x.data",
    "parent-in-dump": "dump d all atom 10 out/../../x",
    "absolute-potential": "pair_coeff * * /opt/Cu.eam Cu",
    "print-file": 'print "x" file /tmp/x',
    "print-append": 'print "x" append ../x',
    "fix-print": 'fix p all print 10 "x" file /tmp/x',
    "compressed": "read_data x.data.gz",
    "variable-file": "variable v file /etc/passwd",
    "variable-path": "variable d string /tmp\nlog ${d}/x",
    "variable-command": "variable c string shell\n${c} ls",
    "nested-if": 'if "1 > 0" then "shell touch x"',
    "nested-run-every": 'run 10 every 5 "shell touch x"',
    "include-missing": "include other.in",
    "include-outside": "include /etc/lammps.in",
    "metachar-name": "write_dump all atom x;rm",
}


def test_good_input_passes_the_policy():
    assert safety_findings({"in.lammps": GOOD}) == []


@pytest.mark.parametrize("case", sorted(UNSAFE), ids=sorted(UNSAFE))
def test_unsafe_lines_are_rejected(case):
    text = GOOD.replace("run 100", UNSAFE[case] + "\nrun 100")
    findings = safety_findings({"in.lammps": text})
    assert findings and all(f.severity == "unsafe" for f in findings), case
    assert findings[0].line is not None and findings[0].message


def test_the_runners_clean_stop_time_may_be_read():
    """The one environment variable an input may read: the seconds after which the runner wants the
    engine to stop itself (tools.lammps.described_budget writes these lines)."""
    from tools.lammps.described_budget import clean_stop_lines

    text = GOOD.replace("run 100", "\n".join(clean_stop_lines()) + "\nrun 100")
    assert "getenv SIMAGENT_CLEAN_STOP_S" in text and safety_findings({"in.lammps": text}) == []


def test_included_files_are_checked_too():
    inputs = {"in.lammps": GOOD.replace("run 100", "include setup.in\nrun 100"), "setup.in": "shell ls\n"}
    findings = safety_findings(inputs)
    assert [f.file for f in findings] == ["setup.in"]
    assert safety_problems("shell ls")[0].startswith("line 1:")


def test_gromacs_and_raspa_policies():
    from tools.gromacs.handlers import safety_findings as gmx_safety
    from tools.raspa.handlers import safety_findings as raspa_safety

    top = '#include "oplsaa.ff/forcefield.itp"\n#include "/etc/passwd"\n'
    job = Job(id="g", protocol="user/gromacs", engine="gromacs",
              inputs={"topol.top": top, "md.mdp": "include = -I/home\n"})
    assert len(gmx_safety(job)) == 2
    ok = Job(id="g", protocol="user/gromacs", engine="gromacs", inputs={"topol.top": top.splitlines()[0] + "\n"})
    assert gmx_safety(ok) == []
    raspa = Job(id="r", protocol="user/raspa", engine="raspa",
                inputs={"simulation.input": "FrameworkName ../../etc/x\nForcefield GenericMOFs\n"})
    assert len(raspa_safety(raspa)) == 1


def test_protocol_inputs_raise_no_false_alarm():
    """Every registered protocol, rendered for a few requests, passes the static pre-run checks."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/ is not an installed package
    from benchmarks.faults.good_inputs import good_jobs
    from simagent.engines import get_engine

    precheck_findings = get_engine("lammps").precheck_findings

    jobs = good_jobs()
    assert len(jobs) >= 5
    for label, job in jobs:
        if job.engine != "lammps":
            continue
        assert precheck_findings(job, dry_run=False) == [], label


@pytest.mark.engine
def test_unsafe_user_input_never_runs(tmp_path):
    from simagent.usercli import run_file

    canary = tmp_path / "canary"
    script = GOOD.replace("run 100", f'if "1 > 0" then "shell touch {canary}"\nrun 100')
    (tmp_path / "in.lammps").write_text(script)
    report = run_file(tmp_path / "in.lammps", "lammps", tmp_path / "run", yes=True)
    assert report.status == "rejected" and report.attempts == 0 and "shell" in report.message
    assert not canary.exists() and not (tmp_path / "run" / "run").exists()


# ---------------------------------------------------------------------------------------------
# Execution safety: every job has a wall-time and memory limit; hung engines are killed
# ---------------------------------------------------------------------------------------------


def run_command(tmp_path: Path, command: list[str], time_limit_s: float, **limits):
    executor = LocalExecutor(max_parallel=1, **limits)
    job = Job(id="x", protocol="test", time_limit_s=time_limit_s)
    job_dir = tmp_path / "x"
    write_inputs(job, job_dir)
    start = time.monotonic()
    handle = executor.submit(job, job_dir, command, {})
    try:
        while True:
            record = executor.poll(handle)
            if record.status in (JobStatus.succeeded, JobStatus.failed, JobStatus.cancelled):
                return record, time.monotonic() - start
            time.sleep(0.05)
    finally:
        executor.shutdown()


def test_hung_engine_is_killed_by_the_watchdog(tmp_path):
    record, wall = run_command(tmp_path, ["sleep", "60"], 60, stall_limit_s=1.0)
    assert record.status == JobStatus.failed and record.stalled and not record.timed_out
    assert "no output progress" in record.message and wall < 10


def test_busy_engine_is_killed_at_the_wall_time_limit(tmp_path):
    record, wall = run_command(tmp_path, [sys.executable, "-c", "while True: pass"], 2.0, stall_limit_s=1.0)
    assert record.status == JobStatus.failed and record.timed_out  # busy: CPU advances, never "hung"
    assert "wall-time limit of 2 s" in record.message and wall < 10


def test_memory_hog_is_stopped_by_the_memory_limit(tmp_path):
    hog = [sys.executable, "-c", "x = bytearray(4 * 1024**3)"]
    record, _ = run_command(tmp_path, hog, 60, memory_limit_mb=400)
    assert record.status == JobStatus.failed and "out of memory (limit 400 MB)" in record.message


def test_crash_is_reported_with_its_signal(tmp_path):
    crash = [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"]
    record, _ = run_command(tmp_path, crash, 30)
    assert record.status == JobStatus.failed and "SIGSEGV" in record.message
