"""lammps/fluid_md at constant pressure (NPT) and heat capacities from energy fluctuations.

Published references:
- NIST Standard Reference Simulation Website (SRSW), LJ fluid, MC NVT, rc = 3 sigma with long-range
  corrections: T* = 0.85, rho* = 0.86 gives P* = 1.2660. An NPT run at (0.85, 1.2660) must return
  rho* = 0.86.
- Liquid argon at 85 K and 1 atm: 1.4096 g/cm^3 and C_P = 44.57 J/(mol K), from the reference
  equation of state of Tegeler, Span & Wagner (J. Phys. Chem. Ref. Data 28, 779 (1999)), evaluated
  independently with CoolProp 6.6.0 (the same EOS gives the saturated liquid at the normal boiling
  point, 87.30 K, as 1.3954 g/cm^3).
- Classical harmonic crystal: C_V = 3 k_B per atom (Dulong-Petit; equipartition), approached by an
  LJ fcc crystal at T* -> 0 (anharmonic corrections are linear in T).
"""

from __future__ import annotations

import pytest

from simagent.backends.expert import ExpertBackend
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
from tools.lammps.protocols.fluid import FluidMD, heat_capacity

NIST_T, NIST_RHO, NIST_P = 0.85, 0.86, 1.2660  # SRSW LJ, rc 3 sigma + LRC
TEGELER_RHO_85K = 1.4096  # g/cm^3, argon at 85 K and 1 atm (Tegeler et al. 1999 EOS)
TEGELER_CP_85K = 44.57  # J/(mol K), same state point and EOS


def lj_npt(props, t=NIST_T, p=NIST_P, phase=None, **controls) -> TaskSpec:
    return TaskSpec(
        request="test",
        system=SystemSpec(name="LJ fluid", kind="lj_fluid", phase=phase),
        potential=PotentialSpec(family="lj", cutoff=Quantity(value=3.0, unit="sigma"), tail_correction=True),
        conditions=Conditions(temperature=Quantity(value=t, unit="reduced"),
                              pressure=Quantity(value=p, unit="reduced")),
        properties=[PropertyRequest(name=n) for n in props],
        units_style="lj",
        controls=SimulationControls(**controls),
    )


def argon_npt(props, t=87.3, p=1.0) -> TaskSpec:
    return TaskSpec(
        request="test",
        system=SystemSpec(name="liquid argon", kind="atomic_fluid", elements=["Ar"], phase="liquid"),
        conditions=Conditions(temperature=Quantity(value=t, unit="K"), pressure=Quantity(value=p, unit="atm")),
        properties=[PropertyRequest(name=n) for n in props],
    )


# ------------------------------------------------------------------------------------------------
# Parameters (no engine)
# ------------------------------------------------------------------------------------------------


def test_pressure_without_density_runs_npt():
    params, defaults = FluidMD().parameters(argon_npt(["density", "rdf"], t=85.0))
    assert params.pressure == pytest.approx(1.01325)  # bar
    assert params.production_ensemble == "npt" and params.tail_correction
    assert params.barostat_damping == pytest.approx(1000 * params.timestep)
    # liquid-like start, rho* = 0.8 with sigma = 3.4 A
    assert params.number_density == pytest.approx(0.8 / 3.4**3)
    named = {d.parameter for d in defaults}
    assert {"production_ensemble", "tail_correction", "start_density", "barostat_damping"} <= named
    text = FluidMD().jobs(params)[0].inputs["in.lammps"]
    assert "fix             prod all npt temp 85.0 85.0" in text and "iso 1.01325 1.01325" in text
    assert "fix             melt all nvt" in text  # the melt stays at fixed volume


def test_npt_diffusion_runs_nve_at_the_mean_volume():
    params, _ = FluidMD().parameters(argon_npt(["self_diffusion_coefficient"], t=90.0))
    assert params.production_ensemble == "nve" and params.pressure is not None
    text = FluidMD().jobs(params)[0].inputs["in.lammps"]
    assert "fix             equil all npt" in text and "change_box      all x scale ${scale}" in text
    assert "fix             prod all nve" in text


def test_gas_start_at_ideal_gas_density():
    params, _ = FluidMD().parameters(lj_npt(["density"], t=2.0, p=0.02))  # supercritical, dilute
    assert params.number_density == pytest.approx(0.02 / 2.0)


@pytest.mark.parametrize(
    "spec, words",
    [
        (lj_npt(["density"], p=-0.5), "negative pressure"),
        (lj_npt(["density"]).model_copy(update={"conditions": Conditions(
            temperature=Quantity(value=0.85, unit="reduced"), pressure=Quantity(value=1, unit="atm"))}),
         "reduced units"),
        (lj_npt(["density"], barostat="berendsen"), "barostat"),
        (lj_npt(["heat_capacity", "self_diffusion_coefficient"]), "separately"),
        (lj_npt(["heat_capacity"], ensemble="nve"), "separately"),
        (argon_npt(["density"]).model_copy(update={"conditions": Conditions(
            temperature=Quantity(value=85, unit="K"), pressure=Quantity(value=1, unit="furlong"))}), "furlong"),
    ],
)
def test_npt_refusals(spec, words):
    with pytest.raises(RequestError, match=words):
        FluidMD().parameters(spec)


def test_heat_capacity_formula_on_synthetic_samples():
    """C_V/(N k_B) = 3/2 + var(U)/(N T^2): Gaussian U samples of known variance (independent check)."""
    import numpy as np

    params, _ = FluidMD().parameters(TaskSpec(
        request="test", system=SystemSpec(name="LJ", kind="lj_fluid"), units_style="lj",
        conditions=Conditions(temperature=Quantity(value=1.0, unit="reduced"),
                              density=Quantity(value=0.8, unit="reduced")),
        properties=[PropertyRequest(name="heat_capacity")]))
    n = params.n_atoms
    rng = np.random.default_rng(1)
    u = rng.normal(-5.0 * n, np.sqrt(1.2 * n), size=20000)  # var(U) = 1.2 N at T = 1 -> C_V = 1.5 + 1.2
    value, se, how = heat_capacity({"PotEng": u}, 0, params)
    assert value == pytest.approx(2.7, abs=4 * se) and "NVT" in how and "C_V" in how


@pytest.mark.parametrize(
    "request_text",
    [
        "Compute the radial distribution function of liquid argon at 85 K and 1 atm",
        "g(r) of liquid Ar, T = 85 K, P = 1 atm please",
        "what is the density of liquid argon at 84 K and 1 bar?",
    ],
)
def test_reader_to_npt_parameters(request_text):
    spec = ExpertBackend().task_spec(request_text)
    assert spec.conditions.pressure is not None and spec.conditions.density is None
    params, _ = FluidMD().parameters(spec)
    assert params.pressure is not None and params.production_ensemble == "npt"


# ------------------------------------------------------------------------------------------------
# Real LAMMPS, small systems (seconds)
# ------------------------------------------------------------------------------------------------


@pytest.mark.engine
def test_lj_npt_density_nist_short(tmp_path, run_protocol):
    """NPT at the SRSW state point returns its density (short run: 3 % band)."""
    got = run_protocol(FluidMD(), lj_npt(["density", "pressure", "heat_capacity"]), tmp_path,
                       equilibration_steps=2000, production_steps=5000).by_quantity
    rho, pressure, cp = got["density"], got["pressure"], got["heat_capacity"]
    print(f"rho* = {rho.value:.4f} +/- {rho.uncertainty:.4f}; P* = {pressure.value:.3f}; C_P = {cp.value:.2f}")
    assert abs(rho.value - NIST_RHO) < 0.03 * NIST_RHO
    assert "C_P" in cp.method and "NPT" in cp.method and cp.value > 1.5


@pytest.mark.engine
def test_lj_crystal_heat_capacity_dulong_petit(tmp_path, run_protocol):
    """fcc LJ crystal at T* = 0.05 (rho* = 1.09, near its zero-pressure density): C_V -> 3 k_B."""
    spec = TaskSpec(
        request="test", system=SystemSpec(name="LJ crystal", kind="lj_fluid", phase="solid"), units_style="lj",
        potential=PotentialSpec(family="lj", cutoff=Quantity(value=2.0, unit="sigma")),  # harmonic limit: any rc
        conditions=Conditions(temperature=Quantity(value=0.05, unit="reduced"),
                              density=Quantity(value=1.09, unit="reduced")),
        properties=[PropertyRequest(name="heat_capacity")])
    run = run_protocol(FluidMD(), spec, tmp_path, n_cells=3, cells=[3, 3, 3], equilibration_steps=2000,
                       production_steps=20000)
    params, got = run.params, run.by_quantity
    cv = got["heat_capacity"]
    print(f"C_V = {cv.value:.3f} +/- {cv.uncertainty:.3f} k_B")
    assert params.production_ensemble == "nvt" and "C_V" in cv.method
    assert abs(cv.value - 3.0) < max(3 * cv.uncertainty, 0.1)


# ------------------------------------------------------------------------------------------------
# Long validations
# ------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_lj_npt_density_nist(tmp_path, run_protocol):
    """Cost: N = 500, 45,000 steps; 122 s wall on the 2-core machine under load ~15 (measured
    rho* = 0.8592 +/- 0.0005)."""
    got = run_protocol(FluidMD(), lj_npt(["density"]), tmp_path, production_steps=40000).by_quantity
    rho = got["density"]
    print(f"rho* = {rho.value:.4f} +/- {rho.uncertainty:.4f} (NIST {NIST_RHO})")
    assert abs(rho.value - NIST_RHO) < max(3 * rho.uncertainty, 0.005 * NIST_RHO)


@pytest.mark.slow
def test_argon_npt_density_vs_experiment(tmp_path, run_protocol):
    """LJ argon (Rahman's 120 K, 3.4 A) at 85 K and 1 atm, the issue's request, vs the argon EOS.
    The LJ model itself is the limit (its triple point is ~83 K against argon's 83.8 K, its critical
    point 157 K against 150.7 K), so the band is 3 % for the density and 10 % for C_P.
    Cost: N = 864, 45,000 steps of 10 fs; 223 s wall under load ~15 (measured 1.4197 +/- 0.0008 g/cm^3,
    C_P 39.7 +/- 1.7 J/(mol K))."""
    got = run_protocol(FluidMD(), argon_npt(["density", "rdf", "heat_capacity"], t=85.0), tmp_path,
                       production_steps=40000).by_quantity
    rho, cp = got["density"], got["heat_capacity"]
    print(f"rho = {rho.value:.4f} +/- {rho.uncertainty:.4f} g/cm^3 (EOS {TEGELER_RHO_85K}); "
          f"C_P = {cp.value:.1f} +/- {cp.uncertainty:.1f} J/(mol K) (EOS {TEGELER_CP_85K})")
    assert rho.unit == "g/cm^3" and cp.unit == "J/(mol K)"
    assert abs(rho.value - TEGELER_RHO_85K) < 0.03 * TEGELER_RHO_85K
    assert abs(cp.value - TEGELER_CP_85K) < max(3 * cp.uncertainty, 0.10 * TEGELER_CP_85K)
    assert 3.5 < got["rdf_first_peak"].value < 3.9  # first shell near 2^(1/6) sigma = 3.82 A


@pytest.mark.parametrize(("request_text", "ensemble"), [
    ("heat capacity of liquid argon at 85 K and 1 atm", "npt"),
    ("Cv of the LJ fluid at T*=1.0 and rho*=0.8", "nvt"),
    ("specific heat of liquid argon at 90 K, density 1.37 g/cm3, in J/mol/K", "nvt"),
])
def test_reader_to_heat_capacity(request_text, ensemble):
    spec = ExpertBackend().task_spec(request_text)
    assert [p.name for p in spec.properties] == ["heat_capacity"]
    params, _ = FluidMD().parameters(spec)
    assert params.production_ensemble == ensemble
