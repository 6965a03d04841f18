"""Reading rules met on a water + CO2 text with carbon walls (i27-slit): a thermostat switched off in favour of a
named ensemble, a barostat's coupling stated in a later sentence, a 'minimisation-like' run, a timestep stated for
one stage, one thermostat per group, molecules put on a stated lattice, a carbon solid beside the liquid, counts
in parentheses and a box given per axis. Every text is a paraphrase written for these tests, with negatives."""

from __future__ import annotations

import json

import pytest
from described_helpers import DEV as DEV_SET

from simagent.described.carbon_dioxide import co2_count
from simagent.described.molecular import box_axes
from simagent.described.reading import STAGE_TIMESTEP_NAME, normalise, read_description
from simagent.described.separate_thermostat import PER_GROUP_NAME

LJ = ("A Lennard-Jones liquid in reduced units on an fcc lattice at density 0.8 in a 6x6x6 box, cutoff 2.5, "
      "velocities at 1.0 (seed 1234). ")


def _runs(desc):
    return [s for s in desc.stages if s.kind == "run"]


# --- a thermostat switched off and the ensemble that takes over, in one sentence -----------------------------------

def test_off_switch_then_named_ensemble_holds_for_the_later_run():
    text = ("Real units, argon as LJ atoms (epsilon 0.238 kcal/mol, sigma 3.4 A, cutoff 10 A) on an fcc lattice of "
            "constant 5.3 A, a box of 4x4x4 cells. A Langevin thermostat holds 120 K (damping 100 fs) for 2000 steps. "
            "After the warm-up the Langevin thermostat is switched off and the crystal is evolved at constant pressure "
            "(NPT) at 120 K and 1 atm. The production stage lasts 4000 steps.")
    runs = _runs(read_description(text))
    assert [r.steps for r in runs] == [2000, 4000]
    assert runs[0].dynamics.thermostat == "langevin"
    last = runs[1].dynamics
    assert (last.ensemble, last.t_stop, last.p_stop) == ("npt", 120.0, 1.0)


def test_off_switch_without_a_new_ensemble_leaves_plain_nve():
    text = LJ + ("A Langevin thermostat at 1.0 (damping 1.0, seed 77) acts for 1000 steps; after those the thermostat "
                 "is turned off. Another 3000 steps follow.")
    runs = _runs(read_description(text))
    assert [r.steps for r in runs] == [1000, 3000]
    assert runs[1].dynamics.ensemble == "nve" and runs[1].dynamics.thermostat is None


def test_run_before_the_switch_keeps_its_thermostat_when_nve_follows_it():
    # the run length stated before the switch is the thermostatted run's, not the NVE's named after it
    text = LJ + ("The Langevin thermostat (temperature 1.0, damping 1.0, seed 9) is applied. After equilibration for "
                 "2000 steps, the thermostat is switched off to leave the system in plain NVE. The production run "
                 "lasts 5000 steps.")
    runs = _runs(read_description(text))
    assert [r.steps for r in runs] == [2000, 5000]
    assert runs[0].dynamics.thermostat == "langevin"
    assert runs[1].dynamics.ensemble == "nve" and runs[1].dynamics.thermostat is None


# --- the barostat's coupling in a later sentence ------------------------------------------------------------------

NPT = ("Real units, argon as LJ atoms (epsilon 0.238 kcal/mol, sigma 3.4 A, cutoff 10 A) on an fcc lattice of "
       "constant 5.3 A, a box of 4x4x4 cells, velocities at 90 K. The crystal is held in the NPT ensemble at 90 K and "
       "1 atm for 3000 steps. ")


@pytest.mark.parametrize("later, coupling", [
    ("The barostat acts anisotropically on the three edges.", "aniso"),
    ("Each box edge is relaxed independently.", "aniso"),
    ("Its pressure is coupled anisotropically so that the cell can change shape.", "aniso"),
    ("The barostat couples the three edges isotropically.", "iso"),
    ("The argon atoms themselves are not anisotropic.", "iso"),
])
def test_coupling_stated_after_the_barostat(later, coupling):
    runs = _runs(read_description(NPT + later))
    assert runs[-1].dynamics.ensemble == "npt"
    assert runs[-1].dynamics.p_coupling == coupling


def test_coupling_stated_before_the_run_length():
    text = NPT.replace(" for 3000 steps", "") + ("The box adjusts anisotropically under the barostat. It runs 3000 "
                                                 "steps.")
    runs = _runs(read_description(text))
    assert [r.steps for r in runs] == [3000]
    assert runs[0].dynamics.p_coupling == "aniso"


# --- 'minimisation-like' -------------------------------------------------------------------------------------------

def test_a_minimisation_like_run_is_no_minimisation():
    text = LJ + ("First a minimisation-like relaxation with fix nve/limit (at most 0.05 sigma per step) runs for 500 "
                 "steps; then plain NVE for 2000 steps.")
    desc = read_description(text)
    assert all(s.kind == "run" for s in desc.stages)
    assert desc.stages[0].dynamics.limit == 0.05
    assert not any("minimisation tolerances" in m for m in desc.missing)


def test_a_stated_minimisation_is_still_one():
    text = LJ + "An energy minimization (etol 1e-6, ftol 1e-8) comes first; then NVE for 2000 steps."
    desc = read_description(text)
    assert desc.stages[0].kind == "minimize"


# --- a timestep stated for one stage -------------------------------------------------------------------------------

ARGON = ("Solid argon in real units: an fcc crystal with lattice constant 5.3 A in a 4 x 4 x 4 box; LJ epsilon 0.238 "
         "kcal/mol, sigma 3.4 A, cutoff 8.5 A, atomic mass 39.95 g/mol. Velocities at 90 K. The timestep is 2 fs. ")
SHORT_FIRST = ARGON + ("A short NVT run at 90 K of 300 steps with a timestep of 0.25 fs removes hot spots. Then NVE "
                       "follows for 200 steps.")


def test_a_stage_with_a_timestep_of_its_own_gets_it():
    desc = read_description(SHORT_FIRST)
    assert desc.renderable, (desc.unsupported, desc.missing)
    first, second = _runs(desc)
    assert (first.timestep, second.timestep, desc.timestep) == (0.25, None, 2.0)
    assert desc.origin["run1.timestep"].source == "rules"
    # the unstated damping is 100 of the stage's own timesteps, not of the simulation's
    assert first.dynamics.t_damp == pytest.approx(25.0)


def test_the_stage_timestep_is_set_for_its_run_and_back_after_it(tmp_path):
    from described_helpers import run_text

    from tools.lammps.described import render

    text = render(read_description(SHORT_FIRST))
    lines = [line.split() for line in text.splitlines() if line.startswith(("timestep", "run "))]
    assert lines == [["timestep", "2"], ["timestep", "0.25"], ["run", "300"], ["timestep", "2"], ["run", "200"]]
    log = run_text(text, tmp_path / "argon")
    # LAMMPS echoes each command to its log as it executes it: both runs ran, each after its own timestep
    executed = [line.split()[:2] for line in log.splitlines() if line.startswith(("timestep", "run ", "Loop time"))]
    assert executed == [["timestep", "2"], ["timestep", "0.25"], ["run", "300"], ["Loop", "time"],
                        ["timestep", "2"], ["run", "200"], ["Loop", "time"]]


@pytest.mark.parametrize("text, why", [
    (ARGON + "NVE for 2000 steps with a timestep of 0.5 fs, then NVE for 10000 steps.", "does not say which run"),
    (ARGON + "NVE for 1000 steps. Then the production run of 5000 steps uses a timestep of 1 fs.", "averaged stage"),
])
def test_a_stage_timestep_that_cannot_be_placed_is_refused_by_name(text, why):
    desc = read_description(text)
    named = [u for u in desc.unsupported if u.startswith(STAGE_TIMESTEP_NAME)]
    assert named and why in named[0], desc.unsupported
    assert not desc.renderable


@pytest.mark.parametrize("sentence", [
    "NVE runs for 10000 steps with a timestep of 2 fs.",
    "NVE runs for 10000 steps with a 2 fs timestep.",
    "NVE runs for 10000 steps; the thermostat damping is 100 timesteps.",
])
def test_the_one_timestep_in_a_run_sentence_is_no_stage_timestep(sentence):
    desc = read_description(ARGON + sentence)
    assert not any(u.startswith(STAGE_TIMESTEP_NAME) for u in desc.unsupported), desc.unsupported
    assert all(r.timestep is None for r in _runs(desc))


@pytest.mark.parametrize("sentence, dt", [("The crystal is simulated for 3000 steps using 2 fs timesteps.", 2.0),
                                          ("The crystal is simulated for 3000 steps using a 0.5 fs time step.", 0.5)])
def test_a_timestep_in_plural_is_the_simulations(sentence, dt):
    text = ARGON.replace(" The timestep is 2 fs.", "") + sentence
    desc = read_description(text)
    assert desc.timestep == dt and desc.origin["timestep"].source == "rules"


# --- one thermostat per group --------------------------------------------------------------------------------------

@pytest.mark.parametrize("sentence", [
    "Independent Langevin thermostats act on the liquid and on the wall atoms.",
    "Every species is kept at 310 K by its own Berendsen thermostat.",
    "Berendsen thermostats are applied to the individual groups, each at 300 K.",
    "Separate thermostats hold the solvent and the solute at 300 K.",
])
def test_one_thermostat_per_group_is_refused_by_name(sentence):
    desc = read_description(LJ + sentence + " NVE runs for 1000 steps.")
    assert any(u.startswith(PER_GROUP_NAME) for u in desc.unsupported), desc.unsupported


@pytest.mark.parametrize("sentence", [
    "A Langevin thermostat at 1.0 (damping 1.0, seed 5) acts on the mobile atoms only.",
    "Each atom feels the Berendsen thermostat at 1.0 with damping 1.0.",
])
def test_one_thermostat_is_not_one_per_group(sentence):
    desc = read_description(LJ + sentence + " NVE runs for 1000 steps.")
    assert not any(u.startswith(PER_GROUP_NAME) for u in desc.unsupported), desc.unsupported


# --- molecules on a stated lattice, a carbon solid, counts, a box per axis ------------------------------------------

WATER = ("Real units. 180 SPC/E water molecules fill a periodic box from 0 to 25 A. LJ plus Coulomb with a 9 A "
         "cut-off, PPPM for the long range; SHAKE keeps the molecules rigid. NVT at 300 K for 1000 steps. ")


def test_molecules_put_on_a_stated_lattice_are_refused_not_regridded():
    text = WATER + "The waters are put on a simple cubic lattice with a spacing of 3.1 A."
    desc = read_description(text)
    assert desc.lattice is None  # a placement grid, not a crystal
    assert any(u.startswith("molecules placed on a stated lattice") for u in desc.unsupported), desc.unsupported


def test_water_without_a_stated_lattice_still_renders():
    desc = read_description(WATER)
    assert desc.renderable, (desc.unsupported, desc.missing)


def test_a_box_measured_in_lattice_units_is_no_placement_lattice():
    text = ("Real units. 500 SPC/E water molecules in a box of 6*6*14 lattice units (a simple cubic lattice with a 3.4 "
            "A spacing is used and the molecules are inserted in the middle). LJ plus Coulomb with a 9 A cut-off, PPPM "
            "for the long range; SHAKE keeps the molecules rigid. NVT at 300 K for 1000 steps.")
    desc = read_description(text)
    assert not any(u.startswith("molecules placed on a stated lattice") for u in desc.unsupported)


@pytest.mark.parametrize("solid", ["between two graphene sheets", "between graphite walls",
                                   "above a graphitic substrate"])
def test_a_carbon_solid_beside_the_water_is_named(solid):
    desc = read_description(WATER.replace("fill a periodic box", f"{solid} fill a periodic box"))
    assert any(u.startswith("a solid beside the molecules") for u in desc.unsupported), desc.unsupported


def test_water_alone_names_no_solid():
    desc = read_description(WATER)  # the same water with no solid named
    assert not any(u.startswith("a solid beside the molecules") for u in desc.unsupported)


def test_counts_in_parentheses_with_their_noun():
    desc = read_description(WATER.replace("180 SPC/E water molecules", "SPC/E water molecules (180 molecules)"))
    assert desc.molecular is not None and desc.molecular.count_of("water") == 180
    assert co2_count("carbon dioxide molecules (64 molecules) in the trappe model")[0] == 64
    assert co2_count("carbon dioxide molecules (64 bars)") is None


@pytest.mark.parametrize("text, lo, hi", [
    ("the simulation box spans -8 to 8 angstrom in x, -9 to 9 angstrom in y, and -20 to 20 angstrom in z.",
     (-8, -9, -20), (8, 9, 20)),
    ("the box: x from 0 to 30 a, y from 0 to 31 a, z from 0 to 60 a.", (0, 0, 0), (30, 31, 60)),
])
def test_box_per_axis(text, lo, hi):
    got = box_axes(normalise(text))
    assert got is not None and got[0] == lo and got[1] == hi


@pytest.mark.parametrize("text", [
    "the simulation box spans -8 to 8 angstrom in x and -9 to 9 angstrom in y.",  # z not stated
    "the wall runs from -8 to 8 angstrom in x, -9 to 9 angstrom in y, and -20 to 20 angstrom in z.",  # no box
])
def test_box_per_axis_negatives(text):
    assert box_axes(normalise(text)) is None


# --- the dev task that prompted these rules -------------------------------------------------------------------------

DEV = DEV_SET / "lammps_2" / "105_wat_co2_in_graphene_slit.json"


@pytest.mark.skipif(not DEV.exists(), reason="the MDGym dev set is not here")
def test_dev_task_is_refused_with_its_reasons_and_its_stages_read():
    desc = read_description(json.loads(DEV.read_text())["problem_description"])
    assert not desc.renderable
    named = " | ".join(desc.unsupported)
    for what in ("a solid beside the molecules", PER_GROUP_NAME, "molecules placed on a stated lattice"):
        assert what in named, what
    runs = _runs(desc)
    assert [r.steps for r in runs] == [5000, 20000, 200000]
    assert [r.timestep for r in runs] == [0.5, None, None] and desc.timestep == 1.0
    assert runs[0].dynamics.limit == 0.1 and runs[0].dynamics.thermostat == "berendsen"
    last = runs[2].dynamics
    assert (last.ensemble, last.p_coupling, last.t_stop, last.p_stop) == ("npt", "aniso", 300.0, 1.0)
    assert all(s.kind == "run" for s in desc.stages)  # 'minimization-like' is no minimisation
