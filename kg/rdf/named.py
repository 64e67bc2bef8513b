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


def list_named() -> list[NamedQuery]:
    """Every named query, sorted by name."""
    root = resources.files("kg.rdf") / "queries"
    return sorted((_parse(p.name[:-3], p.read_text(encoding="utf-8")) for p in root.iterdir()
                   if p.name.endswith(".rq")), key=lambda q: q.name)


def get_named(name: str) -> NamedQuery:
    for q in list_named():
        if q.name == name:
            return q
    raise KeyError(f"no named query {name!r} (see `kg query --list`)")
