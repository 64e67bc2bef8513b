"""Named SPARQL queries shipped in ``kg/rdf/queries/*.rq`` (competency questions).

Each file opens with comment lines ``# title:``, ``# description:`` and one
``# param: NAME  help`` a parameter. Parameters are query variables set by
binding (Oxigraph substitution), never by editing the query text.

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


def _parse(name: str, text: str) -> NamedQuery:
    title = description = ""
    params, helps = [], []
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
            pname, _, phelp = value.strip().partition(" ")
            params.append(pname)
            helps.append(phelp.strip())
    return NamedQuery(name, title, description, tuple(params), tuple(helps), text)


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
