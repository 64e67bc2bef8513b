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

import heapq

import pyoxigraph as ox

from kg.rdf.namespace import KG
from kg.rdf.statements import CLASS, DCT_NS, PREDICATE, RDFS_LABEL, SKOS_NS
from kg.rdf.store import with_values
from kg.resolve.algorithms import ENTITY_RELATIONS

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

_PAPER = CLASS["Paper"]
# the papers linked to ?e by any relation
_PAPERS_FOR = f"SELECT DISTINCT ?p WHERE {{ VALUES ?rel {{ {LINKS} }} ?p ?rel ?e . ?p a <{_PAPER}> }} ORDER BY ?p"
_ENTITIES_OF = (f"SELECT DISTINCT ?e WHERE {{ VALUES ?rel {{ {' '.join(f'<{KG[k]}>' for k in ENTITY_RELATIONS)} }} "
                f"?p ?rel ?e . ?e a ?c . VALUES ?c {{ <{CLASS['Method']}> <{CLASS['Task']}> <{CLASS['Dataset']}> }} }}")
# most papers first; ties in no order (a sort on the IRIs too reads every one's text:
# 84,000 methods, 8.6 s against 0.6 s)
_BY_PAPERS = f"SELECT ?x ?n WHERE {{ ?x a ?c ; <{KG.paperCount}> ?n }} ORDER BY DESC(?n)"
_OF_TYPE = "SELECT ?x WHERE { ?x a ?c } ORDER BY ?x"
_DEGREES = (f"SELECT ?x (COUNT(*) AS ?n) WHERE {{ ?x a ?c . VALUES ?rel {{ {LINKS} }} "
            "{ ?x ?rel ?y } UNION { ?y ?rel ?x } } GROUP BY ?x")


def _linked_by_papers(*relations: str) -> str:
    """What the papers linked to ?e link to by one of ``relations``: (?x, papers ?n), most first."""
    rels = " ".join(f"<{PREDICATE[k]}>" for k in relations)
    return (f"SELECT ?x (COUNT(DISTINCT ?p) AS ?n) WHERE {{ VALUES ?rel {{ {LINKS} }} ?p ?rel ?e . "
            f"?p a <{_PAPER}> . VALUES ?r2 {{ {rels} }} ?p ?r2 ?x }} GROUP BY ?x ORDER BY DESC(?n) ?x")


_METHODS_FOR = _linked_by_papers("proposes", "usesMethod")
_DATASETS_FOR = _linked_by_papers("usesDataset")


def _query(store: ox.Store, sparql: str, **subs):
    # the values as a VALUES block at the head of the pattern (written by Oxigraph as
    # terms): Oxigraph then starts from them, as it does not from a substitution
    return store.query(with_values(sparql, {ox.Variable(k): v for k, v in subs.items()}))


def _rows(store: ox.Store, sparql: str, **subs) -> list:
    return list(_query(store, sparql, **subs))


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


def label(store: ox.Store, base: str, node_id: str) -> str:
    """The label of ``node_id`` (its id if it has none)."""
    return next(iter(_values(store, ox.NamedNode(base + node_id), RDFS_LABEL)), node_id)


def entity_names(store: ox.Store) -> set[str]:
    """Every label and alias of a node that is not a paper (for "did you mean")."""
    return {r["l"].value for r in store.query(_NAMES)}


def _ids(store: ox.Store, base: str, sparql: str, var: str = "x", **subs) -> list[str]:
    return [x for r in _rows(store, sparql, **subs) if (x := _id(r[var].value, base)) is not None]


def _counted(store: ox.Store, base: str, sparql: str, **subs):
    """The (id, ?n) rows of ``sparql``, lazily, in its order."""
    return ((x, int(r["n"].value)) for r in _query(store, sparql, **subs) if (x := _id(r["x"].value, base)) is not None)


def papers_for(store: ox.Store, base: str, node_id: str) -> list[str]:
    """The papers linked to ``node_id`` by any relation, sorted (as
    :func:`kg.resolve.algorithms.papers_for`)."""
    return _ids(store, base, _PAPERS_FOR, "p", e=ox.NamedNode(base + node_id))


def methods_for_task(store: ox.Store, base: str, node_id: str) -> list[tuple[str, int]]:
    """(method, papers) of the papers on ``node_id``, most first."""
    return list(_counted(store, base, _METHODS_FOR, e=ox.NamedNode(base + node_id)))


def datasets_for(store: ox.Store, base: str, node_id: str) -> list[tuple[str, int]]:
    """(dataset, papers) of the papers that propose or use ``node_id``, most first."""
    return list(_counted(store, base, _DATASETS_FOR, e=ox.NamedNode(base + node_id)))


def entities_of(store: ox.Store, base: str, node_id: str) -> list[str]:
    """The methods, tasks and datasets a paper is linked to."""
    return _ids(store, base, _ENTITIES_OF, "e", p=ox.NamedNode(base + node_id))


def top(store: ox.Store, base: str, type_: str, by: str, n: int) -> list[tuple[str, int]]:
    """The ``n`` nodes of ``type_`` with the most papers (their ``kg:paperCount``) or
    links (``by="degree"``), ties by id."""
    c = ox.NamedNode(CLASS[type_])
    if by == "papers":
        first: list[tuple[str, int]] = []  # the rows down to the count of the n-th, ties at the cut too
        for x, k in _counted(store, base, _BY_PAPERS, c=c):
            if len(first) >= n and (n <= 0 or k < first[n - 1][1]):
                break
            first.append((x, k))
        return sorted(first, key=lambda s: (-s[1], s[0]))[:n]
    degree = dict(_counted(store, base, _DEGREES, c=c))
    return heapq.nsmallest(n, ((x, degree.get(x, 0)) for x in _ids(store, base, _OF_TYPE, c=c)),
                           key=lambda s: (-s[1], s[0]))
