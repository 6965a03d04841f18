"""Sections -> passages small enough for the embedding model.

all-MiniLM-L6-v2 reads at most 256 word pieces (~1,000 characters of English); longer text is
truncated silently, so chunks stay under `chunk_size` characters. A chunk never crosses a section
(or, in a PDF, a page): its citation names one section and one page. Text is cut at paragraph
breaks, then sentences, then words; consecutive chunks of a section share about `overlap` characters."""

from __future__ import annotations

import re

from simagent.knowledge.documents import Chunk, Document

SPLITTER_VERSION = "sections-paragraphs-sentences/1"
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")


def _units(text: str, size: int) -> list[str]:
    """Paragraphs, with any paragraph longer than `size` split into sentences, then words."""
    units: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        if len(paragraph) <= size:
            units.append(paragraph)
            continue
        for sentence in _SENTENCE.split(paragraph):
            while len(sentence) > size:
                cut = sentence.rfind(" ", 0, size)
                cut = cut if cut > size // 2 else size
                units.append(sentence[:cut].strip())
                sentence = sentence[cut:].strip()
            if sentence:
                units.append(sentence)
    return units


def split_text(text: str, size: int, overlap: int) -> list[str]:
    """Pack units greedily up to `size` characters; each new chunk repeats the tail units of the
    previous one that fit in `overlap` characters."""
    chunks: list[str] = []
    current: list[str] = []
    length = 0
    for unit in _units(text, size):
        if current and length + len(unit) + 1 > size:
            chunks.append("\n".join(current))
            carried: list[str] = []
            carried_len = 0
            for previous in reversed(current):
                if carried_len + len(previous) + 1 > overlap:
                    break
                carried.insert(0, previous)
                carried_len += len(previous) + 1
            if carried_len + len(unit) + 1 > size:
                carried, carried_len = [], 0
            current, length = carried, carried_len
        current.append(unit)
        length += len(unit) + 1
    if current:
        chunks.append("\n".join(current))
    return chunks


def chunk_document(doc: Document, size: int, overlap: int) -> list[Chunk]:
    return [Chunk(text=piece, section=section.title, page=section.page, anchor=section.anchor)
            for section in doc.sections for piece in split_text(section.text, size, overlap)]
