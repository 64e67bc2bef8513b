"""The SPARQL 1.1 Protocol's formats: the media types of results and graphs, what
a request's ``Accept`` or ``?format=`` asks for (:func:`accepted`), the format a
result is written in (:func:`pick_format`), and the Service Description."""
from __future__ import annotations

GRAPH_MEDIA = {"turtle": "text/turtle; charset=utf-8", "nt": "application/n-triples",
               "rdfxml": "application/rdf+xml", "jsonld": "application/ld+json"}
GRAPH_FORMAT = {"turtle": "TURTLE", "nt": "N_TRIPLES", "rdfxml": "RDF_XML", "jsonld": "JSON_LD"}
ACCEPT = [("application/sparql-results+json", "json"), ("application/json", "json"),
           ("application/sparql-results+xml", "xml"), ("application/xml", "xml"), ("text/xml", "xml"),
           ("text/csv", "csv"), ("text/tab-separated-values", "tsv"),
           ("text/turtle", "turtle"), ("application/n-triples", "nt"), ("text/plain", "nt"),
           ("application/rdf+xml", "rdfxml"), ("application/ld+json", "jsonld"),
           ("text/html", "html"), ("application/xhtml+xml", "html")]
#: What each kind of result can be written as, the default first.
FORMATS = {"solutions": ("json", "xml", "csv", "tsv"), "boolean": ("json", "xml", "csv", "tsv"),
           "graph": ("turtle", "nt", "rdfxml", "jsonld")}
#: A graph asked for as JSON or XML is JSON-LD or RDF/XML (``?format=json``, ``Accept: application/json``).
_GRAPH_ALIAS = {"json": "jsonld", "xml": "rdfxml"}

_SHORT = {"html": "html", "ntriples": "nt", "n-triples": "nt", "ttl": "turtle", "rdf": "rdfxml", "rdf+xml": "rdfxml",
          "json-ld": "jsonld", "application/x-json+ld": "jsonld"}


def accepted(accept: str, explicit: str | None) -> list[str]:
    """The formats a request takes, best first: ``?format=`` (short names or media
    types, comma-separated) alone, else the ``Accept`` header's types by quality (``q``; the first listed among
    equals). ``*`` stands for any format (``*/*``, no header), ``text`` for any text one.
    Empty when nothing listed is served (406).

    >>> accepted("application/sparql-results+json;q=0.5, application/sparql-results+xml;q=0.9", None)
    ['xml', 'json']
    >>> accepted("image/png", None), accepted("", None), accepted("", "text/csv"), accepted("", "ttl")
    ([], ['*'], ['csv'], ['turtle'])
    """
    media_fmt = dict(ACCEPT)
    if explicit:
        out = []
        for e in explicit.lower().split(","):
            e = e.strip()
            fmt = media_fmt.get(e) or _SHORT.get(e, e)
            if fmt not in out:
                out.append(fmt)
        return out
    if not (accept or "").strip():
        return ["*"]
    ranked = []
    for i, part in enumerate(accept.split(",")):
        media, *params = [x.strip() for x in part.split(";")]
        q = 1.0
        for param in params:
            if param.lower().startswith("q="):
                try:
                    q = float(param[2:])
                except ValueError:
                    q = 0.0
        if q > 0:
            ranked.append((-q, i, media.lower()))
    out = []
    for _, _, media in sorted(ranked):
        fmt = media_fmt.get(media) or {"*/*": "*", "application/*": "*", "text/*": "text"}.get(media)
        if fmt and fmt not in out:
            out.append(fmt)
    return out


def wants_html(formats: list[str]) -> bool:
    """Whether a request asks for a page before any RDF (a browser's ``Accept``).

    >>> wants_html(accepted("text/html,application/xml;q=0.9,*/*;q=0.8", None)), wants_html(["*"])
    (True, False)
    """
    for fmt in formats:
        if fmt == "html":
            return True
        if pick_format([fmt], "graph") is not None:
            return False
    return False


def pick_format(formats: list[str], kind: str) -> str | None:
    """The first of ``formats`` (from :func:`accepted`) that a ``kind`` of result
    (``solutions``, ``boolean``, ``graph``) can be written as, or None.

    >>> pick_format(["json"], "graph"), pick_format(["turtle"], "solutions"), pick_format(["text"], "solutions")
    ('jsonld', None, 'csv')
    """
    served = FORMATS[kind]
    for fmt in formats:
        if kind == "graph":
            fmt = _GRAPH_ALIAS.get(fmt, fmt)
        if fmt in served:
            return fmt
        if fmt == "*":
            return served[0]
        if fmt == "text":
            return "csv" if kind != "graph" else "turtle"
    return None


def service_description(endpoint: str) -> str:
    """The SPARQL 1.1 Service Description of the endpoint at ``endpoint`` (Turtle):
    what ``GET /sparql`` without a query answers."""
    from rdflib import BNode, Graph, Literal, Namespace, URIRef
    from rdflib.namespace import RDF

    SD = Namespace("http://www.w3.org/ns/sparql-service-description#")
    FMT = Namespace("http://www.w3.org/ns/formats/")
    g = Graph()
    g.bind("sd", SD)
    g.bind("fmt", FMT)
    svc, dataset, graph = URIRef(endpoint), BNode("dataset"), BNode("default")
    g.add((svc, RDF.type, SD.Service))
    g.add((svc, SD.endpoint, svc))
    g.add((svc, SD.supportedLanguage, SD.SPARQL11Query))
    for fmt in ("SPARQL_Results_JSON", "SPARQL_Results_XML", "SPARQL_Results_CSV", "SPARQL_Results_TSV",
                "Turtle", "N-Triples", "RDF_XML", "JSON-LD"):
        g.add((svc, SD.resultFormat, FMT[fmt]))
    g.add((svc, SD.defaultDataset, dataset))
    g.add((dataset, RDF.type, SD.Dataset))
    g.add((dataset, SD.defaultGraph, graph))
    g.add((graph, RDF.type, SD.Graph))
    g.add((svc, URIRef("http://purl.org/dc/terms/description"),
           Literal("abstract-kg: a read-only knowledge graph of methods, tasks, datasets and code of ML papers")))
    return g.serialize(format="turtle")
