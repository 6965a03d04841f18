"""Shared fixtures: settings pointing at a temporary run folder, expert backend, no config file."""

import os

import pytest

# The default backend is the hybrid when the local model is installed. Tests that do not test the
# LLM read with the rules alone, or every CLI call and subprocess would start a llama.cpp server;
# tests of the hybrid and local backends set their backend explicitly.
os.environ.setdefault("SIMAGENT_BACKEND", "expert")

from simagent.config import load_settings  # noqa: E402


@pytest.fixture
def settings(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMAGENT_BACKEND", "expert")  # also for CLI subprocesses the test starts
    for name in ("SIMAGENT_BASE_URL", "OPENAI_BASE_URL", "SIMAGENT_API_KEY",
                 "OPENAI_API_KEY", "SIMAGENT_LMP"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SIMAGENT_CONFIG", str(tmp_path / "no-config.toml"))
    return load_settings(workdir=tmp_path / "runs", backend="expert")
