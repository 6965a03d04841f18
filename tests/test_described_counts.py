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
