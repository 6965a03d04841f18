"""Gay-Berne ellipsoids in typed simulation descriptions (simagent.described.ellipsoids): per-type
shapes and masses, the share converted to ellipsoids, random orientations and the corrected
rotational temperature are read from the text; a text stating LAMMPS examples/ellipse's setup gets
that example's Gay-Berne coefficients, seeds and barostat settings as listed defaults (its own run
settings win); a text that differs, or states a number no rule reads, keeps the coefficients
missing. Each rule is tested on a wording written here and, when the dev set is present, on the
MDGym task that prompted it. A real short run checks the physics, not numbers copied from a run."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from described_helpers import DEV, run_named

from simagent.described.ellipsoids import COEFF_GAP
from simagent.described.reading import read_description
from tools.lammps.described import render

# our own retelling, with the type properties in clauses (not '(mass; shape)' tuples) and run settings of its own
ELLIPSES = ("Find the mean rotational kinetic energy per ellipsoid in a planar mixture of Gay-Berne ellipsoids and "
            "spheres (LJ units, atom_style ellipsoid, dimension 2). Particles start on a sq lattice with a lattice "
            "density of 0.02 in a 20 x 20 x 1 box, all of type 1; 10 percent of all the particles are then "
            "switched at random into type 2. Type 1 particles are spheres: shape 1 1 1, mass 1.0. Type 2 particles are "
            "ellipsoids with shape 3 x 1 x 1 and a mass of 1.5. Orientations start random (random quaternions for "
            "every particle). Assign initial velocities at a temperature of 2.4. Motion stays in the plane (fix "
            "enforce2d). First equilibrate with fix npt/asphere for 2000 steps, target temperature 2.0, pressure "
            "ramped from 0 to 1; the rotational temperature comes from compute temp/asphere with its degrees of "
            "freedom corrected for the spheres. After that the NPT fix is removed and fix nve/asphere integrates for "
            "3000 steps. The timestep is 0.002.")
# a second wording of ours: the share 'into ellipsoids of type 2', 'Type 1: mass 1, shape 1 1 1', 'a square (sq)
# lattice', 'the pressure goes from 0 to 1', 'switch to NVE'
SECOND = ("What is the average rotational kinetic energy of an ellipsoid in this mixture? Work in reduced LJ units in "
          "two dimensions (dimension 2) with atom_style ellipsoid and the Gay-Berne pair style. Put particles on a "
          "square (sq) lattice of spacing 0.02 in a 20x20x1 box. Randomly turn 10% of the particles into ellipsoids of "
          "type 2; the remaining type 1 particles are spheres. Type 1: mass 1, shape 1 1 1. Type 2: mass 1.5, shape 3 "
          "1 1. Give every particle a random orientation. Draw velocities for a temperature of 2.4. Equilibrate under "
          "NPT (fix npt/asphere) at a target temperature of 2 while the pressure goes from 0 to 1 over 2000 steps, and "
          "report the rotational temperature from compute temp/asphere, correcting its degrees of freedom. Then switch "
          "to NVE (fix nve/asphere) for 4000 steps. Use a timestep of 0.002 and keep the particles in the plane with "
          "fix enforce2d.")
TASK = DEV / "lammps_2" / "49_ellipse.json"


def _core(desc) -> tuple:
    e = desc.ellipsoids
    (sub,) = desc.substitutions
    return (desc.atom_style, desc.dimension, desc.masses, e.shapes, e.still_types, e.measured, e.dof_corrected,
            e.rotation_temperature, (sub.from_type, sub.to_type, sub.fraction, sub.among),
            [(s.dynamics.ensemble, s.dynamics.t_stop, s.dynamics.p_start, s.dynamics.p_stop) for s in desc.stages])


def test_our_wording_reads_the_mixture_and_takes_only_the_unstated_from_the_example():
    desc = read_description(ELLIPSES)
    assert desc.renderable, (desc.unsupported, desc.missing)
    assert _core(desc) == ("ellipsoid", 2, {1: 1.0, 2: 1.5}, {1: (1.0, 1.0, 1.0), 2: (3.0, 1.0, 1.0)}, [1], [2], True,
                           True, (1, 2, 0.1, "all"), [("npt", 2.0, 0.0, 1.0), ("nve", None, None, None)])
    assert [s.steps for s in desc.stages] == [2000, 3000]  # stated, not the example's 2000 + 2000
    assert "3000" in desc.origin["example.departures"].evidence
    e = desc.ellipsoids
    # LAMMPS examples/ellipse/in.ellipse.gayberne: pair_style gayberne 1.0 3.0 1.0 4.0 and its three pair_coeff lines
    assert (e.gamma, e.upsilon, e.mu, e.cutoff) == (1.0, 3.0, 1.0, 4.0)
    assert [(p.i, p.j, p.epsilon, p.sigma, p.well_i, p.well_j, p.cutoff) for p in e.pairs] == [
        (1, 1, 3.0, 1.0, (1, 1, 1), (1, 1, 1), 2.5), (1, 2, 3.0, 1.0, (1, 1, 1), (0, 0, 0), None),
        (2, 2, 1.0, 1.0, (1, 1, 0.2), (0, 0, 0), None)]
    dyn = desc.stages[0].dynamics
    assert (dyn.t_damp, dyn.p_damp, dyn.p_coupling, dyn.mtk, dyn.pchain, dyn.tchain) == (0.1, 1.0, "iso", False, 0, 1)
    for name in ("ellipsoids.pair", "substitution1.seed", "ellipsoids.quat_seed", "neighbor_skin", "run1.t_damp",
                 "run1.p_damp"):
        assert "examples/ellipse" in desc.defaults[name]
    text = render(desc, rotation=True)
    for line in ("atom_style      ellipsoid", "set             type 2 shape 3 1 1", "pair_style      gayberne 1 3 1 4",
                 "fix             dyn1 all npt/asphere temp 2 2 0.1 iso 0 1 1 mtk no pchain 0 tchain 1",
                 "compute_modify  dyn1_temp extra/dof ${gb_dof}", "fix             dyn1 all nve/asphere",
                 "variable        gb_dof equal 1*count(gb_still)+2",
                 "compute         gb_erot gb_measured erotate/asphere"):
        assert line in text


@pytest.mark.skipif(not TASK.is_file(), reason="MDGym dev set not present")
def test_the_dev_task_reads_as_our_wording():
    """The task's '(mass; a,b,c)' tuples, 'converted to type 2', 'the NPT fix is removed ... NVE' and
    'target temperature 2' give the description our clause wording gives (its production is 50,000 steps)."""
    task = read_description(json.loads(TASK.read_text())["problem_description"])
    ours = read_description(ELLIPSES)
    assert task.renderable, (task.unsupported, task.missing)
    assert _core(task) == _core(ours) and [s.steps for s in task.stages] == [2000, 50000]


def test_a_second_wording_reads_the_same_and_unstated_orientations_are_a_listed_fill():
    second, ours = read_description(SECOND), read_description(ELLIPSES)
    assert second.renderable, (second.unsupported, second.missing)
    assert _core(second) == _core(ours) and [s.steps for s in second.stages] == [2000, 4000]
    assert second.origin["ellipsoids.orientations"].source == "rules"
    silent = read_description(SECOND.replace(" Give every particle a random orientation.", ""))
    assert silent.renderable and "examples/ellipse" in silent.defaults["ellipsoids.orientations"]


@pytest.mark.parametrize(("text", "ensembles"), [
    # the removed ensemble is no dynamics of the sentence: NVE follows (ours, then a second wording)
    ("LJ fluid, fcc lattice at density 0.8, 5 x 5 x 5 cells, LJ cutoff 2.5, velocities at 1.0. Run NPT at a target "
     "temperature of 1.0 and pressure 0.5 for 500 steps. Then the npt fix gets removed and the run continues in NVE "
     "for 800 steps.", [("npt", 1.0), ("nve", None)]),
    ("LJ fluid, fcc lattice at density 0.8, 5 x 5 x 5 cells, LJ cutoff 2.5, velocities at 1.0. Use fix npt with "
     "set-point temperature 1.0 and pressure 0.5 for 500 steps. After removing the NPT fix, integrate with plain "
     "NVE for 800 steps.", [("npt", 1.0), ("nve", None)]),
])
def test_a_removed_npt_fix_hands_over_to_nve_and_a_target_temperature_is_the_set_point(text, ensembles):
    desc = read_description(text)
    assert [(s.dynamics.ensemble, s.dynamics.t_stop) for s in desc.stages] == ensembles
    assert [s.steps for s in desc.stages] == [500, 800]


@pytest.mark.parametrize(("change", "missing"), [
    # another aspect ratio: not examples/ellipse, its coefficients would be a guess
    (("shape 3 x 1 x 1", "shape 2 x 1 x 1"), COEFF_GAP),
    # a number no rule reads: the text says something this reading does not understand
    (("(fix enforce2d).", "(fix enforce2d). Each sphere carries a charge of 0.3."), "what the numbers 0.3 are"),
])
def test_a_text_that_is_not_the_example_keeps_the_coefficients_missing(change, missing):
    desc = read_description(ELLIPSES.replace(*change))
    assert desc.ellipsoids is None and not desc.renderable
    assert any(missing in m for m in desc.missing), desc.missing


def test_a_type_without_a_shape_is_named():
    desc = read_description(ELLIPSES.replace("shape 1 1 1, mass 1.0", "mass 1.0"))
    assert "the shape of atom type 1" in desc.missing and desc.ellipsoids is None


@pytest.mark.parametrize(("words", "measured"), [
    ("Find the mean rotational kinetic energy per ellipsoid", [2]),
    ("Report the rotational kinetic energy of the type 2 particles", [2]),
    ("Report the average rotational energy of all particles", [1, 2]),
])
def test_what_the_rotational_energy_is_averaged_over(words, measured):
    desc = read_description(ELLIPSES.replace("Find the mean rotational kinetic energy per ellipsoid", words))
    assert desc.ellipsoids.measured == measured


def _last_row(log: str) -> dict[str, float]:
    header = [ln for ln in log.splitlines() if ln.split()[:1] == ["Step"]][-1]
    rows = log.split(header)[-1].splitlines()[1:]
    values = [ln.split() for ln in rows if ln.split() and re.fullmatch(r"\d+", ln.split()[0])]
    return dict(zip(header.split(), map(float, values[-1]), strict=True))


def _block(log: str, column: str) -> dict[str, np.ndarray]:
    header = next(ln for ln in log.splitlines() if ln.split()[:1] == ["Step"] and column in ln.split())
    rows = [ln.split() for ln in log.split(header)[1].split("Loop time")[0].splitlines()]
    rows = [r for r in rows if len(r) == len(header.split()) and re.fullmatch(r"\d+", r[0])]
    return {k: np.array([float(r[i]) for r in rows]) for i, k in enumerate(header.split())}


def test_a_short_run_rotates_the_ellipsoids_keeps_2d_and_converts_a_binomial_share(tmp_path):
    desc = read_description(ELLIPSES)
    checks = ["compute         still_erot gb_still erotate/asphere", "compute         zlo all reduce min z",
              "compute         zhi all reduce max z", "compute         vzlo all reduce min vz",
              "compute         vzhi all reduce max vz", "variable        n2 equal count(gb_measured)",
              "variable        n equal count(all)",
              "thermo_style    custom step c_still_erot c_zlo c_zhi c_vzlo c_vzhi v_n2 v_n", "run             0"]
    log = run_named(render(desc, rotation=True) + "\n".join(checks) + "\n", tmp_path, "ellipse")
    end = _last_row(log)
    # spheres are never torqued (and start without angular momentum); everything stays in the plane
    assert end["c_still_erot"] == 0.0
    assert end["c_zlo"] == end["c_zhi"] == 0.0 and end["c_vzlo"] == end["c_vzhi"] == 0.0
    # set type/fraction converts each particle with probability 0.1: binomial(n, 0.1) within 3 sd
    n, n2 = end["v_n"], end["v_n2"]
    assert n == 400 and abs(n2 - 0.1 * n) <= 3 * (n * 0.1 * 0.9) ** 0.5
    nve = _block(log, "v_gb_erot_each")  # the production (NVE) stage
    erot, temp, trot = nve["v_gb_erot_each"][1:], nve["Temp"][1:], nve["c_rot"][1:]
    # the ellipsoids started without angular momentum: rotation comes from Gay-Berne torques; in 2D each
    # has one rotational degree of freedom, so equipartition gives <E_rot> = T/2 per ellipsoid
    assert erot.min() > 0 and abs(erot.mean() / (0.5 * temp.mean()) - 1) < 0.25
    # with the spheres' never-excited rotations removed, temp/asphere agrees with the translational temperature
    assert abs(trot.mean() / temp.mean() - 1) < 0.1


@pytest.mark.parametrize(("metric", "text", "unit"), [
    # 'in a system of mixed pa|rticles', cut at 20 characters, once read as pascal (ours, then the task's form)
    ("average_rotational_kinetic_energy", "Report the rotational kinetic energy of the rods in a system of mixed "
     "particles with discs.", None),
    ("average_rotational_kinetic_energy", "Compute the average rotational kinetic energy of the ellipsoidal particles "
     "in a system of mixed particles with spheres.", None),
    ("self_diffusion", "Compute the self-diffusion coefficient in cm^2/s of the liquid.", "cm^2/s"),
])
def test_a_unit_after_in_is_read_from_whole_words_only(metric, text, unit):
    from simagent.solve import read_metric

    assert read_metric(metric, text).unit == unit
