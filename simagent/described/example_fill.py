"""Filling what a text leaves out from the LAMMPS example whose setup it states: the one way.

Many task texts retell an example shipped with LAMMPS and drop some of its numbers (a seed, the
pair coefficients, "a constant lateral velocity" with no value). An `Example` is a name, the numbers
that identify it (`signature`) and the values it fills (`fills`). A text identifies it when it states
every signature number and each equals the example's at the precision the text gives (2.83 is the
example's 2.828427; 2 is not its 2.5); then, and only then, the example fills what the text leaves
out, and every filled value is listed for report.md with its source (`Fill.note`). A value the text
states always wins over the example's (`Fill.departures` lists the differences). A signature number
that differs, or a number in the text that no rule reads (`StatedNumbers.unread`), stops the fill,
and `Comparison.named` says which.

Readers state what they read as a mapping key -> value (None: not stated); values are numbers,
words, or tuples of them. `StatedNumbers` is the ledger for readers that take numbers from the
text itself, so that an unread number can stop a fill.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from simagent.described.model import SimulationDescription

NUM = r"(-?\d+(?:\.\d+)?)"
Stated = float | int | str | tuple | None
_COUNT_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5}


def decimals(x: float) -> int:
    """How many decimals a stated number was given with (2.83 -> 2, 16.0 -> 0)."""
    text = f"{float(x):.10g}"  # float noise (0.30000000000000004) is not precision the text gave
    return len(text.split(".")[1]) if "." in text and "e" not in text else 0


def agrees(stated: Stated, example: Stated) -> bool:
    """A stated value equals the example's: words exactly; numbers at the precision the text states
    them (within half a unit of the stated number's last decimal, and within 1 %: "2.83" is 2.828427,
    "2" is not 2.5), tuples element by element."""
    if isinstance(example, tuple):
        return isinstance(stated, tuple) and len(stated) == len(example) and all(
            agrees(s, e) for s, e in zip(stated, example, strict=True))
    if isinstance(example, str) or isinstance(stated, str | tuple) or stated is None:
        return stated == example
    gap = abs(float(stated) - float(example))
    return gap <= 0.5 * 10.0 ** -decimals(stated) * (1 + 1e-9) and gap <= 0.01 * abs(float(example)) + 1e-12


def _said(value: Stated) -> str:
    if isinstance(value, tuple):
        return " ".join(_said(v) for v in value)
    return f"{value:.10g}" if isinstance(value, float) else str(value)


class Comparison(BaseModel):
    """How the stated numbers compare with one example's signature."""

    example: str
    agree: dict[str, Stated] = Field(default_factory=dict)
    differ: dict[str, tuple[Stated, Stated]] = Field(default_factory=dict)  # key -> (stated, the example's)
    absent: list[str] = Field(default_factory=list)  # signature keys the text does not state
    unread: list[str] = Field(default_factory=list)  # numbers in the text no rule reads

    @property
    def signature_agrees(self) -> bool:
        return not self.differ and not self.absent

    @property
    def identified(self) -> bool:
        return self.signature_agrees and not self.unread

    @property
    def retold(self) -> bool:
        """Most of the signature is stated and agrees: the text retells the example (so a difference
        is worth naming), though it may not be it."""
        return bool(self.agree) and 2 * len(self.agree) >= len(self.agree) + len(self.differ) + len(self.absent)

    def named(self) -> str:
        """Why the example does not fill: the stated numbers that differ, those no rule reads."""
        parts = [f"the text states {k} {_said(s)}" + (f" where {self.example} has {_said(e)}" if e is not None
                                                       else f", which {self.example} does not have")
                 for k, (s, e) in self.differ.items()]
        if self.unread:
            parts.append(f"the numbers {', '.join(self.unread)} are stated, not understood")
        return f"not filled from {self.example}: " + "; ".join(parts)


class Example(BaseModel):
    """A LAMMPS example: `name` (as report.md cites it), the numbers that identify it (`signature`:
    all stated; `optional`: compared where stated), the values it fills (free-form per example; the
    filling code picks them), and its run settings (`runs`: what a text usually restates, its own
    value winning)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    name: str
    signature: dict[str, Any]
    optional: dict[str, Any] = Field(default_factory=dict)
    fills: dict[str, Any] = Field(default_factory=dict)
    runs: dict[str, Any] = Field(default_factory=dict)

    def compare(self, stated: Mapping[str, Stated], *, unread: list[str] | None = None,
                extra_ok: tuple[str, ...] = ()) -> Comparison:
        """Each signature key against `stated`; a key stated that the signature lacks (another
        setup number the example does not have) differs too, unless it is in `extra_ok`."""
        out = Comparison(example=self.name, unread=list(unread or []))
        for key, want in (self.signature | self.optional).items():
            have = stated.get(key)
            if have is None:
                if key in self.signature:
                    out.absent.append(key)
            elif agrees(have, want):
                out.agree[key] = have
            else:
                out.differ[key] = (have, want)
        for key, have in stated.items():
            if have is not None and key not in self.signature and key not in self.optional and key not in extra_ok:
                out.differ[key] = (have, None)
        return out

    def fill(self, desc: SimulationDescription, comparison: Comparison, *, describe: str | None = None) -> Fill | None:
        """The fill, when the text identifies this example; else None. Numbers of a text stating the
        whole signature that no rule reads are named missing (the text says something this reading
        does not understand); a retold example's differences are named in report.md (never a silent
        near-match)."""
        if comparison.identified:
            return Fill(example=self, desc=desc, describe=describe if describe is not None else ", ".join(
                f"{k} {_said(v)}" for k, v in comparison.agree.items()))
        if comparison.signature_agrees:
            desc.missing.append(f"what the numbers {', '.join(comparison.unread)} are (stated, not understood)")
        elif comparison.retold and comparison.differ:
            desc.note(f"example.{self.key}", "rules", comparison.named())
        return None

    @property
    def key(self) -> str:
        return re.sub(r"\W+", "_", self.name.removeprefix("LAMMPS examples/").split(" ")[0]).strip("_").lower()


class Fill:
    """Filling a description from an identified example; every value filled is listed (source
    'default', naming the example and what identified it)."""

    def __init__(self, example: Example, desc: SimulationDescription, describe: str) -> None:
        self.example, self.desc, self.describe = example, desc, describe

    @property
    def why(self) -> str:
        identified = f" ({self.describe})" if self.describe else ""
        return f"not stated; {self.example.name}'s, whose setup the text states{identified}"

    def note(self, field: str, value: str) -> None:
        """List one filled value: 'value: not stated; <example>'s, whose setup the text states (...)'."""
        self.desc.note(field, "default", f"{value}: {self.why}")

    def departures(self, stated: Mapping[str, Stated], field: str = "example.departures") -> dict[str, Stated]:
        """The run settings the text states that are not the example's: they are run (a stated value
        wins), and report.md says so. Returns them."""
        differ = {k: v for k, v in stated.items() if k in self.example.runs and v is not None
                  and not agrees(v, self.example.runs[k])}
        if differ:
            self.desc.note(field, "rules", "; ".join(
                f"the stated {k} {_said(v)} {'is' if k != 'steps' else 'are'} run, not {self.example.name}'s "
                f"{_said(self.example.runs[k])}" for k, v in differ.items()) + " (a stated number wins over the "
                "example's)")
        return differ


class StatedNumbers:
    """The numbers a text states, read by role (`take`, `count`, `mark`); remembers which numbers
    were read, so that one no rule reads (`unread`) can stop a fill."""

    def __init__(self, low: str) -> None:
        self.low = low
        self.read: dict[str, tuple[object, str]] = {}
        self.spans: list[tuple[int, int]] = []

    def take(self, key: str, pattern: str, convert: Callable[[str], Any] = float,
             groups: tuple[int, ...] = (1,)) -> Any:
        hit = re.search(pattern, self.low)
        if not hit:
            return None
        values = []
        for g in groups:
            if hit.group(g) is None:
                continue
            self.spans.append(hit.span(g))
            values.append(convert(hit.group(g)))
        value = values[0] if len(values) == 1 else tuple(values)
        self.read[key] = (value, hit.group(0))
        return value

    def count(self, key: str, pattern: str) -> re.Match | None:
        """A count said in digits or in words ('four species', '2 regions'): group 1 of `pattern`."""
        hit = re.search(pattern, self.low)
        if hit:
            word = hit.group(1)
            if word.isdigit():
                self.spans.append(hit.span(1))
            self.read[key] = (int(word) if word.isdigit() else _COUNT_WORDS[word], hit.group(0))
        return hit

    def mark(self, key: str, pattern: str) -> None:
        """Numbers that say nothing about the system (a dump interval): read, not used."""
        for hit in re.finditer(pattern, self.low):
            self.spans.append(hit.span(1))
            self.read[key] = (hit.group(1), hit.group(0))

    def unread(self) -> list[str]:
        out = []
        for hit in re.finditer(r"(?<![\w.])-?\d+(?:\.\d+)?(?![a-z\d])", self.low):
            if not any(a <= hit.start() < b for a, b in self.spans):
                out.append(hit.group(0))
        return out

    def value(self, key: str) -> Any:
        return self.read[key][0] if key in self.read else None

    def said(self, key: str) -> str:
        return self.read[key][1]
