"""SHACL validation of a built graph against ``ontology/shapes.ttl``."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyshacl
from rdflib import Graph

from kg.rdf.namespace import ontology_dir


@dataclass(frozen=True)
class Report:
    conforms: bool
    violations: int
    text: str


def load_shapes() -> Graph:
    return Graph().parse(ontology_dir() / "shapes.ttl", format="turtle")


def load_ontology() -> Graph:
    return Graph().parse(ontology_dir() / "kg.ttl", format="turtle")


def validate_graph(data: Graph) -> Report:
    """Validate ``data`` against our shapes (SHACL Core plus SPARQL constraints)."""
    conforms, results, text = pyshacl.validate(
        data, shacl_graph=load_shapes(), ont_graph=load_ontology(), inference="none",
        advanced=True, allow_warnings=True,
    )
    from rdflib.namespace import SH

    n = sum(1 for _ in results.subjects(predicate=None, object=SH.ValidationResult))
    return Report(conforms=bool(conforms), violations=n, text=str(text))


def graph_file(where: str | Path) -> Path:
    """The RDF file to validate: ``graph.nt`` of an output folder, or the file given."""
    p = Path(where)
    if p.is_dir():
        for name in ("graph.nt", "graph.ttl"):
            if (p / name).is_file():
                return p / name
        raise FileNotFoundError(f"{where}: no graph.nt or graph.ttl here (run `kg build` first)")
    if not p.is_file():
        raise FileNotFoundError(f"{where}: no such file or folder")
    return p


def rdf_format(path: Path) -> str:
    """rdflib's name of the format of an RDF file, by its suffix."""
    return {".nt": "nt", ".ttl": "turtle", ".jsonld": "json-ld", ".nq": "nquads"}.get(path.suffix, "turtle")


def validate_path(where: str | Path) -> Report:
    path = graph_file(where)
    return validate_graph(Graph().parse(path, format=rdf_format(path)))
