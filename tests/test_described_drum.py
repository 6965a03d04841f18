"""A rotating drum in typed simulation descriptions (simagent/described/drum.py, tools/lammps/
described_drum.py): a text retelling LAMMPS examples/granular in.pour.drum (a 30 x 30 x 50 box, a
drum of radius 15 and height 20, 2000 Hertz and 2000 JKR spheres poured, gravity -z then -y, the
cylinder and plane walls rotated by theta = 2*PI*elapsed/20000) gets the example's unstated numbers,
each listed; a stated number that differs stops the fill and is named. Every reading rule is tested
on a wording written here and on the MDGym dev task's own text (skipped when absent); the real run
checks what can be asserted (insertion, the printed angle following its variable, the direction
gravity pulls), not numbers copied from a run."""

from __future__ import annotations

import math
import re

import pytest
from described_helpers import dev_text, run_named

from simagent.described.reading import read_description
from simagent.solve import read_metric
from tools.lammps.described import render

# our own wording of the drum, every setup number the example's
OURS = ("A rotating-drum powder test in LJ units. The simulation box is 30 x 30 x 50, periodic along x and y "
        "with a fixed boundary along z. A cylindrical drum with radius 15 and height 20 stands in the middle of "
        "the box. Two kinds of spheres are poured into it: non-cohesive grains (type 1, Hertzian contacts) and "
        "cohesive grains (type 2, JKR adhesion), 2000 of each kind. They settle for 2000 steps under gravity "
        "pointing along -z, integrated with nve/sphere. Then gravity is switched to -y and the cylinder and the "
        "plane walls turn with the angle theta = 2*PI*elapsed/20000, so the drum makes one turn every 20000 "
        "steps; the rotating run lasts 5000 steps. Report the mean drum angle v_theta.")



def _lines(desc) -> list[str]:  # the input, without the comments quoting each text's run sentences
    return [line for line in render(desc, rotation_angle=True).splitlines() if not line.startswith("#")]


def test_our_wording_and_the_dev_task_read_to_the_same_drum():
    ours, dev = read_description(OURS), read_description(dev_text("lammps/54_granular.json"))
    for desc in (ours, dev):
        assert desc.renderable, (desc.missing, desc.unsupported)
        d = desc.drum
        assert d is not None
        assert (d.radius, d.height, d.centre, d.counts, d.period) == (15.0, 20.0, (15.0, 15.0), (2000, 2000), 20000.0)
        assert d.settle_direction == (0.0, 0.0, -1.0) and d.rotate_direction == (0.0, -1.0, 0.0)
        assert [desc.stages[i].steps for i in desc.run_stages()] == [2000, 5000]
        assert desc.average_stage == desc.run_stages()[-1] and desc.timestep == 0.001
        # left out by both texts: the contact models, the pour, gravity's magnitude, each listed with the example
        assert d.pairs["2 2"].normal == "jkr" and d.pairs["1 *"].normal == "hertz/material" and d.gravity == 10.0
        for key in ("drum.pairs", "drum.wall", "drum.pour", "drum.gravity_magnitude", "drum.lid", "timestep"):
            assert "in.pour.drum" in desc.defaults[key]
        # the stated 5000 rotating steps win over the example's 3000, and report.md says so
        assert "5000" in desc.origin["drum.departures"].evidence
    assert _lines(ours) == _lines(dev)


def test_the_rendered_drum_rotates_its_walls_by_the_stated_variable_only_in_the_last_stage():
    text = render(read_description(OURS), rotation_angle=True)
    first, second = text.split("# stage 2", 1)
    assert "variable        theta equal 0" in first and "2*PI*elapsed/20000" in second
    assert len(re.findall(r"rotate v_theta 15 15 0 0 0 1", text)) == 3  # cylinder, bottom, lid
    assert "gravity 10 vector 0 0 -1" in first and "gravity 10 vector 0 -1 0" in second
    assert "unfix           gravity" in second and "unfix           pour1" in second
    assert re.search(r"thermo_style .* v_theta\n", second) and "v_theta" not in first.split("thermo_style")[-1]
    assert "damping tsuji" not in next(line for line in text.splitlines() if " jkr " in line)  # LAMMPS refuses it


def test_another_radius_is_not_the_example_and_is_named():
    desc = read_description(OURS.replace("radius 15", "radius 12"))
    assert desc.drum is None and not desc.renderable
    assert "radius 12 where LAMMPS examples/granular (in.pour.drum) has 15" in desc.origin["example.granular"].evidence


def test_a_number_no_rule_reads_stops_the_fill():
    desc = read_description(OURS.replace("Report", "The drum is tilted by 5 degrees. Report"))
    assert desc.drum is None
    assert "what the numbers 5 are (stated, not understood)" in desc.missing


def test_a_restated_period_that_contradicts_theta_stops_the_fill():
    desc = read_description(OURS.replace("every 20000 steps", "every 10000 steps"))
    assert desc.drum is None and not desc.renderable


def test_an_unstated_boundary_is_the_examples_and_listed():
    desc = read_description(OURS.replace(", periodic along x and y with a fixed boundary along z", ""))
    assert desc.drum is not None and desc.boundary == ("p", "p", "f")
    assert "in.pour.drum" in desc.defaults["boundary"]


def test_a_stated_timestep_wins_and_is_listed_as_a_departure():
    desc = read_description(OURS.replace("Report", "The time step is 0.0005. Report"))
    assert desc.drum is not None and desc.timestep == 0.0005
    assert "timestep 0.0005 is run" in desc.origin["drum.departures"].evidence


@pytest.mark.parametrize("metric", ["average_rotational_angle", "Mean drum angle", "angle of rotation (v_theta)",
                                    "avg-rotation-angle"])
def test_metric_names_of_the_drum_angle(metric):
    assert read_metric(metric).property == "rotation_angle"


def _column(log: str, name: str, block: int) -> list[tuple[int, float]]:
    """(step, value) of one thermo column in the block-th thermo block of the log."""
    blocks, rows, head = [], [], None
    for line in log.splitlines():
        words = line.split()
        if words[:1] == ["Step"]:
            head, rows = words, []
            blocks.append(rows)
        elif head and len(words) == len(head) and re.fullmatch(r"\d+", words[0]):
            rows.append(dict(zip(head, words, strict=True)))
        elif words[:2] == ["Loop", "time"]:
            head = None
    return [(int(r["Step"]), float(r[name])) for r in blocks[block]]


def test_a_short_drum_run_pours_both_types_turns_gravity_and_prints_the_angle_it_rotates_by(tmp_path):
    """A small drum (50 + 50 spheres, 200 settling + 300 rotating steps, one turn per 1000 steps):
    both pours insert, gravity pulls along -z and then along -y (the centre of mass moves that way),
    and the printed v_theta, the variable the three walls rotate by, is 2*pi*elapsed/period on every row
    (elapsed counted from the rotating run's start) and 0 while the particles settle."""
    desc = read_description(OURS)
    assert desc.drum is not None
    desc.drum = desc.drum.model_copy(update={"counts": (50, 50), "period": 1000.0})
    settle, rotate = (desc.stages[i] for i in desc.run_stages())
    settle.steps, rotate.steps = 200, 300
    text = render(desc, rotation_angle=True)
    probes = ["variable        ycm equal xcm(all,y)", "variable        zcm equal xcm(all,z)",
              "variable        istwo atom type==2", "compute         ntwo all reduce sum v_istwo"]
    text = text.replace("thermo_style    custom step temp pe ke etotal press vol density atoms\n",
                        "\n".join(probes) + "\nthermo_style    custom step atoms v_ycm v_zcm c_ntwo v_theta\n", 1)
    text = text.replace("density atoms v_theta", "density atoms v_theta v_ycm v_zcm", 1)
    log = run_named(text, tmp_path, "drum")
    atoms = _column(log, "Atoms", 0)
    assert atoms[0][1] == 0 and atoms[-1][1] == 100 and _column(log, "c_ntwo", 0)[-1][1] == 50
    assert all(theta == 0.0 for _, theta in _column(log, "v_theta", 0))
    zcm = [z for step, z in _column(log, "v_zcm", 0) if step > 0]
    assert zcm[-1] < zcm[0]  # falling along -z
    ycm = _column(log, "v_ycm", 0)
    assert abs(ycm[-1][1] - ycm[1][1]) < 0.1 * (zcm[0] - zcm[-1])  # no pull along y while settling
    theta = _column(log, "v_theta", 1)
    start = theta[0][0]
    for step, value in theta:
        assert value == pytest.approx(2 * math.pi * (step - start) / 1000.0, rel=1e-6, abs=1e-7)
    assert theta[-1][0] - start == 300
    ycm = _column(log, "v_ycm", 1)
    assert ycm[-1][1] < ycm[0][1]  # gravity now pulls along -y
