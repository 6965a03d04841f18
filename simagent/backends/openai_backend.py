"""Decision backend that asks an OpenAI-compatible chat endpoint (OpenAI, llama.cpp, vLLM...).

Each decision is one chat completion constrained by a strict JSON schema derived from the
decision's pydantic model; the reply is validated in code and, when invalid, the model is
re-asked with the validation error (settings.llm_retries times). Endpoint failures become
BackendError with a configuration hint. The API key is never put in a message or a log line.
"""

from __future__ import annotations

import copy
import functools
import json
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

import openai
from pydantic import BaseModel, ValidationError

from simagent.backends import prompts
from simagent.backends.allowance import MIN_CALL_S, TimeAllowance
from simagent.backends.base import (
    DecisionBackend,
    ParameterOverrides,
    ProtocolInfo,
    ProtocolSelection,
    RepairAction,
)
from simagent.config import Settings
from simagent.errors import BackendError
from simagent.knowledge import grounding
from simagent.models import TaskSpec

log = logging.getLogger(__name__)

T = TypeVar("T")

OPENAI_URL = "https://api.openai.com/v1"  # used when only an API key is configured

# Completion-token caps per decision. Strict schemas make the model write every field (nulls
# included), so a TaskSpec needs more room than a repair; a reply cut at the cap
# (finish_reason "length") counts as invalid and is re-asked.
MAX_TOKENS = {
    "task_spec": 1024,
    "select_protocols": 512,
    "parameter_overrides": 512,
    "repair": 256,
}

CONFIG_HINT = (
    "Configure the endpoint with SIMAGENT_BASE_URL (an OpenAI-compatible URL, usually ending in "
    "/v1), SIMAGENT_MODEL and, if the server needs one, SIMAGENT_API_KEY; or use the rule-based "
    "backend with SIMAGENT_BACKEND=expert."
)

_MAX_PROBLEM_CHARS = 600  # validation feedback sent back to the model / shown to the user


# ---------------------------------------------------------------------------------------------
# Strict JSON schemas
# ---------------------------------------------------------------------------------------------


def strict_json_schema(model: type[BaseModel], exclude: Iterable[str] = ()) -> dict[str, Any]:
    """JSON schema of `model` in the form OpenAI's strict structured outputs accept: every object
    closed (additionalProperties false) with all properties required, optional fields nullable
    (pydantic already writes `X | None` as anyOf [X, null]), no defaults or titles, and no `$ref`
    with sibling keywords. Top-level properties in `exclude` are dropped (code fills them).
    Built once per model (pydantic's schema generation costs ~0.1 s); callers get their own copy."""
    return copy.deepcopy(_strict_json_schema(model, tuple(exclude)))


@functools.lru_cache(maxsize=64)
def _strict_json_schema(model: type[BaseModel], exclude: tuple[str, ...]) -> dict[str, Any]:
    raw = model.model_json_schema()
    schema = _strict(raw, raw.get("$defs", {}))
    for name in exclude:
        schema.get("properties", {}).pop(name, None)
        if name in schema.get("required", []):
            schema["required"].remove(name)
    return schema


def _strict(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_strict(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and len(node) > 1:
        # {"$ref": ..., "description": ...}: inline the definition, the local keywords win.
        target = defs[ref.rsplit("/", 1)[-1]]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("title", "default"):
            continue
        if key in ("properties", "$defs") and isinstance(value, dict):
            out[key] = {name: _strict(sub, defs) for name, sub in value.items()}
        elif key in ("items", "anyOf", "allOf", "oneOf", "prefixItems"):
            out[key] = _strict(value, defs)
        else:
            out[key] = value
    if out.get("type") == "object":
        out.setdefault("additionalProperties", False)
        out["required"] = list(out.get("properties", {}))
    return out


# ---------------------------------------------------------------------------------------------
# Backend
# ---------------------------------------------------------------------------------------------


@dataclass
class CallRecord:
    """One decision made through the endpoint (for traceability and timing)."""

    decision: str
    backend: str
    model: str
    attempts: int
    latency_s: float
    ok: bool


class OpenAIBackend(DecisionBackend):
    """Decisions from an OpenAI-compatible chat-completions endpoint with strict JSON schemas."""

    name = "openai"

    def __init__(self, settings: Settings) -> None:
        secret = settings.api_key.get_secret_value() if settings.api_key else ""
        if not settings.base_url and not secret:
            raise BackendError(
                f"the 'openai' backend has no endpoint and no API key. {CONFIG_HINT}"
            )
        self.base_url = (settings.base_url or OPENAI_URL).rstrip("/")
        self.model = settings.model
        self.retries = settings.llm_retries
        self.timeout_s = settings.llm_timeout_s
        self._secret = secret
        self._client = openai.OpenAI(
            base_url=self.base_url,
            api_key=secret or "none",  # local servers need no key; the client needs a value
            timeout=settings.llm_timeout_s,
            max_retries=1,
        )
        self.calls: list[CallRecord] = []
        self.allowance: TimeAllowance | None = None  # a bounded share of a task's time (simagent.solve)

    def __repr__(self) -> str:
        return f"OpenAIBackend(base_url={self.base_url!r}, model={self.model!r})"

    # -- decisions -----------------------------------------------------------------------------

    def task_spec(self, request: str) -> TaskSpec:
        def parse(content: str) -> TaskSpec:
            data = json.loads(content)
            if not isinstance(data, dict):
                raise ValueError("the answer must be a JSON object")
            data["request"] = request  # the original text, never the model's copy of it
            return TaskSpec.model_validate(data)

        return self._decide(
            "task_spec", prompts.TASK_SPEC, request, TaskSpec, parse, exclude=("request",)
        )

    def select_protocols(self, spec: TaskSpec, candidates: list[ProtocolInfo]) -> ProtocolSelection:
        if not candidates:
            return ProtocolSelection(items=[], rationale="no applicable protocol")
        offered = {c.name: set(c.properties) for c in candidates}
        requested = [p.name for p in spec.properties]

        def parse(content: str) -> ProtocolSelection:
            selection = ProtocolSelection.model_validate_json(content)
            for item in selection.items:
                if item.protocol not in offered:
                    raise ValueError(
                        f"protocol {item.protocol!r} is not a candidate; "
                        f"choose from {sorted(offered)}"
                    )
                extra = [p for p in item.properties if p not in offered[item.protocol]]
                if extra:
                    raise ValueError(f"protocol {item.protocol!r} does not compute {extra}")
            if requested and not selection.items:
                raise ValueError("no protocol chosen for the requested properties")
            return selection

        user = _dump(
            {
                "requested_properties": requested,
                "system": spec.system.model_dump(exclude_none=True) if spec.system else None,
                "units_style": spec.units_style,
                "candidates": [c.model_dump() for c in candidates],
            }
        )
        return self._decide(
            "select_protocols", prompts.SELECT_PROTOCOLS, user, ProtocolSelection, parse
        )

    def parameter_overrides(
        self, feedback: str, protocol: str, current: dict, schema: dict
    ) -> ParameterOverrides:
        known = _parameter_names(schema, current)

        def parse(content: str) -> ParameterOverrides:
            result = ParameterOverrides.model_validate_json(content)
            unknown = [o.parameter for o in result.overrides if known and o.parameter not in known]
            if unknown:
                raise ValueError(f"unknown parameters {unknown}; known: {sorted(known)}")
            return result

        user = _dump(
            {"protocol": protocol, "current": current, "schema": schema, "feedback": feedback}
        )
        return self._decide(
            "parameter_overrides", prompts.PARAMETER_OVERRIDES, user, ParameterOverrides, parse
        )

    def repair(self, diagnosis: str, protocol: str, current: dict, schema: dict) -> RepairAction:
        known = _parameter_names(schema, current)

        def parse(content: str) -> RepairAction:
            action = RepairAction.model_validate_json(content)
            if action.action == "give_up":
                return action
            if not action.parameter or action.value is None:
                raise ValueError(f"action {action.action!r} needs a parameter and a value")
            if known and action.parameter not in known:
                raise ValueError(f"unknown parameter {action.parameter!r}; known: {sorted(known)}")
            if action.action == "scale":
                try:
                    factor = float(action.value)
                except ValueError:
                    raise ValueError(f"scale factor {action.value!r} is not a number") from None
                if not factor > 0:
                    raise ValueError(f"scale factor {action.value!r} must be positive")
            return action

        payload = {"protocol": protocol, "current": current, "schema": schema, "diagnosis": diagnosis}
        sources = grounding.passages(f"{protocol.split('/')[0]} {diagnosis[-1500:]}")
        if sources:  # e.g. the manual section of the command that failed
            payload["sources"] = sources
        return self._decide("repair", prompts.REPAIR, _dump(payload), RepairAction, parse)

    def ask(self, decision: str, system: str, user: str, model: type[BaseModel], parse: Callable[[str], T]) -> T:
        """A constrained question of another module (e.g. simagent.described.llm_fill): the strict
        schema of `model`, validated by `parse`, with the same retries and errors as a decision
        (`decision` needs an entry in MAX_TOKENS)."""
        return self._decide(decision, system, user, model, parse)

    # -- machinery -----------------------------------------------------------------------------

    def _decide(
        self,
        decision: str,
        system: str,
        user: str,
        model: type[BaseModel],
        parse: Callable[[str], T],
        exclude: Iterable[str] = (),
    ) -> T:
        """Ask, validate with `parse`, re-ask with the problem appended; BackendError at the end."""
        schema = strict_json_schema(model, exclude)
        messages: list[dict[str, str]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ]
        start = time.perf_counter()
        attempts = self.retries + 1
        problem = ""
        for attempt in range(1, attempts + 1):
            try:
                content, finish_reason = self._complete(decision, messages, model.__name__, schema)
            except BackendError:
                self._record(decision, attempt, start, ok=False)
                raise
            if finish_reason == "length":
                problem = (
                    f"the answer was cut off at the {MAX_TOKENS[decision]}-token limit; "
                    "answer more briefly"
                )
            else:
                try:
                    result = parse(content)
                except ValueError as err:  # includes pydantic ValidationError, JSONDecodeError
                    problem = _describe(err)
                else:
                    self._record(decision, attempt, start, ok=True)
                    return result
            log.info(
                "%s: invalid LLM answer (attempt %d/%d): %s", decision, attempt, attempts, problem
            )
            if content:
                messages.append({"role": "assistant", "content": content})
            messages.append({"role": "user", "content": prompts.RETRY.format(problem=problem)})
        self._record(decision, attempts, start, ok=False)
        raise BackendError(
            self._scrub(
                f"the LLM {self.model!r} at {self.base_url} gave no valid {decision} decision in "
                f"{attempts} attempt(s); last problem: {problem}. Try a stronger model or the "
                "rule-based backend (SIMAGENT_BACKEND=expert)."
            )
        )

    def _complete(
        self, decision: str, messages: list[dict[str, str]], name: str, schema: dict[str, Any]
    ) -> tuple[str, str | None]:
        """One chat completion -> (content, finish_reason); endpoint trouble -> BackendError.

        With an allowance the request's timeout is what is left of it, without the client's retry."""
        if self.allowance is None:
            return self._completion(decision, messages, name, schema, self._client, self.timeout_s)
        allowance = self.allowance
        timeout = min(self.timeout_s, allowance.check(decision))
        client = self._client.with_options(timeout=timeout, max_retries=0)
        try:
            with allowance.timing():
                return self._completion(decision, messages, name, schema, client, timeout)
        except BackendError:
            if allowance.left() < MIN_CALL_S:
                raise allowance.cut_short(decision) from None
            raise

    def _completion(self, decision: str, messages: list[dict[str, str]], name: str, schema: dict[str, Any],
                    client: openai.OpenAI, timeout: float) -> tuple[str, str | None]:
        try:
            completion = client.chat.completions.create(
                model=self.model,
                messages=messages,  # type: ignore[arg-type]
                temperature=0,
                max_tokens=MAX_TOKENS[decision],
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": name, "schema": schema, "strict": True},
                },
            )
        except openai.APITimeoutError:
            raise BackendError(
                f"the LLM endpoint {self.base_url} did not answer within {timeout:g} s. "
                + CONFIG_HINT
            ) from None
        except openai.APIConnectionError:
            raise BackendError(
                f"could not reach the LLM endpoint {self.base_url}. " + CONFIG_HINT
            ) from None
        except openai.APIStatusError as err:
            raise BackendError(self._status_message(err)) from None
        except openai.OpenAIError as err:
            raise BackendError(
                self._scrub(f"the LLM endpoint {self.base_url} sent an unusable reply: {err}")
            ) from None
        if not completion.choices:
            raise BackendError(
                f"the LLM endpoint {self.base_url} returned no choices. " + CONFIG_HINT
            )
        choice = completion.choices[0]
        refusal = getattr(choice.message, "refusal", None)
        content = choice.message.content or (f"(refused: {refusal})" if refusal else "")
        return content, choice.finish_reason

    def _status_message(self, err: openai.APIStatusError) -> str:
        code = err.status_code
        where = f"the LLM endpoint {self.base_url}"
        if code in (401, 403):
            # The server's text may quote (part of) the key: leave it out.
            return (
                f"{where} rejected the API key (HTTP {code}); set SIMAGENT_API_KEY to a valid key."
            )
        detail = self._scrub(str(err.message))[:200]
        if code == 404:
            return (
                f"{where} answered HTTP 404 ({detail}); check that SIMAGENT_BASE_URL is the API "
                f"root (usually ending in /v1) and that SIMAGENT_MODEL ({self.model!r}) exists."
            )
        if code in (400, 422):
            return (
                f"{where} rejected the request (HTTP {code}: {detail}); it may not support "
                f"response_format json_schema or the model {self.model!r}. " + CONFIG_HINT
            )
        return f"{where} answered HTTP {code} ({detail}). " + CONFIG_HINT

    def _scrub(self, text: str) -> str:
        if self._secret and len(self._secret) >= 4:
            text = text.replace(self._secret, "***")
        return text

    def _record(self, decision: str, attempts: int, start: float, *, ok: bool) -> None:
        latency = time.perf_counter() - start
        self.calls.append(CallRecord(decision, self.name, self.model, attempts, latency, ok))
        log.debug(
            "%s by %s (%s): %d attempt(s), %.2f s, ok=%s",
            decision,
            self.name,
            self.model,
            attempts,
            latency,
            ok,
        )


def _dump(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False, default=str)


def _parameter_names(schema: dict, current: dict) -> set[str]:
    """Parameter names a decision may use: a JSON schema's properties (or the keys of a plain
    name -> description mapping) plus the current parameters. Empty: do not check names."""
    properties = schema.get("properties")
    names = set(properties) if isinstance(properties, dict) else set(schema)
    return names | set(current)


def _describe(err: ValueError) -> str:
    """Short, model-readable description of why an answer was rejected."""
    if isinstance(err, ValidationError):
        errors = err.errors(include_url=False, include_input=False)
        parts = [f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in errors[:5]]
        if len(errors) > 5:
            parts.append(f"and {len(errors) - 5} more errors")
        text = "; ".join(parts)
    elif isinstance(err, json.JSONDecodeError):
        text = f"not valid JSON ({err.msg} at line {err.lineno} column {err.colno})"
    else:
        text = str(err)
    return text[:_MAX_PROBLEM_CHARS]
