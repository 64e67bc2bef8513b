"""How the API names a node: a :class:`~kg.handles.Node`, an id, an IRI or a name
(an alias or acronym among them), the same way in every look-up; a name several
nodes carry is an :class:`AmbiguousName` listing them. :class:`GraphLookup` answers the
look-ups from the networkx graph."""
from __future__ import annotations

import networkx as nx

from kg.handles import Node
from kg.rdf import lookup
from kg.rdf.namespace import DEFAULT_BASE
from kg.resolve import algorithms as alg


class AmbiguousName(KeyError):
    """A name that several nodes carry; ``candidates`` lists their ids and types."""

    def __init__(self, name: str, candidates: list[tuple[str, str]]):
        self.candidates = candidates
        listed = ", ".join(f"{n} ({t})" for n, t in candidates)
        super().__init__(f"{name!r} names {len(candidates)} nodes: {listed}; pass one's id, IRI or Node")


def ref_key(ref, base: str = DEFAULT_BASE) -> str:
    """What a look-up is given, as text: a :class:`Node`'s id, an IRI under ``base`` as
    its id, anything else as it is (an id or a name)."""
    if isinstance(ref, Node):
        return ref.id
    if not isinstance(ref, str):
        raise TypeError(f"a node is named by a Node, an id, an IRI or a name, not {type(ref).__name__}")
    return ref[len(base):] if ref.startswith(base) and len(ref) > len(base) else ref


def pick(name: str, candidates: list[tuple[str, str]]) -> str:
    """The one node of ``candidates`` ((id, type), entities before papers): the entities
    if there are any, else the papers; an :class:`AmbiguousName` if that leaves several."""
    entities = [c for c in candidates if c[1] != "Paper"]
    hits = sorted(entities or candidates)
    if len(hits) > 1:
        raise AmbiguousName(name, hits)
    return hits[0][0]


def resolve_name(G: nx.MultiDiGraph, ref, base: str = DEFAULT_BASE) -> str:
    """The node id for a :class:`Node`, an id, an IRI, a canonical name or an alias (an
    acronym among them; case-insensitive). Entities come before papers; a name that
    several entities (or, naming no entity, several papers) carry is an
    :class:`AmbiguousName`. A KeyError names the closest names when none fits.
    """
    name = ref_key(ref, base)
    if name in G:
        return name
    low = name.strip().lower()
    hits = [(n, d["type"]) for n, d in G.nodes(data=True)
            if low == str(d.get("label", "")).lower() or low in (str(a).lower() for a in d.get("aliases", []))]
    if not hits:
        raise KeyError(f"no node named {name!r}{close_names(G, name)}")
    return pick(name, hits)


def close_names(G: nx.MultiDiGraph, name: str, n: int = 5) -> str:
    """``"; did you mean ...?"`` with the names and aliases closest to ``name``, or ``""``."""
    return did_you_mean({str(x) for _, d in G.nodes(data=True) if d.get("type") != "Paper"
                         for x in (d.get("label", ""), *d.get("aliases", ()))}, name, n)


def did_you_mean(names: set[str], name: str, n: int = 5) -> str:
    """``"; did you mean ...?"`` with the ``names`` closest to ``name``, or ``""``."""
    import difflib

    low = {x.lower(): x for x in sorted(names)}
    found = [low[x] for x in difflib.get_close_matches(name.strip().lower(), list(low), n=n, cutoff=0.7)]
    return f"; did you mean {', '.join(repr(x) for x in found)}?" if found else ""


class GraphLookup:
    """The API's look-ups answered from the networkx graph: ids in, plain data out
    (:mod:`kg.resolve.algorithms`); :class:`kg.rdf.lookup.StoreLookup` answers the same
    from a build's store."""

    def __init__(self, G: nx.MultiDiGraph, base: str = DEFAULT_BASE):
        self.G = G
        self.base = base

    def resolve(self, ref) -> str:
        return resolve_name(self.G, ref, self.base)

    def node_fields(self, node_id: str) -> dict:
        """The fields of :class:`~kg.handles.Node` for ``node_id``."""
        G = self.G
        d = G.nodes[node_id]
        out = {"id": node_id, "type": d["type"], "name": d.get("label", node_id)}
        if d["type"] == "Paper":
            venue = ", ".join(sorted(G.nodes[v].get("label", "") for _, v, k in G.out_edges(node_id, keys=True)
                                     if k == "publishedIn"))
            out.update(linked=tuple(sorted(G.succ[node_id])), title=d.get("title") or "", venue=venue,
                       year=d.get("year"), abstract=d.get("abstract", ""))
        else:
            out.update(aliases=tuple(d.get("aliases", ()) or ()), papers=tuple(alg.papers_for(G, node_id)),
                       linked=tuple(sorted(set(G.pred[node_id]) | set(G.succ[node_id]))))
        return out

    def label(self, node_id: str) -> str:
        return self.G.nodes[node_id].get("label", node_id)

    def papers_for(self, node_id: str) -> list[str]:
        return alg.papers_for(self.G, node_id)

    def methods_for_task(self, node_id: str) -> list[tuple[str, int]]:
        return alg.methods_for_task(self.G, node_id)

    def datasets_for(self, node_id: str) -> list[tuple[str, int]]:
        return alg.datasets_for(self.G, node_id)

    def related_papers(self, node_id: str, k: int) -> list[tuple[str, float, list[str]]]:
        return alg.related_papers(self.G, node_id, k)

    def top(self, kind: str, by: str, n: int) -> list[tuple[str, int]]:
        return alg.top(self.G, kind, by, n)


class StoreLookup:
    """The look-ups of :class:`GraphLookup` answered from a build's SPARQL store
    (:mod:`kg.rdf.lookup`): the same ids, counts and order, from the index entries of
    the nodes asked about (``top`` by papers reads the ``kg:paperCount`` the build
    wrote), never the whole graph."""

    def __init__(self, store, base: str = DEFAULT_BASE):
        self.store = store
        self.base = base

    def resolve(self, ref) -> str:
        name = ref_key(ref, self.base)
        found = lookup.find(self.store, self.base, name)
        if not found:
            raise KeyError(f"no node named {name!r}{did_you_mean(lookup.entity_names(self.store), name)}")
        return pick(name, found)

    def node_fields(self, node_id: str) -> dict:
        return lookup.node_fields(self.store, self.base, node_id)

    def label(self, node_id: str) -> str:
        return lookup.label(self.store, self.base, node_id)

    def papers_for(self, node_id: str) -> list[str]:
        return lookup.papers_for(self.store, self.base, node_id)

    def methods_for_task(self, node_id: str) -> list[tuple[str, int]]:
        return lookup.methods_for_task(self.store, self.base, node_id)

    def datasets_for(self, node_id: str) -> list[tuple[str, int]]:
        return lookup.datasets_for(self.store, self.base, node_id)

    def related_papers(self, node_id: str, k: int) -> list[tuple[str, float, list[str]]]:
        entities = lookup.entities_of(self.store, self.base, node_id)
        return alg.rank_related(node_id, {e: self.papers_for(e) for e in entities}, k)

    def top(self, kind: str, by: str, n: int) -> list[tuple[str, int]]:
        type_, by = alg.top_terms(kind, by)
        return lookup.top(self.store, self.base, type_, by, n) if type_ in alg.KIND_TYPE.values() else []
