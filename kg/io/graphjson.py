"""The typed graph as node-link JSON (``graph.json.gz`` of a build): written by every
build, read back by ``kg viz`` and ``KnowledgeGraph.load`` (round trip exact).

A sentence is written once a source node: the mentions on its links after the
first one that holds a sentence give its number instead (the source's sentences in
the order they first appear), as the RDF writes a sentence once for its mentions.

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
import gzip
import json
from pathlib import Path

from collections.abc import Iterator

import networkx as nx

from kg._json import dumps
from kg.gzipped import gunzip
from kg.model import Mention, Record

#: A build's files of the graph and of its input records.
GRAPH_FILE, RECORDS_FILE = "graph.json.gz", "records.jsonl.gz"
FORMAT = "abstract-kg/graph@2"
#: The formats :func:`graph_from_json` reads (@1: every mention with its sentence's text).
READABLE = (FORMAT, "abstract-kg/graph@1")

#: One node, link or record a line: compact, keys sorted (see :mod:`kg._json`).
_ENCODE = functools.partial(dumps, sort_keys=True)


def _mention(m: Mention, sentences: dict[str, int]) -> dict:
    """A mention as JSON, its sentence the number it has in ``sentences`` (the text, the
    first time: it is then numbered)."""
    d = m.to_dict()
    if m.sentence:
        number = sentences.get(m.sentence)
        if number is None:
            sentences[m.sentence] = len(sentences)
        else:
            d["sentence"] = number
    return d


def generate_graph_json(G: nx.MultiDiGraph, skip: dict | None = None) -> Iterator[tuple[str | None, str | None, str | None]]:
    """The node-link JSON of ``G`` in pieces, one node or link a line: yields
    ``(section, unit, text)``: a node's line (section ``"json.nodes"``, the node) or a
    node's out-links (``"json.links"``, their source), and ``(None, None, text)`` for
    the text around them. A unit in ``skip[section]`` (a set) yields ``text`` None (for a
    caller that has those bytes from elsewhere); never for the first of a section, whose
    text has no separator before it.

    >>> G = nx.MultiDiGraph([("a", "b")])
    >>> [(section, unit) for section, unit, _ in generate_graph_json(G)]
    [(None, None), ('json.nodes', 'a'), ('json.nodes', 'b'), (None, None), ('json.links', 'a'), (None, None)]
    """
    yield None, None, '{"directed": true, "format": ' + json.dumps(FORMAT) + ', "multigraph": true,\n"nodes": ['
    skip_nodes, skip_links = (skip or {}).get("json.nodes", ()), (skip or {}).get("json.links", ())
    nodes = G.nodes
    for i, n in enumerate(sorted(nodes)):
        if i and n in skip_nodes:
            yield "json.nodes", n, None
        else:
            yield "json.nodes", n, ("\n" if i == 0 else ",\n") + _ENCODE({"id": n, **nodes[n]})
    yield None, None, '],\n"links": ['
    first = True
    for u, nbrs in sorted(G.adjacency()):  # links in (source, target, key) order
        if not nbrs:
            continue
        if not first and u in skip_links:
            yield "json.links", u, None
        else:
            yield "json.links", u, _links(u, nbrs, first)
        first = False
    yield None, None, "]}\n"


def _links(u: str, nbrs: dict, first: bool) -> str:
    """The lines of ``u``'s out-links (``nbrs``: neighbour -> key -> data)."""
    parts = []
    sentences: dict[str, int] = {}
    for v, keys in sorted(nbrs.items()):
        for k, d in sorted(keys.items()):
            link = {"source": u, "target": v, "key": k}
            for name, value in d.items():
                link[name] = [_mention(m, sentences) for m in value] if name == "mentions" else value
            parts.append(("\n" if first else ",\n") + _ENCODE(link))
            first = False
    return "".join(parts)


def write_graph_json(G: nx.MultiDiGraph, fh) -> None:
    """Stream the node-link JSON of ``G`` to a text file, one node or link a line."""
    for _, _, text in generate_graph_json(G):
        fh.write(text)


def graph_to_json(G: nx.MultiDiGraph) -> str:
    """Deterministic node-link JSON of ``G`` (mentions as objects)."""
    import io

    buf = io.StringIO()
    write_graph_json(G, buf)
    return buf.getvalue()


def graph_from_json(text: str) -> nx.MultiDiGraph:
    data = json.loads(text)
    if data.get("format") not in READABLE:
        raise ValueError(f"not an abstract-kg graph file (format {data.get('format')!r}, expected {FORMAT!r})")
    G = nx.MultiDiGraph()
    for node in data["nodes"]:
        attrs = dict(node)
        G.add_node(attrs.pop("id"), **attrs)
    source, sentences = None, []
    for link in data["links"]:
        attrs = dict(link)
        u, v, k = attrs.pop("source"), attrs.pop("target"), attrs.pop("key")
        if u != source:
            source, sentences = u, []
        if "mentions" in attrs:
            attrs["mentions"] = [_read_mention(m, sentences) for m in attrs["mentions"]]
        G.add_edge(u, v, key=k, **attrs)
    return G


def _read_mention(d: dict, sentences: list[str]) -> Mention:
    """A mention read back, a sentence's number replaced by its text (``sentences``: the
    source's so far, to which a new one is added)."""
    s = d.get("sentence")
    if isinstance(s, int):
        d = {**d, "sentence": sentences[s]}
    elif s:
        sentences.append(s)
    return Mention(**d)


def records_to_jsonl(records) -> str:
    """The input records, one JSON object a line (``records.jsonl.gz`` of a build)."""
    names = [f.name for f in dataclasses.fields(Record)]
    return "".join(_ENCODE({k: getattr(r, k) for k in names}) + "\n"
                   for r in records)


def in_build(folder, name: str) -> Path:
    """The file ``name`` of a build folder, or the plain file a build before the
    compressed outputs wrote in its place (``graph.json`` for ``graph.json.gz``)."""
    path, plain = Path(folder) / name, Path(folder) / name.removesuffix(".gz")
    return plain if plain.is_file() and not path.is_file() else path


def read_graph_json(path) -> nx.MultiDiGraph:
    """The graph of a ``graph.json`` file, gzip-compressed (``.gz``) or not."""
    data = Path(path).read_bytes()
    return graph_from_json((gunzip(data) if str(path).endswith(".gz") else data).decode("utf-8"))


def records_from_jsonl(path) -> list:
    """The records of a ``records.jsonl`` file, gzip-compressed (``.gz``) or not."""
    opened = gzip.open(path, "rt", encoding="utf-8") if str(path).endswith(".gz") else open(path, encoding="utf-8")
    with opened as lines:
        return [_record(json.loads(line)) for line in lines if line.strip()]


def _record(d: dict) -> Record:
    d["code"] = tuple(d.get("code") or ())
    d["keywords"] = tuple(d.get("keywords") or ())
    return Record(**d)
