"""A repeated box scaling in a described simulation: the box edge along one or more axes multiplied by a
factor, the atoms remapped with it, then a run; the pair repeated a stated number of times (a stepwise
compression or expansion).

`BoxScale` is what a stage does at its start (LAMMPS `change_box all x scale F remap`); the loop is unrolled
into that many stages, each with its own scaling and run (no `jump`/`loop` in the input). The thermostat and
barostat in force keep running through the loop (`Stage.keep_fixes`: the same fixes, their state carried
over), as a loop around `change_box` and `run` would keep them.

`read_box_scaling(desc, low)` reads it: one sentence states the scaling (a scaling word, the box, the axis,
the factor) together with how often it is repeated (N cycles / times / iterations, or 'repeated N times');
the run that follows each scaling is the run stage the reading made from that sentence or the next one,
when that sentence says it follows every scaling ('each ... followed by', 'after every', 'then'). A single
scaling, or a factor with no repetition, is not this loop (the text stays refused as a box deformation).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from simagent.backends.expert.protocol_text import NUM

if TYPE_CHECKING:
    from simagent.described.model import SimulationDescription

DEFORM_NAME = "box or flow deformation"  # the generic refusal (simagent.described.reading.UNSUPPORTED)


class BoxScale(BaseModel):
    """Box edges along `axes` multiplied by `factor` at a stage's start, atom positions remapped."""

    axes: str = Field(pattern=r"^[xyz]{1,3}$")
    factor: float = Field(gt=0)
    remap: Literal[True] = True


_WORD_COUNTS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
                "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "hundred": 100}
_COUNT = r"(\d+|" + "|".join(_WORD_COUNTS) + r")"
_SCALE = re.compile(r"\b(?:scal\w*|rescal\w*|shrink\w*|shrunk|compress\w*|multipl\w*|stretch\w*|expand\w*|dilat\w*)\b")
_BOX = re.compile(r"\b(?:box|simulation cell|periodic cell|cell (?:length|edge))")
_AXIS = re.compile(r"\b(?:along|in|of) (?:the )?([xyz])(?:\s*(?:and|,)\s*([xyz]))?(?:[- ](?:direction|axis|dimension))?"
                   r"\b|\b([xyz])[- ](?:direction|axis|dimension|length|edge)\b|\bbox length in ([xyz])\b")
_FACTOR = re.compile(r"\b(?:by )?(?:a )?(?:scale |scaling )?factor(?: of| =|:)?\s*" + NUM + r"|\bby " + NUM
                     + r"(?!\s*(?:%|percent|angstrom|a\b|nm|steps?))")
_REPEAT = re.compile(r"\b(?:over|for|in|during|through) " + _COUNT + r" (?:successive |consecutive )?(?:cycles|"
                     r"iterations|"
                     r"rounds|repetitions|increments|times)\b|\b(?:repeat(?:ed|ing)?|do(?:ne)?|perform(?:ed)?|appl(?:y|ied))"
                     r"[^.;]{0,20}?\b" + _COUNT + r" times\b|\b" + _COUNT + r" times\b|\b" + _COUNT
                     + r" (?:successive |consecutive )(?:scalings|compressions|steps)\b")
_EACH = re.compile(r"\b(?:each|every|after (?:each|every))\b|\bfollowed by\b|\bthen\b|\bin between\b")
# words of another kind of deformation: with them the generic refusal stays
_OTHER_DEFORMATION = re.compile(r"shear|strain rate|\berate\b|fix deform|velocity (?:ramp|gradient)|\bramp|\btensile|"
                                r"/\s*(?:ps|fs|ns|s)\b|per (?:ps|fs|ns|second|picosecond)|\bconstant (?:rate|speed)")


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _WORD_COUNTS[word]


def scaling_statement(sentence: str) -> tuple[BoxScale, int, str] | None:
    """(the scaling, how many times, the words) a sentence states; None unless it states all of them."""
    scale, box = _SCALE.search(sentence), _BOX.search(sentence)
    axis, factor, repeat = _AXIS.search(sentence), _FACTOR.search(sentence), _REPEAT.search(sentence)
    if not (scale and box and axis and factor and repeat):
        return None
    axes = "".join(sorted({a for a in axis.groups() if a}))
    value = float(factor.group(1) or factor.group(2))
    times = _count(next(g for g in repeat.groups() if g))
    if times < 2 or value <= 0 or value == 1.0:
        return None
    return BoxScale(axes=axes, factor=value), times, f"{axis.group(0)}; {factor.group(0)}; {repeat.group(0)}"


def read_box_scaling(desc: SimulationDescription, low: str) -> None:
    """Unroll a stated scaling loop into stages (see the module docstring). Leaves desc untouched when the text
    states none, or when the run after each scaling is not the one run stage of the loop's sentences."""
    sentences = re.split(r"(?<=[.;])\s+", low)
    for n, sentence in enumerate(sentences):
        found = scaling_statement(sentence)
        if found is None:
            continue
        scale, times, words = found
        loop = [s for s in (sentence, *sentences[n + 1:n + 2]) if _EACH.search(s) or s is sentence]
        index = [i for i, st in enumerate(desc.stages) if st.kind == "run" and any(
            st.evidence == s[:160] for s in loop)]
        if len(index) != 1:
            desc.missing.append(f"the run after each box scaling ('{words}': the run that follows every scaling is "
                                "not stated, or not as one run)")
            return
        _unroll(desc, index[0], scale, times, words)
        if not _OTHER_DEFORMATION.search(low):
            desc.unsupported = [u for u in desc.unsupported if u != DEFORM_NAME]
        return


def _unroll(desc: SimulationDescription, index: int, scale: BoxScale, times: int, words: str) -> None:
    run = desc.stages[index]
    previous = desc.stages[index - 1] if index > 0 else None
    stages = []
    for k in range(1, times + 1):
        keep = k > 1 or (previous is not None and previous.kind == "run" and previous.dynamics == run.dynamics
                         and previous.deform is None and previous.shear is None)
        stages.append(run.model_copy(update={"name": f"scale{k}", "scale_box": scale, "keep_fixes": keep,
                                             "reset_timestep": run.reset_timestep and k == 1}, deep=True))
    desc.stages[index:index + 1] = stages
    if desc.average_stage is not None and desc.average_stage > index:
        desc.average_stage += times - 1
    desc.note("scale_box", "rules", f"{words}: {times} x (change_box {scale.axes} scale {scale.factor:g} remap, then "
              f"a {run.steps}-step run)")
    if any(s.keep_fixes for s in stages):
        desc.note("scale_box.fixes", "default", "kept: the thermostat and barostat in force continue through the "
                  "loop (the same fix, its state carried over from one run to the next), as in a loop around "
                  "change_box and run")
    last = index + times - 1
    if last == desc.run_stages()[-1] and desc.average_stage is not None:  # the loop ends the protocol
        desc.average_from, desc.average_stage = index, last
        desc.note("average_stage", "default", f"stages {index + 1}-{last + 1} (the {times} scaling cycles, "
                  f"{times * run.steps} steps): the text states no averaging window; the metrics are asked of the "
                  "system under this deformation, and what precedes the loop prepares it (its equilibration)")
