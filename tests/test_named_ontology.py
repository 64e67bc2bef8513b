import networkx as nx
import owlrl
import pytest
from rdflib import Graph, URIRef
from rdflib.namespace import OWL, RDF

from kg import KnowledgeGraph
from kg.cli import main
from kg.rdf.named import get_named, list_named
from kg.rdf.namespace import KG, ontology_dir
from kg.rdf.serialize import _nt, to_rdf
from kg.rdf.statements import usage_statements, usage_table
from kg.rdf.store import open_store, rows, run_query

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


def test_a_paper_parameter_takes_every_form_a_user_has(built, sample_kg, capsys):
    paper = next(p for p in sample_kg.papers() if "TAROT" in p.name)
    doc_id = sample_kg.nx.nodes[paper.id]["docs"][0]
    outputs = []
    for form in (f"<{sample_kg.base}{paper.id}>", f"res:{paper.id}", paper.id, doc_id, paper.name.upper()):
        assert main(["query", "--name", "papers-sharing-tasks", "--bind", f"paper={form}", "--store", str(built),
                     "--format", "csv"]) == 0, form
        outputs.append(capsys.readouterr().out)
    assert len(set(outputs)) == 1 and len(outputs[0].splitlines()) > 1
    assert main(["query", "--name", "papers-sharing-tasks", "--bind", "paper=nope", "--store", str(built)]) == 2
    err = capsys.readouterr().err
    assert "no paper 'nope'" in err and "record id" in err


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
    from kg.rdf.named import get_named
    from kg.rdf.store import open_store, rows, run_query

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


# The plain forms of named queries rewritten for Oxigraph (count first and look labels
# up after; sort on computed keys; pick the rows before reading their details). The
# named ones must give the same rows, in the same order.
_P = """PREFIX kg: <https://w3id.org/abstract-kg/ontology#> PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
        PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
"""
_PLAIN = {
    "methods-for-task": ("task", "Task", _P + """SELECT ?task ?method ?papers WHERE {
          { SELECT ?task ?m (COUNT(DISTINCT ?paper) AS ?papers) WHERE {
              ?t a kg:Task ; skos:prefLabel|skos:altLabel ?task . ?paper kg:addressesTask ?t .
              { ?paper kg:proposes ?m } UNION { ?paper kg:usesMethod ?m } }
            GROUP BY ?task ?m ORDER BY DESC(?papers) ?m LIMIT 100 }
          ?m skos:prefLabel ?method }
        ORDER BY DESC(?papers) ?method"""),
    "top-tasks": (None, None, _P + """SELECT ?task ?papers WHERE { ?e a kg:Task ; kg:paperCount ?papers ; skos:prefLabel ?task }
        ORDER BY DESC(?papers) ?task LIMIT 20"""),
    "top-datasets": (None, None, _P + """SELECT ?dataset ?papers WHERE {
          ?e a kg:Dataset ; kg:paperCount ?papers ; skos:prefLabel ?dataset }
        ORDER BY DESC(?papers) ?dataset LIMIT 20"""),
    "datasets-for-method": ("method", "Method", _P + """SELECT ?method ?dataset ?papers WHERE {
          { SELECT ?method ?d (COUNT(DISTINCT ?p) AS ?papers) WHERE {
              ?m a kg:Method ; skos:prefLabel|skos:altLabel ?method .
              ?p kg:hasMethod|kg:proposes|kg:usesMethod ?m ; kg:usesDataset ?d }
            GROUP BY ?method ?d ORDER BY DESC(?papers) ?d LIMIT 100 }
          ?d skos:prefLabel ?dataset }
        ORDER BY DESC(?papers) ?dataset"""),
    "papers-using-dataset": ("dataset", "Dataset", _P + """SELECT ?dataset ?paper ?venue WHERE {
          ?d a kg:Dataset ; skos:prefLabel|skos:altLabel ?dataset .
          ?p kg:usesDataset ?d ; rdfs:label ?paper .
          OPTIONAL { ?p kg:publishedIn ?v . ?v rdfs:label ?venue } }
        ORDER BY LCASE(?paper) ?paper"""),
    "evidence": ("name", "Method", _P + """SELECT ?name ?relation ?span ?sentence ?extractor WHERE {
          ?e skos:prefLabel|skos:altLabel ?name .
          ?m kg:mentionOf ?e ; rdfs:label ?span ; kg:supports ?r ; kg:extractor ?extractor .
          OPTIONAL { ?m kg:inSentence/rdfs:label ?sentence }
          BIND (STRAFTER(STR(?r), "#") AS ?relation) }
        ORDER BY ?m ?relation LIMIT 200"""),
    "proposed-methods-with-code": (None, None, _P + """SELECT ?method ?repository WHERE {
          ?p kg:proposes ?m ; kg:hasCode ?r . ?m skos:prefLabel ?method . ?r kg:url ?repository }
        ORDER BY LCASE(?method) ?method ?repository"""),
}


def _same_rows(store, name, value=None):
    param, cls, plain = _PLAIN[name]
    binds = {param: value} if param else {}
    named = rows(run_query(store, get_named(name).text, binds))
    expected = rows(run_query(store, plain, binds))
    assert [{k: r[k] for k in expected[0]} for r in named] == expected if expected else not named, (name, value)
    return len(expected)


@pytest.mark.parametrize("name", sorted(_PLAIN))
def test_rewritten_named_queries_equal_their_plain_form(built, name):
    param, cls, plain = _PLAIN[name]
    store = open_store(built)
    if param is None:
        assert _same_rows(store, name) >= 2
        return
    names = [r["n"] for r in rows(run_query(store, "PREFIX kg: <https://w3id.org/abstract-kg/ontology#> "
                                                   "PREFIX skos: <http://www.w3.org/2004/02/skos/core#> "
                                                   f"SELECT DISTINCT ?n WHERE {{ ?e a kg:{cls} ; skos:prefLabel ?n }}"))]
    assert sum(bool(_same_rows(store, name, value)) for value in names) >= 5


def _crowded_store():
    """A real Oxigraph store where every cut of the named queries bites: 400 papers on one
    task, 130 methods and 140 datasets with tied paper counts (the datasets' and 30 tasks'
    build-time counts tied at the top-20 cut too), 400 mentions of one method (some backing
    two statements), titles whose case-insensitive order differs from the plain one, papers
    without a venue."""
    import pyoxigraph as ox

    R, O = "https://w3id.org/abstract-kg/resource/", "https://w3id.org/abstract-kg/ontology#"
    S, L = "http://www.w3.org/2004/02/skos/core#prefLabel", "http://www.w3.org/2000/01/rdf-schema#label"
    A = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
    lines = []

    def add(s, p, o, lit=False):
        if isinstance(o, int):  # a count, as the build types it
            o = ox.Literal(str(o), datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer"))
        else:
            o = ox.Literal(o) if lit else ox.NamedNode(o)
        lines.append(f"<{s}> <{p}> {o} .")

    add(R + "task/image-classification", A, O + "Task")
    add(R + "task/image-classification", S, "image classification", True)
    add(R + "method/adam", A, O + "Method")
    add(R + "method/adam", S, "Adam", True)
    for i in range(130):
        add(R + f"method/m-{i:03d}", A, O + "Method")
        add(R + f"method/m-{i:03d}", S, f"{'aB'[i % 2]}ethod {(i * 37) % 130}", True)
    for k in range(140):
        add(R + f"dataset/d-{k:03d}", A, O + "Dataset")
        add(R + f"dataset/d-{k:03d}", S, f"{'Dx'[k % 2]}ata {(k * 11) % 140}", True)
    for i in range(30):  # tasks only counted (no papers): counts 1-4, ties at the cut of 20
        add(R + f"task/t-{i:02d}", A, O + "Task")
        add(R + f"task/t-{i:02d}", S, f"{'tT'[i % 2]}ask {(i * 7) % 30}", True)
        add(R + f"task/t-{i:02d}", O + "paperCount", (i * 7) % 4 + 1)
    for k in range(140):  # the datasets' counts, as a build counts them: papers using each
        add(R + f"dataset/d-{k:03d}", O + "paperCount", sum((j * 3) % 140 == k for j in range(400)))
    for v in range(3):
        add(R + f"venue/v{v}", L, f"Venue {v}", True)
    for j in range(400):
        p = R + f"paper/p{j:03d}"
        add(p, A, O + "Paper")
        add(p, L, f"{'aBA'[j % 3]}title {(j * 7) % 400:03d}", True)
        add(p, O + "addressesTask", R + "task/image-classification")
        add(p, O + ("proposes" if j % 2 else "usesMethod"), R + f"method/m-{j % 130:03d}")
        add(p, O + "usesMethod", R + "method/adam")
        add(p, O + "usesDataset", R + f"dataset/d-{(j * 3) % 140:03d}")
        if j % 5:
            add(p, O + "publishedIn", R + f"venue/v{j % 3}")
        if j % 3 == 0:
            add(p, O + "hasCode", R + f"repository/github/r{j}")
            add(R + f"repository/github/r{j}", O + "url", f"https://github.com/x/r{j}", True)
        m = R + f"mention/{(j * 7919) % 65536:04x}/abstract-{j}-{j + 4}-method"
        add(m, O + "mentionOf", R + "method/adam")
        add(m, L, "Adam", True)
        add(m, O + "extractor", "kg_gazetteer", True)
        add(m, O + "supports", O + "usesMethod")
        if j % 4 == 0:
            add(m, O + "supports", O + "proposes")
        if j % 6:
            add(m, O + "inSentence", R + f"sentence/p{j:03d}/abstract-{j % 4}")
            add(R + f"sentence/p{j:03d}/abstract-{j % 4}", L, f"Sentence {j} with Adam.", True)
    # the method usages of the task, as a build writes them from the same links
    G = nx.MultiDiGraph()
    G.add_node("task/image-classification", type="Task", name="image classification")
    G.add_node("method/adam", type="Method", name="Adam")
    for i in range(130):
        G.add_node(f"method/m-{i:03d}", type="Method", name=f"{'aB'[i % 2]}ethod {(i * 37) % 130}")
    for j in range(400):
        G.add_node(f"paper/p{j:03d}", type="Paper")
        G.add_edge(f"paper/p{j:03d}", "task/image-classification", key="addressesTask")
        G.add_edge(f"paper/p{j:03d}", f"method/m-{j % 130:03d}", key="proposes" if j % 2 else "usesMethod")
        G.add_edge(f"paper/p{j:03d}", "method/adam", key="usesMethod")
    task = "task/image-classification"
    lines += [f"<{s}> <{p}> {_nt(o)} ." for s, po in usage_statements(G, task, usage_table(G)[task], R) for p, o in po]
    store = ox.Store()
    store.load("\n".join(lines).encode(), ox.RdfFormat.N_TRIPLES)
    return store


@pytest.mark.parametrize("name,value,n", [
    ("methods-for-task", "image classification", 100), ("datasets-for-method", "Adam", 100),
    ("evidence", "Adam", 200), ("papers-using-dataset", "Data 0", 3), ("proposed-methods-with-code", None, 67),
    ("top-tasks", None, 20), ("top-datasets", None, 20)])
def test_rewritten_named_queries_where_their_cuts_bite(name, value, n):
    assert _same_rows(_crowded_store(), name, value) == n


def test_methods_for_task_says_proposed_when_a_paper_on_the_task_proposes_the_method(built):
    store = open_store(built)
    proposing = _P + """ASK { ?t a kg:Task ; skos:prefLabel ?task . ?m skos:prefLabel ?method .
                              ?p kg:addressesTask ?t ; kg:proposes ?m }"""
    tasks = [r["n"] for r in rows(run_query(store, _P + "SELECT DISTINCT ?n WHERE { ?t a kg:Task ; skos:prefLabel ?n }"))]
    seen = set()
    for task in tasks:
        for r in rows(run_query(store, get_named("methods-for-task").text, {"task": task})):
            expected = "proposed" if run_query(store, proposing, {"task": task, "method": r["method"]}) else "used"
            assert r["relation"] == expected, (task, r)
            seen.add(expected)
    assert seen == {"proposed", "used"}
