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
    # 'near zero' names no number: the example's barostat (0 -> 1), which starts there, listed with why
    assert (dyn.p_start, dyn.p_stop) == (0.0, 1.0)
    assert "examples/multi" in desc.defaults["run1.pressure"] and "names no number" in desc.defaults["run1.pressure"]
    assert desc.velocity.temperature == 1.5 and desc.timestep == 0.004
    assert dyn.t_stop == 2.0 and "examples/multi" in desc.defaults["run1.t_stop"]
    text = render(desc)
    assert "neigh_modify    delay 0 collection/type 2 1*4 5" in text and "reduce/multi" in text
    assert "region          cavity1 sphere 60 60 0 30 units box" in text
    assert "create_atoms    5 single 130 130 0 units box" in text
    assert "pair_coeff      5 5 39.5 1 20 20 30" in text and "pair_style      colloid 20" in text
    assert "iso 0 1 10 drag 1" in text and "halt" not in text


@pytest.mark.parametrize(("words", "stated"), [
    ("NPT with pressure kept close to zero and a Nose-Hoover thermostat", None),
    ("NPT at near-zero pressure with a Nose-Hoover thermostat", None),
    ("NPT with the pressure held around 0 and a Nose-Hoover thermostat", None),
    ("NPT at zero pressure with a Nose-Hoover thermostat", (0.0, 0.0)),
    ("NPT with the pressure held at zero and a Nose-Hoover thermostat", (0.0, 0.0)),
    ("NPT with pressure going from 0.0 to 0.3 and a Nose-Hoover thermostat", (0.0, 0.3)),
])
def test_a_loose_zero_pressure_takes_the_examples_barostat_an_exact_one_is_run(words, stated):
    """'near zero' (any wording) states no set point: the example's 0 -> 1 fills, listed; 'at zero
    pressure' states 0, which is run as stated (with the runaway guard); a stated ramp is run."""
    old = "NPT with pressure near zero and a Nose-Hoover thermostat"
    assert old in MULTI
    desc = read_description(MULTI.replace(old, words))
    assert desc.renderable, (desc.unsupported, desc.missing)
    dyn = desc.stages[0].dynamics
    assert (dyn.p_start, dyn.p_stop) == (stated or (0.0, 1.0))
    assert (desc.origin["run1.pressure"].source == "default") == (stated is None)
    assert ("halt" in render(desc)) == (stated == (0.0, 0.0))


def test_a_loose_pressure_the_example_does_not_start_at_stops_the_fill():
    desc = read_description(MULTI.replace("NPT with pressure near zero", "NPT with pressure near 0.5"))
    assert not desc.renderable and any("0.5" in m for m in desc.missing)


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
