"""The agent layer: something that reads a task prompt in a folder and leaves final_answer.json there.

`Agent.execute(prompt, workdir, timeout, engine)` is the whole contract (as in MDGym). Two agents:

* `simagent`: our own solver (`simagent.solve`) in a child process, given the task file the
  orchestrator wrote (without ground truth) and a budget a little inside the harness's, so it
  writes its answer before the harness would stop it;
* `command`: any command-line agent, from a template with `{workdir}` and `{prompt_file}`
  placeholders. The template is split like a shell would split it (shlex) and run WITHOUT a shell,
  so a folder path with spaces, quotes or ';' stays one argument and cannot inject commands.
  Pipes, `&&` or redirections need a shell: write it yourself, e.g.
  `--command "sh -c 'my-agent < \"$0\"' {prompt_file}"` (the path passed as an argument).

Both run in their own process group, which is killed (TERM, then KILL) when the budget runs out;
processes that left the group (engines started with setsid) are found by their working folder
inside the task's folder and killed too.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simagent.bench.evidence import scan_engine_runs
from simagent.bench.tasks import BenchInputError
from simagent.bench.trajectory import TrajectoryLog

AGENT_STDOUT, AGENT_STDERR = "agent_stdout.txt", "agent_stderr.txt"
KILL_GRACE_S = 5.0  # after TERM, how long a stopping agent may take before KILL
MAX_LOGGED_LINES = 2000  # agent output lines copied into the trajectory log (the files keep all)
STEP_PREFIX = "BENCH-STEP "  # how the simagent child reports its graph steps on stderr


# Agent processes now running, so an interrupted session can stop them (they live in their own
# sessions and would otherwise outlive it); STOPPING tells the task threads not to record results.
_LIVE: dict[int, tuple[subprocess.Popen, Path]] = {}
_LIVE_LOCK = threading.Lock()
STOPPING = threading.Event()


def stop_all_agents() -> None:
    """Stop every running agent process group and the engines left in its folder."""
    STOPPING.set()
    with _LIVE_LOCK:
        live = list(_LIVE.values())
    for process, cwd in live:
        _stop_group(process)
        _stop_strays(cwd)


@dataclass
class AgentRun:
    """How the agent process ended."""

    exit_code: int | None
    timed_out: bool
    wall_s: float
    message: str = ""


class Agent(ABC):
    """Runs one task prompt in `workdir`; must leave `final_answer.json` there."""

    name: str = "agent"

    @abstractmethod
    def execute(self, prompt: str, workdir: Path, timeout: float, engine: str,
                log: TrajectoryLog | None = None) -> AgentRun:
        """Solve the prompt within `timeout` seconds; record steps in `log` when given."""

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}


def run_process(argv: list[str], cwd: Path, timeout: float, env: dict[str, str] | None = None,
                on_stdout=None, on_stderr=None) -> AgentRun:
    """Run argv in its own process group with a hard timeout; output goes to files in cwd and,
    line by line, to the callbacks."""
    started = time.monotonic()
    try:
        process = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, start_new_session=True)
    except OSError as err:
        return AgentRun(exit_code=None, timed_out=False, wall_s=0.0, message=f"could not start {argv[0]}: {err}")

    def pump(stream, path: Path, callback) -> None:
        count = 0
        with path.open("wb") as out:
            for raw in iter(stream.readline, b""):
                out.write(raw)
                out.flush()
                count += 1
                if callback is not None and count <= MAX_LOGGED_LINES:
                    callback(raw.decode("utf-8", errors="replace").rstrip("\n"))

    with _LIVE_LOCK:
        _LIVE[process.pid] = (process, cwd)
    pumps = [threading.Thread(target=pump, args=(process.stdout, cwd / AGENT_STDOUT, on_stdout), daemon=True),
             threading.Thread(target=pump, args=(process.stderr, cwd / AGENT_STDERR, on_stderr), daemon=True)]
    for thread in pumps:
        thread.start()
    timed_out = False
    try:
        try:
            process.wait(timeout=max(timeout, 0.0))
        except subprocess.TimeoutExpired:
            timed_out = True
            _stop_group(process)
            _stop_strays(cwd)
    finally:
        with _LIVE_LOCK:
            _LIVE.pop(process.pid, None)
    for thread in pumps:
        thread.join(timeout=KILL_GRACE_S)
    wall = time.monotonic() - started
    message = f"stopped after {wall:.0f} s: the task's time budget of {timeout:.0f} s ran out" if timed_out else ""
    return AgentRun(exit_code=process.returncode, timed_out=timed_out, wall_s=wall, message=message)


def _stop_group(process: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, KILL_GRACE_S)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _stop_strays(workdir: Path) -> None:
    """Kill, by id, this user's processes still working inside `workdir` after the agent's group
    was stopped: engines that an agent (or simagent's executor) started in their own session."""
    root = str(Path(workdir).resolve())
    me = os.getpid()
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid != os.getuid():
                continue
            cwd = os.readlink(f"/proc/{entry}/cwd")
        except OSError:
            continue
        if cwd == root or cwd.startswith(root + os.sep):
            try:
                os.kill(int(entry), signal.SIGKILL)
            except ProcessLookupError:
                pass


def log_engine_runs(workdir: Path, log: TrajectoryLog | None) -> None:
    """After the agent: one tool_call and one engine_run record per engine run found in workdir."""
    if log is None:
        return
    for run in scan_engine_runs(workdir):
        record = run.as_dict()
        command = _job_command(workdir / run.folder)
        if command:
            log.record("tool_call", tool=run.engine or "engine", folder=run.folder, command=command)
        log.record("engine_run", **record)


def _job_command(folder: Path) -> list[str]:
    try:
        return list(json.loads((folder / "status.json").read_text()).get("command", []))
    except (OSError, ValueError, AttributeError):
        return []


class SimagentAgent(Agent):
    """simagent's solver (`simagent.solve`) on the task file in the workdir."""

    name = "simagent"
    TASK_FILE = "task.json"  # written by the orchestrator, ground truth removed
    SAFETY_MARGIN_S = 20.0  # the solver's own budget ends this much (at most 10 %) before the harness's

    def __init__(self, data_root: Path | None = None, backend: str | None = None) -> None:
        self.data_root = data_root
        self.backend = backend

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "backend": self.backend or "from config",
                "data_root": str(self.data_root) if self.data_root else None}

    def solver_budget(self, timeout: float) -> float:
        return max(1.0, timeout - min(self.SAFETY_MARGIN_S, 0.1 * timeout))

    def command(self, workdir: Path, timeout: float) -> list[str]:
        argv = [sys.executable, "-m", "simagent.bench.solver", self.TASK_FILE, "--workdir", str(workdir),
                "--budget", f"{self.solver_budget(timeout):.1f}"]
        if self.data_root is not None:
            argv += ["--data-root", str(self.data_root)]
        if self.backend:
            argv += ["--backend", self.backend]
        return argv

    def execute(self, prompt: str, workdir: Path, timeout: float, engine: str,
                log: TrajectoryLog | None = None) -> AgentRun:
        if not (workdir / self.TASK_FILE).is_file():
            return AgentRun(exit_code=None, timed_out=False, wall_s=0.0,
                            message=f"{self.TASK_FILE} is missing in {workdir}")

        def on_stderr(line: str) -> None:
            if log is not None and line.startswith(STEP_PREFIX):
                try:
                    step = json.loads(line[len(STEP_PREFIX):])
                except json.JSONDecodeError:
                    return
                log.record("agent_step", **step)

        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[2])  # the checkout, so the child imports this simagent
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        run = run_process(self.command(workdir, timeout), workdir, timeout, env, on_stderr=on_stderr)
        log_engine_runs(workdir, log)
        missing = self.not_computed(workdir)
        if missing and not run.timed_out:
            run.message = "not computed: " + "; ".join(f"{k}: {v}" for k, v in missing.items())
        return run

    @staticmethod
    def not_computed(workdir: Path) -> dict[str, str]:
        """The solver's reasons for metrics it left out (the last stdout line is its summary)."""
        try:
            lines = (workdir / AGENT_STDOUT).read_text(encoding="utf-8").strip().splitlines()
            summary = json.loads(lines[-1]) if lines else {}
        except (OSError, json.JSONDecodeError):
            return {}
        missing = summary.get("not_computed") if isinstance(summary, dict) else None
        return {str(k): str(v) for k, v in missing.items()} if isinstance(missing, dict) else {}


class CommandAgent(Agent):
    """Any command-line agent: `template` with {workdir} and {prompt_file}, run without a shell."""

    name = "command"
    PLACEHOLDERS = ("{workdir}", "{prompt_file}")

    def __init__(self, template: str) -> None:
        if not template or not template.strip():
            raise BenchInputError("--agent command needs --command 'TEMPLATE' (with {workdir} and/or {prompt_file})")
        try:
            words = shlex.split(template)
        except ValueError as err:
            raise BenchInputError(f"--command {template!r} cannot be split into words: {err}") from None
        program = words[0]
        if "{" not in program and shutil.which(program) is None and not Path(program).is_file():
            raise BenchInputError(f"--command: program {program!r} was not found")
        self.template = template
        self.words = words

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "command": self.template}

    def argv(self, workdir: Path, prompt_file: Path) -> list[str]:
        # str.replace, not str.format: templates may hold braces of their own (python -c "{...}")
        return [w.replace("{workdir}", str(workdir)).replace("{prompt_file}", str(prompt_file)) for w in self.words]

    def execute(self, prompt: str, workdir: Path, timeout: float, engine: str,
                log: TrajectoryLog | None = None) -> AgentRun:
        prompt_file = workdir / "prompt.md"
        if not prompt_file.is_file():
            prompt_file.write_text(prompt, encoding="utf-8")
        argv = self.argv(workdir, prompt_file)
        if log is not None:
            log.record("tool_call", tool="agent_command", command=argv)
        env = dict(os.environ, BENCH_WORKDIR=str(workdir), BENCH_PROMPT_FILE=str(prompt_file),
                   BENCH_ENGINE=engine, BENCH_TIMEOUT_S=f"{timeout:.0f}")

        def on_stdout(line: str) -> None:
            if log is not None and line.strip():
                log.record("agent_step", output=line[:500])

        run = run_process(argv, workdir, timeout, env, on_stdout=on_stdout)
        log_engine_runs(workdir, log)
        return run


AGENTS = ("simagent", "command")


def make_agent(name: str, command: str | None = None, data_root: Path | None = None,
               backend: str | None = None) -> Agent:
    """The agent called `name`, or a BenchInputError saying which names exist."""
    if name == "simagent":
        if command:
            raise BenchInputError("--command is only for --agent command")
        return SimagentAgent(data_root=data_root, backend=backend)
    if name == "command":
        return CommandAgent(command or "")
    raise BenchInputError(f"unknown agent {name!r}; choose one of: {', '.join(AGENTS)}")
