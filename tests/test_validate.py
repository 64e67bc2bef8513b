import pytest
from rdflib import Graph, Literal, URIRef
from rdflib.namespace import RDF, SKOS

from tests.conftest import rdf_text
from kg.cli import main
from kg.rdf.namespace import KG
from kg.rdf.validate import validate_graph, validate_path


@pytest.mark.slow
def test_sample_graph_conforms(built):
    report = validate_path(built)
    assert report.conforms, report.text


@pytest.mark.slow
def test_violations_are_caught(built, tmp_path, capsys):
    g = Graph().parse(data=rdf_text(built / "graph.nt.gz"), format="nt")
    method = next(g.subjects(RDF.type, KG.Method))
    g.remove((method, SKOS.prefLabel, None))                       # missing canonical name
    repo = next(g.subjects(RDF.type, KG.CodeRepository))
    g.remove((repo, KG.url, None))
    g.add((repo, KG.url, URIRef("https://gitlab.com/a/b")))         # wrong URL pattern
    paper = next(g.subjects(RDF.type, KG.Paper))
    g.add((paper, KG.addressesTask, method))                       # object of the wrong class
    mention = next(g.subjects(RDF.type, KG.Mention))
    g.set((mention, KG.endOffset, Literal(0, datatype=URIRef("http://www.w3.org/2001/XMLSchema#integer"))))
    report = validate_graph(g)
    assert not report.conforms
    assert report.violations >= 4
    bad = tmp_path / "bad.nt"
    g.serialize(bad, format="nt")
    assert main(["validate", "-s", str(bad)]) == 1
    out = capsys.readouterr()
    assert "violation" in out.err and "prefLabel" in out.out


@pytest.mark.slow
def test_precomputed_counts_are_checked_against_the_graph(built):
    from rdflib.namespace import XSD

    g = Graph().parse(data=rdf_text(built / "graph.nt.gz"), format="nt")
    task = next(g.subjects(RDF.type, KG.Task))
    n = g.value(task, KG.paperCount).toPython()
    assert n == len({p for p in g.subjects(KG.addressesTask, task)}) >= 1
    g.set((task, KG.paperCount, Literal(n + 1, datatype=XSD.integer)))
    report = validate_graph(g)
    assert not report.conforms and report.violations == 1
    assert "kg:paperCount differs" in report.text or "paperCount differs" in report.text


@pytest.mark.slow
def test_method_usages_are_checked_against_the_graph(built):
    from rdflib.namespace import XSD

    g = Graph().parse(data=rdf_text(built / "graph.nt.gz"), format="nt")
    usages = sorted(g.subjects(RDF.type, KG.MethodUsage))
    assert usages
    # each usage counts the papers on its task that propose or use its method
    u = usages[0]
    t, m, n = g.value(u, KG.task), g.value(u, KG.method), g.value(u, KG.paperCount).toPython()
    on_task = set(g.subjects(KG.addressesTask, t))
    assert n == len(on_task & (set(g.subjects(KG.proposes, m)) | set(g.subjects(KG.usesMethod, m)))) >= 1
    wrong = Graph() + g
    wrong.set((u, KG.paperCount, Literal(n + 1, datatype=XSD.integer)))
    report = validate_graph(wrong)
    assert not report.conforms and report.violations == 1 and "method usage differs" in report.text
