"""Issue 14: the hybrid's LLM never makes a silent choice. Whatever its reading says that the request
does not state (a property no word of the request names, a potential, force field or water model the
user never named, numbers not written, run controls) is dropped before the merge, so the field is
asked or left to the protocol's documented default, which the answer reports (defaults_applied).
LLM replies come from the scripted localhost server (tests/fake_openai_server.py). "simulate water
please" is the benchmark sentence that showed it; the other requests are paraphrases written here."""

from __future__ import annotations

import json

import pytest
from fake_openai_server import FakeOpenAIServer

from simagent.backends.hybrid import HybridBackend
from simagent.config import Settings
from simagent.models import PotentialSpec, PropertyRequest, Quantity, SystemSpec, TaskSpec
from simagent.protocols import protocols_for


def reply(request: str, **fields) -> str:
    spec = TaskSpec(request=request, **fields).model_dump(mode="json")
    spec.pop("request")
    return json.dumps(spec)


def read(request: str, answer: str, threshold: float | None = None) -> tuple[TaskSpec, HybridBackend]:
    """The hybrid's reading of `request` when its LLM answers `answer` (threshold > 1 routes every request)."""
    server = FakeOpenAIServer([answer])
    with server as base_url:
        backend = HybridBackend(Settings(backend="hybrid", hybrid_llm="openai", base_url=base_url,
                                         model="fake-model", llm_retries=0))
        backend.threshold = threshold or backend.threshold
        spec = backend.task_spec(request)
    assert len(server.requests) == 1, "the request must reach the LLM for this test to mean anything"
    return spec, backend


def names(spec: TaskSpec) -> set[str]:
    return {p.name for p in spec.properties}


WATER = SystemSpec(name="water", kind="molecular_fluid", molecule="water")


@pytest.mark.parametrize("request_text", [
    "simulate water please",  # the benchmark sentence (dev split)
    "water, please simulate it",
    "run some MD of liquid water for me",
])
def test_a_property_the_request_does_not_name_is_asked_not_invented(request_text):
    invented = reply(request_text, system=WATER, properties=[
        PropertyRequest(name="potential_energy_per_atom"), PropertyRequest(name="temperature")],
        potential=PotentialSpec(force_field="SPC/E"))
    spec, backend = read(request_text, invented)
    assert spec.properties == [] and "property" in spec.missing  # the graph asks which property
    assert spec.potential is None or spec.potential.force_field is None  # SPC/E was never named
    assert "dropped as unstated" in backend.last_detail and "SPC/E" in backend.last_detail


@pytest.mark.parametrize(("request_text", "invented"), [
    ("Simulate fcc copper.", PotentialSpec(name_hint="Mendelev")),
    ("Run a simulation of bcc tungsten", PotentialSpec(name_hint="Zhou", family="eam")),
    ("Tell me something about diamond silicon", PotentialSpec(name_hint="Tersoff", family="tersoff")),
    ("nickel, fcc: what can you compute?", PotentialSpec(name_hint="Nickel")),  # a material is no potential
    ("Simulate fcc copper.", PotentialSpec(name_hint="Lennard-Jones", lj_epsilon=Quantity(value=0.4, unit="eV"))),
])
def test_a_potential_the_user_never_named_is_not_chosen_by_the_llm(request_text, invented):
    system = SystemSpec(name="crystal", kind="crystal", elements=[], lattice=None)
    expert_reading = HybridBackend(Settings(backend="hybrid")).expert.task_spec(request_text)
    system = expert_reading.system or system
    spec, backend = read(request_text, reply(request_text, system=system, potential=invented,
                                             properties=[PropertyRequest(name="cohesive_energy")]))
    assert spec.potential is None or (spec.potential.name_hint is None and spec.potential.family is None
                                      and spec.potential.lj_epsilon is None)
    assert spec.properties == [] and "property" in spec.missing


def test_an_unnamed_water_model_is_left_to_the_protocol_default_which_the_answer_reports():
    request = "I'd like the density of liquid water at 310 K and 1 bar"  # routed on purpose (threshold)
    spec, backend = read(request, reply(request, system=WATER, properties=[PropertyRequest(name="density")],
                                        potential=PotentialSpec(force_field="TIP3P")), threshold=1.01)
    assert spec.potential is None or spec.potential.force_field is None
    assert names(spec) == {"density"} and spec.engine == "gromacs"
    (protocol,) = [p for p in protocols_for(spec) if p.name == "gromacs/liquid_md"]
    _, defaults = protocol.parameters(spec)
    (water_model,) = [d for d in defaults if d.parameter == "force_field"]
    assert water_model.value.startswith("TIP4P/2005")  # the documented default, reported, never TIP3P


@pytest.mark.parametrize("request_text", [
    "density of liquid water at 310 K with the TIP4P/2005 model",
    "density of liquid water at 310 K, tip4p 2005 please",
])
def test_a_water_model_the_request_writes_is_kept(request_text):
    spec, _ = read(request_text, reply(request_text, system=WATER, properties=[PropertyRequest(name="density")],
                                       potential=PotentialSpec(force_field="TIP4P/2005")), threshold=1.01)
    assert spec.potential is not None and spec.potential.force_field == "TIP4P/2005"


@pytest.mark.parametrize(("request_text", "words"), [
    ("lattice constant of Cu3Au with an EAM potential", "lattice constant"),
    ("latice constnat of Cu3Au, EAM", "lattice constant"),  # the reader's typo repair finds the words
    ("Cu3Au: lattice parameter? embedded-atom potential please", "lattice parameter"),
])
def test_a_property_the_request_names_is_taken_from_the_llm_with_its_words(request_text, words):
    """The expert cannot read Cu3Au (it knows elements); the LLM's reading is used, quoted."""
    answer = reply(request_text, system=SystemSpec(name="Cu3Au", kind="crystal", elements=["Cu", "Au"]),
                   properties=[PropertyRequest(name="lattice_constant")], potential=PotentialSpec(family="eam"))
    spec, backend = read(request_text, answer)
    assert names(spec) == {"lattice_constant"} and spec.system.elements == ["Cu", "Au"]
    assert spec.potential.family == "eam" and spec.units_style == "metal"
    if "filled system" not in backend.last_detail:  # the LLM gave the property (not only the system): quoted
        assert f"lattice_constant “{words}”" in backend.last_detail


@pytest.mark.parametrize("request_text", [
    "nearest-neighbour repeat distance of fcc copper with the Mishin EAM",  # a/sqrt(2), not a
    "what is the spacing between neighbouring copper atoms (fcc, Mishin EAM)?",
])
def test_a_property_guessed_from_words_that_name_another_quantity_is_asked(request_text):
    answer = reply(request_text, properties=[PropertyRequest(name="lattice_constant")],
                   system=SystemSpec(name="fcc copper", kind="crystal", elements=["Cu"], lattice="fcc"))
    spec, _ = read(request_text, answer, threshold=1.01)
    assert spec.properties == [] and spec.missing == ["property"]
    assert spec.potential.name_hint == "mishin"  # the expert's finding stays


@pytest.mark.parametrize("request_text", [
    "diffusion of liquid argon at 90 K and 1.4 g/cm3, but not the RDF",
    "self-diffusion of liquid argon at 90 K, 1.4 g/cc (no need for the radial distribution function)",
])
def test_a_property_the_request_negates_is_dropped(request_text):
    answer = reply(request_text, system=SystemSpec(name="liquid argon", kind="atomic_fluid", elements=["Ar"]),
                   properties=[PropertyRequest(name="self_diffusion_coefficient"), PropertyRequest(name="rdf")])
    spec, _ = read(request_text, answer, threshold=1.01)
    assert names(spec) == {"self_diffusion_coefficient"}


def test_run_controls_come_only_from_the_rules():
    request = "lattice constant of Cu3Au with an EAM potential"
    answer = reply(request, system=SystemSpec(name="Cu3Au", kind="crystal", elements=["Cu", "Au"]),
                   properties=[PropertyRequest(name="lattice_constant")], potential=PotentialSpec(family="eam"),
                   controls={"ensemble": "npt", "n_atoms": 4000}, engine="gromacs", units_style="real")
    spec, _ = read(request, answer)
    assert spec.controls.ensemble is None and spec.controls.n_atoms is None
    assert spec.engine == "lammps" and spec.units_style == "metal"  # the request named neither GROMACS nor real


def test_what_the_local_model_stated_unasked_is_reported_in_the_route():
    """The local (llama.cpp) backend's reading format: a water model the request never names is dropped
    there, and the hybrid's route says so."""
    from simagent.backends.local import LocalBackend

    request = "how dense is liquid water at 310 K?"
    answer = json.dumps({"properties": ["density"], "material": "water", "elements": [], "kind": "molecular_fluid",
                         "lattice": None, "temperature": {"value": 310, "unit": "K"}, "pressure": None,
                         "density": None, "potential": None, "potential_name": "SPC/E", "guests": [],
                         "last_step": False})
    server = FakeOpenAIServer([answer])
    with server as base_url:
        llm = LocalBackend(Settings(backend="local", local_url=base_url, model_name="qwen2.5-coder-0.5b"))
        backend = HybridBackend(Settings(backend="hybrid"), llm=llm)
        backend.threshold = 1.01
        spec = backend.task_spec(request)
    assert spec.potential is None or spec.potential.force_field is None
    assert "SPC/E" in backend.last_detail and "not in the request" in backend.last_detail


@pytest.mark.parametrize(("request_text", "reused"), [
    ("Pressure? LJ fluid at T* 1.5 and rho* 0.7", Quantity(value=0.7, unit="reduced")),
    ("what pressure does a Lennard-Jones fluid have at T*=1.2, density 0.85 (reduced)", Quantity(value=1.2,
                                                                                                unit="reduced")),
])
def test_a_number_the_rules_read_as_one_condition_is_not_reused_for_another(request_text, reused):
    """Seen on the frozen test split (the 1.5B model gave rho*'s number as the pressure): each written
    number states one condition, so the LLM cannot make an unstated pressure from the density's number."""
    rules = HybridBackend(Settings(backend="hybrid")).expert.task_spec(request_text)
    assert rules.conditions.pressure is None
    answer = reply(request_text, system=rules.system, conditions={
        "temperature": rules.conditions.temperature, "density": rules.conditions.density, "pressure": reused})
    spec, _ = read(request_text, answer, threshold=1.01)
    assert spec.conditions.pressure is None
    assert spec.conditions.temperature == rules.conditions.temperature and spec.conditions.density is not None
