"""Structure node of the graph (optional: query -> structure -> planner): the framework choice as a
recorded Decision, a bad or ambiguous structure caught before planning. The library it uses (names,
CoRE MOF 2019, CIF checks) is simagent.materials.structures.
"""

from __future__ import annotations

from typing import Literal

from langgraph.runtime import Runtime
from langgraph.types import Command

from simagent.errors import RequestError
from simagent.materials.structures import AmbiguousStructure, Purpose, checked, resolve, structure_question
from simagent.models import Decision
from simagent.state import RunContext, RunState


def geometry_properties() -> frozenset[str]:
    """Properties the pore-geometry protocol computes (no energies involved)."""
    from simagent.protocols import get_protocol

    try:
        return frozenset(get_protocol("zeopp/pore_geometry").properties)
    except (KeyError, RequestError):
        return frozenset()


def structure_node(state: RunState, runtime: Runtime[RunContext]) -> Command[Literal["planner", "clarify", "response"]]:
    """Resolve and check the framework(s) of a framework request; other requests pass through."""
    spec = state.spec
    if spec is None or spec.system is None or spec.system.kind != "framework" or not spec.system.structure:
        return Command(goto="planner")
    runtime.context.report("stage", name="structure", detail=spec.system.structure)
    details = []
    purpose: Purpose = "geometry" if spec.properties and {p.name for p in spec.properties} <= geometry_properties() \
        else "energy"
    try:
        for ref in [r.strip() for r in spec.system.structure.split(";") if r.strip()]:
            resolved = resolve(ref)
            report, _structure = checked(resolved, purpose)
            details.append(f"{resolved.name}: {report.n_atoms} atoms, {report.formula}"
                           + (f" (warnings: {'; '.join(report.warnings)})" if report.warnings else ""))
    except AmbiguousStructure as err:
        return Command(goto="clarify", update={"question": structure_question(err.query)})
    except RequestError as err:
        return Command(goto="response", update={"error": str(err)})
    decision = Decision(decision="structure", backend="structure agent", detail="; ".join(details))
    return Command(goto="planner", update={"decisions": [*state.decisions, decision]})
