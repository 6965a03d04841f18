"""The bundled knowledge base, built offline from installed files (`make setup` runs
`python -m simagent.knowledge.bundled`): the GROMACS manual from Debian's gromacs-data, simagent's
method notes and data citations (simagent.knowledge.notes) and the README files.

Re-running is incremental: unchanged documents are kept, changed ones re-embedded, vanished ones
removed; other index settings (model, chunking) rebuild it from scratch."""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

from simagent.knowledge import loaders, notes
from simagent.knowledge.documents import CorpusError, Document
from simagent.knowledge.index import IndexSettings, VectorIndex
from simagent.knowledge.library import bundled_index_dir

GROMACS_HTML = Path("/usr/share/doc/gromacs/html")
# The user-facing manual. Left out: dev-manual (building GROMACS itself), release-notes (change logs
# of past versions that contradict the installed one), doxygen/gmxapi/nblib (programming APIs).
SAVE_EVERY_S = 60.0
GROMACS_PARTS = ("user-guide", "reference-manual", "how-to", "onlinehelp", "install-guide")


def gromacs_pages(root: Path = GROMACS_HTML) -> list[Path]:
    """Pages in the order of GROMACS_PARTS (the user guide first: an interrupted build has it)."""
    return [p for part in GROMACS_PARTS for p in sorted((root / part).rglob("*.html"))] if root.is_dir() else []


COMMAND_LIST = "user-guide/cmdline.html"


def command_purposes(root: Path = GROMACS_HTML) -> dict[str, str]:
    """The manual's own one-line purpose of every `gmx` program and the topics it is listed under,
    from the command-line reference's "Commands by name" and "Commands by topic" lists, keyed by
    the program's page ("gmx-rmsf.html" -> "Calculate atomic fluctuations (Distances between
    structures)")."""
    import lxml.html

    path = root / COMMAND_LIST
    if not path.is_file():
        return {}
    page = lxml.html.fromstring(re.sub(r"^\s*<\?xml[^>]*\?>", "", path.read_text(errors="replace")))
    purposes: dict[str, list[str]] = {}
    topics: dict[str, list[str]] = {}

    def program(link) -> str | None:
        href = (link.get("href") or "").split("#")[0]
        return href.rsplit("/", 1)[-1] if "onlinehelp/gmx-" in href else None

    for item in page.xpath("//section[@id='commands-by-name']//li"):
        links = item.xpath(".//a[@href]")
        name = program(links[0]) if links else None
        text = " ".join(item.text_content().split())
        if name and " - " in text:
            purposes.setdefault(name, []).append(text.split(" - ", 1)[1])
    for section in page.xpath("//section[@id='commands-by-topic']/section"):
        heading = section.find("h3")
        topic = " ".join(heading.text_content().split()).rstrip("\u00b6") if heading is not None else ""
        for term in section.xpath(".//dt"):
            links = term.xpath(".//a[@href]")
            name = program(links[0]) if links else None
            definition = term.getnext()
            if not name:
                continue
            if definition is not None and definition.tag == "dd":
                said = " ".join(definition.text_content().split())
                if said and said not in purposes.setdefault(name, []):
                    purposes[name].append(said)
            if topic and topic not in topics.setdefault(name, []):
                topics[name].append(topic)
    out = {}
    for name, said in purposes.items():
        listed = topics.get(name)
        out[name] = "; ".join(said) + (f" ({'; '.join(listed)})" if listed else "")
    return out


def tool_summary(doc: Document, purpose: str | None = None) -> str | None:
    """What a `gmx` program is for: the manual's one-line purpose from the command list (`purpose`,
    see command_purposes) and the first sentence of its page's Description that names the program
    ("gmx rmsf computes the root mean square fluctuation ..."), else the first sentence, cut to
    about 200 characters."""
    description = next((s.text for s in doc.sections if s.title == "Description"), "")
    sentences = [x.strip() for x in re.split(r"(?<=[.!?])\s+(?=[A-Z])|\n+", description) if x.strip()]
    if not sentences and not purpose:
        return None
    lead = f"command-line tool: {purpose.rstrip('.')}." if purpose else "command-line tool:"
    if not sentences:
        return lead
    name = doc.title.rsplit(": ", 1)[-1]
    first = next((x for x in sentences if name in x), sentences[0])
    if len(first) > 200:
        first = first[:first.rfind(" ", 0, 200)] + " ..."
    return f"{lead} {first}"


def corpus(gromacs_root: Path = GROMACS_HTML) -> list[Document]:
    docs: list[Document] = notes.note_documents()
    for readme in notes.readme_paths():
        doc = loaders.load(readme, kind="notes")
        doc.source = notes._rel(Path(doc.source))
        docs.append(doc)
    purposes = command_purposes(gromacs_root)
    for page in gromacs_pages(gromacs_root):
        try:
            doc = loaders.load(page, kind="manual")
        except CorpusError:
            continue  # pages that are only a table of contents hold no text sections
        doc.title = f"GROMACS manual: {doc.title}"
        if page.parent.name == "onlinehelp":
            doc.summary = tool_summary(doc, purposes.get(page.name))
        docs.append(doc)
    return docs


def build(folder: Path | None = None, settings: IndexSettings | None = None, gromacs_root: Path = GROMACS_HTML,
          progress=None) -> dict:
    start = time.perf_counter()
    index = VectorIndex(folder or bundled_index_dir(), settings)
    reuse = index.reusable_vectors()  # passages whose embedded text is unchanged are not embedded again
    if index.stale:
        index.reset()
    docs = corpus(gromacs_root)
    wanted = {d.source for d in docs}
    removed = [doc_id for doc_id, d in list(index.documents.items()) if d["source"] not in wanted]
    for doc_id in removed:
        index.remove(doc_id)
    added = 0
    last_save = time.perf_counter()
    for number, doc in enumerate(docs, start=1):
        _, n = index.add(doc, reuse=reuse)
        added += n
        if n and time.perf_counter() - last_save > SAVE_EVERY_S:  # an interrupted build keeps its work
            index.save()
            last_save = time.perf_counter()
        if progress and (n or number == len(docs)):
            progress(number, len(docs), doc.title, len(index))
    if added or removed or not index.exists:
        index.save()
    size = sum(f.stat().st_size for f in index.folder.iterdir() if f.is_file())
    return {"documents": len(index.documents), "chunks": len(index), "chunks_added": added,
            "chunks_embedded": index.encoded, "chunks_reused": added - index.encoded,
            "documents_removed": len(removed), "seconds": round(time.perf_counter() - start, 1),
            "bytes": size, "folder": str(index.folder), "gromacs_pages": sum(
                1 for d in index.documents.values() if d["kind"] == "manual")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="index folder (default rag_index/bundled)")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)

    def show(number: int, total: int, title: str, chunks: int) -> None:
        if not args.quiet:
            print(f"\r  bundled knowledge index: {number}/{total} documents, {chunks} chunks  ",
                  end="", file=sys.stderr, flush=True)

    if not GROMACS_HTML.is_dir():
        print(f"warning: {GROMACS_HTML} not found (Debian package gromacs-data); the bundled index "
              "will hold no GROMACS manual", file=sys.stderr)
    report = build(args.out, progress=show)
    if not args.quiet:
        print(file=sys.stderr)
    print(f"bundled knowledge index: {report['documents']} documents ({report['gromacs_pages']} GROMACS manual "
          f"pages), {report['chunks']} chunks ({report['chunks_embedded']} embedded now, {report['chunks_reused']} "
          f"reused) in {report['seconds']} s, "
          f"{report['bytes'] / 1e6:.1f} MB at {report['folder']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
