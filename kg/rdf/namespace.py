"""The abstract-kg ontology as an rdflib ``DefinedNamespace``.

Every term here is declared in ``ontology/kg.ttl`` (a test checks it), so a
typo in code fails loudly instead of minting an undeclared IRI.
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path

from rdflib import URIRef
from rdflib.namespace import DefinedNamespace, Namespace

ONTOLOGY_IRI = "https://w3id.org/abstract-kg/ontology"
DEFAULT_BASE = "https://w3id.org/abstract-kg/resource/"

#: Prefixes every query may use without declaring them (CLI, API, endpoint).
QUERY_PREFIXES = {
    "kg": ONTOLOGY_IRI + "#",
    "res": DEFAULT_BASE,
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "dcterms": "http://purl.org/dc/terms/",
    "prov": "http://www.w3.org/ns/prov#",
    "schema": "https://schema.org/",
    "lpwcc": "https://linkedpaperswithcode.com/class/",
    "lpwcp": "https://linkedpaperswithcode.com/property/",
}


class KG(DefinedNamespace):
    """abstract-kg ontology: papers, methods, tasks, datasets, code and evidence."""

    _NS = Namespace(ONTOLOGY_IRI + "#")
    _fail = True

    # classes
    Paper: URIRef
    Method: URIRef
    Task: URIRef
    Dataset: URIRef
    CodeRepository: URIRef
    Venue: URIRef
    Mention: URIRef
    Sentence: URIRef
    ExtractionRun: URIRef
    MethodUsage: URIRef
    # paper to entity
    hasMethod: URIRef
    proposes: URIRef
    usesMethod: URIRef
    addressesTask: URIRef
    usesDataset: URIRef
    hasCode: URIRef
    publishedIn: URIRef
    # derived
    appliedTo: URIRef
    evaluatedOn: URIRef
    # method usage (task, method, kg:paperCount)
    task: URIRef
    method: URIRef
    # provenance
    hasMention: URIRef
    mentionOf: URIRef
    supports: URIRef
    startOffset: URIRef
    endOffset: URIRef
    inSentence: URIRef
    inField: URIRef
    role: URIRef
    extractor: URIRef
    pipelineVersion: URIRef
    # attributes
    url: URIRef
    docId: URIRef
    venueName: URIRef
    year: URIRef
    # statistics, precomputed at build time
    paperCount: URIRef
    papersWithCode: URIRef
    proposedMethodCount: URIRef
    taskCount: URIRef
    datasetCount: URIRef


def ontology_dir() -> Path:
    """The folder holding ``kg.ttl`` and ``shapes.ttl``.

    In an installed wheel it is ``kg/_ontology``; in a source checkout the
    repository's top-level ``ontology/``.
    """
    packaged = Path(str(resources.files("kg"))) / "_ontology"
    if (packaged / "kg.ttl").is_file():
        return packaged
    return Path(__file__).resolve().parents[2] / "ontology"
