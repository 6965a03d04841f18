"""A repeated box scaling in typed simulation descriptions (simagent.described.box_scaling): the loop read from
wordings written for these tests, unrolled into stages that scale the box and keep the thermostat and barostat
running, and averaged over its cycles; a single scaling or a factor without repetition is not this loop. Also
the damping of a thermostat and a barostat stated as a pair, each number followed by its coupling."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from described_helpers import run_job

from simagent.backends.expert.protocol_text import read_dynamics
from simagent.described.box_scaling import DEFORM_NAME, scaling_statement
from simagent.described.reading import read_description
from simagent.models import PropertyRequest, TaskSpec
from tools.lammps.described import render
from tools.lammps.protocols.described import DescribedRun

LJ_SOLID = ("Lennard-Jones atoms on an fcc lattice in LJ units at reduced density 1.1, a 4 x 4 x 4 box, epsilon 1, "
            "sigma 1, "
            "cutoff 2.5. Velocities are created at T = 0.3; a Nose-Hoover thermostat at 0.3 and barostat at "
            "pressure 1.0 (NPT) run for 40 steps. ")
SHRINK_Y = LJ_SOLID + ("Ten times in a row, the cell length in y is multiplied by 0.98 with the atoms remapped; after "
                       "every such rescaling the system runs 30 more steps.")
SHRINK_Z = LJ_SOLID + ("The box is then shrunk along z by a factor of 0.995, repeated 5 times. Each shrink is "
                       "followed by 20 steps of the same dynamics.")


@pytest.mark.parametrize("text, axes, factor, times, steps", [
    (SHRINK_Y, "y", 0.98, 10, 30),
    (SHRINK_Z, "z", 0.995, 5, 20),
])
def test_a_scaling_loop_is_unrolled_into_stages(text, axes, factor, times, steps):
    desc = read_description(text)
    assert desc.renderable, (desc.unsupported, desc.missing)
    assert [s.steps for s in desc.stages] == [40] + [steps] * times
    scaled = desc.stages[1:]
    assert all(s.scale_box is not None and s.scale_box.axes == axes and s.scale_box.factor == factor for s in scaled)
    assert all(s.keep_fixes for s in scaled) and desc.stages[0].scale_box is None
    assert (desc.average_from, desc.average_stage) == (1, times)  # the cycles, not the run before them
    assert "scaling cycles" in desc.defaults["average_stage"]
    text_in = render(desc)
    assert text_in.count("change_box") == times and text_in.count("fix             dyn1") == 1
    assert "unfix" not in text_in  # one barostat, kept through the loop


@pytest.mark.parametrize("sentence", [
    "The box is compressed once along x by a factor of 0.95, then the system runs 40 more steps.",  # one scaling
    "The box is scaled along x by a factor of 0.99 and each run afterwards lasts 40 steps.",  # no repetition
    "The box is scaled along x by a factor of 0.99 over 1 cycle, followed by 40 steps.",  # not repeated
])
def test_one_scaling_or_no_repetition_is_not_a_loop(sentence):
    assert scaling_statement(sentence.lower()) is None
    desc = read_description(LJ_SOLID + sentence)
    assert not any(s.scale_box for s in desc.stages)
    assert DEFORM_NAME in desc.unsupported  # still refused by name


def test_a_loop_beside_another_deformation_keeps_the_refusal():
    desc = read_description(SHRINK_Z + " Afterwards the box is sheared at a strain rate of 0.01.")
    assert DEFORM_NAME in desc.unsupported


@pytest.mark.parametrize("text, thermostat, barostat", [
    ("a nose-hoover npt run with damping parameters of 100 fs (thermostat) and 1000 fs (barostat).", 100, 1000),
    ("npt with relaxation times of 2 ps for the barostat and 0.1 ps for the thermostat.", 100, 2000),
    ("fix npt, coupling constants 50 (thermostat) and 500 (barostat) fs.", 50, 500),
])
def test_paired_damping_each_number_with_its_coupling(text, thermostat, barostat):
    found = read_dynamics(text, False)
    desc = read_description("Argon as an fcc crystal, lattice constant 5.26 A, a 3 x 3 x 3 box, real units, LJ "
                            "epsilon 0.238 kcal/mol, sigma 3.4 A, cutoff 8.5 A, mass 39.95. Velocities at 50 K. "
                            "Then " + text.rstrip(".") + " at 50 K and 1 atm for 100 steps.")
    dyn = desc.stages[0].dynamics
    assert (dyn.t_damp, dyn.p_damp) == (thermostat, barostat)  # in fs, real units' time unit
    assert {found["thermostat_damping"].unit, found["barostat_damping"].unit} <= {"fs", "ps"}


def test_one_damping_stays_the_thermostat_s():
    found = read_dynamics("a nose-hoover thermostat with a damping parameter of 100 fs", False)
    assert "barostat_damping" not in found and found["thermostat_damping"].value == 100


def test_scaling_loop_runs_and_averages_its_cycles(tmp_path: Path):
    """3 cycles of 10 steps: each cycle's first thermo row has 0.97 of the previous row's volume (only y
    scaled, atoms remapped), and the averages are over every row of the three cycles."""
    text = LJ_SOLID + ("Three times over: scale the box along y by a factor of 0.97, and after each scaling run "
                       "10 steps.")
    protocol = DescribedRun()
    spec = TaskSpec(request=text, properties=[PropertyRequest(name="temperature"),
                                              PropertyRequest(name="total_energy_per_atom")])
    params, _ = protocol.parameters(spec)
    assert [s.steps for s in params.description.stages] == [40, 10, 10, 10]
    (job,) = protocol.jobs(params)
    job_dir = run_job(job, tmp_path)
    log = (job_dir / "log.lammps").read_text()
    blocks = []
    for block in re.findall(r"^\s+Step (.*)\n((?:\s+\d+ .*\n)+)", log, flags=re.M):
        names = ["Step", *block[0].split()]
        rows = np.array([[float(x) for x in line.split()] for line in block[1].strip().splitlines()])
        blocks.append({n: rows[:, i] for i, n in enumerate(names)})
    assert len(blocks) == 4
    for before, after in zip(blocks, blocks[1:], strict=False):
        assert after["Volume"][0] == pytest.approx(0.97 * before["Volume"][-1], rel=1e-6)  # 8 printed digits
    results = {r.property: r for r in protocol.analyze(params, {job.id: job_dir}, spec) if r.label is None}
    temps = np.concatenate([b["Temp"] for b in blocks[1:]])
    assert results["temperature"].value == pytest.approx(temps.mean(), rel=1e-9)
    assert "stages 2-4" in results["temperature"].method
