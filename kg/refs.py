"""How the API names a node: a :class:`~kg.handles.Node`, an id, an IRI or a name
(an alias or acronym among them), the same way in every look-up; a name several
nodes carry is an :class:`AmbiguousName` listing them."""
from __future__ import annotations

import networkx as nx

from kg.handles import Node
from kg.rdf.namespace import DEFAULT_BASE


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
