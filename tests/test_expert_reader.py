"""The expert backend reads requests into TaskSpecs (several wordings per request)."""

import pytest
from tests_wordings import ARGON, LJ, NICKEL, SILICON

from simagent.backends.expert import ExpertBackend
from simagent.errors import RequestError

backend = ExpertBackend()


@pytest.mark.parametrize("request_text", NICKEL)
def test_nickel_wordings(request_text):
    spec = backend.task_spec(request_text)
    assert spec.system.kind == "crystal" and spec.system.elements == ["Ni"]
    assert spec.system.lattice in ("fcc", None)
    assert {p.name for p in spec.properties} == {"lattice_constant", "cohesive_energy"}
    assert spec.potential.family == "eam" and spec.potential.name_hint in ("foiles", "u3")
    assert spec.missing == []


@pytest.mark.parametrize("request_text", SILICON)
def test_silicon_wordings(request_text):
    spec = backend.task_spec(request_text)
    assert spec.system.elements == ["Si"] and spec.system.lattice == "diamond"
    assert spec.potential.family == "sw"
    assert {p.name for p in spec.properties} == {"lattice_constant", "cohesive_energy"}


@pytest.mark.parametrize("request_text", LJ)
def test_lj_fluid_wordings(request_text):
    spec = backend.task_spec(request_text)
    assert spec.system.kind == "lj_fluid" and spec.units_style == "lj"
    assert spec.conditions.temperature.value == 0.85 and spec.conditions.temperature.unit == "reduced"
    assert spec.conditions.density.value == 0.86 and spec.conditions.density.unit == "reduced"
    assert spec.potential.cutoff.value == 3 and spec.potential.cutoff.unit == "sigma"
    assert spec.potential.tail_correction is True
    assert {p.name for p in spec.properties} == {"potential_energy_per_atom", "pressure"}


@pytest.mark.parametrize("request_text", ARGON)
def test_argon_wordings(request_text):
    spec = backend.task_spec(request_text)
    assert spec.system.kind == "atomic_fluid" and spec.system.elements == ["Ar"]
    assert [p.name for p in spec.properties] == ["self_diffusion_coefficient"]
    assert (spec.conditions.temperature.value, spec.conditions.temperature.unit) == (94.4, "K")
    assert (spec.conditions.density.value, spec.conditions.density.unit) == (1.374, "g/cm^3")
    assert spec.potential.lj_epsilon.value == 120 and spec.potential.lj_epsilon.unit == "K"
    assert spec.potential.lj_sigma.value == 3.4 and spec.potential.lj_sigma.unit == "angstrom"


@pytest.mark.parametrize("request_text", ["What is the density?", "Compute the pressure.",
                                          "Which lattice constant?"])
def test_underspecified_requests_ask(request_text):
    spec = backend.task_spec(request_text)
    assert "system" in spec.missing


def test_fluid_without_temperature_asks_for_it():
    spec = backend.task_spec("Self-diffusion coefficient of liquid argon at 1.374 g/cm3")
    assert spec.missing == ["temperature"]


def test_last_step_is_recognised():
    spec = backend.task_spec("Pressure of a Lennard-Jones fluid at T* = 1.0 and rho* = 0.8 at the last step")
    assert spec.properties[0].name == "pressure" and spec.properties[0].at == "last_step"


@pytest.mark.parametrize("request_text, density", [
    ("Pressure of the LJ fluid at T*=0.85 and density 0.86", 0.86),
    ("Potential energy of the Kob-Andersen 80:20 LJ mixture, T* = 2.0, density of 1.2", 1.2),
])
def test_density_without_unit_is_reduced_when_the_temperature_is(request_text, density):
    spec = backend.task_spec(request_text)
    assert (spec.conditions.density.value, spec.conditions.density.unit) == (density, "reduced")
    assert "density" not in spec.missing


def test_celsius_is_kept_for_conversion_in_code():
    spec = backend.task_spec("Self-diffusion coefficient of liquid argon at -180 °C and 1.374 g/cm3")
    assert (spec.conditions.temperature.value, spec.conditions.temperature.unit) == (-180, "degC")


@pytest.mark.parametrize("request_text, fragment", [
    ("", "empty"),
    ("   ", "empty"),
    ("asdf qwerty zxcv", "could not find"),
    ("Lattice constant of unobtainium", "unknown material 'unobtainium'"),
    ("Self-diffusion coefficient of liquid argon at -5 K and 1.374 g/cm3", "absolute zero"),
    ("Self-diffusion coefficient of liquid argon at -300 °C and 1.374 g/cm3", "absolute zero"),
    ("Pressure of a Lennard-Jones fluid at T* = 0.85 and rho* = -0.1", "density"),
])
def test_bad_requests_raise_clear_errors(request_text, fragment):
    with pytest.raises(RequestError, match=fragment):
        backend.task_spec(request_text)


def test_probe_stated_for_one_pore_property_applies_to_it_only():
    """MDGym-style: the surface area with an N2 probe and the void fraction with a point probe."""
    from simagent.protocols import protocols_for

    spec = backend.task_spec("Compute the gravimetric accessible surface area (in m2/g, probe radius 1.655 angstrom) "
                             "and the geometric void fraction (point probe, radius 0) of IRMOF-1 with Zeo++.")
    probes = {p.name: p.probe_radius for p in spec.properties}
    assert probes["accessible_surface_area"].value == 1.655 and probes["void_fraction"].value == 0.0
    params, _ = protocols_for(spec)[0].parameters(spec)
    assert (params.sa_probe_radius, params.vol_probe_radius) == (1.655, 0.0)
    plain = backend.task_spec("Void fraction of IRMOF-1 with a 1.2 A probe")
    assert plain.properties[0].probe_radius is None and plain.conditions.probe_radius.value == 1.2


def test_mc_cycles_of_an_adsorption_request():
    spec = backend.task_spec("CO2 uptake of IRMOF-1 at 298 K and 1 bar by GCMC, 1,000 initialization cycles and "
                             "4000 production cycles")
    assert (spec.controls.equilibration_steps, spec.controls.production_steps) == (1000, 4000)
