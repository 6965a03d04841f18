"""Pre-run checks for LAMMPS inputs: a safety policy (no shell or host code, no files outside the
job folder) and a parse-level dry run (`lmp -skiprun`, which executes everything but run/minimize).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from tools.lammps import engine

# Commands that run host code or reach outside the job folder (LAMMPS manual: shell, python,
# fix python/invoke, fix python/move, pair python, plugin loading).
FORBIDDEN_COMMANDS = {"shell", "python", "plugin"}
FORBIDDEN_STYLES = re.compile(r"\b(python/invoke|python/move|python)\b")
# With -skiprun nothing is computed, so reading energies or computes afterwards fails; such errors
# are artefacts of the dry run, not of the input (LAMMPS stops there, so later lines go unchecked).
DRY_RUN_ARTEFACTS = ("was not tallied on needed timestep", "is not current", "not computed on needed timestep")
FILE_COMMANDS = {"include", "read_data", "read_restart", "read_dump", "write_data", "write_restart",
                 "write_dump", "log", "molecule", "dump", "fix", "print"}


def _logical_lines(text: str) -> list[str]:
    lines, buf = [], ""
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if line.endswith("&"):
            buf += line[:-1] + " "
            continue
        lines.append((buf + line).strip())
        buf = ""
    if buf:
        lines.append(buf.strip())
    return [line for line in lines if line]


def _unsafe_path(token: str) -> bool:
    token = token.strip("\"'")
    return token.startswith("/") or token.startswith("~") or ".." in Path(token).parts


def safety_problems(text: str) -> list[str]:
    """Lines that would run shell/host code or touch files outside the job folder."""
    problems = []
    for number, line in enumerate(_logical_lines(text), start=1):
        words = line.split()
        command = words[0]
        if command in FORBIDDEN_COMMANDS:
            problems.append(f"line {number}: `{command}` runs host code and is not allowed: {line}")
            continue
        if command in ("fix", "pair_style", "compute") and FORBIDDEN_STYLES.search(line):
            problems.append(f"line {number}: python styles run host code and are not allowed: {line}")
            continue
        if re.search(r"\$\{?\w*\}?\s*\|", line) or "`" in line:
            problems.append(f"line {number}: shell-like syntax is not allowed: {line}")
            continue
        if command in FILE_COMMANDS or (command == "print" and "file" in words):
            for token in words[1:]:
                if _unsafe_path(token):
                    problems.append(f"line {number}: path '{token}' leaves the job folder: {line}")
                    break
        if command == "variable" and len(words) > 2:
            style = words[2]
            if style in ("python", "getenv"):
                problems.append(f"line {number}: variable style {style} reads the host and is not allowed")
            elif style in ("file", "atomfile") and any(_unsafe_path(t) for t in words[3:]):
                problems.append(f"line {number}: variable file outside the job folder: {line}")
    return problems


def dry_run(inputs: dict[str, str], main: str = engine.MAIN_INPUT, time_limit_s: float = 60) -> list[str]:
    """ERROR lines from `lmp -skiprun` on a scratch copy of the inputs (empty list: parses)."""
    scratch = Path(tempfile.mkdtemp(prefix="simagent-dryrun-"))
    try:
        for name, text in inputs.items():
            (scratch / name).write_text(text)
        command = engine.command(main) + ["-skiprun", "-screen", "screen.txt"]
        try:
            proc = subprocess.run(command, cwd=scratch, capture_output=True, text=True,
                                  timeout=time_limit_s, env=engine.environment())
        except subprocess.TimeoutExpired:
            return [f"dry run did not finish within {time_limit_s:g} s"]
        text = ""
        for name in ("screen.txt", "log.lammps"):
            if (scratch / name).is_file():
                text += (scratch / name).read_text(errors="replace")
        text += proc.stdout + proc.stderr
        errors = sorted({line.strip() for line in text.splitlines() if line.strip().startswith("ERROR")})
        if errors and all(any(a in e for a in DRY_RUN_ARTEFACTS) for e in errors):
            return []
        if proc.returncode != 0 and not errors:
            errors = [f"dry run exited with code {proc.returncode}"]
        return errors
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def precheck(job) -> list[str]:
    """Adapter entry point used by the error agent: safety policy on every file, then a dry run
    (skipped when the job reads files staged from a dependency, which exist only after it ran)."""
    problems = [f"{name}: {p}" for name, text in job.inputs.items() for p in safety_problems(text)]
    if problems or job.stage_in:
        return problems
    return dry_run(job.inputs)
