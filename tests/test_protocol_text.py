"""Detailed protocol descriptions -> SimulationControls, and lammps/fluid_md honouring them (no engine)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from simagent.backends.expert import ExpertBackend
from simagent.backends.expert.protocol_text import (
    complete_conditions,
    expected_atoms,
    read_controls,
    unplaced_run_lengths,
)
from simagent.backends.expert.reader import normalise
from simagent.errors import RequestError
from simagent.models import (
    Conditions,
    PotentialSpec,
    PropertyRequest,
    Quantity,
    SimulationControls,
    SystemSpec,
    TaskSpec,
)
from tools.lammps.protocols import fluid
from tools.lammps.protocols.fluid import FluidMD, FluidMDParams

EXAMPLE = Path("/work/shared/mdgym_task_example.json")
HERE = Path(__file__).parent
backend = ExpertBackend()


def example_text() -> str:
    path = EXAMPLE if EXAMPLE.is_file() else HERE / "files" / "mdgym" / "example_short.json"
    text = json.loads(path.read_text())["problem_description"]
    # the short copy has fewer steps; the example's numbers are what this file checks
    return text.replace("500 steps of equilibration followed by 1000", "5000 steps of equilibration followed by 10000")


def controls(text: str) -> dict:
    return read_controls(normalise(text).lower())


def q(value: float, unit: str) -> Quantity:
    return Quantity(value=value, unit=unit)


# ------------------------------------------------------------------------------------------------
# The example task
# ------------------------------------------------------------------------------------------------


def test_example_task_is_read_completely():
    spec = complete_conditions(backend.task_spec(example_text()))
    ctl = spec.controls
    assert spec.system.kind == "lj_fluid" and spec.units_style == "lj"
    assert ctl.n_atoms == 2048 and ctl.lattice == "fcc" and ctl.dimension == 3
    assert spec.conditions.density == q(0.8, "reduced")
    assert spec.potential.lj_epsilon == q(1.0, "reduced") and spec.potential.lj_sigma == q(1.0, "reduced")
    assert ctl.masses == [q(1.0, "reduced")]
    assert spec.potential.cutoff == q(2.5, "sigma")
    assert ctl.velocity_temperature == q(1.2, "reduced") and ctl.seed == 4928459
    assert ctl.integrator == "verlet" and ctl.ensemble == "nvt" and ctl.thermostat == "nose-hoover"
    assert ctl.thermostat_temperature == q(1.2, "reduced") and ctl.thermostat_damping == q(0.5, "reduced")
    assert ctl.timestep == q(0.005, "reduced")
    assert (ctl.equilibration_steps, ctl.production_steps) == (5000, 10000)
    assert ctl.average_window == "production"
    # the state-point temperature comes from the thermostat set point; nothing is left unread
    assert spec.conditions.temperature == q(1.2, "reduced")
    assert spec.missing == [] and spec.unparsed == []
    assert {p.name for p in spec.properties} == {"temperature", "potential_energy_per_atom"}


def test_example_task_inputs_follow_the_description():
    spec = complete_conditions(backend.task_spec(example_text()))
    params, defaults = FluidMD().parameters(spec)
    assert params.n_atoms == 2048 and params.cell_counts == (8, 8, 8)
    assert params.melt_steps == 0 and params.damping == 0.5 and params.velocity_temperature == 1.2
    assert params.average_window == "production" and params.thermostat == "nose-hoover"
    recorded = {d.parameter for d in defaults}
    assert not recorded & {"timestep", "seed", "equilibration_steps", "production_steps", "n_cells", "cutoff",
                           "thermostat_damping", "average_window", "lattice"}
    text = FluidMD().jobs(params)[0].inputs["in.lammps"]
    assert "lattice         fcc 0.80000000" in text and "region          box block 0 8 0 8 0 8" in text
    assert "velocity        all create 1.2 4928459" in text
    assert "fix             equil all nvt temp 1.2 1.2 0.5\n" in text
    assert "fix             prod all nvt temp 1.2 1.2 0.5\n" in text
    assert "run             5000\n" in text and text.rstrip().endswith("run             10000")
    assert "pair_style      lj/cut 2.5" in text and "dimension" not in text


# ------------------------------------------------------------------------------------------------
# Phrasings
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ("equilibrate for 2000 steps, then a production run of 8000 steps", {"equilibration_steps": 2000,
                                                                         "production_steps": 8000}),
    ("a 1e4-step production run after 2,000 equilibration steps", {"equilibration_steps": 2000,
                                                                    "production_steps": 10000}),
    ("equilibration of 50 tau and production of 100 tau with dt = 0.005 in lj units",
     {"equilibration_steps": 10000, "production_steps": 20000}),
    ("3000 steps of NVT equilibration followed by 6000 steps", {"equilibration_steps": 3000,
                                                               "production_steps": 6000}),
    ("Run the LJ system for 5000 steps.", {"production_steps": 5000, "equilibration_steps": 0}),
    ("Langevin thermostat with a damping time of 100 fs", {"thermostat": "langevin",
                                                          "thermostat_damping": q(100, "fs")}),
    ("Tdamp = 100 timesteps", {"thermostat_damping": q(100, "steps")}),
    ("NPT with a Parrinello-Rahman barostat (pdamp 1.0 ps) and a Nose-Hoover thermostat (tdamp 0.1 ps)",
     {"barostat": "parrinello-rahman", "barostat_damping": q(1.0, "ps"), "thermostat_damping": q(0.1, "ps"),
      "thermostat": "nose-hoover"}),
    ("velocities drawn from a Maxwell-Boltzmann distribution at 300 K, random seed 777",
     {"velocity_temperature": q(300, "K"), "seed": 777}),
    ("a two-dimensional LJ fluid on a square lattice of 20 x 20 unit cells",
     {"dimension": 2, "lattice": "sq", "cells": [20, 20]}),
    ("a box of 10x10x10 unit cells of a bcc lattice", {"cells": [10, 10, 10], "lattice": "bcc"}),
    ("6 unit cells along each direction", {"cells": [6]}),
    ("LJ disks in 2D start on a centred-square lattice of 12 x 12 cells",
     {"lattice": "sq2", "cells": [12, 12], "dimension": 2}),
    # box edges in lattice units (LAMMPS region extents default to lattice spacings)
    ("particles start on a bcc lattice inside a cube of side 9 (reduced units)", {"lattice": "bcc", "cells": [9]}),
    ("an fcc lattice fills the simulation box, which spans 7 lattice spacings along every axis",
     {"lattice": "fcc", "cells": [7]}),
    ("fcc lattice in a cubic box of edge length 12 sigma", {"lattice": "fcc", "cells": None}),
    ("fcc lattice in a cubic box of 5.4 nm", {"lattice": "fcc", "cells": None}),
    ("a cubic box of 20 reduced units holding 500 randomly placed particles", {"cells": None}),
    ("binary LJ mixture of 800 particles of type A and 200 of type B with Lorentz-Berthelot mixing, "
     "masses 1.0 and 0.5", {"atom_types": 2, "type_counts": [800, 200], "mixing_rule": "arithmetic",
                            "masses": [q(1.0, "reduced"), q(0.5, "reduced")]}),
    ("geometric mixing rule", {"mixing_rule": "geometric"}),
    ("average over the last 2000 steps", {"average_window": "last 2000 steps"}),
    ("discard the equilibration when averaging", {"average_window": "production"}),
    ("averages over the entire simulation", {"average_window": "all"}),
    ("print thermodynamic output every 50 steps", {"thermo_every": 50}),
    ("minimize with steepest descent, etol = 1e-6, ftol 1e-8, maximum 500 iterations and 5000 evaluations",
     {"minimizer": "sd", "etol": 1e-6, "ftol": 1e-8, "max_iterations": 500, "max_evaluations": 5000}),
    ("the potential is cut at 3 sigma", {"pair_cutoff": q(3, "sigma")}),
    ("N = 864 argon atoms, mass 39.948 g/mol", {"n_atoms": 864, "masses": [q(39.948, "g/mol")]}),
    ("in the microcanonical ensemble", {"ensemble": "nve"}),
])  # fmt: skip
def test_phrasings(text, expected):
    found = controls(text)
    for key, value in expected.items():
        assert found.get(key) == value, (key, found)


def test_velocity_verlet_is_not_a_velocity_temperature():
    found = controls("Integrate with velocity Verlet in the NVT ensemble using a Nose-Hoover thermostat at T = 1.2.")
    assert found["thermostat_temperature"] == q(1.2, "K")  # no reduced-unit words here: kelvin
    assert "velocity_temperature" not in found and found["integrator"] == "verlet"


def test_generic_rules_win_and_controls_merge():
    spec = backend.task_spec("Pressure of a Lennard-Jones fluid at T* = 1.0 and rho* = 0.8 with 500 atoms, "
                             "timestep 0.002, seed 42; N = 999; damping 0.1")
    assert spec.controls.n_atoms == 500 and spec.controls.seed == 42  # the reader's own rules
    assert spec.controls.timestep == q(0.002, "reduced")
    assert spec.controls.thermostat_damping == q(0.1, "reduced")  # added by protocol_text


def test_an_unreadable_sentence_is_reported():
    spec = backend.task_spec(example_text() + " Please whistle a tune while it runs.")
    assert spec.unparsed == ["Please whistle a tune while it runs."]


def test_complete_conditions_prefers_the_thermostat():
    spec = backend.task_spec("Average pressure of an LJ fluid at reduced density 0.8: velocities at T = 2.0, "
                             "then a Langevin thermostat at T = 1.5.")
    # the reader completes the conditions itself: the thermostat's set point, not the velocity T
    assert spec.conditions.temperature == q(1.5, "reduced") and "temperature" not in spec.missing
    nve = backend.task_spec("Average pressure of an LJ fluid at reduced density 0.8 in the NVE ensemble with "
                            "velocities at T = 2.0.")
    # NVE: 2.0 starts the run (velocities) but is no thermostat target
    assert complete_conditions(nve).conditions.temperature == q(2.0, "reduced")
    assert not nve.controls.holds_temperature


# Densities and temperatures written in prose (paraphrases written for these tests).
@pytest.mark.parametrize("text, density, temperature", [
    ("Mean potential energy per particle of Lennard-Jones atoms placed on an fcc lattice at a density of 0.75; "
     "velocities are drawn at a temperature of 1.3 and the run is NVE.", 0.75, 1.3),
    ("Average pressure of a reduced-unit LJ liquid held at a fixed reduced density (0.65), with a Nose-Hoover "
     "thermostat at 1.1.", 0.65, 1.1),
    ("Pressure of an LJ system at number density 0.9 kept at a temperature of 2.0 (in reduced units) by a "
     "Berendsen thermostat.", 0.9, 2.0),
    ("Average temperature of LJ particles (reduced units) with a density equal to 0.7 at a reduced "
     "temperature of 0.95.", 0.7, 0.95),
])  # fmt: skip
def test_prose_density_and_temperature(text, density, temperature):
    spec = backend.task_spec(text)
    assert spec.conditions.density == q(density, "reduced")
    assert spec.conditions.temperature == q(temperature, "reduced")
    assert "density" not in spec.missing and "temperature" not in spec.missing


# In LJ units the number a LAMMPS lattice is given with is the reduced density (LAMMPS `lattice`
# command: "scale = reduced density rho* (LJ units)"); descriptions call it a lattice constant/spacing.
@pytest.mark.parametrize("text, density", [
    ("Mean potential energy per atom of LJ particles (reduced units) on a bcc lattice whose lattice constant is "
     "0.92, with a Nose-Hoover thermostat at T = 1.4.", 0.92),
    ("Reduced-unit Lennard-Jones atoms start on a simple cubic lattice using a spacing of 0.55 and are held at "
     "T = 2.0 by a Langevin thermostat.", 0.55),
    ("An LJ solid, built with lattice fcc 1.05 in LJ units, is kept at a temperature of 0.3 by a Berendsen "
     "thermostat.", 1.05),
    ("LJ particles on an fcc lattice with a lattice constant of 1.7 sigma, thermostat at T = 1.0 (reduced).", None),
    ("LJ particles on an fcc lattice of 6 unit cells per side at T = 1.0 (reduced units).", None),
])  # fmt: skip
def test_lattice_scale_is_the_reduced_density(text, density):
    spec = backend.task_spec(text)
    assert spec.conditions.density == (None if density is None else q(density, "reduced"))
    assert ("density" in spec.missing) == (density is None)


@pytest.mark.parametrize("text, expected", [
    ("Minimise with conjugate gradients to an energy tolerance of 2.5 * 10⁻⁸ and a force tolerance of "
     "1 x 10^-5.", {"etol": 2.5e-8, "ftol": 1e-5}),
    ("Sample for 2,50,000 timesteps in the production run after 20,000 steps of equilibration.",
     {"production_steps": 250000, "equilibration_steps": 20000}),
    ("The system is equlibrated for 300 steps; the production run must be in the NVE ensemble for 4000 steps.",
     {"equilibration_steps": 300, "production_steps": 4000}),
    ("Velocites are created at a temperature of 0.9 before a velocity-Verlet run.",
     {"velocity_temperature": Quantity(value=0.9, unit="K"), "integrator": "verlet"}),
])  # fmt: skip
def test_numbers_and_spellings_as_people_write_them(text, expected):
    found = controls(text)
    assert {k: found.get(k) for k in expected} == expected


def test_prose_density_keeps_real_units():
    spec = backend.task_spec("Density of liquid argon modelled with Lennard-Jones at a density of 1.4 g/cm^3 and 90 K.")
    assert spec.conditions.density == q(1.4, "g/cm^3")


@pytest.mark.parametrize("text, holds", [
    ("LJ fluid in the NVE ensemble, velocities created at a temperature of 1.2.", False),
    ("LJ fluid integrated with fix nve plus a Langevin thermostat at 1.2 (damping 1.0).", True),
    ("LJ fluid in the canonical ensemble at T* = 1.2.", True),
])  # fmt: skip
def test_the_ensemble_decides_whether_a_temperature_is_held(text, holds):
    assert backend.task_spec(text).controls.holds_temperature is holds


def test_a_described_nve_run_is_rendered_without_a_thermostat():
    spec = lj_spec(ensemble="nve", velocity_temperature=q(1.6, "reduced"), equilibration_steps=200,
                   production_steps=1000)
    params, defaults = FluidMD().parameters(spec)
    assert not params.thermostatted and not params.rescale_nve
    assert not {"thermostat", "thermostat_damping"} & {d.parameter for d in defaults}  # none is used
    text = FluidMD().jobs(params)[0].inputs["in.lammps"]
    assert "velocity        all create 1.6 " in text
    assert "langevin" not in text and " nvt " not in text and "velocity        all scale" not in text
    assert "fix             equil all nve" in text and "fix             prod all nve" in text
    # with a Langevin thermostat named, the same NVE run is thermostatted during equilibration
    langevin = lj_spec(ensemble="nve", thermostat="langevin", velocity_temperature=q(1.6, "reduced"),
                       equilibration_steps=200, production_steps=1000)
    params, _ = FluidMD().parameters(langevin)
    assert params.thermostatted
    assert "all langevin" in FluidMD().jobs(params)[0].inputs["in.lammps"]


def test_expected_atoms():
    assert expected_atoms("fcc", [10, 10, 10], 3) == 4000
    assert expected_atoms("hex", [20, 12], 2) == 480
    assert expected_atoms("sc", [6], None) == 216
    assert expected_atoms("sq2", [20, 20], None) == 800  # LAMMPS lattice sq2: basis (0,0) and (1/2,1/2)
    assert expected_atoms(None, [6], 3) is None


# ------------------------------------------------------------------------------------------------
# lammps/fluid_md honours the controls
# ------------------------------------------------------------------------------------------------


def lj_spec(props=("pressure",), t=1.0, rho=0.8, **ctl) -> TaskSpec:
    return TaskSpec(
        request="test",
        system=SystemSpec(name="LJ fluid", kind="lj_fluid"),
        potential=PotentialSpec(family="lj", cutoff=q(2.5, "sigma")),
        conditions=Conditions(temperature=q(t, "reduced"), density=q(rho, "reduced")),
        properties=[PropertyRequest(name=p) for p in props],
        units_style="lj",
        controls=SimulationControls(**ctl),
    )


@pytest.mark.parametrize("n_atoms, lattice, dimension, cells", [
    (2048, "fcc", 3, (8, 8, 8)),
    (1000, "fcc", 3, (5, 5, 10)),  # exact N in a 1:1:2 box
    (4000, "fcc", 3, (10, 10, 10)),
    (686, "bcc", 3, (7, 7, 7)),
    (400, "sq", 2, (20, 20, 1)),
    (480, "hex", 2, (20, 12, 1)),
    (800, "sq2", 2, (20, 20, 1)),  # LAMMPS sq2: 2 atoms per square cell
])  # fmt: skip
def test_exact_atom_counts(n_atoms, lattice, dimension, cells):
    params, _ = FluidMD().parameters(lj_spec(n_atoms=n_atoms, lattice=lattice, dimension=dimension))
    assert params.n_atoms == n_atoms and params.cell_counts == cells


def test_count_without_an_exact_box_is_recorded():
    params, defaults = FluidMD().parameters(lj_spec(n_atoms=28))  # 7 fcc cells: only a 1x1x7 box
    assert params.n_atoms != 28 and params.box_length >= 2 * 2.5 + 0.3
    assert any(d.parameter == "n_atoms" for d in defaults)


def test_two_dimensional_inputs():
    spec = lj_spec(("potential_energy_per_atom", "coordination_number", "self_diffusion_coefficient"),
                   rho=0.5, dimension=2, cells=[20, 12], lattice="hex", thermostat="langevin",
                   thermostat_damping=q(1.0, "reduced"), equilibration_steps=1000, production_steps=5000,
                   average_window="all")
    params, _ = FluidMD().parameters(spec)
    assert params.dimension == 2 and params.n_atoms == 480 and params.average_window == "all"
    # hex cell a x sqrt(3) a with 2 atoms: rho = 2 / (sqrt(3) a^2)
    assert 2 / (math.sqrt(3) * params.lattice_constant**2) == pytest.approx(0.5)
    text = FluidMD().jobs(params)[0].inputs["in.lammps"]
    assert "dimension       2\n" in text and "lattice         hex 0.50000000" in text
    assert "region          box block 0 20 0 12 -0.5 0.5" in text
    assert "fix             equil_t all langevin 1.0 1.0 1 " in text
    assert "fix             equil_2d all enforce2d" in text and "fix             prod_2d all enforce2d" in text
    assert "unfix           equil_2d" in text


def test_thermostat_styles_and_damping_in_steps():
    spec = lj_spec(thermostat="csvr", thermostat_damping=q(200, "steps"), timestep=q(0.002, "reduced"))
    params, _ = FluidMD().parameters(spec)
    assert params.damping == pytest.approx(0.4)
    text = FluidMD().jobs(params)[0].inputs["in.lammps"]
    assert "all temp/csvr 1.0 1.0 0.4" in text and "fix             prod all nve" in text


@pytest.mark.parametrize("ctl, fragment", [
    ({"atom_types": 2, "mixing_rule": "geometric"}, "mixture"),
    ({"masses": [q(1, "reduced"), q(2, "reduced")]}, "mixture"),
    ({"cells": [5, 5, 5], "n_atoms": 600}, "hold 500 atoms"),
    ({"lattice": "hex", "dimension": 3}, "does not fit"),
    ({"thermostat": "andersen"}, "thermostats"),
    ({"average_window": "last 999999 steps", "production_steps": 1000}, "last 999999"),
    ({"masses": [q(39.9, "g/mol")]}, "reduced units"),
])  # fmt: skip
def test_controls_it_cannot_honour_raise(ctl, fragment):
    with pytest.raises(RequestError, match=fragment):
        FluidMD().parameters(lj_spec(**ctl))


def test_cutoff_from_the_protocol_text():
    spec = lj_spec(pair_cutoff=q(3.0, "sigma"))
    spec.potential.cutoff = None
    params, defaults = FluidMD().parameters(spec)
    assert params.cutoff_sigma == 3.0 and "cutoff" not in {d.parameter for d in defaults}


def runs(n_equil: int, n_prod: int, u_equil: float, u_prod: float) -> tuple[list[dict], dict]:
    def block(n: int, u: float) -> dict[str, np.ndarray]:
        return {"Step": np.arange(n + 1) * 10.0, "PotEng": np.full(n + 1, u) * 100, "Atoms": np.full(n + 1, 100.0),
                "Temp": np.ones(n + 1)}
    equil, prod = block(n_equil, u_equil), block(n_prod, u_prod)
    return [equil, prod], prod


def test_averaging_windows():
    all_runs, prod = runs(100, 300, -4.0, -5.0)
    base = dict(units="lj", mass=1, epsilon=1, sigma=1, temperature=1.0, number_density=0.8, n_cells=5,
                cutoff_sigma=2.5, timestep=0.005, melt_steps=0, equilibration_steps=1000, production_steps=3000)
    p = FluidMDParams(**base, average_window="all")
    joined, t0, _ = fluid.averaging_samples(all_runs, prod, p)
    assert t0 == 0 and joined["Step"].size == 101 + 300  # the repeated first row of production is dropped
    assert np.mean(joined["PotEng"] / joined["Atoms"]) == pytest.approx((-4.0 * 101 - 5.0 * 300) / 401)
    p = FluidMDParams(**base, average_window="last", average_last_steps=1000)
    _, t0, how = fluid.averaging_samples(all_runs, prod, p)
    assert prod["Step"][t0] == 2000 and "last 1000" in how
    p = FluidMDParams(**base, average_window="production")
    assert fluid.averaging_samples(all_runs, prod, p)[1] == 0


def test_two_dimensional_coordination_number():
    # a ring of 6 neighbours at r0 (triangular lattice) on top of an empty core: CN must be 6
    r = np.arange(0.0075, 2.5, 0.015)
    rho, r0, width = 0.9, 1.13, 0.02
    ring = 6 * np.exp(-((r - r0) ** 2) / (2 * width**2)) / (width * math.sqrt(2 * math.pi))
    g = ring / (2 * math.pi * rho * r) + np.where(r > 1.5, 1.0, 0.0)
    peak, r_min, cn = fluid.rdf_peak_and_cn(r, g, rho, dimension=2)
    assert abs(peak - r0) < 0.015 and cn == pytest.approx(6, abs=0.05)


# Run lengths the reading did not place in a stage (paraphrases written for this test): a described
# run read without one of its stages would not be the run described (solve asks instead).
@pytest.mark.parametrize("text, unplaced", [
    ("Heat the LJ liquid for 3000 steps, quench it with a conjugate-gradient minimisation, then equilibrate "
     "for 20000 steps and collect g(r) during a 4000-step production run.", [3000]),
    ("Equilibrate for 2000 steps, then a production run of 8000 steps.", []),
    ("Equilibrate for 2000 steps, then a production run of 8000 steps; 10000 steps in all.", []),
    ("A 6000-step NVE run; write thermo every 100 steps and dump every 500 steps, Tdamp = 100 timesteps.", []),
    ("Average over the last 1500 steps of a 5000-step run.", []),
])  # fmt: skip
def test_run_lengths_not_placed_in_a_stage(text, unplaced):
    assert unplaced_run_lengths(text, SimulationControls(**controls(text))) == unplaced


def test_sq2_start_is_rendered_as_described():
    spec = lj_spec(rho=0.6, lattice="sq2", dimension=2, cells=[10, 10], ensemble="nve",
                   velocity_temperature=q(1.0, "reduced"), equilibration_steps=0, production_steps=100)
    params, _ = FluidMD().parameters(spec)
    text = FluidMD().jobs(params)[0].inputs["in.lammps"]
    assert params.n_atoms == 200 and "lattice         sq2 0.60000000" in text
    assert params.lattice_constant == pytest.approx(math.sqrt(2 / 0.6))  # a = (basis / rho)^(1/2) in 2D
