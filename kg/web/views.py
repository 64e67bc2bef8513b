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
``members`` (the ids of the papers or entities behind it) where it summarizes
several; :func:`member_names` turns them into sorted names.
"""
from __future__ import annotations

import heapq
import math
from collections import defaultdict
from itertools import islice

import networkx as nx

VIEWS = {
    "overview": ("Map of the field", "tasks, methods and datasets by papers, in named clusters, with trends"),
    "method-task": ("Methods and tasks", "which methods are applied to which tasks, by number of papers"),
    "dataset": ("Datasets", "datasets with the papers that use them and the methods those papers propose or use"),
    "paper": ("Papers", "papers linked by the tasks, datasets and methods they share"),
}
ENTITY_LINKS = ("proposes", "usesMethod", "addressesTask", "usesDataset")


def _copy_nodes(G: nx.MultiDiGraph, H: nx.MultiDiGraph, nodes) -> None:
    for n in nodes:
        H.add_node(n, **G.nodes[n])


def method_task_graph(G: nx.MultiDiGraph, limit: int | None = None) -> nx.MultiDiGraph:
    """Methods and tasks, an edge when a paper proposes or uses the method on the task.

    With more than ``limit`` nodes, only the ``limit`` with the most links are
    kept, and ``H.graph["total_nodes"]`` says how many there were.

    >>> G = nx.MultiDiGraph()
    >>> G.add_node("p", type="Paper", label="p"); G.add_node("m", type="Method", label="M")
    >>> G.add_node("t", type="Task", label="T")
    >>> _ = G.add_edge("p", "m", key="proposes"); _ = G.add_edge("p", "t", key="addressesTask")
    >>> [(u, v, d["weight"]) for u, v, d in method_task_graph(G).edges(data=True)]
    [('m', 't', 1)]
    """
    pairs: dict[tuple[str, str], list[str]] = defaultdict(list)
    succ = dict(G.adjacency())  # node -> neighbour -> key -> data: plain dicts (G.adj's views cost seconds)
    for p, d in G.nodes(data=True):
        if d.get("type") != "Paper":
            continue
        methods, tasks = [], []
        for v, keys in succ[p].items():  # each neighbour once: a paper counts once a pair
            if "proposes" in keys or "usesMethod" in keys:
                methods.append(v)
            if "addressesTask" in keys:
                tasks.append(v)
        for m in methods:
            for t in tasks:
                pairs[(m, t)].append(p)
    nodes = sorted({n for pair in pairs for n in pair})
    H = nx.MultiDiGraph()
    if limit is not None and len(nodes) > limit:
        # the ``limit`` nodes with most links (one link a pair), chosen before any edge is made:
        # a large corpus has hundreds of thousands of pairs and a view shows a few thousand
        degree: dict[str, int] = dict.fromkeys(nodes, 0)
        for m, t in pairs:
            degree[m] += 1
            degree[t] += 1
        H.graph["total_nodes"] = len(nodes)
        keep = set(best_connected(degree, limit))
        nodes = sorted(keep)
        pairs = {pair: papers for pair, papers in pairs.items() if pair[0] in keep and pair[1] in keep}
    _copy_nodes(G, H, nodes)
    # links in the order their pairs were met (papers in graph order): deterministic, and
    # nothing downstream reads the order (so no sort); one link a pair
    H.add_edges_from((m, t, rel, {"predicate": rel, "weight": len(papers), "members": papers})
                     for (m, t), papers in pairs.items()
                     for rel in ["appliedTo" if "appliedTo" in succ[m].get(t, ()) else "usedFor"])
    return H


def dataset_graph(G: nx.MultiDiGraph, limit: int | None = None) -> nx.MultiDiGraph:
    """Datasets, the papers that use them, and those papers' methods.

    With more than ``limit`` nodes, only the ``limit`` with the most links are
    kept, and ``H.graph["total_nodes"]`` says how many there were.

    >>> G = nx.MultiDiGraph()
    >>> G.add_nodes_from([("p", {"type": "Paper"}), ("m", {"type": "Method"}), ("d", {"type": "Dataset"})])
    >>> _ = G.add_edges_from([("p", "d", "usesDataset"), ("p", "m", "proposes"), ("m", "d", "evaluatedOn")])
    >>> sorted(dataset_graph(G).edges(keys=True))
    [('m', 'd', 'evaluatedOn'), ('p', 'd', 'usesDataset'), ('p', 'm', 'proposes')]
    """
    datasets = sorted(n for n, d in G.nodes(data=True) if d.get("type") == "Dataset")
    succ = dict(G.adjacency())
    papers = sorted({u for ds in datasets for u in G.pred[ds]})
    methods = sorted({v for p in papers for v, keys in succ[p].items() if "proposes" in keys or "usesMethod" in keys})
    nodes = set(datasets) | set(papers) | set(methods)
    paper_set, method_set = set(papers), set(methods)
    wanted = ("usesDataset", "proposes", "usesMethod")
    wanted_set = frozenset(wanted)

    def edges_of(u: str, inside: set) -> list[tuple]:
        """``u``'s links in the view, in its order: by target, then by relation."""
        out = []
        if u in paper_set:
            for v, keys in sorted(succ[u].items()):
                if v in inside:
                    out += [(u, v, k, {"predicate": k}) for k in (sorted(keys) if len(keys) > 1 else keys) if k in wanted]
        if u in method_set:
            for v, keys in sorted(succ[u].items()):
                if "evaluatedOn" in keys and v in inside:
                    out.append((u, v, "evaluatedOn", {"predicate": "evaluatedOn"}))
        return out

    H = nx.MultiDiGraph()
    if limit is None or len(nodes) <= limit:
        _copy_nodes(G, H, datasets + papers + methods)
        H.add_edges_from((e for u in papers for e in edges_of(u, nodes) if u in paper_set and e[2] != "evaluatedOn"))
        H.add_edges_from((e for u in methods for e in edges_of(u, nodes) if e[2] == "evaluatedOn"))
        return H
    # the ``limit`` nodes with most links, counted before any edge is made (one a link)
    degree: dict[str, int] = dict.fromkeys(datasets + papers + methods, 0)
    for p in papers:
        for v, keys in succ[p].items():
            if v in nodes:
                c = len(wanted_set.intersection(keys))
                if c:
                    degree[p] += c
                    degree[v] += c
    for m in methods:
        for v, keys in succ[m].items():
            if "evaluatedOn" in keys and v in nodes:
                degree[m] += 1
                degree[v] += 1
    H.graph["total_nodes"] = len(degree)
    keep = set(best_connected(degree, limit))
    order = sorted(keep)
    _copy_nodes(G, H, order)
    H.add_edges_from((e for u in order for e in edges_of(u, keep)))
    return H


def degrees(G: nx.MultiDiGraph) -> dict:
    """``dict(G.degree)`` (in + out links, each parallel link counted), read from the
    graph's adjacency dicts: networkx's degree view is several times slower.

    >>> G = nx.MultiDiGraph([("a", "b"), ("a", "b"), ("b", "c"), ("c", "c")])
    >>> degrees(G) == dict(G.degree)
    True
    """
    if not G.is_directed() or not G.is_multigraph():
        return dict(G.degree)
    out = {n: sum(map(len, nbrs.values())) for n, nbrs in G.adjacency()}
    for _, nbrs in G.adjacency():
        for v, keys in nbrs.items():
            out[v] += len(keys)
    return out


def best_connected(degree, limit: int) -> list[str]:
    """The ``limit`` nodes of highest degree (``degree``: node -> degree), ties by id.

    >>> best_connected({"a": 1, "b": 3, "c": 3}, 2)
    ['b', 'c']
    """
    return heapq.nsmallest(limit, degree, key=lambda n: (-degree[n], n))


def _more_than(n: int, items) -> bool:
    """True if the iterable ``items`` has more than ``n`` items (it stops at the first one over).

    >>> _more_than(2, iter("abc")), _more_than(3, iter("abc"))
    (True, False)
    """
    return next(islice(items, n, None), _END) is not _END


_END = object()


def paper_graph(G: nx.MultiDiGraph, per_paper: int = 5, max_papers: int = 200,
                limit: int | None = None) -> nx.MultiDiGraph:
    """Papers linked to their ``per_paper`` most related papers: those sharing tasks,
    datasets or methods, rarer entities weighing more (weight = sum of
    1 / log2(1 + papers naming the entity)). Entities named by more than
    ``max_papers`` papers link everything and are left out.

    With more than ``limit`` papers, only the ``limit`` best-connected ones are
    kept (the largest sum of weight x other papers over what they name), and
    ``H.graph["total_nodes"]`` says how many there were.
    """
    H = nx.MultiDiGraph()
    succ, pred = dict(G.adjacency()), G.pred  # node -> neighbour -> key -> data
    links = set(ENTITY_LINKS)
    papers = sorted(n for n, d in G.nodes(data=True) if d.get("type") == "Paper")
    members: dict[str, list[str]] = {}
    for e, d in G.nodes(data=True):
        if d.get("type") in ("Method", "Task", "Dataset") and len(pred[e]) >= 2:  # one linked node: no pair
            if len(pred[e]) > max_papers and _more_than(max_papers, (keys for keys in pred[e].values()
                                                                     if not links.isdisjoint(keys))):
                continue  # a hub: its papers counted only until there are too many
            ps = sorted({u for u, keys in pred[e].items() if not links.isdisjoint(keys)})
            if 2 <= len(ps) <= max_papers:
                members[e] = ps
    weight = {e: 1 / math.log2(1 + len(ps)) for e, ps in members.items()}
    if limit is not None and len(papers) > limit:
        H.graph["total_nodes"] = len(papers)
        term = {e: weight[e] * (len(ps) - 1) for e, ps in members.items()}
        reach = {p: sum(term[e] for e, keys in succ[p].items() if e in term for _ in keys)
                 for p in papers}  # one term a link, in out_edges order (the same float sums)
        keep = set(best_connected(reach, limit))
        papers = [p for p in papers if p in keep]
        members = {e: [q for q in ps if q in keep] for e, ps in members.items()}
        members = {e: ps for e, ps in members.items() if ps}
    _copy_nodes(G, H, papers)
    member_sets = {e: set(ps) for e, ps in members.items()}
    edges: dict[tuple[str, str], list[str]] = {}
    for p in papers:
        named = [e for e, keys in succ[p].items() if e in members for _ in keys]  # one a link, as out_edges
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
                   members=ents)
    return H


def member_names(G: nx.MultiDiGraph, d: dict, first: int | None = None) -> tuple[list[str], int]:
    """The sorted labels of the nodes behind a derived edge (its ``members``), only
    the ``first`` ones if given, and how many there are.

    >>> G = nx.MultiDiGraph(); G.add_nodes_from([("a", {"label": "B"}), ("b", {"label": "A"}), ("c", {})])
    >>> member_names(G, {"members": ["a", "b", "c"]}, first=2)
    (['A', 'B'], 3)
    """
    nodes = G.nodes
    members = d.get("members", ())
    labels = (nodes[x].get("label", x) for x in members)
    if first is not None and len(members) > first:  # a link of thousands of papers: no full sort
        return heapq.nsmallest(first, labels), len(members)
    return sorted(labels), len(members)


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
    H.add_edges_from((u, v, k, d) for u in keep for v, keys in G.succ[u].items() if v in H for k, d in keys.items())
    return H


def ego_graph(G: nx.MultiDiGraph, focus: str, depth: int = 2) -> nx.MultiDiGraph:
    """The nodes within ``depth`` hops of ``focus`` (edges in either direction)."""
    return induced(G, nx.ego_graph(G.to_undirected(as_view=True), focus, radius=depth).nodes)


def view_graph(G: nx.MultiDiGraph, view: str, limit: int | None = None) -> nx.MultiDiGraph:
    """The graph of one view; ``limit`` lets a view that is costly to derive in
    full keep only that many of its best-connected nodes up front."""
    if view == "overview":
        return G
    if view == "method-task":
        return method_task_graph(G, limit=limit)
    if view == "dataset":
        return dataset_graph(G, limit=limit)
    if view == "paper":
        return paper_graph(G, limit=limit)
    raise ValueError(f"unknown view {view!r} (one of {', '.join(VIEWS)})")
