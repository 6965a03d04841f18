"""Cores per job (Settings.job_cores): `simagent solve` spreads its engine jobs over the idle cores,
a number overrides, `ask` keeps one core per job; the engine adapter decides ranks or threads."""

from __future__ import annotations

import collections
import json
import math
import os
from pathlib import Path

import psutil
import pytest

from agents.input_writer import render_plan
from simagent import config
from simagent.config import idle_cores, load_settings
from simagent.described.reading import read_description
from simagent.engines import get_engine
from simagent.errors import RequestError
from simagent.models import Job, ProtocolRun
from simagent.solve import INPUTS, REPORT, solve

CPU_FIELDS = "user nice system idle iowait irq softirq steal guest guest_nice"
CpuTimes = collections.namedtuple("CpuTimes", CPU_FIELDS)  # the fields psutil reports on Linux


def cpu(**spent) -> CpuTimes:
    return CpuTimes(**{field: float(spent.get(field, 0.0)) for field in CPU_FIELDS.split()})


def watch(monkeypatch, spent: list[CpuTimes]) -> None:
    """The processors spend `spent` (seconds per field and core) while idle_cores() watches them."""
    samples = iter([[cpu() for _ in spent], spent])
    monkeypatch.setattr(psutil, "cpu_times", lambda percpu: next(samples))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(len(spent))))
    monkeypatch.setattr(config.time, "sleep", lambda seconds: None)


@pytest.mark.parametrize("spent, free", [
    ([cpu(idle=50), cpu(idle=50)], 2),                   # an idle 2-core machine: both
    ([cpu(user=48, system=2), cpu(idle=49, user=1)], 1),  # one core busy
    ([cpu(user=50), cpu(user=45, idle=5)], 1),            # both busy: still one
    ([cpu(nice=50), cpu(nice=40, idle=10)], 1),           # niced work keeps its share (autogroups)
    ([cpu(user=50)] + [cpu(idle=50)] * 7, 7),
    # guest time is inside user time (Linux): 3 x (50 user incl. 50 guest, 50 idle) leaves 1.5 cores
    ([cpu(user=50, guest=50, idle=50)] * 3, 2),
    ([cpu(iowait=30, idle=20)], 1),
])
def test_idle_cores_are_the_cores_measured_free(monkeypatch, spent, free):
    watch(monkeypatch, spent)
    assert idle_cores() == free


def test_idle_cores_on_this_machine():
    assert 1 <= idle_cores(sample_s=0.05) <= len(os.sched_getaffinity(0))


def test_job_cores_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("SIMAGENT_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.delenv("SIMAGENT_JOB_CORES", raising=False)
    assert load_settings().job_cores is None and load_settings().cores_per_job == 1  # ask: one core per job
    monkeypatch.setenv("SIMAGENT_JOB_CORES", "3")
    assert load_settings().cores_per_job == 3
    monkeypatch.setenv("SIMAGENT_JOB_CORES", "idle")
    monkeypatch.setattr(config, "idle_cores", lambda: 5)
    assert load_settings().job_cores == "idle" and load_settings().cores_per_job == 5
    for bad in ("0", "all"):
        monkeypatch.setenv("SIMAGENT_JOB_CORES", bad)
        with pytest.raises(RequestError, match="job_cores"):
            load_settings()


def test_the_adapter_chooses_ranks_or_threads():
    lammps = Job(id="md", protocol="lammps/test", engine="lammps")
    assert (get_engine("lammps").spread(lammps, 2).ranks, get_engine("lammps").spread(lammps, 2).threads) == (2, 1)
    assert get_engine("lammps").spread(lammps, 1) == lammps
    chosen = lammps.model_copy(update={"threads": 4})  # the protocol's own choice is kept
    assert get_engine("lammps").spread(chosen, 2) == chosen
    gromacs = get_engine("gromacs").spread(Job(id="md", protocol="gromacs/test", engine="gromacs"), 2)
    assert (gromacs.ranks, gromacs.threads) == (1, 2)  # OpenMP: a small box has no 2-rank decomposition
    raspa = Job(id="gcmc", protocol="raspa/test", engine="raspa")
    assert get_engine("raspa").spread(raspa, 2) == raspa  # RASPA2 runs on one core
    get_engine("raspa").launch(get_engine("raspa").spread(raspa, 2))  # and is therefore never refused


# Written for this test: a small LJ liquid (256 atoms) that the described protocol runs literally.
LIQUID = ("Lennard-Jones particles in reduced units on an fcc lattice at a density of 0.8442 in a 4 x 4 x 4 box, "
          "cutoff 2.5. Velocities are created at a temperature of 1.5 with seed 4928. The timestep is 0.005. "
          "Integrate in the NVE ensemble for 3000 steps. Report the average potential energy per atom.")


def test_render_plan_spreads_protocol_jobs():
    described = read_description(LIQUID)
    run = ProtocolRun(protocol="lammps/described", properties=["potential_energy"], jobs={},
                      params={"description": described.model_dump(mode="json"), "properties": ["potential_energy"]})
    one, two = render_plan([run], 600), render_plan([run], 600, cores=2)
    assert [j.ranks for j in one.jobs] == [1] * len(one.jobs)
    assert [j.ranks for j in two.jobs] == [2] * len(two.jobs) and [j.inputs for j in two.jobs] == [
        j.inputs for j in one.jobs]  # the inputs (and so render_check's digests) do not change
    launch = get_engine("lammps").launch(two.jobs[0])
    assert Path(launch.argv[0]).name == "mpiexec" and launch.argv[1:3] == ["-n", "2"] and launch.cores == 2


def _thermo(log: str) -> list[list[str]]:
    block = log.split("Step ", 1)[1].split("Loop time")[0]
    return [line.split() for line in ("Step " + block).strip().splitlines()]


@pytest.mark.engine
def test_solve_on_two_ranks_runs_the_same_system(tmp_path, settings):
    """The same task on 1 and on 2 MPI ranks: the same initial state (step 0 identical), the
    trajectories then part (another summation order), the averages agree within their errors."""
    task = tmp_path / "liquid.json"
    task.write_text(json.dumps({"id": "liquid", "problem_description": LIQUID, "level": 1, "ground_truth": {},
                                "metrics": ["average_potential_energy_per_atom"], "time_limit": 60,
                                "engine": "lammps"}))
    runs = {cores: solve(task, tmp_path / f"c{cores}", settings=settings.model_copy(update={"job_cores": cores}))
            for cores in (1, 2)}
    logs = {c: (Path(o.answer.jobs[0]) / "log.lammps").read_text() for c, o in runs.items()}
    assert "on 2 procs" in logs[2] and "on 1 procs" in logs[1]
    job = json.loads((tmp_path / "c2" / INPUTS / "described-described" / "job.json").read_text())
    assert job["ranks"] == 2 and "ran on 2 MPI rank(s)" in (tmp_path / "c2" / REPORT).read_text()
    assert "MPI rank(s)" not in (tmp_path / "c1" / REPORT).read_text()
    first = {c: _thermo(log)[1] for c, log in logs.items()}
    assert first[1] == first[2]  # step 0: same lattice, same velocities
    values = {c: o.metrics[0] for c, o in runs.items()}
    diff = abs(values[1].value - values[2].value)
    errors = math.hypot(values[1].result.uncertainty or 0.0, values[2].result.uncertainty or 0.0)
    assert values[1].value != values[2].value and diff < 4 * errors, (values[1].value, values[2].value, errors)
