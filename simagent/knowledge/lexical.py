"""Keyword scoring (Okapi BM25) over an index's chunk texts, blended with the dense ranking.

A paraphrased question about one mdp option ("what is the tau_t setting for") is often closer, as a
sentence embedding, to the manual's prose on the same topic than to the option's one-line entry; the
exact option name is the strongest evidence there is, and only a lexical score sees it. Tokens are
lowercase words; an identifier written with `_` or `-` (tau_t, tau-t, ref-p) also yields one joined
token spelled with `-`, so every spelling of an option name matches every other."""

from __future__ import annotations

import math
import re
from collections import Counter

import numpy as np

_WORD = re.compile(r"[a-z0-9]+(?:[-_][a-z0-9]+)*")
# function words only: anything with domain meaning (time, step, pressure) must stay a token
_STOP = frozenset(
    "a an and are as at be by can do does for from how i in is it its of on or should that the this "
    "to use used what when where which who why will with you your my me we there their into than then "
    "if so not no any all set".split())
K1, B = 1.2, 0.75


def tokens(text: str) -> list[str]:
    out: list[str] = []
    for word in _WORD.findall(text.lower()):
        parts = re.split(r"[-_]", word)
        out += [p for p in parts if p not in _STOP]
        if len(parts) > 1:
            out.append("-".join(parts))
    return out


class BM25:
    """BM25 over a fixed list of documents; `scores(query)` gives one score per document."""

    def __init__(self, texts: list[str]):
        self.docs = [Counter(tokens(t)) for t in texts]
        self.lengths = np.array([sum(d.values()) for d in self.docs], dtype="float64")
        self.avg = float(self.lengths.mean()) if len(self.docs) else 0.0
        self.postings: dict[str, list[int]] = {}
        for n, doc in enumerate(self.docs):
            for term in doc:
                self.postings.setdefault(term, []).append(n)
        total = len(self.docs)
        self.idf = {t: math.log(1 + (total - len(p) + 0.5) / (len(p) + 0.5)) for t, p in self.postings.items()}

    def scores(self, query: str) -> np.ndarray:
        out = np.zeros(len(self.docs))
        for term in set(tokens(query)):
            for n in self.postings.get(term, ()):
                tf = self.docs[n][term]
                norm = K1 * (1 - B + B * self.lengths[n] / self.avg)
                out[n] += self.idf[term] * tf * (K1 + 1) / (tf + norm)
        return out


# weight of the dense (cosine) score; 1 - DENSE_WEIGHT goes to BM25. Chosen on the dev split of
# benchmarks/rag (recall@5: 0.3 -> 0.77, 0.5 -> 0.82, 0.6 -> 0.84, 0.7 -> 0.80; reciprocal-rank
# fusion 0.75: it buries a passage that one ranking puts first and the other misses)
DENSE_WEIGHT = 0.6


def blend(dense: dict[int, float], keyword: dict[int, float], weight: float = DENSE_WEIGHT) -> list[tuple[int, float]]:
    """Convex combination of two scores of the same candidates, each min-max scaled to 0..1 over
    the candidates (a BM25 score of 0 stays 0); best first."""
    if not dense:
        return []
    low, high = min(dense.values()), max(dense.values())
    top = max(keyword.values(), default=0.0) or 1.0
    spread = (high - low) or 1.0
    out = {c: weight * (dense[c] - low) / spread + (1 - weight) * max(keyword.get(c, 0.0), 0.0) / top for c in dense}
    return sorted(out.items(), key=lambda kv: -kv[1])
