"""The statements of :mod:`kg.rdf.statements` written as text: N-Triples, Turtle and
JSON-LD in one pass (:func:`generate_rdf`, one unit at a time; thin ``write_*`` and
``to_*`` wrappers), the JSON-LD context, and the graph as an rdflib ``Graph``."""
from __future__ import annotations

import functools
import io
import json
import re
from collections.abc import Iterator
from typing import TextIO

import networkx as nx

from kg._json import dumps
from kg.rdf.namespace import DEFAULT_BASE, KG
from kg.rdf.ontology import property_kinds
from kg.rdf.statements import (CLASS, DCT_NS, PREFIXES, RDF_TYPE, RDFS_LABEL, SCHEMA_URL, SKOS_NS,
                               XSD_NS, Term, units)


# ----------------------------------------------------------------------------- escaping

_ESC = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
_NEEDS = re.compile(r'[\\"\x00-\x1f\x7f]')


def quote(value: str) -> str:
    """A literal's lexical form as an N-Triples / Turtle string (control characters as \\uXXXX)."""
    if not _NEEDS.search(value):
        return f'"{value}"'
    return '"' + _NEEDS.sub(lambda m: _ESC.get(m.group(0), f"\\u{ord(m.group(0)):04X}"), value) + '"'


def _nt(term: Term) -> str:
    if term[0] == "iri":
        return f"<{term[1]}>"
    _, value, dt = term
    return quote(value) + (f"^^<{dt}>" if dt else "")


# ----------------------------------------------------------------------------- writers

class _NTriples:
    """N-Triples: one triple a line. Each writer returns its text; the caller writes it."""

    first = False  # no separators between subjects

    def __init__(self, base: str):
        pass

    def start(self) -> str:
        return ""

    def subject(self, s: str, po: list) -> str:
        head = f"<{s}> <"
        return "".join(f"{head}{p}> {nt} .\n" for p, _, nt in po)

    def end(self) -> str:
        return ""


class _Names:
    """Prefixed names for IRIs whose local part is a plain name (kg:Paper, xsd:integer)."""

    def __init__(self, prefixes: dict[str, str], base: str = ""):
        self.items = sorted(prefixes.items(), key=lambda kv: -len(kv[1]))
        self.base = base
        self.cache: dict[str, str] = {}

    def __call__(self, value: str) -> str:
        if self.base and value.startswith(self.base):
            return f"<{value}>"  # resources: never a plain prefixed name (their local parts hold "/")
        hit = self.cache.get(value)
        if hit is None:
            hit = self.cache[value] = self._name(value)
        return hit

    def _name(self, value: str) -> str:
        for p, ns in self.items:
            if value.startswith(ns):
                local = value[len(ns):]
                if re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", local):
                    return f"{p}:{local}"
        return f"<{value}>"


class _Turtle:
    """Turtle: prefixes, then one block a subject (objects of a predicate grouped)."""

    first = False

    def __init__(self, base: str):
        self.base = base
        self.name = _Names(PREFIXES, base)

    def start(self) -> str:
        return "".join(f"@prefix {p}: <{ns}> .\n" for p, ns in sorted({**PREFIXES, "res": self.base}.items()))

    def subject(self, s: str, po: list) -> str:
        name, base = self.name, self.base
        grouped: dict[str, list[str]] = {}
        for p, o, nt in po:
            # resources and plain literals are written as in N-Triples
            if o[0] == "iri":
                obj = nt if o[1].startswith(base) else name(o[1])
            else:
                obj = nt if not o[2] else nt[:nt.rindex("^^<")] + "^^" + name(o[2])
            objs = grouped.get(p)
            if objs is None:
                grouped[p] = [obj]
            else:
                objs.append(obj)
        lines = [("a" if p == RDF_TYPE else name(p)) + " " + ",\n        ".join(objs) for p, objs in grouped.items()]
        return f"\n<{s}> " + " ;\n    ".join(lines) + " .\n"

    def end(self) -> str:
        return ""


_ENCODE = functools.partial(dumps, sort_keys=True)  # a JSON-LD node a line, compact (see kg._json)


class _JsonLd:
    """JSON-LD: the context, then a ``@graph`` of one object a subject (compact IRIs)."""

    def __init__(self, base: str):
        self.base = base
        self.name = _Names(PREFIXES, base)
        self.keys: dict[str, str] = {}
        self.first = True  # the next subject is the first of the @graph (no comma before it)

    def key(self, p: str) -> str:
        k = self.keys.get(p)
        if k is None:
            k = jsonld_terms().get(p, (None, None))[0] or self.name(p)
            k = self.keys[p] = k[1:-1] if k.startswith("<") else k
        return k

    def start(self) -> str:
        return '{\n "@context": ' + json.dumps(jsonld_context(self.base), sort_keys=True) + ',\n "@graph": ['

    def subject(self, s: str, po: list) -> str:
        key = self.key
        node: dict = {"@id": s}
        terms = jsonld_terms()
        for p, o, _ in po:
            if p == RDF_TYPE:
                node.setdefault("@type", []).append(key(o[1]))
                continue
            kind = terms[p][1] if p in terms else None
            if o[0] == "iri":
                val = o[1] if kind == "@id" else {"@id": o[1]}
            elif o[2] and o[2] == kind:  # the context types it
                val = int(o[1]) if kind == _XSD_INTEGER else o[1]
            elif o[2]:
                val = {"@value": o[1], "@type": key(o[2])}
            else:
                val = o[1] if kind == "" else {"@value": o[1]}
            node.setdefault(key(p), []).append(val)
        node = {k: (v[0] if isinstance(v, list) and len(v) == 1 else v) for k, v in node.items()}
        text = ("\n  " if self.first else ",\n  ") + _ENCODE(node)
        self.first = False
        return text

    def end(self) -> str:
        return "\n ]\n}\n"


WRITERS = {"nt": _NTriples, "ttl": _Turtle, "jsonld": _JsonLd}


def generate_rdf(G: nx.MultiDiGraph, formats, base: str = DEFAULT_BASE, usages: dict | None = None,
                 skip: frozenset = frozenset()) -> Iterator[tuple[str | None, dict[str, str] | None, int]]:
    """The graph in several formats at once (``nt``, ``ttl``, ``jsonld``), one unit at a
    time (:func:`units`): yields ``(unit, {format: text}, triples)``, with ``None`` for
    the unit of each file's head and end.

    A unit in ``skip`` yields ``(unit, None, 0)`` without making the unit's text (for a
    caller that has its bytes from elsewhere); the first unit, whose JSON-LD text has no
    separator before it, is never skipped. ``usages``: as for :func:`units`.

    >>> G = nx.MultiDiGraph(); G.add_node("task/t", type="Task", label="T", name="T", aliases=[])
    >>> [(unit, sorted(texts)) for unit, texts, _ in generate_rdf(G, ["nt", "ttl"])][-2:]
    [('task/t', ['nt', 'ttl']), (None, ['nt', 'ttl'])]
    """
    writers = {fmt: WRITERS[fmt](base) for fmt in formats}
    yield None, {fmt: w.start() for fmt, w in writers.items()}, 0
    for unit, subjects in units(G, base, skip, usages):
        if subjects is None:
            if any(w.first for w in writers.values()):
                raise ValueError(f"cannot skip {unit}: it opens the output")
            yield unit, None, 0
            continue
        texts: dict[str, list[str]] = {fmt: [] for fmt in writers}
        count = 0
        for s, po in subjects:
            count += len(po)
            rendered = [(p, o, _nt(o)) for p, o in po]  # each object's N-Triples form, once for all writers
            for fmt, w in writers.items():
                texts[fmt].append(w.subject(s, rendered))
        yield unit, {fmt: "".join(parts) for fmt, parts in texts.items()}, count
    yield None, {fmt: w.end() for fmt, w in writers.items()}, 0


def write_rdf(G: nx.MultiDiGraph, files: dict[str, TextIO], base: str = DEFAULT_BASE,
              usages: dict | None = None) -> int:
    """Write the graph in several formats (``nt``, ``ttl``, ``jsonld``: open text files)
    in one pass over the statements (:func:`generate_rdf`); returns the number of triples."""
    n = 0
    for _, texts, count in generate_rdf(G, files, base, usages):
        for fmt, text in texts.items():
            files[fmt].write(text)
        n += count
    return n


def write_ntriples(G: nx.MultiDiGraph, fh: TextIO, base: str = DEFAULT_BASE) -> int:
    """N-Triples, one triple a line; returns the number of triples."""
    return write_rdf(G, {"nt": fh}, base)


def write_turtle(G: nx.MultiDiGraph, fh: TextIO, base: str = DEFAULT_BASE) -> None:
    write_rdf(G, {"ttl": fh}, base)


_XSD_INTEGER = XSD_NS + "integer"
#: Short names of the terms from other vocabularies that every record uses.
_SHORT_TERMS = {RDFS_LABEL: "label", SKOS_NS + "prefLabel": "prefLabel", SKOS_NS + "altLabel": "altLabel",
                DCT_NS + "title": "title", DCT_NS + "abstract": "abstract"}


@functools.cache
def jsonld_terms() -> dict[str, tuple[str, str | None]]:
    """{IRI: (its JSON-LD term, its coercion: ``@id``, a datatype IRI, ``""`` for a plain
    string, None for a class)}: our classes and properties by their local names, the
    common labels by short names, other vocabularies' terms by compact IRIs."""
    kinds = {**property_kinds(), RDFS_LABEL: "", SKOS_NS + "prefLabel": "", SKOS_NS + "altLabel": "",
             DCT_NS + "title": "", DCT_NS + "abstract": "", SCHEMA_URL: XSD_NS + "anyURI"}
    name = _Names(PREFIXES)
    out = {}
    for p, kind in sorted(kinds.items()):
        term = p[len(str(KG)):] if p.startswith(str(KG)) else _SHORT_TERMS.get(p) or name(p)
        if not term.startswith("<"):
            out[p] = (term, kind)
    for c in CLASS.values():
        out[c] = (c[len(str(KG)):], None)
    for c in (str(KG.Mention), str(KG.Sentence), str(KG.ExtractionRun), str(KG.MethodUsage)):
        out[c] = (c[len(str(KG)):], None)
    return out


def jsonld_context(base: str = DEFAULT_BASE) -> dict:
    """The JSON-LD context written beside ``graph.jsonld.gz`` and embedded in it: the
    prefixes, and a term for each class and property, typed, so that a consumer reads
    ``"paperCount": 3`` and ``"addressesTask": "https://.../task/x"`` as the RDF says."""
    name = _Names(PREFIXES)

    def compact(iri: str) -> str:
        n = name(iri)
        return n[1:-1] if n.startswith("<") else n

    ctx: dict = {**PREFIXES, "res": base}
    for iri_, (term, kind) in jsonld_terms().items():
        if kind is None:
            ctx[term] = compact(iri_)
        elif kind == "":
            ctx[term] = {"@id": compact(iri_)}
        else:
            ctx[term] = {"@id": compact(iri_), "@type": kind if kind == "@id" else compact(kind)}
    return ctx


def write_jsonld(G: nx.MultiDiGraph, fh: TextIO, base: str = DEFAULT_BASE) -> None:
    write_rdf(G, {"jsonld": fh}, base)


def to_ntriples(G: nx.MultiDiGraph, base: str = DEFAULT_BASE) -> str:
    buf = io.StringIO()
    write_ntriples(G, buf, base)
    return buf.getvalue()


def to_turtle(G: nx.MultiDiGraph, base: str = DEFAULT_BASE) -> str:
    buf = io.StringIO()
    write_turtle(G, buf, base)
    return buf.getvalue()


def to_jsonld(G: nx.MultiDiGraph, base: str = DEFAULT_BASE) -> str:
    buf = io.StringIO()
    write_jsonld(G, buf, base)
    return buf.getvalue()


def to_rdf(G: nx.MultiDiGraph, base: str = DEFAULT_BASE):
    """The graph as an rdflib ``Graph`` (prefixes bound).

    >>> from kg.api import KnowledgeGraph
    >>> from rdflib.namespace import RDF
    >>> kg = KnowledgeGraph.from_records([{"id": "p1", "abstract": "We propose FooNet for image classification."}])
    >>> (None, RDF.type, KG.Paper) in to_rdf(kg.nx)
    True
    """
    from rdflib import Graph

    g = Graph()
    for p, ns in {**PREFIXES, "res": base}.items():
        g.bind(p, ns, override=True, replace=True)
    g.parse(data=to_ntriples(G, base), format="nt")
    return g
