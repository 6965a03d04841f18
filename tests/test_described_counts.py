"""A particle count the text states is checked against the run (stop 22). The count is read in the
dev task's wording and in rewordings written for these tests; a run that makes another number of
particles than stated answers with a warning that says so (it is never resized to match)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from described_helpers import run_job as run_lammps

from simagent.described.reading import read_description
from simagent.models import PropertyRequest, TaskSpec
from tools.lammps.protocols.described import DescribedRun

SETUP = ("Reduced LJ units. Particles sit on a hexagonal lattice of reduced density 0.85 in a periodic box of 20*10; "
         "LJ epsilon 1.0, sigma 1.0, cutoff 2.5. Velocities at a temperature of "
         "0.5. NVE for 200 timesteps with a timestep of 0.002. ")


@pytest.mark.parametrize(("words", "count"), [
    # MDGym dev task 38_balance's own sentence
    ("Compute the average force for a system of particles (361) arranged initially on a hexagonal lattice.", 361),
    # rewordings written for this test
    ("The cluster holds 361 atoms in all.", 361),
    ("The number of particles is 250; they start on a hexagonal lattice.", 250),
    ("We simulate 1200 identical particles, and the 1200 particles interact through LJ.", 1200),
])
def test_a_stated_particle_count_is_read(words, count):
    assert read_description(SETUP + words).stated_atoms == count


@pytest.mark.parametrize("words", [
    "The lattice has a basis of 2 atoms per cell.",  # per cell, not the system's
    "800 atoms of type 1 and 200 atoms of type 2 are mixed.",  # one kind's count each
    "Start with 100 particles; after the insertion there are 300 particles.",  # two different counts
])
def test_no_system_count_where_the_text_states_none(words):
    assert read_description(SETUP + words).stated_atoms is None


def hex_points_in_circle(density: float, box: tuple[int, int], centre: tuple[float, float], radius: float) -> int:
    """Points of LAMMPS's 2D hex lattice (cell 1 x sqrt 3 lattice spacings, basis (0, 0) and (1/2, 1/2))
    inside a circle given in lattice units (x scaled by the spacing a, y by a sqrt 3, the radius by a),
    counted here without LAMMPS. Distances are in units of a."""
    root3 = math.sqrt(3.0)
    cx, cy, r = centre[0], centre[1] * root3, radius
    count = 0
    for i in range(box[0]):
        for j in range(box[1]):
            for bx, by in ((0.0, 0.0), (0.5, 0.5)):
                x, y = i + bx, (j + by) * root3
                count += (x - cx) ** 2 + (y - cy) ** 2 <= r * r
    return count


def test_a_run_making_another_count_than_stated_says_so(tmp_path: Path):
    # the circle at the box centre (10, 5), diameter 7.6 (no lattice point on it): counted without LAMMPS
    made = hex_points_in_circle(0.85, (20, 10), (10.0, 5.0), 3.8)
    protocol = DescribedRun()
    for stated, tag in ((made, "same"), (made + 6, "other")):
        text = (SETUP + f"A circular cluster of particles with diameter 7.6 was created in the box; it holds {stated} "
                "particles. Report the average potential energy per particle.")
        spec = TaskSpec(request=text, properties=[PropertyRequest(name="potential_energy_per_atom")])
        params, _ = protocol.parameters(spec)
        assert params.description.stated_atoms == stated
        (job,) = protocol.jobs(params)
        (result,) = protocol.analyze(params, {job.id: run_lammps(job, tmp_path / tag)}, spec)
        found = [w for w in result.warnings if "particles, the run made" in w]
        if tag == "same":
            assert found == []
        else:
            assert found and f"states {made + 6} particles, the run made {made}" in found[0]
            assert "cluster.centre" in found[0]  # the unstated placement that was filled is named


# LAMMPS examples/balance retold: the dev task's own words (38_balance) and a rewording written for this test
BALANCE_TASK = (
    "Compute the average force exterted by particles in the x-direction, and y-direction for a system of particles "
    "(361) arranged initially on a hexagonal lattice with a reduced number density of 0.85 (in reduced unit) in a "
    "rectangular simulation box of 50*20 in reduced unit. A circular cluster of particles with diameter 20 (in "
    "reduced unit) was created within the simulation box. Periodic boundary conditions are applied in the "
    "z-direction, while non-periodic boundary conditions are applied in the x and y directions. The particles "
    "interact via a Lennard-Jones potential with a parameters of \u03f5=10.0 and \u03c3=1.0, and a cutoff distance of "
    "2.5\u03c3. The system is evolved in the NVE enseble using a time step of 0.001 in reduced LJ units. Initial "
    "velocities were assigned corresponding to a temperature of 0.5 and an uniform velocity component v_x = 5 and "
    "v_y =2 was imposed on all particles. To confine the particles, repulsive walls were applied along the x and y "
    "directions using 9-3 LJ potentials with parameters (epsilon =1, sigma = 1, and cutoff=2.5). The simulation "
    "should run for a total of 1,00,000 timesteps.")
BALANCE_REWORDED = (
    "In reduced LJ units and two dimensions, {count} particles sit on a hexagonal lattice of reduced density 0.85 "
    "inside a box of 50*20 that is periodic along z and non-periodic along x and y. Only a circular cluster of "
    "particles of diameter {diameter} is created, inside the box. Pair interactions: Lennard-Jones with epsilon = "
    "10.0, sigma = 1.0 and cutoff 2.5 sigma. Velocities are drawn at a temperature of 0.5, and a uniform velocity "
    "v_x = 5 and v_y = 2 is added to every particle. LJ 9-3 walls confine the particles along x and y (epsilon = 1, "
    "sigma = 1, cutoff = 2.5). Integrate in NVE with a timestep of 0.001 for {steps} steps.")
BALANCE_CENTRE = (11.0, 20 / 2 / math.sqrt(3.0) + 1, 0.0)  # in.balance: $(v_d/2+1) $(v_d/2/sqrt(3.0)+1) 0.0


def cluster_centre(text: str):
    desc = read_description(text)
    (disc,) = [r for r in desc.layout.regions if r.name == desc.layout.create_in]
    return desc, disc.center


@pytest.mark.parametrize("text", [BALANCE_TASK, BALANCE_REWORDED.format(count=361, diameter=20, steps=100000)])
def test_a_text_retelling_examples_balance_places_the_disc_as_the_example(text):
    desc, centre = cluster_centre(text)
    assert centre == pytest.approx(BALANCE_CENTRE)
    assert "LAMMPS examples/balance" in desc.origin["cluster.centre"].evidence
    assert desc.stated_atoms == 361 and desc.renderable, desc.missing


@pytest.mark.parametrize(("count", "diameter"), [(361, 16), (367, 20)])
def test_another_disc_or_count_is_not_the_balance_example(count, diameter):
    # a different disc, or a count the example's disc does not hold: the box centre stays (listed as a default)
    desc, centre = cluster_centre(BALANCE_REWORDED.format(count=count, diameter=diameter, steps=100000))
    assert centre == pytest.approx((25.0, 10.0, 0.0))
    assert "examples/balance" not in desc.origin["cluster.centre"].evidence


def test_the_balance_disc_holds_the_stated_count_in_a_real_run(tmp_path: Path):
    """The example's disc holds the 361 particles the text states (LAMMPS examples/balance/
    log.3Nov23.balance.g++.2: 'Created 361 atoms'); the box centre would hold 367, which the answer
    would then have to warn about."""
    text = BALANCE_REWORDED.format(count=361, diameter=20, steps=200) + " Report the average potential energy."
    protocol = DescribedRun()
    spec = TaskSpec(request=text, properties=[PropertyRequest(name="potential_energy_per_atom")])
    params, _ = protocol.parameters(spec)
    (job,) = protocol.jobs(params)
    folder = run_lammps(job, tmp_path)
    (result,) = protocol.analyze(params, {job.id: folder}, spec)
    assert "Created 361 atoms" in (folder / "log.lammps").read_text()
    assert not [w for w in result.warnings if "the run made" in w]
