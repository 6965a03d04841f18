"""Shock compression by fix msst in a described run: the MSST stage read from a text (the MDGym dev task
12_msst's sentence and wordings written for these tests), rendered, its four metric names read, and a
real short LAMMPS run whose four averages are checked against the Rankine-Hugoniot definitions
recomputed from the run's own thermo columns and the reference state LAMMPS logs.

Definitions (LAMMPS fix msst documentation and src/SHOCK/fix_msst.cpp): with the reference state
v0, p0, e0 that the fix logs on its first step (before tscale's velocity scaling), shock speed u_s
and total mass M,
  dhugoniot  = (1/2 (p + p0)(v0 - V) / nktv2p + e0 - E) / (dof k_B)       (temperature units)
  drayleigh  = p - p0 - M u_s^2 mvv2e (1 - V/v0) nktv2p / v0            (pressure units)
  lagrangian_speed = u_s (1 - V/v0)                                     (velocity units)
  lagrangian_position: -u_s dt sum V/v0 over the steps                   (distance units)
with p the pressure along the shock, E = pe + ke and dof = 3N - 3. Metal-unit constants are
LAMMPS's (src/update.cpp, units metal): k_B = 8.617343e-5 eV/K, mvv2e = 1.0364269e-4,
nktv2p = 1.6021765e6.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from described_helpers import DEV, run_inputs

from simagent.described.reading import read_description
from simagent.described.summary import executed_lines
from simagent.models import PropertyRequest, Result, TaskSpec
from simagent.solve import ENGINE_VARIABLES, MetricOutcome, _named_variable, _words, collect, read_metric
from simagent.units import convert
from tools.lammps.described import render
from tools.lammps.parse import read_output
from tools.lammps.protocols.described import DescribedRun

TASK = DEV / "lammps_3" / "12_msst.json"
BOLTZ, MVV2E, NKTV2P = 8.617343e-5, 1.0364269e-4, 1.6021765e6  # LAMMPS metal units (src/update.cpp)

# our own wording of the same kind of run, small: 4 x 4 x 4 fcc cells (256 atoms), 21.4 A > 2 x 10 A cutoff
SMALL = ("Use metal units. Build an fcc crystal with lattice constant 5.3589 Å in a 4 x 4 x 4 unit cell box, periodic "
         "in all directions; every atom has a mass of 40 amu. Atoms interact through a Lennard-Jones potential with "
         "epsilon = 0.01032 eV and sigma = 3.405 Å, cut off at 10 Å. Give the atoms Gaussian velocities at about "
         "600 K with seed 4928. Use a 2 fs timestep and print thermo output every 10 steps. Run 100 steps in NVE. "
         "Then apply MSST with the shock propagating along z at a shock speed of 2.8 km/s, q = 200, mu = 300 and "
         "tscale 0.01, and run it for 400 steps.")


@pytest.mark.skipif(not TASK.is_file(), reason="the MDGym dev set is not beside this checkout")
def test_the_dev_task_reads_every_stated_setting_and_its_msst_stage():
    desc = read_description(json.loads(TASK.read_text())["problem_description"])
    assert desc.renderable, (desc.unsupported, desc.missing)
    assert desc.units == "metal"  # 'in metals unit'
    assert (desc.lattice.style, desc.lattice.scale) == ("fcc", 5.3589)
    assert desc.box.hi == (18.0, 18.0, 18.0) and desc.box.lattice_units
    assert desc.masses == {1: 40.0}  # 'Assigned mass to all atoms of 40.0 amu'
    assert (desc.pair.coeffs[0].epsilon, desc.pair.coeffs[0].sigma, desc.pair.cutoff) == (0.01032, 3.405, 10.0)
    assert (desc.velocity.temperature, desc.velocity.distribution) == (600.0, "gaussian")  # 'approximately 600 K'
    assert desc.timestep == pytest.approx(0.002) and desc.thermo_every == 10
    equilibration, shock = desc.stages
    assert (equilibration.steps, equilibration.msst) == (100, None)
    assert shock.steps == 10000 and desc.average_stage == 1
    m = shock.msst
    assert (m.axis, m.shock_velocity, m.q, m.mu, m.tscale) == ("z", 28.0, 200.0, 300.0, 0.01)
    assert desc.green_kubo is None  # 'viscosity coefficient mu' is the fix's, not a Green-Kubo viscosity
    assert "dump.msst" in desc.origin["dump"].evidence and "not written" in desc.origin["dump"].evidence
    text = render(desc)
    shown = executed_lines(desc, text)
    stage2 = next(line for line in shown if line.startswith("  - stage 2"))
    assert "msst = {axis: z, shock_velocity: 28" in stage2 and "dynamics" not in stage2
    assert "fix             msst all msst z 28 q 200 mu 300 tscale 0.01\n" in text
    assert "v_dhug v_dray v_lgr_vel v_lgr_pos" in text and "dyn1 all nve" in text.split("# stage 2")[0]
    assert " nve" not in text.split("# stage 2")[1]  # fix msst integrates its stage alone


@pytest.mark.parametrize(("text", "expected", "defaulted"), [
    # the velocity converted to metal's A/ps; keywords by their descriptive names
    ("Metal units. The shock is simulated with the Multi-Scale Shock Technique in the y direction at a shock "
     "speed of 2.8 km/s, with cell mass-like parameter 150, artificial viscosity 20 and a temperature scaling "
     "factor of 0.05. Run the MSST stage for 3000 steps.",
     {"axis": "y", "shock_velocity": 28.0, "q": 150.0, "mu": 20.0, "tscale": 0.05}, set()),
    # LAMMPS's keyword names, with the reference state stated
    ("Use metal units. Afterwards run fix msst along x with shock velocity 50 Å/ps, q = 1e4, mu = 1e4, "
     "p0 = 3.7797e+03, v0 = 4.3419e+03 and e0 = -972.36 for 500 steps.",
     {"axis": "x", "shock_velocity": 50.0, "q": 1e4, "mu": 1e4, "p0": 3779.7, "v0": 4341.9, "e0": -972.36,
      "tscale": 0.01}, {"tscale"}),
    # real units: A/fs
    ("In real units, a shock wave propagates along the z-axis (MSST) at a shock velocity of 0.06 Å/fs with "
     "q = 20. Simulate 2000 steps of it.", {"axis": "z", "shock_velocity": 0.06, "q": 20.0, "mu": 0.0},
     {"mu", "tscale"}),
])
def test_msst_paraphrases(text, expected, defaulted):
    desc = read_description("An fcc lattice with lattice constant 4.05 Å, 5 x 5 x 5 unit cells, mass 27 amu, "
                            "Lennard-Jones epsilon = 0.4 eV, sigma = 2.6 Å, cutoff 6 Å. " + text)
    (stage,) = desc.stages
    assert stage.msst is not None, (desc.unsupported, desc.missing)
    assert stage.msst.model_dump(exclude_none=True) | expected == stage.msst.model_dump(exclude_none=True)
    for key in ("q", "mu", "tscale"):  # unstated: LAMMPS's documented defaults, listed as such
        assert desc.origin[f"{stage.name}.msst.{key}"].source == ("default" if key in defaulted else "rules")


def test_the_shock_stage_is_the_run_after_the_shock_is_introduced():
    desc = read_description(
        "Metal units; fcc lattice with a lattice constant of 5.3589 Å in a 6 x 6 x 6 box of unit cells; mass 40 "
        "amu; Lennard-Jones epsilon = 0.01032 eV, sigma = 3.405 Å, cutoff 10 Å. Velocities are created at 300 K. "
        "Equilibrate with NVE for 200 steps. Next, a shock is driven along z with MSST (shock velocity 30 Å/ps, "
        "q = 100, mu = 50). Then run 1000 steps.")
    first, second = desc.stages
    assert first.msst is None and second.msst is not None and second.msst.shock_velocity == 30.0


@pytest.mark.parametrize(("text", "gap"), [
    ("Apply MSST with shock velocity 28 Å/ps and q = 200 for 500 steps.", "direction"),
    ("Apply MSST along z with q = 200 for 500 steps.", "shock velocity"),
    ("Apply MSST along z with a shock velocity of 28 and q = 200 for 500 steps.", "unit of the shock velocity"),
])
def test_an_msst_without_its_direction_or_velocity_is_not_run(text, gap):
    desc = read_description("Metal units. An fcc lattice with a lattice constant of 5.3589 Å, 5 x 5 x 5 unit cells, "
                            "mass 40 amu, Lennard-Jones epsilon = 0.01 eV, sigma = 3.4 Å, cutoff 8 Å. " + text)
    assert not desc.renderable
    assert any(gap in m for m in desc.missing), desc.missing


@pytest.mark.parametrize(("metric", "prop"), [
    ("average_Hugoniot_distance", "hugoniot_departure"),
    ("Mean departure from the Hugoniot", "hugoniot_departure"),
    ("v_dhug", "hugoniot_departure"),
    ("AVERAGE-RAYLEIGH-LINE-DISTANCE", "rayleigh_departure"),
    ("f_msst[2]", "rayleigh_departure"),
    ("average Lagrangian velocity (A/ps)", "lagrangian_speed"),
    ("lgr_vel", "lagrangian_speed"),
    ("Lagrangian_position_in_angstrom", "lagrangian_position"),
    ("Hugoniot pressure", "pressure"),  # a point on the Hugoniot, not the departure from it
])
def test_msst_metric_names(metric, prop):
    assert read_metric(metric).property == prop


def test_the_variable_the_description_names_after_a_metric():
    description = ("Report the average_Hugoniot_distance (v_dhug) in eV/atom and the Rayleigh line distance "
                   "( v_dray ) in eV/Å³; also the Lagrangian speed.")
    assert _named_variable(_words("average_Hugoniot_distance"), description) == ("v_dhug", "eV/atom")
    assert _named_variable(_words("Average-Rayleigh-Line-Distance"), description) == ("v_dray", "eV/Å³")
    assert _named_variable(_words("average_Lagrangian_speed"), description) == (None, "")
    target = read_metric("average_Rayleigh_line_distance", description)
    assert (target.unit, target.variable) == ("eV/angstrom^3", "v_dray")


def test_units_of_shock_quantities():
    # 1 eV/A^3 = 1.602176634e-19 J / 1e-30 m^3 = 160.2176634 GPa (SI eV; ase.units' CODATA 2014 eV differs by
    # 1e-8); 1 km/s = 10 A/ps
    assert convert(1.0, "eV/angstrom^3", "GPa") == pytest.approx(160.2176634, rel=1e-7)
    assert convert(2.8, "km/s", "angstrom/ps") == pytest.approx(28.0)
    assert convert(28.0, "angstrom/ps", "angstrom/fs") == pytest.approx(0.028)


def test_a_named_variable_is_answered_in_the_engines_unit_and_the_texts_unit_is_reported():
    description = ("Compute the average_Rayleigh_line_distance (v_dray) in eV/Å³ and Lagrangian_speed (v_lgr_vel) "
                   "in m/s.")
    targets = [read_metric("average_Rayleigh_line_distance", description),
               read_metric("average_Lagrangian_speed", description)]
    made = {"job": "described", "method": "a number made up for this test"}
    results = [Result(quantity="rayleigh_departure", property="rayleigh_departure", value=-3500.0, unit="bar", **made),
               Result(quantity="lagrangian_speed", property="lagrangian_speed", value=2.0, unit="angstrom/ps", **made)]
    answer = type("A", (), {"answers": results})()
    dray, speed = collect(targets, answer, None, None)
    assert isinstance(dray, MetricOutcome) and dray.value == -3500.0 and speed.value == 2.0
    assert "gives eV/Å³ for v_dray" in dray.target.note and "in eV/angstrom^3 it is -0.00218453" in dray.target.note
    assert "in m/s it is 200" in speed.target.note
    assert {"rayleigh_departure", "lagrangian_speed"} <= ENGINE_VARIABLES


def _logged(log: str, name: str) -> float:
    return float(re.search(rf"Fix MSST {name} = (\S+)", log).group(1))


def test_a_real_msst_run_gives_the_rankine_hugoniot_quantities(tmp_path: Path):
    desc = read_description(SMALL)
    assert desc.renderable and desc.stages[1].msst is not None
    props = ["hugoniot_departure", "rayleigh_departure", "lagrangian_speed", "lagrangian_position"]
    spec = TaskSpec(request=SMALL, described=desc.model_dump(mode="json"),
                    properties=[PropertyRequest(name=p) for p in props])
    protocol = DescribedRun()
    assert protocol.applies_to(spec)
    params, _ = protocol.parameters(spec)
    (job,) = protocol.jobs(params)
    text = job.inputs["in.lammps"]
    # the same run, with pzz (the pressure along the shock) printed too for the independent check
    inputs = {"in.lammps": text.replace(" v_dhug v_dray", " pzz v_dhug v_dray")}
    job_dir = run_inputs(inputs, tmp_path / job.id)
    found = {r.property: r for r in protocol.analyze(params, {job.id: job_dir}, spec)}
    assert set(found) == set(props)
    assert (found["hugoniot_departure"].unit, found["rayleigh_departure"].unit) == ("K", "bar")
    assert (found["lagrangian_speed"].unit, found["lagrangian_position"].unit) == ("angstrom/ps", "angstrom")
    assert all(np.isfinite(r.value) and r.uncertainty is not None for r in found.values())

    block = read_output(job_dir).runs[1]
    log = (job_dir / "log.lammps").read_text()
    v0, p0, e0 = _logged(log, "v0"), _logged(log, "p0"), _logged(log, "e0")
    n = block["Atoms"][0]
    us, mass, dt = 28.0, 40.0 * n, 0.002
    vol, pzz, energy = block["Volume"], block["Pzz"], block["TotEng"]
    assert vol[-1] < 0.99 * v0  # the shock compresses the cell along z
    hugoniot = (0.5 * (pzz + p0) * (v0 - vol) / NKTV2P + e0 - energy) / ((3 * n - 3) * BOLTZ)
    rayleigh = pzz - p0 - mass * us**2 * MVV2E * (1 - vol / v0) * NKTV2P / v0
    speed = us * (1 - vol / v0)
    np.testing.assert_allclose(block["v_dhug"], hugoniot, atol=1e-3 * np.ptp(hugoniot))
    np.testing.assert_allclose(block["v_dray"], rayleigh, atol=1e-4 * np.ptp(rayleigh))
    np.testing.assert_allclose(block["v_lgr_vel"], speed, atol=1e-5 * us)
    assert found["hugoniot_departure"].value == pytest.approx(np.mean(hugoniot), abs=1e-3 * np.ptp(hugoniot))
    assert found["rayleigh_departure"].value == pytest.approx(np.mean(rayleigh), abs=1e-4 * np.ptp(rayleigh))
    assert found["lagrangian_speed"].value == pytest.approx(np.mean(speed), abs=1e-5 * us)
    # the position behind the front: -u_s t + integral of the particle speed (trapezoid over 10-step rows)
    t = (block["Step"] - block["Step"][0]) * dt
    position = -us * t + np.concatenate([[0.0], np.cumsum(np.diff(t) * 0.5 * (speed[1:] + speed[:-1]))])
    np.testing.assert_allclose(block["v_lgr_pos"], position, atol=2e-3 * us * t[-1])
    assert found["lagrangian_position"].value == pytest.approx(np.mean(position), abs=2e-3 * us * t[-1])


@pytest.mark.parametrize(("sentence", "units", "mass", "temperature"), [
    ("Work in metals units. The mass of all atoms is 63.5 amu. Velocities are created at a temperature of roughly "
     "300 K.", "metal", 63.5, 300.0),
    ("Everything is in the metal unit system; mass for every particle = 63.5 g/mol; velocities are assigned at "
     "around 450 K.", "metal", 63.5, 450.0),
])
def test_units_mass_and_an_approximate_velocity_temperature_in_other_words(sentence, units, mass, temperature):
    desc = read_description("An fcc lattice with lattice constant 3.61 Å, 6 x 6 x 6 unit cells. Lennard-Jones "
                            "epsilon = 0.4 eV, sigma = 2.3 Å, cutoff 6 Å. " + sentence + " Run NVE for 100 steps.")
    assert desc.units == units and desc.masses == {1: mass}
    assert desc.velocity is not None and desc.velocity.temperature == temperature


def test_a_stated_dump_is_read_and_reported_as_not_written():
    desc = read_description("Metal units. An fcc lattice with lattice constant 5.3589 Å, 5 x 5 x 5 unit cells, mass "
                            "40 amu, Lennard-Jones epsilon = 0.01 eV, sigma = 3.4 Å, cutoff 8 Å. Run MSST along x at "
                            "a shock velocity of 40 Å/ps for 500 steps; dump the atoms every 100 steps to a file "
                            "called shock.lammpstrj.")
    assert desc.stages[0].msst is not None
    assert "shock.lammpstrj" in desc.origin["dump"].evidence and "not written" in desc.origin["dump"].evidence
