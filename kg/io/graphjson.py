"""The typed graph as node-link JSON (``graph.json``): written by every build,
read back by ``kg viz`` and ``KnowledgeGraph.load`` (round trip exact).

>>> import networkx as nx
>>> G = nx.MultiDiGraph(); G.add_node("task/x", type="Task", label="x", aliases=["X"])
>>> _ = G.add_edge("paper/1", "task/x", key="addressesTask", predicate="addressesTask", mentions=[], derived_from=[])
>>> H = graph_from_json(graph_to_json(G))
>>> sorted(H.edges(keys=True)) == sorted(G.edges(keys=True)) and H.nodes["task/x"] == G.nodes["task/x"]
True
"""
from __future__ import annotations

import dataclasses
import functools
import json

import networkx as nx

from kg._json import dumps
from kg.model import Mention, Record

FORMAT = "abstract-kg/graph@1"

#: One node, link or record a line: compact, keys sorted (see :mod:`kg._json`).
_ENCODE = functools.partial(dumps, sort_keys=True)


def _mention(m: Mention) -> dict:
    return m.to_dict()


def write_graph_json(G: nx.MultiDiGraph, fh, reuse=None) -> None:
    """Stream the node-link JSON of ``G`` to a text file, one node or link a line.

    ``reuse`` (a :class:`kg.pipeline.reuse.Blocks`, with ``fh`` a :class:`kg.pipeline.reuse.Sink`)
    copies unchanged papers' lines from the last build's file; same text."""
    fh.write('{"directed": true, "format": ' + json.dumps(FORMAT) + ', "multigraph": true,\n"nodes": [')
    nodes = G._node
    for i, n in enumerate(sorted(nodes)):
        if reuse is None:
            fh.write(("\n" if i == 0 else ",\n") + _ENCODE({"id": n, **nodes[n]}))
        else:
            reuse.json_block("json.nodes", n, i == 0, fh,
                             lambda: fh.write(("\n" if i == 0 else ",\n") + _ENCODE({"id": n, **nodes[n]})))
    fh.write('],\n"links": [')
    first = True
    succ = G._succ  # node -> neighbour -> key -> data, networkx's documented adjacency

    def links(u: str, first: bool) -> None:
        parts = []
        for v, keys in sorted(succ[u].items()):
            for k, d in sorted(keys.items()):
                link = {"source": u, "target": v, "key": k}
                for name, value in d.items():
                    link[name] = [_mention(m) for m in value] if name == "mentions" else value
                parts.append(("\n" if first else ",\n") + _ENCODE(link))
                first = False
        fh.write("".join(parts))

    for u in sorted(succ):  # links in (source, target, key) order
        if not succ[u]:
            continue
        if reuse is None:
            links(u, first)
        else:
            reuse.json_block("json.links", u, first, fh, lambda: links(u, first))
        first = False
    fh.write("]}\n")


def graph_to_json(G: nx.MultiDiGraph) -> str:
    """Deterministic node-link JSON of ``G`` (mentions as objects)."""
    import io

    buf = io.StringIO()
    write_graph_json(G, buf)
    return buf.getvalue()


def graph_from_json(text: str) -> nx.MultiDiGraph:
    data = json.loads(text)
    if data.get("format") != FORMAT:
        raise ValueError(f"not an abstract-kg graph file (format {data.get('format')!r}, expected {FORMAT!r})")
    G = nx.MultiDiGraph()
    for node in data["nodes"]:
        attrs = dict(node)
        G.add_node(attrs.pop("id"), **attrs)
    for link in data["links"]:
        attrs = dict(link)
        u, v, k = attrs.pop("source"), attrs.pop("target"), attrs.pop("key")
        if "mentions" in attrs:
            attrs["mentions"] = [Mention(**m) for m in attrs["mentions"]]
        G.add_edge(u, v, key=k, **attrs)
    return G


def records_to_jsonl(records) -> str:
    """The input records, one JSON object a line (``records.jsonl`` of a build)."""
    names = [f.name for f in dataclasses.fields(Record)]
    return "".join(_ENCODE({k: getattr(r, k) for k in names}) + "\n"
                   for r in records)


def records_from_jsonl(path) -> list:
    out = []
    for line in open(path, encoding="utf-8"):
        if line.strip():
            d = json.loads(line)
            d["code"] = tuple(d.get("code") or ())
            d["keywords"] = tuple(d.get("keywords") or ())
            out.append(Record(**d))
    return out
