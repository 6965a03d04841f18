"""OpenAIBackend against a scripted OpenAI-compatible server: real `openai` client, real HTTP."""

from __future__ import annotations

import json
import logging
import socket

import pytest
from fake_openai_server import FakeOpenAIServer, Reply
from pydantic import SecretStr

from simagent.backends.base import (
    ParameterOverrides,
    ProtocolInfo,
    ProtocolSelection,
    RepairAction,
)
from simagent.backends.openai_backend import OpenAIBackend, strict_json_schema
from simagent.config import Settings
from simagent.errors import BackendError
from simagent.models import PropertyRequest, SystemSpec, TaskSpec

API_KEY = "sk-test-0123456789abcdef"
REQUEST = "What is the lattice constant of fcc nickel with the Foiles EAM potential?"

TASK_REPLY = {
    "request": "the model's garbled copy of the request",
    "system": {
        "name": "nickel",
        "kind": "crystal",
        "elements": ["Ni"],
        "lattice": "fcc",
        "phase": "solid",
    },
    "potential": {
        "family": "eam",
        "name_hint": "Foiles",
        "file": None,
        "lj_epsilon": None,
        "lj_sigma": None,
        "cutoff": None,
        "tail_correction": False,
        "shifted": False,
    },
    "properties": [{"name": "lattice_constant", "unit": None, "at": "average", "step": None}],
    "engine": "lammps",
    "units_style": "metal",
    "conditions": {"temperature": {"value": 25, "unit": "degC"}, "pressure": None, "density": None},
    "controls": {
        "n_atoms": None,
        "timestep": None,
        "equilibration_steps": None,
        "production_steps": None,
        "seed": None,
        "ensemble": None,
    },
    "missing": [],
    "unparsed": [],
    "confidence": 0.9,
}
VALID_TASK = json.dumps(TASK_REPLY)

CANDIDATES = [
    ProtocolInfo(
        name="lammps/crystal_relax",
        properties=["lattice_constant", "cohesive_energy"],
        description="0 K box relaxation of a crystal",
    ),
    ProtocolInfo(
        name="lammps/lj_nvt",
        properties=["pressure", "potential_energy_per_atom"],
        description="NVT run of an LJ fluid",
    ),
]


def make_backend(base_url: str, retries: int = 2, api_key: str | None = API_KEY) -> OpenAIBackend:
    settings = Settings(
        base_url=base_url,
        model="fake-model",
        api_key=SecretStr(api_key) if api_key else None,
        llm_retries=retries,
        llm_timeout_s=5,
    )
    return OpenAIBackend(settings)


def nickel_spec() -> TaskSpec:
    return TaskSpec(
        request=REQUEST,
        system=SystemSpec(name="nickel", kind="crystal", elements=["Ni"], lattice="fcc"),
        properties=[PropertyRequest(name="lattice_constant")],
    )


def all_objects(node):
    """Every JSON-schema object node in a schema (for checking strictness)."""
    if isinstance(node, dict):
        if node.get("type") == "object":
            yield node
        for value in node.values():
            yield from all_objects(value)
    elif isinstance(node, list):
        for value in node:
            yield from all_objects(value)


# ---------------------------------------------------------------------------------------------
# Strict schemas
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("model", [TaskSpec, ProtocolSelection, ParameterOverrides, RepairAction])
def test_strict_schema_closes_every_object_and_requires_every_property(model):
    schema = strict_json_schema(model)
    objects = list(all_objects(schema))
    assert objects
    for obj in objects:
        assert obj["additionalProperties"] is False
        assert set(obj["required"]) == set(obj.get("properties", {}))
    text = json.dumps(schema)
    assert '"default"' not in text and '"title"' not in text


def test_strict_schema_keeps_optionals_nullable_and_can_drop_fields():
    schema = strict_json_schema(TaskSpec, exclude=("request",))
    assert "request" not in schema["properties"] and "request" not in schema["required"]
    units = schema["properties"]["units_style"]["anyOf"]
    assert {"type": "null"} in units
    # (the order of a Literal's values is typing's cache's: Literal["lj", "real", "metal"] is the same type)
    assert any(sorted(v.get("enum", [])) == ["lj", "metal", "real"] for v in units)


# ---------------------------------------------------------------------------------------------
# task_spec and the wire protocol
# ---------------------------------------------------------------------------------------------


def test_task_spec_valid_reply_and_request_body():
    server = FakeOpenAIServer([VALID_TASK])
    with server as base_url:
        backend = make_backend(base_url)
        spec = backend.task_spec(REQUEST)

    assert spec.request == REQUEST  # forced to the original text
    assert spec.system is not None and spec.system.elements == ["Ni"]
    assert [p.name for p in spec.properties] == ["lattice_constant"]
    assert spec.units_style == "metal"
    # conditions come back exactly as written; no conversion by the model or the backend
    assert spec.conditions.temperature is not None
    assert (spec.conditions.temperature.value, spec.conditions.temperature.unit) == (25, "degC")

    (body,) = server.requests
    assert body["model"] == "fake-model"
    assert body["temperature"] == 0
    assert 0 < body["max_tokens"] <= 4096
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["name"] == "TaskSpec"
    assert "request" not in fmt["json_schema"]["schema"]["properties"]
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user"]
    assert body["messages"][1]["content"] == REQUEST
    assert "lattice_constant" in body["messages"][0]["content"]  # allowed names in the prompt
    assert server.authorizations == [f"Bearer {API_KEY}"]

    (record,) = backend.calls
    assert (record.decision, record.backend, record.attempts, record.ok) == (
        "task_spec",
        "openai",
        1,
        True,
    )


def test_no_api_key_sends_placeholder():
    server = FakeOpenAIServer([VALID_TASK])
    with server as base_url:
        make_backend(base_url, api_key=None).task_spec(REQUEST)
    assert server.authorizations == ["Bearer none"]


def test_garbage_then_valid_is_retried_with_the_error():
    server = FakeOpenAIServer(["Sure! Here is the JSON: {", VALID_TASK])
    with server as base_url:
        spec = make_backend(base_url).task_spec(REQUEST)

    assert spec.system is not None and spec.system.name == "nickel"
    assert len(server.requests) == 2
    retry_messages = server.requests[1]["messages"]
    assert [m["role"] for m in retry_messages] == ["system", "user", "assistant", "user"]
    assert retry_messages[2]["content"] == "Sure! Here is the JSON: {"
    assert "not valid JSON" in retry_messages[3]["content"]


def test_schema_violation_is_retried_with_the_validation_error():
    bad = json.loads(VALID_TASK)
    bad["properties"] = [{"name": "melting_point_of_cheese", "unit": None, "at": "average", "step": None}]
    server = FakeOpenAIServer([json.dumps(bad), VALID_TASK])
    with server as base_url:
        spec = make_backend(base_url).task_spec(REQUEST)

    assert [p.name for p in spec.properties] == ["lattice_constant"]
    feedback = server.requests[1]["messages"][-1]["content"]
    assert "properties.0.name" in feedback and "lattice_constant" in feedback


def test_repeated_invalid_replies_raise_backend_error_without_the_key(caplog):
    caplog.set_level(logging.DEBUG)
    unknown_property = '{"properties": [{"name": "melting_point_of_cheese"}]}'
    server = FakeOpenAIServer(["nope", '{"system": 3}', unknown_property])
    with server as base_url:
        backend = make_backend(base_url, retries=2)
        with pytest.raises(BackendError) as info:
            backend.task_spec(REQUEST)

    message = str(info.value)
    assert len(server.requests) == 3  # one ask + llm_retries re-asks
    assert "task_spec" in message and "3 attempt" in message
    assert API_KEY not in message
    assert all(API_KEY not in record.getMessage() for record in caplog.records)
    assert backend.calls[-1].ok is False


def test_finish_reason_length_counts_as_failure():
    cut = VALID_TASK  # even complete-looking JSON is rejected when the server says it was cut
    server = FakeOpenAIServer([Reply(cut, finish_reason="length"), VALID_TASK])
    with server as base_url:
        make_backend(base_url).task_spec(REQUEST)
    assert len(server.requests) == 2
    assert "cut off" in server.requests[1]["messages"][-1]["content"]

    server = FakeOpenAIServer([Reply(VALID_TASK[:40], finish_reason="length")])
    with server as base_url, pytest.raises(BackendError, match="cut off"):
        make_backend(base_url, retries=0).task_spec(REQUEST)


# ---------------------------------------------------------------------------------------------
# Endpoint failures
# ---------------------------------------------------------------------------------------------


def test_unreachable_endpoint_gives_configuration_hint():
    with socket.socket() as sock:  # a port that was free a moment ago: connection refused
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}/v1"
    with pytest.raises(BackendError) as info:
        make_backend(base_url).task_spec(REQUEST)
    message = str(info.value)
    assert "could not reach" in message and base_url in message
    for name in ("SIMAGENT_BASE_URL", "SIMAGENT_MODEL", "SIMAGENT_API_KEY"):
        assert name in message
    assert API_KEY not in message
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_http_errors_become_backend_errors():
    server = FakeOpenAIServer([Reply(f"Incorrect API key provided: {API_KEY}", status=401)])
    with server as base_url, pytest.raises(BackendError) as info:
        make_backend(base_url).task_spec(REQUEST)
    assert "HTTP 401" in str(info.value) and "SIMAGENT_API_KEY" in str(info.value)
    assert API_KEY not in str(info.value)

    server = FakeOpenAIServer([Reply("json_schema is not supported", status=400)])
    with server as base_url, pytest.raises(BackendError) as info:
        make_backend(base_url).task_spec(REQUEST)
    assert "HTTP 400" in str(info.value) and "json_schema" in str(info.value)
    assert len(server.requests) == 1  # client errors are not retried


def test_no_endpoint_and_no_key_is_a_configuration_error():
    with pytest.raises(BackendError, match="SIMAGENT_BASE_URL"):
        OpenAIBackend(Settings(base_url=None, api_key=None))


def test_fake_server_requires_authorization_and_lists_models():
    import httpx

    with FakeOpenAIServer([]) as base_url:
        assert httpx.post(f"{base_url}/chat/completions", json={}).status_code == 401
        models = httpx.get(f"{base_url}/models").json()
    assert models["data"][0]["id"] == "fake-model"


# ---------------------------------------------------------------------------------------------
# The other decisions
# ---------------------------------------------------------------------------------------------


def test_select_protocols_rejects_a_protocol_not_among_candidates():
    invented = {
        "items": [{"protocol": "lammps/magic", "properties": ["lattice_constant"]}],
        "rationale": "x",
    }
    valid = {
        "items": [{"protocol": "lammps/crystal_relax", "properties": ["lattice_constant"]}],
        "rationale": "relaxation gives the lattice constant",
    }
    server = FakeOpenAIServer([json.dumps(invented), json.dumps(valid)])
    with server as base_url:
        selection = make_backend(base_url).select_protocols(nickel_spec(), CANDIDATES)

    assert [i.protocol for i in selection.items] == ["lammps/crystal_relax"]
    assert len(server.requests) == 2
    first = server.requests[0]
    assert first["response_format"]["json_schema"]["name"] == "ProtocolSelection"
    payload = json.loads(first["messages"][1]["content"])
    assert payload["requested_properties"] == ["lattice_constant"]
    assert [c["name"] for c in payload["candidates"]] == [c.name for c in CANDIDATES]
    assert "lammps/magic" in server.requests[1]["messages"][-1]["content"]


def test_select_protocols_gives_up_on_invented_protocols():
    invented = json.dumps(
        {"items": [{"protocol": "vasp/relax", "properties": []}], "rationale": ""}
    )
    with FakeOpenAIServer([invented, invented]) as base_url, pytest.raises(BackendError):
        make_backend(base_url, retries=1).select_protocols(nickel_spec(), CANDIDATES)


def test_select_protocols_rejects_property_the_protocol_does_not_compute():
    wrong = {"items": [{"protocol": "lammps/lj_nvt", "properties": ["lattice_constant"]}]}
    valid = {"items": [{"protocol": "lammps/crystal_relax", "properties": ["lattice_constant"]}]}
    server = FakeOpenAIServer(
        [json.dumps({**wrong, "rationale": ""}), json.dumps({**valid, "rationale": ""})]
    )
    with server as base_url:
        selection = make_backend(base_url).select_protocols(nickel_spec(), CANDIDATES)
    assert selection.items[0].protocol == "lammps/crystal_relax"
    assert "does not compute" in server.requests[1]["messages"][-1]["content"]


PARAM_SCHEMA = {
    "type": "object",
    "properties": {"production_steps": {"type": "integer"}, "timestep": {"type": "number"}},
}
CURRENT = {"production_steps": 10000, "timestep": 0.002}


def test_parameter_overrides_checks_parameter_names():
    unknown = {"overrides": [{"parameter": "nsteps", "value": "20000"}], "not_understood": []}
    valid = {
        "overrides": [{"parameter": "production_steps", "value": "20000"}],
        "not_understood": [],
    }
    server = FakeOpenAIServer([json.dumps(unknown), json.dumps(valid)])
    with server as base_url:
        result = make_backend(base_url).parameter_overrides(
            "run 20000 steps", "lammps/lj_nvt", CURRENT, PARAM_SCHEMA
        )
    assert [(o.parameter, o.value) for o in result.overrides] == [("production_steps", "20000")]
    payload = json.loads(server.requests[0]["messages"][1]["content"])
    assert payload["feedback"] == "run 20000 steps" and payload["current"] == CURRENT
    assert "nsteps" in server.requests[1]["messages"][-1]["content"]


def test_repair_validates_the_action():
    no_value = {"action": "scale", "parameter": "timestep", "value": None, "reason": ""}
    valid = {
        "action": "scale",
        "parameter": "timestep",
        "value": "0.5",
        "reason": "atoms lost: halve the timestep",
    }
    server = FakeOpenAIServer([json.dumps(no_value), json.dumps(valid)])
    with server as base_url:
        action = make_backend(base_url).repair("Lost atoms", "lammps/lj_nvt", CURRENT, PARAM_SCHEMA)
    assert (action.action, action.parameter, action.value) == ("scale", "timestep", "0.5")
    assert server.requests[0]["response_format"]["json_schema"]["name"] == "RepairAction"

    give_up = {"action": "give_up", "parameter": None, "value": None, "reason": "bad potential"}
    with FakeOpenAIServer([json.dumps(give_up)]) as base_url:
        action = make_backend(base_url).repair("x", "lammps/lj_nvt", CURRENT, PARAM_SCHEMA)
    assert action.action == "give_up"
