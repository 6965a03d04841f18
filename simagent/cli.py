"""Command line: `simagent ask | chat | resume | doctor`.

Exit codes: 0 answered, 1 failed (clear message, no traceback), 3 needs clarification,
2 usage error (typer). With --json exactly one JSON object goes to stdout; everything else
(progress, prompts) goes to stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.syntax import Syntax
from rich.table import Table

from simagent.config import Settings, load_settings
from simagent.errors import SimagentError
from simagent.models import Answer
from simagent.session import Outcome, Session

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="simagent: natural-language requests to checked, traceable simulations.")
err = Console(stderr=True)
EXIT = {"answered": 0, "failed": 1, "needs_clarification": 3}

BackendOpt = Annotated[str | None, typer.Option("--backend",
                                                help="expert | openai | local | hybrid (default: from config)")]
WorkdirOpt = Annotated[Path | None, typer.Option("--workdir", help="run folder (default ./simagent-runs)")]
JsonOpt = Annotated[bool, typer.Option("--json", help="print one JSON object on stdout")]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="run without reviewing the inputs")]


def _settings(backend: str | None, workdir: Path | None) -> Settings:
    return load_settings(backend=backend, workdir=workdir)


def _progress(quiet: bool):
    def show(event: str, info: dict[str, Any]) -> None:
        if quiet:
            return
        if event == "stage":
            err.print(f"[dim]· {info['name']}: {info.get('detail', '')}[/dim]")
        elif event == "plan":
            err.print(f"[dim]  jobs: {info['line']}[/dim]")
        elif event == "notice":
            err.print(f"[yellow]  {info['text']}[/yellow]")
        elif event == "job":
            wall = f" in {info['wall_s']:.1f} s" if info.get("wall_s") else ""
            style = "green" if info["status"] == "succeeded" else "red"
            extra = f" ({info['message']})" if info.get("message") else ""
            err.print(f"  job [bold]{info['id']}[/bold]: [{style}]{info['status']}[/{style}]{wall}{extra}")
    return show


def _review(payload: dict) -> dict:
    """Show generated inputs; approve, edit in $EDITOR, give feedback, or abort (after an LLM
    repair: its diff first, and reject drops the repair)."""
    repair = payload.get("repair")
    if repair:
        for change in repair.get("changes", []):
            err.print(f"[bold]repair[/bold] {change['job']} by {change['handler']}: {change['action']} "
                      f"[dim]({change['reason']})[/dim]")
        err.rule("proposed repair (diff)")
        err.print(Syntax(repair.get("diff") or "(no textual change)", "diff", word_wrap=True))
    else:
        for job_id, files in payload["files"].items():
            for name, text in files.items():
                err.rule(f"{job_id}/{name}")
                err.print(Syntax(text, "bash", line_numbers=True, word_wrap=True))
    options = "[a]pprove, [e]dit, [f]eedback, [r]eject the repair, [q]uit" if repair else \
        "[a]pprove, [e]dit, [f]eedback, [q]uit"
    choice = typer.prompt(options, default="a", err=True).strip().lower()
    if repair and choice.startswith("r"):
        return {"action": "reject"}
    if choice.startswith("e"):
        edited: dict[str, dict[str, str]] = {}
        editor = os.environ.get("EDITOR", "vi")
        for job_id, files in payload["files"].items():
            for name, text in files.items():
                with tempfile.NamedTemporaryFile("w+", suffix=f"-{name}", delete=False) as handle:
                    handle.write(text)
                subprocess.run([*editor.split(), handle.name], check=False)
                new = Path(handle.name).read_text()
                Path(handle.name).unlink()
                if new != text:
                    edited.setdefault(job_id, {})[name] = new
        return {"action": "edit", "files": edited}
    if choice.startswith("f"):
        return {"action": "feedback", "text": typer.prompt("feedback", err=True)}
    if choice.startswith("q"):
        return {"action": "abort"}
    return {"action": "approve"}


def _drive(session: Session, outcome: Outcome, interactive_clarify: bool) -> Outcome:
    """Answer review interrupts (and clarification questions in chat) until there is an answer."""
    while outcome.interrupt is not None:
        kind = outcome.interrupt.get("kind")
        if kind == "review":
            outcome = session.resume(outcome.thread_id, _review(outcome.interrupt))
        elif kind == "clarification" and interactive_clarify:
            reply = typer.prompt(outcome.interrupt["question"], err=True)
            outcome = session.resume(outcome.thread_id, reply)
        else:
            break
    return outcome


def _emit(answer: Answer, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(answer.model_dump(mode="json")))
        return
    out = Console()
    colour = {"answered": "green", "needs_clarification": "yellow", "failed": "red"}[answer.status]
    out.print(f"[bold {colour}]{answer.status}[/bold {colour}]  (thread {answer.thread_id})")
    if answer.question:
        out.print(f"[yellow]Question:[/yellow] {answer.question}")
        out.print(f"Reply with: simagent resume {answer.thread_id} --reply \"...\"")
    if answer.error:
        out.print(f"[red]{answer.error}[/red]")
    if answer.citations or any(d.decision in ("knowledge", "screen") for d in answer.decisions):
        out.print(answer.summary, highlight=False, markup=False)
        for c in answer.citations:
            out.print(f"  [{c.key}] {c.source}" + (f"#{c.section}" if c.section else "")
                      + (f" p. {c.page}" if c.page else ""), highlight=False, markup=False)
    if answer.answers:
        table = Table(show_edge=False, header_style="bold")
        for column in ("quantity", "value", "± (1 s.e.)", "unit", "job"):
            table.add_column(column, justify="right" if column in ("value", "± (1 s.e.)") else "left")
        for r in answer.answers:
            unc = "exact (0 K)" if r.uncertainty is None else f"{r.uncertainty:.2g}"
            table.add_row(r.quantity, f"{r.value:.6g}", unc, r.unit, r.job)
        out.print(table)
        out.print("[bold]Methods:[/bold]")
        for method in dict.fromkeys(f"{r.job}: {r.method}" for r in answer.answers):
            out.print(f"  {method}")
    if answer.defaults_applied:
        out.print("[bold]Defaults applied:[/bold]")
        for d in answer.defaults_applied:
            out.print(f"  {d.parameter} = {d.value}" + (f"  ({d.reason})" if d.reason else ""))
    if answer.corrections:
        out.print("[bold]Corrections:[/bold]")
        for c in answer.corrections:
            out.print(f"  {c.job}: {c.action} — {c.reason}")
    if answer.jobs:
        out.print("[bold]Job folders:[/bold] " + ", ".join(answer.jobs))


def _finish(outcome: Outcome, as_json: bool) -> None:
    answer = outcome.answer
    if answer is None:
        answer = Answer(status="failed", request="", thread_id=outcome.thread_id,
                        error="the run stopped before an answer", summary="No answer.")
    _emit(answer, as_json)
    raise typer.Exit(EXIT[answer.status])


@app.command()
def ask(
    request: Annotated[str, typer.Argument(help="the question, in plain language")],
    json_out: JsonOpt = False, yes: YesOpt = False, backend: BackendOpt = None, workdir: WorkdirOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress output")] = False,
) -> None:
    """Answer one request: plan, check, run, analyse; writes answer.json in the run folder. A screening
    request ("the 10 MOFs with the highest methane uptake at ...") runs the funnel (agents.screen)."""
    with Session(_settings(backend, workdir), auto_approve=yes, progress=_progress(quiet)) as session:
        outcome = _drive(session, session.ask(request), interactive_clarify=False)
        _finish(outcome, json_out)


@app.command()
def resume(
    thread: Annotated[str, typer.Argument(help="thread id printed by ask")],
    reply: Annotated[str | None, typer.Option("--reply", help="answer to the pending question")] = None,
    json_out: JsonOpt = False, yes: YesOpt = False, backend: BackendOpt = None, workdir: WorkdirOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q")] = False,
) -> None:
    """Continue an interrupted run (a question, a review, or a crash) without redoing finished jobs."""
    with Session(_settings(backend, workdir), auto_approve=yes, progress=_progress(quiet)) as session:
        pending = session.pending(thread)
        if pending and pending.get("kind") == "review" and reply is None:
            outcome = session.resume(thread, {"action": "approve"} if yes else _review(pending))
        else:
            outcome = session.resume(thread, reply)
        _finish(_drive(session, outcome, interactive_clarify=False), json_out)


@app.command()
def chat(
    yes: YesOpt = False, backend: BackendOpt = None, workdir: WorkdirOpt = None,
) -> None:
    """Interactive session: ask questions; clarifications are asked in place. Empty line or 'quit' ends."""
    with Session(_settings(backend, workdir), auto_approve=yes, progress=_progress(False)) as session:
        while True:
            try:
                request = typer.prompt("simagent>", default="", show_default=False, err=True)
            except (EOFError, typer.Abort):
                break
            if request.strip().lower() in ("", "quit", "exit"):
                break
            try:
                outcome = _drive(session, session.ask(request), interactive_clarify=True)
            except SimagentError as exc:
                err.print(f"[red]error:[/red] {exc}")
                continue
            if outcome.answer:
                _emit(outcome.answer, as_json=False)


@app.command()
def doctor(backend: BackendOpt = None, workdir: WorkdirOpt = None) -> None:
    """Every registered engine (binary, version, found or not), the decision backend, the data folders.
    Exit 1 when an engine is missing."""
    from simagent.engines import all_engines
    from simagent.paths import forcefields_dir, potentials_dir, rag_index_dir

    out = Console()
    ok = True
    for adapter in all_engines():
        try:
            status = adapter.status()
        except SimagentError as exc:  # e.g. a broken config file
            ok = False
            out.print(f"[red]{adapter.label:<8} missing[/red]: {exc}")
            continue
        if status.found:
            out.print(f"[green]{status.label:<8}[/green] {status.binary}  ({status.version})")
            for name, folder in status.extra.items():
                out.print(f"         {name}: {folder}")
        elif not adapter.required:
            out.print(f"[yellow]{status.label:<8} not configured (optional)[/yellow]: {status.detail}")
        else:
            ok = False
            out.print(f"[red]{status.label:<8} missing[/red]: {status.detail}")
    settings = _settings(backend, workdir)
    where = f" at {settings.base_url} (model {settings.model})" if settings.resolved_backend == "openai" else ""
    out.print(f"backend  {settings.resolved_backend}{where}")
    for name, folder in (("potentials", potentials_dir()), ("forcefields", forcefields_dir()),
                         ("rag_index", rag_index_dir())):
        out.print(f"data     {name}: {folder} ({len(list(folder.iterdir()))} files)")
    out.print(f"workdir  {Path(settings.workdir).resolve()}")
    out.print(f"python   {sys.version.split()[0]} ({sys.executable})")
    raise typer.Exit(0 if ok else 1)


def _run_screen(spec, root: Path, settings: Settings, json_out: bool, quiet: bool) -> None:  # noqa: ANN001
    from agents.screening import run_screen, summary_lines
    from simagent.cluster import executor_for

    name = (f"{spec.dataset}-{spec.guest}-{spec.temperature_K:g}K-{spec.pressure_bar:g}bar-top{spec.top_n}"
            + (f"-sample{spec.sample}-seed{spec.seed}" if spec.sample else "")
            + (f"-{len(spec.entries)}entries" if spec.entries else ""))
    out = root / name
    executor = executor_for(settings)
    try:
        result = run_screen(spec, out, executor, say=None if quiet else (lambda t: err.print(f"[dim]· {t}[/dim]")))
    finally:
        executor.shutdown()
    if json_out:
        typer.echo(json.dumps(result.model_dump(mode="json")))
    else:
        Console().print("\n".join(summary_lines(result)), markup=False, highlight=False)
        Console().print(f"files: {result.files['table']}, {result.files['plot']}, {result.files['funnel']}")
    raise typer.Exit(0)


@app.command()
def screen(
    guest: Annotated[str, typer.Option("--guest", help="gas (CH4, Kr, Xe, Ar)")] = "CH4",
    pressure: Annotated[float, typer.Option("--pressure", help="bar")] = 65.0,
    temperature: Annotated[float, typer.Option("--temperature", help="K")] = 298.0,
    top: Annotated[int, typer.Option("--top", help="how many to report")] = 10,
    dataset: Annotated[str, typer.Option("--dataset", help="2019-ASR | 2019-FSR")] = "2019-ASR",
    entries: Annotated[list[str] | None, typer.Option("--entry", help="screen only these CoRE entries")] = None,
    sample: Annotated[int | None, typer.Option("--sample", help="a random sample of this many entries")] = None,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    min_void_fraction: Annotated[float, typer.Option("--min-void-fraction")] = 0.3,
    geometry: Annotated[str, typer.Option("--geometry", help="cavity: LCD > kinetic diameter; window: PLD > "
                                          "kinetic diameter")] = "cavity",
    geometry_source: Annotated[str, typer.Option("--geometry-source", help="core-table: the CoRE table's Zeo++ "
                                                 "values; zeopp: our own coarse-to-fine Zeo++ pass")] = "core-table",
    zeopp_rows: Annotated[Path | None, typer.Option("--zeopp-rows", help="rows of an earlier Zeo++ pass to reuse "
                                                    "(benchmarks/zeopp_fsr_all.py)")] = None,
    blocking: Annotated[str, typer.Option("--blocking", help="none: fill every cavity; zeopp: block the pockets the "
                                          "guest cannot reach (Zeo++ channel analysis)")] = "none",
    max_atoms: Annotated[int, typer.Option("--max-atoms", help="per unit cell")] = 1000,
    prescreen: Annotated[str, typer.Option("--prescreen", help="gcmc: short GCMC at the conditions; henry: "
                                           "Widom K_H")] = "gcmc",
    prescreen_init_cycles: Annotated[int, typer.Option("--prescreen-init-cycles")] = 60,
    prescreen_cycles: Annotated[int, typer.Option("--prescreen-cycles")] = 30,
    keep: Annotated[int | None, typer.Option("--keep", help="most entries passed from the pre-screen to GCMC "
                                             "(default 3 x top)")] = None,
    widom_cycles: Annotated[int, typer.Option("--widom-cycles")] = 2000,
    gcmc_init_cycles: Annotated[int, typer.Option("--gcmc-init-cycles")] = 1000,
    gcmc_cycles: Annotated[int, typer.Option("--gcmc-cycles")] = 2000,
    json_out: JsonOpt = False, workdir: WorkdirOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q")] = False,
) -> None:
    """Screen CoRE MOF 2019 for the uptake of a gas: validity, geometry, size, short GCMC (or Widom K_H),
    GCMC for the best, ranking.
    Writes results.csv, a plot and funnel.json; a rerun resumes without redoing finished jobs."""
    from agents.screening import ScreenSpec

    try:
        spec = ScreenSpec(guest=guest, pressure_bar=pressure, temperature_K=temperature, top_n=top, dataset=dataset,
                          entries=entries or None, sample=sample, seed=seed, min_void_fraction=min_void_fraction,
                          geometry=geometry, geometry_source=geometry_source,
                          zeopp_rows=str(zeopp_rows) if zeopp_rows else None, blocking=blocking,
                          max_atoms=max_atoms, prescreen=prescreen,
                          prescreen_init_cycles=prescreen_init_cycles, prescreen_cycles=prescreen_cycles,
                          gcmc_keep=keep, widom_cycles=widom_cycles,
                          gcmc_init_cycles=gcmc_init_cycles, gcmc_cycles=gcmc_cycles)
    except ValueError as exc:
        raise SimagentError(f"invalid screen: {exc}") from None
    settings = _settings(None, workdir)
    _run_screen(spec, Path(settings.workdir) / "screens", settings, json_out, quiet)


@app.command()
def web(
    host: Annotated[str, typer.Option("--host", help="interface to bind; not loopback needs a token")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535)] = 8765,
    token: Annotated[str | None, typer.Option("--token", envvar="SIMAGENT_WEB_TOKEN", show_default=False,
                                              help="access token (prefer the environment variable)")] = None,
    yes: YesOpt = False, backend: BackendOpt = None, workdir: WorkdirOpt = None,
) -> None:
    """Web chat in the browser: requests, plan, review of inputs and repairs, answers, run files."""
    from simagent.web.server import serve

    serve(_settings(backend, workdir), host=host, port=port, token=token, auto_approve=yes)


# `simagent check FILE` and `simagent run FILE`: users' own inputs (simagent/usercli.py)
from simagent.usercli import register as _register_user_commands  # noqa: E402

_register_user_commands(app)

# `simagent vasp-inputs REQUEST`: VASP inputs for machines that have VASP (tools/vasp/cli.py)
from tools.vasp.cli import register as _register_vasp_commands  # noqa: E402

_register_vasp_commands(app)

# `simagent rag add | list | remove | search | rebuild`: the literature index (simagent/knowledge/)
from simagent.knowledge.cli import rag_app  # noqa: E402

app.add_typer(rag_app, name="rag")


@app.command()
def solve(
    task: Annotated[Path, typer.Argument(help="MDGym task file (JSON)")],
    workdir: Annotated[Path, typer.Option("--workdir", help="output folder: final_answer.json, report.md, inputs/")],
    data_root: Annotated[Path | None, typer.Option("--data-root", help="DATA_ROOT/{LAMMPS,GROMACS}/...")] = None,
    json_out: JsonOpt = False, backend: BackendOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress output")] = False,
) -> None:
    """Solve an MDGym task file. Exit 0: every metric computed; 1: some or none; 2: bad task file."""
    from simagent.solve import solve as solve_task
    from simagent.solve import solve_settings

    result = solve_task(task, workdir, data_root, solve_settings(backend), progress=_progress(quiet))
    if json_out:
        typer.echo(json.dumps(result.summary()))
    else:
        Console().print_json(json.dumps(result.final_answer))
        for metric, reason in result.not_computed.items():
            err.print(f"[yellow]not computed[/yellow] {metric}: {reason}")
        err.print(f"report: {result.workdir / 'report.md'}")
    raise typer.Exit(result.exit_code)


# `simagent bench run TASKS...`: the MDGym-compatible benchmark harness (simagent/bench/)
bench_app = typer.Typer(no_args_is_help=True, help="Benchmark harness: MDGym task suites through an agent, scored.")
app.add_typer(bench_app, name="bench")


@bench_app.command("run")
def bench_run(
    tasks: Annotated[list[Path], typer.Argument(help="task files or folders of them (*.json, recursively)")],
    out: Annotated[Path, typer.Option("--out", help="session folder: results.csv, summary.md, tasks/<id>/")],
    agent: Annotated[str, typer.Option("--agent", help="simagent | command")] = "simagent",
    command: Annotated[str | None, typer.Option("--command", help="for --agent command: template with "
                                                "{workdir} and {prompt_file}, run without a shell")] = None,
    data_root: Annotated[Path | None, typer.Option(
        "--data-root", help="DATA_ROOT/<ENGINE>/{structures,potentials}/<ID>/")] = None,
    parallel: Annotated[int, typer.Option("--parallel", help="tasks run at the same time")] = 1,
    tolerance: Annotated[float | None, typer.Option("--tolerance", help="relative tolerance (default 0.05)")] = None,
    json_out: JsonOpt = False, backend: BackendOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress output")] = False,
) -> None:
    """Run and score tasks; re-running skips finished ones. Exit 0: every scored task solved; 1: not; 2: bad input."""
    from simagent.bench.orchestrator import run_session
    from simagent.bench.report import summary_dict

    outcomes = run_session(tasks, agent, out, data_root=data_root, parallel=parallel, command=command,
                           tolerance=tolerance, backend=backend,
                           progress=None if quiet else (lambda line: err.print(line, markup=False, highlight=False)))
    summary = summary_dict(outcomes)
    if json_out:
        typer.echo(json.dumps({**summary, "out": str(out.resolve())}))
    else:
        mean = summary["mean_score"]
        Console().print(f"mean score {'-' if mean is None else f'{mean:.2f}'} over {summary['scored']} scored tasks; "
                        f"{summary['solved']}/{summary['scored']} solved; see {out / 'summary.md'}")
    raise typer.Exit(0 if summary["solved"] == summary["scored"] else 1)


def main() -> None:
    """Entry point: user-facing errors become one clear line and a non-zero exit, never a traceback."""
    try:
        code = app(standalone_mode=False)  # click returns the exit code of typer.Exit here
        sys.exit(code if isinstance(code, int) else 0)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except SimagentError as exc:
        _fail(str(exc), exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        err.print("[yellow]interrupted[/yellow]; continue with `simagent resume THREAD`")
        sys.exit(130)
    except Exception as exc:  # click usage errors carry their own exit code
        import click

        if isinstance(exc, click.exceptions.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        if os.environ.get("SIMAGENT_DEBUG"):
            raise
        _fail(f"internal error: {type(exc).__name__}: {exc} (set SIMAGENT_DEBUG=1 for a traceback)", 70)


def _fail(message: str, code: int) -> None:
    if "--json" in sys.argv:
        answer = Answer(status="failed", request=" ".join(a for a in sys.argv[2:] if not a.startswith("-")),
                        error=message, summary=f"No answer: {message}")
        typer.echo(json.dumps(answer.model_dump(mode="json")))
    else:
        err.print(f"[red]error:[/red] {message}")
    sys.exit(code)


if __name__ == "__main__":
    main()
