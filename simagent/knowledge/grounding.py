"""Retrieved passages as context for the LLM decision backends (repairs, open-ended choices): the
manual section that explains a failed command, the protocol note behind a default. Best effort:
no index built, or nothing relevant, gives an empty list, never an error."""

from __future__ import annotations

import logging
from functools import cache

from simagent.knowledge import answer, library

log = logging.getLogger(__name__)
PASSAGE_CHARS = 600


@cache
def _knowledge_base() -> library.KnowledgeBase:
    return library.KnowledgeBase()


def passages(query: str, k: int = 3, kb: library.KnowledgeBase | None = None) -> list[dict[str, str]]:
    """Up to k relevant passages as {"cite", "text"} (manuals and notes; the user's papers too)."""
    try:
        kb = kb or _knowledge_base()
        if not kb.usable():
            return []
        hits = answer.select(kb.search(query, k=k * 2), library.RELEVANCE_THRESHOLD, k)
    except Exception as err:  # grounding must never break a repair
        log.warning("no retrieved passages for the LLM: %s", err)
        return []
    return [{"cite": answer.reference(answer.citation(n, h)), "text": answer.quote(h.text, PASSAGE_CHARS)}
            for n, h in enumerate(hits, start=1)]
