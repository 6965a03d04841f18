"""Screening agent: a request to rank many CoRE MOFs (or several it names) by the uptake of a gas runs
the screening funnel (agents.screening) inside the graph, so chat, the web page and `simagent ask`
answer it the same way. The funnel's jobs live under the run folder (<root>/screen/jobs), so a resumed
thread reuses finished jobs; progress lines go to the run's progress callback. The answer lists the
top N with the job each number came from, the stages and their cuts, and the CSV and plot paths."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from langgraph.runtime import Runtime
from langgraph.types import Command

from agents.screen_request import read_screen
from agents.screening import run_screen, summary_lines
from simagent.errors import SimagentError
from simagent.models import Decision, Result
from simagent.state import RunContext, RunState

SCREEN_FOLDER = "screen"


def screen(state: RunState, runtime: Runtime[RunContext]) -> Command[Literal["response"]]:
    context = runtime.context
    context.report("stage", name="screen", detail="reading the screening request")
    try:
        spec = read_screen(state.request)
    except SimagentError as err:
        return Command(goto="response", update={"error": str(err), "screen": ""})
    what = (f"{len(spec.entries)} named entries" if spec.entries else spec.dataset)
    context.report("stage", name="screen", detail=f"funnel over {what}: top {spec.top_n} for {spec.guest} at "
                   f"{spec.temperature_K:g} K and {spec.pressure_bar:g} bar")
    decision = Decision(decision="screen", backend="rules",
                        detail=f"screening request: {spec.guest}, {spec.temperature_K:g} K, {spec.pressure_bar:g} bar, "
                        f"top {spec.top_n}, {what}")
    decisions = [*state.decisions, decision]
    try:
        result = run_screen(spec, Path(state.root) / SCREEN_FOLDER, context.executor,
                            say=lambda text: context.report("plan", line=text))
    except SimagentError as err:
        return Command(goto="response", update={"error": str(err), "screen": "", "decisions": decisions})
    method = (f"GCMC (RASPA2) at {spec.temperature_K:g} K and {spec.pressure_bar:g} bar, "
              f"{spec.gcmc_init_cycles} + {spec.gcmc_cycles} cycles, UFF framework / TraPPE guest, no charges; "
              f"rank {{rank}} of {len(result.ranking)} screened")
    results = [Result(quantity=f"uptake {r.entry}", property="uptake", label=r.entry, value=r.uptake, unit=r.unit,
                      uncertainty=r.uptake_error, job=r.gcmc_job, method=method.format(rank=r.rank),
                      data_file=result.files.get("table"))
               for r in result.top]
    text = "\n".join([*summary_lines(result), "simplifications: " + "; ".join(result.simplifications),
                      f"table: {result.files['table']}", f"plot: {result.files['plot']}",
                      f"funnel: {result.files['funnel']}"])
    if result.failed_jobs:
        text += f"\n{len(result.failed_jobs)} job(s) failed; see the funnel file"
    return Command(goto="response", update={"results": results, "screen": text, "decisions": decisions})
