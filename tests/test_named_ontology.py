import owlrl
import pytest
from rdflib import Graph, URIRef
from rdflib.namespace import OWL, RDF

from kg import KnowledgeGraph
from kg.cli import main
from kg.named import get_named, list_named
from kg.namespace import KG, ontology_dir
from kg.rdf import to_rdf
from kg.store import open_store, rows, run_query

ERROR = URIRef("http://www.daml.org/2002/03/agents/agent-ont#ErrorMessage")


def test_at_least_eight_named_queries_with_titles():
    named = list_named()
    assert len(named) >= 8
    assert all(q.title and q.description for q in named)


@pytest.mark.parametrize("name,bindings,check", [
    ("methods-for-task", {"task": "semantic segmentation"}, lambda r: "TAROT" in {x["method"] for x in r}),
    ("papers-using-dataset", {"dataset": "ImageNet-1k"}, lambda r: len(r) >= 2),
    ("top-datasets", {}, lambda r: r[0]["papers"] >= r[-1]["papers"]),
    ("top-tasks", {}, lambda r: r and r[0]["papers"] >= 2),
    ("proposed-methods-with-code", {}, lambda r: {"TAROT", "FSL-Net"} <= {x["method"] for x in r}),
    ("aliases", {"name": "RATE"}, lambda r: "Rewrite-based Attribute Treatment Estimator" in {x["alias"] for x in r}),
    ("evidence", {"name": "ImageNet-1k"}, lambda r: all("ImageNet" in x["sentence"] for x in r) and r),
    ("venue-statistics", {}, lambda r: sum(x["papers"] for x in r) == 68),
    ("datasets-for-method", {"method": "LAuReL"}, lambda r: {"ImageNet-1k"} <= {x["dataset"] for x in r}),
])
def test_named_query_answers(built, name, bindings, check):
    result = rows(run_query(open_store(built), get_named(name).text, bindings))
    assert check(result), result


def test_papers_sharing_tasks_binds_an_iri(built, sample_kg):
    paper = next(p for p in sample_kg.papers() if "TAROT" in p.name)
    iri = URIRef(sample_kg.base + paper.id)
    result = rows(run_query(open_store(built), get_named("papers-sharing-tasks").text, {"paper": iri}))
    assert result and all(r["paper"] == str(iri) and r["other"] != str(iri) for r in result)


def test_cli_named_query_and_list(built, capsys):
    assert main(["query", "--list"]) == 0
    assert "methods-for-task" in capsys.readouterr().out
    assert main(["query", "--name", "aliases", "--bind", "name=FSL-Net", "--store", str(built), "-f", "csv"]) == 0
    assert "Feature Shift Localization Network" in capsys.readouterr().out
    assert main(["query", "--name", "aliases", "--bind", "nope=1", "--store", str(built)]) == 2
    assert main(["query", "--name", "no-such-query", "--store", str(built)]) == 2


def test_owl_rl_closure_of_ontology_and_data_is_consistent(sample_kg):
    small = KnowledgeGraph.from_records([
        {"id": "a", "abstract": "We propose FooNet for image classification on CIFAR-10. Code: https://github.com/x/foonet",
         "venue": "ICML 2025"}])
    g = Graph().parse(ontology_dir() / "kg.ttl") + to_rdf(small.nx)
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(g)
    assert list(g.subjects(RDF.type, ERROR)) == []
    assert list(g.subjects(RDF.type, OWL.Nothing)) == []
    # the closure does reason: a proposed method is also a kg:hasMethod / LPWC hasMethod
    assert any(g.triples((None, URIRef("https://linkedpaperswithcode.com/property/hasMethod"), None)))
    # and it would see an inconsistency: a paper that is also a method
    bad = Graph().parse(ontology_dir() / "kg.ttl")
    bad.add((URIRef("urn:x"), RDF.type, KG.Paper))
    bad.add((URIRef("urn:x"), RDF.type, KG.Method))
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(bad)
    assert list(bad.subjects(RDF.type, ERROR))


def test_precomputed_rankings_equal_counting_in_sparql(built):
    # top-tasks / top-datasets / venue-statistics read build-time counts; the same
    # figures counted with GROUP BY over the store must agree.
    from kg.named import get_named
    from kg.store import open_store, rows, run_query

    store = open_store(built)
    q = """PREFIX kg: <https://w3id.org/abstract-kg/ontology#> PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
           SELECT ?name (COUNT(DISTINCT ?p) AS ?papers) WHERE { ?p kg:%s ?e . ?e skos:prefLabel ?name }
           GROUP BY ?name ORDER BY DESC(?papers) ?name LIMIT 20"""
    for name, rel, col in (("top-tasks", "addressesTask", "task"), ("top-datasets", "usesDataset", "dataset")):
        named = [(r[col], r["papers"]) for r in rows(run_query(store, get_named(name).text))]
        counted = [(r["name"], r["papers"]) for r in rows(run_query(store, q % rel))]
        assert named == counted and len(named) >= 5
    venues = rows(run_query(store, get_named("venue-statistics").text))
    q = """PREFIX kg: <https://w3id.org/abstract-kg/ontology#> PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
           SELECT ?venue (COUNT(DISTINCT ?p) AS ?n) (COUNT(DISTINCT ?t) AS ?tasks) (COUNT(DISTINCT ?r) AS ?code)
           WHERE { ?p kg:publishedIn ?v . ?v rdfs:label ?venue .
                   OPTIONAL { ?p kg:addressesTask ?t } OPTIONAL { ?p kg:hasCode ?r } } GROUP BY ?venue ORDER BY ?venue"""
    counted = rows(run_query(store, q))
    assert [(v["venue"], v["papers"], v["tasks"]) for v in venues] == [(c["venue"], c["n"], c["tasks"]) for c in counted]
    assert all(v["withCode"] <= v["papers"] for v in venues) and sum(v["withCode"] for v in venues) >= 1


# The plain forms of two named queries; the named ones count first and look labels
# up after (Oxigraph joins all labels otherwise), and must give the same rows.
_PLAIN = {
    "methods-for-task": ("task", "Task", """PREFIX kg: <https://w3id.org/abstract-kg/ontology#>
        PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
        SELECT ?task ?method (COUNT(DISTINCT ?paper) AS ?papers) WHERE {
          ?t a kg:Task ; skos:prefLabel|skos:altLabel ?task . ?paper kg:addressesTask ?t .
          { ?paper kg:proposes ?m } UNION { ?paper kg:usesMethod ?m } ?m skos:prefLabel ?method }
        GROUP BY ?task ?method ORDER BY DESC(?papers) ?method"""),
    "datasets-for-method": ("method", "Method", """PREFIX kg: <https://w3id.org/abstract-kg/ontology#>
        PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
        SELECT ?method ?dataset (COUNT(DISTINCT ?p) AS ?papers) WHERE {
          ?m a kg:Method ; skos:prefLabel|skos:altLabel ?method .
          ?p kg:hasMethod|kg:proposes|kg:usesMethod ?m ; kg:usesDataset ?d . ?d skos:prefLabel ?dataset }
        GROUP BY ?method ?dataset ORDER BY DESC(?papers) ?dataset"""),
}


@pytest.mark.parametrize("name", sorted(_PLAIN))
def test_rewritten_named_queries_equal_their_plain_form(built, name):
    param, cls, plain = _PLAIN[name]
    store = open_store(built)
    names = [r["n"] for r in rows(run_query(store, "PREFIX kg: <https://w3id.org/abstract-kg/ontology#> "
                                                   "PREFIX skos: <http://www.w3.org/2004/02/skos/core#> "
                                                   f"SELECT DISTINCT ?n WHERE {{ ?e a kg:{cls} ; skos:prefLabel ?n }}"))]
    nonempty = 0
    for value in names:
        named = rows(run_query(store, get_named(name).text, {param: value}))
        expected = rows(run_query(store, plain, {param: value}))
        assert [{k: r[k] for k in expected[0]} for r in named] == expected if expected else not named, value
        nonempty += bool(expected)
    assert nonempty >= 5
