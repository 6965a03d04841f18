"""Bonded-particle pillars squeezed along z (simagent/described/pillars.py, tools/lammps/
described_pillars.py): a text retelling LAMMPS examples/bpm/poissons_ratio (a 20 x 20 x 22 box, an fcc
cylinder of radius 7 and height 20 settled inside a harmonic wall of radius 8, replicate 4 1 1, one
bpm/spring bond type per pillar, a held bottom slab and a top slab moving down) gets the example's
unstated numbers, each listed; a stated number that differs stops the fill and is named. Every reading
rule is tested on a wording written here and on the MDGym dev task's own text (skipped when absent);
the real run checks what can be asserted (the top moves at the set velocity, the bonds exist, the
analysis follows its definition), not numbers copied from a run."""

from __future__ import annotations

import re

import numpy as np
import pytest
from described_helpers import dev_text, run_inputs

from simagent.described.reading import read_description
from simagent.models import PropertyRequest, TaskSpec
from simagent.solve import read_metric
from tools.lammps.described import render
from tools.lammps.described_pillars import height_column, poisson_results, width_column
from tools.lammps.parse import read_output
from tools.lammps.protocols.described import DescribedRun

# our own wording of the set-up, every identifying number the example's
OURS = ("We squeeze four elastic columns made with the bonded particle model (BPM, bpm/spring) in LJ units, 3D. "
        "The box measures 20 x 20 x 22, periodic along x and y and shrink-wrapped along z. Particles sit on an "
        "fcc lattice of reduced density 1.41 inside a cylindrical pillar with radius 7 and height 20; a harmonic "
        "wall with radius 8 keeps them in while they relax with NVE for 5000 steps, velocities drawn at a "
        "temperature of 0.1. Afterwards the wall is taken away and the column is copied four times along x "
        "(replicate 4 1 1). Bonds join neighbours between 0.0 and 1.5 apart within each copy; the bond "
        "coefficients of the copies are 1.0 0 1.0 -0.8, 1.0 0 1.0 0.0, 1.0 0 1.0 2.0 and 1.0 0 1.0 10.0. "
        "The lower slab between z = -1.0 and 2.0 is held in place, and the upper slab from z = 18.0 to 21.0 "
        "moves down at a speed of 0.0025. Print the width along x and the height along z of every column every "
        "50 steps during the 12000 steps of compression.")
DEV = "lammps/40_bpm.json"


def _lines(desc) -> list[str]:  # the input without comments (they quote each text's run sentences)
    return [line for line in render(desc, extents=True).splitlines() if not line.startswith("#")]


def test_our_wording_and_the_dev_task_read_to_the_same_pillars():
    ours, dev = read_description(OURS), read_description(dev_text(DEV))
    for desc in (ours, dev):
        assert desc.renderable, (desc.missing, desc.unsupported)
        p = desc.pillars
        assert p is not None
        assert (p.radius, p.top_z - p.bottom_z, p.wall_radius, p.copies) == (7.0, 20.0, 8.0, 4)
        assert [b.volume_factor for b in p.bonds] == [-0.8, 0.0, 2.0, 10.0]
        assert all((b.k, b.critical_strain, b.gamma) == (1.0, 0.0, 1.0) for b in p.bonds)
        assert (p.bond_range, p.bottom, p.top, p.top_velocity) == ((0.0, 1.5), (-1.0, 2.0), (18.0, 21.0), -0.0025)
        assert desc.box is not None and not desc.box.lattice_units
        assert np.allclose(np.subtract(desc.box.hi, desc.box.lo), (20.0, 20.0, 22.0))
        assert desc.velocity is not None and desc.velocity.temperature == 0.1
        assert desc.average_stage == desc.run_stages()[-1] == 1
        # left out by both texts, each listed with the example: timestep, wall, pair, placement, bond keywords
        assert desc.timestep == 0.1 and desc.velocity.seed == 345910
        for key in ("timestep", "velocity.seed", "pillars.pair", "pillars.wall_settings", "box.placement",
                    "pillars.bond_style", "pillars.neighbor", "pillars.rest", "pillars.velocity_units"):
            assert "poissons_ratio" in desc.defaults[key], key
    assert [ours.stages[i].steps for i in ours.run_stages()] == [5000, 12000]
    assert ours.thermo_every == 50 and dev.thermo_every == 100  # the stated print interval
    assert [dev.stages[i].steps for i in dev.run_stages()] == [10000, 25000]
    # the stated run lengths win over the example's 20000 and 10000, and report.md says so
    assert "12000" in ours.origin["pillars.departures"].evidence
    strip = [line for line in _lines(ours) if not line.startswith(("run ", "thermo "))]
    assert strip == [line for line in _lines(dev) if not line.startswith(("run ", "thermo "))]


def test_the_render_settles_in_the_wall_then_copies_bonds_and_squeezes():
    text = render(read_description(OURS), extents=True)
    first, second = text.split("# stage 2", 1)
    assert "wall/region pillar_wall harmonic 1 1 1" in first and "replicate" not in first
    assert "unfix           pillar_wall" in second
    order = ["replicate       4 1 1", "velocity        all set 0.0 0.0 0.0", "create_bonds    many pillar1 pillar1 1 0 "
             "1.5", "bond_style      bpm/spring break no smooth no volume/factor yes", "bond_coeff      4 1 0 1 10",
             "velocity        pillar_top set 0.0 0.0 -0.0025", "fix             pillar_hold pillar_bottom setforce",
             "run             12000"]
    positions = [second.index(line) for line in order]
    assert positions == sorted(positions)
    assert "region          pillar4 block 60 80 EDGE EDGE EDGE EDGE units box" in second
    assert "v_pw1 v_ph1 v_pw2 v_ph2 v_pw3 v_ph3 v_pw4 v_ph4" in second and "v_pw1" not in first
    assert "dump" not in text  # trajectory output no metric reads: read, listed, not written


def test_another_radius_is_not_the_example_and_is_named():
    desc = read_description(OURS.replace("radius 7", "radius 6"))
    assert desc.pillars is None and not desc.renderable
    assert "radius 6 where LAMMPS examples/bpm/poissons_ratio" in desc.origin["example.bpm_poissons_ratio"].evidence


def test_a_number_no_rule_reads_stops_the_fill():
    desc = read_description(OURS.replace("Print", "The springs break at 30 percent strain. Print"))
    assert desc.pillars is None
    assert "what the numbers 30 are (stated, not understood)" in desc.missing


def test_fewer_bond_sets_than_pillars_is_missing_not_guessed():
    desc = read_description(OURS.replace(" and 1.0 0 1.0 10.0", ""))
    assert desc.pillars is None and not desc.renderable
    assert any("one bond coefficient set per pillar (4 pillars, 3 sets read)" in m for m in desc.missing)


def test_without_the_bonded_particle_model_nothing_is_read_as_pillars():
    desc = read_description(OURS.replace("made with the bonded particle model (BPM, bpm/spring) ", ""))
    assert desc.pillars is None and not desc.renderable


def test_a_stated_timestep_and_a_signed_velocity_win():
    text = OURS.replace("moves down at a speed of 0.0025", "is given a constant velocity of -0.004 along z")
    desc = read_description(text.replace("Print", "The time step is 0.05. Print"))
    assert desc.pillars is not None and desc.pillars.top_velocity == -0.004 and desc.timestep == 0.05
    assert "top_velocity -0.004 is run" in desc.origin["pillars.departures"].evidence
    assert "timestep" not in desc.defaults


@pytest.mark.parametrize("metric, label", [("average_poisson_ratio_on_pillar_3", "pillar3"),
                                           ("Poisson's ratio of column 2", "pillar2"),
                                           ("mean-poisson-ratio-pillar4", "pillar4"),
                                           ("poisson ratio", None)])
def test_metric_names_of_a_pillar_poisson_ratio(metric, label):
    target = read_metric(metric)
    assert (target.property, target.label) == ("poisson_ratio", label)


def test_the_elastic_examples_poisson_ratio_keeps_its_own_label():
    assert read_metric("poisson_ratio", elastic_example=True).label == "C12/(C11+C12)"


def test_the_ratio_follows_its_definition_on_a_constructed_record():
    """nu = -(lateral strain)/(axial strain) per row after the first, averaged: a record whose width grows
    by a third of the height's relative shortening gives 1/3 for each pillar."""
    desc = read_description(OURS)
    h = np.array([20.0, 19.9, 19.8, 19.7])
    w = 14.0 * (1 - (h - 20.0) / 20.0 / 3)
    block = {col(i): arr for i in range(1, 5) for col, arr in ((width_column, w), (height_column, h))}
    results = poisson_results(block, desc, "described", "stage 2")
    assert [r.label for r in results] == ["pillar1", "pillar2", "pillar3", "pillar4"]
    assert all(r.value == pytest.approx(1 / 3) for r in results)


def test_a_small_squeeze_moves_the_top_at_its_velocity_and_gives_four_ratios(tmp_path):
    """Small pillars (radius 3.5, height 8, in a 10 x 10 x 10 box; 200 settling + 600 squeezing steps)
    through the protocol: the axial extent shrinks by exactly the top's displacement |v| a dt steps (the
    top slab moves rigidly at v lattice spacings a per time unit, the example's velocity command; the
    bottom is held), every pillar is bonded, and the analysis reports one finite ratio per pillar,
    labelled as solve matches them."""
    desc = read_description(OURS)
    p = desc.pillars
    assert p is not None and desc.box is not None
    desc.box = desc.box.model_copy(update={"lo": (0.0, -5.0, -1.0), "hi": (10.0, 5.0, 9.0)})
    desc.pillars = p.model_copy(update={"centre": (5.0, 0.0), "radius": 3.5, "top_z": 8.0, "wall_radius": 4.5,
                                        "wall_z": (-1.0, 9.0), "top": (6.0, 9.0)})
    settle, squeeze = (desc.stages[i] for i in desc.run_stages())
    settle.steps, squeeze.steps = 200, 600
    spec = TaskSpec(request="pillars", engine="lammps", properties=[PropertyRequest(name="poisson_ratio")],
                    described=desc.model_dump(mode="json"))
    protocol = DescribedRun()
    assert protocol.applies_to(spec)
    params, defaults = protocol.parameters(spec)
    assert any(d.parameter == "timestep" for d in defaults)
    job = protocol.jobs(params)[0]
    folder = run_inputs(job.inputs, tmp_path / "described")
    log = (folder / "log.lammps").read_text()
    assert len(re.findall(r"Added \d+ bonds", log)) == 4
    block = read_output(folder).runs[-1]
    steps = block["Step"] - block["Step"][0]
    spacing = (4 / 1.41) ** (1 / 3)  # velocity set's default units: lattice spacings (fcc, reduced density 1.41)
    for i in range(1, 5):
        h = block[height_column(i)]
        assert np.allclose(h[0] - h, 0.0025 * spacing * 0.1 * steps, atol=1e-6)
    results = protocol.analyze(params, {"described": folder}, spec)
    assert sorted(r.label for r in results) == ["pillar1", "pillar2", "pillar3", "pillar4"]
    assert all(np.isfinite(r.value) and r.property == "poisson_ratio" for r in results)


@pytest.mark.parametrize("sets", ["(1.0 0 1.0 -0.8), (1.0 0 1.0 0.0), (1.0 0 1.0 2.0), (1.0 0 1.0 10.0)",
                                  "1.0 0 1.0 -0.8 / 1.0 0 1.0 0.0 / 1.0 0 1.0 2.0 / 1.0 0 1.0 10.0",
                                  "[1.0 0 1.0 -0.8; 1.0 0 1.0 0.0; 1.0 0 1.0 2.0; 1.0 0 1.0 10.0]"])
def test_bond_sets_in_other_separators_are_read_in_order(sets):
    text = OURS.replace("1.0 0 1.0 -0.8, 1.0 0 1.0 0.0, 1.0 0 1.0 2.0 and 1.0 0 1.0 10.0", sets)
    desc = read_description(text)
    assert desc.pillars is not None, (desc.missing, desc.unsupported)
    assert [b.volume_factor for b in desc.pillars.bonds] == [-0.8, 0.0, 2.0, 10.0]
