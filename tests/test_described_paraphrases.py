"""Reading gaps found by paraphrasing dev tasks (stop 20): the LAMMPS lattice name "sq", a Langevin
thermostat's own seed and its switching off in the same sentence, and a set point stated by what the
thermostat does ("held at 0.8 by a Langevin thermostat"). Every wording here is written for these
tests, none is a task's."""

from __future__ import annotations

from pathlib import Path

import pytest
from described_helpers import run_job as run_lammps

from simagent.described.reading import read_description
from simagent.models import PropertyRequest, TaskSpec
from tools.lammps.described import render
from tools.lammps.protocols.described import DescribedRun

SYSTEM = ("Two-dimensional Lennard-Jones particles in reduced units sit {lattice}, filling a 8 x 8 box; the pair "
          "potential is cut at 2.5 and the timestep is 0.005. Initial velocities are drawn at T = 1.0 (seed 5813). ")


@pytest.mark.parametrize(("lattice", "style", "density"), [
    ("on an sq lattice with reduced density 0.6", "sq", 0.6),
    ("on an SQ lattice (reduced density 0.85)", "sq", 0.85),
    ("on a square lattice at a reduced density of 0.7", "sq", 0.7),
    ("on an sq2 lattice of reduced density 0.9", "sq2", 0.9),
])
def test_the_lammps_name_sq_is_a_square_lattice(lattice, style, density):
    desc = read_description(SYSTEM.format(lattice=lattice) + "Integrate in NVE for 300 steps.")
    assert desc.lattice is not None and (desc.lattice.style, desc.lattice.scale) == (style, density)
    assert desc.dimension == 2 and desc.renderable, desc.missing


@pytest.mark.parametrize("run", [
    "A Langevin thermostat (T = 1.5, damping 2.0, random seed 4242) acts on top of NVE for 1500 steps; afterwards "
    "the thermostat is switched off and 2500 more steps follow in NVE.",
    "First 1500 steps of NVE plus a Langevin thermostat at T = 1.5 with damping 2.0 and seed 4242, after which we "
    "turn the Langevin thermostat off and integrate 2500 steps in plain NVE.",
    "Couple the particles to a Langevin bath (thermostat at T = 1.5, damping 2.0, seed = 4242) while integrating "
    "with NVE for 1500 steps, then shut the thermostat off and continue for 2500 steps in NVE.",
])
def test_a_langevin_seed_and_its_switching_off_in_one_sentence(run):
    desc = read_description(SYSTEM.format(lattice="on a square lattice at a reduced density of 0.7") + run)
    assert desc.renderable, (desc.missing, desc.unsupported)
    first, second = desc.stages
    assert (first.steps, second.steps) == (1500, 2500)
    assert first.dynamics.thermostat == "langevin" and first.dynamics.seed == 4242
    assert (first.dynamics.t_stop, first.dynamics.t_damp) == (1.5, 2.0)
    assert second.dynamics.ensemble == "nve" and second.dynamics.thermostat is None
    assert desc.origin["run1.seed"].source == "rules"


def test_the_velocity_seed_is_not_the_thermostats():
    """A seed stated for the velocities before the thermostat is named stays theirs: the Langevin
    seed is then a listed default."""
    text = SYSTEM.format(lattice="on a square lattice at a reduced density of 0.7").replace(
        "Initial velocities are drawn at T = 1.0 (seed 5813). ", "") + (
        "Velocities are created at T = 1.0 with seed 2718 and a Langevin thermostat at 1.0 (damping 1.0) keeps the "
        "NVE run of 800 steps at that temperature.")
    desc = read_description(text)
    assert desc.velocity is not None and desc.velocity.seed == 2718
    (stage,) = desc.stages
    assert stage.dynamics.seed != 2718 and desc.origin["run1.seed"].source == "default"


@pytest.mark.parametrize(("words", "t"), [
    ("The particles are integrated with NVE and held at 0.8 by a Langevin thermostat (damping 0.5) for 900 steps.",
     0.8),
    ("For 900 steps the system evolves in NVE, kept at 1.25 by a Langevin thermostat with damping 0.5.", 1.25),
    ("A Langevin thermostat with damping 0.5 maintains the temperature at 0.45 during 900 NVE steps.", 0.45),
])
def test_a_set_point_stated_by_what_the_thermostat_does(words, t):
    desc = read_description(SYSTEM.format(lattice="on an sq lattice with reduced density 0.6")
                            .replace("at T = 1.0", "at T = 2.0") + words)
    assert desc.renderable, (desc.missing, desc.unsupported)
    (stage,) = desc.stages
    assert (stage.dynamics.thermostat, stage.dynamics.t_stop, stage.dynamics.t_damp) == ("langevin", t, 0.5)


def test_a_pressure_held_by_a_barostat_is_no_thermostat_set_point():
    text = ("Argon atoms in real units on an fcc lattice with lattice constant 5.26 A in a 5 x 5 x 5 box, LJ epsilon "
            "0.238 kcal/mol, sigma 3.405 A, cutoff 8.5 A. Velocities at 90 K (seed 11). The box is held at 1 atm "
            "by an NPT run at 90 K for 500 steps.")
    desc = read_description(text)
    (stage,) = desc.stages
    assert stage.dynamics.t_stop == 90.0 and stage.dynamics.p_stop == 1.0


def test_the_switched_off_thermostat_really_stops_in_a_run(tmp_path: Path):
    """The rendered input runs: the Langevin fix (with the stated seed) is unfixed before the NVE stage."""
    text = SYSTEM.format(lattice="on an sq lattice with reduced density 0.6") + (
        "Run 100 steps with a Langevin thermostat at T = 1.0 (damping 1.0) and seed 4242 on top of NVE, then "
        "turn the thermostat off and run 100 steps in NVE.")
    spec = TaskSpec(request=text, properties=[PropertyRequest(name="total_energy_per_atom")])
    protocol = DescribedRun()
    params, _ = protocol.parameters(spec)
    (job,) = protocol.jobs(params)
    body = job.inputs["in.lammps"]
    assert "langevin 1 1 1 4242" in body and body.index("unfix           dyn2") > body.index("langevin")
    fixes = [line for line in body.splitlines() if line.startswith("fix") and "langevin" in line]
    assert len(fixes) == 1 and render(read_description(text)) == body
    (energy,) = [r for r in protocol.analyze(params, {job.id: run_lammps(job, tmp_path)}, spec)]
    # NVE without a thermostat conserves the total energy: its standard error is tiny against its size
    assert energy.uncertainty is not None and energy.uncertainty < 1e-3 * abs(energy.value)
