"""A described run that its time budget ended early, cleanly.

The runner kills an engine at its job's time limit; a killed LAMMPS leaves a log cut anywhere (thermo
output is buffered). So every described input sets LAMMPS's own wall-time limit, `timer timeout`, from
the seconds the runner passes in its environment (simagent.executor.CLEAN_STOP_ENV: the limit less a
margin). At that limit LAMMPS ends the current run after a whole step, writes its outputs up to there,
skips every later run and minimisation, and exits normally (parse.WallStop says where).

Such a run is not the prescribed one. What it can still answer is a number that only needs the part
that ran: MD is causal, so the unrun steps cannot change the recorded rows (a Young's modulus whose fit
window was recorded whole, tools.lammps.described_solids). An average over a stage, or anything of a
stage that did not run to its end, is never taken from it: the analysis says why (BudgetStop.words).
"""

from __future__ import annotations

from dataclasses import dataclass

from simagent.described.model import SimulationDescription
from simagent.executor import CLEAN_STOP_ENV
from tools.lammps.parse import LammpsOutput

CLEAN_STOP_VARIABLE = "cleanstop"


CLEAN_START_VARIABLE = "cleanstart"  # the wall clock when the limit was set (variable style timer)


def clean_stop_lines(restarted: bool = False) -> list[str]:
    """LAMMPS's wall-time limit from the runner's environment; none when the variable is not set (a run
    by hand): a getenv variable of an unset name is the empty string. The limit is checked every step
    (LAMMPS's default is every 10: ten steps of a large many-body system under load can outlast the
    margin; a check costs one clock read and broadcast). `restarted`: the input clears LAMMPS later
    (runs started from a restart file), so the clock is read as the limit is set (resumed_clean_stop_lines)."""
    v = CLEAN_STOP_VARIABLE
    return [f"variable        {v} getenv {CLEAN_STOP_ENV}",
            f'if              "x${{{v}}} != x" then "timer timeout ${{{v}}} every 1"',
            *([f"variable        {CLEAN_START_VARIABLE} timer"] if restarted else [])]


def resumed_clean_stop_lines() -> list[str]:
    """After `clear`, which makes LAMMPS's timer anew without a limit: the limit again, less the wall time spent
    since it was first set (at least 1 s, so a limit already passed stops the next run at once)."""
    v = CLEAN_STOP_VARIABLE
    return ["variable        cleannow timer",
            f"variable        cleanleft equal floor(v_{v}-(v_cleannow-v_{CLEAN_START_VARIABLE}))",
            f'if              "x${{{v}}} != x" then "timer timeout $(v_cleanleft*(v_cleanleft>0)+(v_cleanleft<=0)) '
            'every 1"']


@dataclass(frozen=True)
class BudgetStop:
    """The stage the wall-time limit ended (index into desc.stages; -1: a molecular system's preparation
    before the stages), the steps of it that ran and the limit."""

    stage: int
    steps: int
    timeout_s: int | None

    def words(self, desc: SimulationDescription) -> str:
        limit = f" (LAMMPS timer timeout of {self.timeout_s} s" if self.timeout_s is not None else " (LAMMPS timer"
        limit += ", set from the job's time limit less a margin)"
        if self.stage < 0:
            where = "during the preparation before stage 1"
        else:
            stage = desc.stages[self.stage]
            planned = f"{stage.steps:,}" if stage.kind == "run" else "a minimisation"
            where = f"at step {self.steps:,} of {planned} of stage {self.stage + 1} ({stage.name})"
        later = len(desc.stages) - 1 - self.stage
        skipped = f"; the {later} later stage{'s' if later > 1 else ''} did not run" if later > 0 else ""
        return f"the run was stopped by the task's time budget {where}{limit}{skipped}"


def budget_stop(out: LammpsOutput, desc: SimulationDescription) -> BudgetStop | None:
    """Where the wall-time limit ended the described run (None: it ran to its end)."""
    stop = out.wall_stop
    if stop is None:
        return None
    prepared = desc.molecular is not None and desc.molecular.prepare  # a minimisation before the stages
    return BudgetStop(stage=stop.run - (1 if prepared else 0), steps=stop.steps, timeout_s=stop.timeout_s)
