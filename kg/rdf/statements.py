"""RDF: the typed networkx graph as statements against our ontology.

:func:`statements` is the one place that decides which triples a graph
makes; it yields them subject by subject in a fixed order (nodes sorted by
id, each paper followed by its mentions), so every output is byte-stable and
memory stays flat however large the graph. :mod:`kg.rdf.serialize` writes them
as N-Triples, Turtle and JSON-LD.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator

import networkx as nx

from kg.resolve.algorithms import method_usages
from kg.extract import PIPELINE_VERSION
from kg.rdf.namespace import DEFAULT_BASE, KG, QUERY_PREFIXES
from kg.rdf.ontology import entailed_properties, entailed_types

RDF_NS = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
XSD_NS = "http://www.w3.org/2001/XMLSchema#"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
RDF_TYPE = RDF_NS + "type"
SKOS_NS = "http://www.w3.org/2004/02/skos/core#"
DCT_NS = "http://purl.org/dc/terms/"
SCHEMA_URL = "https://schema.org/url"

#: Prefixes bound in every serialization (``res`` is bound to the base IRI).
PREFIXES = {p: ns for p, ns in QUERY_PREFIXES.items() if p != "res"}
CLASS = {t: str(KG[t]) for t in ("Paper", "Method", "Task", "Dataset", "CodeRepository", "Venue")}
PREDICATE = {k: str(KG[k]) for k in ("proposes", "usesMethod", "addressesTask", "usesDataset", "hasCode",
                                      "publishedIn", "appliedTo", "evaluatedOn")}
_VENUE = re.compile(r"^(.*\S)\s+((?:19|20)\d{2})$")
#: Evidence spans written to RDF per statement (the first ones in the text; all of
#: them stay in extractions.jsonl.gz and graph.json.gz). Enough to answer "why?".
MENTIONS_PER_STATEMENT = 3
#: ``kg:MethodUsage`` nodes written per task: its methods with the most papers (the
#: ``methods-for-task`` query reads these, so its LIMIT may not exceed this).
USAGE_PER_TASK = 100
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
_KG_Sentence = str(KG.Sentence)
_KG_inSentence = str(KG.inSentence)
_KG_startOffset = str(KG.startOffset)
_KG_supports = str(KG.supports)
_KG_url = str(KG.url)
_KG_venueName = str(KG.venueName)
_KG_year = str(KG.year)
_KG_paperCount = str(KG.paperCount)
_KG_MethodUsage = str(KG.MethodUsage)
_KG_task = str(KG.task)
_KG_method = str(KG.method)
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


def field_of(m) -> str:
    """The field of the record a mention's offsets point into."""
    return "title" if m.source.endswith("@title") else "abstract"


def mention_id(paper: str, m) -> str:
    return f"mention/{paper.split('/', 1)[1]}/{field_of(m)}-{m.start}-{m.end}-{m.type.lower()}"


def sentence_id(paper: str, m) -> str:
    """The resource path of the sentence holding mention ``m`` of ``paper``: the paper,
    the field and a digest of the sentence's text (the text is the normalized one, so
    it need not stand in the abstract as written, and its offsets there are unknown).

    >>> from kg.model import Mention
    >>> sentence_id("paper/p1", Mention("GAN", "Method", 9, 12, sentence="We train GAN."))
    'sentence/p1/abstract-0841430c4c'
    """
    digest = hashlib.blake2b(m.sentence.encode("utf-8"), digest_size=5).hexdigest()
    return f"sentence/{paper.split('/', 1)[1]}/{field_of(m)}-{digest}"


def statements(G: nx.MultiDiGraph, base: str = DEFAULT_BASE) -> Iterator[tuple[str, list[tuple[str, Term]]]]:
    """(subject IRI, [(predicate IRI, object term), ...]) for every subject of the graph."""
    for _, subjects in units(G, base):
        yield from subjects


def run_id() -> str:
    """The resource path of the extraction run every mention was generated by."""
    return f"run/pipeline-{PIPELINE_VERSION}"


#: The IRI of a build's extraction run, whose prefix is the build's base (:func:`base_of_run`).
RUN_QUERY = f"SELECT ?r WHERE {{ ?r a <{_KG_ExtractionRun}> }} ORDER BY ?r LIMIT 1"


def base_of_run(run_iri: str) -> str | None:
    """The base IRI a build minted its resources under, from the IRI of its extraction
    run (``<base>run/pipeline-<version>``, :func:`run_id`; :data:`RUN_QUERY` finds it
    in a store).

    >>> base_of_run("https://w3id.org/abstract-kg/resource/run/pipeline-0.2.0")
    'https://w3id.org/abstract-kg/resource/'
    """
    at = run_iri.rfind("run/pipeline-")
    return run_iri[:at] if at > 0 else None


def units(G: nx.MultiDiGraph, base: str = DEFAULT_BASE, skip: frozenset = frozenset(),
          usages: dict | None = None) -> Iterator[tuple[str, list | None]]:
    """The statements grouped by unit: (unit, [(subject IRI, [(predicate, object), ...]), ...]).

    A unit is the extraction run, or one node with the mentions of its statements
    (their subjects are minted from the node's id, so no two units share a
    subject). Units come in the order of :func:`statements`: the run, then the
    nodes sorted by id. a node in ``skip`` gives ``(node, None)`` without making
    the node's statements (an incremental build copies them from its last files).
    ``usages``: :func:`usage_table` of ``G`` if the caller has it (else made here).
    """
    base = check_base(base)
    if usages is None:
        usages = usage_table(G)
    run = base + run_id()
    yield run_id(), [(run, [(RDF_TYPE, iri(_KG_ExtractionRun)),
                            (RDFS_LABEL, lit(f"abstract-kg extraction pipeline {PIPELINE_VERSION}")),
                            (_KG_pipelineVersion, lit(PIPELINE_VERSION))])]
    for n in sorted(G.nodes):
        if n in skip:
            yield n, None
            continue
        yield n, _node_statements(G, n, base, usages)


def _node_statements(G: nx.MultiDiGraph, n: str, base: str, usages: dict) -> list:
    d = G.nodes[n]
    t = d["type"]
    po: list[tuple[str, Term]] = [(RDF_TYPE, iri(CLASS[t]))]
    po += [(RDF_TYPE, iri(c)) for c in entailed_types(CLASS[t])]  # schema.org, LPWC (kg/rdf/ontology.py)
    po.append((RDFS_LABEL, lit(d["label"])))
    if t == "Paper":
        if d.get("title"):
            po.append((DCT_NS + "title", lit(d["title"])))
        po.append((DCT_NS + "abstract", lit(d["abstract"])))
        po += [(_KG_docId, lit(doc)) for doc in d.get("docs", [])]
        if d.get("year"):
            po.append((_KG_year, lit(d["year"], XSD_NS + "integer")))
        if d.get("url"):
            po.append((SCHEMA_URL, lit(d["url"], XSD_NS + "anyURI")))
    else:
        po.append((SKOS_NS + "prefLabel", lit(d["name"])))
        po += [(SKOS_NS + "altLabel", lit(a)) for a in d.get("aliases", [])]
        if t == "CodeRepository" and d.get("url"):
            po += [(p, checked(d["url"])) for p in (_KG_url, *entailed_properties(_KG_url))]
        if t == "Venue":
            m = _VENUE.match(d["name"])
            if m:
                po += [(_KG_venueName, lit(m.group(1))), (_KG_year, lit(int(m.group(2)), XSD_NS + "integer"))]
        nodes = G.nodes
        papers = {u for u in G.pred[n] if nodes[u]["type"] == "Paper"}
        po.append((_KG_paperCount, lit(len(papers), XSD_NS + "integer")))
        if t == "Venue":
            po += venue_statistics(G, papers)
    mentions = []
    entailed = set()  # (property, object) written for the statements above (one method may be both)
    for _, v, key, ed in sorted(G.out_edges(n, keys=True, data=True), key=lambda e: (e[2], e[1])):
        obj = iri(base + v)
        po.append((PREDICATE[key], obj))
        for p in entailed_properties(PREDICATE[key]):
            if (p, v) not in entailed:
                entailed.add((p, v))
                po.append((p, obj))
        for m in ed.get("mentions", [])[:MENTIONS_PER_STATEMENT]:
            mid = base + mention_id(n, m)
            po.append((_KG_hasMention, iri(mid)))
            mentions.append((mid, key, v, m))
    out = [(base + n, po)]
    sentences: dict[str, list] = {}
    for mid, key, v, m in sorted(mentions, key=lambda x: x[0]):
        mo = [(RDF_TYPE, iri(_KG_Mention)), (RDFS_LABEL, lit(m.text)), (_KG_mentionOf, iri(base + v)),
              (_KG_supports, iri(PREDICATE[key])), (_KG_startOffset, lit(m.start, XSD_NS + "integer")),
              (_KG_endOffset, lit(m.end, XSD_NS + "integer"))]
        if m.sentence:  # the sentence, written once for all its mentions, holds the field
            sid = base + sentence_id(n, m)
            mo.append((_KG_inSentence, iri(sid)))
            sentences.setdefault(sid, [(RDF_TYPE, iri(_KG_Sentence)), (RDFS_LABEL, lit(m.sentence)),
                                       (_KG_inField, lit(field_of(m)))])
        else:
            mo.append((_KG_inField, lit(field_of(m))))
        if m.role:
            mo.append((_KG_role, lit(m.role)))
        mo.append((_KG_extractor, lit(m.source.removesuffix("@title"))))
        out.append((mid, mo))
    out += sorted(sentences.items())
    if t == "Task":
        out += usage_statements(G, n, usages.get(n, ()), base)
    return out


def usage_id(task: str, method: str) -> str:
    """The resource path of the usage of ``method`` on ``task`` (minted from both ids).

    >>> usage_id("task/image-classification", "method/resnet-50")
    'usage/image-classification/resnet-50'
    """
    return f"usage/{task.split('/', 1)[1]}/{method.split('/', 1)[1]}"


def usage_statements(G: nx.MultiDiGraph, task: str, usage: list[tuple[str, int]], base: str = DEFAULT_BASE) -> list:
    """The ``kg:MethodUsage`` subjects of a task, one per (method, papers) of ``usage``
    (the task's row of :func:`usage_table`)."""
    nodes = G.nodes
    name = nodes[task]["name"]
    return [(base + usage_id(task, m),
             [(RDF_TYPE, iri(_KG_MethodUsage)), (RDFS_LABEL, lit(f"{nodes[m]['name']} on {name}")),
              (_KG_task, iri(base + task)), (_KG_method, iri(base + m)),
              (_KG_paperCount, lit(k, XSD_NS + "integer"))])
            for m, k in usage]


def usage_table(G: nx.MultiDiGraph) -> dict[str, list[tuple[str, int]]]:
    """What the ``kg:MethodUsage`` nodes of every task are written from (task -> its first
    :data:`USAGE_PER_TASK` methods by papers: :func:`kg.resolve.algorithms.method_usages`)."""
    return method_usages(G, USAGE_PER_TASK)


def venue_statistics(G: nx.MultiDiGraph, papers: set[str]) -> list[tuple[str, Term]]:
    """A venue's precomputed counts: papers with code, and the distinct proposed
    methods, tasks and datasets of its ``papers``."""
    found: dict[str, set[str]] = {rel: set() for _, rel in _VENUE_STATS}
    with_code = 0
    succ = G.succ  # node -> neighbour -> key -> data (G.out_edges is several times slower)
    for p in papers:
        code = False
        for v, keys in succ[p].items():
            for k in keys:
                if k in found:
                    found[k].add(v)
                    code = code or k == "hasCode"
        with_code += code
    return [(prop, lit(with_code if rel == "hasCode" else len(found[rel]), XSD_NS + "integer"))
            for prop, rel in _VENUE_STATS]
