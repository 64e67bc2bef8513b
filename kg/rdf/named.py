"""Named SPARQL queries shipped in ``kg/rdf/queries/*.rq`` (competency questions).

Each file opens with comment lines ``# title:``, ``# description:`` and one
``# param: NAME  help`` a parameter. Parameters are query variables set by
binding (Oxigraph substitution), never by editing the query text. A parameter
written ``NAME (Paper)`` names a paper in any form a user has for it (its IRI,
``res:paper/…``, ``paper/…``, its record id or its title): :func:`resolve_ref`
turns that into the paper's IRI, or says which forms it takes.

>>> [q.name for q in list_named()][:3]
['aliases', 'datasets-for-method', 'evidence']
>>> get_named("methods-for-task").params
('task',)
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources


@dataclass(frozen=True)
class NamedQuery:
    name: str
    title: str
    description: str
    params: tuple[str, ...]
    param_help: tuple[str, ...]
    text: str
    param_types: tuple[str, ...] = ()  # per parameter: the class its value names ("" for a plain value)


def _parse(name: str, text: str) -> NamedQuery:
    title = description = ""
    params, helps, types = [], [], []
    for line in text.splitlines():
        m = re.match(r"#\s*(title|description|param):\s*(.*)$", line)
        if not m:
            continue
        key, value = m.groups()
        if key == "title":
            title = value.strip()
        elif key == "description":
            description = value.strip()
        else:
            p = re.match(r"(\w+)(?:\s+\((\w+)\))?\s*(.*)$", value.strip())
            params.append(p.group(1))
            types.append(p.group(2) or "")
            helps.append(p.group(3).strip())
    return NamedQuery(name, title, description, tuple(params), tuple(helps), text, tuple(types))


#: How a paper is found from what a user has for it (?v: the value as given, selected so
#: that it is substituted in every branch).
_FIND_PAPER = """PREFIX kg: <https://w3id.org/abstract-kg/ontology#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX dcterms: <http://purl.org/dc/terms/>
SELECT DISTINCT ?paper ?v WHERE {
  { ?paper kg:docId ?v }
  UNION { ?paper a kg:Paper FILTER (STR(?paper) = STR(?v) || STRENDS(STR(?paper), CONCAT("/", STR(?v)))) }
  UNION { ?paper dcterms:title|rdfs:label ?l FILTER (LCASE(STR(?l)) = LCASE(STR(?v))) }
  ?paper a kg:Paper .
} ORDER BY ?paper LIMIT 2"""


def resolve_ref(store, type_: str, value):
    """The IRI (an Oxigraph ``NamedNode``) of the ``type_`` (``Paper``) that ``value``
    names: an IRI, ``res:paper/…`` or ``paper/…``, a record id or a title. A
    ValueError says which forms it takes when none or two papers fit."""
    import pyoxigraph as ox

    from kg.rdf.store import run_query

    if type_ != "Paper":
        raise ValueError(f"no way to name a {type_}")
    text = str(value)
    if text.startswith("res:"):
        text = text[4:]
    hits = [sol["paper"] for sol in run_query(store, _FIND_PAPER, {"v": ox.Literal(text)})]
    if len(hits) == 1:
        return hits[0]
    forms = ("its IRI (<https://w3id.org/abstract-kg/resource/paper/…>), res:paper/…, paper/…, "
             "its record id (kg:docId) or its title")
    if not hits:
        raise ValueError(f"no paper {text!r}: give {forms}")
    raise ValueError(f"{text!r} names more than one paper ({', '.join(h.value for h in hits)}): give its IRI")


def _all() -> dict[str, NamedQuery]:
    root = resources.files("kg.rdf") / "queries"
    return {p.name[:-3]: _parse(p.name[:-3], p.read_text(encoding="utf-8")) for p in root.iterdir()
            if p.name.endswith(".rq")}


def list_named() -> list[NamedQuery]:
    """Every named query, sorted by name (variants for bound parameters left out: see :func:`get_named`)."""
    return sorted((q for name, q in _all().items() if "@" not in name), key=lambda q: q.name)


def variants(name: str) -> list[NamedQuery]:
    """The variants of a named query for bound parameters: ``NAME@PARAM.rq`` is ``NAME``
    with ``PARAM`` bound (``top-methods@task`` ranks the methods of one task)."""
    return sorted((q for n, q in _all().items() if n.startswith(name + "@")), key=lambda q: q.name)


def get_named(name: str, bound=()) -> NamedQuery:
    """The named query ``name``, or its variant whose parameters are the names ``bound``."""
    queries = _all()
    if name not in queries or "@" in name:
        raise KeyError(f"no named query {name!r} (see `kg query --list`)")
    for q in [queries[name], *variants(name)]:
        if set(q.params) == set(bound):
            return q
    return queries[name]
