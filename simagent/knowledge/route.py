"""Is a request a question for the sources (literature, manuals) rather than a simulation?

Rules, not a model: a request that asks what the literature/papers report, or how a program or
one of its options works, is answered from retrieved passages; a request that asks to compute,
simulate or run something stays a simulation request (even when it mentions the literature, e.g.
"compute ... and compare with the literature")."""

from __future__ import annotations

import re
from typing import Literal

QuestionKind = Literal["literature", "howto"]

_LITERATURE = re.compile(
    r"\b(literature|papers?|publications?|published|articles?|cite|citing|citations?|references?|"
    r"reported (in|by)|(studies|authors|experiments|reviews?) (say|report|find|found|show))\b",
    re.IGNORECASE)
_COMPUTE = re.compile(r"\b(compute|calculate|simulate|run|predict|estimate|determine|model|perform|carry out|"
                      r"do (an?|the) (md|mc|simulation|calculation))\b", re.IGNORECASE)
_HOW_TO_START = re.compile(r"^\W*(how (do|can|should|would|could|does) (i|you|one|we|gromacs|lammps|raspa)\b|"
                           r"how to\b|in which (file|section)|where do i)", re.IGNORECASE)
_MANUAL_THING = (r"(option|keyword|parameter|setting|flag|command|directive|fix|compute|pair[_ ]style|"
                 r"mdp|\.mdp|tool|program|utility|integrator|thermostat|barostat|coupling|algorithm|"
                 r"cut-?off scheme|scheme|ensemble|switch)")
_HOW_TO = [
    re.compile(r"\bwhat (does|do|is|are)\b.{0,80}\b(mean|control|controls|do|does|set|sets|specify|specifies|"
               r"determine|determines|govern|governs|affect|affects|stand for|used for|for)\s*\??\s*$",
               re.IGNORECASE),
    re.compile(r"\b(which|what)\s+(\w+\s+){0,2}" + _MANUAL_THING + r"s?\b.{0,80}\b(should|does|do|is|are|samples?|"
               r"gives?|generates?|produces?|to use|would|can|reproduces?|conserves?|controls?)\b", re.IGNORECASE),
    re.compile(r"\b(explain|difference between|differ from|documentation|the manual|purpose of|meaning of|"
               r"what is the role of|what is .{0,40} used for)\b", re.IGNORECASE),
    re.compile(r"\b(mdp (option|file|parameter|setting)s?|in an? mdp|gmx \w+|fix \w+|pair_style \w+)\b.*\?\s*$",
               re.IGNORECASE),
]


def question_kind(request: str) -> QuestionKind | None:
    """'literature', 'howto', or None (a simulation request, or not a question for the sources)."""
    text = " ".join(request.split())
    literature = bool(_LITERATURE.search(text))
    if _HOW_TO_START.search(text):
        return "literature" if literature else "howto"
    if _COMPUTE.search(text):
        return None
    if literature:
        return "literature"
    if any(rule.search(text) for rule in _HOW_TO):
        return "howto"
    return None
