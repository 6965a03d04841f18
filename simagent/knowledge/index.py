"""One on-disk vector index: `index.faiss` (faiss.write_index of an IndexIDMap2 over IndexFlatIP,
exact inner-product search over unit vectors) and `meta.json` (documents and chunk texts; never a
pickle). The settings (model, chunk size and overlap, splitter version) are hashed; an index written
under other settings is `stale` and must be rebuilt before use."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

from simagent.knowledge import chunking, embed, lexical
from simagent.knowledge.documents import PASSAGE_VERSION, Chunk, Document, Hit, option_value_note

FORMAT = 1
INDEX_FILE = "index.faiss"
META_FILE = "meta.json"


class IndexSettings(BaseModel):
    model: str = Field(default_factory=embed.model_id)
    chunk_size: int = Field(default=900, ge=100, description="characters; MiniLM truncates at 256 word pieces")
    chunk_overlap: int = Field(default=150, ge=0)
    splitter: str = chunking.SPLITTER_VERSION
    passage: str = PASSAGE_VERSION

    @property
    def key(self) -> str:
        """Hash of everything that changes the stored vectors or chunk boundaries."""
        return hashlib.sha256(json.dumps(self.model_dump(), sort_keys=True).encode()).hexdigest()[:16]


def text_key(text: str) -> str:
    """What a stored vector was computed from (with the model in the settings): equal keys, equal vectors."""
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def document_id(doc: Document) -> str:
    digest = hashlib.sha256()
    # the title and summary are embedded with every passage: a new summary is a new document
    digest.update(f"{doc.title}\x00{doc.summary or ''}\x02".encode())
    for section in doc.sections:
        digest.update(f"{section.title}\x00{section.page}\x00{section.text}\x01".encode())
    return digest.hexdigest()[:16]


class VectorIndex:
    """Load with VectorIndex(folder); `add`, `remove`, `search`; `save` writes both files atomically."""

    def __init__(self, folder: Path, settings: IndexSettings | None = None):
        self.folder = Path(folder)
        self.settings = settings or IndexSettings()
        self.documents: dict[str, dict] = {}
        self.chunks: dict[int, dict] = {}
        self.next_id = 0
        self.stored_key: str | None = None
        self._faiss = None
        self._bm25: tuple[list[int], lexical.BM25] | None = None
        self.recorded: list[dict] = []
        self.encoded = 0  # passages embedded by this object (the others added were reused)
        meta_path = self.folder / META_FILE
        if meta_path.is_file():
            meta = json.loads(meta_path.read_text())
            self.stored_key = meta.get("settings_hash")
            self.recorded = list(meta.get("documents", {}).values())
            if not self.stale:
                self.documents = meta["documents"]
                self.chunks = {int(k): v for k, v in meta["chunks"].items()}
                self.next_id = meta["next_id"]

    @property
    def exists(self) -> bool:
        return self.stored_key is not None

    @property
    def stale(self) -> bool:
        """Written under other settings (model, chunking): its vectors cannot be mixed with new ones."""
        return self.stored_key is not None and self.stored_key != self.settings.key

    def documents_on_disk(self) -> list[dict]:
        """The documents recorded in meta.json, even when the index is stale (to rebuild it)."""
        return self.recorded

    def _index(self):
        import faiss

        if self._faiss is None:
            path = self.folder / INDEX_FILE
            if self.exists and not self.stale and path.is_file():
                self._faiss = faiss.read_index(str(path))
            else:
                self._faiss = faiss.IndexIDMap2(faiss.IndexFlatIP(embed.DIMENSION))
        return self._faiss

    def __len__(self) -> int:
        return len(self.chunks)

    def find_source(self, source: str) -> str | None:
        return next((doc_id for doc_id, d in self.documents.items() if d["source"] == source), None)

    def add(self, doc: Document, progress: Callable[[int, int], None] | None = None,
            replace: bool = True, reuse: dict[str, np.ndarray] | None = None) -> tuple[str, int]:
        """Chunk, embed and add one document; returns (document id, chunks added; 0 if unchanged).
        A document from a source already indexed with other content replaces it. `reuse` maps
        text_key(embedded text) to a vector the same model already computed (see `reusable_vectors`)."""
        doc_id = document_id(doc)
        if doc_id in self.documents:
            return doc_id, 0
        old = self.find_source(doc.source)
        if old and replace:
            self.remove(old)
        chunks = chunking.chunk_document(doc, self.settings.chunk_size, self.settings.chunk_overlap)
        self._bm25 = None
        texts = [c.embedding_text(doc.title, doc.summary) for c in chunks]
        keys = [text_key(t) for t in texts]
        reuse = reuse or {}
        todo = [n for n, key in enumerate(keys) if key not in reuse]
        fresh = embed.encode([texts[n] for n in todo], progress=progress)
        self.encoded += len(todo)
        vectors = np.zeros((len(chunks), embed.DIMENSION), dtype="float32")
        for n, key in enumerate(keys):
            if key in reuse:
                vectors[n] = reuse[key]
        if todo:
            vectors[todo] = fresh
        ids = np.arange(self.next_id, self.next_id + len(chunks), dtype="int64")
        self._index().add_with_ids(vectors, ids)
        for chunk_id, chunk in zip(ids.tolist(), chunks, strict=True):
            self.chunks[chunk_id] = {"doc": doc_id, **chunk.model_dump(exclude_none=True)}
        for chunk_id, key in zip(ids.tolist(), keys, strict=True):
            self.chunks[chunk_id]["embedded"] = key
        self.next_id += len(chunks)
        self.documents[doc_id] = {
            "source": doc.source, "title": doc.title, "summary": doc.summary, "kind": doc.kind,
            "authors": doc.authors, "doi": doc.doi,
            "year": doc.year, "n_chunks": len(chunks), "n_chars": doc.n_chars,
            "pages": len({s.page for s in doc.sections if s.page}) or None,
            "added": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        return doc_id, len(chunks)

    def remove(self, doc_id: str) -> int:
        ids = [cid for cid, c in self.chunks.items() if c["doc"] == doc_id]
        if ids:
            self._index().remove_ids(np.array(ids, dtype="int64"))
        for cid in ids:
            del self.chunks[cid]
        self._bm25 = None
        self.documents.pop(doc_id, None)
        return len(ids)

    def search(self, vectors: np.ndarray, k: int) -> list[list[Hit]]:
        if not self.chunks or self.stale:
            return [[] for _ in range(len(vectors))]
        scores, ids = self._index().search(np.ascontiguousarray(vectors, dtype="float32"), min(k, len(self.chunks)))
        # ids unknown to meta.json (a build saving while this index was being opened) are skipped
        return [[self.hit(int(i), float(s)) for s, i in zip(row_s, row_i, strict=True) if int(i) in self.chunks]
                for row_s, row_i in zip(scores, ids, strict=True)]

    def _lexical(self) -> tuple[list[int], lexical.BM25]:
        """BM25 over each chunk's document title and summary, section title and text (built on first use)."""
        if self._bm25 is None:
            ids = sorted(self.chunks)
            texts = [" ".join((self.documents[self.chunks[i]["doc"]]["title"],
                               self.documents[self.chunks[i]["doc"]].get("summary") or "",
                               self.chunks[i].get("section", ""), option_value_note(self.chunks[i]["text"]),
                               self.chunks[i]["text"])) for i in ids]
            self._bm25 = (ids, lexical.BM25(texts))
        return self._bm25

    def hybrid_search(self, query: str, vector: np.ndarray, depth: int = 30) -> list[tuple[float, Hit]]:
        """The top `depth` chunks by cosine and by BM25, each scored by a weighted sum of the two scores
        scaled to 0..1 over these candidates (lexical.blend); (blended score, hit) best first. Each
        hit's `score` stays its cosine similarity (the relevance threshold is calibrated on it)."""
        if not self.chunks or self.stale:
            return []
        scores, ids = self._index().search(np.ascontiguousarray(vector.reshape(1, -1), dtype="float32"),
                                           len(self.chunks))
        cosine = {int(i): float(s) for s, i in zip(scores[0], ids[0], strict=True) if int(i) in self.chunks}
        chunk_ids, bm25 = self._lexical()
        keyword = bm25.scores(query)
        top = [chunk_ids[n] for n in np.argsort(-keyword, kind="stable")[:depth] if keyword[n] > 0]
        candidates = list(dict.fromkeys([*list(cosine)[:depth], *top]))
        by_id = dict(zip(chunk_ids, keyword.tolist(), strict=True))
        blended = lexical.blend({c: cosine[c] for c in candidates}, {c: by_id[c] for c in candidates})
        return [(score, self.hit(cid, cosine[cid])) for cid, score in blended]

    def hit(self, chunk_id: int, score: float) -> Hit:
        chunk = self.chunks[chunk_id]
        doc = self.documents[chunk["doc"]]
        return Hit(score=score, text=chunk["text"], source=doc["source"], title=doc["title"], kind=doc["kind"],
                   section=chunk.get("section", ""), page=chunk.get("page"), anchor=chunk.get("anchor"),
                   doi=doc.get("doi"), authors=doc.get("authors", []), index=self.folder.name)

    def chunk(self, chunk_id: int) -> Chunk:
        return Chunk(**{k: v for k, v in self.chunks[chunk_id].items() if k not in ("doc", "embedded")})

    def reusable_vectors(self) -> dict[str, np.ndarray]:
        """Stored vectors by text_key of the text they embed, when the index on disk was written with
        the same model (even if it is stale because the chunking or the passage text changed): a
        rebuild then embeds only the passages whose text changed."""
        import faiss

        meta_path, index_path = self.folder / META_FILE, self.folder / INDEX_FILE
        if not (meta_path.is_file() and index_path.is_file()):
            return {}
        meta = json.loads(meta_path.read_text())
        if meta.get("settings", {}).get("model") != self.settings.model:
            return {}
        stored = faiss.read_index(str(index_path))
        out = {}
        for chunk_id, chunk in meta.get("chunks", {}).items():
            if chunk.get("embedded"):
                out[chunk["embedded"]] = stored.reconstruct(int(chunk_id))
        return out

    def save(self) -> None:
        import faiss

        self.folder.mkdir(parents=True, exist_ok=True)
        meta = {"format": FORMAT, "settings": self.settings.model_dump(), "settings_hash": self.settings.key,
                "next_id": self.next_id, "documents": self.documents,
                "chunks": {str(k): v for k, v in self.chunks.items()}}
        tmp_index = self.folder / (INDEX_FILE + ".tmp")
        tmp_meta = self.folder / (META_FILE + ".tmp")
        faiss.write_index(self._index(), str(tmp_index))
        tmp_meta.write_text(json.dumps(meta, ensure_ascii=False))
        os.replace(tmp_index, self.folder / INDEX_FILE)
        os.replace(tmp_meta, self.folder / META_FILE)
        self.stored_key = self.settings.key

    def reset(self) -> None:
        """Forget everything (used to rebuild a stale index under the current settings)."""
        self.documents, self.chunks, self.next_id, self._faiss, self._bm25 = {}, {}, 0, None, None
        self.stored_key = None
