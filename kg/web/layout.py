"""Force-directed layout (Fruchterman-Reingold) in numpy, for views too large
for the browser's physics. Deterministic for a given seed; needs no scipy.

What networkx lacks here: its ``spring_layout`` needs scipy above 500 nodes, and
its ``forceatlas2_layout`` computes the repulsion of every pair at every step, as
this module does only up to ``sample`` nodes.

Repulsion between every pair of nodes is what costs. Up to ``sample`` nodes it is
computed exactly; above, against a random sample of ``sample`` nodes each step; above
:data:`MESH_NODES`, on a grid (particle-mesh): the nodes are spread onto a
``grid`` x ``grid`` mesh over their bounding box (cloud-in-cell), the repulsion
``k^2 r / |r|^2`` is convolved with that density by FFT (zero-padded: no
wrap-around) and read back at each node. A step then costs O(n + grid^2 log grid)
instead of O(n * sample), and every node feels all the others, not a sample
(several times faster than a sampled repulsion, with the same median link length
and crowding; see ``docs/benchmarks.md``).

>>> import networkx as nx
>>> pos = layout(nx.path_graph(4))
>>> sorted(pos) == [0, 1, 2, 3] and all(len(p) == 2 for p in pos.values())
True
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import networkx as nx
import numpy as np

#: Views with at least this many nodes compute the sampled repulsion in two threads.
PARALLEL_ROWS = 1000
#: Views with more nodes than this compute the repulsion on a mesh (below it, the sampled
#: repulsion keeps close nodes apart better than a 128-cell mesh does).
MESH_NODES = 3000


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
                 gravity: float = 2.0, grid: int = 128) -> dict:
    """:func:`layout` of the graph of ``nodes`` whose links are ``pairs``, an (m, 2)
    array of indices into ``nodes`` (either direction, repeats and loops allowed):
    for callers that have the links as indices already, without a networkx graph.
    Above :data:`MESH_NODES` nodes the repulsion is computed on a ``grid`` x ``grid`` mesh."""
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
    bufs = [tuple(np.empty((p.stop - p.start, m), dtype=np.float32) for _ in range(4)) for p in parts] \
        if n <= MESH_NODES else []
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

    mesh = MeshRepulsion(grid, k2) if n > MESH_NODES else None
    pool = ThreadPoolExecutor(1) if len(parts) > 1 and mesh is None else None
    try:
        for _ in range(iterations):
            if mesh is not None:
                mesh.forces(x, y, fx, fy)
            else:
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


class MeshRepulsion:
    """Fruchterman-Reingold repulsion (``k2 * r / |r|^2`` from every other node) on a
    ``grid`` x ``grid`` mesh over the nodes' bounding box: :meth:`forces` spreads the
    nodes onto it (cloud-in-cell), convolves by FFT and reads the force back with the
    same weights. The kernel is made once, in cell units; only its scale follows the box.

    >>> rep = MeshRepulsion(64, 1.0)
    >>> x, y = np.array([-0.5, 0.5], dtype=np.float32), np.array([0.0, 0.0], dtype=np.float32)
    >>> fx, fy = np.zeros(2, dtype=np.float32), np.zeros(2, dtype=np.float32)
    >>> rep.forces(x, y, fx, fy)
    >>> bool(fx[0] < 0 < fx[1]), bool(abs(fx[0] + fx[1]) < 1e-6), bool(np.allclose(fy, 0, atol=1e-6))
    (True, True, True)
    >>> round(float(fx[1]), 2)  # exactly 1 / 1 for two nodes 1 apart
    1.0
    """

    def __init__(self, grid: int, k2: float):
        self.grid, self.k2 = grid, k2
        size = 2 * grid  # zero-padded: a node's field never wraps onto the far side
        d = np.arange(size)
        d[d >= grid] -= size
        dx, dy = np.meshgrid(d.astype(np.float64), d.astype(np.float64), indexing="ij")
        r2 = dx * dx + dy * dy
        r2[0, 0] = 1.0  # the kernel is 0 there: dx = dy = 0
        self.kx = np.fft.rfft2(dx / r2)
        self.ky = np.fft.rfft2(dy / r2)

    def forces(self, x: np.ndarray, y: np.ndarray, fx: np.ndarray, fy: np.ndarray) -> None:
        """Write the repulsion on each node at (``x``, ``y``) into ``fx``, ``fy``."""
        g, size = self.grid, 2 * self.grid
        lo_x, lo_y = float(x.min()), float(y.min())
        span = max(float(x.max()) - lo_x, float(y.max()) - lo_y, 1e-9)
        h = span / (g - 1.001)  # the box's far edge stays inside cell g - 2
        gx = (x - lo_x).astype(np.float64) / h
        gy = (y - lo_y).astype(np.float64) / h
        ix, iy = gx.astype(np.int64), gy.astype(np.int64)
        ax, ay = gx - ix, gy - iy
        corner = ix * size + iy
        cells = (corner, corner + size, corner + 1, corner + size + 1)
        weights = ((1 - ax) * (1 - ay), ax * (1 - ay), (1 - ax) * ay, ax * ay)
        density = np.bincount(np.concatenate(cells), weights=np.concatenate(weights), minlength=size * size)
        spectrum = np.fft.rfft2(density.reshape(size, size))
        scale = self.k2 / h  # the kernel in cell units: k2 * (d h) / (|d| h)^2
        for kernel, out in ((self.kx, fx), (self.ky, fy)):
            field = np.fft.irfft2(spectrum * kernel, s=(size, size)).ravel()
            out[:] = sum(field[c] * w for c, w in zip(cells, weights)) * scale
