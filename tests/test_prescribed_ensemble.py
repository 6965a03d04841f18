"""A prescribed ensemble is honoured or refused, never replaced by a protocol's default (issue 16, item 5;
principle 3). Every task text and request here was written for this file, except the dev-set texts read
through described_helpers.dev_text:

- the described reading takes the ensemble from any clear wording (simagent.backends.expert.ensemble_words),
  each run of a sentence from its own clause ('N steps in NVT, then M steps in NVE'), and NVT with a
  Langevin, Berendsen or rescaling thermostat as NVE integration under that thermostat (LAMMPS's way);
- a run whose dynamics is stated in words that are not understood is refused in `solve` (no fallback
  protocol runs its default ensemble) and asked about in `ask`; a text that states no ensemble at all
  gets the protocol's default, listed with its reason;
- a named thermostat or dynamics the renderer cannot write is refused by name.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from described_helpers import dev_text

from agents.planner import plan_runs
from simagent.backends.expert import ExpertBackend
from simagent.described.reading import read_description
from simagent.solve import MDGymTask, TaskBackend, read_metrics

SYSTEM = ("Lennard-Jones particles in reduced units start on an fcc lattice at a density of 0.8 in a 5 x 5 x 5 box, "
          "with the pair interaction truncated at 2.5. Velocities are drawn at a temperature of 1.0. ")
REPORT = " Report the average temperature."


def stages(text: str) -> list[tuple]:
    desc = read_description(text)
    assert desc.renderable, (desc.missing, desc.unsupported)
    return [(s.steps, s.dynamics.ensemble, s.dynamics.thermostat, s.dynamics.t_stop) for s in desc.stages]


@pytest.mark.parametrize("run", [
    "Let the atoms evolve for 2000 steps under Newton's equations with the total energy held constant.",
    "The crystal is then followed for 2000 steps at constant energy.",
    "For 2000 steps the total energy is conserved.",
    "Isolate the system from any heat bath and integrate 2000 steps.",
    "Integrate 2000 steps without any thermostat.",
    "The next 2000 steps sample the microcanonical ensemble.",
    "The 2000-step trajectory keeps the number of particles, volume and energy fixed.",
    "Propagate the atoms for 2000 steps with plain Newtonian dynamics.",
])  # fmt: skip
def test_constant_energy_runs_are_nve_in_a_task_text(run):
    assert stages(SYSTEM + run + REPORT) == [(2000, "nve", None, None)]


@pytest.mark.parametrize("run", [
    "Run 2000 steps at constant temperature.",
    "The system is coupled to a heat bath at 1.0 for 2000 steps.",
    "A thermostat holds the temperature at 1.0 for 2000 steps.",
    "Sample the canonical ensemble for 2000 steps.",
])  # fmt: skip
def test_an_unnamed_thermostat_is_nose_hoover_listed_as_a_default(run):
    desc = read_description(SYSTEM + run + REPORT)
    assert stages(SYSTEM + run + REPORT) == [(2000, "nvt", "nose-hoover", 1.0)]
    origin = desc.origin["run1.thermostat"]
    assert origin.source == "default" and "without naming a thermostat" in origin.evidence


def test_a_named_nvt_thermostat_is_no_default():
    desc = read_description(SYSTEM + "Run 2000 steps in the NVT ensemble at 1.0." + REPORT)
    assert "run1.thermostat" not in desc.origin


@pytest.mark.parametrize("run, thermostat", [
    ("Run 2000 steps in the NVT ensemble with a Langevin thermostat at 1.0.", "langevin"),
    ("Sample the canonical ensemble for 2000 steps with a Berendsen thermostat at 1.0.", "berendsen"),
    ("Keep a constant temperature of 1.0 by rescaling the velocities, for 2000 steps.", "velocity-rescale"),
])  # fmt: skip
def test_a_thermostat_named_with_nvt_acts_on_nve_integration(run, thermostat):
    """Before: NVT + Langevin was rendered as fix nvt (Nose-Hoover), the named thermostat dropped."""
    assert stages(SYSTEM + run + REPORT) == [(2000, "nve", thermostat, 1.0)]


@pytest.mark.parametrize("run, expected", [
    ("Equilibrate for 1000 steps in the NVT ensemble at 1.0, then run 2000 steps in the NVE ensemble.",
     [(1000, "nvt", "nose-hoover", 1.0), (2000, "nve", None, None)]),
    ("Run 1000 steps at constant energy, followed by 2000 steps at constant temperature 1.0.",
     [(1000, "nve", None, None), (2000, "nvt", "nose-hoover", 1.0)]),
    ("Hold the temperature at 1.0 with a thermostat for 1000 steps, then isolate the system from any heat bath "
     "and continue for 2000 steps.", [(1000, "nvt", "nose-hoover", 1.0), (2000, "nve", None, None)]),
    ("Equilibrate 1000 steps under a Berendsen thermostat at 1.0, followed by 2000 steps with a Langevin "
     "thermostat.", [(1000, "nve", "berendsen", 1.0), (2000, "nve", "langevin", 1.0)]),
    # one dynamics named: it holds for both runs, as before
    ("Run 1000 steps in the NVE ensemble, then 2000 more steps.",
     [(1000, "nve", None, None), (2000, "nve", None, None)]),
])  # fmt: skip
def test_each_run_of_a_sentence_gets_its_own_clause_dynamics(run, expected):
    """Before: the sentence's one dynamics (the higher ranked, NVT) was given to both runs."""
    assert stages(SYSTEM + run + REPORT) == expected


def test_the_last_clause_stays_in_force_for_the_next_sentence():
    text = SYSTEM + "Run 1000 steps in the NVT ensemble at 1.0, then switch to the NVE ensemble. Run 2000 steps."
    text += REPORT
    assert stages(text) == [(1000, "nvt", "nose-hoover", 1.0), (2000, "nve", None, None)]


@pytest.mark.parametrize("run", [
    "The run is not microcanonical: sample the canonical ensemble at 1.0 for 2000 steps.",
    "Rather than in the NVE ensemble, run the 2000 steps in the NVT ensemble at 1.0.",
])  # fmt: skip
def test_a_negated_ensemble_is_not_run(run):
    assert stages(SYSTEM + run + REPORT) == [(2000, "nvt", "nose-hoover", 1.0)]


def test_isothermal_after_a_barostat_keeps_the_barostat():
    text = (SYSTEM + "Run 1000 steps in the NPT ensemble at a temperature of 1.0 and a pressure of 0.5. The next "
            "stage is isothermal at 1.0 as well. Run 2000 steps." + REPORT)
    assert [(s[0], s[1]) for s in stages(text)] == [(1000, "npt"), (2000, "npt")]
    assert read_description(text).stages[1].dynamics.p_stop == 0.5


@pytest.mark.parametrize("run", [
    "Run 2000 steps in the NPH ensemble at a pressure of 0.5.",
    "An isoenthalpic run of 2000 steps follows, at a pressure of 0.5.",
])  # fmt: skip
def test_nph_is_read_with_its_pressure(run):
    desc = read_description(SYSTEM + run + REPORT)
    assert [(s.steps, s.dynamics.ensemble, s.dynamics.p_stop) for s in desc.stages] == [(2000, "nph", 0.5)]


@pytest.mark.parametrize("run, name", [
    ("Run 2000 steps with an Andersen thermostat at 1.0.", "Andersen"),
    ("Run 2000 steps with the Bussi stochastic velocity-rescaling thermostat at 1.0.", "CSVR"),
    ("Run 2000 steps of Brownian dynamics at 1.0.", "Brownian"),
])  # fmt: skip
def test_a_named_thermostat_or_dynamics_not_rendered_is_refused_by_name(run, name):
    desc = read_description(SYSTEM + run + REPORT)
    assert any(name in u for u in desc.unsupported) and not desc.renderable


# ---------------------------------------------------------------------------------------------
# solve: a stated but unread ensemble is a question, never the fallback protocol's default
# ---------------------------------------------------------------------------------------------


def solve_reading(text: str):
    task = MDGymTask(id="t", problem_description=text, engine="lammps", metrics=["average_temperature"])
    backend = TaskBackend(ExpertBackend(), lambda spec: read_metrics(task, True), [], "lammps")
    return backend, backend.task_spec(text)


@pytest.mark.parametrize("run, words", [
    ("Let the atoms evolve for 2000 steps by Newton's second law and nothing else.", "newton's second law"),
    ("Run 2000 steps under stochastic dynamics at 1.0.", "stochastic dynamics"),
    ("The equations of motion are then solved for 2000 steps.", "equations of motion"),
])  # fmt: skip
def test_solve_refuses_a_run_whose_stated_dynamics_it_does_not_understand(run, words):
    """Before: the description was incomplete, the request reader's protocol (lammps/fluid_md) ran its
    default NVT in its place."""
    backend, spec = solve_reading(SYSTEM + run + REPORT)
    assert spec.described is None
    [item] = [m for m in spec.missing if "stated, not understood" in m]
    assert item.startswith("the dynamics (ensemble) of the 2000-step run") and f"'{words}'" in item
    assert not any(m.startswith("ensemble (") for m in spec.missing)  # one question, naming the run


def test_solve_keeps_a_default_ensemble_when_none_is_stated_and_lists_it():
    backend, spec = solve_reading(SYSTEM + "Run 2000 steps." + REPORT)
    assert not any("stated, not understood" in m for m in spec.missing)
    runs, defaults, _ = plan_runs(spec, SimpleNamespace(backend=backend))
    assert [r.protocol for r in runs] == ["lammps/fluid_md"]
    [default] = [d for d in defaults if d.parameter == "production_ensemble"]
    assert default.value == "nvt" and default.reason  # report.md's "Defaults applied" lists it with its reason


# ---------------------------------------------------------------------------------------------
# ask: the request reader's ensemble
# ---------------------------------------------------------------------------------------------

ARGON = "Pressure of liquid argon at 90 K and 1.4 g/cm3 with the Lennard-Jones potential"


@pytest.mark.parametrize("request_text, ensemble", [
    (ARGON + ", simulated at constant energy.", "nve"),
    (ARGON + "; the total energy must be conserved during the run.", "nve"),
    (ARGON + " in the microcanonical ensemble.", "nve"),
    (ARGON + " at constant temperature.", "nvt"),
    (ARGON + ", with the system coupled to a heat bath.", "nvt"),
    (ARGON + ", not in the NVE ensemble but in the NVT ensemble.", "nvt"),
    (ARGON + ", in the isothermal-isobaric ensemble.", "npt"),
    (ARGON + ".", None),
])  # fmt: skip
def test_the_request_reader_reads_the_ensemble_in_many_words(request_text, ensemble):
    spec = ExpertBackend().task_spec(request_text)
    assert spec.controls.ensemble == ensemble
    assert not any(m.startswith("ensemble (") for m in spec.missing)


@pytest.mark.parametrize("request_text, words", [
    (ARGON + ", under stochastic dynamics.", "stochastic dynamics"),
    (ARGON + ", integrating the equations of motion for 5000 steps.", "equations of motion"),
    (ARGON + " in the NPH ensemble.", "NPH"),
])  # fmt: skip
def test_a_free_request_with_an_unread_ensemble_is_asked_about(request_text, words):
    from agents.query import clarification_question

    spec = ExpertBackend().task_spec(request_text)
    [item] = [m for m in spec.missing if m.startswith("ensemble (")]
    assert words in item
    assert "Please specify the ensemble" in clarification_question(spec)


def test_a_monte_carlo_ensemble_is_no_unread_md_ensemble():
    spec = ExpertBackend().task_spec("Methane uptake of IRMOF-1 at 298 K and 10 bar by GCMC in the grand canonical "
                                     "ensemble")
    assert not any(m.startswith("ensemble (") for m in spec.missing)


# ---------------------------------------------------------------------------------------------
# dev-set texts as further inputs (their readings were wrong before: the named thermostat was dropped)
# ---------------------------------------------------------------------------------------------


def test_dev_texts_nve_with_langevin_and_one_sentence_two_stages():
    nve_langevin = read_description(dev_text("lammps_3/95_adsorb_particle.json"))
    assert {(s.dynamics.ensemble, s.dynamics.thermostat, s.dynamics.t_stop) for s in nve_langevin.stages} == \
        {("nve", "langevin", 300.0)}
    two = read_description(dev_text("lammps_3/91_ion_hydronium.json"))
    assert [(s.steps, s.dynamics.thermostat) for s in two.stages] == [(10000, "berendsen"), (500000, "langevin")]
    cnt = read_description(dev_text("lammps_2/104_wat_in_cnt.json"))
    assert [(s.steps, s.dynamics.ensemble, s.dynamics.thermostat) for s in cnt.stages] == \
        [(20000, "nvt", "nose-hoover"), (10000, "nve", "berendsen")]


EXPANSION = ("Compute the linear thermal expansion coefficient of fcc copper with the Mishin EAM potential between "
             "300 K and 500 K, {ensemble}.")


@pytest.mark.parametrize("ensemble, refused", [
    ("running each temperature in the NVE ensemble", True),
    ("with the total energy of each run held constant", True),
    ("in the NPT ensemble at zero pressure", False),
])  # fmt: skip
def test_solve_runs_no_protocol_whose_production_is_another_ensemble(ensemble, refused):
    """The description is incomplete (no units, lattice or run length), so a protocol answers; one that
    runs its own ensemble (lammps/thermal_expansion: NPT) is no substitute for a stated NVE."""
    from simagent.errors import RequestError

    text = EXPANSION.format(ensemble=ensemble)
    task = MDGymTask(id="t", problem_description=text, engine="lammps",
                     metrics=["linear_thermal_expansion_coefficient"])
    backend = TaskBackend(ExpertBackend(), lambda spec: read_metrics(task, False), [], "lammps")
    spec = backend.task_spec(text)
    if refused:
        with pytest.raises(RequestError, match="runs NPT in its production; simagent runs no substitute"):
            plan_runs(spec, SimpleNamespace(backend=backend))
    else:
        runs, _, _ = plan_runs(spec, SimpleNamespace(backend=backend))
        assert [r.protocol for r in runs] == ["lammps/thermal_expansion"]


# ---------------------------------------------------------------------------------------------
# a thermostat in a sentence of its own, on the NVE integration another sentence states
# (simagent.described.separate_thermostat); paraphrases written for this file
# ---------------------------------------------------------------------------------------------


def thermostatted(text: str) -> list[tuple]:
    desc = read_description(SYSTEM + text + REPORT)
    assert desc.renderable, (desc.missing, desc.unsupported)
    return [(s.steps, s.dynamics.ensemble, s.dynamics.thermostat, s.dynamics.t_stop, s.dynamics.t_damp)
            for s in desc.stages]


@pytest.mark.parametrize("text, expected", [
    # the thermostat first, the NVE run after
    ("A Berendsen thermostat with a damping time of 0.5 keeps the temperature at 1.5. The equations of motion "
     "are integrated with fix nve for 3000 steps.", [(3000, "nve", "berendsen", 1.5, 0.5)]),
    # swapped: the NVE run first, the thermostat after it
    ("The atoms are propagated in the NVE ensemble for 3000 steps. Throughout, a Berendsen thermostat with a "
     "damping time of 0.5 holds the temperature at 1.5.", [(3000, "nve", "berendsen", 1.5, 0.5)]),
    # other words, a sentence in between, another thermostat on fix nve
    ("Temperature control comes from a Langevin thermostat at 1.5 with a damping of 2.0. Neighbor lists are "
     "rebuilt every step. The trajectory is generated by NVE integration over 3000 steps.",
     [(3000, "nve", "langevin", 1.5, 2.0)]),
])  # fmt: skip
def test_a_thermostat_sentence_acts_on_the_nve_run_of_another_sentence(text, expected):
    """Before: the later sentence's plain NVE replaced the thermostat (first order), or the thermostat came
    after the run's stage and was lost (swapped order): NVE without a thermostat, silently."""
    assert thermostatted(text) == expected
    origin = read_description(SYSTEM + text + REPORT).origin["run1.thermostat"]
    assert origin.source == "rules" and "sentence of its own" in origin.evidence


def test_a_joined_thermostat_without_damping_gets_the_listed_default():
    desc = read_description(SYSTEM + "Velocities are rescaled by a Berendsen thermostat to a temperature of 1.5. "
                            "The run uses the NVE ensemble for 3000 steps." + REPORT)
    assert [(s.dynamics.thermostat, s.dynamics.t_stop) for s in desc.stages] == [("berendsen", 1.5)]
    assert desc.origin["run1.t_damp"].source == "default"


@pytest.mark.parametrize("text, expected", [
    # the thermostat has a run length of its own: two stages, as before
    ("A Berendsen thermostat holds the temperature at 1.5 for 1000 steps. The system is then run in the NVE "
     "ensemble for 3000 steps.", [(1000, "nve", "berendsen", 1.5), (3000, "nve", None, None)]),
    ("The system is run in the NVE ensemble for 3000 steps. After that, a Langevin thermostat at 1.5 acts for "
     "1000 steps.", [(3000, "nve", None, None), (1000, "nve", "langevin", 1.5)]),
])  # fmt: skip
def test_a_thermostat_with_its_own_run_is_a_stage_of_its_own(text, expected):
    assert [t[:4] for t in thermostatted(text)] == expected


@pytest.mark.parametrize("text", [
    # an earlier stage under the thermostat, with no run length stated
    "First the system is equilibrated with a Berendsen thermostat at 1.5. Then it is run in the NVE ensemble for "
    "3000 steps.",
    "A Langevin thermostat at 1.5 brings the liquid to temperature. A production run of 3000 steps follows in "
    "the NVE ensemble.",
    # a later one
    "The system is run in the NVE ensemble for 3000 steps. Afterwards a Berendsen thermostat holds it at 1.5.",
])  # fmt: skip
def test_a_thermostat_stage_in_sequence_without_a_length_is_missing_not_dropped(text):
    desc = read_description(SYSTEM + text + REPORT)
    assert not desc.renderable
    assert any(m.startswith("the run length of the stage under the") for m in desc.missing), desc.missing


@pytest.mark.parametrize("text", [
    "A Berendsen thermostat holds the temperature at 1.5. For 3000 steps the total energy is conserved.",
    "A Langevin thermostat at 1.5 is applied. The atoms are integrated for 3000 steps without any thermostat.",
])  # fmt: skip
def test_a_thermostat_and_a_run_kept_at_constant_energy_are_asked_about(text):
    desc = read_description(SYSTEM + text + REPORT)
    assert not desc.renderable
    assert any(m.startswith("whether the run of") for m in desc.missing), desc.missing


@pytest.mark.parametrize("text", [
    "A Langevin thermostat at 1.5 with a damping of 2.0 is applied. The atoms are then propagated in the NVT "
    "ensemble for 3000 steps.",
    "Temperature control: a Berendsen thermostat at 1.5. The system evolves in the NPT ensemble at a pressure of "
    "1.0 for 3000 steps.",
])  # fmt: skip
def test_a_thermostat_sentence_before_a_run_with_its_own_thermostat_is_asked_about(text):
    """The run's ensemble brings a thermostat of its own (Nose-Hoover): which one holds the temperature is
    listed, never settled by dropping the other sentence's thermostat (before: the Langevin/Berendsen vanished)."""
    desc = read_description(SYSTEM + text + REPORT)
    assert not desc.renderable
    assert any(m.startswith(("which thermostat holds the", "the run length of the stage under the"))
               for m in desc.missing), desc.missing


@pytest.mark.parametrize("text, named", [
    ("A Berendsen thermostat with a damping time of 0 keeps the temperature at 1.5. The atoms are propagated in "
     "the NVE ensemble for 3000 steps.", "a physical thermostat damping for run1 (the text states 0)"),
    ("Run 3000 steps in the NVT ensemble at a temperature of -1.5.", "a physical target temperature for run1"),
])  # fmt: skip
def test_a_damping_of_zero_or_a_negative_temperature_is_named_not_rendered(text, named):
    desc = read_description(SYSTEM + text + REPORT)
    assert not desc.renderable and any(m.startswith(named) for m in desc.missing), desc.missing
