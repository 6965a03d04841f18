"""`simagent rag add | list | remove | search | rebuild`: the user's own literature index (in the user
data folder) next to the bundled one. Exit 0 on success, 1 when a file could not be added (the
others are) or nothing matched."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from simagent.knowledge import library
from simagent.knowledge.documents import CorpusError
from simagent.knowledge.index import VectorIndex

rag_app = typer.Typer(no_args_is_help=True, help="Literature and manuals for cited answers (FAISS index).")
err = Console(stderr=True, soft_wrap=True, highlight=False)
JsonOpt = Annotated[bool, typer.Option("--json", help="print one JSON object on stdout")]
IndexOpt = Annotated[Path | None, typer.Option("--index", help="index folder (default: the user's, "
                                                "$SIMAGENT_DATA/rag_index)")]


def _user_index(folder: Path | None) -> VectorIndex:
    index = VectorIndex(folder or library.user_index_dir())
    if index.stale:
        err.print(f"[yellow]the index at {index.folder} was built with other settings; rebuilding it from its "
                  "sources[/yellow]")
        _report(library.rebuild_from_sources(index, _progress_bar()), False)
    return index


def _progress_bar():
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("chunks"),
                   TimeElapsedColumn(), console=err, transient=True)
    tasks: dict[str, int] = {}

    def show(label: str, done: int, total: int) -> None:
        if not bar.live.is_started:
            bar.start()
        if label not in tasks:
            tasks[label] = bar.add_task(label, total=total)
        bar.update(tasks[label], completed=done)
        if done >= total:
            bar.remove_task(tasks.pop(label))
            err.print(f"  embedded {label} ({total} chunks)")
    show.stop = bar.stop  # type: ignore[attr-defined]
    return show


def _report(report: library.AddReport, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps({"added": [{"source": s, "chunks": n} for s, n in report.added],
                               "unchanged": report.unchanged, "failed": report.failed}))
        return
    for source, n in report.added:
        err.print(f"[green]added[/green] {source} ({n} chunks)")
    for source in report.unchanged:
        err.print(f"[dim]unchanged[/dim] {source}")
    for message in report.failed:
        err.print(f"[red]not added:[/red] {message}")


@rag_app.command("add")
def add(paths: Annotated[list[Path], typer.Argument(help="files or folders: PDF, HTML, Markdown, text, JATS XML")],
        index: IndexOpt = None, json_out: JsonOpt = False) -> None:
    """Add papers or notes to your index (incremental: unchanged files are skipped)."""
    target = _user_index(index)
    show = _progress_bar()
    try:
        report = library.add_files(target, paths, "literature", show)
    finally:
        show.stop()
    _report(report, json_out)
    if not json_out:
        err.print(f"index: {len(target.documents)} documents, {len(target)} chunks at {target.folder}")
    raise typer.Exit(1 if report.failed else 0)


@rag_app.command("list")
def list_documents(index: IndexOpt = None, json_out: JsonOpt = False,
                   bundled: Annotated[bool, typer.Option("--bundled", help="list the bundled index")] = False) -> None:
    """Documents in your index (or the bundled one): id, chunks, title, source."""
    target = VectorIndex(library.bundled_index_dir()) if bundled else VectorIndex(index or library.user_index_dir())
    rows = [{"id": doc_id, **d} for doc_id, d in target.documents.items()]
    if json_out:
        typer.echo(json.dumps({"index": str(target.folder), "stale": target.stale, "documents": rows}))
        return
    out = Console()
    if target.stale:
        out.print(f"[yellow]{target.folder} was built with other settings (run `simagent rag rebuild`)[/yellow]")
    if not rows:
        out.print(f"no documents in {target.folder}")
        return
    for row in rows:
        page = f", {row['pages']} pages" if row.get("pages") else ""
        doi = f" doi:{row['doi']}" if row.get("doi") else ""
        out.print(f"{row['id']}  {row['n_chunks']:>4} chunks{page}  {row['title']}{doi}\n"
                  f"                  [dim]{row['source']}[/dim]", highlight=False)
    out.print(f"{len(rows)} documents, {len(target)} chunks at {target.folder}")


@rag_app.command("remove")
def remove(items: Annotated[list[str], typer.Argument(help="document ids (from `rag list`) or source paths")],
           index: IndexOpt = None, json_out: JsonOpt = False) -> None:
    """Remove documents from your index."""
    target = _user_index(index)
    removed, unknown = [], []
    for item in items:
        doc_id = item if item in target.documents else target.find_source(str(Path(item).expanduser().resolve()))
        if doc_id is None:
            unknown.append(item)
            continue
        source = target.documents[doc_id]["source"]
        removed.append({"id": doc_id, "source": source, "chunks": target.remove(doc_id)})
    if removed:
        target.save()
    if json_out:
        typer.echo(json.dumps({"removed": removed, "unknown": unknown}))
    else:
        for r in removed:
            err.print(f"[green]removed[/green] {r['source']} ({r['chunks']} chunks)")
        for u in unknown:
            err.print(f"[red]not in the index:[/red] {u}")
    raise typer.Exit(1 if unknown else 0)


@rag_app.command("search")
def search(query: Annotated[str, typer.Argument(help="question or keywords")],
           k: Annotated[int, typer.Option("-k", help="passages")] = 5, json_out: JsonOpt = False) -> None:
    """The passages of the bundled and your index that best match a question."""
    kb = library.KnowledgeBase()
    for problem in kb.problems():
        err.print(f"[yellow]{problem}[/yellow]")
    hits = kb.search(query, k=k)
    if json_out:
        typer.echo(json.dumps({"query": query, "hits": [h.model_dump() for h in hits]}))
    else:
        out = Console()
        for n, h in enumerate(hits, start=1):
            where = ", ".join(x for x in (h.section, f"p. {h.page}" if h.page else "") if x)
            out.print(f"[bold][{n}][/bold] {h.score:.2f}  {h.title}" + (f" ({where})" if where else "")
                      + f"\n    [dim]{h.source}[/dim]\n    {h.text[:300]}", highlight=False)
    raise typer.Exit(0 if hits else 1)


@rag_app.command("rebuild")
def rebuild(index: IndexOpt = None) -> None:
    """Re-read and re-embed every source of your index (after a change of model or chunking)."""
    target = VectorIndex(index or library.user_index_dir())
    if not target.documents_on_disk():
        raise CorpusError(f"no index at {target.folder}")
    show = _progress_bar()
    try:
        report = library.rebuild_from_sources(target, show)
    finally:
        show.stop()
    _report(report, False)
    raise typer.Exit(1 if report.failed else 0)
