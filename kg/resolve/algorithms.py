"""Graph helpers, networkx-style: the typed graph ``G`` in, plain data out.

Node ids are the resource paths of :mod:`kg.resolve.graph` (``paper/…``,
``method/…``, ``task/…``, ``dataset/…``, ``repository/…``, ``venue/…``).

>>> import networkx as nx
>>> G = nx.MultiDiGraph()
>>> for n, t in [("paper/a", "Paper"), ("paper/b", "Paper"), ("method/m", "Method"), ("task/t", "Task")]:
...     G.add_node(n, type=t, label=n)
>>> for p in ("paper/a", "paper/b"):
...     _ = G.add_edge(p, "task/t", key="addressesTask")
>>> _ = G.add_edge("paper/a", "method/m", key="proposes")
>>> papers_for(G, "task/t")
['paper/a', 'paper/b']
>>> methods_for_task(G, "task/t")
[('method/m', 1)]
>>> related_papers(G, "paper/b")
[('paper/a', 0.6309, ['task/t'])]
"""
from __future__ import annotations

import heapq
import math
from collections import Counter

import networkx as nx

ENTITY_RELATIONS = ("proposes", "usesMethod", "addressesTask", "usesDataset", "hasCode")
KIND_TYPE = {"paper": "Paper", "method": "Method", "task": "Task", "dataset": "Dataset",
             "repository": "CodeRepository", "venue": "Venue"}


def edge_count(G: nx.MultiDiGraph) -> int:
    """``G.number_of_edges()``, counted over ``G.adjacency()`` (networkx's degree view,
    which that method walks, is several times slower over a large graph).

    >>> edge_count(nx.MultiDiGraph([("a", "b"), ("a", "b"), ("b", "c")]))
    3
    """
    if not (G.is_directed() and G.is_multigraph()):  # an undirected adjacency holds each link twice
        return G.number_of_edges()
    return sum(len(keys) for _, nbrs in G.adjacency() for keys in nbrs.values())


def node_type(G: nx.MultiDiGraph, n: str) -> str:
    return G.nodes[n]["type"]


def papers_for(G: nx.MultiDiGraph, entity: str) -> list[str]:
    """Papers linked to an entity by any relation (proposes, uses, addresses, code, venue), sorted."""
    return sorted({u for u, _ in G.in_edges(entity) if node_type(G, u) == "Paper"})


def entities_of(G: nx.MultiDiGraph, paper: str, types: tuple[str, ...] = ("Method", "Task", "Dataset")) -> list[str]:
    """The entities a paper is linked to, of the given types, sorted."""
    return sorted({v for _, v, k in G.out_edges(paper, keys=True) if k in ENTITY_RELATIONS and node_type(G, v) in types})


def methods_for_task(G: nx.MultiDiGraph, task: str) -> list[tuple[str, int]]:
    """Methods proposed or used by papers on a task: (method, number of papers), most first."""
    return _count_linked(G, papers_for(G, task), ("proposes", "usesMethod"))


def _count_linked(G: nx.MultiDiGraph, papers: list[str], relations: tuple[str, ...]) -> list[tuple[str, int]]:
    """The nodes ``papers`` link to by one of ``relations``: (node, papers), most first."""
    counts: Counter = Counter()
    succ = G.succ
    for p in papers:
        counts.update(v for v, keys in succ[p].items() if any(k in keys for k in relations))
    return sorted(counts.items(), key=_by_count)


def method_usages(G: nx.MultiDiGraph, limit: int | None = None) -> dict[str, list[tuple[str, int]]]:
    """For every task, the methods that papers on it propose or use, with the number of
    distinct such papers: task -> [(method, papers), ...], most first, ties by method
    id; the first ``limit`` of each. What the build writes as ``kg:MethodUsage`` nodes.
    One pass over the papers.

    >>> G = nx.MultiDiGraph()
    >>> _ = G.add_node("paper/a", type="Paper"), G.add_node("paper/b", type="Paper")
    >>> for p, k, v in [("paper/a", "addressesTask", "task/s"), ("paper/a", "addressesTask", "task/t"),
    ...                 ("paper/a", "usesMethod", "method/x"), ("paper/b", "addressesTask", "task/t"),
    ...                 ("paper/b", "proposes", "method/y"), ("paper/b", "usesMethod", "method/y")]:
    ...     _ = G.add_edge(p, v, key=k)
    >>> method_usages(G)
    {'task/s': [('method/x', 1)], 'task/t': [('method/x', 1), ('method/y', 1)]}
    """
    nodes = G.nodes
    counts: dict[str, dict[str, int]] = {}
    for p, nbrs in G.adjacency():
        if nodes[p].get("type") != "Paper":
            continue
        ts, ms = [], []
        for v, keys in nbrs.items():
            if "addressesTask" in keys:
                ts.append(v)
            if "proposes" in keys or "usesMethod" in keys:
                ms.append(v)
        if ms:
            for t in ts:
                c = counts.get(t)
                if c is None:
                    c = counts[t] = {}
                for m in ms:
                    c[m] = c.get(m, 0) + 1
    key = _by_count
    out = {}
    for t in sorted(counts):
        c = counts[t]
        out[t] = heapq.nsmallest(limit, c.items(), key=key) if limit is not None and len(c) > limit \
            else sorted(c.items(), key=key)
    return out


def _by_count(kv: tuple[str, int]) -> tuple[int, str]:
    return -kv[1], kv[0]


def datasets_for(G: nx.MultiDiGraph, method: str) -> list[tuple[str, int]]:
    """Datasets used by the papers that propose or use a method: (dataset, papers), most first."""
    return _count_linked(G, papers_for(G, method), ("usesDataset",))


def rarity(papers: int) -> float:
    """Weight of sharing an entity named by ``papers`` papers: 1 / log2(1 + papers)
    (rare ones weigh more).

    >>> rarity(1), rarity(3)
    (1.0, 0.5)
    """
    return 1.0 / math.log2(1 + max(1, papers))


def related_papers(G: nx.MultiDiGraph, paper: str, k: int = 10) -> list[tuple[str, float, list[str]]]:
    """Papers sharing methods, tasks or datasets with ``paper``, ranked by the summed
    rarity of what they share: (paper, score, shared entities)."""
    return rank_related(paper, {e: papers_for(G, e) for e in entities_of(G, paper)}, k)


def rank_related(paper: str, papers_of: dict[str, list[str]], k: int) -> list[tuple[str, float, list[str]]]:
    """The ``k`` papers that share most with ``paper``, given the papers of each of its
    entities (``papers_of``): (paper, summed :func:`rarity` of the shared, shared entities)."""
    shared: dict[str, list[str]] = {}
    for e, papers in papers_of.items():
        for other in papers:
            if other != paper:
                shared.setdefault(other, []).append(e)
    weight = {e: rarity(len(papers)) for e, papers in papers_of.items()}
    ranked = [(o, round(sum(weight[e] for e in es), 4), sorted(es)) for o, es in shared.items()]
    return sorted(ranked, key=lambda r: (-r[1], r[0]))[:k]


def top(G: nx.MultiDiGraph, kind: str, by: str = "papers", n: int = 20) -> list[tuple[str, int]]:
    """The ``n`` nodes of a kind ("method", "task", "dataset", "repository", "venue",
    "paper") with the most papers (``by="papers"``) or the highest degree (``by="degree"``)."""
    type_, by = top_terms(kind, by)
    nodes = [v for v, d in G.nodes(data=True) if d.get("type") == type_]
    if by == "papers":
        scores = [(v, len(papers_for(G, v))) for v in nodes]
    else:
        scores = [(v, G.degree(v)) for v in nodes]
    return sorted(scores, key=_by_count)[:n]


def top_terms(kind: str, by: str) -> tuple[str, str]:
    """The node type a :func:`top` kind names, and its measure (a paper's is its degree)."""
    type_ = KIND_TYPE.get(kind.lower().rstrip("s"), kind)
    if by not in ("papers", "degree"):
        raise ValueError(f"by must be 'papers' or 'degree', not {by!r}")
    return type_, "degree" if type_ == "Paper" else by


def shortest_path(G: nx.MultiDiGraph, a: str, b: str) -> list[str]:
    """The shortest chain of nodes linking ``a`` and ``b`` (edges in either direction),
    or [] when they are not connected."""
    try:
        return nx.shortest_path(G.to_undirected(as_view=True), a, b)
    except nx.NetworkXNoPath:
        return []


def subgraph(G: nx.MultiDiGraph, nodes: list[str], depth: int = 1) -> nx.MultiDiGraph:
    """The nodes within ``depth`` hops of any of ``nodes``, with their edges (a copy)."""
    U = G.to_undirected(as_view=True)
    keep: set[str] = set()
    for n in nodes:
        keep |= set(nx.ego_graph(U, n, radius=depth).nodes)
    return G.subgraph(keep).copy()
