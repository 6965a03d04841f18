"""Multiple timestepping by rRESPA (LAMMPS run_style respa), as a text states it.

LAMMPS's `run_style respa N n1 ... n(N-1) keyword level ...` splits the forces over N levels: the
`timestep` is the outermost level's, each level k below it takes n_k steps per step of the level above,
and keywords put force kinds (pair, kspace, bond, ...) on levels; a kind not put anywhere stays at
LAMMPS's default level (LAMMPS manual, run_style). A text states the number of levels ('a two-level
r-RESPA scheme'), which forces go where ('pairwise forces at the inner level, k-space at the outer
one') and, sometimes, the loop factors ('two inner steps per outer step', 'an inner timestep
of 0.5 fs'). What it leaves out, a described example fills when its own run_style line has the same
levels and puts the stated forces where the text does (listed in report.md); otherwise the loop
factor is missing, never guessed.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from simagent.described.model import SimulationDescription

UNSUPPORTED_NAME = "run_style respa"  # simagent.described.reading.UNSUPPORTED's name for it

_WORDS = {"two": 2, "three": 3, "four": 4, "2": 2, "3": 3, "4": 4}
MENTION = re.compile(r"\br-?respa\b|\brrespa\b|\brespa\b|reversible reference system propagator")
_LEVELS = re.compile(r"\b(two|three|four|[234])[- ]level (?:r-?|rr)?respa\b|\b(?:r-?|rr)?respa\b[^.;]{0,40}?\b"
                     r"(two|three|four|[234]) (?:levels|timescales|time scales)\b")
# force kinds (run_style respa keywords) and the words a text names them by
KINDS = {
    "pair": r"short[- ]range|pair(?:wise)?|non-?bonded|real[- ]space",
    "kspace": r"k-?space|long[- ]range|reciprocal[- ]space|ewald|pppm",
    "bond": r"\bbond(?:ed|s)?\b(?! order)",  # not 'nonbonded
}
_LEVEL_WORD = (r"\bat (?:the )?(innermost|inner|outermost|outer|middle|first|second|third|fourth|\d)(?:st|nd|rd|th)?"
               r" (?:respa )?level|\bat (?:respa )?level (\d)")
_ORDINAL = {"first": 1, "second": 2, "third": 3, "fourth": 4}
_INNER_STEPS = re.compile(r"\b(\d+|two|three|four) inner (?:time ?)?steps? (?:per|for each|in each) outer|"
                          r"\bloop factor (?:of |= ?)?(\d+)|\binner time ?step of ([\d.]+)")


class Respa(BaseModel):
    """run_style respa: levels, loop factors (inner steps per step of the level above, outer first) and the
    level of each force kind a text or example puts somewhere."""

    levels: int = Field(ge=2, le=4)
    loops: list[int] = Field(default_factory=list, description="n1 ... n(levels-1), as LAMMPS's run_style")
    forces: dict[str, int] = Field(default_factory=dict, description="'pair' -> 1, 'kspace' -> 2")

    def command(self) -> str:
        assignments = " ".join(f"{kind} {level}" for kind, level in self.forces.items())
        return " ".join(["run_style respa", str(self.levels), *map(str, self.loops), assignments]).strip()


def _level(word: str | None, digit: str | None, levels: int) -> int | None:
    if digit:
        return int(digit)
    if word in ("inner", "innermost"):
        return 1
    if word in ("outer", "outermost"):
        return levels
    if word == "middle":
        return 2 if levels == 3 else None
    if word in _ORDINAL:
        return _ORDINAL[word]
    return int(word) if word and word.isdigit() else None


def stated_forces(part: str, levels: int) -> dict[str, int]:
    """The level each force kind is put on ('pairwise forces at the inner level' -> pair 1)."""
    out: dict[str, int] = {}
    for kind, words in KINDS.items():
        hit = re.search(rf"(?:{words})[^.;,]{{0,40}}?(?:{_LEVEL_WORD})", part)
        if hit is None:
            continue
        level_at = re.search(_LEVEL_WORD, hit.group(0))
        assert level_at is not None
        level = _level(level_at.group(1), level_at.group(2), levels)
        if level is not None and 1 <= level <= levels:
            out[kind] = level
    return dict(sorted(out.items(), key=lambda kv: list(KINDS).index(kv[0])))


def _stated_loops(part: str, levels: int, timestep: float | None) -> list[int] | None:
    hit = _INNER_STEPS.search(part)
    if hit is None or levels != 2:
        return None
    if hit.group(1) or hit.group(2):
        word = hit.group(1) or hit.group(2)
        return [int(word) if word.isdigit() else _WORDS[word]]
    inner = float(hit.group(3))
    if timestep is None or inner <= 0 or abs(timestep / inner - round(timestep / inner)) > 1e-6:
        return None
    return [round(timestep / inner)]


def _example_line(desc: SimulationDescription) -> tuple[Respa, str] | None:
    """The run_style respa line of the described example's own protocol, as a Respa, with its source."""
    example = desc.example_system
    if example is None:
        return None
    lines = [line.split() for line in example.protocol if re.match(r"run_style\s+respa\s", line.strip())]
    if len(lines) != 1:
        return None
    words = lines[0]
    try:
        levels = int(words[2])
        loops = [int(w) for w in words[3:2 + levels]]
        keys = words[2 + levels:]
        forces = {k: int(v) for k, v in zip(keys[::2], keys[1::2], strict=False) if k in ("pair", "kspace", "bond",
                                                                                            "angle", "dihedral",
                                                                                            "improper")}
    except (ValueError, IndexError):
        return None
    if len(loops) != levels - 1 or len(keys) != 2 * len(forces):  # inner/middle/outer/hybrid: not filled
        return None
    return Respa(levels=levels, loops=loops, forces=forces), f"{example.name} ({example.input})"


def read_respa(desc: SimulationDescription, low: str) -> None:
    """A text's rRESPA (after the example system is known, whose own run_style may fill the loop factor)."""
    mention = MENTION.search(low)
    if mention is None:
        return
    start = low.rfind(". ", 0, mention.start()) + 1
    end = low.find(". ", mention.end())
    part = low[start:end if end >= 0 else len(low)]
    levels_at = _LEVELS.search(part)
    if levels_at is None:
        desc.missing.append("the number of RESPA levels (run_style respa N)")
        return
    levels = _WORDS[levels_at.group(1) or levels_at.group(2)]
    forces = stated_forces(part, levels)
    loops = _stated_loops(part, levels, desc.timestep)
    example = _example_line(desc)
    fits = example is not None and example[0].levels == levels and all(
        example[0].forces.get(kind) == level for kind, level in forces.items())
    if loops is None and fits:
        assert example is not None
        loops = example[0].loops
        desc.note("respa.loops", "default", f"{' '.join(map(str, loops))}: not stated; the loop factor of LAMMPS "
                  f"example {example[1]}'s run_style respa, whose system the text describes")
    if loops is None:
        desc.missing.append("the RESPA loop factor (inner steps per outer step; run_style respa N n1 ...)")
        return
    if any(n < 1 for n in loops):
        desc.missing.append(f"the RESPA loop factor (at least 1 inner step per outer step; the text states "
                            f"{' '.join(map(str, loops))})")
        return
    if fits:
        assert example is not None
        unstated = {k: v for k, v in example[0].forces.items() if k not in forces}
        if unstated:
            desc.note("respa.forces", "default", f"{' '.join(f'{k} {v}' for k, v in unstated.items())}: not stated; "
                      f"LAMMPS example {example[1]}'s levels")
        forces = {**forces, **unstated}
    desc.respa = Respa(levels=levels, loops=loops, forces=forces)
    desc.note("respa", "rules", f"{part.strip()[:160]}: {levels} levels; "
              + (", ".join(f"{k} at level {v}" for k, v in forces.items()) or "forces at LAMMPS's default levels")
              + "; the timestep is the outermost level's, as LAMMPS's run_style respa takes it")
    if UNSUPPORTED_NAME in desc.unsupported:
        desc.unsupported.remove(UNSUPPORTED_NAME)
