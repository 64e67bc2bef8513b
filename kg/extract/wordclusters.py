"""Word classes learned from unlabelled abstracts: features that generalize past the words
the annotated records happen to contain ("dehazing" behaves like "deraining").

Each frequent word gets a vector from the positive pointwise mutual information of the
words around it (a window of two), reduced by SVD; k-means then groups the vectors into
classes at two granularities. Everything is numpy with fixed seeds: the same texts give
the same classes. The classes ship with the model as ``clusters.json`` (word -> the two
class ids).
"""
from __future__ import annotations

import numpy


def cooccurrence(docs, vocab: dict[str, int], contexts: dict[str, int], window: int = 2) -> numpy.ndarray:
    """Counts of (word, context word) within ``window`` tokens, over ``docs`` (lists of
    lower-cased tokens)."""
    n_ctx = len(contexts)
    counts = numpy.zeros(len(vocab) * n_ctx, dtype="float64")
    batch_w, batch_c = [], []

    def flush():
        if batch_w:
            idx = numpy.asarray(batch_w, dtype="int64") * n_ctx + numpy.asarray(batch_c, dtype="int64")
            counts[:] += numpy.bincount(idx, minlength=len(counts))
            batch_w.clear()
            batch_c.clear()
    for toks in docs:
        w_ids = [vocab.get(t, -1) for t in toks]
        c_ids = [contexts.get(t, -1) for t in toks]
        for i, w in enumerate(w_ids):
            if w < 0:
                continue
            for k in range(max(0, i - window), min(len(toks), i + window + 1)):
                if k != i and c_ids[k] >= 0:
                    batch_w.append(w)
                    batch_c.append(c_ids[k])
        if len(batch_w) > 5_000_000:
            flush()
    flush()
    return counts.reshape(len(vocab), n_ctx)


def embed(counts: numpy.ndarray, dims: int = 100) -> numpy.ndarray:
    """Unit-length word vectors: SVD of the PPMI matrix of ``counts``."""
    total = counts.sum()
    rows = counts.sum(axis=1, keepdims=True)
    cols = counts.sum(axis=0, keepdims=True) ** 0.75  # context smoothing
    cols = cols / cols.sum() * total
    with numpy.errstate(divide="ignore", invalid="ignore"):
        pmi = numpy.log(counts * total / (rows * cols))
    ppmi = numpy.nan_to_num(numpy.maximum(pmi, 0.0), nan=0.0, posinf=0.0, neginf=0.0).astype("float32")
    u, s, _ = numpy.linalg.svd(ppmi, full_matrices=False)
    vecs = u[:, :dims] * numpy.sqrt(s[:dims])
    norms = numpy.linalg.norm(vecs, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vecs / norms


def kmeans(vecs: numpy.ndarray, k: int, iterations: int = 25, seed: int = 0) -> numpy.ndarray:
    """Cluster ids of the rows of ``vecs`` (spherical k-means, k-means++ seeding)."""
    rng = numpy.random.default_rng(seed)
    n = len(vecs)
    centers = [vecs[rng.integers(n)]]
    dist = 1.0 - vecs @ centers[0]
    for _ in range(1, k):
        p = numpy.maximum(dist, 0) ** 2
        centers.append(vecs[rng.choice(n, p=p / p.sum())])
        dist = numpy.minimum(dist, 1.0 - vecs @ centers[-1])
    c = numpy.stack(centers)
    for _ in range(iterations):
        assign = numpy.argmax(vecs @ c.T, axis=1)
        for j in range(k):
            members = vecs[assign == j]
            if len(members):
                m = members.sum(axis=0)
                c[j] = m / (numpy.linalg.norm(m) or 1.0)
    return numpy.argmax(vecs @ c.T, axis=1)


def word_classes(docs: list[list[str]], n_words: int = 30000, n_contexts: int = 2000, dims: int = 100,
                 ks: tuple[int, ...] = (64, 512), min_count: int = 5, seed: int = 0) -> dict[str, list[int]]:
    """{word: [its class at each granularity of ``ks``]} for the frequent words of ``docs``."""
    freq: dict[str, int] = {}
    for toks in docs:
        for t in toks:
            freq[t] = freq.get(t, 0) + 1
    ranked = sorted((w for w, c in freq.items() if c >= min_count and any(ch.isalnum() for ch in w)),
                    key=lambda w: (-freq[w], w))
    vocab = {w: i for i, w in enumerate(ranked[:n_words])}
    contexts = {w: i for i, w in enumerate(ranked[:n_contexts])}
    vecs = embed(cooccurrence(docs, vocab, contexts), dims)
    assignments = [kmeans(vecs, k, seed=seed) for k in ks]
    words = list(vocab)
    return {w: [int(a[i]) for a in assignments] for i, w in enumerate(words)}
