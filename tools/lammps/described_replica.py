"""Parallel replica dynamics (simagent.described.replica) rendered for LAMMPS, and its output read back.

The PRD stage keeps the fixes of its dynamics (the thermostat in force) and runs `prd` instead of `run`,
with the event check (compute event/displace) and, when stated, the coordination compute. LAMMPS's prd
needs atoms mapped by ID and never re-sorted (atom_modify map array, sort 0 0.0), set before the box.

Each replica runs on its own partition and writes its own log (log.lammps.K): the whole input before the
prd command (every replica runs it alike), then the prd loop's blocks in order: quench minimisations
(velocities untouched, so their temperature column never changes), dephasing runs (t_dephase steps after
each velocity randomisation) and the dynamics (t_event steps between event checks, also while correlated
events are searched for). The dynamics blocks are the run LAMMPS counts as the stage's N steps: the
averaged stage's thermo rows are theirs, each block without its first row (the state it starts from,
printed already at the end of the block before), pooled over the replicas.
"""

from __future__ import annotations

import re

import numpy as np

from simagent.described.model import SimulationDescription, Stage
from simagent.errors import ReadError
from tools.lammps.parse import parse_thermo

EVENT_COMPUTE = "prdevent"
COORD_COMPUTE = "prdcoord"


def uses_prd(desc: SimulationDescription) -> bool:
    return any(s.prd is not None for s in desc.stages)


def preamble(desc: SimulationDescription) -> list[str]:
    """Before the box: atoms mapped by ID, no spatial sorting (prd refuses sorting)."""
    return ["atom_modify     map array", "atom_modify     sort 0 0.0"] if uses_prd(desc) else []


def removal_lines(stage: Stage, index: int) -> list[str]:
    """The atoms the stage starts without (delete_atoms by ID)."""
    if not stage.delete_ids:
        return []
    group = f"removed{index + 1}"
    return [f"group           {group} id {' '.join(str(i) for i in stage.delete_ids)}",
            f"delete_atoms    group {group}"]


def prd_lines(stage: Stage) -> list[str]:
    """The computes prd uses and the prd command (in place of `run`)."""
    prd = stage.prd
    assert prd is not None
    lines = [f"compute         {EVENT_COMPUTE} all event/displace {prd.displacement:g}"]
    if prd.coordination_cutoff is not None:
        lines.append(f"compute         {COORD_COMPUTE} all coord/atom cutoff {prd.coordination_cutoff:g}")
    return lines + [prd.command(EVENT_COMPUTE)]


def dynamics_block(texts: list[str], t_event: int) -> tuple[dict[str, np.ndarray], dict[str, int]]:
    """The PRD dynamics rows of every replica log, pooled into one thermo block, and how many blocks
    each replica contributed ('replica K' -> count). A block is dynamics when it spans t_event steps
    and its temperature changes (a quench's does not); its first row is left out."""
    pooled: dict[str, list[np.ndarray]] = {}
    counts: dict[str, int] = {}
    for k, text in enumerate(texts):
        at = re.search(r"^prd\s", text, flags=re.M)
        if at is None:
            raise ReadError(f"replica {k}'s log has no prd command")
        n = 0
        for table in parse_thermo(text[at.start():]):
            steps, temps = table.get("Step"), table.get("Temp")
            if steps is None or temps is None or steps.size < 3:
                continue
            if steps[-1] - steps[0] != t_event or np.all(temps == temps[0]):
                continue
            n += 1
            for name, column in table.items():
                pooled.setdefault(name, []).append(column[1:])
        counts[f"replica {k}"] = n
    if not pooled:
        raise ReadError(f"no parallel replica dynamics blocks of {t_event} steps in the replica logs")
    return {name: np.concatenate(parts) for name, parts in pooled.items()}, counts
