"""simagent.described.llm_fill: the language model fills the gaps the reading rules leave in a
simulation description, from quotes of the text only. LLM replies come from the scripted
OpenAI-compatible server on localhost (tests/fake_openai_server.py); one slow test asks the real
local model. Every task text here was written for these tests."""

from __future__ import annotations

import json

import pytest
from fake_openai_server import FakeOpenAIServer

from simagent.backends.expert import ExpertBackend
from simagent.backends.hybrid import HybridBackend
from simagent.backends.openai_backend import OpenAIBackend
from simagent.config import Settings
from simagent.described.llm_fill import fill, gaps
from simagent.described.reading import read_description
from simagent.solve import MDGymTask, TaskBackend, read_metrics

# the timestep in words the rules do not read
INCREMENTS = ("Simulate Lennard-Jones particles in reduced units on an fcc lattice at a density of 0.8 in a 5 x 5 x 5 "
              "box, cutoff 2.5; velocities at a temperature of 1.0. Integrate in the NVE ensemble for 1000 steps, "
              "advancing the clock by increments of 0.003 per step. Report the average potential energy per atom.")
# the dynamics of the run in words the rules do not read (simagent.backends.expert.ensemble_words)
NEWTON = ("Lennard-Jones particles in reduced units start on an fcc lattice at a density of 0.8 in a 5 x 5 x 5 box, "
          "with the pair interaction truncated at 2.5. Velocities are drawn at a temperature of 1.0. Let the atoms "
          "evolve for 2000 steps by Newton's second law and nothing else. Report the average "
          "temperature.")
# the box in words the rules do not read
EDGES = ("Lennard-Jones particles in reduced units start on an fcc lattice at a density of 0.8; the container edges "
         "measure 6 spacings each, cutoff 2.5. Velocities are drawn at a temperature of 1.0. Integrate in the NVE "
         "ensemble for 1000 steps. Report the average temperature.")


def answer(**fields) -> str:
    return json.dumps({k: (None if v is None else {"value": v[0], "quote": v[1]}) for k, v in fields.items()})


def endpoint(base_url: str) -> OpenAIBackend:
    return OpenAIBackend(Settings(backend="openai", base_url=base_url, model="fake-model", llm_retries=0))


def test_the_gaps_asked_are_the_ones_the_rules_leave():
    assert [g.name for g in gaps(read_description(INCREMENTS), INCREMENTS)] == ["timestep"]
    assert [g.name for g in gaps(read_description(NEWTON), NEWTON)] == ["dynamics_of_2000_step_run"]
    assert [g.name for g in gaps(read_description(EDGES), EDGES)] == ["box"]
    stated = INCREMENTS.replace("advancing the clock by increments of 0.003 per step", "with a timestep of 0.003")
    assert gaps(read_description(stated), stated) == []  # the rules read it: nothing to ask
    # run lengths and a reset are no timestep statement: the default is not asked about
    counted = ("Lennard-Jones particles in reduced units on an fcc lattice at a density of 0.8 in a 5 x 5 x 5 box, "
               "cutoff 2.5; velocities at 1.0. Run 3000 timesteps in the NVE ensemble, reset the timestep to 0, "
               "then 2000 more timesteps.")
    assert gaps(read_description(counted), counted) == []


@pytest.mark.parametrize("text, fields, check", [
    (INCREMENTS, {"timestep": (0.003, "advancing the clock by increments of 0.003 per step")},
     lambda d: d.timestep == 0.003),
    (NEWTON, {"dynamics_of_2000_step_run": ("nve", "by Newton's second law and nothing else")},
     lambda d: [(s.steps, s.dynamics.ensemble, s.dynamics.thermostat) for s in d.stages] == [(2000, "nve", None)]),
    (EDGES, {"box": ([6], "the container edges measure 6 spacings each")},
     lambda d: d.box.hi == (6.0, 6.0, 6.0) and d.box.lattice_units),
])  # fmt: skip
def test_a_quoted_answer_fills_the_gap_and_records_its_origin(text, fields, check):
    with FakeOpenAIServer([answer(**fields)]) as url:
        desc, report = fill(read_description(text), text, endpoint(url))
    assert desc.renderable and check(desc), desc
    name, (value, quote) = next(iter(fields.items()))
    assert name in report.filled and not report.rejected
    llm = {k: o.evidence for k, o in desc.origin.items() if o.source == "llm"}
    assert llm and all(e == f"“{quote}”" for e in llm.values())
    # what the rules read keeps its origin: the lattice density is still theirs
    assert desc.origin["lattice"].source == "rules"


@pytest.mark.parametrize("text, fields, why", [
    # the quote is not in the text
    (INCREMENTS, {"timestep": (0.003, "the timestep is 0.003")}, "is not in the text"),
    # a usual value the text does not contain, with a real quote: invented
    (INCREMENTS, {"timestep": (0.005, "advancing the clock by increments of 0.003 per step")},
     "not written in the quote"),
    # the quote holds the number but speaks of something else
    (INCREMENTS, {"timestep": (0.8, "on an fcc lattice at a density of 0.8")}, "does not speak of the timestep"),
    # an ensemble the quote does not name
    (NEWTON, {"dynamics_of_2000_step_run": ("nvt", "Let the atoms evolve for 2000 steps")}, "does not name nvt"),
    (NEWTON, {"dynamics_of_2000_step_run": ("nve", "")}, "no quote"),
    # a factor of a formula is no stated value (paraphrase written for this test)
    (INCREMENTS + " A finer timestep would be 0.01*sigma/3.",
     {"timestep": (0.01, "A finer timestep would be 0.01*sigma/3")}, "factor of a formula"),
    (INCREMENTS + " A finer timestep would be 0.01*sigma/3.",
     {"timestep": (3, "A finer timestep would be 0.01*sigma/3")}, "factor of a formula"),
])  # fmt: skip
def test_an_answer_the_text_does_not_contain_is_rejected(text, fields, why):
    rules = read_description(text)
    with FakeOpenAIServer([answer(**fields)]) as url:
        desc, report = fill(rules, text, endpoint(url))
    assert desc.model_dump() == rules.model_dump()  # nothing changed
    assert not report.filled and why in report.rejected[0]
    assert not any(o.source == "llm" for o in desc.origin.values())


def test_nothing_is_asked_when_nothing_is_open_or_the_run_cannot_be_rendered():
    complete = NEWTON.replace("by Newton's second law and nothing else", "in the NVE ensemble")
    blocked = NEWTON + " A wall bounds the box at z = 0."
    server = FakeOpenAIServer([])  # any request would fail the test: nothing is scripted
    with server as url:
        for text in (complete, blocked):
            desc, report = fill(read_description(text), text, endpoint(url))
            assert not report.asked and not report.filled
    assert server.requests == []


def test_the_question_is_constrained_to_the_gaps():
    server = FakeOpenAIServer([answer(box=None)])
    with server as url:
        desc, report = fill(read_description(EDGES), EDGES, endpoint(url))
    assert report.asked == ["box"] and not report.filled and desc.missing == ["box size"]
    assert report.lines() == ["the language model found no statement of: box"]
    schema = server.requests[0]["response_format"]["json_schema"]
    assert schema["strict"] and list(schema["schema"]["properties"]) == ["box"]
    assert EDGES in server.requests[0]["messages"][1]["content"]


def test_solve_reads_a_gap_with_the_hybrid_llm_and_runs_what_it_quoted():
    """TaskBackend (solve) with the hybrid backend: the LLM's quoted value reaches the described
    protocol's parameters; with the expert backend the gap stays and report lines say why."""
    from types import SimpleNamespace

    from agents.planner import plan_runs

    task = MDGymTask(id="n", problem_description=NEWTON, engine="lammps", metrics=["average_temperature"])

    def targets(spec):
        return read_metrics(task, True)

    replies = [answer(dynamics_of_2000_step_run=("nve", "by Newton's second law and nothing else"))]

    def script(body):  # the hybrid may also ask the LLM to read the request: no reading then
        schema = body["response_format"]["json_schema"]["name"]
        return replies.pop(0) if schema == "DescriptionGaps" else "{}"

    with FakeOpenAIServer(script) as url:
        hybrid = HybridBackend(Settings(backend="hybrid", hybrid_llm="openai", base_url=url, model="fake-model",
                                        llm_retries=0))
        backend = TaskBackend(hybrid, targets, [], "lammps")
        spec = backend.task_spec(NEWTON)
    assert spec.described is not None and spec.missing == []
    runs, _, _ = plan_runs(spec, SimpleNamespace(backend=backend))
    assert [r.protocol for r in runs] == ["lammps/described"]
    stages = runs[0].params["description"]["stages"]
    assert [(s["steps"], s["dynamics"]["ensemble"]) for s in stages] == [(2000, "nve")]
    assert any(line.startswith("read by the language model: dynamics_of_2000_step_run = nve") for line in
               backend.fill.lines())

    rules_only = TaskBackend(ExpertBackend(), targets, [], "lammps")
    spec = rules_only.task_spec(NEWTON)
    assert spec.described is None and rules_only.description.missing
    assert "has no language model" in rules_only.fill.lines()[0]


@pytest.mark.slow
def test_the_local_model_reads_a_timestep_from_a_paraphrase():
    """The packaged local model (llama.cpp), on a description whose timestep the rules do not read:
    it fills the timestep from a quote, or leaves the gap; it never invents one."""
    from simagent.backends.local import LocalBackend

    rules = read_description(INCREMENTS)
    with LocalBackend(Settings(backend="local")) as llm:
        desc, report = fill(rules, INCREMENTS, llm)
    print(report.lines())
    assert desc.timestep == 0.003 and desc.origin["timestep"].source == "llm"


# a barostat whose set point the rules do not read ("squeezed to")
SQUEEZED = ("Lennard-Jones particles in reduced units start on an fcc lattice at a density of 0.8 in a 4 x 4 x 4 box, "
            "cutoff 2.5; velocities at a temperature of 1.0. Run 1000 steps in the NPT ensemble at a temperature of "
            "1.0, the box being squeezed to a target of 2.5 in reduced pressure units. Report the average density.")
# a minimisation whose stopping rule the rules do not read
RELAXED = ("Lennard-Jones particles in reduced units start on an fcc lattice at a density of 0.8 in a 4 x 4 x 4 box, "
           "cutoff 2.5. First an energy minimisation, stopped once successive energies agree to 1e-6 and the largest "
           "force drops under 1e-8, giving up after 500 cycles. Then velocities at a temperature of 1.0 and 1000 "
           "steps in the NVE ensemble. Report the average temperature.")


def test_barostat_pressure_and_minimisation_gaps_are_asked():
    assert [g.name for g in gaps(read_description(SQUEEZED), SQUEEZED)] == ["barostat_pressure_of_run1"]
    assert [g.name for g in gaps(read_description(RELAXED), RELAXED)] == ["minimisation_tolerances",
                                                                          "minimisation_max_iterations"]


def test_a_quoted_barostat_pressure_is_written_into_its_stage():
    quote = "squeezed to a target of 2.5 in reduced pressure units"
    with FakeOpenAIServer([answer(barostat_pressure_of_run1=(2.5, quote))]) as url:
        desc, report = fill(read_description(SQUEEZED), SQUEEZED, endpoint(url))
    assert desc.renderable, desc.missing
    (stage,) = desc.stages
    assert stage.dynamics.ensemble == "npt" and (stage.dynamics.p_start, stage.dynamics.p_stop) == (2.5, 2.5)
    assert desc.origin["run1.p_stop"].source == "llm" and not report.rejected


# metal units: a barostat pressure the rules leave out gets the listed default (0 bar), still asked of the LLM
# when the text writes a pressure value the rules did not read
PRESET = ("Metal units. Aluminium fcc lattice, lattice constant 4.05 angstrom, 3 x 3 x 3 unit cells, Al_zhou.eam.alloy "
          "potential; velocities at 300 K. Run 1000 steps in the NPT ensemble at 300 K, the barostat's target "
          "pressure being set in bar to 250. Report the average density.")


def test_a_defaulted_barostat_pressure_is_asked_when_the_text_writes_one():
    rules = read_description(PRESET)
    assert rules.renderable and rules.origin["run1.p_stop"].source == "default" and rules.stages[0].dynamics.p_stop == 0
    assert [g.name for g in gaps(rules, PRESET)] == ["barostat_pressure_of_run1"]
    quote = "the barostat's target pressure being set in bar to 250"
    with FakeOpenAIServer([answer(barostat_pressure_of_run1=(250, quote))]) as url:
        desc, report = fill(rules, PRESET, endpoint(url))
    assert desc.stages[0].dynamics.p_stop == 250 and desc.origin["run1.p_stop"].source == "llm", report.rejected
    plain = PRESET.replace(", the barostat's target pressure being set in bar to 250", "")
    assert gaps(read_description(plain), plain) == []  # no pressure written: the default stands, nothing asked


def test_quoted_minimisation_tolerances_and_iterations_are_written_into_its_sentence():
    fields = {"minimisation_tolerances": ([1e-6, 1e-8], "stopped once successive energies agree to 1e-6 and the "
                                          "largest force drops under 1e-8"),
              "minimisation_max_iterations": (500, "giving up after 500 cycles")}
    with FakeOpenAIServer([answer(**fields)]) as url:
        desc, report = fill(read_description(RELAXED), RELAXED, endpoint(url))
    assert desc.renderable, (desc.missing, report.rejected)
    mini = desc.stages[0].minimize
    assert (mini.etol, mini.ftol, mini.max_iterations) == (1e-6, 1e-8, 500)
    assert desc.origin["minimisation"].source == "llm"


@pytest.mark.parametrize("fields, why", [
    ({"minimisation_tolerances": ([1e-4, 1e-8], "successive energies agree to 1e-6 and the largest force drops "
                                  "under 1e-8"), "minimisation_max_iterations": None}, "0.0001 is not written"),
    ({"minimisation_tolerances": ([1e-6], "successive energies agree to 1e-6"),
      "minimisation_max_iterations": None}, "two numbers"),
    ({"barostat_pressure_of_run1": (0.8, "an fcc lattice at a density of 0.8")},
     "does not speak of the barostat pressure"),
])  # fmt: skip
def test_unsupported_minimisation_and_pressure_answers_are_rejected(fields, why):
    text = SQUEEZED if "barostat_pressure_of_run1" in fields else RELAXED
    rules = read_description(text)
    with FakeOpenAIServer([answer(**fields)]) as url:
        desc, report = fill(rules, text, endpoint(url))
    assert desc.model_dump() == rules.model_dump()
    assert why in report.rejected[0]


def test_iterations_alone_do_not_make_a_minimisation():
    fields = {"minimisation_tolerances": None, "minimisation_max_iterations": (500, "giving up after 500 cycles")}
    rules = read_description(RELAXED)
    with FakeOpenAIServer([answer(**fields)]) as url:
        desc, report = fill(rules, RELAXED, endpoint(url))
    assert desc.model_dump() == rules.model_dump() and "lacks its tolerances" in report.rejected[0]
