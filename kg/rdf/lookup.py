"""Nodes read from a build's SPARQL store: a name, alias or id to its node, and the
node's fields, without reading ``graph.json``.

A notebook that opens a corpus-size build and asks for one node then reads a few
index entries of the store instead of the whole graph (at 22,800 records, about a
gigabyte once decoded). The answers are those of the in-memory graph
(:func:`kg.refs.resolve_name`, :meth:`kg.api.KnowledgeGraph.node`): the same node for a
name, the same fields. A name is looked up in the store's indexes as given and in
lower, upper, capitalized and title case; only when none of these is a label or an
alias are all labels compared in lower case (a scan: about a second at 22,800
records). User text enters the queries as bound values only.
"""
from __future__ import annotations

import pyoxigraph as ox

from kg.rdf.namespace import KG
from kg.rdf.statements import CLASS, DCT_NS, PREDICATE, RDFS_LABEL, SKOS_NS
from kg.rdf.store import with_values

_TYPE_OF = {iri: t for t, iri in CLASS.items()}
_ALT = SKOS_NS + "altLabel"
_CLASSES = " ".join(f"<{c}>" for c in CLASS.values())
#: The graph's relations, as the body of a ``VALUES`` block.
LINKS = " ".join(f"<{p}>" for p in PREDICATE.values())
_NAMED = f"<{RDFS_LABEL}>|<{_ALT}>"

# the nodes whose label or an alias is ?form, exactly
_BY_FORM = f"SELECT ?s ?c WHERE {{ ?s {_NAMED} ?form . ?s a ?c . VALUES ?c {{ {_CLASSES} }} }}"
# the same, any case (reads every label: the fallback)
_BY_LOWER = (f"SELECT ?s ?c WHERE {{ VALUES ?c {{ {_CLASSES} }} ?s a ?c . ?s {_NAMED} ?l . "
             "FILTER(LCASE(STR(?l)) = ?low) }")
_TYPE = f"SELECT ?c WHERE {{ ?s a ?c . VALUES ?c {{ {_CLASSES} }} }}"
_NEIGHBOURS = (f"SELECT DISTINCT ?x ?c WHERE {{ VALUES ?p {{ {LINKS} }} {{ ?s ?p ?x }} UNION {{ ?x ?p ?s }} "
               f"?x a ?c . VALUES ?c {{ {_CLASSES} }} }}")
_OUT = f"SELECT DISTINCT ?x WHERE {{ VALUES ?p {{ {LINKS} }} ?s ?p ?x }}"
_VALUES = "SELECT ?o WHERE { ?s ?p ?o }"
_NAMES = (f"SELECT DISTINCT ?l WHERE {{ VALUES ?c {{ {' '.join(f'<{c}>' for t, c in CLASS.items() if t != 'Paper')} }} "
          f"?s a ?c . ?s {_NAMED} ?l }}")


def _rows(store: ox.Store, sparql: str, **subs) -> list:
    # the values as a VALUES block at the head of the pattern (written by Oxigraph as
    # terms): Oxigraph then starts from them, as it does not from a substitution
    return list(store.query(with_values(sparql, {ox.Variable(k): v for k, v in subs.items()})))


def _id(iri: str, base: str) -> str | None:
    return iri[len(base):] if iri.startswith(base) else None


def _values(store: ox.Store, s: ox.NamedNode, p: str) -> list[str]:
    return sorted(r["o"].value for r in _rows(store, _VALUES, s=s, p=ox.NamedNode(p)))


def node_type(store: ox.Store, base: str, node_id: str) -> str | None:
    """The type of the node ``node_id`` (``"Method"``...), None when there is none."""
    try:
        s = ox.NamedNode(base + node_id)
    except ValueError:  # not an IRI, so no node's id
        return None
    rows = _rows(store, _TYPE, s=s)
    return _TYPE_OF[rows[0]["c"].value] if rows else None


def find(store: ox.Store, base: str, name: str) -> list[tuple[str, str]]:
    """The (id, type) of every node named ``name``: the node with that id, else every
    node with that label or alias (any case)."""
    t = node_type(store, base, name)
    if t is not None:
        return [(name, t)]
    text = name.strip()
    hits: dict[str, str] = {}
    for form in dict.fromkeys((text, text.lower(), text.upper(), text.capitalize(), text.title())):
        for r in _rows(store, _BY_FORM, form=ox.Literal(form)):
            hits.setdefault(r["s"].value, r["c"].value)
    hits = {s: c for s, c in hits.items() if _matches(store, ox.NamedNode(s), text.lower())}
    if not hits:
        hits = {r["s"].value: r["c"].value for r in _rows(store, _BY_LOWER, low=ox.Literal(text.lower()))}
    return sorted((node_id, _TYPE_OF[c]) for s, c in hits.items() if (node_id := _id(s, base)) is not None)


def _matches(store: ox.Store, s: ox.NamedNode, low: str) -> bool:
    """Whether a label or an alias of ``s`` is ``low`` in lower case (Python's, as the
    in-memory lookup compares)."""
    return any(v.lower() == low for p in (RDFS_LABEL, _ALT) for v in _values(store, s, p))


def node_fields(store: ox.Store, base: str, node_id: str) -> dict:
    """The fields of :class:`kg.handles.Node` for ``node_id`` (a KeyError if no node has it)."""
    t = node_type(store, base, node_id)
    if t is None:
        raise KeyError(node_id)
    s = ox.NamedNode(base + node_id)
    label = _values(store, s, RDFS_LABEL)
    out = {"id": node_id, "type": t, "name": label[0] if label else node_id}
    neighbours = {(_id(r["x"].value, base), _TYPE_OF[r["c"].value]) for r in _rows(store, _NEIGHBOURS, s=s)}
    if t == "Paper":
        linked = sorted(x for x in (_id(r["x"].value, base) for r in _rows(store, _OUT, s=s)) if x)
        venues = [n for n, nt in neighbours if nt == "Venue" and n in linked]
        year = _values(store, s, str(KG.year))
        out.update(linked=tuple(linked), title=next(iter(_values(store, s, DCT_NS + "title")), ""),
                   venue=", ".join(sorted(lab for v in venues
                                         for lab in _values(store, ox.NamedNode(base + v), RDFS_LABEL))),
                   year=int(year[0]) if year else None,
                   abstract=next(iter(_values(store, s, DCT_NS + "abstract")), ""))
    else:
        out.update(aliases=tuple(_values(store, s, _ALT)),
                   papers=tuple(sorted(n for n, nt in neighbours if nt == "Paper" and n)),
                   linked=tuple(sorted(n for n, _ in neighbours if n)))
    return out


def entity_names(store: ox.Store) -> set[str]:
    """Every label and alias of a node that is not a paper (for "did you mean")."""
    return {r["l"].value for r in store.query(_NAMES)}
