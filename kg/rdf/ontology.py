"""What the ontology (``ontology/kg.ttl``) says that the writers use: which schema.org and
Linked Papers with Code terms each of our classes and properties entails, and of which
kind each property is.

The outputs carry those entailments (``a kg:Paper`` comes with ``a schema:ScholarlyArticle,
lpwcc:paper``; ``kg:proposes`` with ``kg:hasMethod``, ``lpwcp:hasMethod``,
``schema:mentions`` and ``schema:about``), so that a query written against schema.org or
LPWC finds our papers in the files and at the endpoint, with no reasoner. The PROV-O and
Dublin Core super-terms of mentions and identifiers are left to a reasoner: they would
add a triple to every mention and answer no question the kg terms do not.
"""
from __future__ import annotations

import functools

from rdflib import Graph, URIRef
from rdflib.namespace import OWL, RDF, RDFS

from kg.rdf.namespace import KG, ontology_dir

SCHEMA = "https://schema.org/"
LPWC = "https://linkedpaperswithcode.com/"
#: The namespaces whose super-terms are written out.
MATERIALIZED = (str(KG), SCHEMA, LPWC)


@functools.cache
def ontology() -> Graph:
    return Graph().parse(ontology_dir() / "kg.ttl")


def _closure(g: Graph, start: URIRef, step) -> set[URIRef]:
    seen, todo = set(), [start]
    while todo:
        x = todo.pop()
        for y in step(g, x):
            if isinstance(y, URIRef) and y not in seen and y != start:
                seen.add(y)
                todo.append(y)
    return seen


def _up_classes(g: Graph, c):
    yield from g.objects(c, RDFS.subClassOf)
    yield from g.objects(c, OWL.equivalentClass)
    yield from g.subjects(OWL.equivalentClass, c)


def _up_properties(g: Graph, p):
    yield from g.objects(p, RDFS.subPropertyOf)
    yield from g.objects(p, OWL.equivalentProperty)
    yield from g.subjects(OWL.equivalentProperty, p)


def _kept(terms: set[URIRef]) -> tuple[str, ...]:
    return tuple(sorted(str(t) for t in terms if str(t).startswith(MATERIALIZED)))


@functools.cache
def entailed_types(cls: str) -> tuple[str, ...]:
    """The classes, besides ``cls``, that an instance of ``cls`` belongs to (sorted).

    >>> entailed_types(str(KG.Paper))
    ('https://linkedpaperswithcode.com/class/paper', 'https://schema.org/ScholarlyArticle')
    """
    return _kept(_closure(ontology(), URIRef(cls), _up_classes))


@functools.cache
def entailed_properties(prop: str) -> tuple[str, ...]:
    """The properties, besides ``prop``, that a ``prop`` statement also makes (sorted).

    >>> for p in entailed_properties(str(KG.proposes)):
    ...     print(p)
    https://linkedpaperswithcode.com/property/hasMethod
    https://schema.org/about
    https://schema.org/mentions
    https://w3id.org/abstract-kg/ontology#hasMethod
    """
    return _kept(_closure(ontology(), URIRef(prop), _up_properties))


@functools.cache
def property_kinds() -> dict[str, str]:
    """{property IRI: ``@id`` for an object property, else the datatype of its range
    (``""`` for a plain string)} of every property the ontology declares."""
    g = ontology()
    out = {}
    for p in g.subjects(RDF.type, OWL.ObjectProperty):
        out[str(p)] = "@id"
    for p in g.subjects(RDF.type, OWL.DatatypeProperty):
        rng = g.value(p, RDFS.range)
        out[str(p)] = "" if rng is None or str(rng).endswith("#string") else str(rng)
    return out


def ontology_quads() -> list:
    """The ontology as Oxigraph quads (default graph), its blank nodes (an owl:unionOf, the
    disjointness axiom) labelled in the order the file gives them, so that every store
    built from it holds the same terms (a parser names anonymous nodes at random)."""
    import pyoxigraph as ox

    labels: dict = {}

    def stable(t):
        if isinstance(t, ox.BlankNode):
            if t not in labels:
                labels[t] = ox.BlankNode(f"ontology{len(labels)}")
            return labels[t]
        return t

    return [ox.Quad(stable(q.subject), q.predicate, stable(q.object))
            for q in ox.parse(path=ontology_dir() / "kg.ttl", format=ox.RdfFormat.TURTLE)]
