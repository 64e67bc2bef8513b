"""SHACL validation of a built graph against ``ontology/shapes.ttl``: compiled to SPARQL
on Oxigraph (:mod:`kg.rdf.shacl`, the default), or by pyshacl."""
from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph as ox
import pyshacl
from rdflib import Graph

from kg.rdf.namespace import ontology_dir
from kg.rdf.ontology import ontology


@dataclass(frozen=True)
class Report:
    conforms: bool
    violations: int
    text: str
    results: tuple = ()  # kg.rdf.shacl.Result of the SPARQL engine
    results_graph: Graph | None = None  # pyshacl's report graph


def load_shapes() -> Graph:
    return Graph().parse(ontology_dir() / "shapes.ttl", format="turtle")


def validate_graph(data: Graph, engine: str = "sparql") -> Report:
    """Validate ``data`` against our shapes (SHACL Core plus SPARQL constraints), with the
    ontology beside it: compiled to SPARQL on Oxigraph (:mod:`kg.rdf.shacl`), or by pyshacl."""
    if engine == "pyshacl":
        return validate_with_pyshacl(data)
    if engine != "sparql":
        raise ValueError(f"engine must be 'sparql' or 'pyshacl', not {engine!r}")
    store = ox.Store()
    store.load(data.serialize(format="nt").encode("utf-8"), format=ox.RdfFormat.N_TRIPLES)
    return validate_store(store, with_ontology=True)


def validate_store(store: ox.Store, with_ontology: bool = False, progress=None) -> Report:
    """Validate the triples of an Oxigraph store (a build's holds the ontology already;
    ``with_ontology`` adds it to a store that does not); ``progress(done, total)`` after
    each constraint."""
    from kg.rdf.ontology import ontology_quads
    from kg.rdf.shacl import compile_shapes, report_text, run_checks

    if with_ontology:
        store.extend(ontology_quads())
    results = run_checks(store, compile_shapes(load_shapes()), progress)
    return Report(conforms=not results, violations=len(results), text=report_text(results), results=tuple(results))


def validate_with_pyshacl(data: Graph) -> Report:
    """The same check by pyshacl (slow: a node at a time in Python; kept to cross-check)."""
    conforms, results, text = pyshacl.validate(
        data, shacl_graph=load_shapes(), ont_graph=ontology(), inference="none",
        advanced=True, allow_warnings=True,
    )
    from rdflib.namespace import SH

    n = sum(1 for _ in results.subjects(predicate=None, object=SH.ValidationResult))
    return Report(conforms=bool(conforms), violations=n, text=str(text), results_graph=results)


def graph_file(where: str | Path) -> Path:
    """The RDF file to validate: the N-Triples (else Turtle) of an output folder, or the file given."""
    p = Path(where)
    if p.is_dir():
        for name in ("graph.nt.gz", "graph.ttl.gz", "graph.nt", "graph.ttl"):
            if (p / name).is_file():
                return p / name
        raise FileNotFoundError(f"{where}: no graph.nt.gz or graph.ttl.gz here (run `kg build` first)")
    if not p.is_file():
        raise FileNotFoundError(f"{where}: no such file or folder")
    return p


def rdf_format(path: Path) -> str:
    """rdflib's name of the format of an RDF file, by its suffix (before a ``.gz``).

    >>> rdf_format(Path("out/graph.nt.gz")), rdf_format(Path("g.jsonld"))
    ('nt', 'json-ld')
    """
    suffix = Path(path.name.removesuffix(".gz")).suffix
    return {".nt": "nt", ".ttl": "turtle", ".jsonld": "json-ld", ".nq": "nquads"}.get(suffix, "turtle")


def open_rdf(path: Path):
    """An RDF file opened for reading its bytes, decompressed if it is a ``.gz``."""
    return gzip.open(path, "rb") if path.name.endswith(".gz") else open(path, "rb")


def validate_path(where: str | Path, engine: str = "sparql", progress=None) -> Report:
    """Validate a build folder (its SPARQL store, which holds the ontology) or an RDF file
    (``.gz`` or not); ``progress(done, total)`` after each constraint (the SPARQL engine)."""
    where = Path(where)
    if engine == "sparql" and where.is_dir() and (where / "store").is_dir():
        return validate_store(ox.Store.read_only(str(where / "store")), progress=progress)
    path = graph_file(where)
    with open_rdf(path) as f:
        if engine == "pyshacl":
            return validate_with_pyshacl(Graph().parse(f, format=rdf_format(path)))
        store = ox.Store()
        store.bulk_load(f, format={"nt": ox.RdfFormat.N_TRIPLES, "turtle": ox.RdfFormat.TURTLE,
                                   "json-ld": ox.RdfFormat.JSON_LD}.get(rdf_format(path), ox.RdfFormat.TURTLE))
    return validate_store(store, with_ontology=True, progress=progress)
