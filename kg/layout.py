"""Force-directed layout (Fruchterman-Reingold) in numpy, for views too large
for the browser's physics. Deterministic for a given seed; needs no scipy.

>>> import networkx as nx
>>> pos = layout(nx.path_graph(4))
>>> sorted(pos) == [0, 1, 2, 3] and all(len(p) == 2 for p in pos.values())
True
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import networkx as nx
import numpy as np

#: Views with at least this many nodes compute the repulsion in two threads.
PARALLEL_ROWS = 1000


def layout(G: nx.Graph, iterations: int = 60, seed: int = 7, sample: int = 1000, gravity: float = 2.0) -> dict:
    """Positions in [-1, 1]^2 for every node of ``G`` (edges taken as undirected).

    Above ``sample`` nodes, each iteration computes repulsion against a random
    sample of ``sample`` nodes (scaled up), so a step costs O(n * sample)
    instead of O(n^2). ``gravity`` pulls every node toward the centre, so that
    small components and lone nodes stay near the rest instead of drifting off.
    """
    nodes = list(G.nodes)
    index = {v: i for i, v in enumerate(nodes)}
    pairs = np.array([(index[u], index[v]) for u, v in G.edges()], dtype=np.int64).reshape(-1, 2)
    return layout_pairs(nodes, pairs, iterations=iterations, seed=seed, sample=sample, gravity=gravity)


def link_pairs(pairs: np.ndarray) -> np.ndarray:
    """The distinct links of (i, j) index pairs, each as (min, max), sorted, loops left
    out: what the layout pulls along (the same as ``sorted({(min, max) ...})``).

    >>> link_pairs(np.array([[2, 0], [0, 2], [1, 1], [0, 1]])).tolist()
    [[0, 1], [0, 2]]
    """
    pairs = np.sort(np.asarray(pairs, dtype=np.int64).reshape(-1, 2), axis=1)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    return np.unique(pairs, axis=0) if len(pairs) else pairs


def layout_pairs(nodes: list, pairs: np.ndarray, iterations: int = 60, seed: int = 7, sample: int = 1000,
                 gravity: float = 2.0) -> dict:
    """:func:`layout` of the graph of ``nodes`` whose links are ``pairs``, an (m, 2)
    array of indices into ``nodes`` (either direction, repeats and loops allowed):
    for callers that have the links as indices already, without a networkx graph."""
    n = len(nodes)
    if n == 0:
        return {}
    if n == 1:
        return {nodes[0]: (0.0, 0.0)}
    edges = link_pairs(pairs)
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, n).astype(np.float32)
    y = rng.uniform(-1.0, 1.0, n).astype(np.float32)
    k2 = np.float32(4.0 / n)
    k = np.sqrt(k2)
    t = 0.2
    cool = t / (iterations + 1)
    m = min(n, sample)
    # The n x m repulsion arrays are computed in place in four buffers (the same float32
    # operations in the same order as the plain expressions: the same positions, without
    # allocating nine temporary arrays a step). Above ``PARALLEL_ROWS`` nodes the rows are
    # split between two threads (numpy releases the GIL; each row's sum is the same either way).
    parts = [slice(0, n)] if n < PARALLEL_ROWS else [slice(0, n // 2), slice(n // 2, n)]
    bufs = [tuple(np.empty((p.stop - p.start, m), dtype=np.float32) for _ in range(4)) for p in parts]
    fx, fy = np.empty(n, dtype=np.float32), np.empty(n, dtype=np.float32)

    def repulse(i, sx, sy, scale):
        rows, (dx, dy, d2, tmp) = parts[i], bufs[i]
        np.subtract(x[rows, None], sx[None, :], out=dx)
        np.subtract(y[rows, None], sy[None, :], out=dy)
        np.multiply(dx, dx, out=d2)
        d2 += np.multiply(dy, dy, out=tmp)
        np.maximum(d2, np.float32(1e-6), out=d2)
        np.divide(k2, d2, out=d2)  # inv
        fx[rows] = np.multiply(dx, d2, out=dx).sum(1) * scale
        fy[rows] = np.multiply(dy, d2, out=dy).sum(1) * scale

    pool = ThreadPoolExecutor(1) if len(parts) > 1 else None
    try:
        for _ in range(iterations):
            if n > sample:
                pick = rng.choice(n, sample, replace=False)
                sx, sy, scale = x[pick], y[pick], np.float32(n / sample)
            else:
                sx, sy, scale = x, y, np.float32(1.0)
            other = pool.submit(repulse, 1, sx, sy, scale) if pool else None
            repulse(0, sx, sy, scale)
            if other is not None:
                other.result()
            if len(edges):
                ex = x[edges[:, 0]] - x[edges[:, 1]]
                ey = y[edges[:, 0]] - y[edges[:, 1]]
                dist = np.maximum(np.sqrt(ex * ex + ey * ey), np.float32(1e-6)) / k
                np.subtract.at(fx, edges[:, 0], ex * dist)
                np.subtract.at(fy, edges[:, 0], ey * dist)
                np.add.at(fx, edges[:, 1], ex * dist)
                np.add.at(fy, edges[:, 1], ey * dist)
            fx -= np.float32(gravity) * k * x * np.sqrt(x * x + y * y)
            fy -= np.float32(gravity) * k * y * np.sqrt(x * x + y * y)
            length = np.maximum(np.sqrt(fx * fx + fy * fy), np.float32(1e-9))
            step = np.minimum(length, np.float32(t)) / length
            x += fx * step
            y += fy * step
            t -= cool
    finally:
        if pool is not None:
            pool.shutdown()
    x -= x.mean()
    y -= y.mean()
    scale = max(float(np.abs(x).max()), float(np.abs(y).max())) or 1.0
    return {v: (round(float(x[i]) / scale, 4), round(float(y[i]) / scale, 4)) for i, v in enumerate(nodes)}
