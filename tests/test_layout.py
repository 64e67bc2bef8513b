"""The force-directed layout of large views: the repulsion on a mesh is the exact
all-pairs repulsion up to a small error, and the layout it gives is deterministic
and keeps linked nodes together."""
from __future__ import annotations

import numpy as np

from kg.web.layout import MESH_NODES, MeshRepulsion, layout_pairs


def test_the_mesh_repulsion_is_close_to_the_exact_sum():
    rng = np.random.default_rng(3)
    n = 2000
    x = rng.uniform(-1, 1, n).astype(np.float32)
    y = rng.normal(0, 0.4, n).astype(np.float32)  # denser in the middle, a box that is not square
    k2 = 4.0 / n
    fx, fy = np.zeros(n, np.float32), np.zeros(n, np.float32)
    MeshRepulsion(128, k2).forces(x, y, fx, fy)
    dx, dy = x[:, None] - x[None, :], y[:, None] - y[None, :]
    d2 = dx.astype(np.float64) ** 2 + dy.astype(np.float64) ** 2
    np.fill_diagonal(d2, np.inf)
    ex, ey = (k2 * dx / d2).sum(1), (k2 * dy / d2).sum(1)
    error = np.hypot(fx - ex, fy - ey) / np.hypot(ex, ey)
    assert np.median(error) < 0.05
    assert np.corrcoef(fx, ex)[0, 1] > 0.99 and np.corrcoef(fy, ey)[0, 1] > 0.99


def clusters(n: int, parts: int, seed: int) -> tuple[list[int], np.ndarray, np.ndarray]:
    """``n`` nodes in ``parts`` groups, each node linked to three others of its group."""
    rng = np.random.default_rng(seed)
    group = np.arange(n) % parts
    pairs = [(i, j) for i in range(n) for j in rng.choice(np.flatnonzero(group == group[i]), 3)]
    return list(range(n)), np.array(pairs, dtype=np.int64), group


def test_a_mesh_layout_keeps_groups_apart_and_is_the_same_each_time():
    n = MESH_NODES + 500
    nodes, pairs, group = clusters(n, 4, seed=1)
    pos = layout_pairs(nodes, pairs, iterations=35)
    assert pos == layout_pairs(nodes, pairs, iterations=35)
    xy = np.array([pos[v] for v in nodes])
    assert np.abs(xy).max() <= 1.0
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, n, 20000), rng.integers(0, n, 20000)
    dist = np.linalg.norm(xy[a] - xy[b], axis=1)
    same = group[a] == group[b]
    assert np.median(dist[same]) < 0.5 * np.median(dist[~same])
    linked = np.linalg.norm(xy[pairs[:, 0]] - xy[pairs[:, 1]], axis=1)
    assert np.median(linked) < 0.5 * np.median(dist)
    # nodes spread out: no more than a few share a spot
    assert len({pos[v] for v in nodes}) > 0.95 * n
