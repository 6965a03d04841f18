"""lammps/crystal_relax against published values, through the real executor (run_plan)."""

import math

import pytest

from simagent.errors import CalculationFailed, RequestError
from simagent.jobrun import run_plan
from simagent.models import (
    Plan,
    PotentialSpec,
    PropertyRequest,
    SimulationControls,
    SystemSpec,
    TaskSpec,
)
from simagent.protocols import get_protocol, protocols_for

PROTOCOL = "lammps/crystal_relax"


def spec(element, lattice, family=None, hint=None, file=None, properties=None):
    return TaskSpec(
        request="x",
        system=SystemSpec(name=element, kind="crystal", elements=[element], lattice=lattice),
        potential=PotentialSpec(family=family, name_hint=hint, file=file),
        properties=[PropertyRequest(name=p) for p in (properties or ["lattice_constant", "cohesive_energy"])],
    )


def test_applies_to_crystal_lattice_and_energy_only():
    protocol = get_protocol(PROTOCOL)
    assert protocol.applies_to(spec("Ni", "fcc"))
    assert protocol.applies_to(spec("Ni", "fcc", properties=["cohesive_energy"]))
    assert not protocol.applies_to(spec("Ni", "fcc", properties=["lattice_constant", "density"]))
    fluid = TaskSpec(
        request="x",
        system=SystemSpec(name="argon", kind="atomic_fluid", elements=["Ar"]),
        properties=[PropertyRequest(name="lattice_constant")],
    )
    assert not protocol.applies_to(fluid)
    assert PROTOCOL in [p.name for p in protocols_for(spec("Ni", "fcc"))]


def test_parameters_record_defaults_and_reject_bad_requests():
    protocol = get_protocol(PROTOCOL)
    params, defaults = protocol.parameters(spec("Ni", None))  # lattice and potential defaulted
    assert params.lattice == "fcc" and params.potential_file == "Ni_u3.eam"
    assert params.pair_lines == ["pair_style eam", "pair_coeff * * Ni_u3.eam"]
    named = {d.parameter for d in defaults}
    assert {"lattice", "potential", "initial lattice constant", "supercell", "minimiser"} <= named
    params, defaults = protocol.parameters(spec("Cu", "fcc", hint="Mishin"))
    assert params.potential_file == "Cu_mishin1.eam.alloy"
    assert "potential" not in {d.parameter for d in defaults}  # the request fixed it
    assert protocol.parameters(spec("Mg", "hcp"))[0].box_relax == "aniso"
    # initial guess for a lattice other than the reference one: from the nearest-neighbour distance
    bcc_cu = protocol.parameters(spec("Cu", "bcc"))[0]
    assert bcc_cu.a_initial == pytest.approx(3.61 / math.sqrt(2) * 2 / math.sqrt(3), abs=1e-3)
    with pytest.raises(RequestError, match="no shipped potential covers U"):
        protocol.parameters(spec("U", "bcc"))
    with pytest.raises(RequestError, match="no shipped sw potential covers Ni"):
        protocol.parameters(spec("Ni", "fcc", family="sw"))
    with pytest.raises(RequestError, match="one-element crystals"):
        protocol.parameters(TaskSpec(request="x", system=SystemSpec(name="SiC", kind="crystal", elements=["Si", "C"])))
    task = spec("Ni", "fcc")
    task.controls = SimulationControls(n_atoms=500)
    reps = protocol.parameters(task)[0].repetitions
    assert 4 * math.prod(reps) >= 500


@pytest.mark.engine
def test_fcc_ni_foiles_u3(tmp_path, run_protocol):
    # Foiles, Baskes, Daw, PRB 33, 7983 (1986), Table: Ni a = 3.52 A, E_coh = 4.45 eV
    run = run_protocol(PROTOCOL, spec("Ni", "fcc", family="eam", hint="Foiles"), tmp_path)
    results, defaults = run.by_quantity, run.defaults
    assert results["lattice_constant"].value == pytest.approx(3.52, abs=0.01)
    assert results["cohesive_energy"].value == pytest.approx(4.45, abs=0.01)
    assert results["lattice_constant"].unit == "angstrom"
    assert results["cohesive_energy"].unit == "eV/atom"
    assert results["cohesive_energy"].uncertainty is None
    assert "box/relax iso" in results["cohesive_energy"].method
    assert results["lattice_constant"].job == "relax"
    assert results["lattice_constant"].log.endswith("log.lammps")
    # "Foiles" matches Ni_u3.eam (1986) and Ni_smf7.eam (1985): the documented default decided
    assert any(d.parameter == "potential" and "Ni_u3.eam" in d.value for d in defaults)


@pytest.mark.engine
def test_fcc_ni_from_a_poor_starting_guess(tmp_path, run_protocol):
    results = {r.quantity: r.value for r in run_protocol(PROTOCOL, spec("Ni", "fcc", hint="u3"), tmp_path,
                                                         a_initial=3.25).results}
    assert results["lattice_constant"] == pytest.approx(3.52, abs=0.001)
    assert results["cohesive_energy"] == pytest.approx(4.45, abs=0.001)


@pytest.mark.engine
def test_diamond_si_stillinger_weber(tmp_path, run_protocol):
    # Stillinger and Weber, PRB 31, 5262 (1985): a = 5.431 A, E_coh = 2 epsilon = 4.3366 eV
    run = run_protocol(PROTOCOL, spec("Si", "diamond", hint="Stillinger–Weber"), tmp_path)
    results = run.by_quantity
    assert results["lattice_constant"].value == pytest.approx(5.431, abs=0.005)
    assert results["cohesive_energy"].value == pytest.approx(4.337, abs=0.005)


@pytest.mark.engine
def test_bcc_fe_mendelev(tmp_path, run_protocol):
    # Fe_mm.eam.fs (Mendelev et al., Phil Mag 83, 3977 (2003)) states a = 2.855324 A (bcc) in its
    # setfl header; E_coh only checked for sanity against experiment (4.28 eV, Kittel)
    run = run_protocol(PROTOCOL, spec("Fe", "bcc", family="eam"), tmp_path)
    results = run.by_quantity
    assert results["lattice_constant"].value == pytest.approx(2.855324, abs=0.001)
    assert results["cohesive_energy"].value == pytest.approx(4.28, rel=0.05)


@pytest.mark.engine
def test_hcp_mg_c_over_a_relaxes(tmp_path, run_protocol):
    # Mg_mm.eam.fs (Sun, Mendelev et al., PRB 73, 024116 (2006)) states a = 3.184215 A (hcp);
    # c/a starts ideal (1.633) and must relax towards the experimental 1.624 (ase reference)
    run = run_protocol(PROTOCOL, spec("Mg", "hcp"), tmp_path)
    results = run.by_quantity
    a = results["lattice_constant"].value
    c_over_a = results["lattice_constant_c"].value / a
    assert a == pytest.approx(3.184215, abs=0.001)
    assert c_over_a == pytest.approx(1.624, rel=0.01)
    assert abs(c_over_a - math.sqrt(8 / 3)) > 1e-3
    assert "aniso" in results["lattice_constant"].method
    assert results["cohesive_energy"].value == pytest.approx(1.51, rel=0.05)  # experiment (Kittel)


@pytest.mark.engine
def test_failed_run_raises_with_the_lammps_error(tmp_path):
    protocol = get_protocol(PROTOCOL)
    task = spec("Ni", "fcc")
    params = protocol.parameters(task)[0]
    broken = params.model_copy(
        update={"pair_lines": ["pair_style eam", "pair_coeff * * Ni_u3.eam", "pair_coeff 2 2 Ni_u3.eam"]}
    )
    run_plan(Plan(jobs=protocol.jobs(broken)), tmp_path)
    with pytest.raises(CalculationFailed, match="ERROR"):
        protocol.analyze(broken, {"relax": tmp_path / "relax"}, task)


@pytest.mark.engine
def test_unrelaxed_box_fails_the_pressure_gate(tmp_path):
    protocol = get_protocol(PROTOCOL)
    task = spec("Ni", "fcc")
    # one CG iteration from a compressed start cannot reach zero pressure
    params = protocol.parameters(task)[0].model_copy(
        update={"a_initial": 3.3, "maxiter": 1, "maxeval": 2, "relax_passes": 1}
    )
    run_plan(Plan(jobs=protocol.jobs(params)), tmp_path)
    with pytest.raises(CalculationFailed, match="box not relaxed"):
        protocol.analyze(params, {"relax": tmp_path / "relax"}, task)
