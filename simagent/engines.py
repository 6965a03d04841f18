"""The engine adapter contract and the registry of engines.

Everything the core (runner, gates, error agent, `simagent run/check`, `doctor`) knows about an
engine goes through one `EngineAdapter` object; nothing is found by string import or by probing a
module for functions.

How a new engine registers itself (e.g. Quantum ESPRESSO as engine "qe"):

1. Write `tools/qe/adapter.py` with a subclass of `EngineAdapter`, decorated with `@register`:

       from simagent.engines import EngineAdapter, Launch, register

       @register
       class QeAdapter(EngineAdapter):
           name = "qe"                      # the value of Job.engine / TaskSpec.engine
           label = "Quantum ESPRESSO"       # what `simagent doctor` prints
           main_input_name = "pw.in"
           binary_names = ("pw.x",)         # looked up on PATH unless Settings.engine_paths["qe"]

           def version(self) -> str: ...
           def load_protocols(self) -> None:
               import tools.qe.protocols    # noqa: F401  (its @protocols.register decorators run)

   Only `name`, `label`, `version` and `load_protocols` are required; every other method has a
   default documented below (override `protocol_command` when a job is not `binary main_input`).
2. Add the module path to `BUILTIN_ENGINES` below (the one list of engines; its order is the order
   `doctor` prints and protocols are loaded in).
3. Add the name to `simagent.models.Engine` (a Literal, so pydantic checks requests);
   tests/test_engines.py fails until the two agree.
4. A binary's location is configured in Settings (`engine_paths`, env `SIMAGENT_<NAME>_PATH` or the
   config file's `[engine_paths]` table), never read from the environment inside tools/<engine>.

Adapters live in tools/<engine>/ and import only simagent's core modules (models, errors, config,
handlers, gates, executor, rendering, units, stats) and their own package: never agents/ or
simagent.graph (tests/test_import_rules.py enforces it).
"""

from __future__ import annotations

import importlib
import os
import shutil
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, ClassVar

from simagent.errors import EngineNotFound, InputError

if TYPE_CHECKING:
    from simagent.gates import RunData
    from simagent.handlers import Action, ErrorHandler, Finding
    from simagent.models import Job

# The engines simagent ships, in the order they are listed and their protocols are loaded.
BUILTIN_ENGINES = ("tools.lammps.adapter", "tools.gromacs.adapter", "tools.zeopp.adapter", "tools.raspa.adapter",
                   "tools.qe.adapter", "tools.mlp.adapter", "tools.vasp.adapter")

# Input-stage handlers see a folder that does not exist: "no output yet".
NO_OUTPUT = Path("/nonexistent-simagent-precheck")
# Files a task supplies (simagent solve --data-root): the executor copies them into every job folder,
# so every dry run sees them too (set for the duration of one task by `supplying`).
_SUPPLIED: list[Path] = []


def supplied_paths() -> list[Path]:
    """The files supplied with the task being solved (empty outside `supplying`)."""
    return list(_SUPPLIED)


@contextmanager
def supplying(paths: list[Path]) -> Iterator[None]:
    """Within this block, dry runs without explicit files get the task's supplied files."""
    previous = list(_SUPPLIED)
    _SUPPLIED[:] = list(paths)
    try:
        yield
    finally:
        _SUPPLIED[:] = previous


@dataclass
class Launch:
    """How one job is started in its folder: argument list (never a shell string built from inputs),
    environment, and the cores and MPI ranks it uses (1 rank: no MPI launcher)."""

    argv: list[str]
    env: dict[str, str]
    cores: int = 1
    ranks: int = 1


@dataclass
class EngineStatus:
    """What `simagent doctor` reports for one engine."""

    name: str
    label: str
    found: bool
    binary: str = ""
    version: str = ""
    detail: str = ""  # why it was not found, or extra facts (data folders)
    extra: dict[str, str] = field(default_factory=dict)


class EngineAdapter(ABC):
    """One engine: where it is, how a job is launched, how its output is read, how its inputs are
    checked and repaired, and how a user's own input becomes a Job.

    Profile: `binary()`, `version()`, `environment()`.
    Launch: `launch(job)` (protocol jobs: `protocol_command`; a user's own input: `user_command`).
    Output: `run_data(job_dir, job)` (series for the physics gates), `output_problem(job_dir, job)`
        (a failure behind exit code 0), `user_log(job_dir)`.
    Checks: `safety_findings(job)` (the policy alone), `static_findings(job)`, `dry_run(job, files)`,
        `protocol_precheck(job)`; `precheck_findings(job, dry_run, files)` combines them (the same
        order for every engine: safety first, an unsafe input is never dry-run).
    Repair: `handlers(stage)`, `extend_actions(job)`, `library_file(name)`.
    User inputs: `load_user_job(path, time_limit_s)`, `main_input(job)`, `guess(path)`.
    """

    name: ClassVar[str]
    label: ClassVar[str]
    main_input_name: ClassVar[str] = ""
    binary_names: ClassVar[tuple[str, ...]] = ()
    install_hint: ClassVar[str] = "install it with `make setup`"
    user_inputs: ClassVar[bool] = False  # `simagent run/check FILE` supported
    parallel: ClassVar[bool] = False  # the launch honours Job.ranks and Job.threads (else: one core)
    required: ClassVar[bool] = True  # False: licensed/optional (VASP); `doctor` does not fail without it

    # -- profile ---------------------------------------------------------------------------------

    def binary(self) -> Path:
        """The executable that runs jobs: Settings.engine_paths[name], else the first of
        `binary_names` on PATH. Raises EngineNotFound with the install hint."""
        from simagent.config import engine_path

        explicit = engine_path(self.name)
        if explicit is not None:
            if explicit.is_file() and os.access(explicit, os.X_OK):
                return explicit
            raise EngineNotFound(f"the configured path of {self.label} ({explicit}) is not an executable; "
                                 f"{self.install_hint}")
        for candidate in self.binary_names:
            found = shutil.which(candidate)
            if found:
                return Path(found)
        raise EngineNotFound(f"{self.label} (`{'`/`'.join(self.binary_names) or self.name}`) was not found; "
                             f"{self.install_hint}")

    @abstractmethod
    def version(self) -> str:
        """The engine's version string (raises EngineNotFound when it is not installed)."""

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env.setdefault("OMP_NUM_THREADS", "1")
        return env

    def status(self) -> EngineStatus:
        try:
            binary = str(self.binary())
            return EngineStatus(self.name, self.label, True, binary, self.version(), extra=self.data_folders())
        except EngineNotFound as err:
            return EngineStatus(self.name, self.label, False, detail=str(err))

    def data_folders(self) -> dict[str, str]:
        """Data the engine ships that simagent uses (potentials, topologies), for `doctor`."""
        return {}

    def library_dir(self) -> Path | None:
        """The folder of the engine's own library that inputs may include (GROMACS: its topology
        library); None: none, or not found."""
        return None

    def shipped_potentials(self) -> list[str]:
        """File names of the potentials simagent ships for this engine (empty: none)."""
        return []

    def installed_styles(self) -> dict[str, set[str]]:
        """Style names per kind (fix, compute, pair, atom) the installed binary knows (empty: unknown)."""
        return {}

    def example_systems(self) -> list:
        """The systems of the engine's installed examples (simagent.described.example_system.ExampleSystem);
        empty: none, or not installed."""
        return []

    # -- protocols -------------------------------------------------------------------------------

    @abstractmethod
    def load_protocols(self) -> None:
        """Import the engine's protocol modules (their @simagent.protocols.register decorators run)."""

    # -- launch ----------------------------------------------------------------------------------

    @staticmethod
    def is_user_job(job: Job) -> bool:
        return job.protocol.startswith("user")

    def launch(self, job: Job) -> Launch:
        """How `job` starts in its folder: the same path for generated jobs and users' own inputs.
        The job's MPI ranks and OpenMP threads are passed to the engine (`protocol_command` and
        `user_command` read them from the job) and reported to the executor as cores = ranks x threads;
        an engine that cannot use them refuses the job rather than running it on one core."""
        if (job.ranks > 1 or job.threads > 1 or job.partitions is not None) and not self.parallel:
            raise InputError(f"{self.label} runs each job on one core; it cannot use {job.ranks} MPI rank(s) x "
                             f"{job.threads} thread(s) (job {job.id}). Independent jobs, such as the points of "
                             "an isotherm, run side by side instead, up to max_parallel.")
        if self.is_user_job(job):
            argv, env = self.user_command(job)
        else:
            argv, env = self.protocol_command(job), self.environment()
        env["OMP_NUM_THREADS"] = str(job.threads)
        return Launch(argv, env, cores=job.ranks * job.threads, ranks=job.ranks)

    def spread(self, job: Job, cores: int) -> Job:
        """`job` on `cores` cores when its protocol chose neither ranks nor threads: as MPI ranks
        (an adapter may prefer threads); unchanged for an engine that runs each job on one core."""
        if cores <= 1 or not self.parallel or job.ranks > 1 or job.threads > 1:
            return job
        return job.model_copy(update={"ranks": cores})

    def protocol_command(self, job: Job) -> list[str]:
        """Argument list of a protocol job (default: `<binary> <main input>`)."""
        return [str(self.binary()), self.main_input(job)]

    def user_command(self, job: Job) -> tuple[list[str], dict[str, str]]:
        """Argument list and environment of a user's own input (default: as a protocol job)."""
        return self.protocol_command(job), self.environment()

    # -- output ----------------------------------------------------------------------------------

    def run_data(self, job_dir: Path, job: Job) -> RunData | None:
        """Time series of a finished run for the physics gates; None: nothing to judge."""
        return None

    def output_problem(self, job_dir: Path, job: Job) -> str | None:
        """Why a run that exited with 0 produced no result (None: no such problem)."""
        return None

    def user_log(self, job_dir: Path) -> Path:
        """The log a user should read after `simagent run`."""
        return job_dir / "stdout.txt"

    # -- checks ----------------------------------------------------------------------------------

    def safety_findings(self, job: Job) -> list[Finding]:
        """The safety policy alone (also applied to protocol jobs). Default: nothing to check."""
        return []

    def static_findings(self, job: Job, seen: set[str] = frozenset()) -> list[Finding]:
        """Checks that read the inputs only (physics sanity, syntax), after the input handlers
        (`seen`: the names of the input handlers that fired, whose findings are already listed)."""
        return []

    def dry_run(self, job: Job, files: dict[str, Path] | None = None) -> list[str]:
        """Errors of a parse-only run on a scratch copy (empty: the inputs are accepted)."""
        return []

    def protocol_precheck(self, job: Job) -> list[str] | None:
        """Problems of a protocol job from the adapter's own check, which knows the protocol's job
        layout; None: protocol jobs get the same checks as users' inputs."""
        return None

    def precheck_findings(self, job: Job, dry_run: bool = True,
                          files: dict[str, Path] | None = None) -> list[Finding]:
        """All pre-run findings: safety policy (an unsafe input stops here), the input-stage handlers
        (their corrections as actions), the static checks, then the dry run when nothing so far is
        an error and no input is staged in from a dependency (those files exist only after it ran)."""
        from simagent.handlers import Finding

        if not self.is_user_job(job):
            problems = self.protocol_precheck(job)
            if problems is not None:
                return self.safety_findings(job) or [Finding("error", p, handler="precheck") for p in problems]
        findings = self.safety_findings(job)
        if findings:
            return findings
        seen = set()
        for handler in self.handlers("input"):
            if handler.check(NO_OUTPUT, job):
                result = handler.correct(NO_OUTPUT, job)
                for error in result.get("errors") or [handler.name]:
                    findings.append(Finding("warning", error, category=handler.category, file=self.main_input(job),
                                            handler=handler.name, actions=list(result.get("actions") or [])))
                seen.add(handler.name)
        findings += self.static_findings(job, seen)
        if dry_run and not job.stage_in and not any(f.severity == "error" for f in findings):
            try:
                errors = self.dry_run(job, files if files is not None else ({p.name: p for p in _SUPPLIED} or None))
            except EngineNotFound as err:
                if not self.dry_run_optional:
                    raise
                findings.append(Finding("warning", f"dry run skipped: {err}", file=self.main_input(job)))
                errors = []
            findings += [Finding("error", e, category=self.categorize(e), file=self.main_input(job),
                                 handler=self.dry_run_name) for e in errors]
        return findings

    dry_run_name: ClassVar[str] = "dry run"
    dry_run_optional: ClassVar[bool] = False  # True: a missing engine skips the dry run with a warning

    def categorize(self, message: str) -> str:
        """The MDGym error category of an engine message."""
        return ""

    # -- repair ----------------------------------------------------------------------------------

    def handler_classes(self) -> list[type[ErrorHandler]]:
        """The engine's handler library, in priority order (specific messages first)."""
        return []

    def handlers(self, stage: str | None = None) -> list[ErrorHandler]:
        return [cls() for cls in self.handler_classes() if stage is None or cls.stage == stage]

    def extend_actions(self, job: Job, factor: float = 2.0) -> list[Action] | None:
        """Actions that make the production run longer by `factor` (None: cannot be extended)."""
        return None

    def library_file(self, name: str) -> str:
        """Text for the `_copy_from: library:NAME` action (a file the engine ships)."""
        raise InputError(f"{self.label} has no library of files to copy from")

    # -- users' own inputs -----------------------------------------------------------------------

    def load_user_job(self, path: Path, job_id: str = "run",
                      time_limit_s: float = 1800.0) -> tuple[Job, dict[str, Path]]:
        """A Job from a user's input file or folder, and the binary files to copy into its folder."""
        raise InputError(f"user inputs for {self.name} are not supported yet")

    def guess(self, path: Path) -> bool:
        """True when a user's file (or folder) looks like this engine's input."""
        return False

    def main_input(self, job: Job) -> str:
        """The input file a user edits (and the repair backend quotes lines of)."""
        if self.main_input_name in job.inputs or not job.inputs:
            return self.main_input_name
        return next(iter(job.inputs))

    # -- evidence of runs (simagent.bench.evidence: which runs happened in a folder) --------------

    log_patterns: ClassVar[tuple[str, ...]] = ()  # globs of the engine's own logs, relative to a run folder
    finished_marker: ClassVar[str] = ""  # text at a log's end after a normal end ("": a non-empty log)

    def run_logs(self, folder: Path) -> list[Path]:
        """The engine's own logs in a run folder (matching `log_patterns`), sorted."""
        return sorted({p for pattern in self.log_patterns for p in folder.glob(pattern) if p.is_file()})


class ModuleAdapter(EngineAdapter):
    """An engine whose profile is a module of its package, `engine_module` (tools/<engine>/engine.py),
    which defines `version()`, `environment()` and `job_command(job)`: the adapter calls them by these
    names (the module's contract, stated here; nothing is probed)."""

    engine_module: ClassVar[ModuleType]

    def version(self) -> str:
        return self.engine_module.version()

    def environment(self) -> dict[str, str]:
        return self.engine_module.environment()

    def protocol_command(self, job: Job) -> list[str]:
        return self.engine_module.job_command(job)


class UserInputAdapter(ModuleAdapter):
    """A ModuleAdapter whose engine also runs users' own inputs, with the readers, checks and repairs
    in `handlers_module` (tools/<engine>/handlers.py), which defines user_command, run_data,
    user_log, safety_findings, categorize, HANDLERS, extend_actions, load_user_job and main_input."""

    handlers_module: ClassVar[ModuleType]
    user_inputs = True

    def user_command(self, job: Job) -> tuple[list[str], dict[str, str]]:
        return self.handlers_module.user_command(job)

    def run_data(self, job_dir: Path, job: Job) -> RunData | None:
        return self.handlers_module.run_data(job_dir, job)

    def user_log(self, job_dir: Path) -> Path:
        return self.handlers_module.user_log(job_dir)

    def safety_findings(self, job: Job) -> list[Finding]:
        return self.handlers_module.safety_findings(job)

    def categorize(self, message: str) -> str:
        return self.handlers_module.categorize(message)

    def handler_classes(self) -> list[type[ErrorHandler]]:
        return self.handlers_module.HANDLERS

    def extend_actions(self, job: Job, factor: float = 2.0) -> list[Action] | None:
        return self.handlers_module.extend_actions(job, factor)

    def load_user_job(self, path: Path, job_id: str = "run",
                      time_limit_s: float | None = None) -> tuple[Job, dict[str, Path]]:
        """The handlers module's own default time limit applies unless one is given."""
        if time_limit_s is None:
            return self.handlers_module.load_user_job(path, job_id)
        return self.handlers_module.load_user_job(path, job_id, time_limit_s)

    def main_input(self, job: Job) -> str:
        return self.handlers_module.main_input(job)


_REGISTRY: dict[str, EngineAdapter] = {}


def python_job_environment() -> dict[str, str]:
    """Environment of a job that runs `python -m tools.<engine>.<runner>` in its folder: simagent's
    source root first on PYTHONPATH (so the runner imports from any folder), one OpenMP thread,
    matplotlib without a display."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["OMP_NUM_THREADS"] = "1"
    env["MPLBACKEND"] = "Agg"
    return env


def register(adapter_cls: type[EngineAdapter]) -> type[EngineAdapter]:
    """Class decorator: make an engine adapter known by its name."""
    _REGISTRY[adapter_cls.name] = adapter_cls()
    return adapter_cls


def _load_builtin() -> None:
    if len(_REGISTRY) < len(BUILTIN_ENGINES):
        for module in BUILTIN_ENGINES:
            importlib.import_module(module)


def all_engines() -> list[EngineAdapter]:
    """Every registered engine, built-in ones in the order of BUILTIN_ENGINES."""
    _load_builtin()
    return list(_REGISTRY.values())


def engine_names() -> list[str]:
    return [adapter.name for adapter in all_engines()]


def get_engine(name: str) -> EngineAdapter:
    _load_builtin()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise InputError(f"unknown engine {name!r}; use one of {', '.join(_REGISTRY)}") from None


def guess_engine(path: Path) -> str:
    """The engine of a user's input file or folder: the first engine whose `guess` claims it; an
    engine whose guess claims everything (LAMMPS: any script) is asked last."""
    candidates = [a for a in all_engines() if a.user_inputs]
    fallback = [a for a in candidates if a.guess(Path("/nonexistent-simagent-guess"))]
    for adapter in [a for a in candidates if a not in fallback] + fallback:
        if adapter.guess(path):
            return adapter.name
    raise InputError(f"cannot tell which engine {path} is for; give --engine")
