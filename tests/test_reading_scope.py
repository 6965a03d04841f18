"""Issue 14: requests worded by other people. Every word of method is honoured or refused (never
answered with another method), out-of-scope requests name the missing capability, clarifications
ask only what is missing, and the misreadings seen (0 K, °C next to a water model, a bare
property) are read right. Each rule is tested on the sentence that showed it and on paraphrases
written for this test (none of them is in the understanding benchmark's wording)."""

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from agents.query import query
from simagent.backends.expert import ExpertBackend
from simagent.capabilities import needed
from simagent.errors import RequestError
from simagent.knowledge.route import question_kind
from simagent.models import PotentialSpec, PropertyRequest, SimulationControls, SystemSpec, TaskSpec
from simagent.protocols import all_protocols, protocols_for
from simagent.session import Session
from simagent.state import RunState

backend = ExpertBackend()
BENCHMARK = Path(__file__).resolve().parents[1] / "benchmarks" / "understanding" / "requests.jsonl"


def capabilities(request: str) -> set[str]:
    """Capabilities the reading refuses or routes to their engine (DFT -> qe)."""
    try:
        return needed(backend.task_spec(request))
    except RequestError:  # nothing readable: the user is asked, nothing is answered
        return set()


def names(spec: TaskSpec) -> set[str]:
    return {p.name for p in spec.properties}


def failed_without_a_run(settings, request_text: str, *words: str) -> str:
    """Ask through the graph; the answer must be 'failed', with no job run and the words in its message."""
    with Session(settings) as session:
        answer = session.ask(request_text).answer
    assert answer.status == "failed" and not answer.answers and not answer.jobs
    assert all(w in answer.error for w in words), answer.error
    return answer.error


def query_reading(request: str, reading: TaskSpec):
    """The query agent's command when a backend (e.g. an LLM) returns this reading."""
    llm = SimpleNamespace(name="fake-llm", task_spec=lambda text: reading.model_copy(deep=True))
    runtime = SimpleNamespace(context=SimpleNamespace(backend=llm, report=lambda *a, **k: None))
    return query(RunState(request=request, thread_id="t", root="/tmp/none"), runtime)


# --- refused at the query stage: no job is planned, the message names the capability --------

REFUSED = [
    # (request, capability, words the message quotes); the sentences first
    ("Compute the density of SPC/E water at 300 K and 1 bar and give published values with citations",
     "literature", "published values"),
    # (a screen by gas uptake at stated conditions runs the funnel: tests/test_screening.py)
    ("Screen the IZA zeolite database for the 10 structures with the widest channels.", "screening", "Screen"),
    ("Out of all CoRE MOFs, which frameworks have the largest CO2 Henry coefficient at 298 K? Rank them.",
     "screening", "Rank"),
    ("Lattice constant of silicon with the HSE06 hybrid functional", "dft", "HSE06"),
    ("silicon a0 computed with CP2K", "dft", "CP2K"),
    ("Density of states of fcc copper", "dft", "Density of states"),
    ("Lattice constant of fcc copper with the MACE-MP-0 potential", "ml_potential", "MACE-MP-0"),
    ("cohesive energy of bcc iron with a NequIP model", "ml_potential", "NequIP"),
    ("Lattice constant of diamond carbon with the AIREBO potential", "potential", "AIREBO"),
]


@pytest.mark.parametrize(("request_text", "capability", "words"), REFUSED)
def test_requests_needing_a_missing_capability_end_failed_naming_it(settings, request_text, capability, words):
    failed_without_a_run(settings, request_text, f"'{words}'", "supported", "Nearest thing it can do")
    assert capability in capabilities(request_text)


@pytest.mark.parametrize("request_text", [
    "What does the literature say about CO2 diffusion in ZIF-8? Cite papers.",
    "Are there published values for the density of SPC/E water? Please give citations.",
])
def test_literature_questions_go_to_the_sources(request_text):
    """Issue 12 landed: the query agent sends them to the knowledge node before any reading."""
    assert question_kind(request_text) == "literature" and "literature" in capabilities(request_text)


@pytest.mark.parametrize("request_text", [
    "What is the band gap of bulk silicon from DFT with VASP?",
    "Binding energy of CO2 in Mg-MOF-74 with DFT",
    "Silicon lattice constant from DFT",  # before issue 14: answered with Stillinger-Weber
    "lattice parameter of Si, first-principles (PBE) please",
    "Lattice constant of fcc copper with a machine-learned interatomic potential",
])
def test_dft_and_ml_requests_only_reach_their_engines(request_text):
    """Routed to the DFT / ML engines (issue 11): no classical protocol may answer them."""
    spec = backend.task_spec(request_text)
    assert spec.engine in ("qe", "vasp", "mlp") and spec.unsupported == []
    assert all(p.engine == spec.engine for p in protocols_for(spec))


@pytest.mark.parametrize(("request_text", "words"), [
    ("What is the band gap of bulk silicon from DFT with VASP?", ("VASP is not configured",)),  # + the QE option
    # a 57-atom DFT relaxation is priced and refused, naming the CHGNet protocol (never run silently instead)
    ("Binding energy of CO2 in Mg-MOF-74 with DFT", ("does not fit this machine", "with CHGNet")),
])
def test_dft_requests_no_engine_answers_end_failed_without_a_run(settings, request_text, words):
    failed_without_a_run(settings, request_text, *words)


@pytest.mark.parametrize("request_text", [
    "Lattice constant of fcc copper; compare it with experimental data",
    "Lattice constant of fcc copper with LAMMPS and the Mishin EAM",
    "Self-diffusion coefficient of liquid argon at 90 K and 1.38 g/cm3 in the NVT ensemble",
    "CO2 uptake of IRMOF-1 at 298 K and 1 bar by GCMC with RASPA",
    "For a paper I am writing: density of TIP4P/2005 water at 300 K and 1 bar",
])
def test_honoured_method_words_are_not_refused(request_text):
    assert capabilities(request_text) == set()


def test_any_backend_reading_gets_the_method_check():
    """An LLM reading that dropped the method word is still refused by the query agent."""
    request = "Cohesive energy of fcc nickel from a CASTEP calculation"
    dropped = TaskSpec(request=request, properties=[PropertyRequest(name="cohesive_energy")],
                       system=SystemSpec(name="fcc nickel", kind="crystal", elements=["Ni"], lattice="fcc"))
    command = query_reading(request, dropped)
    assert command.goto == "response"
    assert "'CASTEP'" in command.update["error"] and "Quantum ESPRESSO" in command.update["error"]


def test_an_llm_reading_that_drops_dft_still_goes_to_the_dft_engine():
    request = "Lattice constant of fcc copper from DFT"
    dropped = TaskSpec(request=request, properties=[PropertyRequest(name="lattice_constant")],
                       system=SystemSpec(name="fcc copper", kind="crystal", elements=["Cu"], lattice="fcc"))
    command = query_reading(request, dropped)
    assert command.update["spec"].engine == "qe"


def test_no_benchmark_request_naming_an_unavailable_method_is_read_as_answerable():
    """The invariant over the understanding benchmark: every request that needs a capability
    beyond classical MD/MC is refused or routed to the engine that has it (so the graph never
    answers it with another method); and no other request is refused or routed so."""
    entries = [json.loads(line) for line in BENCHMARK.read_text().splitlines() if line.strip()]
    refused = [e for e in entries if e.get("expect_unsupported")]
    assert len(refused) >= 30
    for entry in refused:
        found = capabilities(entry["request"])
        # the reader stops at an unknown material and asks ('GaAs'; 'graphene', whose band structure
        # the DFT engine computes for the crystals simagent knows): nothing is answered
        if entry["id"] in {"scope-13", "scope-18"}:
            continue
        assert set(entry["expect_unsupported"]) <= found, entry["id"]
    wrongly = [e["id"] for e in entries if not e.get("expect_unsupported") and capabilities(e["request"])]
    assert wrongly == []


# --- honest messages after reading: the protocol that would answer is not there yet ----------


def _answered_by_a_protocol(prop: str) -> bool:
    return any(prop in p.properties for p in all_protocols())


@pytest.mark.parametrize("request_text", [
    "What is the melting temperature of copper with the Mishin EAM potential?",
    "At what temperature does copper melt with Mishin's EAM?",
])
def test_melting_point_is_read_and_never_answered_by_another_property(settings, request_text):
    spec = backend.task_spec(request_text)
    assert names(spec) == {"melting_point"} and spec.system.elements == ["Cu"]
    assert spec.potential.family == "eam" and spec.conditions.temperature is None and spec.missing == []
    if _answered_by_a_protocol("melting_point"):
        pytest.skip("a melting protocol answers it now (its own tests check the number)")
    failed_without_a_run(settings, request_text, "melting_point")


@pytest.mark.parametrize("request_text", [
    "Young's modulus of polyethylene at 300 K",
    "tensile modulus of HDPE at room temperature",
])
def test_named_polymer_is_read_as_a_polymer_not_an_unknown_material(settings, request_text):
    spec = backend.task_spec(request_text)
    assert spec.system.kind == "polymer" and spec.system.elements == []
    assert names(spec) == {"youngs_modulus"} and spec.conditions.temperature is not None
    assert spec.units_style == "real"  # atomistic: the bead-spring protocols must not answer it
    if any(p.applies_to(spec) for p in all_protocols()):
        pytest.skip("a molecular-polymer protocol answers it now")
    failed_without_a_run(settings, request_text, "youngs_modulus")


@pytest.mark.parametrize("request_text", [
    "Compute the radial distribution function of liquid argon at 85 K and 1 atm",
    "g(r) for argon liquid, 1.013 bar, 87 K",
])
def test_liquid_at_a_given_pressure_keeps_the_pressure(request_text):
    spec = backend.task_spec(request_text)
    assert names(spec) == {"rdf"} and spec.system.elements == ["Ar"]
    assert spec.conditions.pressure is not None and spec.conditions.density is None
    assert spec.missing == []  # nothing to ask: the pressure is the state point (NPT)


# --- misreadings: 0 K, °C next to a water model, a bare property ------------------------------

@pytest.mark.parametrize("zero", ["at 0 K", "at 0K", "at zero temperature", "at absolute zero", "at T = 0",
                                  "at zero kelvin", "at 0 Kelvin", "at T=0 K"])
def test_zero_kelvin_in_any_spelling_is_a_condition(zero):
    spec = backend.task_spec(f"Cohesive energy of fcc nickel {zero} with the Foiles EAM")
    assert names(spec) == {"cohesive_energy"} and spec.conditions.temperature is None
    assert spec.missing == [] and spec.system.elements == ["Ni"]


@pytest.mark.parametrize(("request_text", "kelvin"), [
    ("Lattice constant of fcc copper at 300 K, not at 0 K (Mishin EAM)", 300.0),
    ("Mishin EAM copper: the lattice parameter at room temperature rather than at absolute zero", 298.15),
])
def test_a_negated_condition_is_not_read(request_text, kelvin):
    spec = backend.task_spec(request_text)
    assert names(spec) == {"lattice_constant"}
    assert spec.conditions.temperature.value == pytest.approx(kelvin)


@pytest.mark.parametrize(("request_text", "prop", "celsius"), [
    ("RDF of liquid water at 25 °C with the TIP3P model", "rdf", 25.0),
    ("SPC/E water, 40 degrees C: how fast does it diffuse?", "self_diffusion_coefficient", 40.0),
    ("tip4p/2005 density at 10 C and 1 bar", "density", 10.0),
])
def test_celsius_next_to_a_water_model_keeps_the_property(request_text, prop, celsius):
    spec = backend.task_spec(request_text)
    assert names(spec) == {prop} and spec.system.molecule == "water"
    t = spec.conditions.temperature
    assert t.unit == "degC" and t.value == pytest.approx(celsius)


@pytest.mark.parametrize(("request_text", "prop"), [
    ("What is the self-diffusion coefficient at 300 K?", "self_diffusion_coefficient"),
    ("Young's modulus?", "youngs_modulus"),
    ("the viscosity at 1 bar, please", "shear_viscosity"),
])
def test_a_bare_property_asks_only_which_system(request_text, prop):
    spec = backend.task_spec(request_text)
    assert names(spec) == {prop} and spec.missing == ["system"]


@pytest.mark.parametrize("request_text", [
    "Density and self-diffusion coefficient of TIP4P/2005 water at 300 K and 1 bar, no need for the RDF",
    "water (TIP4P/2005) at 300 K and 1 bar: density and diffusion coefficient, but not the g(r)",
])
def test_negated_properties_are_not_computed(request_text):
    assert names(backend.task_spec(request_text)) == {"density", "self_diffusion_coefficient"}


# --- typo repair leaves real words alone -------------------------------------------------------

@pytest.mark.parametrize(("text", "kept"), [
    ("radius of gyration of 20-bead polymer chains", "20-bead"),  # 'bead' is one slip from 'lead'
    ("end-to-end distance of chains of 12 beads", "12 beads"),
    ("density of molten sodium chloride at 1100 K", "sodium chloride"),  # not 'chlorine'
    ("use the potential files that ship with LAMMPS", "potential files"),  # not 'foiles'
    ("isothermal compressibility of liquid argon", "isothermal"),
    ("methane load per unit cell in MFI", "methane load"),  # not 'lead'
])
def test_typo_repair_keeps_ordinary_and_domain_words(text, kept):
    from simagent.backends.expert.wording import correct_typos

    assert kept in correct_typos(text)


def test_typo_repair_still_fixes_slips():
    from simagent.backends.expert.wording import correct_typos

    assert correct_typos("latice constant of nikel") == "lattice constant of nickel"


@pytest.mark.parametrize(("text", "is_melting"), [
    ("radius of gyration of 20-bead chains in a melt at T* = 1", False),  # 'a melt': the noun
    ("end-to-end distance in the melt at rho* = 0.85 and T* = 1.0", False),
    ("at what temperature does copper melt with the Mishin potential?", True),
    ("nickel melts at which temperature with the Foiles EAM?", True),  # the verb
    ("energy components of a Kremer-Grest polymer melt with chains of 10 beads", False),
    ("density of a polyethylene melt at 450 K and 1 atm", False),
    ("bond energy of a bead-spring melt under 2 epsilon/sigma^3 of pressure", False),
    ("at what temperature will aluminium melt under 5 GPa with the Mishin EAM?", True),
    ("at what temperature would silver melt with the Williams EAM?", True),
])
def test_melt_as_a_noun_is_not_a_melting_point(text, is_melting):
    from simagent.backends.expert.reader import read_request

    assert ("melting_point" in [p.name for p in read_request(text).properties]) is is_melting


def test_typo_repair_leaves_file_paths_alone():
    """A path is the user's letter for letter: '/tmp/fnal/tests/fles/x.gro' must not be 'repaired'."""
    from simagent.backends.expert.wording import correct_typos

    text = "density of the water box in /tmp/runs/nikel/lead/conf.gro at 298 K, latice ignored"
    fixed = correct_typos(text)
    assert "/tmp/runs/nikel/lead/conf.gro" in fixed and "lattice ignored" in fixed


# The same invariant through the hybrid's merge: an LLM that proposes another method changes nothing
# the request named. Every value the adversary proposes is one the request does not write.
ADVERSARY = {
    "family": ["meam", "tersoff", "sw"],
    "name_hint": ["Zhou", "Mendelev", "Baskes"],
    "force_field": ["TIP3P", "OPLS-AA", "UFF"],
    "file": ["Zhou04.eam.alloy", "Si.tersoff"],
    "engine": ["raspa", "gromacs", "lammps"],
    "units_style": ["lj", "real", "metal"],
}


class CachedRules:
    """The expert's readings, each made once (the adversary, the hybrid and the test all need them)."""

    name = "expert"

    def __init__(self) -> None:
        self.readings: dict[str, TaskSpec | RequestError] = {}

    def task_spec(self, request: str) -> TaskSpec:
        if request not in self.readings:
            try:
                self.readings[request] = backend.task_spec(request)
            except RequestError as err:
                self.readings[request] = err
        found = self.readings[request]
        if isinstance(found, RequestError):
            raise found
        return found.model_copy(deep=True)


def adversarial_reading(rules: CachedRules, body: dict) -> str:
    """The scripted LLM: the rules' own reading (so the answer passes the code checks and is merged)
    with every method field replaced by one the request does not name."""
    from simagent.backends.spec_checks import named_in_request

    request = body["messages"][-1]["content"]
    try:
        spec = rules.task_spec(request)
    except RequestError:
        spec = TaskSpec(request=request)

    def other(field: str, current: str | None) -> str:
        return next(v for v in ADVERSARY[field] if v != current and not named_in_request(v, request))

    pot = spec.potential.model_copy() if spec.potential else PotentialSpec()
    for field in ("family", "name_hint", "force_field", "file"):
        setattr(pot, field, other(field, getattr(pot, field)))
    data = spec.model_copy(update={
        "potential": pot, "engine": other("engine", spec.engine), "units_style": other("units_style", spec.units_style),
        "controls": spec.controls.model_copy(update={"ensemble": "npt" if spec.controls.ensemble != "npt" else "nve",
                                                     "thermostat": "andersen"}),
        "unsupported": [], "missing": [], "unparsed": [], "confidence": 1.0,
    }).model_dump(mode="json")
    data.pop("request")
    return json.dumps(data)


def test_no_benchmark_request_has_its_named_method_changed_by_the_hybrids_llm():
    """Every request of the understanding benchmark through the hybrid, routed to a scripted LLM that
    proposes another engine, potential family, potential name, force field, file, units style and
    ensemble: the capabilities the request needs, the engine, the potential and the run controls
    the rules read stay as they are; what the rules left empty stays empty (the request does not
    name the adversary's values)."""
    from fake_openai_server import FakeOpenAIServer

    from simagent.backends.hybrid import HybridBackend
    from simagent.config import Settings

    entries = [json.loads(line) for line in BENCHMARK.read_text().splitlines() if line.strip()]
    rules_backend = CachedRules()
    server = FakeOpenAIServer(lambda body: adversarial_reading(rules_backend, body))
    merged = 0
    with server as base_url:
        hybrid = HybridBackend(Settings(backend="hybrid", hybrid_llm="openai", base_url=base_url,
                                        model="fake-model", llm_retries=0), expert=rules_backend)
        hybrid.threshold = 1.01  # route every reading the rules make (refusals are never routed)
        for entry in entries:
            request = entry["request"]
            try:
                rules = rules_backend.task_spec(request)
            except RequestError:
                rules = None
            try:
                spec = hybrid.task_spec(request)
            except RequestError:
                continue  # nothing read: the user is told what to write, nothing is answered
            merged += "LLM filled" in hybrid.last_detail or "added nothing" in hybrid.last_detail
            if rules is None:  # the LLM's reading alone: none of its method words is in the request
                assert spec.potential is None and spec.controls == SimulationControls(), entry["id"]
                continue
            assert needed(spec) == needed(rules), entry["id"]
            assert spec.engine == rules.engine or (rules.system is None and spec.engine == "lammps"), entry["id"]
            assert spec.units_style == rules.units_style or rules.system is None, entry["id"]
            assert spec.controls == rules.controls, entry["id"]
            for field in ("family", "name_hint", "force_field", "file"):
                named = getattr(rules.potential, field, None)
                assert getattr(spec.potential, field, None) == named, (entry["id"], field)
    assert merged >= 300  # the merge really ran on most of the benchmark
