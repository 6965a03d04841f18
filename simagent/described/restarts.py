"""Runs that start again from the state an earlier run saved to a restart file.

A protocol of several runs can share one restart file: the first run writes it, and each later run
starts from it rather than from the run before it (LAMMPS examples/relres compares pair styles so:
every run after the first clears LAMMPS and reads the first run's restart back). A text says so as
'four runs sharing one restart file' or 'each later run starts from the restart file the first run
writes'. Those runs get `Stage.restart_from` (the first run stage); the renderer writes the restart
after it and, before each of them, clears LAMMPS and reads it back (tools.lammps.described).

After `clear` nothing of the system's set-up is left but what the restart file holds, so such a run
is rendered only where the set-up is stated again for it: an installed example's system that restarts
its own runs the same way (ExampleSystem.restarts), whose lines for that run follow the read. Any
other restart structure is refused by name, never run as one continuous trajectory.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from simagent.described.model import SimulationDescription

RESTART_UNSUPPORTED = ("runs that start again from an earlier run's restart file, outside an installed LAMMPS "
                       "example that sets its system up again after the same restarts")
_RUNS = r"(?:runs?|simulations?|stages?|phases?|segments?)"
_LATER = r"(?:later|subsequent|following|other|remaining|next|further)"
# 'four runs sharing one restart file', 'a shared restart file', 'the runs use a common restart file'
_SHARED = re.compile(r"\b(?:shar(?:e|es|ed|ing)|common) (?:\w+ )?restart(?: files?)?\b|"
                     r"\brestart files?\b[^.;]{0,30}\b(?:shared|in common)\b")
# 'each later run starts from the restart file the first run writes', 'all subsequent runs are restarted from the
# state the first run saved'
_FROM_FIRST = re.compile(rf"\b(?:each|every|all|the) (?:of the )?(?:\w+ )?{_LATER} {_RUNS}\b[^.;]{{0,60}}?"
                         rf"\b(?:start|begin|restart|resume|read|continu)\w*\b[^.;]{{0,60}}?\bfirst (?:\w+ )?{_RUNS}|"
                         rf"\bfirst (?:\w+ )?{_RUNS}\b[^.;]{{0,30}}\b(?:writes|saves|stores|produces)\b[^.;]{{0,40}}"
                         rf"\brestart\b[^.;]{{0,60}}\b(?:each|every|all) (?:of the )?(?:\w+ )?{_LATER} {_RUNS}\b")


def read_restarts(desc: SimulationDescription, low: str) -> None:
    """Every run after the first starts from the first run's end state, when the text says the runs share the
    restart file the first one writes; refused by name unless an installed example restarts its runs the same
    way and sets its system up again for each of them."""
    hit = _SHARED.search(low) or _FROM_FIRST.search(low)
    runs = desc.run_stages()
    if hit is None or len(runs) < 2:
        return
    first = runs[0]
    for index in runs[1:]:
        desc.stages[index].restart_from = first
        desc.note(f"{desc.stages[index].name}.restart_from", "rules", f"{desc.stages[first].name}'s end state, "
                  f"saved to a restart file and read back ('{hit.group(0)}')")
    example = desc.example_system
    own = example.restarts if example is not None else {}
    if any(own.get(k) != 1 for k in range(1, len(runs))) and RESTART_UNSUPPORTED not in desc.unsupported:
        desc.unsupported.append(RESTART_UNSUPPORTED)
