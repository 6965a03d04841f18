"""Knowledge agent: a literature or how-to question is answered from retrieved passages (bundled
manuals and notes, the user's papers), cited as [n]; no simulation is planned."""

from __future__ import annotations

from typing import Literal

from langgraph.runtime import Runtime
from langgraph.types import Command

from simagent.errors import SimagentError
from simagent.knowledge import answer, library
from simagent.knowledge.route import question_kind
from simagent.models import Decision
from simagent.state import RunContext, RunState


def knowledge_base(runtime: Runtime[RunContext]) -> library.KnowledgeBase:
    kb = runtime.context.extra.get("knowledge_base")
    if kb is None:
        kb = runtime.context.extra["knowledge_base"] = library.KnowledgeBase()
    return kb


def knowledge(state: RunState, runtime: Runtime[RunContext]) -> Command[Literal["response"]]:
    kind = question_kind(state.request) or "howto"
    runtime.context.report("stage", name="knowledge", detail=f"searching the sources ({kind} question)")
    kb = knowledge_base(runtime)
    try:
        # literature questions are answered from papers only, not from manuals or simagent's notes
        hits = kb.search(state.request, k=10, kinds={"literature"} if kind == "literature" else None)
    except SimagentError as err:
        return Command(goto="response", update={"error": str(err)})
    grounded = answer.compose(state.request, hits, library.RELEVANCE_THRESHOLD, literature=kind == "literature",
                              limit=5 if kind == "literature" else 3)
    problems = kb.problems()
    if not kb.usable():
        problems.append("no knowledge index is built (run `make setup`, or add papers with `simagent rag add`)")
    summary = grounded.summary + ("".join(f"\nNote: {p}." for p in problems))
    decision = Decision(decision="knowledge", backend="retrieval",
                        detail=f"{kind} question; {len(grounded.citations)} passages cited"
                        + (f"; best score {grounded.best_score:.2f}" if grounded.best_score is not None else ""))
    update = {"knowledge": summary, "citations": grounded.citations, "decisions": [*state.decisions, decision]}
    if not grounded.found:
        update["error"] = "no relevant passage found in the indexed sources"
    return Command(goto="response", update=update)
