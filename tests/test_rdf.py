import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pyoxigraph as ox
from rdflib import Graph, URIRef
from rdflib.namespace import RDF

from tests.conftest import rdf_text
from kg.rdf.namespace import KG, ontology_dir
from kg.rdf.serialize import to_rdf

ONTO = Graph().parse(ontology_dir() / "kg.ttl", format="turtle")
KG_NS = str(KG._NS)


def test_every_namespace_term_is_declared_in_the_ontology():
    declared = {s for s in ONTO.subjects(RDF.type, None) if str(s).startswith(KG_NS)}
    terms = {KG[name] for name in KG.__annotations__}
    assert terms and terms <= declared


def test_every_kg_term_used_in_a_built_graph_is_declared(sample_kg):
    declared = {str(s) for s in ONTO.subjects(RDF.type, None)}
    used = {str(t) for triple in sample_kg.rdf for t in triple if isinstance(t, URIRef) and str(t).startswith(KG_NS)}
    assert used and used <= declared


def test_every_output_parses_with_rdflib_and_pyoxigraph(built):
    counts, triples = {}, {}
    for name, fmt, oxfmt in [("graph.ttl.gz", "turtle", ox.RdfFormat.TURTLE),
                             ("graph.nt.gz", "nt", ox.RdfFormat.N_TRIPLES),
                             ("graph.jsonld.gz", "json-ld", ox.RdfFormat.JSON_LD)]:
        with gzip.open(built / name) as f:  # each file read as a stream of its gzip members
            g = Graph().parse(f, format=fmt)
        store = ox.Store()
        store.load(rdf_text(built / name), format=oxfmt)
        counts[name] = (len(g), len(store))
        triples[name] = set(g)
    assert len({c for pair in counts.values() for c in pair}) == 1, counts
    assert counts["graph.nt.gz"][0] > 1000
    # the same triples in every format (no blank nodes, so set equality is isomorphism)
    assert triples["graph.ttl.gz"] == triples["graph.nt.gz"] == triples["graph.jsonld.gz"]


def test_counts_in_the_built_graph(built):
    g = Graph().parse(data=rdf_text(built / "graph.nt.gz"), format="nt")
    assert len(set(g.subjects(RDF.type, KG.Paper))) == 68
    assert len(set(g.subjects(RDF.type, KG.CodeRepository))) == 7
    stats = json.loads((built / "stats.json").read_text())
    assert stats["nodes"]["Paper"] == 68 and stats["records"] == 76


def test_mentions_back_the_statements(sample_kg):
    rows = sample_kg.query("""
        SELECT ?sentence WHERE {
          ?p kg:hasCode ?r . ?r kg:url <https://github.com/vita-epfl/TAROT> .
          ?p kg:hasMention ?m . ?m kg:mentionOf ?r ; kg:inSentence ?s . ?s rdfs:label ?sentence }""")
    assert rows and "github.com/vita-epfl/TAROT" in rows[0]["sentence"]


def test_each_sentence_is_written_once_for_its_mentions(sample_kg):
    per_text = sample_kg.query("""
        SELECT ?p ?text (COUNT(DISTINCT ?s) AS ?nodes) (COUNT(DISTINCT ?m) AS ?mentions) WHERE {
          ?p kg:hasMention ?m . ?m kg:inSentence ?s . ?s rdfs:label ?text ; kg:inField ?f }
        GROUP BY ?p ?text""")
    assert per_text and all(r["nodes"] == 1 for r in per_text)
    assert any(r["mentions"] > 1 for r in per_text)  # shared by several mentions
    assert sample_kg.query("ASK { ?m a kg:Mention FILTER NOT EXISTS { ?m kg:inSentence ?s } }") is False


def test_two_builds_give_byte_identical_files(tmp_path):
    """Two processes with different hash seeds write the same bytes."""
    outs = []
    for seed in ("1", "2"):
        out = tmp_path / f"o{seed}"
        env = dict(os.environ, PYTHONHASHSEED=seed)
        subprocess.run([sys.executable, "-m", "kg.cli", "build", "--out", str(out), "-q"],
                       check=True, env=env, capture_output=True)
        outs.append(out)
    for name in ("graph.nt.gz", "graph.json.gz", "extractions.jsonl.gz", "stats.json", "graph.html", "index.html"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name


def test_base_iri_is_configurable(sample_kg):
    g = to_rdf(sample_kg.nx, base="http://example.org/kg/")
    subjects = {str(s) for s in g.subjects(RDF.type, KG.Paper)}
    assert all(s.startswith("http://example.org/kg/paper/") for s in subjects)


def test_ontology_aligns_with_schema_and_lpwc():
    q = """SELECT ?c ?super ?eq WHERE { ?c a owl:Class ; rdfs:subClassOf ?super .
           OPTIONAL { ?c owl:equivalentClass ?eq } FILTER(STRSTARTS(STR(?c), STR(kg:))) }"""
    rows = {str(r.c).split("#")[1]: (str(r.super), str(r.eq) if r.eq else None)
            for r in ONTO.query(q, initNs={"kg": KG})}
    assert rows["Paper"] == ("https://schema.org/ScholarlyArticle", "https://linkedpaperswithcode.com/class/paper")
    assert rows["Dataset"][0] == "https://schema.org/Dataset"
    assert rows["CodeRepository"][0] == "https://schema.org/SoftwareSourceCode"
    assert Path(ontology_dir() / "shapes.ttl").is_file()


def test_jsonld_reads_as_the_ntriples_say_with_typed_terms(built):
    """pyld (a JSON-LD 1.1 processor) turns graph.jsonld into exactly graph.nt's triples,
    while the JSON itself reads naturally: counts are numbers, links are IRIs."""
    from pyld import jsonld

    doc = json.loads(rdf_text(built / "graph.jsonld.gz"))
    quads = jsonld.to_rdf(doc, {"format": "application/n-quads"})
    assert set(quads.splitlines()) == set(rdf_text(built / "graph.nt.gz").splitlines())
    venue = next(n for n in doc["@graph"] if "Venue" in n["@type"])
    assert isinstance(venue["paperCount"], int) and isinstance(venue["year"], int)
    paper = next(n for n in doc["@graph"] if "Paper" in n["@type"])
    assert paper["publishedIn"].startswith("https://w3id.org/abstract-kg/resource/venue/")
    assert "schema:ScholarlyArticle" in paper["@type"]
