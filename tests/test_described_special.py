"""Single prescribed features of a described simulation: a contact tracker overlaid on the pair
potential (pair_style tracker) and a PID controller on a thermostat's set point (fix controller).
Every reading rule is tested on wordings written for these tests (never a task's own wording), and
on the MDGym dev task that prompted it when the dev set is present. The real runs check physics the
features must obey: the tracker adds no force or energy (the same run without it gives the same
energies), and the controller drives the temperature to its set point, away from the thermostat's
starting target."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from described_helpers import DEV
from described_helpers import run_named as run_lammps

from simagent.described.reading import read_description
from simagent.described.special import CONTROLLER_NAME, TRACKER_NAME
from tools.lammps.described import render

TRACKED = ("A Lennard-Jones liquid in reduced units: atoms start on a face-centred cubic lattice with reduced density "
           "0.8 in a 3 x 3 x 3 box (lattice units), epsilon 1, sigma 1, cutoff 2.5 sigma. A pair style that tracks "
           "contacts is laid over the LJ interaction with hybrid/overlay; two atoms are in contact while they are "
           "closer than 1.3, and a contact has to survive for at least a minimum lifetime of 0.2 to be recorded. "
           "Velocities are drawn at T = 1.5 and the system is integrated with NVE for 400 steps.")

CONTROLLED = ("Reduced LJ units. Particles fill an fcc arrangement with a reduced density of 0.8 inside a cube of side "
              "4; epsilon = 1, sigma = 1, cutoff 2.5. Velocities are drawn at a temperature of 1.0. The atoms first "
              "follow NVE dynamics with a Langevin thermostat keeping the temperature at 0.6, damping 0.5, in 300 "
              "steps. After that a PID "
              "feedback controller steers the temperature to 1.2 by adjusting the thermostat target. The controlled "
              "run lasts 3000 steps.")


def thermo(log: str, run: int = -1) -> np.ndarray:
    """The thermo rows (step temp pe ke etotal ...) of one run of a log."""
    blocks = re.findall(r"^\s*Step .*?\n(.*?)^Loop time", log, flags=re.S | re.M)
    rows = [line.split() for line in blocks[run].strip().splitlines() if re.match(r"\s*\d", line)]
    return np.array([[float(v) for v in row[:5]] for row in rows])


def test_tracker_is_read_from_our_wording():
    desc = read_description(TRACKED)
    assert desc.renderable, (desc.unsupported, desc.missing)
    assert TRACKER_NAME not in desc.unsupported
    tracker = desc.pair.tracker
    assert tracker is not None and tracker.cutoff == 1.3 and tracker.time_min == 0.2
    text = render(desc)
    assert "pair_style      hybrid/overlay lj/cut 2.5 tracker" in text and "time/min 0.2" in text
    assert "pair_coeff      * * tracker 1.3" in text


def test_tracker_contact_distance_defaults_to_the_cutoff():
    text = TRACKED.replace("while they are closer than 1.3", "whenever their separation is below the pair cutoff")
    text = text.replace("a minimum lifetime of 0.2", "some while")
    tracker = read_description(text).pair.tracker
    assert tracker is not None and tracker.cutoff == 2.5 and tracker.time_min is None


def test_tracker_adds_no_energy_in_a_real_run(tmp_path: Path):
    """pair tracker computes no force: the run with it and the plain LJ run give the same energies."""
    desc = read_description(TRACKED)
    with_tracker = thermo(run_lammps(render(desc), tmp_path, "tracked"))
    desc.pair.tracker = None
    plain = thermo(run_lammps(render(desc), tmp_path, "plain"))
    assert with_tracker.shape == plain.shape and len(plain) > 10
    np.testing.assert_allclose(with_tracker[:, 2:5], plain[:, 2:5], rtol=1e-9)


def test_controller_is_read_from_our_wording():
    desc = read_description(CONTROLLED)
    assert desc.renderable, (desc.unsupported, desc.missing)
    assert desc.box.hi == (4.0, 4.0, 4.0) and desc.lattice.style == "fcc"
    first, second = desc.stages
    assert first.steps == 300 and first.controller is None  # 'in 300 steps' of a sentence naming the dynamics
    assert first.dynamics.thermostat == "langevin" and first.dynamics.t_stop == 0.6
    assert second.steps == 3000 and second.controller is not None and second.controller.setpoint == 1.2
    assert second.dynamics.thermostat == "langevin"  # the thermostat stays; the controller sets its target
    assert "controller.kp" in desc.defaults and "controller.every" in desc.defaults
    text = render(desc)
    assert "variable        tset internal 0.6" in text
    assert "langevin v_tset" in text and "controller 100 1 0.5 0 0 c_thermo_temp 1.2 tset" in text


def test_stated_gains_are_taken():
    text = CONTROLLED.replace("by adjusting the thermostat target", "by adjusting the thermostat target, with "
                              "proportional gain 0.3, integral gain 0.01 and alpha 2.0, applied every 50 steps")
    (ctl,) = [s.controller for s in read_description(text).stages if s.controller]
    assert (ctl.kp, ctl.ki, ctl.kd, ctl.alpha, ctl.every) == (0.3, 0.01, 0.0, 2.0, 50)


def test_controller_without_a_variable_thermostat_stays_refused():
    text = CONTROLLED.replace("NVE dynamics with a Langevin thermostat keeping the temperature at 0.6",
                              "NVT (Nose-Hoover) dynamics at 0.6")
    desc = read_description(text)
    assert not desc.renderable
    assert any("feedback controller without" in u for u in desc.unsupported)


def test_controller_without_a_set_point_stays_refused():
    text = CONTROLLED.replace("steers the temperature to 1.2 by adjusting the thermostat target",
                              "adjusts the thermostat target")
    assert CONTROLLER_NAME in read_description(text).unsupported


def test_in_n_steps_is_a_run_only_where_the_dynamics_are_named():
    text = CONTROLLED.replace("The controlled run lasts 3000 steps.", "Thermo output is averaged in 100 steps. "
                              "The controlled run lasts 3000 steps.")
    assert [s.steps for s in read_description(text).stages] == [300, 3000]


def test_controller_drives_the_temperature_in_a_real_run(tmp_path: Path):
    """From the Langevin target 0.6, the controller raises the target until the temperature sits at
    its set point 1.2: the last third of the controlled run averages 1.2 (within 5 %), far from 0.6."""
    log = run_lammps(render(read_description(CONTROLLED)), tmp_path, "controlled")
    first, controlled = thermo(log, 0), thermo(log, 1)
    assert first[-20:, 1].mean() == pytest.approx(0.6, rel=0.15)
    late = controlled[len(controlled) * 2 // 3:, 1]
    assert late.mean() == pytest.approx(1.2, rel=0.05)


@pytest.mark.skipif(not (DEV / "lammps" / "66_tracker.json").is_file(), reason="MDGym dev set not present")
def test_dev_tasks_tracker_and_controller_are_complete():
    for name in ("66_tracker", "44_controller"):
        desc = read_description(json.loads((DEV / "lammps" / f"{name}.json").read_text())["problem_description"])
        assert desc.renderable, (name, desc.unsupported, desc.missing)
    desc = read_description(json.loads((DEV / "lammps" / "44_controller.json").read_text())["problem_description"])
    assert [s.steps for s in desc.stages] == [500, 5000] and desc.stages[1].controller.setpoint == 1.5


@pytest.mark.parametrize(("metric", "axis"), [
    ("mean_force_along_y", "y"), ("force_x", "x"), ("Fz_mean", "z"), ("average_force_on_the_walls_in_x", "x"),
    ("time-averaged y-component of force", "y"), ("wall force (z)", "z"),
])
def test_force_metric_names_with_an_axis(metric, axis):
    """A force with an axis, in any of the usual spellings, is the force on the walls along that axis
    (the described run refuses it where there are no walls)."""
    from simagent.solve import read_metric

    target = read_metric(metric, "", True)
    assert target.property == "wall_force" and target.label == axis


@pytest.mark.parametrize("metric", ["friction_coefficient", "average_fix_value", "force_constant"])
def test_other_names_are_not_wall_forces(metric):
    from simagent.solve import read_metric

    assert read_metric(metric, "", True).property != "wall_force"


# ------------------------------------------------------------------------------------------------
# Values a text leaves out, from the LAMMPS example whose setup it states (examples/shear)
# ------------------------------------------------------------------------------------------------

# our retelling of LAMMPS examples/shear's setup, leaving out its velocities and orientation
EXAMPLE_SHEAR = ("Metal units; nickel described by an embedded-atom (EAM) potential. Build an fcc crystal, lattice "
                 "constant 3.52 Å, oriented along some chosen crystal directions, in a box of 16.0 x 10.0 x 2.83 "
                 "lattice units with boundary conditions (s s p). Atoms with y below 0.9 make up the bottom layer and "
                 "atoms with y above 6.1 the top layer; both layers are held rigid, the rest of the atoms are mobile. "
                 "Velocities at 300 K are given to the atoms, then 100 steps of NVE with velocity rescaling at a "
                 "temperature of 300 K on the mobile atoms follow. The top layer is then moved at a constant lateral "
                 "velocity to the top layer while a velocity ramp is laid over the mobile atoms, and 1000 steps are "
                 "run with a 1 fs timestep.")


def test_boundary_triple_in_parentheses():
    assert read_description(EXAMPLE_SHEAR).boundary == ("s", "s", "p")
    text = EXAMPLE_SHEAR.replace("with boundary conditions (s s p)", "with boundaries ( p s f )")
    assert read_description(text).boundary == ("p", "s", "f")


def test_example_values_fill_what_a_retelling_leaves_out():
    desc = read_description(EXAMPLE_SHEAR)
    assert desc.renderable, (desc.unsupported, desc.missing)
    flow = desc.stages[-1].shear
    assert flow is not None and (flow.moving, flow.velocity, flow.axis) == ("upper", 1.0, "x")
    assert (flow.ramp_velocity, flow.gradient_axis, flow.ramp_extent) == ((0.0, 1.0), "y", (1.4, 8.6))
    assert desc.lattice.orient == ((1, 0, 0), (0, 1, 1), (0, -1, 1))
    assert desc.box.hi == (16.0, 10.0, 2.828427) and "box.z" in desc.defaults  # 2.83 rounds the example's edge
    assert "examples/shear" in desc.defaults["run2.shear"] and "examples/shear" in desc.defaults["lattice.orient"]


@pytest.mark.parametrize(("old", "new"), [("0.9", "1.2"), ("16.0 x 10.0", "12.0 x 10.0"), ("3.52", "3.61")])
def test_a_setup_that_is_not_the_example_keeps_its_gaps(old, new):
    desc = read_description(EXAMPLE_SHEAR.replace(old, new))
    assert not desc.renderable and any("velocity of the moving layer" in m for m in desc.missing)


def test_stated_values_are_kept_over_the_example():
    text = EXAMPLE_SHEAR.replace("moved at a constant lateral velocity to the top layer while a velocity ramp is "
                                 "laid over the mobile atoms", "given a constant velocity of 0.5 Å/ps in the x "
                                 "direction while a linear velocity profile from 0 to 0.5 Å/ps is imposed on the "
                                 "mobile atoms along the y axis (0.9 to 6.1)")
    flow = read_description(text).stages[-1].shear
    assert flow is not None and flow.velocity == 0.5 and flow.ramp_extent == (0.9, 6.1)


# ------------------------------------------------------------------------------------------------
# Energies that do not say per atom, outside LJ units: the system's total, as LAMMPS thermo prints it
# ------------------------------------------------------------------------------------------------

COPPER = ("Copper in metal units: atoms on an fcc lattice with lattice constant 3.615 Å fill a box of 3 x 3 x 3 "
          "lattice units, periodic in all directions. Atoms interact through an EAM potential for Cu. Velocities "
          "are created at a temperature of 300 K. Run NVE for 200 steps with a timestep of 1 fs.")


@pytest.mark.parametrize(("metric", "label"), [
    ("average_potential_energy", "total"), ("mean total energy (eV)", "total"), ("Epot_avg", "total"),
    ("average_potential_energy_per_atom", None), ("mean energy per particle", None),
])
def test_energy_names_outside_lj_units(metric, label):
    from simagent.solve import read_metric

    target = read_metric(metric, COPPER, reduced=False)
    assert target.property is not None and target.label == label


# (the Coulomb energy is measured since stop 24: tests/test_described_example_system.py; the magnetic energy of a
# spin lattice: tests/test_described_spin.py)
@pytest.mark.parametrize("metric", ["average dihedral energy", "mean kspace energy per atom",
                                    "average bond energy", "van der Waals energy"])
def test_parts_of_the_energy_are_not_the_potential_energy(metric):
    from simagent.solve import read_metric

    target = read_metric(metric, "", reduced=False)
    assert target.property is None and "part of the energy" in target.reason
    assert read_metric(metric, "", reduced=True).property is None  # in LJ units too


def test_total_energy_of_a_described_run_is_the_per_atom_value_times_the_atoms(tmp_path: Path):
    """In metal units 'average_potential_energy' is the system's total (LAMMPS thermo, norm no): the
    described run reports it next to the per-atom value, and total = per atom x N (108 atoms)."""
    from simagent.models import Answer, PropertyRequest, TaskSpec
    from simagent.solve import collect, read_metric
    from tools.lammps.protocols.described import DescribedRun

    protocol = DescribedRun()
    spec = TaskSpec(request=COPPER, engine="lammps", properties=[PropertyRequest(name="potential_energy_per_atom")])
    assert protocol.applies_to(spec)
    params, _ = protocol.parameters(spec)
    (job,) = protocol.jobs(params)
    job_dir = tmp_path / job.id
    job_dir.mkdir()
    run_lammps(job.inputs["in.lammps"], job_dir, "run")
    (job_dir / "run" / "log.lammps").rename(job_dir / "log.lammps")
    results = protocol.analyze(params, {job.id: job_dir}, spec)
    per_atom = next(r for r in results if r.label is None)
    total = next(r for r in results if r.label == "total")
    assert per_atom.unit == "eV/atom" and total.unit == "eV"
    assert total.value == pytest.approx(108 * per_atom.value, rel=1e-9)
    assert -3.6 < per_atom.value < -3.3  # Cu near its cohesive energy (3.49 eV/atom, Kittel) at 300 K
    answer = Answer(status="answered", request=COPPER, answers=results)
    targets = [read_metric(m, COPPER, reduced=False) for m in ("average_potential_energy", "mean PE per atom")]
    values = [o.value for o in collect(targets, answer, spec, None)]
    assert values == [total.value, per_atom.value]
