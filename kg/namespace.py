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
    ExtractionRun: URIRef
    # paper to entity
    proposes: URIRef
    usesMethod: URIRef
    addressesTask: URIRef
    usesDataset: URIRef
    hasCode: URIRef
    publishedIn: URIRef
    # derived
    appliedTo: URIRef
    evaluatedOn: URIRef
    derivedFrom: URIRef
    # provenance
    hasMention: URIRef
    mentionOf: URIRef
    spanText: URIRef
    startOffset: URIRef
    endOffset: URIRef
    inField: URIRef
    sentence: URIRef
    role: URIRef
    extractor: URIRef
    pipelineVersion: URIRef
    # attributes
    url: URIRef
    docId: URIRef
    year: URIRef


def ontology_dir() -> Path:
    """The folder holding ``kg.ttl`` and ``shapes.ttl``.

    In an installed wheel it is ``kg/_ontology``; in a source checkout the
    repository's top-level ``ontology/``.
    """
    packaged = Path(str(resources.files("kg"))) / "_ontology"
    if (packaged / "kg.ttl").is_file():
        return packaged
    return Path(__file__).resolve().parent.parent / "ontology"
