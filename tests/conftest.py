"""Shared fixtures: settings pointing at a temporary run folder, expert backend, no config file."""

import pytest

from simagent.config import load_settings


@pytest.fixture
def settings(tmp_path, monkeypatch):
    for name in ("SIMAGENT_BACKEND", "SIMAGENT_BASE_URL", "OPENAI_BASE_URL", "SIMAGENT_API_KEY",
                 "OPENAI_API_KEY", "SIMAGENT_LMP"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SIMAGENT_CONFIG", str(tmp_path / "no-config.toml"))
    return load_settings(workdir=tmp_path / "runs", backend="expert")
