"""An SRD solvent in typed simulation descriptions (simagent.described.srd): a solvent stated with its
grid is read and rendered as stated; a text retelling LAMMPS examples/srd (in.srd.mixture) without a
grid gets the example's unstated values as listed defaults, its own run settings (SRD temperature,
timestep, step counts) winning; a stated number that differs from the example's, or one no rule
reads, stops the fill and is named. Every rule is tested on wordings written here (not a task's), and
on the MDGym dev task when the dev set is present."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from described_helpers import DEV, dev_text
from described_helpers import run_named as run_lammps

from simagent.described.reading import read_description
from simagent.described.srd import largest_grid, mean_free_path
from simagent.solve import not_rendered
from tools.lammps.described import render

# our own wording, with a grid of its own
SOLVENT = ("Reduced LJ units, 2D, periodic. Big particles (type 1, mass 1, diameter 1.0) sit on a square lattice of "
           "density 0.4 inside a 6 x 6 box and interact by Lennard-Jones with a cutoff of 2.5; velocities are drawn at "
           "1.2. They are first run alone with NVE for 200 steps. Then a solvent of small particles (type 2, mass "
           "0.02, diameter 0) is created on a square lattice of density 20, and any solvent particle within 0.5 of a "
           "big particle is deleted; the solvent has no pair interactions. The solvent moves by stochastic rotation "
           "dynamics: rotations every 20 steps, SRD temperature 1.0, grid size 0.19, seed 1234, slip collisions. "
           "Reset the timestep and run 300 steps with NVE for the big particles; timestep 0.001.")

# our own retelling of examples/srd's setup (no grid), with short runs and an SRD temperature {t}
RETOLD = ("Simulate colloids in a mesoscale solvent in 2D with reduced Lennard-Jones units and periodic edges. "
          "Colloidal particles (type 1), mass 1 and diameter 1.0, start on a square lattice with lattice constant 0.4 "
          "inside a 10 x 10 box; they interact through a Lennard-Jones potential with a cutoff of 2.5 and get initial "
          "velocities at a temperature of 1.44. They are run alone with NVE for 100 steps. Afterwards solvent "
          "particles (type 2, mass 0.01, diameter 0) are created on a square lattice of density 85.0; solvent "
          "particles within 0.5 of a colloid are removed, and the solvent has no LJ interactions at all. The solvent "
          "follows stochastic rotation dynamics with streaming interval 20, solvent temperature {t}, seed 49894, "
          "collision radius 0.88, search distance 0.2 and slip collisions. Reset the timestep, then run 200 steps "
          "with a timestep of 0.001 and NVE for the colloids.")
EDGE = 10 / math.sqrt(0.4)  # the box edge in sigma: 10 spacings of a square lattice of reduced density 0.4


def test_an_srd_solvent_with_its_grid_is_read_and_rendered():
    desc = read_description(SOLVENT)
    assert desc.renderable, (desc.unsupported, desc.missing)
    srd = desc.srd
    assert (srd.atom_type, srd.big_type, srd.density, srd.overlap, srd.every, srd.temperature, srd.grid,
            srd.seed, srd.collision) == (2, 1, 20.0, 0.5, 20, 1.0, 0.19, 1234, "slip")
    assert desc.lattice.scale == 0.4 and desc.masses == {1: 1.0, 2: 0.02} and desc.pair.cutoff == 2.5
    text = render(desc)
    first, second = text.split("# stage 2")
    assert "create_atoms    2" not in first  # the big particles run alone first
    assert "fix             dyn1 big nve" in second and "delete_atoms    overlap 0.5 small big" in second
    assert "fix             srd small srd 20 big 1 0.19 1234 collision slip" in second
    assert "pair_coeff      2 2 0 1 0" in text  # no solvent pair interactions (and no neighbor lists for them)
    assert "examples/srd" not in " ".join(desc.defaults.values())  # not the example: nothing filled from it


def test_srd_solvent_run_deletes_the_overlaps_and_uses_the_stated_free_path(tmp_path: Path):
    """36 big discs (6 x 6 sites at density 0.4) each clear a disc of radius 0.5 of the solvent lattice
    (density 20): 36 x 20 x pi 0.5^2 = 565 deleted (within 10 %: lattice discretisation, discs pushed
    together in the first stage). The SRD mean free path is N dt sqrt(T/m) = 20 x 0.001 x sqrt(1/0.02)
    = 0.1414 (fix srd's own report)."""
    log = run_lammps(render(read_description(SOLVENT)), tmp_path, "stated")
    deleted = int(re.search(r"Deleted (\d+) atoms", log).group(1))
    assert abs(deleted - 36 * 20 * math.pi * 0.25) < 0.1 * 565
    lamda = float(re.search(r"SRD temperature & lamda = \S+ (\S+)", log).group(1))
    assert lamda == pytest.approx(20 * 0.001 * math.sqrt(1 / 0.02), rel=1e-3)
    created = [int(n) for n in re.findall(r"Created (\d+) atoms", log)]
    solvent, big = (int(n) for n in re.search(r"SRD/big particles = (\d+) (\d+)", log).groups())
    assert (solvent, big) == (created[1] - deleted, created[0])


def test_the_example_fills_what_a_retelling_leaves_out():
    """At the example's own SRD temperature (1.0) its grid 0.25 runs (mean free path 20 x 0.001 x
    sqrt(1/0.01) = 0.2 >= 0.6 x 0.25) and is filled, with its seeds, velocity loop and thermo interval;
    the text's run settings (100 and 200 steps) run, and report.md lists them as departures."""
    desc = read_description(RETOLD.format(t="1.0"))
    assert desc.renderable, (desc.unsupported, desc.missing)
    assert desc.srd.grid == 0.25 and "examples/srd" in desc.defaults["srd.grid"]
    assert (desc.velocity.seed, desc.velocity.loop, desc.thermo_every) == (87287, "geom", 100)
    assert desc.srd.velocity_seed == 593849 and desc.srd.collision == "slip"
    departures = desc.origin["example.departures"].evidence
    assert "steps 200" in departures and "first_steps 100" in departures and "temperature" not in departures
    text = render(desc)
    assert "fix             srd small srd 20 big 1 0.25 49894 radius 0.88 search 0.2 collision slip" in text


def test_a_colder_srd_temperature_gets_the_largest_grid_lammps_accepts():
    """The example's grid belongs to its temperature: at T = 0.36 the free path is 20 x 0.001 x
    sqrt(0.36/0.01) = 0.12, and LAMMPS needs grid <= 0.12 / 0.6 = 0.2; the box edge 15.811 sigma then
    holds 80 bins of 0.19764 (ceil(15.811 / 0.2) = 80). The temperature departure is listed."""
    desc = read_description(RETOLD.format(t="0.36"))
    assert desc.renderable, (desc.unsupported, desc.missing)
    assert desc.srd.temperature == 0.36
    assert desc.srd.grid == pytest.approx(EDGE / 80, rel=1e-9)
    assert "0.12" in desc.defaults["srd.grid"] and "0.25" in desc.defaults["srd.grid"]
    assert "the stated temperature 0.36 is run" in desc.origin["example.departures"].evidence


def test_lammps_accepts_the_largest_grid(tmp_path: Path):
    """LAMMPS's own report: the requested grid, the actual bins (80 across the box), the free path."""
    log = run_lammps(render(read_description(RETOLD.format(t="0.36"))), tmp_path, "colder")
    lamda = float(re.search(r"SRD temperature & lamda = \S+ (\S+)", log).group(1))
    assert lamda == pytest.approx(0.12, rel=1e-3)
    assert re.search(r"SRD grid counts: 80 80 1", log)
    actual = float(re.search(r"SRD grid size: request, actual \(xyz\) = \S+ (\S+)", log).group(1))
    assert actual <= lamda / 0.6


@pytest.mark.parametrize(("lamda", "edges", "bins"), [(0.12, (EDGE, EDGE), (80, 80)), (0.1, (EDGE, EDGE), (95, 95)),
                                                      (0.1, (12.0, 7.0), (72, 42))])
def test_largest_grid_is_a_whole_number_of_bins_no_wider_than_lammps_allows(lamda, edges, bins):
    grid = largest_grid(lamda, edges)
    assert tuple(round(e / grid) for e in edges) == bins
    assert all(e / round(e / grid) <= lamda / 0.6 * (1 + 1e-12) for e in edges)


def test_mean_free_path_is_fix_srds():
    assert mean_free_path(20, 0.001, 1.0, 0.01) == pytest.approx(0.2)  # examples/srd's log: 'lamda = 1 0.2'


def test_a_timestep_stated_with_the_srd_run_is_that_runs_only():
    """'run 200 steps with a timestep of 0.001': the SRD run's; the stage before it runs at the
    example's (LAMMPS's LJ default, 0.005). A timestep stated on its own applies to every stage."""
    desc = read_description(RETOLD.format(t="1.0"))
    assert (desc.timestep, desc.srd.timestep) == (0.005, 0.001)
    text = render(desc)
    assert text.index("timestep        0.005") < text.index("run             100") < \
        text.index("timestep        0.001") < text.index("run             200")
    alone = read_description(RETOLD.format(t="1.0").replace(
        "then run 200 steps with a timestep of 0.001 and NVE for the colloids.",
        "then run 200 steps with NVE for the colloids. Every stage uses a timestep of 0.001."))
    assert alone.renderable, (alone.unsupported, alone.missing)
    assert (alone.timestep, alone.srd.timestep) == (0.001, None)


@pytest.mark.parametrize(("old", "new", "named"), [
    ("search distance 0.2", "search distance 0.3", "search 0.3"),
    ("inside a 10 x 10 box", "inside a 12 x 12 box", "box 12 12"),
    ("density 85.0", "density 60.0", "solvent_density 60"),
])
def test_a_stated_number_that_is_not_the_examples_stops_the_fill_and_is_named(old, new, named):
    text = RETOLD.format(t="1.0")
    assert old in text
    desc = read_description(text.replace(old, new))
    assert not desc.renderable and "the SRD bin (grid) size" in desc.missing
    assert named in not_rendered(desc) and "examples/srd" in not_rendered(desc)


def test_a_number_no_rule_reads_stops_the_fill():
    desc = read_description(RETOLD.format(t="1.0") + " Write a snapshot every 250 steps.")
    assert not desc.renderable
    assert any("250" in m for m in desc.missing)


@pytest.mark.skipif(not (DEV / "lammps" / "72_srd.json").is_file(), reason="MDGym dev set not present")
def test_dev_srd_task_is_filled_from_the_example_with_its_own_temperature():
    """72_srd states SRD temperature 0.25 (the example's is 1.0): free path 20 x 0.001 x sqrt(0.25/0.01)
    = 0.1, so the largest accepted grid is 15.811 / ceil(15.811 / 0.1667) = 15.811 / 95."""
    desc = read_description(dev_text("lammps/72_srd.json"))
    assert desc.renderable, (desc.unsupported, desc.missing)
    assert (desc.srd.temperature, desc.srd.timestep, desc.timestep) == (0.25, 0.001, 0.005)
    assert desc.srd.grid == pytest.approx(EDGE / 95, rel=1e-9)
    assert desc.srd.big_diameter == 1.0 and "srd.big_diameter" not in desc.defaults  # stated
