"""Exports that third-party tools take as they are: Gephi (GraphML ids), networkx
(node-link), Cytoscape.js (selectors), and files other users can read."""
import json
import os
import re
import stat

import networkx as nx
import pytest

from kg.io.exports import export


def test_graphml_edges_have_ids_of_their_own(sample_kg, tmp_path):
    (path,) = export(sample_kg.nx, "graphml", tmp_path / "g.graphml")
    ids = re.findall(r'<edge [^>]*id="([^"]*)"', path.read_text(encoding="utf-8"))
    assert len(ids) == len(set(ids)) == sample_kg.nx.number_of_edges()
    assert nx.read_graphml(path).number_of_edges() == sample_kg.nx.number_of_edges()


def test_igraph_reads_the_graphml_and_gexf_every_node_and_edge(sample_kg, tmp_path):
    igraph = pytest.importorskip("igraph")
    (path,) = export(sample_kg.nx, "graphml", tmp_path / "g.graphml")
    g = igraph.Graph.Read_GraphML(str(path))
    assert (g.vcount(), g.ecount()) == (sample_kg.nx.number_of_nodes(), sample_kg.nx.number_of_edges())
    assert g.is_directed() and "method/tarot" in set(g.vs["id"])
    assert set(g.es["relation"]) == {k for _, _, k in sample_kg.nx.edges(keys=True)}
    (gexf,) = export(sample_kg.nx, "gexf", tmp_path / "g.gexf")
    H = nx.read_gexf(gexf)  # networkx's defaults
    assert H.number_of_edges() == sample_kg.nx.number_of_edges()


def test_node_link_reads_back_with_networkx_defaults(sample_kg, tmp_path):
    (path,) = export(sample_kg.nx, "node-link", tmp_path / "g.json")
    H = nx.node_link_graph(json.loads(path.read_text(encoding="utf-8")))
    assert sorted(H.edges(keys=True)) == sorted(sample_kg.nx.edges(keys=True))
    assert H.nodes["method/tarot"]["type"] == "Method"


def test_cytoscape_ids_are_css_selectors_and_edges_join_nodes(sample_kg, tmp_path):
    (path,) = export(sample_kg.nx, "cytoscape", tmp_path / "g.cy.json")
    elements = json.loads(path.read_text(encoding="utf-8"))["elements"]
    ids = {n["data"]["id"] for n in elements["nodes"]}
    assert all(re.fullmatch(r"[A-Za-z][\w-]*", i) for i in ids)  # `cy.$('#' + id)` needs no escaping
    assert {n["data"]["kg_id"] for n in elements["nodes"]} == set(sample_kg.nx.nodes)
    assert all(e["data"]["source"] in ids and e["data"]["target"] in ids for e in elements["edges"])
    assert len({e["data"]["id"] for e in elements["edges"]}) == len(elements["edges"])


def test_exported_files_are_readable_by_other_users(sample_kg, tmp_path):
    old = os.umask(0o022)
    try:
        files = export(sample_kg.nx, "neo4j", tmp_path / "neo4j") + export(sample_kg.nx, "gexf", tmp_path / "g.gexf")
    finally:
        os.umask(old)
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o644 for f in files)
