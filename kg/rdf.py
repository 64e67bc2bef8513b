"""RDF: the typed networkx graph as an rdflib ``Graph`` against our ontology.

Only this module (and the store / query modules after it) touches rdflib
terms. Serializations are deterministic: the same graph gives byte-identical
Turtle, N-Triples and JSON-LD.
"""
from __future__ import annotations

import json
import re

import networkx as nx
from rdflib import Graph, Literal, Namespace, URIRef
from rdflib.namespace import DCTERMS, OWL, PROV, RDF, RDFS, SKOS, XSD

from .extract import PIPELINE_VERSION
from .namespace import DEFAULT_BASE, KG, QUERY_PREFIXES

SCHEMA = Namespace("https://schema.org/")
_VENUE = re.compile(r"^(.*\S)\s+((?:19|20)\d{2})$")
LPWC = Namespace("https://linkedpaperswithcode.com/")

#: Prefixes bound in every serialization (``res`` is bound to the base IRI).
PREFIXES = {p: ns for p, ns in QUERY_PREFIXES.items() if p != "res"}
CLASS = {"Paper": KG.Paper, "Method": KG.Method, "Task": KG.Task, "Dataset": KG.Dataset,
         "CodeRepository": KG.CodeRepository, "Venue": KG.Venue}
PREDICATE = {"proposes": KG.proposes, "usesMethod": KG.usesMethod, "addressesTask": KG.addressesTask,
             "usesDataset": KG.usesDataset, "hasCode": KG.hasCode, "publishedIn": KG.publishedIn,
             "appliedTo": KG.appliedTo, "evaluatedOn": KG.evaluatedOn}


def new_graph(base: str = DEFAULT_BASE) -> Graph:
    g = Graph()
    for prefix, ns in {**PREFIXES, "res": base}.items():
        g.bind(prefix, ns, override=True, replace=True)
    return g


def mention_iri(base: str, paper: str, m) -> URIRef:
    field = "title" if m.source.endswith("@title") else "abstract"
    return URIRef(f"{base}mention/{paper.split('/', 1)[1]}/{field}-{m.start}-{m.end}-{m.type.lower()}")


def to_rdf(G: nx.MultiDiGraph, base: str = DEFAULT_BASE) -> Graph:
    """The RDF graph of ``G`` with resources under ``base``.

    >>> from kg.api import KnowledgeGraph
    >>> kg = KnowledgeGraph.from_records([{"id": "p1", "abstract": "We propose FooNet for image classification."}])
    >>> g = to_rdf(kg.nx)
    >>> (None, RDF.type, KG.Paper) in g
    True
    """
    g = new_graph(base)
    iri = {n: URIRef(base + n) for n in G.nodes}
    run = URIRef(f"{base}run/pipeline-{PIPELINE_VERSION}")
    g.add((run, RDF.type, KG.ExtractionRun))
    g.add((run, RDFS.label, Literal(f"abstract-kg extraction pipeline {PIPELINE_VERSION}")))
    g.add((run, KG.pipelineVersion, Literal(PIPELINE_VERSION)))
    for n, d in G.nodes(data=True):
        s, t = iri[n], d["type"]
        g.add((s, RDF.type, CLASS[t]))
        g.add((s, RDFS.label, Literal(d["label"])))
        if t == "Paper":
            if d.get("title"):
                g.add((s, DCTERMS.title, Literal(d["title"])))
            g.add((s, DCTERMS.abstract, Literal(d["abstract"])))
            for doc in d.get("docs", []):
                g.add((s, KG.docId, Literal(doc)))
            if d.get("year"):
                g.add((s, KG.year, Literal(str(d["year"]), datatype=XSD.gYear)))
            if d.get("url"):
                g.add((s, SCHEMA.url, Literal(d["url"], datatype=XSD.anyURI)))
        else:
            g.add((s, SKOS.prefLabel, Literal(d["name"])))
            for alias in d.get("aliases", []):
                g.add((s, SKOS.altLabel, Literal(alias)))
            if t == "CodeRepository" and d.get("url"):
                g.add((s, KG.url, URIRef(d["url"])))
            if t == "Venue":
                m = _VENUE.match(d["name"])
                if m:
                    g.add((s, KG.venueName, Literal(m.group(1))))
                    g.add((s, KG.year, Literal(m.group(2), datatype=XSD.gYear)))
    for u, v, key, d in G.edges(keys=True, data=True):
        g.add((iri[u], PREDICATE[key], iri[v]))
        for m in d.get("mentions", []):
            mi = mention_iri(base, u, m)
            g.add((iri[u], KG.hasMention, mi))
            g.add((mi, RDF.type, KG.Mention))
            g.add((mi, RDFS.label, Literal(m.text)))
            g.add((mi, KG.mentionOf, iri[v]))
            g.add((mi, KG.supports, PREDICATE[key]))
            g.add((mi, KG.spanText, Literal(m.text)))
            g.add((mi, KG.startOffset, Literal(m.start, datatype=XSD.nonNegativeInteger)))
            g.add((mi, KG.endOffset, Literal(m.end, datatype=XSD.nonNegativeInteger)))
            g.add((mi, KG.inField, Literal("title" if m.source.endswith("@title") else "abstract")))
            if m.sentence:
                g.add((mi, KG.sentence, Literal(m.sentence)))
            if m.role:
                g.add((mi, KG.role, Literal(m.role)))
            g.add((mi, KG.extractor, Literal(m.source.removesuffix("@title"))))
            g.add((mi, PROV.wasGeneratedBy, run))
    return g


def to_ntriples(g: Graph) -> str:
    """Sorted N-Triples (one triple a line, byte-stable)."""
    lines = g.serialize(format="nt", encoding="utf-8").decode("utf-8").splitlines()
    return "".join(sorted(set(ln + "\n" for ln in lines if ln.strip())))


def to_turtle(g: Graph) -> str:
    """Turtle, rebuilt from sorted triples so that the output is byte-stable."""
    return _ordered(g).serialize(format="turtle")


def _ordered(g: Graph) -> Graph:
    """A copy of ``g`` whose triples were inserted in sorted order (same prefixes)."""
    ordered = Graph()
    for prefix, ns in g.namespaces():
        ordered.bind(prefix, ns, override=True, replace=True)
    ordered.parse(data=to_ntriples(g), format="nt")
    return ordered


def jsonld_context(base: str = DEFAULT_BASE) -> dict:
    """The JSON-LD context written beside ``graph.jsonld`` and embedded in it."""
    return {**PREFIXES, "res": base}


def to_jsonld(g: Graph, base: str = DEFAULT_BASE) -> str:
    """JSON-LD (expanded from sorted N-Triples, compacted with our prefixes)."""
    data = json.loads(_ordered(g).serialize(format="json-ld", context=jsonld_context(base), auto_compact=True))
    if isinstance(data, dict) and "@graph" in data:
        data["@graph"] = sorted(data["@graph"], key=lambda n: n.get("@id", ""))
        for node in data["@graph"]:
            for k, v in list(node.items()):
                if isinstance(v, list):
                    node[k] = sorted(v, key=lambda x: json.dumps(x, sort_keys=True, ensure_ascii=False))
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
