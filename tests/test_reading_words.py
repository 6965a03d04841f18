"""Reader misses seen in requests worded by other people (issue 14), each rule tested on paraphrases
written for this file (none is a sentence of the understanding benchmark):

- 'Tm' is a melting temperature, not thulium, unless a lattice or phase word makes it the element;
- a noble gas named without a phase ('specific heat of argon') is the fluid, unless the stated
  temperature is below its triple point;
- an amount adsorbed asked with a verb ('how much propane does silicalite-1 adsorb') is the uptake;
- 'in kg/m3' after the conditions is the unit of the one property of that dimension; 'in °C', 'in degrees
  Celsius', 'in Fahrenheit' is the unit of a melting point or glass transition, and the answer is converted
  (the value shifts, the uncertainty only scales); a start temperature in °C is converted for the run;
- ethanol by SMILES ('CCO') is ethanol; other heteroatom SMILES get the molecular refusal, not the
  generic unknown-material message;
- an engine named for a system it has no route for ('hexane with GROMACS', 'ethanol with LAMMPS')
  ends failed, naming the engine that has a route; that engine is never run in its place.
"""

from __future__ import annotations

import pytest

from agents.planner import plan_runs
from simagent.backends.expert import ExpertBackend
from simagent.errors import RequestError, SimagentError
from simagent.session import Session

backend = ExpertBackend()


def names(spec) -> list[str]:
    return sorted(p.name for p in spec.properties)


# ------------------------------------------------------------------------------------------------
# 'Tm'
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("request_text, element", [
    ("What is the Tm of aluminium with an EAM potential?", "Al"),
    ("Tm for Ni (Foiles EAM)?", "Ni"),
    ("estimate Tm, copper, Mishin EAM, coexistence method", "Cu"),
    ("gold: Tm please", "Au"),
])  # fmt: skip
def test_tm_is_a_melting_temperature_not_thulium(request_text, element):
    spec = backend.task_spec(request_text)
    assert spec.system.elements == [element]
    assert names(spec) == ["melting_point"]


@pytest.mark.parametrize("request_text, props", [
    ("lattice constant of hcp Tm", ["lattice_constant"]),
    ("cohesive energy of the Tm crystal", ["cohesive_energy"]),
    ("melting point of thulium", ["melting_point"]),
])  # fmt: skip
def test_thulium_is_still_read_where_the_words_say_element(request_text, props):
    spec = backend.task_spec(request_text)
    assert spec.system.elements == ["Tm"] and names(spec) == props


# ------------------------------------------------------------------------------------------------
# noble gases without a phase word
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("request_text, element", [
    ("specific heat of argon at 100 K and 1.2 g/cc", "Ar"),
    ("Cv of krypton, 130 K, 2.0 g/cm3", "Kr"),
    ("what's the heat capacity of xenon at 200 K and 2.5 g/cc", "Xe"),
    ("self-diffusion of neon at 30 K and 1.1 g/cm3", "Ne"),
])  # fmt: skip
def test_a_noble_gas_above_its_triple_point_is_a_fluid(request_text, element):
    spec = backend.task_spec(request_text)
    assert spec.system.kind == "atomic_fluid" and spec.system.elements == [element]


def test_a_noble_gas_below_its_triple_point_or_with_a_lattice_word_is_a_crystal():
    # argon's triple point is 83.8058 K (ITS-90 fixed point)
    assert backend.task_spec("heat capacity of argon at 40 K").system.kind == "crystal"
    assert backend.task_spec("lattice constant of fcc argon with LJ").system.kind == "crystal"
    assert backend.task_spec("Ar cohesive energy (Lennard-Jones)").system.kind == "crystal"


def test_a_noble_gas_without_a_temperature_is_the_fluid_and_asks_what_is_missing():
    spec = backend.task_spec("specific heat of argon")
    assert spec.system.kind == "atomic_fluid" and spec.missing  # a state point is asked for, not a crystal run


# ------------------------------------------------------------------------------------------------
# amount adsorbed without the word 'uptake'
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("request_text, guest", [
    ("How much CO2 will ZIF-8 adsorb at 1 bar and 298 K?", "CO2"),
    ("What amount of methane gets adsorbed by IRMOF-1 at 35 bar, 298 K", "CH4"),
    ("Amount of ethane that MFI adsorbs at 300 K and 0.5 bar", "ethane"),
    ("how many propane molecules per unit cell does silicalite-1 adsorb at 1 bar, 300 K", "propane"),
    ("adsorption of propane in silicalite-1 at 300 K and 1 bar", "propane"),
    ("how many mol/kg of n-butane does silicalite adsorb at 300 K and 0.1 bar", "n-butane"),
    ("how much methane does MFI take up at 300 K and 10 bar?", "CH4"),
])  # fmt: skip
def test_an_amount_adsorbed_is_the_uptake(request_text, guest):
    spec = backend.task_spec(request_text)
    assert spec.system.kind == "framework" and spec.system.structure and spec.system.guests == [guest]
    assert names(spec) == ["uptake"] and spec.engine == "raspa" and spec.missing == []


def test_an_unknown_adsorbent_is_named_not_guessed():
    with pytest.raises(RequestError, match="unknown framework 'blorfium'"):
        backend.task_spec("How much CO2 does blorfium adsorb at 1 bar and 298 K?")


# ------------------------------------------------------------------------------------------------
# the unit of the answer, asked after the conditions
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("request_text, prop, unit", [
    ("density of n-hexane at 298 K and 1 atm in kg/m3", "density", "kg/m^3"),
    ("How dense is liquid n-heptane at 25 °C and 1 atm? Answer in kg/m^3 please", "density", "kg/m^3"),
    ("water density at 300 K, 1 bar, reported in kg/m3", "density", "kg/m^3"),
    ("self diffusion coefficient of liquid argon at 90 K and 1.38 g/cc in m2/s", "self_diffusion_coefficient",
     "m^2/s"),
    ("cohesive energy of fcc Ni, Foiles EAM, in kJ/mol", "cohesive_energy", "kJ/mol"),
])  # fmt: skip
def test_a_unit_after_the_conditions_is_the_answer_unit(request_text, prop, unit):
    spec = backend.task_spec(request_text)
    (asked,) = [p for p in spec.properties if p.name == prop]
    assert asked.unit == unit


def test_a_unit_two_properties_could_take_is_left_alone():
    spec = backend.task_spec("pressure and bulk modulus of fcc Cu (Mishin EAM) at 300 K in GPa")
    assert {p.name: p.unit for p in spec.properties} == {"pressure": None, "bulk_modulus": None}
    spec = backend.task_spec("bulk modulus and density of fcc copper with Mishin EAM at 300 K, in GPa")
    assert {p.name: p.unit for p in spec.properties} == {"bulk_modulus": "GPa", "density": None}


# ------------------------------------------------------------------------------------------------
# SMILES with heteroatoms
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("request_text", [
    "density of CCO at 298 K and 1 atm",
    "OCC liquid density, 300 K, 1 bar",
    "How dense is C(O)C at room temperature and 1 atm?",
])  # fmt: skip
def test_ethanol_by_smiles_is_ethanol(request_text):
    spec = backend.task_spec(request_text)
    assert spec.system.molecule == "ethanol" and spec.engine == "gromacs"


@pytest.mark.parametrize("request_text, token", [
    ("density of CCCO at 298 K", "CCCO"),
    ("what is the density of CCN at 280 K", "CCN"),
    ("CCOCC density at 298 K and 1 atm", "CCOCC"),
])  # fmt: skip
def test_other_heteroatom_smiles_get_the_molecular_refusal(request_text, token):
    with pytest.raises(RequestError) as err:
        backend.task_spec(request_text)
    message = str(err.value)
    assert f"'{token}'" in message and "heteroatoms" in message and "does not substitute" in message
    assert "unknown material" not in message


def test_upper_case_words_are_no_smiles():
    spec = backend.task_spec("density of liquid argon in NVT at 90 K and 1.38 g/cc")
    assert spec.system.elements == ["Ar"]


# ------------------------------------------------------------------------------------------------
# an engine named where it has no route
# ------------------------------------------------------------------------------------------------


class _Context:
    backend = backend


@pytest.mark.parametrize("request_text, named, other, protocol", [
    ("density of hexane at 298 K and 1 atm with GROMACS", "GROMACS", "LAMMPS", "lammps/trappe_alkane"),
    ("Run n-octane in gmx: density at 300 K, 1 bar", "GROMACS", "LAMMPS", "lammps/trappe_alkane"),
    ("density of ethanol at 298 K and 1 atm with LAMMPS", "LAMMPS", "GROMACS", "gromacs/liquid_md"),
    ("SPC/E water density at 300 K and 1 bar, run it in LAMMPS", "LAMMPS", "GROMACS", "gromacs/liquid_md"),
])  # fmt: skip
def test_an_engine_without_a_route_is_refused_naming_the_route_that_exists(request_text, named, other, protocol):
    spec = backend.task_spec(request_text)
    with pytest.raises(SimagentError) as err:
        plan_runs(spec, _Context())
    message = str(err.value)
    assert f"no {named} route" in message and f"with {other} ({protocol})" in message
    assert f"does not run another engine in place of {named}" in message


def test_hexane_with_gromacs_ends_failed_without_running_lammps(settings):
    with Session(settings) as session:
        answer = session.ask("What's the density of n-hexane at 25 C and 1 atm using GROMACS?").answer
    assert answer.status == "failed" and not answer.answers and not answer.jobs
    assert "no GROMACS route" in answer.error and "lammps/trappe_alkane" in answer.error


# a temperature unit for the answer of a melting point / glass transition
@pytest.mark.parametrize(("request_text", "prop", "unit"), [
    ("Melting point of copper in °C (Mishin EAM)", "melting_point", "degC"),
    ("melting point of Cu with the Mishin EAM, report it in degrees Celsius", "melting_point", "degC"),
    ("At what temperature does aluminium melt? Mishin potential; give it in Fahrenheit please", "melting_point",
     "degF"),
    ("Tm of nickel with the Foiles EAM, in kelvin", "melting_point", "K"),
    ("glass transition temperature of a bead-spring polymer melt, expressed in deg C", "glass_transition_temperature",
     "degC"),
])
def test_a_temperature_unit_asked_for_the_answer_is_its_unit(request_text, prop, unit):
    spec = backend.task_spec(request_text)
    (got,) = [p for p in spec.properties if p.name == prop]
    assert got.unit == unit and spec.conditions.temperature is None


def test_a_bare_c_is_carbon_not_celsius():
    spec = backend.task_spec("melting point of diamond carbon in C, Tersoff potential")
    assert [p.unit for p in spec.properties] == [None]


@pytest.mark.parametrize(("unit", "value", "uncertainty"), [
    ("degC", 1354.2 - 273.15, 12.0),  # a shift
    ("degF", (1354.2 - 273.15) * 9 / 5 + 32, 12.0 * 9 / 5),  # a shift and a scale
    ("K", 1354.2, 12.0),
])
def test_a_melting_point_is_answered_in_the_unit_asked(unit, value, uncertainty):
    from agents.analysis import to_requested_units
    from simagent.models import Result

    spec = backend.task_spec(f"melting point of copper with the Mishin EAM in {unit.replace('deg', '°')}")
    measured = Result(quantity="melting_point", property="melting_point", value=1354.2, unit="K", uncertainty=12.0,
                      job="md", method="coexistence")
    answered = to_requested_units(measured, spec)
    assert answered.unit == unit
    assert answered.value == pytest.approx(value) and answered.uncertainty == pytest.approx(uncertainty)


@pytest.mark.parametrize("request_text", [
    "melting temperature of copper, Mishin EAM, start the search at 1050 °C",
    "Tm of Cu (Mishin EAM)? begin both phases at 1050 degrees C",
])
def test_a_start_temperature_in_celsius_is_converted_for_the_run(request_text):
    from simagent.protocols import get_protocol

    spec = backend.task_spec(request_text)
    params, defaults = get_protocol("lammps/melting_point").parameters(spec)
    assert params.guess_temperature == pytest.approx(1323.15)
    assert any(d.parameter == "start temperature" and d.value.startswith("1323.15") for d in defaults)


@pytest.mark.parametrize(("request_text", "kind", "element", "prop"), [
    # stop 20 paraphrases of the two reader misses fixed at stop 19 (they still hold)
    ("Cp of krypton at 130 K and 2.4 g/cc", "atomic_fluid", "Kr", "heat_capacity"),
    ("specific heat capacity of neon at 30 K, 1.2 g/cm3", "atomic_fluid", "Ne", "heat_capacity"),
    ("argon specific heat, 100 K, 1 atm", "atomic_fluid", "Ar", "heat_capacity"),
    ("Tm, platinum, Foiles EAM, please", "crystal", "Pt", "melting_point"),
    ("melting point (Tm) of aluminum using the Mishin potential", "crystal", "Al", "melting_point"),
])
def test_specific_heat_of_a_noble_gas_and_tm_paraphrases(request_text, kind, element, prop):
    spec = backend.task_spec(request_text)
    assert (spec.system.kind, spec.system.elements, names(spec)) == (kind, [element], [prop])
