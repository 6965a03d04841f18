"""Multiple timestepping (run_style respa) as a text states it, and the example system of a text retelling
examples/nb3b (simagent.described.respa, simagent.described.example_system). Texts written for this file,
except the dev-set text read through described_helpers.dev_text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from simagent.backends.expert.numbers import plain_numbers
from simagent.described.reading import read_description
from tests.described_helpers import dev_text, run_inputs
from tools.lammps.examples import example_folder

# a Lennard-Jones system with no example behind it: what the text states is all there is
LJ = ("Lennard-Jones particles in reduced units start on an fcc lattice at a density of 0.8 in a 5 x 5 x 5 box, "
      "with the pair interaction truncated at 2.5. Velocities are drawn at a temperature of 1.0. {respa} Run 200 "
      "steps in the NVE ensemble. Report the average temperature.")

# the magnesium hydroxide system of examples/nb3b, in other words and order than the dev task
NB3B = ("Report the mean potential energy per atom. Metal hydroxide layers in real units, atom style full, "
        "periodic in x, y and z: O-H bonds follow a Morse potential; no angle, dihedral or improper terms. "
        "The pair part overlays pairwise LJ plus Coulomb (cutoff 10.0 angstrom, arithmetic mixing) with a "
        "harmonic three-body nb3b term. Bonded neighbours: 1-2 and 1-3 pairs excluded, 1-4 pairs kept in full. "
        "Ewald summation of the Coulomb and dispersion terms to a relative accuracy of 10⁻⁴. {respa} Create "
        "velocities for 298 K with a Gaussian distribution and no net momentum, then run {steps} steps with fix "
        "nve while the temperature is held at 298 K by rescaling the velocities.")
NB3B_RESPA = ("Integrate with r-RESPA on two levels and a timestep of 1.0 fs, the k-space part at the outer level and "
              "the pairwise terms at the inner level.")

needs_examples = pytest.mark.skipif(example_folder("nb3b") is None, reason="LAMMPS examples not installed")


@pytest.mark.parametrize("respa, loops, forces", [
    ("Use a two-level rRESPA integrator with two inner steps per outer step: pair forces at the inner level, "
     "k-space at the outer level.", [2], {"pair": 1, "kspace": 2}),
    ("Time integration is multiple-timestep r-RESPA over 2 levels with a loop factor of 4, short-range forces "
     "being computed at the inner level.", [4], {"pair": 1}),
    ("The timestep is 0.005; a two-level RESPA scheme with an inner timestep of 0.0025 evaluates the nonbonded "
     "forces at the outermost level.", [2], {"pair": 2}),
])  # fmt: skip
def test_stated_respa_is_read_and_rendered(respa, loops, forces):
    from tools.lammps.described import render

    desc = read_description(LJ.format(respa=respa))
    assert desc.renderable, (desc.unsupported, desc.missing)
    assert (desc.respa.levels, desc.respa.loops, desc.respa.forces) == (2, loops, forces)
    command = " ".join(["run_style respa 2", *map(str, loops), *(f"{k} {v}" for k, v in forces.items())])
    assert re.search(rf"^{command}$", render(desc), re.MULTILINE)


@pytest.mark.parametrize("respa, missing", [
    # no loop factor, and no example whose own could stand for it
    ("Use a two-level rRESPA integrator, pair forces at the inner level.", "the RESPA loop factor"),
    ("Integrate with r-RESPA.", "the number of RESPA levels"),
    # a loop factor of nothing: LAMMPS would refuse 'run_style respa 2 0'
    ("Use a two-level rRESPA integrator with a loop factor of 0, pair forces at the inner level.",
     "the RESPA loop factor (at least 1"),
])  # fmt: skip
def test_respa_without_what_it_needs_is_missing_never_guessed(respa, missing):
    desc = read_description(LJ.format(respa=respa))
    assert not desc.renderable and desc.respa is None
    assert any(m.startswith(missing) for m in desc.missing), desc.missing


def test_no_respa_stated_renders_no_run_style():
    from tools.lammps.described import render

    desc = read_description(LJ.format(respa=""))
    assert desc.respa is None and "run_style" not in render(desc)


@pytest.mark.parametrize("sentence, etol, ftol", [
    ("Minimise first, with energy and force tolerances of 1e-5 and 1e-7, respectively.", 1e-5, 1e-7),
    ("The structure is relaxed by energy minimisation, force and energy criteria set to 1e-9 and 1e-4.", 1e-4, 1e-9),
    ("Minimize with energy and force tolerances of 1e-6.", 1e-6, 1e-6),  # one number for both, as before
    ("A conjugate-gradient minimisation is run to energy and force tolerance values of 1e-7.", 1e-7, 1e-7),
])  # fmt: skip
def test_two_minimisation_tolerances_in_the_order_named(sentence, etol, ftol):
    desc = read_description(LJ.format(respa=sentence))
    (m,) = [s.minimize for s in desc.stages if s.kind == "minimize"]
    assert (m.etol, m.ftol) == (etol, ftol)


@pytest.mark.parametrize("written, plain", [
    ("an accuracy of 10⁻⁴.", "an accuracy of 1e-4."),
    ("10⁵ steps", "1e5 steps"),
    ("every 10 steps", "every 10 steps"),
])  # fmt: skip
def test_a_bare_power_of_ten_in_superscripts(written, plain):
    assert plain_numbers(written) == plain


@needs_examples
def test_paraphrased_nb3b_is_the_nb3b_example_with_its_respa_loop():
    desc = read_description(NB3B.format(respa=NB3B_RESPA, steps=20))
    assert desc.example_system is not None and desc.example_system.name == "nb3b", desc.unsupported
    assert desc.renderable, (desc.unsupported, desc.missing)
    # the text puts pair and k-space where the example does; the loop factor it leaves out is the example's
    assert (desc.respa.levels, desc.respa.loops, desc.respa.forces) == (2, [2], {"pair": 1, "kspace": 2})
    assert "nb3b" in desc.defaults["respa.loops"]
    # rescaling stated without an interval or window: the example's, which rescales to the same 298 K
    (stage,) = desc.stages
    assert (stage.dynamics.rescale_every, stage.dynamics.rescale_window) == (10, 25)
    assert "nb3b" in desc.defaults[f"{stage.name}.rescale"]
    # no angular momentum stated: the example's creation zeroes it
    assert desc.velocity.zero_rotation and desc.velocity.seed == 4928459


@needs_examples
def test_a_loop_the_example_has_for_other_levels_is_not_taken():
    swapped = NB3B_RESPA.replace("the k-space part at the outer level and the pairwise terms at the inner level",
                                 "the k-space part at the inner level and the pairwise terms at the outer level")
    desc = read_description(NB3B.format(respa=swapped, steps=20))
    assert desc.respa is None and any(m.startswith("the RESPA loop factor") for m in desc.missing), desc.missing


@needs_examples
def test_nb3b_example_fills_the_minimisation_limits_for_its_own_tolerances():
    text = NB3B.format(respa=NB3B_RESPA + " Minimise first, to energy and force tolerances of 1e-6 and 1e-8, "
                       "respectively.", steps=20)
    desc = read_description(text)
    assert desc.renderable, (desc.unsupported, desc.missing)
    (m,) = [s.minimize for s in desc.stages if s.kind == "minimize"]
    assert (m.etol, m.ftol, m.max_iterations, m.max_evaluations) == (1e-6, 1e-8, 1000, 10000)
    other = read_description(text.replace("1e-8", "1e-7"))
    (m,) = [s.minimize for s in other.stages if s.kind == "minimize"]
    assert m.max_iterations != 1000 and "nb3b" not in other.defaults[
        next(k for k in other.defaults if k.endswith(".max_iterations"))]


@needs_examples
@pytest.mark.parametrize("wording", [
    "a three-body harmonic nb3b term",  # the three-body term's name is no harmonic bond
    "an nb3b/harmonic three-body term",
])  # fmt: skip
def test_the_harmonic_of_nb3b_names_no_harmonic_bonds(wording):
    text = NB3B.format(respa=NB3B_RESPA, steps=20).replace("a harmonic three-body nb3b term", wording)
    assert read_description(text).example_system is not None


def test_the_dev_nb3b_text_renders_its_respa():
    from tools.lammps.described import render

    desc = read_description(dev_text("lammps/14_nb3b.json"))
    if example_folder("nb3b") is None:
        pytest.skip("LAMMPS examples not installed")
    assert desc.example_system is not None and desc.example_system.name == "nb3b", desc.unsupported
    assert desc.renderable, (desc.unsupported, desc.missing)
    text = render(desc)
    assert re.search(r"^run_style respa 2 2 pair 1 kspace 2$", text, re.MULTILINE)
    assert re.search(r"^minimize\s+1e-06 1e-08 1000 10000$", text, re.MULTILINE)


@needs_examples
def test_rendered_nb3b_runs_under_respa_at_the_rescaled_temperature(tmp_path: Path):
    """20 steps of the example's system under the rendered two-level RESPA: LAMMPS runs it (its log names the
    respa levels); between rescalings the temperature drifts (velocities created at 298 K spread into the
    potential energy), and every 10th step the rescaling brings it back within its 25 K window of 298 K."""
    from tools.lammps.described import render
    from tools.lammps.example_system import job_files
    from tools.lammps.parse import read_output

    desc = read_description(NB3B.format(respa=NB3B_RESPA, steps=20))
    folder = run_inputs({"in.lammps": render(desc), **job_files(desc.example_system)}, tmp_path / "nb3b")
    log = (folder / "log.lammps").read_text()
    assert re.search(r"^run_style respa 2 2 pair 1 kspace 2$", log, re.MULTILINE)
    (block,) = read_output(folder).runs
    steps, temps = list(block["Step"]), list(block["Temp"])
    assert steps[-1] == 20 and min(temps) < 298 - 25  # it does drift out of the window between rescalings
    assert all(abs(t - 298) <= 25 + 1e-6 for s, t in zip(steps, temps, strict=True) if s % 10 == 0)
