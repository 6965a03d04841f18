"""The job driver: runs a job's step list (steps.json) inside the job folder, without a shell.

    python -m tools.gromacs.driver steps.json

A step is either a GROMACS tool with an argument list (`gmx <tool> <args>`, stdin text optional,
e.g. the group number trjconv asks for) or one of the driver's own actions (`sync_molecules`:
rewrite the topology's [ molecules ] counts from the coordinates a builder wrote). Each step's
combined output goes to gmx-<name>.out; driver.json records every step's exit code and wall time
(written after each step, so a killed job still shows how far it got). The first failing step
stops the job with its GROMACS "Fatal error" text on stderr.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, model_validator

# GROMACS tools a job may run: simulation, system building and trajectory analysis only.
ALLOWED_TOOLS = frozenset({
    "grompp", "mdrun", "solvate", "insert-molecules", "editconf", "genconf", "trjconv", "energy",
    "rdf", "msd", "gyrate", "check", "dump",
})
ACTIONS = frozenset({"sync_molecules"})
RECORD_FILE = "driver.json"
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")


class Step(BaseModel):
    name: str = Field(description="unique in the job; output goes to gmx-<name>.out")
    tool: str | None = Field(default=None, description="gmx tool, e.g. 'grompp'")
    action: str | None = Field(default=None, description="driver action, e.g. 'sync_molecules'")
    args: list[str] = Field(default_factory=list)
    stdin: str | None = Field(default=None, description="text sent to the tool's standard input")

    @model_validator(mode="after")
    def _one_kind(self) -> Step:
        if not _NAME.fullmatch(self.name):
            raise ValueError(f"step name {self.name!r}: lower-case letters, digits, '-', '_' only")
        if (self.tool is None) == (self.action is None):
            raise ValueError(f"step {self.name}: give exactly one of tool or action")
        if self.tool is not None and self.tool not in ALLOWED_TOOLS:
            raise ValueError(f"step {self.name}: gmx {self.tool} is not an allowed tool "
                             f"({', '.join(sorted(ALLOWED_TOOLS))})")
        if self.action is not None and self.action not in ACTIONS:
            raise ValueError(f"step {self.name}: unknown action {self.action!r}")
        if self.stdin is not None and not re.fullmatch(r"[A-Za-z0-9_ \n]*", self.stdin):
            raise ValueError(f"step {self.name}: stdin may hold group numbers/names only")
        return self

    @property
    def output_file(self) -> str:
        return f"gmx-{self.name}.out"


class StepList(BaseModel):
    steps: list[Step]
    threads: int = Field(default=1, ge=1, le=64, description="OpenMP threads for mdrun")

    @model_validator(mode="after")
    def _unique(self) -> StepList:
        names = [s.name for s in self.steps]
        if len(names) != len(set(names)):
            raise ValueError("step names must be unique")
        return self

    def render(self) -> str:
        """JSON with one step per line (readable in a review, stable for resume)."""
        steps = ",\n".join("  " + step.model_dump_json(exclude_none=True) for step in self.steps)
        return f'{{"threads": {self.threads}, "steps": [\n{steps}\n]}}\n'


class StepRecord(BaseModel):
    name: str
    command: list[str]
    returncode: int | None = None
    wall_s: float | None = None


class DriverRecord(BaseModel):
    steps: list[StepRecord] = Field(default_factory=list)
    finished: bool = False
    failed_step: str | None = None
    status: Literal["running", "succeeded", "failed"] = "running"


def sync_molecules(job_dir: Path, gro: str, top: str) -> list[tuple[str, int]]:
    """Set the [ molecules ] section of `top` to the runs of residue names in `gro` (in order).

    Builders such as `gmx solvate` or `gmx insert-molecules` may place fewer molecules than asked;
    the topology must count what is actually there. Molecule names in [ molecules ] must equal the
    residue names (true for the single-residue molecules simagent builds)."""
    lines = (job_dir / gro).read_text().splitlines()
    n_atoms = int(lines[1].split()[0])
    runs: list[tuple[str, int]] = []
    last_key = None
    for line in lines[2 : 2 + n_atoms]:
        resid, resname = int(line[0:5]), line[5:10].strip()
        key = (resid, resname)
        if key == last_key:
            continue
        last_key = key
        if runs and runs[-1][0] == resname:
            runs[-1] = (resname, runs[-1][1] + 1)
        else:
            runs.append((resname, 1))
    text = (job_dir / top).read_text()
    match = re.search(r"(?im)^\s*\[\s*molecules\s*\]\s*$", text)
    if match is None:
        raise ValueError(f"{top} has no [ molecules ] section")
    body = "".join(f"{name:<16}{count}\n" for name, count in runs)
    (job_dir / top).write_text(
        text[: match.start()] + "[ molecules ]\n; counts written by simagent from " + gro + "\n" + body)
    return runs


def fatal_error(text: str) -> str:
    """The 'Fatal error:' paragraph GROMACS prints before it stops (empty string if none)."""
    match = re.search(r"Fatal error:\s*\n(.*?)(?:\n\s*\n|\nFor more information|\n-{20,})", text, re.S)
    return " ".join(match.group(1).split()) if match else ""


def run(steps_file: Path, job_dir: Path, ranks: int = 1, threads: int | None = None) -> int:
    """Run the step list; mdrun on `ranks` thread-MPI ranks of `threads` OpenMP threads each (None: the
    step list's own thread count)."""
    from tools.gromacs import engine

    steps = StepList.model_validate_json(steps_file.read_text())
    threads = threads or steps.threads
    record = DriverRecord()
    write = lambda: (job_dir / RECORD_FILE).write_text(record.model_dump_json(indent=1))  # noqa: E731
    for step in steps.steps:
        start = time.monotonic()
        if step.action == "sync_molecules":
            args = dict(a.split("=", 1) for a in step.args)
            command = ["sync_molecules", *step.args]
            try:
                runs = sync_molecules(job_dir, args["gro"], args["top"])
                (job_dir / step.output_file).write_text(
                    "".join(f"{name} {count}\n" for name, count in runs))
                rc, message = 0, ""
            except (OSError, ValueError, KeyError, IndexError) as err:
                rc, message = 1, f"sync_molecules failed: {err}"
        else:
            env = engine.environment()
            args = list(step.args)
            if step.tool == "mdrun":
                # -ntmpi: the job's thread-MPI ranks (default 1: small boxes cannot be decomposed);
                # -pin off: jobs that run side by side must not pin to the same cores.
                # OMP_NUM_THREADS must equal -ntomp or mdrun stops.
                args += ["-ntmpi", str(ranks), "-ntomp", str(threads), "-pin", "off"]
                env["OMP_NUM_THREADS"] = str(threads)
            command = engine.gmx_command(step.tool, args)
            with open(job_dir / step.output_file, "w") as out:
                proc = subprocess.run(command, cwd=job_dir, stdout=out, stderr=subprocess.STDOUT,
                                      input=step.stdin if step.stdin is not None else "", text=True, env=env)
            rc = proc.returncode
            message = ""
            if rc != 0:
                detail = fatal_error((job_dir / step.output_file).read_text(errors="replace"))
                message = f"gmx {step.tool} (step {step.name}) failed with exit code {rc}" + (
                    f": {detail}" if detail else f"; see {step.output_file}")
        record.steps.append(StepRecord(name=step.name, command=command, returncode=rc,
                                       wall_s=round(time.monotonic() - start, 3)))
        if rc != 0:
            record.failed_step, record.status = step.name, "failed"
            write()
            print(message, file=sys.stderr)
            return 1
        write()
    record.finished, record.status = True, "succeeded"
    write()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.gromacs.driver")
    parser.add_argument("steps")
    parser.add_argument("--ranks", type=int, default=1, choices=range(1, 1025), metavar="N",
                        help="thread-MPI ranks of mdrun")
    parser.add_argument("--threads", type=int, default=None, choices=range(1, 257), metavar="N",
                        help="OpenMP threads per rank (default: the step list's)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    steps_file = Path(args.steps)
    if steps_file.is_absolute() or ".." in steps_file.parts:
        print("the step list must be a file in the job folder", file=sys.stderr)
        return 2
    try:
        return run(steps_file, Path(os.getcwd()), args.ranks, args.threads)
    except ValueError as err:  # an invalid step list (pydantic ValidationError is a ValueError)
        print(f"invalid step list {steps_file}: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
