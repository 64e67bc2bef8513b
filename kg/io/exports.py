"""Exports for other tools: GraphML and GEXF (Gephi, yEd), node-link JSON,
Cytoscape.js JSON, and CSV files in the layout ``neo4j-admin database import``
reads. Each ``to_*`` function returns text; :func:`export` writes files.

>>> import networkx as nx
>>> G = nx.MultiDiGraph(); G.add_node("task/x", type="Task", label="x", name="x", aliases=["X"])
>>> G.add_node("paper/1", type="Paper", label="P", abstract="…", docs=["f#0"])
>>> _ = G.add_edge("paper/1", "task/x", key="addressesTask", predicate="addressesTask", mentions=[], derived_from=[])
>>> json.loads(to_cytoscape(G))["elements"]["edges"][0]["data"]["relation"]
'addressesTask'
"""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import networkx as nx

from kg.io.graphjson import graph_to_json

FORMATS = ("graphml", "gexf", "node-link", "cytoscape", "neo4j")


def flat_graph(G: nx.MultiDiGraph) -> nx.MultiDiGraph:
    """A copy with only scalar attributes (lists joined with "|", evidence counted),
    as GraphML and GEXF require."""
    F = nx.MultiDiGraph()
    for n, d in sorted(G.nodes(data=True)):
        attrs = {}
        for k, v in sorted(d.items()):
            if v is None:
                continue
            attrs[k] = "|".join(map(str, v)) if isinstance(v, (list, tuple)) else v
        F.add_node(n, **attrs)
    for u, v, k, d in sorted(G.edges(keys=True, data=True), key=lambda e: e[:3]):
        F.add_edge(u, v, key=k, id=f"{u}|{k}|{v}", relation=k, evidence=len(d.get("mentions", [])),
                   derived_from="|".join(d.get("derived_from", [])))
    return F


def to_graphml(G: nx.MultiDiGraph) -> str:
    """GraphML; each ``<edge>`` has an id of its own (source|relation|target), as the
    schema requires (Gephi keeps one edge an id)."""
    return "\n".join(nx.generate_graphml(flat_graph(G), edge_id_from_attribute="id")) + "\n"


def to_gexf(G: nx.MultiDiGraph) -> str:
    F = flat_graph(G)
    for n, d in F.nodes(data=True):
        d.setdefault("label", n)
    return "\n".join(nx.generate_gexf(F)) + "\n"


def to_node_link(G: nx.MultiDiGraph) -> str:
    """Node-link JSON with every attribute, mentions included, as ``networkx.node_link_data``
    writes it (edges under ``"edges"``): ``nx.node_link_graph(json.load(f))`` reads it back."""
    data = json.loads(graph_to_json(G))
    data["edges"] = data.pop("links")
    data.pop("format", None)
    data.setdefault("graph", {})
    return json.dumps(data, ensure_ascii=False, sort_keys=True) + "\n"


def cytoscape_id(node: str) -> str:
    """A node id that a CSS selector takes as it is (``cy.$('#method__tarot')``): ``/``
    becomes ``__`` and ``%`` ``_`` (node ids hold neither ``_`` nor other punctuation).

    >>> cytoscape_id("method/gr%C3%A9ta")
    'method__gr_C3_A9ta'
    """
    return node.replace("/", "__").replace("%", "_")


def to_cytoscape(G: nx.MultiDiGraph) -> str:
    """Cytoscape.js elements JSON (``cy.add(data.elements)``); ``kg_id`` keeps each
    node's own id."""
    cid = cytoscape_id
    nodes = [{"data": {"id": cid(n), "kg_id": n, "label": d.get("label", n), "type": d["type"],
                       **({"aliases": list(d["aliases"])} if d.get("aliases") else {})}}
             for n, d in sorted(G.nodes(data=True))]
    edges = [{"data": {"id": f"{cid(u)}--{k}--{cid(v)}", "source": cid(u), "target": cid(v), "relation": k,
                       "evidence": len(d.get("mentions", []))}}
             for u, v, k, d in sorted(G.edges(keys=True, data=True), key=lambda e: e[:3])]
    return json.dumps({"elements": {"nodes": nodes, "edges": edges}}, ensure_ascii=False, indent=1) + "\n"


def to_neo4j_csv(G: nx.MultiDiGraph) -> tuple[str, str]:
    """(nodes.csv, relationships.csv) with the headers ``neo4j-admin database import``
    reads: ``id:ID``, ``:LABEL``, typed properties, ``:START_ID``, ``:END_ID``, ``:TYPE``."""
    nbuf, rbuf = io.StringIO(), io.StringIO()
    nw = csv.writer(nbuf, lineterminator="\n")
    nw.writerow(["id:ID", ":LABEL", "name", "aliases:string[]", "abstract", "venue", "year:int", "url", "docs:string[]"])
    for n, d in sorted(G.nodes(data=True)):
        nw.writerow([n, d["type"], d.get("label", ""), ";".join(d.get("aliases", []) or []),
                     d.get("abstract", "") or "", d.get("venue", "") or "", d.get("year", "") or "",
                     d.get("url", "") or "", ";".join(d.get("docs", []) or [])])
    rw = csv.writer(rbuf, lineterminator="\n")
    rw.writerow([":START_ID", ":END_ID", ":TYPE", "evidence:int"])
    for u, v, k, d in sorted(G.edges(keys=True, data=True), key=lambda e: e[:3]):
        rw.writerow([u, v, _rel_type(k), len(d.get("mentions", []))])
    return nbuf.getvalue(), rbuf.getvalue()


def _rel_type(key: str) -> str:
    """camelCase relation -> Neo4j's UPPER_SNAKE relationship type."""
    out = "".join("_" + c if c.isupper() else c for c in key)
    return out.upper()


def export(G: nx.MultiDiGraph, fmt: str, out: str | Path) -> list[Path]:
    """Write ``G`` in one format; ``out`` is a file, or a folder for ``neo4j``. Returns the files."""
    from kg.files import atomic_write

    out = Path(out)
    if fmt == "neo4j":
        nodes, rels = to_neo4j_csv(G)
        atomic_write(out / "nodes.csv", nodes)
        atomic_write(out / "relationships.csv", rels)
        return [out / "nodes.csv", out / "relationships.csv"]
    writer = {"graphml": to_graphml, "gexf": to_gexf, "node-link": to_node_link, "cytoscape": to_cytoscape}.get(fmt)
    if writer is None:
        raise ValueError(f"unknown export format {fmt!r} (one of {', '.join(FORMATS)})")
    atomic_write(out, writer(G))
    return [out]
