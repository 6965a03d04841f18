"""Hybrid routing, the local backend's plumbing and the model store, without a real model:
LLM replies come from the scripted OpenAI-compatible server (tests/fake_openai_server.py)."""

from __future__ import annotations

import hashlib
import json
import socket
import time
import types

import pytest
from fake_openai_server import FakeOpenAIServer, Reply

from simagent.backends import get_backend, model_store
from simagent.backends.hybrid import HybridBackend, merge_specs
from simagent.backends.local import LlamaServer, LocalBackend, RequestReading, reading_to_spec
from simagent.backends.model_store import ModelSource, check_gguf, ensure_model
from simagent.backends.openai_backend import OpenAIBackend
from simagent.backends.spec_checks import required_gaps, validate_spec
from simagent.config import Settings, load_settings
from simagent.errors import BackendError, RequestError
from simagent.models import Conditions, PropertyRequest, Quantity, SystemSpec, TaskSpec

CONFIDENT = "Cohesive energy and lattice constant of fcc nickel with the Foiles (u3) EAM potential"
# the rules read the copper and the potential but not the property (two slips in 'lattis'): the LLM does
PARAPHRASE = "What is the lattis konstant of fcc copper with the Mishin EAM?"
TYPO = "lattis konstant of fcc nikl with the foiles eam potential"  # beyond the rules' typo repair


def reading(**fields) -> str:
    base = {"properties": [], "material": None, "elements": [], "kind": None, "lattice": None,
            "temperature": None, "pressure": None, "density": None, "potential": None,
            "potential_name": None, "guests": [], "last_step": False}
    base.update(fields)
    return json.dumps(base)


def full_spec(request: str, **fields) -> str:
    """A complete TaskSpec reply as the openai backend expects (strict schema: every field)."""
    spec = TaskSpec(request=request, **fields).model_dump(mode="json")
    spec.pop("request")
    return json.dumps(spec)


def openai_hybrid(base_url: str, **settings) -> HybridBackend:
    config = Settings(backend="hybrid", hybrid_llm="openai", base_url=base_url, model="fake-model",
                      llm_retries=0, **settings)
    return HybridBackend(config)


def refusing_factory():
    raise AssertionError("the LLM must not be started for this request")


# ---------------------------------------------------------------------------------------------
# Routing
# ---------------------------------------------------------------------------------------------


def test_confident_expert_answers_without_starting_the_llm():
    backend = HybridBackend(Settings(backend="hybrid"), llm_factory=refusing_factory)
    spec = backend.task_spec(CONFIDENT)
    assert {p.name for p in spec.properties} == {"cohesive_energy", "lattice_constant"}
    assert backend.name == "hybrid(expert)" and backend.last_decider == "expert"
    assert backend.routes[-1].expert_confidence == pytest.approx(1.0)


def test_confident_expert_makes_no_llm_call():
    server = FakeOpenAIServer([])
    with server as base_url:
        backend = openai_hybrid(base_url)
        backend.task_spec(CONFIDENT)
    assert server.requests == []


def test_low_confidence_goes_to_the_llm_and_its_valid_answer_is_used():
    answer = full_spec(PARAPHRASE, properties=[PropertyRequest(name="lattice_constant")],
                       system=SystemSpec(name="fcc copper", kind="crystal", elements=["Cu"], lattice="fcc"))
    server = FakeOpenAIServer([answer])
    with server as base_url:
        backend = openai_hybrid(base_url)
        spec = backend.task_spec(PARAPHRASE)
    assert len(server.requests) == 1
    assert [p.name for p in spec.properties] == ["lattice_constant"]
    assert spec.system is not None and spec.system.elements == ["Cu"]
    assert spec.potential is not None and spec.potential.name_hint == "mishin"  # the expert's finding stays
    assert spec.missing == [] and spec.confidence == 1.0
    assert backend.name == "hybrid(openai)"
    assert "properties" in backend.last_detail


WITH_NUMBERS = "What is the lattis konstant of fcc copper at 300 K and 2 kbar (Mishin EAM)?"


@pytest.mark.parametrize("bad", [
    {"conditions": Conditions(temperature=Quantity(value=2, unit="kbar"))},  # wrong dimension
    {"conditions": Conditions(pressure=Quantity(value=300, unit="K"))},
    {"system": SystemSpec(name="copper", kind="crystal", elements=["Xx"])},  # not an element
    {"system": SystemSpec(name="copper", kind="lj_fluid", elements=["Cu"])},  # inconsistent kind
])
def test_invalid_llm_answer_falls_back_to_the_expert(bad):
    fields = {"properties": [PropertyRequest(name="lattice_constant")], **bad}
    server = FakeOpenAIServer([full_spec(WITH_NUMBERS, **fields)])
    with server as base_url:
        backend = openai_hybrid(base_url)
        spec = backend.task_spec(WITH_NUMBERS)
    assert spec.conditions.temperature == Quantity(value=300, unit="K")
    assert spec.properties == [] and spec.missing == ["property"]  # the expert's reading: ask the user
    assert backend.name == "hybrid(expert)"
    assert "rejected" in backend.last_detail
    assert backend.routes[-1].llm_problem


def test_details_the_request_does_not_state_are_dropped_from_the_llm_reading():
    fields = {"properties": [PropertyRequest(name="lattice_constant", at="last_step")],
              "system": SystemSpec(name="copper", kind="crystal", elements=["Cu"], lattice="bcc"),
              "conditions": Conditions(temperature=Quantity(value=25, unit="degC"),
                                       density=Quantity(value=1.0, unit="g/cm^3"))}
    server = FakeOpenAIServer([full_spec(PARAPHRASE, **fields)])
    with server as base_url:
        backend = openai_hybrid(base_url)
        spec = backend.task_spec(PARAPHRASE)
    assert [(p.name, p.at) for p in spec.properties] == [("lattice_constant", "average")]
    assert spec.conditions.temperature is None and spec.conditions.density is None
    assert spec.system.lattice == "fcc"  # the expert's system; the LLM's invented bcc was dropped anyway
    assert backend.name == "hybrid(openai)"


def test_llm_endpoint_failure_falls_back_to_the_expert():
    server = FakeOpenAIServer([Reply("boom", status=500), Reply("boom", status=500)])
    with server as base_url:
        backend = openai_hybrid(base_url)
        spec = backend.task_spec(PARAPHRASE)
    assert spec.missing == ["property"] and backend.last_decider == "expert"


def test_unreadable_request_uses_the_local_llm_reading():
    answer = reading(properties=["lattice_constant"], material="fcc nikl", elements=["Ni"], kind="crystal",
                     lattice="fcc", potential="eam", potential_name="foiles")
    server = FakeOpenAIServer([answer])
    with server as base_url:
        llm = LocalBackend(Settings(backend="local", local_url=base_url, model_name="qwen2.5-coder-0.5b"))
        backend = HybridBackend(Settings(backend="hybrid"), llm=llm)
        spec = backend.task_spec(TYPO)
    assert spec.system is not None and spec.system.elements == ["Ni"] and spec.system.kind == "crystal"
    assert [p.name for p in spec.properties] == ["lattice_constant"]
    assert spec.potential is not None and spec.potential.family == "eam"
    assert spec.units_style == "metal" and spec.engine == "lammps" and spec.missing == []
    assert backend.name == "hybrid(local)"
    body = server.requests[0]
    assert body["response_format"]["json_schema"]["name"] == "RequestReading"
    assert body["temperature"] == 0 and body["max_tokens"] <= 256


def test_unreadable_request_with_invalid_llm_answer_raises_the_expert_error():
    invented = reading(properties=["lattice_constant"], material="iron", elements=["Fe"], kind="crystal")
    server = FakeOpenAIServer([invented, invented])
    with server as base_url:
        llm = LocalBackend(Settings(backend="local", local_url=base_url))
        backend = HybridBackend(Settings(backend="hybrid"), llm=llm)
        with pytest.raises(RequestError, match="could not find a property"):
            backend.task_spec(TYPO)
    assert len(server.requests) == 2  # one ask and one re-ask with the problem
    assert "not named in the request" in server.requests[1]["messages"][-1]["content"]


def test_truncated_llm_reply_is_retried_then_falls_back():
    cut = Reply('{"properties": ["lattice_con', finish_reason="length")
    server = FakeOpenAIServer([cut, cut])
    with server as base_url:
        llm = LocalBackend(Settings(backend="local", local_url=base_url))
        backend = HybridBackend(Settings(backend="hybrid"), llm=llm)
        spec = backend.task_spec(PARAPHRASE)
    assert len(server.requests) == 2
    assert spec.missing == ["property"] and backend.last_decider == "expert"
    assert "cut off" in backend.routes[-1].llm_problem


def test_llm_that_cannot_start_is_reported_and_not_retried(monkeypatch):
    calls = []

    def failing():
        calls.append(1)
        raise BackendError("the local model is not installed")

    backend = HybridBackend(Settings(backend="hybrid"), llm_factory=failing)
    for _ in range(2):
        spec = backend.task_spec(PARAPHRASE)
        assert spec.missing == ["property"]
        assert "not installed" in backend.last_detail
    assert calls == [1]


def test_repair_and_feedback_go_to_the_llm_only_when_no_rule_applies():
    schema = {"type": "object", "properties": {"timestep": {"type": "number"}, "production_steps": {"type": "integer"}}}
    current = {"timestep": 0.002, "production_steps": 1000}
    llm_action = {"action": "set", "parameter": "production_steps", "value": "5000", "reason": "longer run"}
    server = FakeOpenAIServer([json.dumps(llm_action)])
    with server as base_url:
        backend = openai_hybrid(base_url)
        rule = backend.repair("ERROR: Lost atoms", "lammps/fluid_md", current, schema)
        assert (rule.action, backend.name) == ("scale", "hybrid(expert)")
        assert server.requests == []
        action = backend.repair("the average has not converged", "lammps/fluid_md", current, schema)
        assert (action.action, action.value, backend.name) == ("set", "5000", "hybrid(openai)")
        overrides = backend.parameter_overrides("production_steps = 20000", "lammps/fluid_md", current, schema)
        assert overrides.overrides[0].value == "20000" and backend.name == "hybrid(expert)"


# ---------------------------------------------------------------------------------------------
# Code checks, reading conversion, merging
# ---------------------------------------------------------------------------------------------


def spec_for(request: str, **fields) -> TaskSpec:
    return TaskSpec(request=request, **fields)


def test_validate_spec_accepts_what_the_request_states():
    spec = spec_for("Density of liquid argon at -180 °C and 1 atm",
                    system=SystemSpec(name="argon", kind="atomic_fluid", elements=["Ar"]),
                    properties=[PropertyRequest(name="density")],
                    conditions=Conditions(temperature=Quantity(value=-180, unit="degC"),
                                          pressure=Quantity(value=1, unit="atm")))
    assert validate_spec(spec) == []
    room = spec_for("Density of water at room temperature",
                    conditions=Conditions(temperature=Quantity(value=298.15, unit="K")))
    assert validate_spec(room) == []
    typo = spec_for("lattice constant of fcc nikel", system=SystemSpec(name="nikel", kind="crystal", elements=["Ni"]))
    assert validate_spec(typo) == []


@pytest.mark.parametrize("fields, problem", [
    ({"conditions": Conditions(temperature=Quantity(value=-300, unit="degC"))}, "outside the physical range"),
    ({"conditions": Conditions(temperature=Quantity(value=300, unit="bar"))}, "not a unit of temperature"),
    ({"conditions": Conditions(density=Quantity(value=0.8, unit="reduced"))}, "reduced"),
    ({"conditions": Conditions(pressure=Quantity(value=7, unit="bar"))}, "does not appear in the request"),
    ({"system": SystemSpec(name="x", kind="crystal", elements=["Qq"])}, "not a chemical symbol"),
    ({"system": SystemSpec(name="x", kind="crystal", elements=["Fe"])}, "not named in the request"),
    ({"system": SystemSpec(name="x", kind="crystal", elements=["Ar"], lattice="bcc")}, "lattice 'bcc' is not stated"),
    ({"properties": [PropertyRequest(name="pressure", at="last_step")]}, "last or final step"),
    ({"system": SystemSpec(name="x", kind="lj_fluid"),
      "conditions": Conditions(temperature=Quantity(value=300, unit="K"))}, "real substance"),
])
def test_validate_spec_rejects(fields, problem):
    spec = spec_for("Pressure of solid argon at 300 K and 1.2 g/cm3", **fields)
    problems = validate_spec(spec)
    assert any(problem in p for p in problems), problems


def test_validate_spec_checks_the_phase_against_the_request():
    solid = spec_for("lattice constnt of diamond silicn", system=SystemSpec(name="Si", kind="atomic_fluid",
                                                                            elements=["Si"]))
    assert any("nothing in the request says it is a fluid" in p for p in validate_spec(solid))
    liquid = spec_for("RDF of liquid argon at 90 K", system=SystemSpec(name="Ar", kind="crystal", elements=["Ar"]))
    assert any("liquid or gas, not a crystal" in p for p in validate_spec(liquid))


def test_reading_to_spec_applies_rules_in_code():
    request = "Self-diffusion coefficient of liquid argon at 90 K and 1.4 g/cc"
    spec = reading_to_spec(RequestReading.model_validate_json(reading(
        properties=["self_diffusion_coefficient", "self_diffusion_coefficient"], material="liquid argon",
        elements=["argon"], kind="atomic_fluid", temperature={"value": 90, "unit": "K"},
        density={"value": 1.4, "unit": "g/cc"})), request)
    assert [p.name for p in spec.properties] == ["self_diffusion_coefficient"]
    assert spec.system.elements == ["Ar"] and spec.system.phase == "liquid"
    assert spec.conditions.density == Quantity(value=1.4, unit="g/cm^3")
    assert spec.units_style == "metal" and spec.engine == "lammps" and spec.missing == []
    water = reading_to_spec(RequestReading.model_validate_json(reading(
        properties=["density"], material="water", kind="molecular_fluid", potential_name="TIP4P/2005")),
        "density of TIP4P/2005 water")
    assert water.engine == "gromacs" and water.system.molecule == "water"
    assert water.potential.force_field == "TIP4P/2005" and water.missing == ["temperature"]


def test_required_gaps_and_merge():
    assert required_gaps(TaskSpec(request="x")) == ["property", "system"]
    expert = TaskSpec(request="r", system=SystemSpec(name="LJ", kind="lj_fluid"),
                      conditions=Conditions(temperature=Quantity(value=1.5, unit="reduced")),
                      missing=["property", "density"], confidence=0.4)
    llm = TaskSpec(request="r", system=SystemSpec(name="argon", kind="atomic_fluid", elements=["Ar"]),
                   properties=[PropertyRequest(name="coordination_number")],
                   conditions=Conditions(temperature=Quantity(value=2.0, unit="reduced"),
                                         density=Quantity(value=0.6, unit="reduced")))
    merged, filled = merge_specs(expert, llm)
    assert merged.system.kind == "lj_fluid"  # the expert's system stays
    assert merged.conditions.temperature.value == 1.5  # and its numbers
    assert merged.conditions.density.value == 0.6  # the LLM fills the gap
    assert [p.name for p in merged.properties] == ["coordination_number"]
    assert set(filled) == {"properties", "density"} and merged.missing == [] and merged.confidence == 1.0


# ---------------------------------------------------------------------------------------------
# Configuration and construction
# ---------------------------------------------------------------------------------------------


def test_backends_are_selectable_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("SIMAGENT_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("SIMAGENT_BACKEND", "hybrid")
    monkeypatch.setenv("SIMAGENT_HYBRID_THRESHOLD", "0.5")
    monkeypatch.setenv("SIMAGENT_MODEL_NAME", "qwen2.5-coder-0.5b")
    settings = load_settings()
    assert settings.resolved_backend == "hybrid" and settings.hybrid_threshold == 0.5
    backend = get_backend(settings)
    assert isinstance(backend, HybridBackend) and backend.threshold == 0.5
    config = tmp_path / "config.toml"
    config.write_text('backend = "local"\nllm_threads = 1\nllm_port = 0\n')
    monkeypatch.setenv("SIMAGENT_CONFIG", str(config))
    monkeypatch.delenv("SIMAGENT_BACKEND")
    assert load_settings().resolved_backend == "local"
    assert load_settings(backend="expert").resolved_backend == "expert"


def test_local_backend_uses_the_openai_client_path():
    with FakeOpenAIServer([reading(properties=["cohesive_energy"], material="Cu", elements=["Cu"],
                                   kind="crystal")]) as base_url:
        backend = LocalBackend(Settings(backend="local", local_url=base_url.removesuffix("/v1")))
        assert isinstance(backend, OpenAIBackend) and backend.base_url == base_url
        spec = backend.task_spec("Cohesive energy of Cu")
    assert spec.system.elements == ["Cu"] and backend.calls[-1].backend == "local"


def test_unreachable_local_url_is_a_clear_error(monkeypatch):
    monkeypatch.setattr("simagent.backends.local.EXTERNAL_CONNECT_GRACE_S", 0.2)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(BackendError, match="no llama.cpp server answers") as info:
        LocalBackend(Settings(backend="local", local_url=f"http://127.0.0.1:{port}/v1"))
    assert info.value.__cause__ is None


def test_port_in_use_is_a_clear_error():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        server = LlamaServer("model.gguf", port=port, factory=refusing_factory)
        with pytest.raises(BackendError, match=f"port {port} .* is in use"):
            server.start()


def test_server_not_up_within_the_timeout():
    stopped = []

    class Slow:
        listening_address = "http://127.0.0.1:9"

        def __del__(self):
            stopped.append(True)

    def slow_factory(params):
        time.sleep(0.3)
        return Slow()

    server = LlamaServer("model.gguf", start_timeout_s=0.1, factory=slow_factory)
    server._params = lambda: None  # no xllamacpp parameters needed for the fake
    with pytest.raises(BackendError, match="did not come up within 0.1 s"):
        server.start()
    assert stopped and server.url is None


def test_server_start_failure_is_a_clear_error():
    def broken(params):
        raise RuntimeError("Failed to init server, please check the input params.")

    server = LlamaServer("broken.gguf", factory=broken)
    server._params = lambda: None
    with pytest.raises(BackendError, match="did not start with model broken.gguf"):
        server.start()


# ---------------------------------------------------------------------------------------------
# Model store
# ---------------------------------------------------------------------------------------------


def fake_parts(tmp_path, chunks: list[bytes]) -> dict[str, types.SimpleNamespace]:
    modules = {}
    for i, chunk in enumerate(chunks, 1):
        path = tmp_path / f"part{i}.bin"
        path.write_bytes(chunk)
        modules[f"fake_model_part{i}"] = types.SimpleNamespace(get_part_path=lambda p=path: str(p))
    return modules


def fake_source(chunks: list[bytes], sha256: str | None = None) -> ModelSource:
    data = b"".join(chunks)
    return ModelSource(name="fake", description="Fake GGUF", filename="fake.gguf", distribution="fake-model-part{i}",
                       version="1.0", parts=len(chunks), size=len(data),
                       sha256=sha256 or hashlib.sha256(data).hexdigest())


def importer_for(modules):
    def load(name):
        if name not in modules:
            raise ImportError(name)
        return modules[name]
    return load


def test_model_is_assembled_once_verified_and_cached(tmp_path, monkeypatch):
    chunks = [b"GGUF" + b"a" * 100, b"b" * 50, b"c" * 7]
    source = fake_source(chunks)
    load = importer_for(fake_parts(tmp_path, chunks))
    cache = tmp_path / "cache"
    path = ensure_model(cache=cache, importer=load, source=source)
    assert path.read_bytes() == b"".join(chunks)
    assert check_gguf(path) == path
    assert sorted(p.name for p in cache.iterdir()) == ["fake.gguf", "fake.gguf.verified.json"]
    monkeypatch.setattr(model_store, "sha256_file", lambda p: pytest.fail("verified file re-hashed"))
    assert ensure_model(cache=cache, importer=load, source=source) == path


def test_missing_model_parts_name_the_packages(tmp_path):
    chunks = [b"GGUF", b"x"]
    modules = fake_parts(tmp_path, chunks)
    del modules["fake_model_part2"]
    with pytest.raises(BackendError) as info:
        ensure_model(cache=tmp_path / "cache", importer=importer_for(modules), source=fake_source(chunks))
    message = str(info.value)
    assert "not installed" in message and "fake-model-part2==1.0" in message and "make setup" in message


def test_missing_model_through_the_backend(monkeypatch, tmp_path):
    source = ModelSource(name="absent-model", description="Absent", filename="absent.gguf",
                         distribution="simagent-absent-model-part{i}", version="0.1", parts=2, size=1,
                         sha256="0" * 64)
    monkeypatch.setitem(model_store.MODELS, "absent-model", source)
    monkeypatch.setenv("SIMAGENT_MODEL_CACHE", str(tmp_path))
    with pytest.raises(BackendError, match="simagent-absent-model-part1==0.1"):
        get_backend(Settings(backend="local", model_name="absent-model"))


def test_corrupt_model_is_rejected_and_not_cached(tmp_path):
    chunks = [b"GGUF" + b"a" * 10, b"b" * 10]
    source = fake_source(chunks, sha256="f" * 64)
    cache = tmp_path / "cache"
    with pytest.raises(BackendError, match="corrupt") as info:
        ensure_model(cache=cache, importer=importer_for(fake_parts(tmp_path, chunks)), source=source)
    assert "--force-reinstall" in str(info.value)
    assert list(cache.iterdir()) == []  # no half-written or unverified file left behind


def test_damaged_cache_entry_is_rebuilt(tmp_path):
    chunks = [b"GGUF" + b"z" * 20]
    source = fake_source(chunks)
    load = importer_for(fake_parts(tmp_path, chunks))
    cache = tmp_path / "cache"
    path = ensure_model(cache=cache, importer=load, source=source)
    path.write_bytes(b"GGUF garbage")
    assert ensure_model(cache=cache, importer=load, source=source).read_bytes() == b"".join(chunks)


def test_user_model_path_must_be_gguf(tmp_path):
    not_gguf = tmp_path / "model.bin"
    not_gguf.write_bytes(b"PK\x03\x04")
    with pytest.raises(BackendError, match="not a GGUF file"):
        LocalBackend(Settings(backend="local", model_path=not_gguf))
    with pytest.raises(BackendError, match="does not exist"):
        LocalBackend(Settings(backend="local", model_path=tmp_path / "nope.gguf"))


def test_local_backend_errors_carry_the_local_hint():
    with FakeOpenAIServer([Reply("busy", status=500), Reply("busy", status=500)]) as base_url:
        backend = LocalBackend(Settings(backend="local", local_url=base_url))
        with pytest.raises(BackendError) as info:
            backend.task_spec("Cohesive energy of Cu")
    assert "llm_threads" in str(info.value) and "SIMAGENT_BASE_URL" not in str(info.value)


def test_session_records_which_backend_read_the_request_and_closes_it(tmp_path):
    """Through the graph: the task_spec decision names the backend that read the request (the LLM
    here, the expert's reading having a gap) and why; closing the session closes the backend."""
    from simagent.session import Session

    answer = full_spec(PARAPHRASE, properties=[PropertyRequest(name="lattice_constant")],
                       system=SystemSpec(name="fcc copper", kind="crystal", elements=["Cu"], lattice="fcc"))
    server = FakeOpenAIServer([answer])
    with server as base_url:
        config = Settings(backend="hybrid", hybrid_llm="openai", base_url=base_url, model="fake-model",
                          llm_retries=0, workdir=str(tmp_path))
        session = Session(config, auto_approve=False)
        closed = []
        session.backend.close = lambda: closed.append(True)
        outcome = session.ask(PARAPHRASE)
        state = session.app.get_state(session._config(outcome.thread_id)).values
        session.close()
    assert outcome.interrupt is not None and outcome.interrupt["kind"] == "review"
    reading = next(d for d in state["decisions"] if d.decision == "task_spec")
    assert reading.backend == "hybrid(openai)" and "properties" in reading.detail
    assert closed == [True]


def test_the_default_backend_is_the_hybrid_when_a_local_model_is_there(tmp_path):
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    assert Settings(model_path=gguf).resolved_backend == "hybrid"
    assert Settings(local_url="http://127.0.0.1:9").resolved_backend == "hybrid"
    assert Settings(model_path=tmp_path / "absent.gguf", model_name="no-such-model").resolved_backend == "expert"
    assert Settings(model_path=gguf, backend="expert").resolved_backend == "expert"  # --backend expert
    assert Settings(model_path=gguf, base_url="http://127.0.0.1:9/v1").resolved_backend == "openai"
