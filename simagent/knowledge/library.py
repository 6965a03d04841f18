"""The knowledge base a question is answered from: the bundled index (rag_index/: engine manuals,
simagent's method notes, force-field and potential citations) and the user's own index (their
papers, in the user data folder). Search embeds the question once, blends each index's dense and
keyword (BM25) scores and merges the indexes' hits by blended score; a hit's `score` stays its
cosine similarity."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from simagent.knowledge import embed, glossary, loaders
from simagent.knowledge.documents import CorpusError, Hit, SourceKind
from simagent.knowledge.index import IndexSettings, VectorIndex
from simagent.paths import rag_index_dir, user_data_dir

# Measured on benchmarks/rag (see its README): unanswerable questions scored at most 0.304, questions
# answered at rank 1 at least 0.351.
RELEVANCE_THRESHOLD = 0.35

# candidates taken from each ranking (dense, keyword) before their scores are blended
FUSION_DEPTH = 30

Progress = Callable[[str, int, int], None]


def user_index_dir() -> Path:
    return user_data_dir() / "rag_index"


def bundled_index_dir() -> Path:
    return rag_index_dir() / "bundled"


class AddReport:
    def __init__(self) -> None:
        self.added: list[tuple[str, int]] = []  # (source, chunks)
        self.unchanged: list[str] = []
        self.failed: list[str] = []  # messages


def add_files(index: VectorIndex, paths: list[Path], kind: SourceKind = "literature",
              progress: Progress | None = None) -> AddReport:
    """Load, chunk, embed and add files (folders are searched for supported files); a file that
    cannot be read is reported and skipped, the others are added; the index is saved once."""
    report = AddReport()
    files = loaders.expand(paths)
    if not files:
        raise CorpusError("no supported files (" + ", ".join(sorted(set(loaders.SUFFIXES))) + ") in "
                          + ", ".join(map(str, paths)))
    for number, path in enumerate(files, start=1):
        try:
            doc = loaders.load(path, kind)
        except CorpusError as err:
            report.failed.append(str(err))
            continue
        label = f"[{number}/{len(files)}] {path.name}"
        per_file = (lambda done, total, label=label: progress(label, done, total)) if progress else None
        _, n = index.add(doc, progress=per_file)
        (report.added.append((doc.source, n)) if n else report.unchanged.append(doc.source))
    if report.added:
        index.save()
    return report


def rebuild_from_sources(index: VectorIndex, progress: Progress | None = None) -> AddReport:
    """Re-read every recorded source of a stale index under the current settings."""
    sources = [(Path(d["source"]), d["kind"]) for d in index.documents_on_disk()]
    index.reset()
    report = AddReport()
    for path, kind in sources:
        if not path.is_file():
            report.failed.append(f"{path}: no longer exists; dropped from the index")
            continue
        sub = add_files(index, [path], kind, progress)
        report.added += sub.added
        report.failed += sub.failed
    index.save()
    return report


class KnowledgeBase:
    """Search over several indexes (default: bundled, then the user's)."""

    def __init__(self, folders: dict[str, Path] | None = None, settings: IndexSettings | None = None):
        folders = folders if folders is not None else {"bundled": bundled_index_dir(), "user": user_index_dir()}
        self.settings = settings or IndexSettings()
        self.indexes = {name: VectorIndex(folder, self.settings) for name, folder in folders.items()}

    def usable(self) -> dict[str, VectorIndex]:
        return {name: ix for name, ix in self.indexes.items() if ix.exists and not ix.stale and len(ix)}

    def problems(self) -> list[str]:
        out = []
        for name, ix in self.indexes.items():
            if ix.stale:
                out.append(f"the {name} index at {ix.folder} was built with other settings; "
                           + ("run `make setup` to rebuild it" if name == "bundled" else "run `simagent rag rebuild`"))
        return out

    def search(self, query: str, k: int = 5, kinds: set[str] | None = None,
               min_score: float | None = None) -> list[Hit]:
        usable = self.usable()
        if not usable or not query.strip():
            return []
        # the question in its own words plus the manuals' words for what it names (glossary), for
        # both rankings: benchmarks/rag dev split 0.705 -> 0.754 recall@5
        longer = glossary.expanded(query)
        vector = embed.encode([longer])[0]
        fused: list[tuple[float, Hit]] = []
        for name, ix in usable.items():
            for score, hit in ix.hybrid_search(longer, vector, depth=max(FUSION_DEPTH, k * 4)):
                hit.index = name
                fused.append((score, hit))
        fused.sort(key=lambda pair: -pair[0])
        hits = [hit for _, hit in fused]
        if kinds:
            hits = [h for h in hits if h.kind in kinds]
        if min_score is not None:
            hits = [h for h in hits if h.score >= min_score]
        return hits[:k]
