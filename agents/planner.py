"""Planner agent: TaskSpec -> protocol runs (protocol + typed parameters + defaults applied).
The jobs themselves (a DAG per protocol) are rendered by the input writer."""

from __future__ import annotations

import re
from typing import Literal

from langgraph.runtime import Runtime
from langgraph.types import Command

from simagent.backends.base import ProtocolInfo
from simagent.engines import all_engines
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


# how a request names a classical engine (the others are set only by the method words that name them)
ENGINE_WORDS = {"lammps": r"\blammps\b", "gromacs": r"\bgromacs\b|\bgmx\b", "raspa": r"\braspa\b",
                "zeopp": r"\bzeo\+\+|\bzeopp\b"}


def other_engine_routes(spec: TaskSpec, uncovered: list[str]) -> str:
    """When the engine the request named has no protocol for these properties but another engine
    has, say so and name that route; it is never run in place of the engine asked for."""
    named_word = ENGINE_WORDS.get(spec.engine)
    if spec.system is None or (named_word and not re.search(named_word, spec.request.lower())):
        return ""  # the engine was chosen by simagent, not named: computable_instead says what there is
    labels = {adapter.name: adapter.label for adapter in all_engines()}
    offers = []
    for engine in labels:
        if engine == spec.engine:
            continue
        trial = spec.model_copy(update={"engine": engine,
                                        "properties": [p for p in spec.properties if p.name in uncovered]})
        for protocol in all_protocols():
            sub = restrict(trial, list(protocol.properties))
            if protocol.engine == engine and sub.properties and protocol.applies_to(sub):
                offers.append(f"{', '.join(p.name for p in sub.properties)} with {labels[engine]} "
                              f"({protocol.name})")
    if not offers:
        return ""
    named = labels.get(spec.engine, spec.engine)
    return (f". simagent has no {named} route for {spec.system.name}; it computes {'; '.join(offers)}. "
            f"It does not run another engine in place of {named}: ask again naming that engine if it helps")


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
            + (other_engine_routes(spec, uncovered) or computable_instead(spec, uncovered))
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
