"""Configuration: defaults < config file < environment < command-line flags.

Config file: $SIMAGENT_CONFIG, else ~/.config/simagent/config.toml (TOML, same keys as Settings).
Environment: SIMAGENT_BACKEND, SIMAGENT_BASE_URL (or OPENAI_BASE_URL), SIMAGENT_MODEL,
SIMAGENT_API_KEY (or OPENAI_API_KEY), SIMAGENT_WORKDIR, SIMAGENT_MAX_PARALLEL.
The API key is a SecretStr: it is never printed or logged.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, ValidationError

from simagent.errors import RequestError

BackendName = Literal["expert", "openai"]


class Settings(BaseModel):
    backend: BackendName | None = Field(
        default=None, description="decision backend; None: 'openai' when a base URL is set, else 'expert'"
    )
    base_url: str | None = None
    model: str = "gpt-4o-mini"
    api_key: SecretStr | None = None
    llm_retries: int = Field(default=2, ge=0, le=10, description="re-asks after an invalid LLM output")
    llm_timeout_s: float = 60.0
    workdir: Path = Path("simagent-runs")
    max_parallel: int = Field(default=2, ge=1, description="jobs run at once by the local executor")
    job_time_limit_s: float = Field(default=1800.0, gt=0)
    max_repairs: int = Field(default=2, ge=0, description="repair-and-rerun attempts per job")

    @property
    def resolved_backend(self) -> BackendName:
        if self.backend:
            return self.backend
        return "openai" if self.base_url else "expert"


_ENV = {
    "backend": ["SIMAGENT_BACKEND"],
    "base_url": ["SIMAGENT_BASE_URL", "OPENAI_BASE_URL"],
    "model": ["SIMAGENT_MODEL"],
    "api_key": ["SIMAGENT_API_KEY", "OPENAI_API_KEY"],
    "workdir": ["SIMAGENT_WORKDIR"],
    "max_parallel": ["SIMAGENT_MAX_PARALLEL"],
}


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
    values.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return Settings(**values)
    except ValidationError as err:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in err.errors())
        raise RequestError(f"invalid simagent settings: {problems}") from None
