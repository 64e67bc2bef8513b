"""The Python API against the sample graph, and every export loaded back."""
import csv
import json

import networkx as nx
import pytest

from kg import KnowledgeGraph
from kg.api import AmbiguousName
from kg.cli import main


def test_counts_and_records(sample_kg):
    assert len(sample_kg.papers()) == 68
    assert len(sample_kg.repositories()) == 7
    m = sample_kg.get("FSL-Net")
    assert m.type == "Method" and "Feature Shift Localization Network" in m.aliases
    assert sample_kg.get("feature shift localization network") == m  # aliases, any case
    with pytest.raises(KeyError):
        sample_kg.get("no such thing")


def test_papers_for_and_related_papers(sample_kg):
    papers = sample_kg.papers_for("data attribution")
    assert len(papers) >= 3 and all(p.type == "Paper" for p in papers)
    related = sample_kg.related_papers(papers[0].id, k=5)
    assert related
    mine = set(sample_kg.node(papers[0].id).linked)
    for r in related:
        assert set(r.node.linked) & mine  # it shares an entity
        assert r.shared
    assert [r.score for r in related] == sorted((r.score for r in related), reverse=True)


def test_methods_datasets_top_path_subgraph(sample_kg):
    assert "TAROT" in [r.node.name for r in sample_kg.methods_for_task("semantic segmentation")]
    assert "ImageNet-1k" in [r.node.name for r in sample_kg.datasets_for("LAuReL")]
    top = sample_kg.top("task", n=5)
    assert len(top) == 5 and top[0].score >= top[-1].score and top[0].node.type == "Task"
    path = sample_kg.shortest_path("TAROT", "semantic segmentation")
    assert path[0].name == "TAROT" and path[-1].name == "semantic segmentation"
    sub = sample_kg.subgraph(["TAROT"], depth=1)
    assert "method/tarot" in sub.nx and sub.nx.number_of_nodes() < sample_kg.nx.number_of_nodes()


def test_add_extends_the_graph(sample_kg):
    bigger = sample_kg.add([{"id": "new-1", "abstract": "We propose QuillNet2 for semantic segmentation."}])
    assert len(bigger.papers()) == 69
    assert "QuillNet2" in [m.name for m in bigger.methods()]
    assert len(sample_kg.papers()) == 68  # the original is unchanged


def test_save_load_round_trip_is_exact(sample_kg, tmp_path):
    sample_kg.save(tmp_path / "o")
    back = KnowledgeGraph.load(tmp_path / "o")
    G, H = sample_kg.nx, back.nx
    assert sorted(G.nodes(data=True)) == sorted(H.nodes(data=True))
    assert sorted(G.edges(keys=True, data=True), key=lambda e: e[:3]) == \
        sorted(H.edges(keys=True, data=True), key=lambda e: e[:3])
    assert back.records == sample_kg.records
    assert back.query("SELECT (COUNT(?p) AS ?n) WHERE { ?p a kg:Paper }") == [{"n": 68}]


def test_query_values_and_dataframe(sample_kg):
    rows = sample_kg.query("SELECT ?n ?v WHERE { ?v a kg:Venue ; kg:year ?n }")
    assert {r["n"] for r in rows} == {2025}
    pd = pytest.importorskip("pandas")
    df = sample_kg.query_df("SELECT ?v WHERE { ?v a kg:Venue }")
    assert isinstance(df, pd.DataFrame) and len(df) == 2


@pytest.mark.parametrize("fmt", ["graphml", "gexf", "node-link", "cytoscape", "neo4j"])
def test_exports_load_back(sample_kg, tmp_path, fmt):
    out = tmp_path / ("neo4j" if fmt == "neo4j" else f"g.{fmt}")
    files = sample_kg.export(fmt, out)
    n, m = sample_kg.nx.number_of_nodes(), sample_kg.nx.number_of_edges()
    if fmt == "graphml":
        H = nx.read_graphml(files[0])
        assert (H.number_of_nodes(), H.number_of_edges()) == (n, m)
        assert H.nodes["method/tarot"]["type"] == "Method"
    elif fmt == "gexf":
        H = nx.read_gexf(files[0])
        assert (H.number_of_nodes(), H.number_of_edges()) == (n, m)
    elif fmt == "node-link":
        data = json.loads(files[0].read_text())
        H = nx.node_link_graph(data)  # networkx defaults: edges under "edges"
        assert (H.number_of_nodes(), H.number_of_edges()) == (n, m)
    elif fmt == "cytoscape":
        els = json.loads(files[0].read_text())["elements"]
        assert len(els["nodes"]) == n and len(els["edges"]) == m
        ids = {e["data"]["id"] for e in els["nodes"]}
        assert all(e["data"]["source"] in ids and e["data"]["target"] in ids for e in els["edges"])
    else:
        nodes = list(csv.DictReader(open(files[0], encoding="utf-8")))
        rels = list(csv.DictReader(open(files[1], encoding="utf-8")))
        assert list(nodes[0])[:2] == ["id:ID", ":LABEL"] and list(rels[0])[:3] == [":START_ID", ":END_ID", ":TYPE"]
        assert len(nodes) == n and len(rels) == m
        ids = {r["id:ID"] for r in nodes}
        assert all(r[":START_ID"] in ids and r[":END_ID"] in ids for r in rels)
        assert {r[":TYPE"] for r in rels} >= {"PROPOSES", "USES_METHOD", "ADDRESSES_TASK"}


def test_cli_export(built, tmp_path, capsys):
    assert main(["export", "--format", "graphml", "--store", str(built), "-o", str(tmp_path / "g.graphml")]) == 0
    assert nx.read_graphml(tmp_path / "g.graphml").number_of_nodes() > 100


def test_look_ups_take_a_name_alias_or_id_and_fail_with_close_names(sample_kg):
    by_name = sample_kg.node("Feature Shift Localization Network")
    assert by_name == sample_kg.node("fsl-net") == sample_kg.node(by_name.id)
    with pytest.raises(KeyError, match=r"did you mean .*FSL-Net"):
        sample_kg.node("FSL-Nett")


def test_every_look_up_takes_a_node_an_id_an_iri_or_a_name(sample_kg):
    paper = sample_kg.papers_for("data attribution")[0]
    related = sample_kg.related_papers(paper)
    assert related and related == sample_kg.related_papers(paper.id) == sample_kg.related_papers(sample_kg.base + paper.id)
    tarot, task = sample_kg.node("TAROT"), sample_kg.node("semantic segmentation")
    for ref in (tarot, tarot.id, sample_kg.base + tarot.id, "tarot"):
        assert sample_kg.node(ref) == tarot and sample_kg.get(ref) == tarot
        assert sample_kg.papers_for(ref) == sample_kg.papers_for("TAROT")
        assert sample_kg.datasets_for(ref) == sample_kg.datasets_for("TAROT")
        assert sample_kg.shortest_path(ref, task) == sample_kg.shortest_path("TAROT", task.id)
        assert sorted(sample_kg.subgraph([ref]).nx) == sorted(sample_kg.subgraph(["TAROT"]).nx)
    assert sample_kg.methods_for_task(task) == sample_kg.methods_for_task("semantic segmentation")
    with pytest.raises(TypeError, match="not int"):
        sample_kg.node(3)


def test_a_name_several_nodes_carry_is_an_error_that_lists_them():
    G = nx.MultiDiGraph()
    G.add_node("method/lora", type="Method", label="LoRA", aliases=[])
    G.add_node("task/lora", type="Task", label="lora", aliases=[])
    for n in ("paper/1", "paper/2"):
        G.add_node(n, type="Paper", label="One title")
    kg = KnowledgeGraph(G)
    with pytest.raises(AmbiguousName) as err:
        kg.papers_for("LoRA")
    assert err.value.candidates == [("method/lora", "Method"), ("task/lora", "Task")]
    assert "'LoRA' names 2 nodes: method/lora (Method), task/lora (Task)" in str(err.value)
    with pytest.raises(AmbiguousName, match=r"paper/1 \(Paper\), paper/2 \(Paper\)"):
        kg.related_papers("one title")
    assert kg.node("task/lora").type == "Task" and kg.node(kg.node("paper/2")).id == "paper/2"


def test_reprs_are_one_line_and_notebooks_get_escaped_tables(sample_kg):
    top = sample_kg.top("Task", 5)  # n by position
    assert len(top) == 5 and all(r.node.type == "Task" for r in top)
    for x in (top[0], top[0].node, sample_kg.papers()[0]):
        assert "\n" not in repr(x) and len(repr(x)) < 200
    assert len(repr(sample_kg.papers())) < 200 * 68
    html = top._repr_html_()
    assert html.count("<tr>") == 6 and top[0].node.name in html
    hostile = KnowledgeGraph.from_records([{"id": "x", "abstract": "We propose <b>EvilNet</b> & co for image classification."}])
    assert "<b>" not in hostile.methods()._repr_html_()
    with pytest.raises(TypeError, match="number of results"):
        sample_kg.top("Task", "papers")


def test_a_paper_node_has_its_title_venue_year_and_abstract(sample_kg):
    paper = sample_kg.papers_for("TAROT")[0]
    assert paper.venue in ("ICML 2025", "ICLR 2025") and paper.year == 2025
    assert "TAROT" in paper.abstract and paper.title == ""  # the sample abstracts have no titles


def test_query_results_keep_rdf_terms_and_dataframes_take_every_form(sample_kg):
    from rdflib import Graph, Literal, URIRef

    g = sample_kg.query("CONSTRUCT { ?m skos:prefLabel ?l } WHERE { ?m skos:prefLabel ?l FILTER(?l = 'TAROT') }")
    assert isinstance(g, Graph) and list(g) == [(URIRef(sample_kg.base + "method/tarot"),
                                                  URIRef("http://www.w3.org/2004/02/skos/core#prefLabel"),
                                                  Literal("TAROT"))]
    pytest.importorskip("pandas")
    assert sample_kg.query_df("ASK { ?p a kg:Paper }")["boolean"].tolist() == [True]
    df = sample_kg.query_df("CONSTRUCT { ?v a kg:Venue } WHERE { ?v a kg:Venue }")
    assert list(df.columns) == ["subject", "predicate", "object"] and len(df) == 2
    assert isinstance(df.loc[0, "subject"], URIRef)


def test_a_loaded_build_answers_from_its_store(built):
    kg = KnowledgeGraph.load(built)
    assert kg.query("SELECT (COUNT(?p) AS ?n) WHERE { ?p a schema:ScholarlyArticle }") == [{"n": 68}]
    assert kg.node("TAROT").type == "Method" and len(kg.records) == 76


def _found(kg, name):
    try:
        return kg.node(name)
    except AmbiguousName as exc:
        return exc.candidates
    except KeyError:
        return None


def test_a_loaded_build_finds_nodes_in_its_store_as_the_graph_does(built, sample_kg):
    kg = KnowledgeGraph.load(built)
    G = sample_kg.nx
    forms = sorted({str(x) for _, d in G.nodes(data=True) for x in (d.get("label", ""), *d.get("aliases", ())) if x})
    names = sorted(G) + forms + [f.upper() for f in forms[::5]] + [f.lower() for f in forms[2::5]]
    for name in names + ["no such thing", 'x" } . ?s ?p ?o . { "', "<http://x>"]:
        assert _found(kg, name) == _found(sample_kg, name), name
    assert kg._graph is None  # not one of them read graph.json
    with pytest.raises(KeyError, match="did you mean 'TAROT'"):
        kg.node("TAROTT")


def test_a_loaded_build_ranks_from_its_store_as_the_graph_does(built, sample_kg):
    kg = KnowledgeGraph.load(built)
    G = sample_kg.nx
    entities = [n for n, t in G.nodes(data="type") if t != "Paper"]
    papers = sorted(n for n, t in G.nodes(data="type") if t == "Paper")
    for e in entities:
        assert kg.papers_for(e) == sample_kg.papers_for(e), e
        assert kg.datasets_for(e) == sample_kg.datasets_for(e), e
    for t in (n for n, t in G.nodes(data="type") if t == "Task"):
        assert kg.methods_for_task(t) == sample_kg.methods_for_task(t), t
    for p in papers[::4]:
        assert kg.related_papers(p, k=5) == sample_kg.related_papers(p, k=5), p
    for kind in ("method", "task", "dataset", "repository", "venue", "paper"):
        for by in ("papers", "degree"):
            assert kg.top(kind, 7, by=by) == sample_kg.top(kind, 7, by=by), (kind, by)
    assert kg._graph is None  # not one of them read graph.json


def test_inference_and_validation_from_python(sample_kg):
    from rdflib.namespace import PROV, RDF

    assert sample_kg.validate().conforms
    g = sample_kg.infer("owl-rl")
    assert set(g.subjects(RDF.type, PROV.Entity)) >= set(sample_kg.rdf.subjects(RDF.type, PROV.Entity))
    with pytest.raises(ValueError, match="semantics"):
        sample_kg.infer("magic")


def test_a_build_without_jsonld_is_loaded_with_its_own_base(tmp_path):
    kg = KnowledgeGraph.from_records([{"id": "a", "abstract": "We propose ZetaNet for image classification."}],
                                     base="https://example.org/kg/")
    kg.save(tmp_path / "o", rdf=("nt",))
    assert not (tmp_path / "o" / "context.jsonld").exists()
    back = KnowledgeGraph.load(tmp_path / "o")
    assert back.base == "https://example.org/kg/"
    assert back.node("ZetaNet").id == "method/zetanet"


def test_a_build_from_before_the_compressed_files_still_loads(sample_kg, tmp_path):
    import gzip

    out = tmp_path / "o"
    sample_kg.save(out)
    for name in ("graph.json.gz", "records.jsonl.gz"):  # as a build before them wrote the files
        (out / name.removesuffix(".gz")).write_bytes(gzip.decompress((out / name).read_bytes()))
        (out / name).unlink()
    kg = KnowledgeGraph.load(out)
    assert sorted(kg.nx.edges(keys=True)) == sorted(sample_kg.nx.edges(keys=True))
    assert kg.records == sample_kg.records
