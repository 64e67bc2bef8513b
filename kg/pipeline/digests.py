"""Digests of a build's units: what the next build compares to know which blocks
it can copy (see :mod:`kg.pipeline.blocks`)."""
from __future__ import annotations

import hashlib
import marshal
from functools import lru_cache

from kg._source import source_hash
from kg.extract import PIPELINE_VERSION
from kg.model import mention_fields
from kg.rdf.statements import usage_table

#: The format of the build state; a change makes every build write in full.
STATE_FORMAT = 1


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of the whole package (:func:`kg._source.source_hash`): the bytes of a
    block and its digest come from modules all over it (the RDF writer, the JSON
    encoder, the names' slugs)."""
    return source_hash(f"{PIPELINE_VERSION}\x00{STATE_FORMAT}")


def digest_bytes(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


#: Node types whose blocks depend only on the node, its out-links, (entities) its number of papers
#: and (tasks) its method usages.
DIGESTED = ("Paper", "Method", "Task", "Dataset", "CodeRepository")


def unit_digests(G, usages: dict | None = None) -> dict[str, str]:
    """A digest of what each paper's and entity's blocks are written from: the node's
    attributes, its out-links with all their data (mentions field by field), for
    an entity, how many papers link to it (``kg:paperCount``) and, for a task, its
    method usages (their methods, names and counts). Equal digests mean
    equal blocks in every output. Venues (their statistics read their papers' links)
    and the extraction run have none: they are always written.

    >>> import networkx as nx
    >>> from kg.model import Mention
    >>> G = nx.MultiDiGraph()
    >>> G.add_node("paper/a", type="Paper", label="A", abstract="x", docs=["d"])
    >>> G.add_node("task/t", type="Task", label="t", name="t", aliases=[])
    >>> _ = G.add_edge("paper/a", "task/t", key="addressesTask", mentions=[Mention("t", "Task", 0, 1)])
    >>> d1 = unit_digests(G)
    >>> G.edges["paper/a", "task/t", "addressesTask"]["mentions"] = [Mention("t", "Task", 0, 1, sentence="t.")]
    >>> G.add_node("paper/b", type="Paper", label="B", abstract="y", docs=["e"])
    >>> _ = G.add_edge("paper/b", "task/t", key="addressesTask", mentions=[])
    >>> d2 = unit_digests(G)
    >>> d2["paper/a"] != d1["paper/a"], d2["task/t"] != d1["task/t"]  # new evidence; one more paper
    (True, True)
    >>> G.add_node("method/m", type="Method", label="m", name="m", aliases=[])
    >>> _ = G.add_edge("paper/b", "method/m", key="usesMethod", mentions=[])
    >>> d3 = unit_digests(G)
    >>> d3["task/t"] != d2["task/t"]  # a method usage more
    True
    >>> G.nodes["method/m"]["name"] = "M"
    >>> unit_digests(G)["task/t"] != d3["task/t"]  # the usage's label names the method
    True
    """
    out = {}
    if usages is None:
        usages = usage_table(G)
    nodes, succ, pred = G.nodes, dict(G.adjacency()), G.pred  # node -> neighbour -> key -> data
    dumps = marshal.dumps
    papers = {n for n, d in nodes(data=True) if d.get("type") == "Paper"}
    for n, d in nodes(data=True):
        t = d.get("type")
        if t not in DIGESTED:
            continue
        payload = [n, d]
        if t != "Paper":
            payload.append(len(papers.intersection(pred[n])))
        if t == "Task":  # its method usages: their methods' names, the counts, the cut
            payload.append([(m, nodes[m].get("name"), k) for m, k in usages.get(n, ())])
        for v, keys in succ[n].items():
            for k, ed in keys.items():
                payload += (v, k)
                for name, value in ed.items():
                    # a mention as a tuple of its fields: marshal cannot write the dataclass
                    payload += (name, list(map(mention_fields, value)) if name == "mentions" else value)
        try:
            # marshal format 2: no back-references and no mark for interned strings, so the
            # bytes depend on the values only (and their order, fixed by build_graph)
            out[n] = digest_bytes(dumps(payload, 2))
        except ValueError:  # a value marshal cannot write (an attribute someone added): always written
            pass
    return out
