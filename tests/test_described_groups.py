"""Layouts in typed simulation descriptions: per-axis boundaries, layers held as walls, forces on
groups, indenter obstacles, a thermostat on one group, and the drag on an obstacle. Every reading
rule is tested on wordings written for these tests (never a task's own wording), and on the MDGym
dev task that prompted it when the dev set is present."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from described_helpers import DEV, run_job

from simagent.described.reading import normalise, read_description
from simagent.models import PropertyRequest, TaskSpec
from simagent.solve import read_metric
from tools.lammps.described import render
from tools.lammps.protocols.described import DescribedRun

CHANNEL = ("A two-dimensional simulation in LJ units. The box spans 30 x 12 lattice units on a hexagonal lattice of "
           "reduced density 0.8, and is periodic along x and shrink-wrapped along y. Particles interact through a "
           "purely repulsive Lennard-Jones potential, epsilon = 1, sigma = 1, cut off at r_c = 2^(1/6) sigma = "
           "1.12246. The atoms with y below 1.5 form the lower wall and those with y above 10.5 the upper wall; both "
           "walls are held rigid. The fluid between them is kept at a temperature of 0.8 by a Berendsen thermostat. "
           "Each fluid atom feels a constant driving force of 0.2 along the x direction, and the upper wall is pushed "
           "by a downward force of 0.1. One obstacle of radius 3 sits at (15, 6), a repulsive indenter with force "
           "constant 50. Integrate with NVE, timestep 0.004, for 3000 steps.")


def test_channel_layout_is_read_from_our_wording():
    desc = read_description(CHANNEL)
    assert desc.renderable, (desc.unsupported, desc.missing)
    assert desc.boundary == ("p", "s", "p")
    assert desc.pair is not None and desc.pair.cutoff == pytest.approx(1.12246)  # the worked value, not the 2
    layout = desc.layout
    assert layout is not None
    blocks = {r.name: r.bounds for r in layout.regions if r.style == "block"}
    assert blocks == {"lower_region": (None, None, None, 1.5, None, None),
                      "upper_region": (None, None, 10.5, None, None, None)}
    assert [g.name for g in layout.groups] == ["lower", "upper", "fluid"] and layout.groups[-1].rest
    assert layout.at_rest == ["lower", "upper"]
    forces = {(f.group, f.style): f.force for f in layout.forces}
    assert forces == {("fluid", "addforce"): (0.2, 0.0, 0.0), ("upper", "aveforce"): (0.0, -0.1, 0.0)}
    assert layout.flow_axis == "x" and layout.thermostat_group == "fluid"
    (ind,) = layout.indenters
    assert (ind.k, ind.radius, ind.center, ind.group) == (50.0, 3.0, (15.0, 6.0, 0.0), "fluid")
    (stage,) = desc.stages
    assert stage.dynamics.thermostat == "berendsen" and stage.dynamics.t_stop == 0.8
    assert "indenters.cleared" in desc.defaults  # deleting the atoms inside an obstacle is listed


def test_channel_renders_group_fixes_in_order():
    text = render(read_description(CHANNEL), drag=True)
    lines = [line.split() for line in text.splitlines() if line.startswith(("fix", "group", "velocity", "delete"))]
    assert ["delete_atoms", "region", "obstacle1_region"] in lines
    assert ["group", "fluid", "subtract", "all", "lower", "upper"] in lines
    assert ["velocity", "upper", "set", "0.0", "0.0", "0.0"] in lines
    fixes = [(w[1], w[2], w[3]) for w in lines if w[0] == "fix"]
    styles = [f[2] for f in fixes]
    assert styles == ["nve", "temp/berendsen", "setforce", "setforce", "aveforce", "addforce", "indent", "enforce2d",
                      "ave/time"]
    assert ("dyn2", "fluid", "temp/berendsen") in fixes
    # the upper wall is held in x and z, and moves as one body in y under the push
    assert "fix             rest_upper upper setforce 0 NULL 0" in text
    assert "fix             rest_lower lower setforce 0 0 0" in text
    assert "ave/time 1 6 6 f_ind_obstacle1[1]" in text and " f_forceavg\n" in text  # every step averaged
    assert "thermo_modify   norm no temp temp_group" in text


@pytest.mark.parametrize("words, boundary", [
    ("non-periodic boundaries in the x and y directions while periodic in z", ("f", "f", "p")),
    ("The boundaries are shrink-wrapped along z and periodic in x and y", ("p", "p", "s")),
    ("fixed boundaries along the y-axis", ("p", "f", "p")),
    ("periodic boundary conditions in all directions", ("p", "p", "p")),
])
def test_boundaries_per_axis(words, boundary):
    text = ("LJ units. Atoms on an fcc lattice of reduced density 0.8 in a 5 x 5 x 5 box, Lennard-Jones cutoff 2.5. "
            f"{words}. Run NVE for 100 steps.")
    desc = read_description(text)
    assert desc.boundary == boundary
    assert "non-periodic boundaries" not in desc.unsupported


def test_a_worked_power_gives_its_value():
    assert "cut at 1.122" in normalise("cut at 2^(1/6) σ = 1.122")
    assert "a = 8 here" in normalise("a = 2^3 = 8 here")


def test_layout_words_no_rule_reads_keep_the_description_unrenderable():
    text = CHANNEL.replace("Integrate with", "A cylindrical region of radius 5 holds a second species. Integrate with")
    desc = read_description(text)
    assert "regions, walls and groups of atoms" in desc.unsupported and not desc.renderable
    with pytest.raises(ValueError, match="regions, walls and groups"):
        render(desc)


def test_an_obstacle_without_its_force_constant_is_missing():
    desc = read_description(CHANNEL.replace("with force constant 50", "pushing atoms out"))
    assert "the obstacles' radius, force constant and centres" in desc.missing


@pytest.mark.parametrize("metric, label", [
    ("average_drag_force_on_obstacle_1", "obstacle1"),  # the dev task's form
    ("Obstacle2-drag", "obstacle2"),
    ("mean drag force", "obstacle1"),
    ("force_on_obstacle_3 (x)", "obstacle3"),
])
def test_drag_metric_names(metric, label):
    target = read_metric(metric)
    assert target.property == "drag_force" and target.label == label


def test_drag_on_an_obstacle_from_a_real_run(tmp_path: Path):
    """A short run of the channel: the fluid, driven along +x, pushes the obstacle downstream (positive
    drag), and over a run started at rest the obstacle cannot take more than the whole driving force
    (N_fluid x 0.2) on average, since the walls also hold the fluid back."""
    text = CHANNEL.replace("3000 steps", "2000 steps")
    protocol = DescribedRun()
    spec = TaskSpec(request=text, properties=[PropertyRequest(name="drag_force"), PropertyRequest(name="temperature")])
    assert protocol.applies_to(spec)
    params, defaults = protocol.parameters(spec)
    assert any(d.parameter == "indenters.group" for d in defaults)
    (job,) = protocol.jobs(params)
    job_dir = run_job(job, tmp_path)
    log = (job_dir / "log.lammps").read_text()
    fluid = int(log.split(" atoms in group fluid")[0].split()[-1])
    results = protocol.analyze(params, {job.id: job_dir}, spec)
    (drag,) = [r for r in results if r.property == "drag_force"]
    assert drag.label == "obstacle1" and drag.unit == "reduced"
    assert 0.0 < drag.value < fluid * 0.2
    (temp,) = [r for r in results if r.property == "temperature"]
    assert temp.value == pytest.approx(0.8, rel=0.1)  # the thermostatted fluid's temperature, walls left out


@pytest.mark.skipif(not (DEV / "lammps_3" / "18_obstacle.json").is_file(), reason="MDGym dev set not present")
def test_dev_task_obstacle_flow_is_complete():
    task = json.loads((DEV / "lammps_3" / "18_obstacle.json").read_text())
    desc = read_description(task["problem_description"])
    assert desc.renderable, (desc.unsupported, desc.missing)
    assert desc.boundary == ("p", "s", "p") and desc.lattice is not None and desc.lattice.scale == 0.7
    assert desc.layout is not None and len(desc.layout.indenters) == 2 and desc.layout.thermostat_group
    assert [read_metric(m).label for m in task["metrics"]] == ["obstacle1", "obstacle2"]


BOUNCING_DROP = ("Reduced LJ units. Particles start on a square lattice of reduced density 0.7 inside a 30 by 30 box, "
                 "filling only a disc-shaped patch of radius 6 centred at (15, 15) that is created there. The box is "
                 "non-periodic in x and y. Pair forces: Lennard-Jones with epsilon = 2, sigma = 1 and cutoff 2.5. "
                 "Velocities are drawn at a temperature of 0.3, and then a uniform velocity (3, -1) is added to every "
                 "particle. Reflecting walls bound the box along the x and y axes. Run NVE with a timestep of 0.002 "
                 "for 500 steps.")
LJ93_BOX = BOUNCING_DROP.replace("Reflecting walls bound the box along the x and y axes.",
                                 "Repulsive LJ 9-3 walls (epsilon 0.5, sigma 1.0, cutoff 1.5) confine it along the x "
                                 "and y axes.")


def test_a_square_lattice_is_two_dimensional_and_a_patch_is_filled():
    desc = read_description(BOUNCING_DROP)
    assert desc.renderable, (desc.unsupported, desc.missing)
    assert desc.dimension == 2 and desc.boundary == ("f", "f", "p")
    layout = desc.layout
    assert layout is not None and layout.create_in == "cluster_region"
    (region,) = layout.regions
    assert (region.style, region.center, region.radius) == ("sphere", (15.0, 15.0, 0.0), 6.0)
    assert layout.velocity_add == (3.0, -1.0, 0.0)
    (wall,) = layout.walls
    assert wall.style == "reflect" and wall.faces == ["xlo", "xhi", "ylo", "yhi"]
    text = render(desc)
    assert text.index("region          cluster_region sphere 15 15 0 6") < text.index("create_atoms    1 region")
    assert text.index("velocity        all create") < text.index("velocity        all set 3 -1 0 sum yes")
    assert "wall/reflect xlo EDGE xhi EDGE ylo EDGE yhi EDGE" in text


def test_a_cluster_without_a_centre_sits_at_the_box_centre_listed():
    desc = read_description(BOUNCING_DROP.replace(" centred at (15, 15)", ""))
    assert desc.layout is not None and desc.layout.regions[0].center == (15.0, 15.0, 0.0)
    assert "cluster.centre" in desc.defaults


def test_lj93_walls_and_the_force_the_atoms_exert_on_them(tmp_path: Path):
    """Atoms thrown at +3 along x against LJ 9-3 walls: the force they exert on the x walls, averaged
    over the run, points along +x (they push the far wall before any rebound), and on the y walls
    along -y; both are bounded by the momentum the walls can reverse, 2 N |v| / t_run."""
    desc = read_description(LJ93_BOX.replace("500 steps", "4000 steps"))
    (wall,) = desc.layout.walls
    assert (wall.style, wall.epsilon, wall.sigma, wall.cutoff) == ("lj93", 0.5, 1.0, 1.5)
    assert read_metric("average_force_in_x_direction").label == "x"
    assert read_metric("mean y-force").label == "y"
    protocol = DescribedRun()
    spec = TaskSpec(request=LJ93_BOX.replace("500 steps", "4000 steps"),
                    properties=[PropertyRequest(name="wall_force")])
    assert protocol.applies_to(spec)
    params, _ = protocol.parameters(spec)
    (job,) = protocol.jobs(params)
    job_dir = run_job(job, tmp_path)
    atoms = int((job_dir / "log.lammps").read_text().split("Created ")[2].split()[0])
    forces = {r.label: r.value for r in protocol.analyze(params, {job.id: job_dir}, spec)}
    t_run = 4000 * 0.002
    assert 0.0 < forces["x"] < 2 * atoms * 3.0 / t_run
    assert -2 * atoms * 1.0 / t_run < forces["y"] < 0.0


@pytest.mark.skipif(not (DEV / "lammps" / "38_balance.json").is_file(), reason="MDGym dev set not present")
def test_dev_task_walled_cluster_is_complete():
    task = json.loads((DEV / "lammps" / "38_balance.json").read_text())
    desc = read_description(task["problem_description"])
    assert desc.renderable, (desc.unsupported, desc.missing)
    assert desc.dimension == 2 and desc.boundary == ("f", "f", "p")
    layout = desc.layout
    assert layout.create_in and layout.velocity_add == (5.0, 2.0, 0.0)
    assert layout.walls[0].faces == ["xlo", "xhi", "ylo", "yhi"]
    assert [read_metric(m).label for m in task["metrics"]] == ["x", "y"]
