"""lammps/fluid_md: parameters (fast) and physics against published values (real LAMMPS)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from simagent.errors import CalculationFailed, RequestError
from simagent.models import (
    Conditions,
    PotentialSpec,
    PropertyRequest,
    Quantity,
    SimulationControls,
    SystemSpec,
    TaskSpec,
)
from tools.lammps.parse import LammpsOutput, read_output
from tools.lammps.protocols import fluid
from tools.lammps.protocols.fluid import FluidMD, FluidMDParams

# NIST Standard Reference Simulation Website, LJ fluid, MC NVT, cutoff 3 sigma with long-range
# corrections, T* = 0.85, rho* = 0.86.
NIST_U, NIST_P = -6.0305, 1.2660
# Rahman, Phys. Rev. 136, A405 (1964): liquid argon at 94.4 K, 1.374 g/cm^3, N = 864.
RAHMAN_D = 2.43e-5  # cm^2/s


def lj_spec(props, t=0.85, rho=0.86, cutoff=3.0, tail=True, phase=None, **controls) -> TaskSpec:
    return TaskSpec(
        request="test",
        system=SystemSpec(name="LJ fluid", kind="lj_fluid", phase=phase),
        potential=PotentialSpec(
            family="lj", cutoff=Quantity(value=cutoff, unit="sigma"), tail_correction=tail
        ),
        conditions=Conditions(
            temperature=Quantity(value=t, unit="reduced"),
            density=Quantity(value=rho, unit="reduced"),
        ),
        properties=props,
        units_style="lj",
        controls=SimulationControls(**controls),
    )


def argon_spec(props, t=94.4, rho=1.374) -> TaskSpec:
    return TaskSpec(
        request="test",
        system=SystemSpec(name="liquid argon", kind="atomic_fluid", elements=["Ar"]),
        potential=PotentialSpec(
            family="lj",
            lj_epsilon=Quantity(value=120, unit="K"),
            lj_sigma=Quantity(value=3.4, unit="angstrom"),
        ),
        conditions=Conditions(
            temperature=Quantity(value=t, unit="K"), density=Quantity(value=rho, unit="g/cm^3")
        ),
        properties=props,
    )


# ------------------------------------------------------------------------------------------------
# Parameters (no engine)
# ------------------------------------------------------------------------------------------------


def test_registered_and_applies():
    from simagent.protocols import get_protocol

    protocol = get_protocol("lammps/fluid_md")
    assert protocol.applies_to(lj_spec([PropertyRequest(name="pressure")]))
    assert protocol.applies_to(argon_spec([PropertyRequest(name="self_diffusion_coefficient")]))
    assert not protocol.applies_to(lj_spec([PropertyRequest(name="lattice_constant")]))
    crystal = lj_spec([PropertyRequest(name="pressure")])
    crystal.system.kind = "crystal"
    assert not protocol.applies_to(crystal)


def test_argon_parameters_and_defaults():
    params, defaults = FluidMD().parameters(argon_spec([PropertyRequest(name="pressure")]))
    assert params.units == "metal" and params.n_atoms == 864
    assert params.epsilon == pytest.approx(120 * 8.617333262e-5)
    # n = rho N_A / M; a = (4/n)^(1/3) = 5.780 angstrom (Rahman's box: 6 cells, 34.68 angstrom)
    assert params.lattice_constant == pytest.approx(5.7802, abs=1e-3)
    assert params.production_ensemble == "nvt" and not params.rdf and not params.msd
    recorded = {d.parameter for d in defaults}
    assert {"timestep", "cutoff", "n_cells", "production_steps", "seed"} <= recorded
    assert all(d.reason for d in defaults)


def test_lj_parameters_follow_request():
    spec = lj_spec(
        [PropertyRequest(name="self_diffusion_coefficient"), PropertyRequest(name="rdf")],
        production_steps=4000,
    )
    params, defaults = FluidMD().parameters(spec)
    assert params.cutoff_sigma == 3.0 and params.tail_correction
    assert params.msd and params.rdf and params.production_ensemble == "nve"
    assert params.production_steps == 4000
    assert "production_steps" not in {d.parameter for d in defaults}
    text = FluidMD().jobs(params)[0].inputs["in.lammps"]
    assert "pair_modify     shift no tail yes" in text
    assert "dump_modify     msd unwrap yes" in text and "compute         rdf" in text
    assert "lattice         fcc 0.86" in text  # lj units: lattice scale is rho*


def test_box_grows_for_long_cutoff():
    spec = lj_spec([PropertyRequest(name="pressure")], cutoff=4.0, n_atoms=108)
    params, defaults = FluidMD().parameters(spec)
    assert params.box_length >= 2 * 4.0 + params.skin_sigma
    assert any(d.parameter == "n_atoms" for d in defaults)


@pytest.mark.parametrize(
    "spec",
    [
        lj_spec([PropertyRequest(name="pressure")], t=0.0),
        lj_spec([PropertyRequest(name="pressure")], t=-1.0),
        lj_spec([PropertyRequest(name="pressure")], rho=0.0),
        argon_spec([PropertyRequest(name="pressure")], t=-10.0),
        lj_spec([PropertyRequest(name="pressure", unit="bar")]),  # no bar in reduced units
        lj_spec([PropertyRequest(name="rdf", at="last_step")]),
        lj_spec([PropertyRequest(name="pressure")], ensemble="npt"),
    ],
)
def test_impossible_requests(spec):
    with pytest.raises(RequestError):
        FluidMD().parameters(spec)


def test_missing_temperature_or_density():
    spec = lj_spec([PropertyRequest(name="pressure")])
    spec.conditions.temperature = None
    with pytest.raises(RequestError, match="temperature"):
        FluidMD().parameters(spec)
    spec = argon_spec([PropertyRequest(name="pressure")])
    spec.conditions.density = None
    with pytest.raises(RequestError, match="density .* or a pressure"):
        FluidMD().parameters(spec)
    # NPT asked for without a pressure to hold
    spec = argon_spec([PropertyRequest(name="density")])
    spec.controls.ensemble = "npt"
    with pytest.raises(RequestError, match="NPT run needs a pressure"):
        FluidMD().parameters(spec)


def test_unit_conversions():
    assert fluid.output_unit("pressure", "metal", "MPa") == (0.1, "MPa")
    assert fluid.output_unit("pressure", "metal", None) == (1.0, "bar")
    assert fluid.output_unit("density", "metal", "g/cm3")[1] == "g/cm^3"
    assert fluid.output_unit("diffusion", "metal", None) == (1.0, "cm^2/s")
    assert fluid.output_unit("energy", "metal", "kJ/mol")[0] == pytest.approx(96.485, rel=1e-4)
    with pytest.raises(RequestError):
        fluid.output_unit("pressure", "metal", "furlong")


# ------------------------------------------------------------------------------------------------
# Gates on synthetic data (no engine)
# ------------------------------------------------------------------------------------------------


def synthetic_thermo(n: int = 201, temp: float = 0.85) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    ones = np.ones(n)
    return {
        "Step": np.arange(n) * 10.0, "Temp": temp + 0.01 * rng.normal(size=n),
        "PotEng": -3000 * ones, "KinEng": 600 * ones, "TotEng": -2400 * ones,
        "Press": ones, "Volume": 581.4 * ones, "Atoms": 500 * ones,
    }  # fmt: skip


def small_params(**kw) -> FluidMDParams:
    base = dict(
        units="lj", mass=1, epsilon=1, sigma=1, temperature=0.85, number_density=0.86,
        n_cells=5, cutoff_sigma=2.5, timestep=0.005, melt_steps=0, equilibration_steps=0,
        production_steps=2000,
    )  # fmt: skip
    return FluidMDParams(**{**base, **kw})


def test_gates_pass_on_good_thermo():
    fluid.check_thermo(synthetic_thermo(), small_params())
    fluid.check_temperature(synthetic_thermo()["Temp"], 0.85)


def test_gate_nan_and_lost_atoms():
    thermo = synthetic_thermo()
    thermo["PotEng"][50] = np.nan
    # the analysis takes its thermo from the reader, which refuses a NaN before check_thermo sees it
    with pytest.raises(CalculationFailed, match="non-finite PotEng in thermo table 1 from step"):
        LammpsOutput(thermo=[thermo]).last_run()
    thermo = synthetic_thermo()
    thermo["Atoms"][-1] = 499
    with pytest.raises(CalculationFailed, match="lost"):
        fluid.check_thermo(thermo, small_params())


def test_gate_temperature_off_target():
    with pytest.raises(CalculationFailed, match="temperature"):
        fluid.check_temperature(synthetic_thermo(temp=0.95)["Temp"], 0.85)


def test_rdf_peak_and_cn_of_ideal_shell():
    # a narrow Gaussian shell of 12 neighbours at r0 on top of an empty core: CN must be 12
    r = np.arange(0.0075, 2.5, 0.015)
    rho, r0, width = 1.1, 1.0873, 0.02
    shell = 12 * np.exp(-((r - r0) ** 2) / (2 * width**2)) / (width * math.sqrt(2 * math.pi))
    g = shell / (4 * math.pi * rho * r**2) + np.where(r > 1.4, 1.0, 0.0)
    peak, r_min, cn = fluid.rdf_peak_and_cn(r, g, rho)
    assert abs(peak - r0) < 0.015 and 1.15 < r_min < 1.41
    assert cn == pytest.approx(12, abs=0.05)


# ------------------------------------------------------------------------------------------------
# Real LAMMPS runs
# ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lj_nist(tmp_path_factory, run_protocol):
    """LJ fluid at the NIST state point, default protocol settings (N = 500, 100 tau NVT)."""
    spec = lj_spec(
        [
            PropertyRequest(name="potential_energy_per_atom"),
            PropertyRequest(name="pressure"),
            PropertyRequest(name="temperature"),
            PropertyRequest(name="coordination_number"),
            PropertyRequest(name="potential_energy_per_atom", at="last_step"),
            PropertyRequest(name="pressure", at="step", step=5000),
        ]
    )
    run = run_protocol(FluidMD(), spec, tmp_path_factory.mktemp("lj_nist"))
    return run.params, run.results, run.dirs["md"]


@pytest.mark.engine
def test_lj_fluid_matches_nist(lj_nist):
    params, results, _ = lj_nist
    energy, pressure, temperature = results[0], results[1], results[2]
    print(f"U/N = {energy.value:.4f} +/- {energy.uncertainty:.4f} (NIST {NIST_U})")
    print(f"P* = {pressure.value:.4f} +/- {pressure.uncertainty:.4f} (NIST {NIST_P})")
    assert energy.unit == "reduced" and energy.uncertainty > 0
    assert abs(energy.value - NIST_U) < max(3 * energy.uncertainty, 0.01 * abs(NIST_U))
    assert abs(pressure.value - NIST_P) < max(3 * pressure.uncertainty, 0.03 * NIST_P)
    assert abs(temperature.value - 0.85) < 0.01
    # liquid near the triple point: about 12-13 neighbours in the first shell
    assert 10 < results[3].value < 14
    assert (
        Path(results[3].data_file).is_file() and (Path(results[3].log).parent / "gr.png").is_file()
    )


@pytest.mark.engine
def test_last_step_and_step_values_match_log(lj_nist):
    params, results, job_dir = lj_nist
    last, at_step = results[4], results[5]
    text = (job_dir / "log.lammps").read_text().splitlines()
    header = max(i for i, line in enumerate(text) if line.split()[:2] == ["Step", "Temp"])
    columns = text[header].split()
    rows = [
        line.split() for line in text[header + 1 :] if line.split() and line.split()[0].isdigit()
    ]
    final = dict(zip(columns, map(float, rows[-1]), strict=True))
    assert final["Step"] == params.production_steps
    assert last.uncertainty is None
    assert last.value == pytest.approx(final["PotEng"] / final["Atoms"], rel=1e-12)
    line = next(dict(zip(columns, map(float, r), strict=True)) for r in rows if r[0] == "5000")
    assert at_step.value == pytest.approx(line["Press"], rel=1e-12)


@pytest.mark.engine
def test_argon_self_diffusion_rahman(asked):
    """Analysed on the run that tests/test_published_values.py's argon request made (the `asked`
    fixture: one engine run for both), after checking that it ran this spec's own input."""
    from tests_wordings import ARGON

    spec = argon_spec(
        [
            PropertyRequest(name="self_diffusion_coefficient"),
            PropertyRequest(name="temperature"),
            PropertyRequest(name="density"),
        ]
    )
    answer = asked(ARGON[0])
    assert answer.status == "answered", answer.error
    protocol = FluidMD()
    params, _ = protocol.parameters(spec)
    (job,) = protocol.jobs(params)
    (job_dir,) = [Path(folder) for folder in answer.jobs if Path(folder).name.endswith(job.id)]
    assert (job_dir / "in.lammps").read_text() == job.inputs["in.lammps"]
    results = protocol.analyze(params, {job.id: job_dir}, spec)
    diffusion, temperature, density = results
    print(f"D = {diffusion.value:.3e} +/- {diffusion.uncertainty:.1e} cm^2/s (Rahman {RAHMAN_D})")
    print(f"T = {temperature.value:.2f} +/- {temperature.uncertainty:.2f} K")
    assert diffusion.unit == "cm^2/s" and params.production_ensemble == "nve"
    # 10 % tolerance: our statistical error is ~3 %; Rahman's own error is a few %
    assert abs(diffusion.value / RAHMAN_D - 1) < 0.10
    assert diffusion.uncertainty < 0.1 * diffusion.value
    assert abs(temperature.value - 94.4) < 0.02 * 94.4  # NVE started at the NVT mean energy
    assert density.value == pytest.approx(1.374, rel=1e-4) and density.unit == "g/cm^3"
    assert (job_dir / "msd.png").is_file() and Path(diffusion.data_file).is_file()


@pytest.mark.engine
def test_fcc_crystal_rdf_and_coordination(tmp_path, run_protocol):
    """Exact geometric reference: fcc at rho* = 1.1 and T* = 0.1 stays solid; 12 nearest
    neighbours at a / sqrt(2)."""
    spec = lj_spec(
        [PropertyRequest(name="rdf"), PropertyRequest(name="coordination_number")],
        t=0.1, rho=1.1, cutoff=2.5, tail=False, phase="solid",
        equilibration_steps=1000, production_steps=2000,
    )  # fmt: skip
    run = run_protocol(FluidMD(), spec, tmp_path)
    params, (peak, cn) = run.params, run.results
    nearest = params.lattice_constant / math.sqrt(2)
    bin_width = params.cutoff / params.rdf_bins
    print(f"first peak {peak.value:.4f} (a/sqrt2 = {nearest:.4f}), CN = {cn.value:.3f}")
    assert abs(peak.value - nearest) <= 2 * bin_width
    assert cn.value == pytest.approx(12, abs=0.5)


@pytest.mark.engine
def test_gate_crystal_is_not_diffusive(tmp_path, run_protocol):
    spec = lj_spec(
        [PropertyRequest(name="self_diffusion_coefficient")],
        t=0.1, rho=1.1, cutoff=2.5, tail=False, phase="solid",
        equilibration_steps=1000, production_steps=2000,
    )  # fmt: skip
    with pytest.raises(CalculationFailed, match="not diffusive"):
        run_protocol(FluidMD(), spec, tmp_path)


@pytest.mark.engine
def test_gate_temperature_not_reached(tmp_path, run_protocol):
    """NVE from a perfect lattice without equilibration: equipartition halves the temperature."""
    spec = lj_spec(
        [PropertyRequest(name="temperature")], t=0.5, rho=1.1, cutoff=2.5, tail=False,
        phase="solid", ensemble="nve", equilibration_steps=0, production_steps=1000,
    )  # fmt: skip
    with pytest.raises(CalculationFailed, match="temperature"):
        run_protocol(FluidMD(), spec, tmp_path)
    thermo = read_output(tmp_path / "md").last_run()
    assert thermo["Temp"][-100:].mean() < 0.4


# ------------------------------------------------------------------------------------------------
# Kob-Andersen binary mixture
# ------------------------------------------------------------------------------------------------

# Pedersen, Schroder & Dyre, Phys. Rev. Lett. 120, 165501 (2018) (arXiv:1803.08956): the standard
# Kob-Andersen mixture melts at T = 1.028(3) where its liquid has density 1.2, in simulations at
# pressure 10.19; so the liquid at T = 1.028, rho = 1.2 has P = 10.19 (A-A reduced units; the
# shift of the pair potential at 2.5 sigma_ab does not change forces, hence P).
KA_T, KA_RHO, KA_P = 1.028, 1.2, 10.19
# Systematic allowance: T_m is known to +/-0.003 and (dP/dT)_rho of this dense liquid is ~7, i.e.
# +/-0.02 in P; with the finite size (N = 500 here) we allow 1 % in all.
KA_P_SYSTEMATIC = 0.01 * KA_P
KA_REQUEST = (
    "Potential energy per particle and pressure of the Kob-Andersen binary LJ mixture at T* = 1.028 and rho* = 1.2"
)


def ka_spec(props=("potential_energy_per_atom", "pressure"), request=KA_REQUEST, **controls) -> TaskSpec:
    spec = lj_spec([PropertyRequest(name=p) for p in props], t=KA_T, rho=KA_RHO, **controls)
    spec.request = request
    spec.potential.cutoff, spec.potential.tail_correction = None, False
    return spec


def test_kob_andersen_parameters_and_inputs():
    params, defaults = FluidMD().parameters(ka_spec())
    assert params.mixture == "kob_andersen" and params.type_counts == [400, 100] and params.n_atoms == 500
    assert params.shifted and params.cutoff_sigma == 2.5
    recorded = {d.parameter: d.reason for d in defaults}
    assert "Kob & Andersen" in recorded["cutoff"] and "80:20" in recorded["type_counts"]
    text = FluidMD().jobs(params)[0].inputs["in.lammps"]
    # the model's pair parameters (Kob & Andersen 1995) with cutoffs 2.5 sigma_ab
    assert "pair_coeff      1 1 1 1 2.5" in text
    assert "pair_coeff      1 2 1.5 0.8 2" in text
    assert "pair_coeff      2 2 0.5 0.88 2.2" in text
    assert "create_box      2 box" in text and "type/subset 2 100" in text and "shift yes" in text
    # an exact split from the request's own counts
    params, _ = FluidMD().parameters(ka_spec(type_counts=[800, 200]))
    assert params.type_counts == [800, 200] and params.n_atoms == 1000 and params.cell_counts == (5, 5, 10)


def test_kob_andersen_from_the_reader_and_refusals():
    from simagent.backends.expert import ExpertBackend

    spec = ExpertBackend().task_spec(KA_REQUEST)
    params, _ = FluidMD().parameters(spec)
    assert params.mixture == "kob_andersen" and params.temperature == KA_T and params.number_density == KA_RHO
    with pytest.raises(RequestError, match="per-species"):
        FluidMD().parameters(ka_spec(["self_diffusion_coefficient"]))
    with pytest.raises(RequestError, match="mixture"):
        FluidMD().parameters(lj_spec([PropertyRequest(name="pressure")], atom_types=2))  # unnamed mixture


@pytest.mark.engine
def test_kob_andersen_pressure_at_its_melting_point(tmp_path, run_protocol):
    """N = 500, 50 tau of NVT production (~20 s): P within 3 standard errors (~0.05 each) plus
    1 % of Pedersen et al.'s 10.19."""
    by = run_protocol(FluidMD(), ka_spec(production_steps=10000), tmp_path).by_quantity
    pressure, energy = by["pressure"], by["potential_energy_per_atom"]
    print(f"KA: P = {pressure.value:.3f} +/- {pressure.uncertainty:.3f} (ref {KA_P}); U/N = {energy.value:.4f}")
    assert abs(pressure.value - KA_P) < 3 * pressure.uncertainty + KA_P_SYSTEMATIC
    assert 0 < pressure.uncertainty < 0.02 * KA_P
    assert energy.value < 0 and "Kob & Andersen" in energy.method
