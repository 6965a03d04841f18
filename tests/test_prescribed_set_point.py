"""A protocol's own set-point check (mean temperature off the thermostat target): a free request
(`ask`, gate_extensions True) gets no number; a run the description prescribes (`solve`,
gate_extensions False) keeps its number and carries the finding as a warning for report.md."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import agents.analysis as analysis_node
from simagent.config import Settings
from simagent.errors import CalculationFailed, set_point_findings
from simagent.models import Job, JobStatus, Plan, PropertyRequest, ProtocolRun, Result, TaskSpec
from simagent.state import RunState
from tools.lammps.protocols import fluid

# a thermostat that held T = 0.95 while the target was 0.85: 12 % off, far beyond 3 standard errors
OFF_TARGET = 0.95 + 0.01 * np.random.default_rng(1).normal(size=400)


def test_check_raises_outside_and_records_inside_the_findings_block():
    with pytest.raises(CalculationFailed, match="misses the target"):
        fluid.check_temperature(OFF_TARGET, 0.85)
    with set_point_findings() as found:
        fluid.check_temperature(OFF_TARGET, 0.85)
        fluid.check_pressure(np.full(400, 2.0) + 0.01 * np.random.default_rng(2).normal(size=400), 0.0)
    assert len(found) == 2 and "temperature" in found[0] and "pressure" in found[1]
    with pytest.raises(CalculationFailed):  # the block ended: raising again
        fluid.check_temperature(OFF_TARGET, 0.85)


class OffTargetProtocol:
    """Stands in for a protocol whose analysis finds its thermostat off target, then measures."""

    def validate_params(self, params):
        return params

    def analyze(self, params, job_dirs, spec):
        fluid.check_temperature(OFF_TARGET, 0.85)
        return [Result(quantity="temperature", value=float(np.mean(OFF_TARGET)), unit="reduced", job="md",
                       method="time average of the thermo temperature")]


def run_analysis(tmp_path, monkeypatch, gate_extensions: bool):
    monkeypatch.setattr(analysis_node, "get_protocol", lambda name: OffTargetProtocol())
    job = Job(id="md-1", protocol="lammps/fluid_md", workdir=str(tmp_path), status=JobStatus.succeeded)
    spec = TaskSpec(request="r", properties=[PropertyRequest(name="temperature")])
    state = RunState(request="r", thread_id="t", root=str(tmp_path), spec=spec, plan=Plan(
        jobs=[job], runs=[ProtocolRun(protocol="lammps/fluid_md", properties=["temperature"], params={},
                                      jobs={"md": "md-1"})]))
    settings = Settings(workdir=tmp_path, gate_extensions=gate_extensions)
    runtime = SimpleNamespace(context=SimpleNamespace(settings=settings, report=lambda *a, **k: None))
    return analysis_node.analysis(state, runtime).update


def test_free_request_refuses_the_number(tmp_path, monkeypatch):
    update = run_analysis(tmp_path, monkeypatch, gate_extensions=True)
    assert update["results"] == []
    assert any("misses the target 0.85" in f for f in update["failures"])


def test_prescribed_run_keeps_the_number_with_the_finding(tmp_path, monkeypatch):
    update = run_analysis(tmp_path, monkeypatch, gate_extensions=False)
    assert update["failures"] == []
    [result] = update["results"]
    assert result.value == pytest.approx(0.95, abs=0.01)
    assert len(result.warnings) == 1 and "misses the target 0.85" in result.warnings[0]
