"""Planner agent: TaskSpec -> protocol runs (protocol + typed parameters + defaults applied).
The jobs themselves (a DAG per protocol) are rendered by the input writer."""

from __future__ import annotations

from typing import Literal

from langgraph.runtime import Runtime
from langgraph.types import Command

from simagent.backends.base import ProtocolInfo
from simagent.errors import SimagentError
from simagent.models import Decision, Plan, PropertyRequest, ProtocolRun, TaskSpec
from simagent.protocols import all_protocols, engine_allowed, get_protocol
from simagent.state import RunContext, RunState


def restrict(spec: TaskSpec, properties: list[str]) -> TaskSpec:
    """The spec limited to the properties one protocol answers."""
    return spec.model_copy(update={"properties": [p for p in spec.properties if p.name in properties]})


def candidates(spec: TaskSpec) -> list[ProtocolInfo]:
    found = []
    for protocol in all_protocols():
        if not engine_allowed(protocol, spec):
            continue
        sub = restrict(spec, list(protocol.properties))
        if sub.properties and protocol.applies_to(sub):
            found.append(ProtocolInfo(name=protocol.name, properties=sorted(protocol.properties),
                                      description=protocol.description))
    return found


def computable_instead(spec: TaskSpec, uncovered: list[str]) -> str:
    """What simagent does compute for this system, when the asked property has no protocol (never
    run in its place: the user is told, and asks again)."""
    if spec.system is None:
        return ""
    offers = []
    for protocol in all_protocols():
        others = sorted(set(protocol.properties) - set(uncovered))
        if not others or not engine_allowed(protocol, spec):
            continue
        trial = spec.model_copy(update={"properties": [PropertyRequest(name=name) for name in others]})
        if protocol.applies_to(trial):
            offers.append(f"{', '.join(others)} ({protocol.name})")
    if not offers:
        return ""
    return (f". For {spec.system.name} simagent computes: {'; '.join(offers)}. It does not substitute one of them "
            f"for {', '.join(uncovered)}: ask for it if that helps")


def plan_runs(spec: TaskSpec, context: RunContext) -> tuple[list[ProtocolRun], list, list[Decision]]:
    options = candidates(spec)
    selection = context.backend.select_protocols(spec, options)
    known = {o.name for o in options}
    covered: set[str] = set()
    runs, defaults = [], []
    for item in selection.items:
        if item.protocol not in known:
            raise SimagentError(f"backend chose protocol {item.protocol!r}, which does not apply here")
        protocol = get_protocol(item.protocol)
        sub = restrict(spec, item.properties)
        params, applied = protocol.parameters(sub)
        runs.append(ProtocolRun(protocol=protocol.name, properties=item.properties,
                                params=params.model_dump(mode="json"), jobs={}))
        defaults.extend(applied)
        covered.update(item.properties)
    uncovered = [p.name for p in spec.properties if p.name not in covered]
    if uncovered:
        system = spec.system.name if spec.system else "this system"
        raise SimagentError(
            f"no protocol computes {', '.join(uncovered)} for {system}"
            + (f" (available here: {', '.join(sorted(known))})" if known else "")
            + computable_instead(spec, uncovered)
        )
    decision = Decision(decision="protocols", backend=context.backend.name,
                        detail="; ".join(f"{i.protocol}: {', '.join(i.properties)}" for i in selection.items))
    return runs, defaults, [decision]


def planner(state: RunState, runtime: Runtime[RunContext]) -> Command[Literal["input_writer", "response"]]:
    runtime.context.report("stage", name="planner", detail="choosing protocols")
    try:
        runs, defaults, decisions = plan_runs(state.spec, runtime.context)
    except SimagentError as err:
        return Command(goto="response", update={"error": str(err)})
    return Command(goto="input_writer", update={
        "plan": Plan(jobs=[], runs=runs),
        "defaults_applied": defaults,
        "decisions": [*state.decisions, *decisions],
    })
