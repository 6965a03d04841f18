"""Retrieved passages -> an answer that quotes them and cites each as [n].

Extractive on purpose: every sentence of the summary is either a quotation with its citation or a
statement of where it comes from; nothing is paraphrased into a number that no source holds.
Quoted literature values are labelled as literature, never as computed results."""

from __future__ import annotations

from pydantic import BaseModel

from simagent.knowledge.documents import Hit
from simagent.models import Citation

QUOTE_CHARS = 420
PER_SOURCE = 2


class Grounded(BaseModel):
    found: bool
    summary: str
    citations: list[Citation]
    best_score: float | None = None


def select(hits: list[Hit], threshold: float, limit: int) -> list[Hit]:
    """Relevant hits (cosine score at least `threshold`) in the order given (search ranks them),
    at most PER_SOURCE passages from one source."""
    chosen: list[Hit] = []
    per_source: dict[str, int] = {}
    for hit in hits:
        if hit.score < threshold or per_source.get(hit.source, 0) >= PER_SOURCE:
            continue
        chosen.append(hit)
        per_source[hit.source] = per_source.get(hit.source, 0) + 1
        if len(chosen) == limit:
            break
    return chosen


def citation(key: int, hit: Hit) -> Citation:
    return Citation(key=key, source=hit.source, title=hit.title, section=hit.section, page=hit.page,
                    text=hit.text, kind=hit.kind, doi=hit.doi, authors=hit.authors, score=round(hit.score, 3))


def quote(text: str, limit: int = QUOTE_CHARS) -> str:
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = max(flat.rfind(". ", 0, limit), flat.rfind("; ", 0, limit))
    return flat[:cut + 1] if cut > limit // 2 else flat[:limit].rsplit(" ", 1)[0] + " ..."


def reference(c: Citation) -> str:
    """'Title, section, p. 3 (Smith et al.; doi:...)'."""
    who = ""
    if c.authors:
        who = c.authors[0].split()[-1] + (" et al." if len(c.authors) > 1 else "")
    parts = [c.title]
    if c.section:
        parts.append(c.section.split(" > ")[-1] if len(c.section) > 80 else c.section)
    if c.page:
        parts.append(f"p. {c.page}")
    extra = "; ".join(x for x in (who, f"doi:{c.doi}" if c.doi else "") if x)
    return ", ".join(parts) + (f" ({extra})" if extra else "")


def compose(question: str, hits: list[Hit], threshold: float, literature: bool = False,
            limit: int = 3) -> Grounded:
    best = max((h.score for h in hits), default=None)
    chosen = select(hits, threshold, limit)
    if not chosen:
        score = f" (best match {best:.2f}, below the relevance threshold {threshold:.2f})" if best is not None else ""
        what = "paper in your library" if literature else "passage in the indexed sources"
        summary = (f"No {what} answers this question{score}. The bundled sources are the GROMACS manual and "
                   "simagent's own method notes (no literature); add papers or manuals with "
                   "`simagent rag add PATH`.")
        return Grounded(found=False, summary=summary, citations=[], best_score=best)
    citations = [citation(n, h) for n, h in enumerate(chosen, start=1)]
    lines = []
    if literature or any(c.kind == "literature" for c in citations):
        lines.append("From the sources (quoted literature, not computed by simagent):")
    for c in citations:
        lines.append(f"[{c.key}] {reference(c)}: \"{quote(c.text)}\"")
    if not literature and citations[0].kind == "manual":
        lines.append("(Passages from the installed manual; check the manual of the version you run.)")
    return Grounded(found=True, summary="\n".join(lines), citations=citations, best_score=best)

