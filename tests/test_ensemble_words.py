"""The ensemble a sentence prescribes, in many wordings (simagent.backends.expert.ensemble_words); every
sentence here was written for this file. Negatives: a negated mention, a property named after an
ensemble, an energy minimisation and a Monte Carlo ensemble prescribe no MD ensemble."""

from __future__ import annotations

import pytest

from simagent.backends.expert.ensemble_words import evolution_words, sentence_ensemble, text_ensemble


@pytest.mark.parametrize("sentence", [
    "the crystal then evolves for 5000 steps at constant energy",
    "run 5000 steps at constant total energy",
    "constant-energy dynamics are used for the last 3000 steps",
    "the total energy is conserved during the 5000-step trajectory",
    "for 5000 steps the energy is held constant",
    "during the production run the total energy stays constant",
    "integrate 5000 steps conserving the total energy",
    "5000 steps are run with the mechanical energy kept fixed",
    "the system is thermally isolated for the remaining 4000 steps",
    "the sample is isolated from any heat bath and followed for 4000 steps",
    "decouple the atoms from the thermostat and continue for 4000 steps",
    "the liquid is simulated as an isolated system (no exchange of energy) for 4000 steps",
    "4000 steps with no heat bath",
    "follow the trajectory without any thermostat for 4000 steps",
    "an unthermostatted run of 4000 steps",
    "a thermostat-free run of 4000 steps",
    "a micro-canonical run of 4000 steps",
    "sample the microcanonical ensemble for 4000 steps",
    "4000 steps are integrated at constant n, v and e",
    "the run keeps the number of particles, volume and energy fixed",
    "4000 steps under newton's equations of motion",
    "propagate with plain newtonian dynamics for 4000 steps",
    "4000 steps of velocity-verlet integration",
])  # fmt: skip
def test_constant_energy_in_many_words_is_nve(sentence):
    stated = sentence_ensemble(sentence)
    assert stated is not None and stated.ensemble == "nve" and not stated.unnamed_thermostat, stated


@pytest.mark.parametrize("sentence, unnamed", [
    ("equilibrate at constant temperature for 2000 steps", True),
    ("2000 isothermal steps at t = 1.1", True),
    ("the system is coupled to a heat bath at 1.1 for 2000 steps", True),
    ("2000 steps in contact with a thermal reservoir", True),
    ("a thermostat keeps the temperature at 1.1 for 2000 steps", True),
    ("2000 steps of canonical sampling at 1.1", True),
    ("the run samples the canonical ensemble", True),
    ("2000 steps at constant n, v, t", True),
    ("velocity verlet with a thermostat at 1.1 for 2000 steps", True),  # a thermostat outranks the integrator
    ("the nve integrator runs with a thermostat at 300 k", True),  # thermostatted, by one it does not name
    ("2000 steps in the nvt ensemble", False),  # LAMMPS fix nvt: Nose-Hoover
    ("a nose-hoover thermostat holds 1.1", False),
])  # fmt: skip
def test_held_temperature_is_nvt_and_says_whether_a_thermostat_is_named(sentence, unnamed):
    stated = sentence_ensemble(sentence)
    if "nve integrator" in sentence:
        assert stated.ensemble == "nve" and stated.unnamed_thermostat  # the described reader makes it NVT
        return
    assert stated is not None and stated.ensemble == "nvt" and stated.unnamed_thermostat == unnamed, stated


@pytest.mark.parametrize("sentence, ensemble", [
    ("compress at constant temperature and pressure for 2000 steps", "npt"),
    ("2000 steps at constant pressure and temperature", "npt"),
    ("a constant-temperature, constant-pressure run of 2000 steps", "npt"),
    ("the isobaric-isothermal ensemble is sampled for 2000 steps", "npt"),
    ("an isothermal-isobaric run", "npt"),
    ("2000 steps at constant n, p, t", "npt"),
    ("the box is free to change under a barostat", "npt"),
    ("2000 steps at constant pressure", "npt"),
    ("then 2000 steps in the nph ensemble", "nph"),
    ("an isoenthalpic run of 2000 steps", "nph"),
    ("2000 steps at constant enthalpy and pressure", "nph"),
])  # fmt: skip
def test_pressure_ensembles(sentence, ensemble):
    stated = sentence_ensemble(sentence)
    assert stated is not None and stated.ensemble == ensemble, stated


@pytest.mark.parametrize("sentence", [
    "the run is not microcanonical",
    "this is not an nve run",
    "rather than at constant energy, nothing is said",
    "instead of the nvt ensemble, nothing is said",
    "perform an energy minimisation to 1e-8",
    "the energy minimization uses conjugate gradients",
    "report the total energy per atom",
    "compute the isothermal compressibility",
    "the constant-pressure heat capacity is reported",
    "the isobaric expansion coefficient is reported",
    "the potential is shifted by a constant energy shift at the cutoff",
    "newton's third law is switched off for ghost pairs",
    "no need to say more",
    "a pid loop then raises the thermostat's set point to 1.5",  # the thermostat stated before
    "afterwards the controller moves the thermostat target up to 1.2",
])  # fmt: skip
def test_no_ensemble_is_read_from(sentence):
    assert sentence_ensemble(sentence) is None


def test_a_negated_ensemble_leaves_the_affirmed_one():
    assert sentence_ensemble("not in the nve ensemble but in the nvt ensemble").ensemble == "nvt"
    assert sentence_ensemble("the run is not microcanonical: it samples the canonical ensemble").ensemble == "nvt"
    assert sentence_ensemble("constant energy, not constant temperature").ensemble == "nve"
    assert sentence_ensemble("constant temperature, not constant energy").ensemble == "nvt"


def test_the_whole_text_ranks_pressure_over_temperature_over_energy():
    assert text_ensemble("equilibrate at constant temperature. then 2000 steps at constant energy.").ensemble == "nvt"
    assert text_ensemble("first an isothermal run. then constant pressure and temperature.").ensemble == "npt"
    assert text_ensemble("velocities at 1.0. the total energy is conserved.").ensemble == "nve"
    assert text_ensemble("velocities at 1.0. report the pressure.") is None


@pytest.mark.parametrize("sentence, words", [
    ("the particles follow stochastic dynamics at 1.0", "stochastic dynamics"),
    ("use brownian dynamics with a friction of 1", "brownian dynamics"),
    ("an andersen thermostat at 1.0", "andersen"),
    ("the equations of motion are solved for 2000 steps", "equations of motion"),
    ("evolve by newton's second law for 2000 steps", "newton's second law"),
])  # fmt: skip
def test_words_of_evolution_are_found_when_no_ensemble_is_read(sentence, words):
    assert sentence_ensemble(sentence) is None or "andersen" in sentence
    assert evolution_words(sentence) is not None and words in evolution_words(sentence)


@pytest.mark.parametrize("sentence", [
    "methane uptake at 298 k in the grand canonical ensemble",
    "gcmc in the grand-canonical ensemble at 10 bar",
    "the isothermal compressibility of argon",
    "an ensemble-averaged pressure is reported",
    "relax the structure by energy minimisation",
    "run 2000 steps and report the temperature",
    "take the cohesive energy relative to an isolated atom",
    "subtract the energy of the isolated gas-phase molecule",
    "an isolated vacancy in a 4 x 4 x 4 cell",
])  # fmt: skip
def test_no_words_of_md_evolution(sentence):
    assert evolution_words(sentence) is None


@pytest.mark.parametrize("sentence", [
    "the total energy of each run is held constant",
    "the mechanical energy of the system stays constant",
])  # fmt: skip
def test_the_energy_of_a_run_held_constant_is_nve(sentence):
    assert sentence_ensemble(sentence).ensemble == "nve"


@pytest.mark.parametrize("sentence", [
    "elastic constants by energy minimization with the box fixed",
    "a force constant of 1000 and an energy cutoff",
])  # fmt: skip
def test_energy_words_that_prescribe_no_evolution(sentence):
    assert sentence_ensemble(sentence) is None and evolution_words(sentence) is None
