"""What the knowledge base holds: documents cut into sections (loaders), sections cut into chunks
(chunking), chunks found by a search (hits). Plain typed records; no I/O here."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from simagent.errors import SimagentError

SourceKind = Literal["literature", "manual", "notes"]


class CorpusError(SimagentError):
    """A file cannot be added to the knowledge base (unreadable, empty, unknown format)."""


class Section(BaseModel):
    """A titled stretch of a document's text; `page` is the 1-based page where it starts (PDFs)."""

    title: str = ""
    text: str
    page: int | None = None
    anchor: str | None = Field(default=None, description="fragment id inside the source (HTML)")


class Document(BaseModel):
    source: str = Field(description="path or URI the text came from (the citation key)")
    title: str
    kind: SourceKind = "literature"
    authors: list[str] = Field(default_factory=list)
    doi: str | None = None
    year: str | None = None
    summary: str | None = Field(default=None, description="what the document is for, in one sentence "
                                "(a gmx tool page's purpose); embedded with every passage")
    sections: list[Section] = Field(default_factory=list)

    @property
    def n_chars(self) -> int:
        return sum(len(s.text) for s in self.sections)


# what `Chunk.embedding_text` adds to a passage (part of the index settings hash: changing it rebuilds)
PASSAGE_VERSION = "title-summary-section-option-aliases/3"
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)+|[a-z][a-z0-9]*|[A-Z]?[a-z]+[A-Z][A-Za-z0-9]*")


class Chunk(BaseModel):
    """One embedded passage. `heading` (document title > section) is prefixed to the text when
    embedding, so a passage that never names its topic is still found by it. A section named by a
    single identifier (a documented option or keyword: tau-t, nsteps) is also described as a setting,
    with the identifier's other spellings (tau_t, "tau t"): questions ask "which setting ...". A
    document's `summary` (what a tool page's program does) follows its title in every passage, so
    the options and examples of a program are found by what the program is for."""

    text: str
    section: str = ""
    page: int | None = None
    anchor: str | None = None

    def embedding_text(self, doc_title: str, summary: str | None = None) -> str:
        title = f"{doc_title} ({summary})" if doc_title and summary else doc_title
        heading = " > ".join(part for part in (title, self.section) if part)
        name = self.section.rsplit(" > ", 1)[-1].strip()
        if " > " in self.section and _IDENTIFIER.fullmatch(name):
            parts = re.split(r"[-_]", name)
            spellings = sorted({"-".join(parts), "_".join(parts), " ".join(parts)} - {name})
            also = f" (also written {', '.join(spellings)})" if spellings else ""
            heading = f"{heading}. The setting or parameter {name}{also}"
        return f"{heading}: {self.text}" if heading else self.text


class Hit(BaseModel):
    """A retrieved passage with everything a citation needs."""

    score: float = Field(description="cosine similarity of query and passage, -1..1")
    text: str
    source: str
    title: str
    kind: SourceKind
    section: str = ""
    page: int | None = None
    anchor: str | None = None
    doi: str | None = None
    authors: list[str] = Field(default_factory=list)
    index: str = Field(default="", description="which index it came from: bundled | user")
