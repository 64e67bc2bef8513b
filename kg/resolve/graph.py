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
    G.add_edges_from((u, v, key, edge_data(key, mentions, derived_from))
                     for u, key, v, mentions, derived_from in res.relations)  # Relation's fields, in order
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
