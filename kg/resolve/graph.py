"""The typed graph: a networkx ``MultiDiGraph`` built from resolved records.

Nodes are keyed by their resource path (``paper/…``, ``method/…``,
``task/…``, ``dataset/…``, ``repository/github/…``, ``venue/…``) and carry
``type`` (one of :data:`kg.model.NODE_TYPES`) and ``label``; entities also
carry ``name`` and ``aliases``, papers their ``abstract``, ``title``,
``docs``, ``venue`` and ``year``. Edges are keyed by the ontology property
name (``proposes``, ``usesMethod``, ``addressesTask``, ``usesDataset``,
``hasCode``, ``publishedIn``, ``appliedTo``, ``evaluatedOn``) and carry
``predicate`` (the same name), ``mentions`` (evidence :class:`~kg.model.Mention`
tuples) and ``derived_from`` (paper ids, for derived relations).
"""
from __future__ import annotations

import networkx as nx

from kg._gc import without_gc
from kg.model import Entity, Paper
from kg.resolve.entities import Resolved

PREDICATES = ("proposes", "usesMethod", "addressesTask", "usesDataset", "hasCode", "publishedIn",
              "appliedTo", "evaluatedOn")


@without_gc
def build_graph(res: Resolved) -> nx.MultiDiGraph:
    """The graph of a :class:`~kg.resolve.entities.Resolved` result.

    Examples
    --------
    >>> from kg.model import Record
    >>> from kg.extract import extract_records
    >>> from kg.resolve.entities import resolve
    >>> recs = [Record(doc="a", abstract="We propose FooNet, a model for image classification.", source="x", index=0)]
    >>> G = build_graph(resolve(recs, extract_records(recs)))
    >>> sorted(d["type"] for _, d in G.nodes(data=True))
    ['Method', 'Paper', 'Task']
    """
    G = nx.MultiDiGraph()
    for p in res.papers:
        G.add_node(p.id, **paper_attrs(p))
    for v in res.venues:
        G.add_node(v.id, **venue_attrs(v))
    for e in res.entities:
        G.add_node(e.id, **entity_attrs(e))
    # Edges straight into networkx's adjacency (its documented data structure: node ->
    # neighbour -> key -> data, the key dict shared by _succ and _pred), as add_edge
    # does without its per-call checks (add_edge's checks dominate over a million edges).
    succ, pred, nodes = G._succ, G._pred, G._node
    new_keys = G.edge_key_dict_factory  # edge data: plain dicts, networkx's edge_attr_dict_factory
    for u, key, v, mentions, derived_from in res.relations:  # Relation's fields, in order
        if u not in nodes or v not in nodes:  # not a node of the result: add_edge adds it
            G.add_edge(u, v, key=key, predicate=key, mentions=list(mentions), derived_from=list(derived_from))
            continue
        keys = succ[u].get(v)
        if keys is None:
            keys = succ[u][v] = pred[v][u] = new_keys()
        keys[key] = edge_data(key, mentions, derived_from)
    return G


def paper_attrs(p: Paper) -> dict:
    """A paper node's attributes (in this order: the order of the node's data)."""
    return dict(type="Paper", label=p.label, title=p.title, abstract=p.abstract, docs=list(p.docs),
                venue=p.venue, year=p.year, url=p.url)


def venue_attrs(v: Entity) -> dict:
    return dict(type="Venue", label=v.name, name=v.name, aliases=list(v.aliases))


def entity_attrs(e: Entity) -> dict:
    attrs = dict(type=e.type, label=e.name, name=e.name, aliases=list(e.aliases))
    if e.url:
        attrs["url"] = e.url
    return attrs


def edge_data(key: str, mentions, derived_from) -> dict:
    """An edge's data: its relation, evidence mentions and the papers it is derived from."""
    return {"predicate": key, "mentions": list(mentions), "derived_from": list(derived_from)}


def nodes_of_type(G: nx.MultiDiGraph, type_: str) -> list[str]:
    """Node ids of one type, sorted.

    >>> G = nx.MultiDiGraph(); G.add_node("task/x", type="Task", label="x")
    >>> nodes_of_type(G, "Task")
    ['task/x']
    """
    return sorted(n for n, d in G.nodes(data=True) if d.get("type") == type_)
