"""Linked-data publishing: what ``kg serve`` answers for a resource's IRI.

A build's IRIs are ``<base><type>/<slug>`` (``https://w3id.org/abstract-kg/resource/
method/tarot``). The server answers the path ``/resource/<type>/<slug>`` with the
resource's description, as Turtle, N-Triples, RDF/XML or JSON-LD by content
negotiation: its own triples, the triples that link other nodes of the graph to it
(the papers of a task), and the label of every node on the other side of them, so
that a client can show the description without asking again. ``/ontology`` gives
the ontology document (its terms are ``/ontology#term``). A w3id redirect
(``docs/w3id.htaccess``) sends the public IRIs to such a server.
"""
from __future__ import annotations

from functools import lru_cache

import pyoxigraph as ox

from kg.rdf.lookup import LINKS
from kg.rdf.statements import RDFS_LABEL
from kg.rdf.store import with_values

_OX_FORMAT = {"nt": "N_TRIPLES", "rdfxml": "RDF_XML", "jsonld": "JSON_LD"}
#: The paths a server answers for resources.
RESOURCE_PREFIX = "/resource/"

_LABEL = f"<{RDFS_LABEL}>"

_DESCRIBE = (f"CONSTRUCT {{ ?s ?p ?o . ?o {_LABEL} ?ol . ?x ?q ?s . ?x {_LABEL} ?xl }} WHERE {{ "
             f"{{ ?s ?p ?o OPTIONAL {{ ?o {_LABEL} ?ol }} }} UNION "
             f"{{ VALUES ?q {{ {LINKS} }} ?x ?q ?s OPTIONAL {{ ?x {_LABEL} ?xl }} }} }}")
_EXISTS = "ASK { ?s ?p ?o }"
_TRIPLES = f"SELECT ?p ?o ?ol WHERE {{ ?s ?p ?o OPTIONAL {{ ?o {_LABEL} ?ol }} }} ORDER BY ?p ?o"


def resource_iri(base: str, path: str) -> str | None:
    """The IRI a request path names (``/resource/method/tarot`` -> ``<base>method/tarot``),
    or None when the path is no resource's or not an IRI (a space, ``<``, ``>``...).

    >>> resource_iri("https://w3id.org/abstract-kg/resource/", "/resource/method/tarot")
    'https://w3id.org/abstract-kg/resource/method/tarot'
    >>> resource_iri("https://w3id.org/abstract-kg/resource/", "/resource/x> <y"), resource_iri("b:", "/other")
    (None, None)
    """
    if not path.startswith(RESOURCE_PREFIX) or len(path) == len(RESOURCE_PREFIX):
        return None
    try:
        return ox.NamedNode(base + path[len(RESOURCE_PREFIX):]).value
    except ValueError:
        return None


def describe_query(iri: str) -> str:
    """The CONSTRUCT query of a resource's description (the IRI written by Oxigraph, escaped)."""
    return with_values(_DESCRIBE, {ox.Variable("s"): ox.NamedNode(iri)})


def description_query(iri: str) -> str:
    """A SELECT of a resource's own triples (``?p ?o``) and the labels of their objects (``?ol``)."""
    return with_values(_TRIPLES, {ox.Variable("s"): ox.NamedNode(iri)})


def exists_query(iri: str) -> str:
    """An ASK query: whether the graph says anything of ``iri``."""
    return with_values(_EXISTS, {ox.Variable("s"): ox.NamedNode(iri)})


@lru_cache(maxsize=4)
def ontology_document(fmt: str) -> bytes:
    """``ontology/kg.ttl`` as ``fmt`` (``turtle``, ``nt``, ``rdfxml`` or ``jsonld``)."""
    from kg.rdf.namespace import ontology_dir

    text = (ontology_dir() / "kg.ttl").read_bytes()
    if fmt == "turtle":
        return text
    triples = ox.parse(text, format=ox.RdfFormat.TURTLE)
    return ox.serialize(triples, format=getattr(ox.RdfFormat, _OX_FORMAT[fmt]))
