"""`solve` on its default path, the hybrid backend: the language model is not asked what the rules
read completely, and all its calls share a bounded part of the task's time budget (when it runs
out the rules' reading stands and report.md says so). LLM replies come from the scripted
OpenAI-compatible server on localhost (tests/fake_openai_server.py). Every task text here was
written for these tests."""

from __future__ import annotations

import json
import time

import pytest
from fake_openai_server import FakeOpenAIServer

from simagent.backends.allowance import TimeAllowance
from simagent.backends.hybrid import HybridBackend
from simagent.config import Settings
from simagent.described.llm_fill import fill, gaps
from simagent.described.reading import read_description
from simagent.errors import BackendError, RequestError
from simagent.solve import LLM_BUDGET_SHARE, MDGymTask, TaskBackend, read_metrics, solve

# complete for the description's rules; the request reader leaves its last-but-one sentence unread
FILM = ("A two-dimensional film of Lennard-Jones discs in reduced units sits on a hex lattice of reduced density 0.7 "
        "filling a box of 20 x 20 x 1 lattice units. Discs have unit mass and interact with epsilon = 1, sigma = 1 "
        "and a cutoff of 2.5 sigma. Give them velocities for a temperature of 0.5 with seed 4321. The film evolves "
        "in the NVE ensemble {step} for 300 steps. Its grains mimic a soap froth seen from above. Report the mean "
        "potential energy per disc.")
COMPLETE = FILM.format(step="with a timestep of 0.004")
TIMESTEP_IN_OTHER_WORDS = FILM.format(step="with increments of 0.004 per step")  # the rules default it
# the dynamics of the run is not read by the rules: nothing renders until the LLM's quote closes it
NEWTONIAN = ("Lennard-Jones particles in reduced units start on an fcc lattice at a density of 0.8 in a 4 x 4 x 4 box "
             "with the pair interaction truncated at 2.5. Velocities are drawn at a temperature of 1.2. The atoms are "
             "left for 400 steps to Newton's second law and nothing else. Report the average "
             "temperature.")


def hybrid(url: str) -> HybridBackend:
    return HybridBackend(Settings(backend="hybrid", hybrid_llm="openai", base_url=url, model="fake-model",
                                  llm_retries=0))


def task_backend(inner, text: str) -> TaskBackend:
    task = MDGymTask(id="t", problem_description=text, engine="lammps", metrics=["average_potential_energy"])
    return TaskBackend(inner, lambda spec: read_metrics(task, True), [], "lammps")


def slow(seconds: float):
    def script(body):
        time.sleep(seconds)
        return "{}"
    return script


def test_the_rules_reading_stands_alone_when_they_read_the_whole_run():
    text = COMPLETE
    assert read_description(text).renderable and not gaps(read_description(text), text)
    inner = hybrid("unused")
    assert inner.route_reason(inner.expert.task_spec(text), None)  # alone, the hybrid would ask its LLM
    server = FakeOpenAIServer([])  # any request fails the test: nothing is scripted
    with server as url:
        backend = task_backend(hybrid(url), text)
        spec = backend.task_spec(text)
    assert server.requests == []
    assert spec.missing == [] and spec.engine == "lammps" and [p.name for p in spec.properties]
    assert backend.name == "hybrid(expert)" and "not asked" in backend.last_detail


def test_the_gap_is_asked_and_then_nothing_more():
    """One question for the one open field; the completed description is not read again by the LLM."""
    text = TIMESTEP_IN_OTHER_WORDS
    assert [g.name for g in gaps(read_description(text), text)] == ["timestep"]
    reply = json.dumps({"timestep": {"value": 0.004, "quote": "with increments of 0.004 per step"}})
    server = FakeOpenAIServer([reply])
    with server as url:
        backend = task_backend(hybrid(url), text)
        spec = backend.task_spec(text)
    assert len(server.requests) == 1
    assert server.requests[0]["response_format"]["json_schema"]["name"] == "DescriptionGaps"
    assert backend.description.timestep == pytest.approx(0.004) and spec.described is not None


def test_a_slow_model_is_cut_short_at_its_share_and_then_not_asked():
    server = FakeOpenAIServer(slow(8.0))
    with server as url:
        inner = hybrid(url)
        inner.limit_llm(TimeAllowance(3.0, 12.0))
        began = time.perf_counter()
        desc, report = fill(read_description(TIMESTEP_IN_OTHER_WORDS), TIMESTEP_IN_OTHER_WORDS, inner)
        took = time.perf_counter() - began
        assert took < 6.0 and "cut short" in report.problem and "3 s of the task's 12 s" in report.problem
        assert desc.origin["timestep"].source == "default"  # the rules' reading stands
        asked = len(server.requests)
        with pytest.raises(BackendError, match="not asked"):
            inner.llm().task_spec(NEWTONIAN)
        assert len(server.requests) == asked  # nothing sent once the share is spent


def test_solve_reports_the_model_cut_short_and_keeps_the_rules_reading(tmp_path):
    """A whole solve on the default (hybrid) path with a model slower than its share: the gap stays,
    the model is asked once (cut short, never again) and report.md says why its answer is absent."""
    path = tmp_path / "task.json"
    path.write_text(json.dumps({"id": "slow_llm", "problem_description": NEWTONIAN, "engine": "lammps",
                                "metrics": ["average_temperature"], "time_limit": 0}))
    server = FakeOpenAIServer(slow(8.0))
    with server as url:
        settings = Settings(backend="hybrid", hybrid_llm="openai", base_url=url, model="fake-model", llm_retries=0,
                            workdir=tmp_path / "runs")
        budget = 4.0 / LLM_BUDGET_SHARE  # the model gets 4 s in all
        solve(path, tmp_path / "out", settings=settings, budget_s=budget)
        asked = len(server.requests)
    assert asked == 1
    report = (tmp_path / "out" / "report.md").read_text()
    assert "the typed simulation description was not run: not stated: the dynamics" in report
    assert "the language model was not used: cut short" in report and "the rules' reading stands" in report


def test_a_formula_with_dt_or_a_2d_system_asks_no_timestep():
    """The timestep is asked only when the text gives it a value the rules miss, not when 'dt' is a
    symbol in a formula or the only number nearby is a dimension (paraphrases written for this test)."""
    base = ("Lennard-Jones particles in reduced units on an sq2 lattice at a number density of 0.6 in a 2D box of "
            "10 x 10 lattice units, cutoff 2.5, unit mass, velocities at a temperature of 1.0. Run 500 steps in the "
            "NVE ensemble. ")
    for tail in ("The diffusion coefficient is the MSD slope divided by (4*dt) for this 2D fluid.",
                 "Take D as slope/(2*d*dt) with d the dimension of the 2-d system.",
                 "Every dt of the 2D run counts as one sample.",
                 # a timestep given by a formula: its numbers are factors, not the value (nothing to quote)
                 "The time step is set to dt = 0.25*r_c/v with v the sound speed.",
                 "Choose the integration step as 0.5/omega_max for the stiffest mode.",
                 "Use a timestep of h/4 with h the smoothing length."):
        text = base + tail
        assert [g.name for g in gaps(read_description(text), text)] == [], tail
    for tail in ("Advance the clock with dt set to 0.004 in this 2D fluid.",  # a value: asked
                 "The integration step (dt) is 0.002 for the 2D fluid.",
                 "The time step is 1×10^(-3) tau for the 2D fluid."):  # a power of ten is a plain value
        text = base + tail
        desc = read_description(text)
        if desc.origin["timestep"].source == "default":
            assert [g.name for g in gaps(desc, text)] == ["timestep"], tail


@pytest.mark.slow
@pytest.mark.llm
def test_a_request_cut_short_stops_the_local_model_at_once():
    """The real local model (0.5B, llama.cpp in this process): when a request is cut short by the
    allowance, the server stops working on it (no core kept busy: close() has nothing to wait for)."""
    from simagent.backends import model_store
    from simagent.backends.local import LocalBackend

    if not model_store.parts_installed(model_store.SMALL_MODEL):
        pytest.skip("the small model's part packages are not installed")
    backend = LocalBackend(Settings(backend="local", model_name=model_store.SMALL_MODEL, llm_threads=1,
                                    llm_retries=0))
    try:
        backend.allowance = TimeAllowance(2.5)
        long_request = " ".join([COMPLETE, NEWTONIAN, TIMESTEP_IN_OTHER_WORDS] * 3)
        with pytest.raises(BackendError, match="cut short"):
            backend.task_spec(long_request)
        time.sleep(5.0)  # the server notices the closed connection within a second or two (measured: ~2.5 s)
    finally:
        began = time.perf_counter()
        backend.close()  # waits for a request the server still works on
        closing = time.perf_counter() - began
    assert closing < 2.0  # with the default 2048-token batches it waited ~100 s for the prompt to be read


# the box edges in words the rules do not read; every other number is theirs
BOXED = ("Lennard-Jones atoms in reduced units fill an fcc crystal of reduced density 0.9 whose container measures "
         "seven spacings along each side, written 7; pair cutoff 3.0. Velocities at a temperature of 0.6. Integrate "
         "in the NVE ensemble for 800 steps. Report the average pressure.")


@pytest.mark.parametrize("edges, quote, accepted", [
    ([7], "container measures seven spacings along each side, written 7", True),
    ([0.9], "an fcc crystal of reduced density 0.9 whose container measures", False),  # the lattice's number
    ([3.0], "container measures seven spacings along each side, written 7; pair cutoff 3.0", False),  # the cutoff's
    ([7, 7, 0.6], "measures seven spacings along each side, written 7; pair cutoff 3.0. Velocities at a "
                  "temperature of 0.6", False),  # one edge from the temperature
])
def test_the_llm_never_reuses_a_number_the_rules_read_as_another_field(edges, quote, accepted):
    desc = read_description(BOXED)
    assert desc.missing == ["box size"] and desc.lattice.scale == 0.9 and desc.pair.cutoff == 3.0
    with FakeOpenAIServer([json.dumps({"box": {"value": edges, "quote": quote}})]) as url:
        filled, report = fill(desc, BOXED, hybrid(url))
    if accepted:
        assert list(report.filled) == ["box"] and filled.box.hi[0] == 7 and not filled.missing
        assert filled.lattice.scale == 0.9 and filled.pair.cutoff == 3.0
    else:
        assert not report.filled and "already read as another field" in report.rejected[0]
        assert filled.missing == ["box size"]  # the rules' reading stands: the gap is reported, not filled


@pytest.mark.parametrize("text", [
    COMPLETE + " A flat wall bounds the film at y = 0.",  # nothing else open
    NEWTONIAN + " Long-range Coulomb forces act through a PPPM solver.",  # and the dynamics not read
])
def test_a_description_that_is_not_rendered_asks_the_llm_nothing(text):
    """Prescribes what is not rendered: the refusal names the blocker, and the LLM's reading of the
    request is not asked for (it cannot make the prescription rendered; a reading that let another
    protocol run would be a substitute)."""
    desc = read_description(text)
    assert desc.unsupported
    server = FakeOpenAIServer([])  # any request fails the test
    with server as url:
        backend = task_backend(hybrid(url), text)
        with pytest.raises(RequestError, match="does not render"):
            spec = backend.task_spec(text)
            backend.select_protocols(spec, [])
    assert server.requests == []
    assert "the LLM was not asked: the description prescribes what simagent does not render" in backend.last_detail
