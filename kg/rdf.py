"""RDF: the typed networkx graph as statements against our ontology, written as
N-Triples, Turtle and JSON-LD by streaming writers.

:func:`statements` is the one place that decides which triples a graph
makes; it yields them subject by subject in a fixed order (nodes sorted by
id, each paper followed by its mentions), so every output is byte-stable and
memory stays flat however large the graph. The writers escape every literal
(control characters included) so any text gives valid RDF. ``to_rdf``
returns an rdflib ``Graph`` (parsed from the N-Triples) for the Python API.
"""
from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from typing import TextIO

import networkx as nx

from .extract import PIPELINE_VERSION
from .namespace import DEFAULT_BASE, KG, QUERY_PREFIXES

RDF_NS = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
XSD_NS = "http://www.w3.org/2001/XMLSchema#"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
RDF_TYPE = RDF_NS + "type"
SKOS_NS = "http://www.w3.org/2004/02/skos/core#"
DCT_NS = "http://purl.org/dc/terms/"
PROV_GENERATED = "http://www.w3.org/ns/prov#wasGeneratedBy"
SCHEMA_URL = "https://schema.org/url"

#: Prefixes bound in every serialization (``res`` is bound to the base IRI).
PREFIXES = {p: ns for p, ns in QUERY_PREFIXES.items() if p != "res"}
CLASS = {t: str(KG[t]) for t in ("Paper", "Method", "Task", "Dataset", "CodeRepository", "Venue")}
PREDICATE = {k: str(KG[k]) for k in ("proposes", "usesMethod", "addressesTask", "usesDataset", "hasCode",
                                      "publishedIn", "appliedTo", "evaluatedOn")}
_VENUE = re.compile(r"^(.*\S)\s+((?:19|20)\d{2})$")
#: Evidence spans written to RDF per statement (the first ones in the text; all of
#: them stay in extractions.jsonl and graph.json). Enough to answer "why?".
MENTIONS_PER_STATEMENT = 3
_BAD_IRI = re.compile(r'[\x00-\x20<>"{}|^`\\]')

# Ontology IRIs as plain strings (a DefinedNamespace lookup costs a function call each time).
_KG_ExtractionRun = str(KG.ExtractionRun)
_KG_Mention = str(KG.Mention)
_KG_docId = str(KG.docId)
_KG_endOffset = str(KG.endOffset)
_KG_extractor = str(KG.extractor)
_KG_hasMention = str(KG.hasMention)
_KG_inField = str(KG.inField)
_KG_mentionOf = str(KG.mentionOf)
_KG_pipelineVersion = str(KG.pipelineVersion)
_KG_role = str(KG.role)
_KG_sentence = str(KG.sentence)
_KG_spanText = str(KG.spanText)
_KG_startOffset = str(KG.startOffset)
_KG_supports = str(KG.supports)
_KG_url = str(KG.url)
_KG_venueName = str(KG.venueName)
_KG_year = str(KG.year)
_KG_paperCount = str(KG.paperCount)
#: Venue statistics: (property, the paper relation counted, or "" for the papers themselves).
_VENUE_STATS = ((str(KG.papersWithCode), "hasCode"), (str(KG.proposedMethodCount), "proposes"),
                (str(KG.taskCount), "addressesTask"), (str(KG.datasetCount), "usesDataset"))

# A term is ("iri", value) or ("lit", value, datatype IRI or None).
Term = tuple


def iri(value: str) -> Term:
    """An IRI term; the IRIs minted here are built from a checked base and
    percent-encoded slugs, so only outside values (URLs) need :func:`checked`."""
    return ("iri", value)


def checked(value: str) -> Term:
    if _BAD_IRI.search(value):
        raise ValueError(f"not a valid IRI: {value!r}")
    return ("iri", value)


def lit(value, datatype: str | None = None) -> Term:
    return ("lit", str(value), datatype)


def check_base(base: str) -> str:
    """The base IRI, checked: absolute, no characters an IRI may not hold."""
    if not re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", base) or _BAD_IRI.search(base):
        raise ValueError(f"--base {base!r} is not an absolute IRI")
    return base


def mention_id(paper: str, m) -> str:
    field = "title" if m.source.endswith("@title") else "abstract"
    return f"mention/{paper.split('/', 1)[1]}/{field}-{m.start}-{m.end}-{m.type.lower()}"


def statements(G: nx.MultiDiGraph, base: str = DEFAULT_BASE) -> Iterator[tuple[str, list[tuple[str, Term]]]]:
    """(subject IRI, [(predicate IRI, object term), ...]) for every subject of the graph."""
    base = check_base(base)
    run = f"{base}run/pipeline-{PIPELINE_VERSION}"
    yield run, [(RDF_TYPE, iri(_KG_ExtractionRun)),
                (RDFS_LABEL, lit(f"abstract-kg extraction pipeline {PIPELINE_VERSION}")),
                (_KG_pipelineVersion, lit(PIPELINE_VERSION))]
    for n in sorted(G.nodes):
        d = G.nodes[n]
        t = d["type"]
        po: list[tuple[str, Term]] = [(RDF_TYPE, iri(CLASS[t])), (RDFS_LABEL, lit(d["label"]))]
        if t == "Paper":
            if d.get("title"):
                po.append((DCT_NS + "title", lit(d["title"])))
            po.append((DCT_NS + "abstract", lit(d["abstract"])))
            po += [(_KG_docId, lit(doc)) for doc in d.get("docs", [])]
            if d.get("year"):
                po.append((_KG_year, lit(d["year"], XSD_NS + "gYear")))
            if d.get("url"):
                po.append((SCHEMA_URL, lit(d["url"], XSD_NS + "anyURI")))
        else:
            po.append((SKOS_NS + "prefLabel", lit(d["name"])))
            po += [(SKOS_NS + "altLabel", lit(a)) for a in d.get("aliases", [])]
            if t == "CodeRepository" and d.get("url"):
                po.append((_KG_url, checked(d["url"])))
            if t == "Venue":
                m = _VENUE.match(d["name"])
                if m:
                    po += [(_KG_venueName, lit(m.group(1))), (_KG_year, lit(m.group(2), XSD_NS + "gYear"))]
            papers = {u for u in G.predecessors(n) if G.nodes[u]["type"] == "Paper"}
            po.append((_KG_paperCount, lit(len(papers), XSD_NS + "integer")))
            if t == "Venue":
                po += venue_statistics(G, papers)
        mentions = []
        for _, v, key, ed in sorted(G.out_edges(n, keys=True, data=True), key=lambda e: (e[2], e[1])):
            po.append((PREDICATE[key], iri(base + v)))
            for m in ed.get("mentions", [])[:MENTIONS_PER_STATEMENT]:
                mid = base + mention_id(n, m)
                po.append((_KG_hasMention, iri(mid)))
                mentions.append((mid, key, v, m))
        yield base + n, po
        for mid, key, v, m in sorted(mentions, key=lambda x: x[0]):
            mo = [(RDF_TYPE, iri(_KG_Mention)), (RDFS_LABEL, lit(m.text)), (_KG_mentionOf, iri(base + v)),
                  (_KG_supports, iri(PREDICATE[key])), (_KG_spanText, lit(m.text)),
                  (_KG_startOffset, lit(m.start, XSD_NS + "nonNegativeInteger")),
                  (_KG_endOffset, lit(m.end, XSD_NS + "nonNegativeInteger")),
                  (_KG_inField, lit("title" if m.source.endswith("@title") else "abstract"))]
            if m.sentence:
                mo.append((_KG_sentence, lit(m.sentence)))
            if m.role:
                mo.append((_KG_role, lit(m.role)))
            mo += [(_KG_extractor, lit(m.source.removesuffix("@title"))), (PROV_GENERATED, iri(run))]
            yield mid, mo


def venue_statistics(G: nx.MultiDiGraph, papers: set[str]) -> list[tuple[str, Term]]:
    """A venue's precomputed counts: papers with code, and the distinct proposed
    methods, tasks and datasets of its ``papers``."""
    found: dict[str, set[str]] = {rel: set() for _, rel in _VENUE_STATS}
    with_code = 0
    for p in papers:
        code = False
        for _, v, k in G.out_edges(p, keys=True):
            if k in found:
                found[k].add(v)
                code = code or k == "hasCode"
        with_code += code
    return [(prop, lit(with_code if rel == "hasCode" else len(found[rel]), XSD_NS + "integer"))
            for prop, rel in _VENUE_STATS]


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
    def __init__(self, fh: TextIO, base: str):
        self.fh, self.count = fh, 0

    def start(self) -> None:
        pass

    def subject(self, s: str, po: list) -> None:
        head = f"<{s}> <"
        self.fh.write("".join(f"{head}{p}> {nt} .\n" for p, _, nt in po))
        self.count += len(po)

    def end(self) -> None:
        pass


class _Names:
    """Prefixed names for IRIs whose local part is a plain name (kg:Paper, xsd:gYear)."""

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

    def __init__(self, fh: TextIO, base: str):
        self.fh, self.base = fh, base
        self.name = _Names(PREFIXES, base)

    def start(self) -> None:
        for p, ns in sorted({**PREFIXES, "res": self.base}.items()):
            self.fh.write(f"@prefix {p}: <{ns}> .\n")

    def subject(self, s: str, po: list) -> None:
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
        self.fh.write(f"\n<{s}> " + " ;\n    ".join(lines) + " .\n")

    def end(self) -> None:
        pass


_ENCODE = json.JSONEncoder(ensure_ascii=False, sort_keys=True, check_circular=False).encode


class _JsonLd:
    """JSON-LD: the context, then a ``@graph`` of one object a subject (compact IRIs)."""

    def __init__(self, fh: TextIO, base: str):
        self.fh, self.base = fh, base
        self.name = _Names(PREFIXES, base)
        self.keys: dict[str, str] = {}
        self.first = True

    def key(self, p: str) -> str:
        k = self.keys.get(p)
        if k is None:
            k = self.name(p)
            k = self.keys[p] = k[1:-1] if k.startswith("<") else k
        return k

    def start(self) -> None:
        self.fh.write('{\n "@context": ' + json.dumps(jsonld_context(self.base), sort_keys=True) + ',\n "@graph": [')

    def subject(self, s: str, po: list) -> None:
        key = self.key
        node: dict = {"@id": s}
        for p, o, _ in po:
            if p == RDF_TYPE:
                node.setdefault("@type", []).append(key(o[1]))
                continue
            if o[0] == "iri":
                val = {"@id": o[1]}
            elif o[2]:
                val = {"@value": o[1], "@type": key(o[2])}
            else:
                val = o[1]
            node.setdefault(key(p), []).append(val)
        node = {k: (v[0] if isinstance(v, list) and len(v) == 1 else v) for k, v in node.items()}
        self.fh.write(("\n  " if self.first else ",\n  ") + _ENCODE(node))
        self.first = False

    def end(self) -> None:
        self.fh.write("\n ]\n}\n")


WRITERS = {"nt": _NTriples, "ttl": _Turtle, "jsonld": _JsonLd}


def write_rdf(G: nx.MultiDiGraph, files: dict[str, TextIO], base: str = DEFAULT_BASE) -> int:
    """Write the graph in several formats (``nt``, ``ttl``, ``jsonld``: open text files)
    in one pass over the statements; returns the number of triples."""
    writers = [WRITERS[fmt](fh, base) for fmt, fh in files.items()]
    for w in writers:
        w.start()
    n = 0
    for s, po in statements(G, base):
        n += len(po)
        rendered = [(p, o, _nt(o)) for p, o in po]  # each object's N-Triples form, once for all writers
        for w in writers:
            w.subject(s, rendered)
    for w in writers:
        w.end()
    return n


def write_ntriples(G: nx.MultiDiGraph, fh: TextIO, base: str = DEFAULT_BASE) -> int:
    """N-Triples, one triple a line; returns the number of triples."""
    return write_rdf(G, {"nt": fh}, base)


def write_turtle(G: nx.MultiDiGraph, fh: TextIO, base: str = DEFAULT_BASE) -> None:
    write_rdf(G, {"ttl": fh}, base)


def jsonld_context(base: str = DEFAULT_BASE) -> dict:
    """The JSON-LD context written beside ``graph.jsonld`` and embedded in it."""
    return {**PREFIXES, "res": base}


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
