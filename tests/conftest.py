"""Shared fixtures: settings pointing at a temporary run folder, expert backend, no config file."""

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    monkeypatch.setenv("SIMAGENT_JOB_CORES", "1")  # solve would use the idle cores: tests stay on one
    return load_settings(workdir=tmp_path / "runs", backend="expert", job_cores=1)


@dataclass
class ProtocolRun:
    """One protocol run on the real engine: what `run_protocol` returns."""

    params: Any
    defaults: list
    jobs: list
    records: dict
    dirs: dict[str, Path]  # job id -> folder
    results: list

    @property
    def by_quantity(self) -> dict:
        return {r.quantity: r for r in self.results}


def _run_protocol(protocol, spec, root: Path, params=None, **overrides) -> ProtocolRun:
    from simagent.jobrun import run_plan
    from simagent.models import JobStatus, Plan
    from simagent.protocols import get_protocol

    protocol = get_protocol(protocol) if isinstance(protocol, str) else protocol
    defaults = []
    if params is None:
        params, defaults = protocol.parameters(spec)
    if overrides:
        params = protocol.validate_params({**params.model_dump(), **overrides})
    jobs = protocol.jobs(params)
    records = run_plan(Plan(jobs=jobs), root)
    failed = {k: f"{r.status.value}: {r.message}" for k, r in records.items() if r.status != JobStatus.succeeded}
    assert not failed, failed
    dirs = {job.id: root / job.id for job in jobs}
    return ProtocolRun(params, defaults, jobs, records, dirs, protocol.analyze(params, dirs, spec))


@pytest.fixture(scope="session")
def run_protocol():
    """The real-engine run the protocol tests share: `run_protocol(protocol or name, spec, root,
    params=None, **overrides)` takes the protocol's parameters for the spec (or `params`), applies
    the overrides, runs the jobs with the local executor under root/<job id>, asserts that every job
    succeeded and returns a ProtocolRun with the analysis's results."""
    return _run_protocol


@pytest.fixture(scope="session")
def asked(tmp_path_factory):
    """`asked(request)`: Session.ask's answer to a request (expert backend, one core, no config file,
    the `settings` fixture's environment), asked once per test session. A test that checks the
    published value of a request and a protocol test that analyses the same engine run share the run
    (the protocol test first checks that the run's input is the one its own parameters render)."""
    from simagent.session import Session

    answers: dict[str, Any] = {}

    def ask(request: str):
        if request not in answers:
            root = tmp_path_factory.mktemp("asked")
            with pytest.MonkeyPatch.context() as patch:
                patch.setenv("SIMAGENT_BACKEND", "expert")
                for name in ("SIMAGENT_BASE_URL", "OPENAI_BASE_URL", "SIMAGENT_API_KEY",
                             "OPENAI_API_KEY", "SIMAGENT_LMP"):
                    patch.delenv(name, raising=False)
                patch.setenv("SIMAGENT_CONFIG", str(root / "no-config.toml"))
                patch.setenv("SIMAGENT_JOB_CORES", "1")
                settings = load_settings(workdir=root / "runs", backend="expert", job_cores=1)
                with Session(settings) as session:
                    answers[request] = session.ask(request).answer
        return answers[request]

    return ask
