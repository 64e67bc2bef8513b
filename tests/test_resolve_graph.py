from kg.extract import extract_records
from kg.graph import PREDICATES, build_graph, nodes_of_type
from kg.ingest import read_records
from kg.resolve import resolve


def graph_of(*abstracts, **kw):
    recs = read_records([{"id": f"d{i}", "abstract": a, **kw} for i, a in enumerate(abstracts)])
    return build_graph(resolve(recs, list(extract_records(recs))))


def label_set(G, type_):
    return {G.nodes[n]["label"] for n in nodes_of_type(G, type_)}


def test_same_abstract_twice_is_one_paper_keeping_both_ids():
    G = graph_of("We propose FooNet for image classification.", "We  propose FooNet for image classification.")
    (p,) = nodes_of_type(G, "Paper")
    assert G.nodes[p]["docs"] == ["d0", "d1"]


def test_acronym_and_expansion_merge_across_papers():
    G = graph_of(
        "We propose the Gated Spectral Unit (GSU) for audio tagging.",
        "We compare against GSU and other baselines on audio tagging.",
        "The gated spectral units of prior work are slow.",
    )
    methods = nodes_of_type(G, "Method")
    assert len(methods) == 1
    (m,) = methods
    assert G.in_degree(m) == 2  # proposed by d0, used by d1 (d2 has no name-like cue)
    preds = sorted(k for _, _, k in G.in_edges(m, keys=True))
    assert preds == ["proposes", "usesMethod"]


def test_ambiguous_acronym_is_not_merged():
    G = graph_of(
        "We propose the Sparse Sign Transform (SST) for hashing.",
        "We propose the Structured State Tracker (SST) for dialogue state tracking.",
    )
    assert label_set(G, "Method") == {"SST"}  or len(nodes_of_type(G, "Method")) == 2
    assert len(nodes_of_type(G, "Method")) == 2


def test_case_and_plural_variants_are_one_task():
    G = graph_of("We study Image Classification.", "Results on image classifications improve.")
    assert len(nodes_of_type(G, "Task")) == 1


def test_nodes_typed_and_edges_named_by_ontology_property(sample_kg):
    G = sample_kg.nx
    for n, d in G.nodes(data=True):
        assert d["type"] in {"Paper", "Method", "Task", "Dataset", "CodeRepository", "Venue"}
        assert d["label"]
    for u, v, k, d in G.edges(keys=True, data=True):
        assert k in PREDICATES and d["predicate"] == k
    assert len(nodes_of_type(G, "Paper")) == 68
    assert len(nodes_of_type(G, "CodeRepository")) == 7


def test_derived_relations_come_from_proposing_papers():
    G = graph_of("We propose BlurNet2 for image deblurring on the GoPro dataset.")
    (m,) = nodes_of_type(G, "Method")
    rels = {(k, G.nodes[v]["label"]) for _, v, k in G.out_edges(m, keys=True)}
    assert ("appliedTo", "image deblurring") in rels


def test_code_field_of_records_becomes_repository():
    G = graph_of("A study of losses.", code="https://github.com/lab/losses.git")
    (r,) = nodes_of_type(G, "CodeRepository")
    assert G.nodes[r]["url"] == "https://github.com/lab/losses"
