"""A job's MPI ranks and OpenMP threads reach the engine (issue 15): EngineAdapter.launch() builds the
command from Job.ranks and Job.threads and reports cores = ranks x threads to the executor. Each real
run below is checked in the engine's own log, which states how many ranks and threads it used."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from test_process_safety import melt_input

from simagent.engines import get_engine
from simagent.errors import InputError
from simagent.executor import LocalExecutor
from simagent.jobrun import run_plan
from simagent.models import Job, Plan
from tools.gromacs.driver import Step, StepList

FILES = Path(__file__).parent / "files"
needs_gmx = pytest.mark.skipif(shutil.which("gmx") is None, reason="GROMACS (gmx) is not installed")

LJ_MELT = melt_input(50)  # 500 LJ atoms (fcc, reduced density 0.8442), 50 steps: a fraction of a second

# Steepest descent on 256 SPC/E waters (box 1.956 nm): two domains of 0.98 nm hold the 0.8 nm cutoff.
EM_MDP = """integrator = steep
nsteps = 10
cutoff-scheme = Verlet
coulombtype = PME
rcoulomb = 0.8
rvdw = 0.8
"""


def _run(job: Job, root: Path, workers: int = 2) -> Path:
    executor = LocalExecutor(max_parallel=workers)
    try:
        records = run_plan(Plan(jobs=[job]), root, executor)
    finally:
        executor.shutdown()
    record = records[job.id]
    assert record.status.value == "succeeded", record.message
    return root / job.id


def test_launch_reports_ranks_times_threads_and_sets_the_thread_count():
    job = Job(id="md", protocol="lammps/test", engine="lammps", ranks=2, threads=3, inputs={"in.lammps": LJ_MELT})
    launch = get_engine("lammps").launch(job)
    assert (launch.cores, launch.ranks) == (6, 2)
    assert launch.env["OMP_NUM_THREADS"] == "3"
    argv = launch.argv
    assert Path(argv[0]).name == "mpiexec" and argv[1:3] == ["-n", "2"]
    assert argv[argv.index("-sf") + 1] == "omp" and argv[argv.index("-pk") + 1:argv.index("-pk") + 3] == ["omp", "3"]
    serial = get_engine("lammps").launch(job.model_copy(update={"ranks": 1, "threads": 1}))
    assert (serial.cores, serial.ranks) == (1, 1) and "-sf" not in serial.argv
    assert Path(serial.argv[0]).name == "lmp" and serial.env["OMP_NUM_THREADS"] == "1"


def test_an_engine_that_runs_on_one_core_refuses_ranks():
    """RASPA2 has no parallel mode: a job asking for ranks is refused, not run on one core."""
    job = Job(id="gcmc", protocol="raspa/test", engine="raspa", ranks=4, inputs={"simulation.input": ""})
    with pytest.raises(InputError, match="one core.*4 MPI rank"):
        get_engine("raspa").launch(job)
    get_engine("raspa").launch(job.model_copy(update={"ranks": 1}))  # one core: accepted


@pytest.mark.engine
def test_lammps_runs_on_two_mpi_ranks(tmp_path):
    """A protocol job (engine.job_command) on 2 ranks: mpiexec of the MPI LAMMPS was built with."""
    job = Job(id="md", protocol="lammps/test", engine="lammps", ranks=2, inputs={"in.lammps": LJ_MELT})
    folder = _run(job, tmp_path)
    log = (folder / "log.lammps").read_text()
    assert re.search(r"Loop time of [\d.e+-]+ on 2 procs for 50 steps with 500 atoms", log), log[-600:]
    assert "2 MPI tasks x 1 OpenMP threads" in log


@pytest.mark.engine
def test_lammps_user_input_runs_on_two_openmp_threads(tmp_path):
    """A user's own script (handlers.user_command) on 1 rank x 2 threads: the OPENMP package's styles."""
    job = Job(id="run", protocol="user", engine="lammps", threads=2, inputs={"in.lammps": LJ_MELT})
    folder = _run(job, tmp_path)
    log = (folder / "log.lammps").read_text()
    assert "using 2 OpenMP thread(s) per MPI task" in log
    assert "1 MPI tasks x 2 OpenMP threads" in log
    assert "pair lj/cut/omp" in log  # the neighbour-list report names the style that ran


@pytest.mark.engine
@needs_gmx
def test_gromacs_driver_runs_mdrun_on_two_thread_mpi_ranks(tmp_path):
    """A protocol-style GROMACS job (the step driver, engine.job_command): mdrun -ntmpi 2."""
    box = FILES / "gromacs" / "spce_box"
    steps = StepList(steps=[Step(name="grompp", tool="grompp", args=["-f", "em.mdp", "-c", "conf.gro", "-p",
                                                                      "topol.top", "-o", "em.tpr"]),
                            Step(name="mdrun", tool="mdrun", args=["-s", "em.tpr", "-deffnm", "em"])])
    inputs = {name: (box / name).read_text() for name in ("conf.gro", "topol.top", "water.itp")}
    job = Job(id="em", protocol="gromacs/test", engine="gromacs", ranks=2,
              inputs={**inputs, "em.mdp": EM_MDP, "steps.json": steps.render()})
    launch = get_engine("gromacs").launch(job)
    assert launch.argv[-4:] == ["--ranks", "2", "--threads", "1"] and launch.cores == 2
    folder = _run(job, tmp_path)
    log = (folder / "em.log").read_text()
    assert "Using 2 MPI threads" in log and "Using 1 OpenMP thread per tMPI thread" in log
    assert "Domain decomposition grid 2 x 1 x 1" in log
    mdrun = next(s for s in json.loads((folder / "driver.json").read_text())["steps"] if s["name"] == "mdrun")
    assert mdrun["command"][mdrun["command"].index("-ntmpi") + 1] == "2"


@needs_gmx
def test_a_gromacs_protocol_job_reserves_the_threads_it_runs_with():
    """The liquid protocol's `threads` reach both mdrun (-ntomp) and the executor (cores)."""
    from simagent.protocols import get_protocol

    protocol = get_protocol("gromacs/liquid_md")
    params = protocol.Params(model="spce", n_molecules=216, temperature=298.15, pressure=1.0, cutoff=0.85,
                             timestep=0.002, em_steps=100, nvt_steps=100, npt_steps=100, production_steps=100,
                             energy_every=20, compressibility=4.5e-5, threads=2)
    for job in protocol.jobs(params):
        launch = get_engine("gromacs").launch(job)
        assert launch.cores == 2 and launch.argv[-4:] == ["--ranks", "1", "--threads", "2"], job.id
        assert launch.env["OMP_NUM_THREADS"] == "2"
