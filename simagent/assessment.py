"""The verdict on a finished job, shared by the graph's repair loop (agents.error.postcheck) and
`simagent run` (simagent.usercli.run_file): pure (it reads the job folder and the correction log,
changes nothing), so each loop only decides what to do with the verdict.

pass    the gates passed (a handler's warning may come with it), or the run is prescribed and the gates
        only found it unconverged or inaccurate (its reasons go with the number as a warning)
extend  the gates ask for a longer run: `diagnosis` holds the extension actions
repair  a handler recognised a fixable failure: `diagnosis` holds the correction
fail    nothing fixes it: `reasons` (gate reasons) and the `diagnosis` a handler recognised, if any
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from simagent import gates
from simagent.engines import get_engine
from simagent.handlers import CorrectionLog, Diagnosis, diagnose, is_param_action
from simagent.models import Job

# Longer production runs the gates may ask for, per job (each doubles the production length).
MAX_EXTENSIONS = 2
EXTEND_HANDLER = "gates: extend"

Verdict = Literal["pass", "extend", "repair", "fail"]


@dataclass
class Assessment:
    verdict: Verdict
    reasons: list[str] = field(default_factory=list)
    diagnosis: Diagnosis | None = None
    gates: gates.GateReport | None = None
    notes: list[str] = field(default_factory=list)  # corrections found but not usable here, for the record


def _usable(actions: list, param_only: bool) -> bool:
    return not param_only or all(is_param_action(a) for a in actions)


# A prescribed run (a task's description: `simagent solve`) keeps its timestep and run lengths: no
# repair or extension may change them. Parameters and input lines that set them, in every engine.
_STEP_PARAM = re.compile(r"^(?!.*damp)(?:timestep|dt|n_?steps|steps|\w+_steps|\w*cycles)$")
_STEP_LINE = re.compile(r"^\s*(?:run|timestep|nsteps|dt|numberofcycles)\b", re.IGNORECASE)


def prescribed_changes(actions: list | None) -> list[str]:
    """What in `actions` would change a timestep or a run length ('timestep', 'production_steps',
    'the line run 2000'); empty when nothing prescribed is touched."""
    changed = []
    for action in actions or []:
        if not isinstance(action, dict):
            continue
        param = action.get("param")
        if isinstance(param, str) and _STEP_PARAM.match(param):
            changed.append(param)
        option = action.get("_set_option")
        if isinstance(option, dict) and _STEP_PARAM.match(str(option.get("key", "")).lower()):
            changed.append(str(option.get("key")))
        for edit in ("_replace_line", "_insert_line"):
            text = (action.get(edit) or {}).get("text", "") if isinstance(action.get(edit), dict) else ""
            changed += [f"the line {line.strip()!r}" for line in text.splitlines() if _STEP_LINE.match(line)]
    return list(dict.fromkeys(changed))


def inaccurate_only(report: gates.GateReport) -> bool:
    """The gates failed a run only for integration accuracy (a finite NVE energy drift): the run is
    what it is, its numbers exist; a prescribed run keeps them with the finding."""
    failed = [r for r in report.results if r.outcome == gates.Outcome.FAIL]
    return bool(failed) and all(r.gate == "energy drift" and "non-finite" not in r.reason for r in failed)


def assess_finished(job_dir: Path, job: Job, log: CorrectionLog, *, extend: bool = True,
                    repair_warnings: bool = False, param_only: bool = False, prescribed: bool = False) -> Assessment:
    """Verdict on a job that exited cleanly: gates, then extension, then the on-success handlers.

    extend: False when the request prescribes the run length (an EXTEND verdict of the gates then
    passes, its reasons kept). repair_warnings: a fixable handler warning on a passing run is a
    repair (users' own inputs) instead of a note. param_only: only parameter actions count (protocol
    jobs are repaired through their parameters and re-rendered). prescribed: the description prescribes
    the run (solve): an inaccurate run passes with its reasons (inaccurate_only), and no correction
    that changes its timestep or a run length is a repair (prescribed_changes)."""
    report = gates.evaluate(job_dir, job)
    reasons = report.reasons()
    if report.outcome == gates.Outcome.PASS:
        warning = diagnose(job_dir, job, log, succeeded=True)
        if repair_warnings and warning is not None and warning.fixable:
            return Assessment("repair", reasons, warning, report)
        return Assessment("pass", reasons, warning, report)
    notes = []
    if report.outcome == gates.Outcome.EXTEND:
        if not extend:
            return Assessment("pass", reasons, None, report)
        actions = get_engine(job.engine).extend_actions(job)
        if actions and not _usable(actions, param_only):
            notes.append(f"the extension {actions} is an input edit that the protocol cannot express")
            actions = None
        if actions and log.count(job.id, EXTEND_HANDLER) < MAX_EXTENSIONS:
            return Assessment("extend", reasons, Diagnosis(job=job.id, errors=reasons, handler=EXTEND_HANDLER,
                                                            category="equilibration", actions=actions), report, notes)
    if prescribed and inaccurate_only(report):
        return Assessment("pass", reasons, None, report, notes)
    found = diagnose(job_dir, job, log, succeeded=True)
    if prescribed and found is not None and found.fixable and prescribed_changes(found.actions):
        notes.append(_kept(found))
        return Assessment("fail", reasons, found, report, notes)
    if found is not None and found.fixable and _usable(found.actions, param_only):
        return Assessment("repair", reasons, found, report, notes)
    return Assessment("fail", reasons, found, report, notes)


def _kept(found: Diagnosis) -> str:
    return (f"not repaired: {found.handler} would change the {', '.join(prescribed_changes(found.actions))} that the "
            "description prescribes")


def assess_failed(job_dir: Path, job: Job, log: CorrectionLog, *, param_only: bool = False,
                  prescribed: bool = False) -> Assessment:
    """Verdict on a job that failed: the engine's handlers (repair when one fixes it; never, for a
    prescribed run, one that changes its timestep or a run length)."""
    found = diagnose(job_dir, job, log)
    if prescribed and found is not None and found.fixable and prescribed_changes(found.actions):
        return Assessment("fail", [], found, notes=[_kept(found)])
    if found is not None and found.fixable and _usable(found.actions, param_only):
        return Assessment("repair", [], found)
    notes = [f"{found.handler} suggests an input edit that the protocol cannot express: {found.actions}"] \
        if found is not None and found.fixable else []
    return Assessment("fail", [], found, notes=notes)
