import networkx as nx
import pytest
from rdflib import Graph, URIRef

from kg import KnowledgeGraph
from kg.rdf.store import QueryError


def test_build_from_samples(sample_kg):
    assert len(sample_kg.papers()) == 68
    assert len(sample_kg.repositories()) == 7
    assert isinstance(sample_kg.nx, nx.MultiDiGraph)
    assert isinstance(sample_kg.rdf, Graph)
    tarot = [m for m in sample_kg.methods() if m.name == "TAROT"]
    assert tarot and tarot[0].papers
    with pytest.raises(AttributeError):
        tarot[0].name = "x"  # records are immutable


def test_query_with_bindings(sample_kg):
    rows = sample_kg.query("SELECT ?p ?u WHERE { ?p kg:hasCode ?r . ?r kg:url ?u }",
                           u=URIRef("https://github.com/liangzu/loranpac"))
    assert len(rows) == 1 and rows[0]["p"].startswith("https://w3id.org/abstract-kg/resource/paper/")
    assert sample_kg.query("ASK { ?m skos:prefLabel ?n }", n="LoRanPAC") is True
    assert sample_kg.query("ASK { ?m skos:prefLabel ?n }", n="NoSuchMethod") is False
    with pytest.raises(QueryError):
        sample_kg.query("SELECT nonsense")


def test_from_records_and_html(tmp_path):
    kg = KnowledgeGraph.from_records([{"id": "a", "abstract": "We propose ZetaNet for image classification."}])
    assert [m.name for m in kg.methods()] == ["ZetaNet"]
    out = kg.to_html(tmp_path / "v.html", focus="ZetaNet")
    assert out.is_file() and "ZetaNet" in out.read_text(encoding="utf-8")
    assert "<table>" in kg._repr_html_()
    with pytest.raises(KeyError):
        kg.to_html(tmp_path / "w.html", focus="unknown thing")


@pytest.mark.slow
def test_kg_build_and_the_api_write_the_same_files(tmp_path):
    """The command line and KnowledgeGraph.build().save() give byte-identical outputs."""
    from kg.cli import main

    cli, api = tmp_path / "cli", tmp_path / "api"
    assert main(["build", "--out", str(cli), "--no-cache", "--quiet"]) == 0
    KnowledgeGraph.build().save(api)
    files = sorted(p.relative_to(cli) for p in cli.rglob("*") if p.is_file() and "store" not in p.parts)
    assert files and files == sorted(p.relative_to(api) for p in api.rglob("*") if p.is_file() and "store" not in p.parts)
    assert all((cli / f).read_bytes() == (api / f).read_bytes() for f in files)
