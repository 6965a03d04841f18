"""Molecules confined in regions (simagent/described/confinement.py; groups.Region, RegionWall,
Displacement; tools/lammps/described_groups.py): waters inserted at random inside one block, held
inside another by a wall on its surface (fix wall/region), displaced rigidly before the run, and a
text retelling LAMMPS examples/wall in.wall.block filled from that example. Every reading rule is
tested on wordings written here (and the fill on the MDGym dev task's own text, skipped when absent);
the real runs are small boxes of a few hundred atoms and a few tens of steps, and assert what the run
itself shows (LAMMPS stops with an error when an atom is outside a wall/region's surface; atom
positions written by the run), never numbers copied from an earlier run."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from described_helpers import dev_text, run_inputs, run_job

from simagent.described.confinement import WALL_GAP
from simagent.described.reading import read_description
from simagent.models import PropertyRequest, TaskSpec
from tools.lammps.described import render
from tools.lammps.described_molecular import files as molecule_files
from tools.lammps.protocols.described import DescribedRun

# our own wording of in.wall.block's setup with every number of the dev task (not its sentences)
OURS = ("Real units. Take 5000 TIP3P water molecules in a 200*200*200 A^3 periodic cubic box and hold them at 300 K "
        "with a Nose-Hoover thermostat (NVT). The molecules are placed at random inside a cube spanning (-70 A to "
        "70 A), and a harmonic wall keeps them confined inside the cubic region between -80 A and 80 A. SHAKE keeps "
        "each water rigid; the bond length is fixed at 0.9574 A and the H-O-H angle is fixed at 104.52 degrees "
        "with bond_style zero and angle_style zero. Pairs interact by Lennard-Jones and Coulomb terms, both cut off "
        "at 8.0 A, with LJ on the oxygens only (epsilon = 0.1521 kcal/mol, sigma = 3.1507 A). Just before the run "
        "the whole configuration is moved with displace_atoms all move 0.05 0.9 0.4 units box. Run 1000 steps with "
        "a 1 fs timestep.")
# a small box that is not the example: the wall's constants stated, a displacement in prose
SMALL = ("A droplet test in real units: 200 SPC/E water molecules in a cubic box of 40*40*40 A^3. The waters are "
         "inserted at random in a cubic region from -12 A to 12 A. A 9-3 wall on the surface of the cube from -16 A "
         "to 16 A (epsilon = 0.2, sigma = 3.0, cutoff = 4.0) keeps them confined. LJ and Coulomb are cut off at "
         "8.0 A, no long-range solver; SHAKE keeps the molecules rigid. Before the run every atom is shifted by "
         "(0.5, -0.25, 0.75) A. NVT with a Nose-Hoover thermostat at 350 K for 30 steps.")


def _lines(desc) -> list[str]:  # the input, without the comments quoting each text's run sentences
    return [line for line in render(desc).splitlines() if not line.startswith("#")]


def test_our_wording_and_the_dev_task_read_to_the_same_confined_water():
    ours, dev = read_description(OURS), read_description(dev_text("lammps/63_wall.json"))
    for desc in (ours, dev):
        assert desc.renderable, (desc.missing, desc.unsupported)
        assert desc.box is not None and desc.box.lo == (-100.0,) * 3 and desc.box.hi == (100.0,) * 3
        regions = {r.name: r.bounds for r in desc.layout.regions}
        assert regions == {"insertion": (-70.0, 70.0) * 3, "confinement": (-80.0, 80.0) * 3}
        (wall,) = desc.layout.region_walls
        assert (wall.style, wall.region, wall.epsilon, wall.sigma, wall.cutoff, wall.energy) == (
            "harmonic", "confinement", 1000.0, 0.0, 2.5, True)
        (place,) = desc.placements
        assert (place.molecule, place.count, place.region, place.seed, place.mol_seed, place.overlap) == (
            "water", 5000, "insertion", 12345, 12345, 2.0)
        assert desc.layout.displacements[0].move == (0.05, 0.9, 0.4) and desc.layout.displacements[0].box_units
        assert desc.molecular.prepare is False and desc.molecular.shake.tolerance == 0.001
        assert desc.velocity.seed == 12345 and desc.thermo_every == 1 and desc.timestep == 1.0
        for key in ("wall.constants", "wall.energy", "molecular.insertion", "velocity", "thermo_every",
                    "molecular.shake_tolerance"):
            assert "examples/wall (in.wall.block)" in desc.defaults[key]
        assert "1000 are run" in desc.origin["example.departures"].evidence  # the example runs 100
    assert _lines(ours) == _lines(dev)


def test_the_rendered_order_creates_velocities_before_shake_and_displaces_last():
    text = render(read_description(OURS))
    order = [text.index(w) for w in ("region          insertion", "create_atoms    0 random 5000 12345 insertion",
                                     "fix             rwall1 all wall/region confinement harmonic 1000 0 2.5",
                                     "fix_modify      rwall1 energy yes", "velocity        all create 300 12345",
                                     "fix             shake all shake 0.001 10", "displace_atoms  all move 0.05 0.9 "
                                     "0.4 units box", "fix             dyn1 all nvt temp 300 300 100")]
    assert order == sorted(order)
    assert "minimize" not in text and "lattice" not in text and "thermo          1\n" in text


def test_a_grid_placed_water_keeps_its_preparation_and_shake_before_the_velocities():
    text = render(read_description("Real units. 100 SPC/E water molecules in a cubic box of 20*20*20 A^3, "
                                   "LJ and Coulomb cut at 8 A, SHAKE, NVT at 300 K for 20 steps."))
    assert text.index("fix             shake") < text.index("minimize") < text.index("velocity        all create")
    assert "wall/region" not in text and "displace_atoms" not in text


def test_a_small_confined_box_reads_its_own_numbers_and_is_not_the_example():
    desc = read_description(SMALL)
    assert desc.renderable, (desc.missing, desc.unsupported)
    (wall,) = desc.layout.region_walls
    assert (wall.style, wall.epsilon, wall.sigma, wall.cutoff, wall.energy) == ("lj93", 0.2, 3.0, 4.0, False)
    assert "fix_modify energy no" in desc.defaults["wall.energy"]
    assert desc.box.lo == (-20.0,) * 3 and desc.layout.displacements[0].move == (0.5, -0.25, 0.75)
    assert not any("in.wall.block" in v for v in desc.defaults.values())


def test_the_small_box_runs_inside_its_wall_and_starts_where_it_was_inserted_and_shifted(tmp_path: Path):
    desc = read_description(SMALL)
    text = render(desc)
    # zero steps: the positions as made, inserted and displaced
    start = text.replace("run             30", "run             0") + "write_dump all custom start.dump id type x y z\n"
    folder = run_inputs({"in.lammps": start, **molecule_files(desc)}, tmp_path / "start")
    rows = np.loadtxt(folder / "start.dump", skiprows=9)
    oxygens = rows[rows[:, 1] == 1][:, 2:5] - np.array([0.5, -0.25, 0.75])
    assert len(rows) == 600 and np.all(np.abs(oxygens) <= 12.0 + 1.0)  # centres in the block, O within 1 A of it
    assert np.any(np.abs(oxygens) > 8.0)  # and spread over it, not on a small grid at the centre
    # 30 steps at 350 K: fix wall/region stops the run with an error if any atom crosses the cube's surface
    log = (run_inputs({"in.lammps": text, **molecule_files(desc)}, tmp_path / "run") / "log.lammps").read_text()
    assert "Loop time" in log and not re.search(r"ERROR|outside surface", log)


def test_the_described_protocol_reads_the_run_without_a_preparation_block(tmp_path: Path):
    protocol = DescribedRun()
    spec = TaskSpec(request=SMALL, properties=[PropertyRequest(name="temperature")])
    params, _ = protocol.parameters(spec)
    (job,) = protocol.jobs(params)
    job_dir = run_job(job, tmp_path)
    (temperature,) = protocol.analyze(params, {job.id: job_dir}, spec)
    log = (job_dir / "log.lammps").read_text()
    assert log.count("Loop time") == 1  # one run, no minimisation before it
    assert temperature.value > 0 and "30 steps" in temperature.method


def test_a_wall_without_its_constants_outside_the_example_is_missing_them():
    desc = read_description(SMALL.replace(" (epsilon = 0.2, sigma = 3.0, cutoff = 4.0)", ""))
    assert WALL_GAP in desc.missing and not desc.renderable


def test_a_harmonic_wall_needs_no_sigma():
    desc = read_description(SMALL.replace("A 9-3 wall", "A harmonic wall").replace("(epsilon = 0.2, sigma = 3.0, "
                                                                                   "cutoff = 4.0)",
                                                                                   "(force constant 50, cutoff 3)"))
    (wall,) = desc.layout.region_walls
    assert desc.renderable and (wall.style, wall.epsilon, wall.sigma, wall.cutoff) == ("harmonic", 50.0, 0.0, 3.0)


def test_another_count_is_not_the_example_and_is_named():
    desc = read_description(OURS.replace("5000 TIP3P", "4000 TIP3P"))
    assert WALL_GAP in desc.missing
    assert "molecules 4000 where LAMMPS examples/wall (in.wall.block) has 5000" in desc.origin["example.wall"].evidence


def test_a_number_no_rule_reads_stops_the_fill():
    desc = read_description(OURS.replace("Run 1000", "The dielectric constant is 1.5. Run 1000"))
    assert WALL_GAP in desc.missing and "what the numbers 1.5 are (stated, not understood)" in desc.missing


@pytest.mark.parametrize("words", ["the cubic region between 0 A and 160 A", "the cubic region from 20 A to 180 A"])
def test_regions_stated_from_zero_leave_the_box_where_it_is(words):
    desc = read_description(SMALL.replace("40*40*40", "200*200*200").replace("from -12 A to 12 A", "from 30 A to 150 A")
                            .replace("the cube from -16 A to 16 A", words.replace("the cubic region", "the cube")))
    assert desc.box.lo == (0.0, 0.0, 0.0)


def test_a_region_that_does_not_fit_the_centred_box_is_missing():
    desc = read_description(SMALL.replace("from -16 A to 16 A", "from -30 A to 30 A"))
    assert "where the stated regions lie in the box" in desc.missing


def test_a_span_for_a_region_of_a_box_that_is_not_cubic_needs_every_axis():
    desc = read_description(SMALL.replace("a cubic box of 40*40*40", "a box of 40*40*60").replace(
        "in a cubic region", "in a region"))
    assert "the extent of the insertion region on every axis" in desc.missing


@pytest.mark.parametrize("words, move, box", [
    ("displace_atoms all move 1 0 -2", (1.0, 0.0, -2.0), False),  # a quoted command: lattice units by default
    ("displace_atoms all move 1 0 -2 units box", (1.0, 0.0, -2.0), True),
    ("all atoms are translated by a vector (0.2, 0.0, 0.1) A", (0.2, 0.0, 0.1), True),
])
def test_displacements_in_command_and_prose(words, move, box):
    desc = read_description(SMALL.replace("every atom is shifted by (0.5, -0.25, 0.75) A", words))
    (d,) = desc.layout.displacements
    assert (d.group, d.move, d.box_units) == ("all", move, box)


@pytest.mark.parametrize("words, dt", [("The timestep should be 2 fs.", 2.0), ("The time step must be 0.5 fs.", 0.5),
                                       ("The timestep is set to 1.5 fs.", 1.5)])
def test_a_timestep_said_with_should_or_set_to_is_read(words, dt):
    desc = read_description(SMALL + " " + words)
    assert desc.timestep == dt and desc.origin["timestep"].source == "rules"
