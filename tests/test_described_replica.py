"""Parallel replica dynamics (LAMMPS prd) in a described run: read from texts written for these tests (and
the MDGym dev task 21_prd), rendered, launched on partitions, checked by the dry run, and a real short run
on two replicas whose average is recomputed here from the replica logs by another route (the 'Loop time
... for N steps' lines LAMMPS prints after each block) than the analysis takes (block spans and a frozen
temperature)."""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest
from described_helpers import dev_text

from simagent.described.reading import read_description
from simagent.errors import InputError
from simagent.models import PropertyRequest, TaskSpec
from tools.lammps import engine
from tools.lammps.check import dry_run
from tools.lammps.described import render
from tools.lammps.handlers import run_data
from tools.lammps.parse import read_output
from tools.lammps.protocols.described import DescribedRun

# our own wording, small: 2 x 2 x 2 diamond cells (64 atoms, one removed), short runs
SMALL = ("Use metal units with periodic boundaries. Silicon forms a diamond lattice with a lattice constant of 5.431 Å "
         "in a 2 x 2 x 2 unit cell box and interacts through the Stillinger-Weber potential. Give the atoms Gaussian "
         "velocities at 1500 K with zero net momentum. With a 1 fs timestep, hold the temperature at 1500 K with a "
         "Nose-Hoover thermostat (damping 0.1 ps) for 200 steps. Then the atom with ID 10 is deleted. Afterwards, "
         "run parallel-replica dynamics for 200 steps; an event is flagged once any atom moves farther than 0.6 Å. "
         "After each event the configuration is quenched by an energy minimization with energy and force "
         "tolerances of 1e-4 and at most 50 iterations.")


def _prd(desc):
    stages = [s for s in desc.stages if s.prd is not None]
    assert len(stages) == 1, desc.stages
    return stages[0]


def test_the_dev_task_runs_parallel_replica_dynamics_as_stated():
    desc = read_description(dev_text("lammps/21_prd.json"))
    assert desc.renderable, (desc.unsupported, desc.missing)
    equilibration, stage = desc.stages  # the minimisation after events is prd's quench, not a stage
    assert (equilibration.steps, equilibration.dynamics.ensemble, equilibration.prd) == (10000, "nvt", None)
    assert stage.steps == 2000 and stage.dynamics.ensemble == "nvt" and desc.average_stage == 1
    p = stage.prd
    assert (p.steps, p.displacement, p.coordination_cutoff) == (2000, 0.5, 2.835)
    assert (p.loop, p.distribution, p.temperature) == ("all", "uniform", 1800.0)
    assert (p.etol, p.ftol, p.max_iterations, p.max_evaluations) == (1e-5, 1e-5, 100, 100)
    assert (p.t_event, p.n_dephase, p.t_dephase, p.t_correlate, p.seed, p.replicas) == (100, 10, 10, 100, 54985, None)
    assert stage.delete_ids == [300] and equilibration.delete_ids == []  # after the equilibration, as stated
    for key in ("prd.t_event", "prd.n_dephase", "prd.t_dephase", "prd.t_correlate", "prd.seed", "prd.replicas",
                "prd.temperature", "prd.min.max_evaluations"):
        assert desc.origin[key].source == "default", key
    text = render(desc)
    assert "prd             2000 100 10 10 100 prdevent 54985 temp 1800 min 1e-05 1e-05 100 100 vel all uniform\n" \
        in text
    assert "compute         prdevent all event/displace 0.5\n" in text and "coord/atom cutoff 2.835" in text
    stage_two = text.split("# stage 2")[1]
    assert "delete_atoms    group removed2" in stage_two and "\nrun " not in stage_two
    assert "dyn1 all nvt temp 1800 1800 0.1" in stage_two  # the thermostat in force runs the replicas
    assert text.index("atom_modify     sort 0 0.0") < text.index("create_box")
    # prd never ends at a timer timeout: no clean stop, the runner's limit ends it
    assert not re.search(r"^\s*(?:timer|if .*timer)", text, flags=re.M)


@pytest.mark.parametrize(("text", "expected"), [
    # a stated replica count, event interval, threshold, dephasing and quench
    ("Metal units. Equilibrate under NVT at 900 K for 500 steps. Then sample the "
     "vacancy hops with parallel replica dynamics (PRD) for 3000 steps using 3 replicas, checking for events every "
     "50 steps; an atom displaced by more than 0.7 Å signals a transition. Dephasing draws Gaussian velocities. "
     "After each transition the state is relaxed by energy minimization with energy and force tolerances of 1e-6.",
     {"steps": 3000, "replicas": 3, "t_event": 50, "displacement": 0.7, "distribution": "gaussian", "loop": "geom",
      "etol": 1e-6, "temperature": 900.0}),
    # the method named otherwise, the threshold as a criterion, a dephasing temperature, no quench stated
    ("Use metal units. NVT at 600 K for 1000 steps. The parallel-replica method is then used for 1000 timesteps with "
     "a displacement threshold of 0.4 angstrom, dephasing at 650 K with uniform velocities for every atom.",
     {"steps": 1000, "replicas": None, "displacement": 0.4, "temperature": 650.0, "distribution": "uniform",
      "loop": "all", "etol": 0.1, "max_iterations": 40}),
])
def test_paraphrases_make_a_prd_stage(text: str, expected: dict):
    p = _prd(read_description(text)).prd
    assert {k: getattr(p, k) for k in expected} == expected


@pytest.mark.parametrize(("replicas", "launch"), [(None, ("ranks", 1)), (3, (3, 3)), (1, (1, 1))])
def test_a_stated_replica_count_sets_the_partitions_and_ranks(replicas, launch):
    stated = SMALL + (f" Use {replicas} replicas." if replicas else "")
    desc = read_description(stated)
    assert _prd(desc).prd.replicas == replicas
    spec = TaskSpec(request=stated, engine="lammps", properties=[PropertyRequest(name="potential_energy_per_atom")],
                    described=desc.model_dump(mode="json"))
    protocol = DescribedRun()
    (job,) = protocol.jobs(protocol.parameters(spec)[0])
    assert (job.partitions, job.ranks) == launch


@pytest.mark.parametrize("text", [
    "Metal units. The unit cell is replicated 3 x 3 x 3 and equilibrated under NVT at 300 K for 1000 steps.",
    "Metal units. Eight replicas of the simulation box are run independently under NVT at 300 K for 1000 steps, "
    "and atoms that move more than 0.5 Å are counted.",
    "Metal units. Replica exchange (parallel tempering) between 4 temperatures runs for 1000 steps under NVT at "
    "300 K; any atom displaced by more than 1 Å is reported.",
])
def test_replicas_of_a_box_or_replica_exchange_are_not_prd(text: str):
    desc = read_description(text)
    assert all(s.prd is None for s in desc.stages)
    assert not any("parallel replica" in m for m in desc.unsupported + desc.missing)


def test_prd_without_an_event_criterion_is_missing_not_guessed():
    desc = read_description("Metal units. NVT at 800 K for 500 steps, then parallel replica dynamics for 1000 steps.")
    assert any("displacement that makes an event" in m for m in desc.missing) and not desc.renderable


@pytest.mark.parametrize(("text", "ids", "stage"), [
    ("Metal units. NVT at 300 K for 100 steps. Next, remove the atom whose ID is 17. NVE for 200 steps.", [17], 1),
    ("Metal units. Atoms with IDs 4, 9 and 12 are deleted. NVT at 300 K for 100 steps.", [4, 9, 12], 0),
])
def test_atoms_removed_by_id_at_the_stated_point(text: str, ids: list[int], stage: int):
    desc = read_description(text)
    assert [s.delete_ids for s in desc.stages][stage] == ids
    assert sum(len(s.delete_ids) for s in desc.stages) == len(ids)


@pytest.mark.parametrize("text", [
    "Metal units. Remove 10 % of the atoms at random, then NVT at 300 K for 100 steps.",
    "Metal units. The atom IDs are written to the dump. NVT at 300 K for 100 steps.",
])
def test_no_removal_without_an_id(text: str):
    assert all(not s.delete_ids for s in read_description(text).stages)


def test_a_range_of_removed_ids_is_named_not_cut_to_its_first():
    desc = read_description("Metal units. Atoms with IDs 1 to 40 are deleted. NVT at 300 K for 100 steps.")
    assert all(not s.delete_ids for s in desc.stages)
    assert any("range of IDs" in m for m in desc.missing)


def test_partitions_reach_the_command_line():
    one = engine.command("in.lammps", ranks=1, partitions="ranks")
    assert one[-2:] == ["-partition", "1x1"] and "mpiexec" not in one[0]  # one replica still writes log.lammps.0
    two = engine.command("in.lammps", ranks=2, partitions="ranks")
    assert two[1:3] == ["-n", "2"] and two[-2:] == ["-partition", "2x1"]
    assert "-partition" not in engine.command("in.lammps", ranks=2)
    assert engine.command("in.lammps", ranks=2, partitions=1)[-2:] == ["-partition", "1x2"]  # one replica, 2 ranks
    with pytest.raises(InputError, match="evenly"):
        engine.command("in.lammps", ranks=2, partitions=3)


def test_the_dry_run_checks_prd_without_running_it():
    text = render(read_description(SMALL))
    assert dry_run({"in.lammps": text}, time_limit_s=30) == []
    wrong = text.replace("prdevent 54985", "noevent 54985")
    assert any("compute ID for PRD" in e for e in dry_run({"in.lammps": wrong}, time_limit_s=30))


def _by_loop_lines(log: str, t_event: int) -> list[float]:
    """PotEng/Atoms of the rows of the blocks LAMMPS reports as 't_event steps' after the prd command, each
    block's first row left out: read from the 'Loop time ... for N steps' line that closes each block."""
    rows: list[list[float]] = []
    kept: list[float] = []
    for line in log[log.index("\nprd "):].splitlines():
        words = line.split()
        if words[:1] == ["Step"]:
            rows = []
        elif words and re.fullmatch(r"\d+", words[0]) and len(words) == 9:
            rows.append([float(w) for w in words])
        elif (hit := re.match(r"Loop time of \S+ on \d+ procs for (\d+) steps", line)) and int(hit.group(1)) == t_event:
            kept += [r[2] / r[8] for r in rows[1:]]
    return kept


@pytest.mark.parametrize("ranks", [1, 2])
def test_a_short_prd_run_averages_the_dynamics_of_its_replicas(tmp_path, ranks: int):
    desc = read_description(SMALL)
    assert desc.renderable, (desc.unsupported, desc.missing)
    spec = TaskSpec(request=SMALL, engine="lammps", properties=[PropertyRequest(name="potential_energy_per_atom")],
                    described=desc.model_dump(mode="json"))
    protocol = DescribedRun()
    assert protocol.applies_to(spec)
    params, defaults = protocol.parameters(spec)
    assert any(d.parameter == "prd.replicas" for d in defaults)
    (job,) = protocol.jobs(params)
    assert job.partitions == "ranks"
    folder = tmp_path / job.id
    folder.mkdir()
    for name, text in job.inputs.items():
        (folder / name).write_text(text)
    job = job.model_copy(update={"ranks": ranks})  # as the runner spreads it over the job's cores
    done = subprocess.run(engine.command("in.lammps", ranks=ranks, partitions=job.partitions), cwd=folder,
                          capture_output=True, text=True, timeout=120, env=engine.environment())
    assert done.returncode == 0, done.stdout[-2000:]
    out = read_output(folder)
    assert len(out.replicas) == ranks and out.finished and not out.errors
    result = next(r for r in protocol.analyze(params, {job.id: folder}, spec) if r.label is None)
    expected = [v for text in out.replicas for v in _by_loop_lines(text, 100)]
    assert len(expected) == ranks * 200  # each replica: 200 steps of dynamics printed every step, first rows left out
    assert result.value == pytest.approx(np.mean(expected), rel=1e-12)
    assert result.unit == "eV/atom" and f"{ranks} replica(s)" in result.method
    assert f"replica {ranks - 1}: 2 blocks" in result.method
    gated = run_data(folder, job)  # the physics gates judge the same dynamics, with the thermostat's target
    assert gated.series["potential_energy"].size == ranks * 200 and gated.target_temperature == 1500
    quenched = [float(m) for m in re.findall(r"^\s+\d+\s+\S+\s+(-\d+\.\d+)", out.replicas[0].split("\nprd ")[1],
                                             flags=re.M)]
    assert result.value > min(quenched) / 63  # a thermal average lies above the quenched minimum per atom
