"""lammps/chain_conformation and lammps/energy_components: the polymer reader domain, the start
configuration, exact chain geometry (no engine and with LAMMPS), and the Kremer-Grest melt.

References:
- Kremer & Grest, J. Chem. Phys. 92, 5057 (1990): the KG melt at rho* = 0.85, T* = 1 has a mean
  bond length of 0.97 sigma and <R^2>/(N - 1) of about 1.7 sigma^2 for long chains.
- Short chains: <R^2>/(N - 1) grows with N from the bond's <b^2> (N = 2) towards that limit, and
  <R_ee^2>/<R_g^2> -> 6 for Gaussian chains (6N/(N + 1) for N beads).
- NIST Standard Reference Simulation Website, LJ fluid (MC NVT, cutoff 3 sigma with long-range
  corrections), T* = 0.85, rho* = 0.86: U/N = -6.0305.
"""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import numpy as np
import pytest

from simagent.backends.expert import domains
from simagent.backends.expert.domains import polymers
from simagent.engines import get_engine
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
from tools.lammps import engine
from tools.lammps.parse import read_output
from tools.lammps.protocols import chains, energies
from tools.lammps.protocols.chains import ChainConformation, ChainMeltParams
from tools.lammps.protocols.energies import EnergyComponents, EnergyComponentsParams

KG_BOND = 0.97
KG_R2_PER_BOND_LONG = 1.7
NIST_U = -6.0305


def kg_spec(props, n=10, rho=0.85, t=1.0, request="test", unit=None, **controls) -> TaskSpec:
    return TaskSpec(
        request=request,
        system=SystemSpec(name="Kremer-Grest melt", kind="polymer", molecule=f"bead-spring chain of {n} beads"),
        potential=PotentialSpec(family="lj", name_hint="kremer-grest"),
        conditions=Conditions(
            temperature=Quantity(value=t, unit="reduced"), density=Quantity(value=rho, unit="reduced")
        ),
        properties=[PropertyRequest(name=p, unit=unit) for p in props],
        units_style="lj",
        controls=SimulationControls(**controls),
    )


def lj_fluid_spec(**controls) -> TaskSpec:
    return TaskSpec(
        request="energy components of an LJ fluid",
        system=SystemSpec(name="LJ fluid", kind="lj_fluid"),
        potential=PotentialSpec(family="lj", cutoff=Quantity(value=3.0, unit="sigma"), tail_correction=True),
        conditions=Conditions(
            temperature=Quantity(value=0.85, unit="reduced"), density=Quantity(value=0.86, unit="reduced")
        ),
        properties=[PropertyRequest(name="energy_components")],
        units_style="lj",
        controls=SimulationControls(**controls),
    )


def read(text: str) -> TaskSpec:
    """The expert reader with the polymer domain module (added here until it is in MODULES)."""
    from simagent.backends.expert.reader import read_request

    name = "simagent.backends.expert.domains.polymers"
    added = name not in domains.MODULES
    if added:
        domains.MODULES.append(name)
    try:
        return read_request(text)
    finally:
        if added:
            domains.MODULES.remove(name)


# ------------------------------------------------------------------------------------------------
# Reader domain
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "length", "n_atoms"),
    [
        ("Radius of gyration of Kremer-Grest bead-spring chains of 20 beads at rho* = 0.85 and T* = 1", 20, None),
        ("End-to-end distance of 50 bead-spring chains of 10 beads (FENE, WCA) at T* = 1", 10, 500),
        ("Rg of a melt of 30-mers, Kremer-Grest model", 30, None),
        ("radius of gyration of 20-bead polymer chains", 20, None),
        ("Kremer-Grest polymer melt, chain length 25: end-to-end distance", 25, None),
    ],
)
def test_reader_recognises_bead_spring_chains(text, length, n_atoms):
    spec = read(text)
    assert spec.system.kind == "polymer" and spec.units_style == "lj" and spec.engine == "lammps"
    assert chains.chain_length_of(spec) == length
    assert spec.controls.n_atoms == n_atoms
    assert "density" not in spec.missing and "chain length" not in spec.missing
    assert ChainConformation().applies_to(spec)


def test_reader_asks_for_the_chain_length():
    spec = read("radius of gyration of a polymer melt")
    assert spec.system.kind == "polymer" and "chain length" in spec.missing
    with pytest.raises(RequestError, match="chain length"):
        ChainConformation().parameters(spec)


def test_reader_leaves_other_systems_alone():
    spec = read("Shear viscosity of a Lennard-Jones fluid at T* = 0.722 and rho* = 0.8442 by Green-Kubo")
    assert spec.system.kind == "lj_fluid"
    spec = TaskSpec(request="x", system=SystemSpec(name="MOF-5", kind="framework"))
    polymers.refine("polymer chains in MOF-5", "polymer chains in mof-5", spec)
    assert spec.system.kind == "framework"


CHAIN_WORDINGS = [
    "Radius of gyration of Kremer-Grest bead-spring chains of 20 beads at rho* = 0.85 and T* = 1",
    "What is the radius of gyration of 20-bead Kremer-Grest chains in a melt at T* = 1, rho* = 0.85?",
    "Kremer-Grest polymer melt (FENE + WCA), chain length 20, reduced density 0.85, T*=1: Rg",
]


def test_chain_wordings_lead_to_the_same_inputs(settings):
    from agents.input_writer import render_plan
    from agents.planner import plan_runs
    from simagent.backends.expert import ExpertBackend
    from simagent.state import RunContext

    context = RunContext(settings=settings, backend=ExpertBackend(), executor=None)

    def inputs(text):
        name = "simagent.backends.expert.domains.polymers"
        added = name not in domains.MODULES
        if added:
            domains.MODULES.append(name)
        try:
            runs, _, _ = plan_runs(context.backend.task_spec(text), context)
        finally:
            if added:
                domains.MODULES.remove(name)
        assert [r.protocol for r in runs] == ["lammps/chain_conformation"]
        return {job.id: job.inputs for job in render_plan(runs, settings.job_time_limit_s).jobs}

    first = inputs(CHAIN_WORDINGS[0])
    for other in CHAIN_WORDINGS[1:]:
        assert inputs(other) == first, other


# ------------------------------------------------------------------------------------------------
# Parameters and start configuration (no engine)
# ------------------------------------------------------------------------------------------------


def test_kremer_grest_parameters_and_defaults():
    params, defaults = ChainConformation().parameters(kg_spec(["radius_of_gyration"], n=20))
    assert (params.bond_k, params.bond_r0, params.pair_cutoff) == (30.0, 1.5, pytest.approx(2 ** (1 / 6)))
    assert params.chain_length == 20 and params.n_atoms >= 1000 and params.dump_every > 0
    assert params.box > 2 * math.sqrt(1.7 * 19)  # no chain meets its own image
    recorded = {d.parameter for d in defaults}
    assert {
        "timestep",
        "langevin_damp",
        "n_chains",
        "equilibration_steps",
        "production_steps",
        "seed",
        "model",
        "start",
    } <= recorded
    assert all(d.reason for d in defaults)


@pytest.mark.parametrize(
    "spec",
    [
        kg_spec(["radius_of_gyration"], n=500),  # entangled: cannot be equilibrated by plain MD
        kg_spec(["radius_of_gyration"], unit="nm"),  # reduced units only
        kg_spec(["radius_of_gyration"], ensemble="npt"),
        kg_spec(["radius_of_gyration"], rho=1.5),
    ],
)
def test_impossible_chain_requests(spec):
    with pytest.raises(RequestError):
        ChainConformation().parameters(spec)


def test_random_walk_start_geometry():
    walk = chains.random_walk_chains(20, 15, 10.0, seed=7)
    bonds = np.linalg.norm(np.diff(walk, axis=1), axis=-1)
    assert np.allclose(bonds, chains.START_BOND_LENGTH)
    second = np.linalg.norm(walk[:, 2:] - walk[:, :-2], axis=-1)
    assert second.min() >= chains.START_MIN_SECOND_NEIGHBOUR - 1e-12
    # deterministic for a seed: the job's inputs do not change between renderings
    assert np.array_equal(walk, chains.random_walk_chains(20, 15, 10.0, seed=7))


def test_data_file_is_an_input_of_the_job_and_passes_the_checks():
    params, _ = ChainConformation().parameters(kg_spec(["radius_of_gyration", "end_to_end_distance"]))
    job = ChainConformation().jobs(params)[0]
    assert set(job.inputs) == {"in.lammps", chains.DATA_FILE}
    assert f"read_data       {chains.DATA_FILE}" in job.inputs["in.lammps"]
    assert f"{params.n_atoms} atoms" in job.inputs[chains.DATA_FILE]
    assert ChainConformation().jobs(params)[0].inputs == job.inputs
    assert get_engine("lammps").precheck_findings(job, dry_run=True) == []


def straight_chains(n_chains: int, length: int, bond: float, box: float, seed: int = 0) -> np.ndarray:
    """Rigid straight chains in random orientations, placed so many cross the periodic boundary."""
    rng = np.random.default_rng(seed)
    out = np.empty((n_chains, length, 3))
    for m in range(n_chains):
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        out[m] = rng.uniform(0, box, 3) + bond * np.arange(length)[:, None] * axis
    return out


def test_chain_metrics_of_rigid_rods_are_exact():
    """Straight chain of N beads spaced b: R_g^2 = b^2 (N^2 - 1)/12, R_ee = (N - 1) b."""
    n, b = 12, 0.97
    rods = straight_chains(5, n, b, 8.0)
    metrics = chains.chain_metrics(rods.reshape(-1, 3), n)
    assert metrics["rg2"][0] == pytest.approx(b**2 * (n**2 - 1) / 12, rel=1e-12)
    assert metrics["ree2"][0] == pytest.approx(((n - 1) * b) ** 2, rel=1e-12)
    assert metrics["bond"][0] == pytest.approx(b, rel=1e-12)
    assert chains.ideal_ratio(n) == pytest.approx(6 * n / (n + 1))


def test_bond_gate():
    chains.check_bonds(np.full(10, 0.965))
    with pytest.raises(CalculationFailed, match="bond"):
        chains.check_bonds(np.full(10, 3.0))  # a torn chain (or wrapped coordinates)


@pytest.mark.engine
def test_lammps_reads_rigid_chains_exactly(tmp_path):
    """Exact reference through LAMMPS itself: straight chains written by the protocol's data-file
    writer (wrapped, with image flags) give R_g^2 = b^2 (N^2 - 1)/12 from compute gyration/chunk and
    from the unwrapped DCD read back by the analysis."""
    n, b, box = 12, 0.97, 8.0
    rods = straight_chains(6, n, b, box, seed=3)
    (tmp_path / "rods.data").write_text(chains.data_file_text(rods, box, "rigid rods"))
    (tmp_path / "in.lammps").write_text(
        "units lj\natom_style bond\nread_data rods.data\npair_style zero 1.0\npair_coeff * *\n"
        "bond_style zero\nbond_coeff *\ncompute chains all chunk/atom molecule\n"
        "compute gyration all gyration/chunk chains\nvariable rg2 vector c_gyration*c_gyration\n"
        "variable rg2_mean equal ave(v_rg2)\nthermo_style custom step v_rg2_mean\n"
        "thermo_modify format float %.15g\ndump traj all dcd 1 rods.dcd\ndump_modify traj unwrap yes sort id\n"
        "run 0\n"
    )
    subprocess.run(engine.command(), cwd=tmp_path, env=engine.environment(), check=True, capture_output=True)
    exact = b**2 * (n**2 - 1) / 12
    thermo = read_output(tmp_path).last_run()
    assert thermo["v_rg2_mean"][0] == pytest.approx(exact, rel=1e-10)
    frames = chains.read_unwrapped(tmp_path / "rods.dcd", rods.shape[0] * n)
    metrics = chains.chain_metrics(frames, n)
    assert metrics["rg2"][0] == pytest.approx(exact, rel=1e-5)  # DCD stores single precision
    assert metrics["ree2"][0] == pytest.approx(((n - 1) * b) ** 2, rel=1e-5)


# ------------------------------------------------------------------------------------------------
# Energy terms (no engine)
# ------------------------------------------------------------------------------------------------


def synthetic_energy_thermo(n: int = 50) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(4)
    bond = 18600 + 20 * rng.normal(size=n)
    vdwl = 500 + 10 * rng.normal(size=n)
    zero = np.zeros(n)
    return {"E_bond": bond, "E_angle": zero, "E_dihed": zero, "E_impro": zero, "E_vdwl": vdwl,
            "E_coul": zero, "E_long": zero, "PotEng": bond + vdwl}  # fmt: skip


def test_energy_terms_identity_gate():
    series = energies.component_series(synthetic_energy_thermo())
    assert set(series) == {"bond", "angle", "dihedral", "improper", "vdwl", "coul", "long", "potential"}
    thermo = synthetic_energy_thermo()
    thermo["PotEng"] = thermo["PotEng"] + 1.0  # an energy LAMMPS did not split
    with pytest.raises(CalculationFailed, match="add up"):
        energies.component_series(thermo)


def test_energy_units_and_per_molecule():
    spec = kg_spec(["energy_components"], request="Energy components per molecule of a bead-spring melt")
    params, defaults = EnergyComponents().parameters(spec)
    assert params.per == "molecule" and params.system == "polymer" and params.melt.dump_every == 0
    params, defaults = EnergyComponents().parameters(kg_spec(["energy_components"]))
    assert params.per == "atom" and any(d.parameter == "per" for d in defaults)
    assert energies.output_unit("lj", None, "molecule") == (1.0, "reduced/molecule")
    assert energies.output_unit("metal", "kJ/mol", "atom")[1] == "kJ/mol"
    with pytest.raises(RequestError):
        EnergyComponents().parameters(kg_spec(["energy_components"], unit="eV"))


# ------------------------------------------------------------------------------------------------
# Real LAMMPS runs
# ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kg_melt(tmp_path_factory, run_protocol):
    """100 Kremer-Grest chains of 10 beads, rho* = 0.85, T* = 1: 100 tau equilibration, 200 tau
    production (~10 s of CPU)."""
    root = tmp_path_factory.mktemp("kg10")
    spec = kg_spec(
        ["radius_of_gyration", "end_to_end_distance"], n=10, equilibration_steps=10000, production_steps=20000
    )
    done = run_protocol(ChainConformation(), spec, root)
    return done.params, done.results, done.dirs["md"]


@pytest.mark.engine
def test_kremer_grest_chain_conformation(kg_melt):
    params, results, job_dir = kg_melt
    got = {r.quantity: r for r in results}
    rg, ree2 = got["radius_of_gyration"], got["end_to_end_distance_squared"]
    rg2 = got["radius_of_gyration_squared"]
    ratio = got["end_to_end_distance_squared_over_radius_of_gyration_squared"]
    n = params.chain_length
    print(
        f"<Rg^2> = {rg2.value:.4f} +/- {rg2.uncertainty:.4f}, <R^2> = {ree2.value:.3f} +/- {ree2.uncertainty:.3f}, "
        f"<R^2>/(N-1) = {ree2.value / (n - 1):.3f}, ratio {ratio.value:.3f} (Gaussian {6 * n / (n + 1):.3f})"
    )
    assert rg.value == pytest.approx(math.sqrt(rg2.value)) and rg.unit == "reduced"
    assert 0 < rg2.uncertainty < 0.02 * rg2.value and 0 < ree2.uncertainty < 0.05 * ree2.value
    # Kremer & Grest 1990: bonds of 0.97 sigma; <R^2>/(N-1) between <b^2> (no correlations) and
    # the long-chain value 1.7 (allowing 3 standard errors)
    bond = float(ratio.method.split("mean bond length ")[1].split()[0])
    assert bond == pytest.approx(KG_BOND, abs=0.01)
    per_bond = ree2.value / (n - 1)
    per_bond_se = ree2.uncertainty / (n - 1)
    assert KG_BOND**2 - 3 * per_bond_se < per_bond < KG_R2_PER_BOND_LONG + 3 * per_bond_se
    # short KG chains are locally stiffer than Gaussian ones: ratio a little above 6N/(N+1)
    assert 6 * n / (n + 1) - 3 * ratio.uncertainty < ratio.value < 6.0 * 1.15
    assert Path(rg.data_file).is_file() and (job_dir / "chain_conformation.png").is_file()


@pytest.mark.engine
def test_kremer_grest_energy_terms_add_up(kg_melt):
    """The energy protocol's analysis on the same melt run: bond + pair terms = pe in every sample
    (checked inside), the terms the KG model lacks are exactly zero, per-molecule = N x per-atom."""
    params, _, job_dir = kg_melt
    protocol = EnergyComponents()
    spec = kg_spec(["energy_components"])
    per_atom = {
        r.quantity: r
        for r in protocol.analyze(
            EnergyComponentsParams(system="polymer", per="atom", melt=params), {"md": job_dir}, spec
        )
    }
    per_chain = {
        r.quantity: r
        for r in protocol.analyze(
            EnergyComponentsParams(system="polymer", per="molecule", melt=params), {"md": job_dir}, spec
        )
    }
    total = per_atom["energy_components_potential"]
    parts = [
        per_atom[f"energy_components_{k}"].value
        for k in ("bond", "angle", "dihedral", "improper", "vdwl", "coul", "long")
    ]
    print({k: round(v.value, 4) for k, v in per_atom.items()})
    assert sum(parts) == pytest.approx(total.value, rel=1e-12)
    for absent in ("angle", "dihedral", "improper", "coul", "long"):
        assert per_atom[f"energy_components_{absent}"].value == 0.0
        assert per_atom[f"energy_components_{absent}"].uncertainty is None
    assert per_atom["energy_components_bond"].value > per_atom["energy_components_vdwl"].value > 0
    assert per_chain["energy_components_bond"].value == pytest.approx(
        params.chain_length * per_atom["energy_components_bond"].value, rel=1e-12
    )
    assert per_chain["energy_components_bond"].unit == "reduced/molecule"


@pytest.mark.engine
def test_lj_fluid_energy_terms_reduce_to_evdwl(tmp_path, run_protocol):
    """Monatomic limit: pe is evdwl alone (tail correction included) and matches NIST's U/N. 4000
    production steps: the standard error of evdwl/N was 0.0046 over 10000 steps (measured), so 3 sigma
    stays well inside the 1 % band, which is the tolerance either way."""
    got = run_protocol(EnergyComponents(), lj_fluid_spec(production_steps=4000), tmp_path).by_quantity
    vdwl, total = got["energy_components_vdwl"], got["energy_components_potential"]
    print(f"evdwl/N = {vdwl.value:.4f} +/- {vdwl.uncertainty:.4f} (NIST {NIST_U})")
    assert vdwl.value == pytest.approx(total.value, rel=1e-12)
    assert all(got[f"energy_components_{k}"].value == 0.0 for k in ("bond", "angle", "dihedral", "coul", "long"))
    assert abs(vdwl.value - NIST_U) < max(3 * vdwl.uncertainty, 0.01 * abs(NIST_U))


@pytest.mark.slow
def test_kremer_grest_20_beads_default_protocol(tmp_path, run_protocol):
    """Default settings for N = 20 (Rouse-scaled equilibration and production)."""
    spec = kg_spec(["radius_of_gyration", "end_to_end_distance"], n=20)
    got = run_protocol(ChainConformation(), spec, tmp_path).by_quantity
    ree2 = got["end_to_end_distance_squared"]
    per_bond = ree2.value / 19
    print(
        f"N = 20: <R^2>/(N-1) = {per_bond:.3f} +/- {ree2.uncertainty / 19:.3f}, "
        f"<Rg^2> = {got['radius_of_gyration_squared'].value:.3f}"
    )
    assert KG_BOND**2 < per_bond < KG_R2_PER_BOND_LONG + 3 * ree2.uncertainty / 19


def test_params_round_trip():
    params, _ = ChainConformation().parameters(kg_spec(["radius_of_gyration"]))
    assert ChainMeltParams.model_validate(params.model_dump()) == params
    eparams, _ = EnergyComponents().parameters(lj_fluid_spec())
    assert EnergyComponents().validate_params(eparams.model_dump()) == eparams
