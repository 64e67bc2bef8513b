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

import math
from collections import defaultdict
from itertools import combinations

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


def paper_graph(G: nx.MultiDiGraph, min_weight: float = 0.0) -> nx.MultiDiGraph:
    """Papers linked by shared tasks, datasets and methods; rarer entities weigh more
    (weight = sum of 1 / log2(1 + papers naming the entity))."""
    H = nx.MultiDiGraph()
    papers = sorted(n for n, d in G.nodes(data=True) if d.get("type") == "Paper")
    _copy_nodes(G, H, papers)
    shared: dict[tuple[str, str], list[str]] = defaultdict(list)
    for e, d in sorted(G.nodes(data=True)):
        if d.get("type") not in ("Method", "Task", "Dataset"):
            continue
        ps = sorted({u for u, _, k in G.in_edges(e, keys=True) if k in ENTITY_LINKS})
        if len(ps) < 2 or len(ps) > 200:  # an entity in hundreds of papers links everything: skip it
            continue
        for a, b in combinations(ps, 2):
            shared[(a, b)].append(e)
    for (a, b), ents in sorted(shared.items()):
        w = sum(1 / math.log2(1 + len({u for u, _ in G.in_edges(e)})) for e in ents)
        if w >= min_weight:
            H.add_edge(a, b, key="shares", predicate="shares", weight=round(w, 3),
                       shared=sorted(G.nodes[e]["label"] for e in ents))
    return H


def ego_graph(G: nx.MultiDiGraph, focus: str, depth: int = 2) -> nx.MultiDiGraph:
    """The nodes within ``depth`` hops of ``focus`` (edges in either direction)."""
    return G.subgraph(nx.ego_graph(G.to_undirected(as_view=True), focus, radius=depth).nodes).copy()


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
