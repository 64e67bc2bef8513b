"""A small union-find (disjoint sets) with deterministic roots."""
from __future__ import annotations

from collections.abc import Hashable


class UnionFind:
    """Disjoint sets; the root of a set is its smallest member, so results are stable.

    ``networkx.utils.UnionFind`` picks a root by the sets' sizes and the order of the
    unions; the entity clusters and a record's names are keyed by their root, which
    must depend on the set alone.

    >>> uf = UnionFind(); uf.union("b", "a"); uf.union("c", "b")
    >>> uf.find("c")
    'a'
    """

    def __init__(self) -> None:
        self.parent: dict[Hashable, Hashable] = {}

    def find(self, x):
        self.parent.setdefault(x, x)
        root = x
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[x] != root:
            self.parent[x], x = root, self.parent[x]
        return root

    def union(self, a, b) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            lo, hi = sorted((ra, rb))
            self.parent[hi] = lo
