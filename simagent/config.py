"""Configuration: defaults < config file < environment < command-line flags.

Config file: $SIMAGENT_CONFIG, else ~/.config/simagent/config.toml (TOML, same keys as Settings).
Environment: SIMAGENT_BACKEND, SIMAGENT_BASE_URL (or OPENAI_BASE_URL), SIMAGENT_MODEL,
SIMAGENT_API_KEY (or OPENAI_API_KEY), SIMAGENT_WORKDIR, SIMAGENT_MAX_PARALLEL, SIMAGENT_EXECUTOR,
SIMAGENT_JOB_CORES (a number or 'idle'); for the offline
LLM ('local' and 'hybrid' backends) SIMAGENT_MODEL_NAME, SIMAGENT_MODEL_PATH, SIMAGENT_LOCAL_URL,
SIMAGENT_LLM_THREADS, SIMAGENT_LLM_PORT, SIMAGENT_HYBRID_THRESHOLD, SIMAGENT_HYBRID_LLM.
Engine binaries (`engine_paths`, engine name -> path; the config file's `[engine_paths]` table):
SIMAGENT_<ENGINE>_PATH, and the older names SIMAGENT_LMP, SIMAGENT_GMX, SIMAGENT_RASPA_PYTHON.
The API key is a SecretStr: it is never printed or logged.
"""

from __future__ import annotations

import os
import re
import time
import tomllib
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, Field, SecretStr, ValidationError, model_validator

from simagent.cluster import ClusterSettings, ExecutorName
from simagent.errors import RequestError

BackendName = Literal["expert", "openai", "local", "hybrid"]


class Settings(BaseModel):
    backend: BackendName | None = Field(
        default=None, description="decision backend; None: 'openai' when a base URL is set, else 'hybrid' "
        "when the local model is installed (make setup installs it), else 'expert'"
    )
    base_url: str | None = None
    model: str = "gpt-4o-mini"
    api_key: SecretStr | None = None
    llm_retries: int = Field(default=2, ge=0, le=10, description="re-asks after an invalid LLM output")
    llm_timeout_s: float = 60.0
    workdir: Path = Path("simagent-runs")
    max_parallel: int = Field(default_factory=lambda: os.cpu_count() or 2, ge=1,
                              description="jobs run at once by the local executors (default: all cores)")
    executor: ExecutorName = Field(default="local", description="local | parsl-local | slurm | pbs "
                                   "(simagent.cluster; slurm/pbs read the [cluster] table)")
    cluster: ClusterSettings | None = None
    job_time_limit_s: float = Field(default=1800.0, gt=0)
    job_cores: Annotated[int, Field(ge=1)] | Literal["idle"] | None = Field(
        default=None, description="cores of each job of an engine that runs in parallel, when its "
        "protocol chooses none (the engine adapter decides: LAMMPS MPI ranks, GROMACS OpenMP threads); "
        "'idle': the cores this process may use that are free, measured over half a second when the inputs "
        "are rendered; None: 1 for `ask`/`run`, 'idle' for `solve`")
    max_repairs: int = Field(default=2, ge=0, description="repair-and-rerun attempts per job")
    gate_extensions: bool = Field(
        default=True, description="a gate that finds a run unconverged may lengthen it; False (solve: the "
        "description prescribes the run) keeps the run as prescribed and reports the finding as a warning")
    # Offline LLM (simagent.backends.local) and expert-first routing (simagent.backends.hybrid).
    model_name: str = Field(default="qwen2.5-coder-1.5b", description="qwen2.5-coder-1.5b | qwen2.5-coder-0.5b")
    model_path: Path | None = Field(default=None, description="GGUF file to use instead of the packaged model")
    local_url: str | None = Field(default=None, description="URL of a llama.cpp server to use")
    llm_threads: int = Field(default=1, ge=1, description="llama.cpp threads (1: leaves a core to the engines)")
    llm_ctx: int = Field(default=4096, ge=512, description="llama.cpp context length in tokens")
    llm_port: int = Field(default=0, ge=0, le=65535, description="port of the started server; 0 = any free port")
    llm_start_timeout_s: float = Field(default=120.0, gt=0, description="time for the local server to come up")
    hybrid_threshold: float = Field(default=0.75, ge=0.0, le=1.0, description="LLM reads below this")
    hybrid_llm: Literal["local", "openai"] = "local"
    vasp_command: str | None = Field(default=None, description="VASP launch command, e.g. 'mpirun -np 4 vasp_std'")
    engine_paths: dict[str, Path] = Field(
        default_factory=dict, description="engine name -> its binary (RASPA: the Python with RASPA2), "
                                          "instead of the one found next to simagent's Python or on PATH")

    @model_validator(mode="after")
    def _cluster_complete(self) -> Settings:
        from simagent.cluster import missing_fields

        missing = missing_fields(self.executor, self.cluster)
        if missing:
            raise ValueError(f"the '{self.executor}' executor needs these [cluster] settings: {', '.join(missing)}")
        return self

    @property
    def cores_per_job(self) -> int:
        """job_cores as a number: None -> 1, 'idle' -> idle_cores() now."""
        if self.job_cores == "idle":
            return idle_cores()
        return self.job_cores or 1

    @property
    def resolved_backend(self) -> BackendName:
        if self.backend:
            return self.backend
        if self.base_url:
            return "openai"
        return "hybrid" if self.local_model_available else "expert"

    @property
    def local_model_available(self) -> bool:
        """A local model the hybrid can start: a GGUF file, a llama.cpp server, or the packaged
        model's parts installed (checked without importing them)."""
        if self.local_url or (self.model_path is not None and self.model_path.is_file()):
            return True
        from simagent.backends.model_store import parts_installed  # the model store imports no config
        from simagent.errors import BackendError

        try:
            return parts_installed(self.model_name)
        except BackendError:
            return False


IDLE_SAMPLE_S = 0.5  # how long idle_cores() watches the processors


def idle_cores(sample_s: float = IDLE_SAMPLE_S) -> int:
    """Cores this process may run on (its CPU affinity) that are free now, at least 1.

    Measured, not inferred from the load average (which lags by a minute: a just-finished job or solve's
    own start-up kept it near 1 on an idle 2-core machine and gave a 1-rank job): each usable core's idle
    share over `sample_s` seconds, summed and rounded. Time of niced processes counts as busy: with
    autogroup scheduling (the default of most Linux distributions) a niced process in another session
    gets its full share against this one's job. On a loaded machine a job spread over busy cores runs
    slower and burns more CPU than on one (MPI ranks and OpenMP threads wait for each other)."""
    import psutil  # imported here: settings are loaded far more often than cores are counted

    try:
        usable = sorted(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        usable = list(range(os.cpu_count() or 1))
    before = psutil.cpu_times(percpu=True)
    time.sleep(sample_s)
    after = psutil.cpu_times(percpu=True)
    free = 0.0
    for cpu in usable:
        if cpu >= min(len(before), len(after)):
            continue
        was, now = before[cpu]._asdict(), after[cpu]._asdict()
        # Linux counts guest time inside user and nice time as well: left out of the total
        spent = {field: now[field] - was[field] for field in now if not field.startswith("guest")}
        total = sum(spent.values())
        if total <= 0:
            continue
        free += (spent.get("idle", 0.0) + spent.get("iowait", 0.0)) / total
    return max(1, min(len(usable), round(free)))


_ENV = {
    "backend": ["SIMAGENT_BACKEND"],
    "base_url": ["SIMAGENT_BASE_URL", "OPENAI_BASE_URL"],
    "model": ["SIMAGENT_MODEL"],
    "api_key": ["SIMAGENT_API_KEY", "OPENAI_API_KEY"],
    "workdir": ["SIMAGENT_WORKDIR"],
    "max_parallel": ["SIMAGENT_MAX_PARALLEL"],
    "executor": ["SIMAGENT_EXECUTOR"],
    "job_cores": ["SIMAGENT_JOB_CORES"],
    "model_name": ["SIMAGENT_MODEL_NAME"],
    "model_path": ["SIMAGENT_MODEL_PATH"],
    "local_url": ["SIMAGENT_LOCAL_URL"],
    "llm_threads": ["SIMAGENT_LLM_THREADS"],
    "llm_port": ["SIMAGENT_LLM_PORT"],
    "hybrid_threshold": ["SIMAGENT_HYBRID_THRESHOLD"],
    "hybrid_llm": ["SIMAGENT_HYBRID_LLM"],
    "vasp_command": ["SIMAGENT_VASP_COMMAND"],
}


# Older names of SIMAGENT_<ENGINE>_PATH, still read.
_ENGINE_PATH_ENV = {"lammps": "SIMAGENT_LMP", "gromacs": "SIMAGENT_GMX", "raspa": "SIMAGENT_RASPA_PYTHON"}
_ENGINE_PATH_VAR = re.compile(r"^SIMAGENT_([A-Z0-9]+)_PATH$")


def _engine_paths_from_env() -> dict[str, str]:
    found = {name: os.environ[var] for name, var in _ENGINE_PATH_ENV.items() if os.environ.get(var)}
    for var, value in os.environ.items():
        match = _ENGINE_PATH_VAR.match(var)
        if match and value and match.group(1) != "MODEL":  # SIMAGENT_MODEL_PATH is the LLM's weights
            found[match.group(1).lower()] = value
    return found


def config_file() -> Path:
    env = os.environ.get("SIMAGENT_CONFIG")
    return Path(env) if env else Path.home() / ".config" / "simagent" / "config.toml"


def load_settings(**overrides: object) -> Settings:
    """Merge file, environment and explicit overrides (None values in overrides are ignored)."""
    values: dict[str, object] = {}
    path = config_file()
    if path.is_file():
        try:
            values.update(tomllib.loads(path.read_text()))
        except tomllib.TOMLDecodeError as err:
            raise RequestError(f"config file {path} is not valid TOML: {err}") from None
    for key, names in _ENV.items():
        for name in names:
            if os.environ.get(name):
                values[key] = os.environ[name]
                break
    engine_paths = _engine_paths_from_env()
    if engine_paths:
        values["engine_paths"] = {**dict(values.get("engine_paths") or {}), **engine_paths}
    values.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return Settings(**values)
    except ValidationError as err:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in err.errors())
        raise RequestError(f"invalid simagent settings: {problems}") from None


def engine_path(engine: str) -> Path | None:
    """The configured binary of an engine (Settings.engine_paths), None: find it on PATH."""
    return load_settings().engine_paths.get(engine)
