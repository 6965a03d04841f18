"""Pre-run checks for GROMACS jobs: a safety policy, mdp sanity rules, and a grompp dry run.

Safety: GROMACS inputs cannot run shell code, but they can name files. Every file a job reads or
writes must be a plain name inside its folder; topology #includes must be job files or come from
GROMACS's own library (share/gromacs/top); the step list may only run allowed gmx tools.
Dry run: `gmx grompp` on a scratch copy of the job's inputs (when they are complete, i.e. the job
stages nothing in from a dependency). A grompp that fails is a problem, reported with its
WARNINGs and ERRORs; warnings the step accepts with an explicit -maxwarn are not (they appear in
the results instead), nor are NOTEs.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from pydantic import ValidationError

from tools.gromacs import engine
from tools.gromacs.driver import StepList
from tools.gromacs.mdp import parse_mdp
from tools.gromacs.parse import grompp_messages

_INCLUDE = re.compile(r'^\s*#\s*include\s+["<]([^">]+)[">]', re.M)
# Upper bound on accepted grompp warnings in a step list (-maxwarn); each must be justified.
MAX_ALLOWED_WARNINGS = 5


def _unsafe(token: str) -> bool:
    token = token.strip().strip("\"'")
    return token.startswith(("/", "~")) or ".." in Path(token).parts


def safety_problems(inputs: dict[str, str], staged: set[str] | None = None) -> list[str]:
    """Problems with file names, includes, mdp paths and the step list of one job."""
    problems: list[str] = []
    known = set(inputs) | (staged or set())
    library = engine.share_top()
    for name, text in inputs.items():
        if "/" in name or name.startswith(".") or _unsafe(name):
            problems.append(f"{name}: input files must be plain names inside the job folder")
        if name.endswith((".top", ".itp")):
            for include in _INCLUDE.findall(text):
                if _unsafe(include):
                    problems.append(f"{name}: #include \"{include}\" leaves the job folder")
                elif include not in known and not (library and (library / include).is_file()):
                    problems.append(f"{name}: #include \"{include}\" is neither a job file nor part of "
                                    "GROMACS's force-field library")
        if name.endswith(".mdp"):
            for key, value in parse_mdp(text).items():
                if any(_unsafe(token.removeprefix("-I")) for token in value.split()):
                    problems.append(f"{name}: {key} = {value} points outside the job folder")
    steps_text = inputs.get(engine.STEPS_FILE)
    if steps_text is None:
        problems.append(f"the job has no {engine.STEPS_FILE} (the step list the driver runs)")
        return problems
    try:
        steps = StepList.model_validate_json(steps_text)
    except ValidationError as err:
        reasons = "; ".join(e["msg"] for e in err.errors())
        problems.append(f"{engine.STEPS_FILE}: invalid step list: {reasons}")
        return problems
    for step in steps.steps:
        for token in step.args:
            if _unsafe(token):
                problems.append(f"{engine.STEPS_FILE}: step {step.name}: argument {token!r} leaves the job folder")
        if step.tool == "grompp" and "-maxwarn" in step.args:
            index = step.args.index("-maxwarn")
            value = step.args[index + 1] if index + 1 < len(step.args) else ""
            if not value.isdigit() or int(value) > MAX_ALLOWED_WARNINGS:
                problems.append(f"{engine.STEPS_FILE}: step {step.name}: -maxwarn {value} (at most "
                                f"{MAX_ALLOWED_WARNINGS}, each one justified in the protocol)")
    return problems


def mdp_problems(text: str, has_hydrogen: bool = True) -> list[str]:
    """Physics sanity rules that grompp does not enforce (or only notes)."""
    options = parse_mdp(text)
    problems = []
    integrator = options.get("integrator", "md")
    if integrator in ("md", "sd", "md-vv", "bd"):
        dt = float(options.get("dt", "0.001"))
        constraints = options.get("constraints", "none")
        if has_hydrogen and constraints == "none" and dt > 0.001:
            problems.append(f"dt = {dt} ps with unconstrained hydrogens: use dt <= 0.001 ps or constraints "
                            "(rigid water models are constrained by their SETTLE section)")
        if dt > 0.005 and has_hydrogen:
            problems.append(f"dt = {dt} ps is too large for an all-atom model (at most 0.002-0.004 ps)")
        if int(options.get("nsteps", "0")) == 0:
            problems.append("nsteps = 0: the run does nothing")
        tcoupl = options.get("tcoupl", "no").lower()
        pcoupl = options.get("pcoupl", "no").lower()
        if pcoupl not in ("no", "") and tcoupl in ("no", "") and integrator != "sd":
            problems.append("pressure coupling without temperature coupling")
        if pcoupl == "parrinello-rahman" and options.get("gen-vel", "no") == "yes":
            problems.append("Parrinello-Rahman from freshly generated velocities can oscillate strongly: "
                            "equilibrate with C-rescale first")
        if tcoupl not in ("no", "") and "tau-t" in options and float(options["tau-t"].split()[0]) <= 0:
            problems.append("tau_t must be positive")
    return problems


def dry_run(inputs: dict[str, str], time_limit_s: float = engine.GROMPP_DRY_RUN_LIMIT_S) -> list[str]:
    """grompp WARNING/ERROR messages for every grompp step of the job, run on a scratch copy."""
    steps = StepList.model_validate_json(inputs[engine.STEPS_FILE])
    scratch = Path(tempfile.mkdtemp(prefix="simagent-grompp-"))
    problems = []
    try:
        for name, text in inputs.items():
            (scratch / name).write_text(text)
        for step in steps.steps:
            if step.tool != "grompp":
                continue
            args = list(step.args)
            if "-o" in args:
                args[args.index("-o") + 1] = "dryrun.tpr"
            try:
                proc = subprocess.run(engine.gmx_command("grompp", args), cwd=scratch, capture_output=True,
                                      text=True, timeout=time_limit_s, env=engine.environment())
            except subprocess.TimeoutExpired:
                return [f"grompp dry run did not finish within {time_limit_s:g} s"]
            if proc.returncode == 0:
                continue  # warnings within the step's -maxwarn were accepted by the protocol
            found = grompp_messages(proc.stdout + proc.stderr)
            problems += [f"grompp ({step.name}) WARNING: {w}" for w in found.warnings]
            problems += [f"grompp ({step.name}) ERROR: {e}" for e in found.errors]
            if not found.errors:
                problems.append(f"grompp ({step.name}) exited with code {proc.returncode}")
            break
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return problems


def precheck(job) -> list[str]:
    """Adapter entry point used by the error agent: safety policy, mdp sanity, then the grompp dry
    run (skipped when the job reads files staged from a dependency, which exist only after it ran)."""
    staged = {name for names in job.stage_in.values() for name in names}
    problems = safety_problems(job.inputs, staged)
    if problems:
        return problems
    has_hydrogen = bool(job.params.get("has_hydrogen", True))
    for name, text in job.inputs.items():
        if name.endswith(".mdp"):
            problems += [f"{name}: {p}" for p in mdp_problems(text, has_hydrogen)]
    if problems or job.stage_in:
        return problems
    steps = json.loads(job.inputs[engine.STEPS_FILE]).get("steps", [])
    if not any(step.get("tool") == "grompp" for step in steps):
        return problems
    return dry_run(job.inputs)
