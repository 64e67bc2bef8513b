"""The graphs behind each HTML view, derived from the typed graph (networkx in,
networkx out; no drawing here).

- ``overview``: every node and relation.
- ``method-task``: methods and tasks, linked when papers apply or use the
  method on the task (weight = number of papers).
- ``dataset``: datasets, the papers that use them and the methods those papers
  propose or use (with ``evaluatedOn``).
- ``paper``: papers, linked when they share tasks, datasets or methods
  (weight = shared entities, weighted by rarity).
- ``ego``: the nodes within ``depth`` hops of one node.

Each derived edge carries ``key`` / ``predicate`` (its relation) and
``shared`` (the names behind it) where it summarizes several papers.
"""
from __future__ import annotations

import heapq
import math
from collections import defaultdict

import networkx as nx

VIEWS = {
    "overview": ("Overview", "every paper, method, task, dataset, repository and venue"),
    "method-task": ("Methods and tasks", "which methods are applied to which tasks, by number of papers"),
    "dataset": ("Datasets", "datasets with the papers that use them and the methods those papers propose or use"),
    "paper": ("Papers", "papers linked by the tasks, datasets and methods they share"),
}
ENTITY_LINKS = ("proposes", "usesMethod", "addressesTask", "usesDataset")


def _copy_nodes(G: nx.MultiDiGraph, H: nx.MultiDiGraph, nodes) -> None:
    for n in nodes:
        H.add_node(n, **G.nodes[n])


def method_task_graph(G: nx.MultiDiGraph) -> nx.MultiDiGraph:
    """Methods and tasks, an edge when a paper proposes or uses the method on the task.

    >>> G = nx.MultiDiGraph()
    >>> G.add_node("p", type="Paper", label="p"); G.add_node("m", type="Method", label="M")
    >>> G.add_node("t", type="Task", label="T")
    >>> _ = G.add_edge("p", "m", key="proposes"); _ = G.add_edge("p", "t", key="addressesTask")
    >>> [(u, v, d["weight"]) for u, v, d in method_task_graph(G).edges(data=True)]
    [('m', 't', 1)]
    """
    pairs: dict[tuple[str, str], set[str]] = defaultdict(set)
    for p, d in G.nodes(data=True):
        if d.get("type") != "Paper":
            continue
        methods = [v for _, v, k in G.out_edges(p, keys=True) if k in ("proposes", "usesMethod")]
        tasks = [v for _, v, k in G.out_edges(p, keys=True) if k == "addressesTask"]
        for m in methods:
            for t in tasks:
                pairs[(m, t)].add(p)
    H = nx.MultiDiGraph()
    _copy_nodes(G, H, sorted({n for pair in pairs for n in pair}))
    for (m, t), papers in sorted(pairs.items()):
        applied = G.has_edge(m, t, key="appliedTo")
        H.add_edge(m, t, key="appliedTo" if applied else "usedFor", predicate="appliedTo" if applied else "usedFor",
                   weight=len(papers), shared=sorted(G.nodes[p]["label"] for p in papers))
    return H


def dataset_graph(G: nx.MultiDiGraph) -> nx.MultiDiGraph:
    """Datasets, the papers that use them, and those papers' methods."""
    H = nx.MultiDiGraph()
    datasets = sorted(n for n, d in G.nodes(data=True) if d.get("type") == "Dataset")
    papers = sorted({u for ds in datasets for u, _ in G.in_edges(ds)})
    methods = sorted({v for p in papers for _, v, k in G.out_edges(p, keys=True) if k in ("proposes", "usesMethod")})
    _copy_nodes(G, H, datasets + papers + methods)
    for p in papers:
        for _, v, k in sorted(G.out_edges(p, keys=True)):
            if v in H and k in ("usesDataset", "proposes", "usesMethod"):
                H.add_edge(p, v, key=k, predicate=k)
    for m in methods:
        for _, v, k in sorted(G.out_edges(m, keys=True)):
            if k == "evaluatedOn" and v in H:
                H.add_edge(m, v, key=k, predicate=k)
    return H


def paper_graph(G: nx.MultiDiGraph, per_paper: int = 5, max_papers: int = 200) -> nx.MultiDiGraph:
    """Papers linked to their ``per_paper`` most related papers: those sharing tasks,
    datasets or methods, rarer entities weighing more (weight = sum of
    1 / log2(1 + papers naming the entity)). Entities named by more than
    ``max_papers`` papers link everything and are left out."""
    H = nx.MultiDiGraph()
    papers = sorted(n for n, d in G.nodes(data=True) if d.get("type") == "Paper")
    _copy_nodes(G, H, papers)
    members: dict[str, list[str]] = {}
    for e, d in G.nodes(data=True):
        if d.get("type") in ("Method", "Task", "Dataset"):
            ps = sorted({u for u, _, k in G.in_edges(e, keys=True) if k in ENTITY_LINKS})
            if 2 <= len(ps) <= max_papers:
                members[e] = ps
    member_sets = {e: set(ps) for e, ps in members.items()}
    weight = {e: 1 / math.log2(1 + len(ps)) for e, ps in members.items()}
    edges: dict[tuple[str, str], list[str]] = {}
    for p in papers:
        named = [e for _, e in G.out_edges(p) if e in members]
        score: dict[str, float] = defaultdict(float)
        for e in named:  # summed in edge order, as the weight below
            w = weight[e]
            for q in members[e]:
                score[q] += w
        score.pop(p, None)
        best = heapq.nsmallest(per_paper, score.items(), key=lambda kv: (-kv[1], kv[0]))
        for q, _ in best:
            edges[(min(p, q), max(p, q))] = sorted({e for e in named if q in member_sets[e]})
    for (a, b), ents in sorted(edges.items()):
        H.add_edge(a, b, key="shares", predicate="shares", weight=round(sum(weight[e] for e in ents), 3),
                   shared=sorted(G.nodes[e]["label"] for e in ents))
    return H


def induced(G: nx.MultiDiGraph, nodes) -> nx.MultiDiGraph:
    """The subgraph of ``G`` on ``nodes``, as a new graph whose nodes come in sorted
    order (``G.subgraph`` iterates a set when the part is small, an order that
    changes with the string hash seed, and layouts follow node order).

    >>> G = nx.MultiDiGraph([("b", "a"), ("a", "c"), ("c", "b")])
    >>> H = induced(G, ["c", "a"])
    >>> list(H.nodes), list(H.edges)
    (['a', 'c'], [('a', 'c', 0)])
    """
    keep = sorted(set(nodes))
    H = nx.MultiDiGraph()
    H.add_nodes_from((n, G.nodes[n]) for n in keep)
    H.add_edges_from((u, v, k, d) for u in keep for _, v, k, d in G.out_edges(u, keys=True, data=True) if v in H)
    return H


def ego_graph(G: nx.MultiDiGraph, focus: str, depth: int = 2) -> nx.MultiDiGraph:
    """The nodes within ``depth`` hops of ``focus`` (edges in either direction)."""
    return induced(G, nx.ego_graph(G.to_undirected(as_view=True), focus, radius=depth).nodes)


def view_graph(G: nx.MultiDiGraph, view: str) -> nx.MultiDiGraph:
    if view == "overview":
        return G
    if view == "method-task":
        return method_task_graph(G)
    if view == "dataset":
        return dataset_graph(G)
    if view == "paper":
        return paper_graph(G)
    raise ValueError(f"unknown view {view!r} (one of {', '.join(VIEWS)})")
