"""Query agent: request text -> TaskSpec; a request that lacks critical information ends in a
clarification question (a LangGraph interrupt), never in a guess."""

from __future__ import annotations

from typing import Literal

from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt

from agents.screen_request import looks_like_screen
from simagent.backends.expert.domains.electronic import method_engine
from simagent.backends.expert.method_words import find as unsupported_words
from simagent.backends.expert.method_words import property_only
from simagent.backends.expert.reader import normalise
from simagent.capabilities import refusal, routes
from simagent.errors import SimagentError
from simagent.knowledge.route import question_kind
from simagent.models import Decision, TaskSpec
from simagent.state import RunContext, RunState

QUESTIONS = {
    "property": "Which property should be computed (e.g. lattice constant, cohesive energy, pressure, "
    "density, radial distribution function, self-diffusion coefficient)?",
    "system": "Which material or model system do you mean (e.g. 'fcc nickel', 'diamond silicon', "
    "'liquid argon', 'a Lennard-Jones fluid')?",
    "temperature": "At what temperature (e.g. '94.4 K', or 'T* = 0.85' in reduced units)?",
    "density": "At what density (e.g. '1.374 g/cm3', or 'rho* = 0.86' in reduced units)?",
}


def clarification_question(spec: TaskSpec) -> str:
    parts = []
    for item in spec.missing:
        if item == "structure":  # lists the candidates of an ambiguous framework name
            from simagent.materials.structures import structure_question

            parts.append(structure_question(spec.system.name if spec.system else None))
        else:
            parts.append(QUESTIONS.get(item, f"Please specify the {item}."))
    return " ".join(parts)


def query(state: RunState, runtime: Runtime[RunContext]) -> Command[Literal["clarify", "planner", "response",
                                                                            "knowledge", "screen"]]:
    if question_kind(state.request):  # literature / how-to: answered from the sources, nothing is run
        return Command(goto="knowledge")
    if looks_like_screen(state.request):  # many structures ranked by an uptake: the screening funnel
        return Command(goto="screen")
    backend = runtime.context.backend
    runtime.context.report("stage", name="query", detail="reading the request")
    try:
        spec = backend.task_spec(state.request)
    except SimagentError as err:
        return Command(goto="response", update={"error": str(err)})
    # A routing backend names the backend that actually read the request, e.g. "hybrid(local)",
    # and says why it routed it there.
    why = getattr(backend, "last_detail", "")
    decision = Decision(decision="task_spec", backend=backend.name,
                        detail=f"confidence {spec.confidence:.2f}" + (f"; {why}" if why else ""))
    update = {"spec": spec, "decisions": [*state.decisions, decision]}
    if not spec.unsupported:  # whichever backend read it, a word of method is never dropped
        # (a potential that a described run renders as written, e.g. with an installed engine example's
        # own files, is not missing)
        covered = {"potential"} if spec.described is not None else set()
        spec.unsupported = [u for u in unsupported_words(normalise(state.request))
                            if not (spec.properties and property_only(u)) and u.capability not in covered]
    named = method_engine(normalise(state.request).lower())
    if named and spec.engine != named:
        spec.engine = named  # the engine the method words name (DFT -> qe): only its protocols answer
    if spec.unsupported:
        # A capability that has landed takes the request (simagent.capabilities: its graph node);
        # otherwise it ends with what is not possible and the nearest thing simagent can do.
        for node in routes(spec):
            return Command(goto=node, update=update)
        return Command(goto="response", update={**update, "error": refusal(spec.unsupported)})
    if spec.missing:
        return Command(goto="clarify", update={**update, "question": clarification_question(spec)})
    return Command(goto="planner", update={**update, "question": None})


def clarify(state: RunState) -> Command[Literal["query"]]:
    """Ask the user; the reply is appended to the request and the query agent reads it again.
    Kept as its own node because resuming re-runs the node that called interrupt()."""
    reply = interrupt({"kind": "clarification", "question": state.question})
    return Command(goto="query", update={"request": f"{state.request}\n{reply}", "question": None})
