"""Colloid mixtures in typed simulation descriptions (simagent.described.colloids): a text that
states the setup of LAMMPS examples/colloid or examples/multi gets that example's pair colloid
coefficients and other unstated settings as listed defaults; what the text states wins; a text that
differs from the examples, or states a number no rule reads, stays refused. Every rule is tested on
wordings written here (not a task's), and on the MDGym dev tasks when the dev set is present."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from described_helpers import DEV
from described_helpers import run_named as run_lammps

from simagent.described.reading import read_description
from tools.lammps.described import render

# our own retelling of examples/colloid's setup, with run settings of its own
BINARY = ("Model a 2D suspension in LJ reduced units: big colloids among many small particles. The box spans x from 0 "
          "to 30 and y from 0 to 30 (z between -0.5 and 0.5). Start from particles on a sq lattice at a density of "
          "0.01; then roughly 96 percent of the particles are turned into small particles at random, the others stay "
          "big. Big particles have mass 9 and small particles have a mass of 1. Use the colloid pair potential with "
          "a cutoff of 12.5, with its own parameters for each pair of kinds. Velocities are initialised at a "
          "temperature of 1.2. Integrate with NPT: the target temperature is held at 1.8 with a damping parameter "
          "of 1.0; isotropic pressure going from 0.0 to 0.5 with a barostat damping of 10.0. Timestep 0.005; run for "
          "2000 steps; print thermo output every 100 steps.")

# our own retelling of examples/multi's setup
MULTI = ("A 2D LJ-units study of two big colloids in a bath of small particles, box of size 60 x 60 with periodic "
         "boundaries. The small particles start on a square lattice of density 0.1, split into four types with equal "
         "populations, all of unit mass. Two spherical regions of radius 30 are emptied of small particles and a "
         "big colloid goes at the centre of each; each colloid has a mass of 400. All pairs interact with the colloid "
         "potential, parameters as appropriate. Velocities are created at a temperature of 1.5. NPT with pressure "
         "near zero and a Nose-Hoover thermostat; timestep 0.004; run for 300 steps.")


def test_the_colloid_example_fills_only_what_the_text_leaves_out():
    desc = read_description(BINARY)
    assert desc.renderable, (desc.unsupported, desc.missing)
    assert desc.pair.style == "colloid" and desc.pair.cutoff == 12.5
    coeffs = {(c.i, c.j): (c.epsilon, c.sigma, c.d1, c.d2, c.cutoff) for c in desc.pair.coeffs}
    # LAMMPS examples/colloid/in.colloid: pair_coeff 1 1 1.0 1.0 5.0 5.0 12.5; 1 2 5.0 1.0 5.0 0.0 7.0; 2 2 10.0 ...
    assert coeffs == {("1", "1"): (1.0, 1.0, 5.0, 5.0, 12.5), ("1", "2"): (5.0, 1.0, 5.0, 0.0, 7.0),
                      ("2", "2"): (10.0, 1.0, 0.0, 0.0, 2.5)}
    assert desc.masses == {1: 9.0, 2: 1.0} and desc.lattice.scale == 0.01 and desc.box.hi[:2] == (30.0, 30.0)
    (sub,) = desc.substitutions
    assert (sub.to_type, sub.fraction, sub.among) == (2, 0.96, "all")
    dyn = desc.stages[0].dynamics
    # stated here, not the example's (its thermostat holds 2.0 and its pressure ends at 1.0)
    assert (dyn.t_stop, dyn.t_damp, dyn.p_start, dyn.p_stop, dyn.p_damp) == (1.8, 1.0, 0.0, 0.5, 10.0)
    assert desc.velocity.temperature == 1.2 and desc.timestep == 0.005 and desc.thermo_every == 100
    # unstated: the example's drag 1.0, mtk no, chains 0/1, listed as defaults naming the example
    assert (dyn.drag, dyn.mtk, dyn.pchain, dyn.tchain) == (1.0, False, 0, 1)
    for name in ("pair.coeffs", "run1.drag", "run1.mtk", "neighbor_multi", "substitution1.seed"):
        assert "examples/colloid" in desc.defaults[name]
    text = render(desc)
    assert "pair_style      colloid 12.5" in text and "pair_coeff      1 2 5 1 5 0 7" in text
    assert "set             group all type/fraction 2 0.96 23984" in text and "atom_style      sphere" in text
    assert "neighbor        1 multi" in text and "comm_modify     mode multi" in text
    assert "npt temp 1.8 1.8 1 iso 0 0.5 10 drag 1 mtk no pchain 0 tchain 1" in text
    assert "set             type 1 mass 9" in text


@pytest.mark.parametrize(("old", "new"), [
    ("a cutoff of 12.5", "a cutoff of 10.0"),  # another cutoff: not the example, whose coefficients would not fit
    ("density of 0.01", "density of 0.02"),
    ("mass 9", "mass 16"),
])
def test_a_setup_that_is_not_the_example_keeps_its_gap(old, new):
    desc = read_description(BINARY.replace(old, new))
    assert "pair_style colloid" in desc.unsupported
    assert any("colloid potential's coefficients" in m for m in desc.missing)


def test_a_number_no_rule_reads_stops_the_fill():
    desc = read_description(BINARY.replace("print thermo output", "use a neighbor skin of 0.7 and print thermo output"))
    assert not desc.renderable
    assert any("0.7" in m and "not understood" in m for m in desc.missing)


def test_the_multi_example_clears_spheres_and_inserts_the_colloids():
    desc = read_description(MULTI)
    assert desc.renderable, (desc.unsupported, desc.missing)
    assert desc.atom_types == 5 and desc.masses == {1: 1.0, 2: 1.0, 3: 1.0, 4: 1.0, 5: 400.0}
    assert [c.center for c in desc.cavities] == [(60.0, 60.0, 0.0), (130.0, 130.0, 0.0)]
    assert {c.radius for c in desc.cavities} == {30.0} and "cavities.center" in desc.defaults
    dyn = desc.stages[0].dynamics
    assert (dyn.p_start, dyn.p_stop) == (0.0, 0.0)  # 'near zero' is the text's; the example ramps 0 -> 1
    assert desc.velocity.temperature == 1.5 and desc.timestep == 0.004
    assert dyn.t_stop == 2.0 and "examples/multi" in desc.defaults["run1.t_stop"]
    text = render(desc)
    assert "neigh_modify    delay 0 collection/type 2 1*4 5" in text and "reduce/multi" in text
    assert "region          cavity1 sphere 60 60 0 30 units box" in text
    assert "create_atoms    5 single 130 130 0 units box" in text
    assert "pair_coeff      5 5 39.5 1 20 20 30" in text and "pair_style      colloid 20" in text


def _rows(log: str) -> list[list[float]]:
    head = next(i for i, line in enumerate(log.splitlines()) if line.split()[:1] == ["Step"])
    out = []
    for line in log.splitlines()[head + 1:]:
        if line.startswith("Loop time"):
            break
        out.append([float(w) for w in line.split()])
    return out


def test_colloid_mixture_runs_with_the_stated_composition_and_thermostat(tmp_path: Path):
    """900 lattice sites (30 x 30), each turned small with probability 0.96: 864 +- 3 sigma (binomial
    sigma = sqrt(900 * 0.96 * 0.04) = 5.9). At a pressure of 0.02 the dilute gas (density 0.01) stays
    near the ideal-gas area N k T / P = 900 * 1.8 / 0.02 = 81,000 (within 25 %) and the thermostat
    holds the 2D temperature at its 1.8 set point (last third of 2,000 steps within 10 %)."""
    text = BINARY.replace("going from 0.0 to 0.5", "going from 0.02 to 0.02")
    log = run_lammps(render(read_description(text)), tmp_path, "run1")
    small = int(re.search(r"(\d+) settings made for type/fraction", log).group(1))
    assert abs(small - 864) <= 3 * math.sqrt(900 * 0.96 * 0.04)
    rows = _rows(log)
    assert rows[-1][-1] == 900
    late = rows[len(rows) * 2 // 3:]
    assert abs(sum(r[1] for r in late) / len(late) - 1.8) < 0.18
    assert abs(sum(r[6] for r in late) / len(late) - 81000) < 0.25 * 81000


def test_the_cleared_spheres_hold_the_lattice_density_of_atoms(tmp_path: Path):
    """Each disc of radius 30 sigma on a square lattice of density 0.1 holds about pi 30^2 0.1 = 283
    sites (within 3 %: lattice discretisation); the two colloids replace them."""
    text = render(read_description(MULTI.replace("run for 300 steps", "run for 50 steps")))
    log = run_lammps(text, tmp_path, "run2")
    deleted = [int(n) for n in re.findall(r"Deleted (\d+) atoms", log)]
    assert len(deleted) == 2 and all(abs(n - math.pi * 900 * 0.1) < 0.03 * math.pi * 90 for n in deleted)
    assert _rows(log)[-1][-1] == 3600 - sum(deleted) + 2


@pytest.mark.skipif(not (DEV / "lammps" / "4_colloid.json").is_file(), reason="MDGym dev set not present")
@pytest.mark.parametrize("task", ["4_colloid", "13_multi_colloids"])
def test_dev_colloid_tasks_render(task):
    desc = read_description(json.loads((DEV / "lammps" / f"{task}.json").read_text())["problem_description"])
    assert desc.renderable, (desc.unsupported, desc.missing)
    assert desc.pair.style == "colloid" and "pair.coeffs" in desc.defaults
    if task == "4_colloid":  # its dump interval is read, and said not to be written
        assert "not written" in desc.origin["dump"].evidence


SRD = ("Big discs (type 1, mass 1) sit on a square lattice of density 0.5 in a 2D box of 12 x 12, LJ units, LJ cutoff "
       "2.5, and a solvent of light particles (type 2, mass 0.02) is handled with stochastic rotation dynamics: SRD "
       "every 20 steps, solvent temperature {t}, seed 49894, collision radius 0.88, search distance 0.2. Timestep "
       "0.001; NVE for 2000 steps.")


def test_an_srd_grid_is_not_taken_from_the_example_when_its_temperature_differs():
    desc = read_description(SRD.format(t="0.3"))
    (gap,) = [m for m in desc.missing if m.startswith("the SRD bin (grid) size")]
    # 20 x 0.001 x sqrt(0.3 / 0.02) = 0.0775 < 0.6 x 0.25: LAMMPS would refuse the example's grid
    assert "examples/srd" in gap and "0.0775" in gap and "refuses" in gap
    assert not desc.renderable


def test_an_srd_grid_gap_keeps_its_plain_name_otherwise():
    desc = read_description(SRD.format(t="1.0"))
    assert "the SRD bin (grid) size" in desc.missing  # the example's temperature: no special reason given
    assert "stochastic rotation dynamics (fix srd) without its grid size" in desc.unsupported


@pytest.mark.skipif(not (DEV / "lammps" / "72_srd.json").is_file(), reason="MDGym dev set not present")
def test_dev_srd_task_names_why_its_grid_cannot_come_from_the_example():
    desc = read_description(json.loads((DEV / "lammps" / "72_srd.json").read_text())["problem_description"])
    assert not desc.renderable
    assert any(m.startswith("the SRD bin (grid) size") and "examples/srd" in m for m in desc.missing)


SOLVENT = ("Reduced LJ units, 2D, periodic. Big particles (type 1, mass 1, diameter 1.0) sit on a square lattice of "
           "density 0.4 inside a 6 x 6 box and interact by Lennard-Jones with a cutoff of 2.5; velocities are drawn at "
           "1.2. They are first run alone with NVE for 200 steps. Then a solvent of small particles (type 2, mass "
           "0.02, diameter 0) is created on a square lattice of density 20, and any solvent particle within 0.5 of a "
           "big particle is deleted; the solvent has no pair interactions. The solvent moves by stochastic rotation "
           "dynamics: rotations every 20 steps, SRD temperature 1.0, grid size 0.19, seed 1234, slip collisions. "
           "Reset the timestep and run 300 steps with NVE for the big particles; timestep 0.001.")


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


def test_srd_solvent_run_deletes_the_overlaps_and_uses_the_stated_free_path(tmp_path: Path):
    """36 big discs (6 x 6 sites at density 0.4) each clear a disc of radius 0.5 of the solvent lattice
    (density 20): 36 x 20 x pi 0.5^2 = 565 deleted (within 10 %: lattice discretisation, discs pushed
    together in the first stage). The SRD mean free path is N dt sqrt(T/m) = 20 x 0.001 x sqrt(1/0.02)
    = 0.1414 (fix srd's own report)."""
    log = run_lammps(render(read_description(SOLVENT)), tmp_path, "run3")
    deleted = int(re.search(r"Deleted (\d+) atoms", log).group(1))
    assert abs(deleted - 36 * 20 * math.pi * 0.25) < 0.1 * 565
    lamda = float(re.search(r"SRD temperature & lamda = \S+ (\S+)", log).group(1))
    assert lamda == pytest.approx(20 * 0.001 * math.sqrt(1 / 0.02), rel=1e-3)
    created = [int(n) for n in re.findall(r"Created (\d+) atoms", log)]
    assert _rows(log.split("SRD info")[1])[-1][-1] == sum(created) - deleted


@pytest.mark.parametrize(("base", "old", "new"), [
    (BINARY, "The box spans x from 0 to 30 and y from 0 to 30 (z between -0.5 and 0.5).", "It uses a 30 x 30 box."),
    (BINARY, "on a sq lattice at a density of 0.01", "on a square lattice of density 0.01"),
    (BINARY, "roughly 96 percent of the particles are turned into small particles at random",
     "96% of the atoms are then randomly converted into small particles"),
    (BINARY, "Big particles have mass 9 and small particles have a mass of 1.",
     "The colloids carry a mass of 9, the small particles a mass of 1."),
    (BINARY, "Velocities are initialised at a temperature of 1.2.",
     "Initial velocities are assigned at temperature 1.2."),
    (BINARY, "the target temperature is held at 1.8 with a damping parameter of 1.0",
     "the thermostat keeps a target temperature of 1.8 (damping parameter 1.0)"),
    (BINARY, "Timestep 0.005; run for 2000 steps", "Use a time step of 0.005 and run 2000 timesteps"),
    (MULTI, "box of size 60 x 60", "60 by 60 simulation box"),
    (MULTI, "Two spherical regions of radius 30 are emptied", "2 circular regions with radius 30 are emptied"),
])
def test_other_wordings_of_the_same_setup_are_read_alike(base, old, new):
    assert old in base
    same, other = read_description(base), read_description(base.replace(old, new))
    assert other.renderable, (other.unsupported, other.missing)
    def commands(desc):  # the '# stage N: <the words>' comments quote the text
        return [line for line in render(desc).splitlines() if not line.startswith("#")]

    assert commands(other) == commands(same)


RETOLD_SRD = ("LJ units, 2D, periodic. Big particles (type 1, mass 1, diameter 1.0) on a square lattice of density "
              "0.4 fill an 8 x 8 box; Lennard-Jones between them with a cutoff of 2.5, velocities at 1.44; NVE for "
              "100 steps. Then solvent particles (type 2, mass 0.01, diameter 0) are made on a square lattice of "
              "density 85.0, those within 0.5 of a big particle are removed, and the solvent has no pair "
              "interactions. Stochastic rotation dynamics for the solvent: streaming ratio 20, SRD temperature 1.0, "
              "seed 49894, collision radius 0.88, search distance 0.2, slip collisions. Reset the timestep and run "
              "200 steps; timestep 0.001.")


def test_the_srd_example_fills_the_grid_when_every_srd_number_is_its_own(tmp_path: Path):
    """LAMMPS examples/srd (in.srd.mixture): fix srd 20 big 1.0 0.25 49894 radius 0.88 search 0.2: its grid
    0.25 is filled; with T = 1.0 and m = 0.01 the mean free path 20 x 0.001 x sqrt(1/0.01) = 0.2 is above
    0.6 x 0.25, and LAMMPS runs it (the 8 x 8 box, 12.65 sigma, holds 51 bins of 0.248: within LAMMPS's 1 %)."""
    desc = read_description(RETOLD_SRD)
    assert desc.renderable, (desc.unsupported, desc.missing)
    assert desc.srd.grid == 0.25 and "examples/srd" in desc.defaults["srd.grid"]
    log = run_lammps(render(desc), tmp_path, "run4")
    assert float(re.search(r"SRD temperature & lamda = \S+ (\S+)", log).group(1)) == pytest.approx(0.2, rel=1e-3)
    other = read_description(RETOLD_SRD.replace("density 85.0", "density 60.0"))  # not the example's solvent
    assert any(m.startswith("the SRD bin (grid) size") for m in other.missing)
