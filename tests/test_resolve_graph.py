from kg.extract import extract_records
from kg.resolve.graph import PREDICATES, build_graph, nodes_of_type
from kg.ingest import read_records
from kg.resolve.entities import resolve


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


def _entities(*papers):
    """The resolved entities of papers given as lists of (type, name, aliases)."""
    from kg.model import DocEntity, Extraction
    from kg.resolve.entities import clusters

    paper_ex = {f"paper/{i}": Extraction(f"d{i}", tuple(DocEntity(t, n, tuple(a)) for t, n, a in ents))
                for i, ents in enumerate(papers)}
    sig_root, entities = clusters(paper_ex)
    return {sig[1]: entities[root] for sig, root in sig_root.items()}, list(entities.values())


def test_bare_acronym_joins_the_expansion_nearly_every_paper_gives():
    mdp = ("Method", "Markov decision processes", ["MDPs"])
    other = ("Method", "minimum description principle", ["MDP"])
    by_name, ents = _entities([mdp], [mdp], [mdp], [mdp], [mdp], [other], [("Method", "MDPs", [])])
    assert by_name["MDPs"] is by_name["Markov decision processes"]
    assert by_name["minimum description principle"] is not by_name["MDPs"]
    assert by_name["MDPs"].name == "Markov decision processes"


def test_ambiguous_acronym_entities_have_distinct_labels_and_ids():
    amp1 = ("Method", "AMP", ["approximate message passing"])
    amp2 = ("Method", "AMP", ["adaptive mixed precision"])
    by_name, ents = _entities([amp1], [amp1], [amp1], [amp2], [amp2], [amp2], [("Method", "AMP", [])])
    assert sorted(e.name for e in ents) == ["AMP", "adaptive mixed precision", "approximate message passing"]
    # two papers' acronym keeps its spelling, told apart by its expansion
    by_name, ents = _entities([amp1], [amp2], [("Method", "AMP", [])])
    assert sorted(e.name for e in ents) == ["AMP", "AMP (adaptive mixed precision)",
                                            "AMP (approximate message passing)"]
    # datasets keep the name their papers use, with the expansion where it is ambiguous
    sun1 = ("Dataset", "SUN", ["Scene Understanding"])
    sun2 = ("Dataset", "SUN", ["Stanford University Nucleus"])
    by_name, ents = _entities([sun1], [sun1], [sun2], [sun2], [("Dataset", "SUN", [])])
    assert sorted(e.name for e in ents) == ["SUN", "SUN (Scene Understanding)", "SUN (Stanford University Nucleus)"]
    assert len({e.id for e in ents}) == 3


def test_method_is_labelled_by_its_expansion_unless_papers_use_the_acronym():
    gp = ("Method", "GPs", ["Gaussian processes"])
    bert = ("Method", "BERT", ["Bidirectional Encoder Representations from Transformers"])
    by_name, _ = _entities([gp], [("Method", "Gaussian process", [])], [gp], [bert], [("Method", "BERT", [])],
                           [("Method", "BERT", [])], [("Method", "BERT", [])])
    assert by_name["GPs"].name == "Gaussian processes" and by_name["Gaussian process"] is by_name["GPs"]
    assert by_name["BERT"].name == "BERT"


def test_a_short_form_a_paper_uses_for_its_task_links_no_other_papers():
    # "classification" is what each paper calls its own image or text classification
    image = ("Task", "classification", ["image classification"])
    text = ("Task", "classification", ["text classification", "text classification tasks"])
    _, ents = _entities([image], [text], [("Task", "image classification", [])], [("Task", "classification", [])])
    by_label = {e.name: e for e in ents}
    assert sorted(by_label) == ["classification", "image classification", "text classification"]
    assert "classification" not in by_label["image classification"].aliases
    # nor does an acronym of the short form ("RL" in a paper about offline RL)
    offline = ("Task", "reinforcement learning", ["RL", "offline RL", "offline reinforcement learning"])
    rl = ("Task", "reinforcement learning", ["RL"])
    _, ents = _entities([offline], [rl], [rl], [("Task", "RL", [])])
    assert sorted(e.name for e in ents) == ["offline RL", "reinforcement learning"]


def test_the_same_abstract_at_two_venues_is_one_paper_published_in_both():
    from kg import KnowledgeGraph

    text = "We propose BiVenueNet for image classification on CIFAR-10."
    kg = KnowledgeGraph.from_records([{"id": "a", "abstract": text, "venue": "ICLR 2025"},
                                      {"id": "b", "abstract": text, "venue": "ICML 2025"}])
    (paper,) = kg.papers()
    venues = {kg.nx.nodes[v]["label"] for _, v, k in kg.nx.out_edges(paper.id, keys=True) if k == "publishedIn"}
    assert venues == {"ICLR 2025", "ICML 2025"}
    assert kg.validate().conforms
    rows = kg.query("SELECT ?v WHERE { ?p kg:publishedIn/rdfs:label ?v } ORDER BY ?v")
    assert [r["v"] for r in rows] == ["ICLR 2025", "ICML 2025"]


def test_aliases_hold_no_capitals_copy_of_a_spelling_and_the_most_used_case():
    from kg.resolve.entities import cluster_entity

    entity, _ = cluster_entity("Method", [
        (["convolutional neural network", "CONVOLUTIONAL NEURAL NETWORKS", "CNN"], 3),
        (["CNNs", "convolutional neural networks"], 2), (["Convolutional Neural Networks"], 1),
        (["MS COCO detector", "MS-COCO DETECTOR"], 1)])
    assert entity.name == "convolutional neural network"
    assert "CONVOLUTIONAL NEURAL NETWORKS" not in entity.aliases
    assert "convolutional neural networks" in entity.aliases  # used twice, against once in title case
    assert "MS COCO detector" in entity.aliases and "MS-COCO DETECTOR" not in entity.aliases
