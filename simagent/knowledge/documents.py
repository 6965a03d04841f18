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
PASSAGE_VERSION = "title-summary-section-option-aliases-units/4"
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)+|[a-z][a-z0-9]*|[A-Z]?[a-z]+[A-Z][A-Za-z0-9]*")


# What an option's unit says about the option, in the words questions use ("how often", "which
# pressure"): an mdp entry reads "nstenergy: (1000) [steps] number of steps that elapse between ...".
UNIT_MEANINGS = {
    "steps": "how often, as an interval in steps", "ps": "a time in picoseconds",
    "fs": "a time in femtoseconds", "nm": "a distance in nanometers", "k": "a temperature in kelvin",
    "bar": "a pressure in bar", "bar-1": "a compressibility in 1/bar", "bar^-1": "a compressibility in 1/bar",
    "kj mol-1": "an energy", "kj mol-1 nm-1": "a force", "kj mol-1 nm-2": "a force constant",
    "amu ps-1": "a friction coefficient", "deg": "an angle in degrees", "nm ps-1": "a velocity",
    "nm/ps": "a velocity", "nm ps-2": "an acceleration", "e": "a charge",
}
_OPTION_VALUE = re.compile(r"^[\w-]+: (?:\(([^)]{1,40})\) )?\[([^\]]{1,20})\]")


def option_value_note(text: str) -> str:
    """'Its value is a pressure in bar (default 1).' for an option entry that states its unit."""
    match = _OPTION_VALUE.match(text)
    meaning = UNIT_MEANINGS.get(match.group(2).strip().lower()) if match else None
    if not meaning:
        return ""
    default = f" (default {match.group(1)})" if match.group(1) else ""
    return f" Its value is {meaning}{default}."


class Chunk(BaseModel):
    """One embedded passage. `heading` (document title > section) is prefixed to the text when
    embedding, so a passage that never names its topic is still found by it. A section named by a
    single identifier (a documented option or keyword: tau-t, nsteps) is also described as a setting,
    with the identifier's other spellings (tau_t, "tau t"): questions ask "which setting ...". A
    document's `summary` (what a tool page's program does) follows its title in every passage, so
    the options and examples of a program are found by what the program is for. An option entry that
    states its unit says what the unit means ("how often, as an interval in steps")."""

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
            heading = f"{heading}. The setting or parameter {name}{also}.{option_value_note(self.text)}"
            heading = heading.rstrip(".")
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
