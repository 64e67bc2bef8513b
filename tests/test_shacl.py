"""The SHACL shapes compiled to SPARQL report what pyshacl reports, on hostile graphs."""
import pytest
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import RDF, RDFS, SH, SKOS, XSD

from tests.conftest import rdf_text
from kg.cli import main
from kg.rdf.namespace import KG
from kg.rdf.shacl import compile_shapes
from kg.rdf.validate import load_shapes, validate_graph, validate_path


def pyshacl_results(report) -> set[tuple]:
    """(focus, path, component, value) of pyshacl's report graph, in our engine's spelling."""
    g = report.results_graph
    out = set()
    for r in g.subjects(RDF.type, SH.ValidationResult):
        path = g.value(r, SH.resultPath)
        if isinstance(path, BNode):
            path = "^" + g.value(path, SH.inversePath).n3()
        value = g.value(r, SH.value)
        component = str(g.value(r, SH.sourceConstraintComponent)).rsplit("#", 1)[1]
        out.add((g.value(r, SH.focusNode).n3(), path.n3() if isinstance(path, URIRef) else path or "",
                 component, "" if value is None or "Count" in component else value.n3()))
    return out


def ours(report) -> set[tuple]:
    return {(r.focus, r.path, r.component, r.value) for r in report.results}


def hostile(g: Graph) -> Graph:
    """Every kind of violation the shapes know, once or more."""
    g = Graph() + g
    first = {c: sorted(g.subjects(RDF.type, c)) for c in (KG.Paper, KG.Method, KG.Task, KG.CodeRepository,
                                                           KG.Mention, KG.Venue, KG.MethodUsage)}
    method, task, paper, repo = first[KG.Method][0], first[KG.Task][0], first[KG.Paper][0], first[KG.CodeRepository][0]
    mention, venue, usage = first[KG.Mention][0], first[KG.Venue][0], first[KG.MethodUsage][0]
    g.remove((method, SKOS.prefLabel, None))                                       # minCount
    g.add((task, SKOS.prefLabel, Literal("another name")))                          # maxCount
    g.add((first[KG.Task][1], SKOS.altLabel, Literal("")))                          # minLength
    g.add((first[KG.Task][2], RDFS.label, Literal("labelled", lang="en")))          # datatype (a language tag)
    g.remove((repo, KG.url, None))
    g.add((repo, KG.url, URIRef("https://gitlab.com/a/b")))                         # pattern
    g.add((first[KG.CodeRepository][1], KG.url, Literal("https://github.com/a/b")))  # nodeKind, pattern, maxCount
    g.add((paper, KG.addressesTask, method))                                        # class
    g.set((paper, KG.year, Literal(99, datatype=XSD.integer)))                      # minInclusive
    g.set((venue, KG.year, Literal("20x5", datatype=XSD.integer)))                  # ill-typed
    g.set((mention, KG.endOffset, Literal(0, datatype=XSD.integer)))                # the SPARQL constraint
    g.set((first[KG.Mention][1], KG.role, Literal("invented")))                     # in
    g.set((first[KG.Mention][2], KG.startOffset, Literal(-3, datatype=XSD.integer)))
    g.remove((None, KG.hasMention, first[KG.Mention][3]))                           # inverse path minCount
    g.remove((first[KG.Mention][4], KG.inSentence, None))                           # neither sentence nor field
    g.add((first[KG.Mention][5], KG.inField, Literal("abstract")))                  # both
    sentence = g.value(first[KG.Mention][6], KG.inSentence)
    g.set((sentence, KG.inField, Literal("body")))                                  # a sentence's field
    n = g.value(task, KG.paperCount).toPython()
    g.set((task, KG.paperCount, Literal(n + 1, datatype=XSD.integer)))               # a precomputed count
    g.set((usage, KG.paperCount, Literal(0, datatype=XSD.integer)))                  # minInclusive, a usage's count
    return g


def test_every_constraint_of_the_shapes_compiles():
    checks = compile_shapes(load_shapes())
    kinds = {c.component for c in checks}
    assert {"MinCountConstraintComponent", "MaxCountConstraintComponent", "DatatypeConstraintComponent",
            "ClassConstraintComponent", "PatternConstraintComponent", "InConstraintComponent",
            "SPARQLConstraintComponent"} <= kinds
    bad = load_shapes()
    shape = next(bad.subjects(RDF.type, SH.NodeShape))
    prop = BNode()
    bad.add((shape, SH.property, prop))
    bad.add((prop, SH.path, RDFS.label))
    bad.add((prop, SH.uniqueLang, Literal(True)))
    with pytest.raises(NotImplementedError, match="uniqueLang"):  # refused, never skipped
        compile_shapes(bad)


def test_the_sample_build_conforms_for_both(built):
    assert validate_path(built).conforms and validate_path(built / "graph.nt.gz").conforms


@pytest.mark.slow
def test_the_same_violations_as_pyshacl_on_a_hostile_graph(built):
    g = hostile(Graph().parse(data=rdf_text(built / "graph.nt.gz"), format="nt"))
    fast, slow = validate_graph(g), validate_graph(g, engine="pyshacl")
    assert not fast.conforms and ours(fast) == pyshacl_results(slow)
    assert fast.violations == slow.violations >= 15
    components = {r.component for r in fast.results}
    assert {"MinInclusiveConstraintComponent", "NodeKindConstraintComponent", "MinLengthConstraintComponent"} <= components


def test_kg_validate_reports_each_violation(built, tmp_path, capsys):
    bad = tmp_path / "bad.nt"
    hostile(Graph().parse(data=rdf_text(built / "graph.nt.gz"), format="nt")).serialize(bad, format="nt")
    assert main(["validate", "-s", str(bad)]) == 1
    out = capsys.readouterr()
    assert "violation" in out.err and "prefLabel" in out.out and "paperCount differs" in out.out


@pytest.mark.slow
def test_both_engines_agree_on_graphs_of_any_text():
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from kg.extract import extract_records
    from kg.model import Record
    from kg.rdf.serialize import to_ntriples
    from kg.resolve.entities import resolve
    from kg.resolve.graph import build_graph

    text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=80)

    @settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(abstract=text, name=text)
    def check(abstract, name):
        recs = [Record(doc="d", abstract=f"We propose {name} (ABC). {abstract} See https://github.com/a-b/c.d",
                       source="h", index=0, title=name, venue=f"{name} 2025")]
        g = Graph().parse(data=to_ntriples(build_graph(resolve(recs, list(extract_records(recs))))), format="nt")
        fast, slow = validate_graph(g), validate_graph(g, engine="pyshacl")
        assert ours(fast) == pyshacl_results(slow) and fast.conforms
    check()
