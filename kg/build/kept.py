"""Kept resolution: a build keeps its graph and what each paper was resolved from,
so that the next build into the same folder resolves again only the papers whose
inputs or entities changed, and assembles the very graph a full resolution gives
(same nodes, edges, data and order; the outputs are written from it as always).

A paper is taken from the kept graph, node and out-links as they are, when its
records (every field resolution reads, in order), its extraction (the identity
:func:`kg.extract.extract_records` gives: cache key and corpus-name additions)
and, for each entity spelling in that extraction, the cluster it belongs to and
that cluster's :class:`~kg.model.Entity` are all as they were. Those are all a
paper's node and links are made from (:func:`kg.resolve.entities.resolve_paper`); its
links' mentions are taken from this build's extraction. The clusters, entities,
repositories and venues are computed again in full each time (they are small next
to the papers' evidence); a derived relation is made again when one of its papers
changed.

The state is kept on disk by :mod:`kg.build.kept_files`.

The state also keeps each paper's and entity's digest as the write stage made it
(:func:`kg.build.reuse.unit_digests`): a paper taken unchanged from the kept graph has the digest it
had, and so has an entity that no paper resolved again (or gone) links to, before or now, and
whose derived relations did not change; the next write stage takes those instead of digesting
them again (``Resolution.known``). (An entity's block is written from its node, its paper count
and, for a method, its derived relations: its node changes only with its cluster, whose papers
are then resolved again, its count only with a paper linking to it, and its derived relations
only with a paper proposing it. In a +1% rebuild most entities are known.)
"""
from __future__ import annotations

import hashlib
import marshal
from collections import defaultdict
from dataclasses import dataclass, field

import networkx as nx

from kg._gc import without_gc
from kg.resolve.graph import build_graph, edge_data, entity_attrs, paper_attrs, venue_attrs
from kg.model import Extraction, Record
from kg.resolve.entities import (Sig, clusters, derived_of, evidence, paper_extractions, paper_groups, registry,
                      resolve_paper, resolve_parts)

@dataclass
class Kept:
    """A build's graph and what it was resolved from, for the next build: ``paper_ex``
    (paper id -> its extraction), ``papers`` (paper id -> digest of its inputs, see
    :func:`paper_fingerprints`) and ``sigs`` (entity spelling -> (its cluster's root,
    the cluster's Entity)). :func:`save_kept` writes it; :func:`load_kept` gives a
    :class:`Previous`."""

    G: nx.MultiDiGraph
    paper_ex: dict[str, Extraction]
    papers: dict[str, bytes]
    sigs: dict[Sig, tuple]
    #: after an incremental resolution: the signature of the full state it started from and
    #: what changed since that state ({"papers": ids, "methods": ids, "sigs": spellings,
    #: "entities": ids of the entities whose digests were not known})
    base: bytes | None = None
    changed: dict | None = None


@dataclass
class Previous:
    """A kept state as loaded: the graph's paper ``nodes`` (id -> data) and ``links`` (node ->
    neighbour -> key -> data), a paper's links' mentions given as their positions in
    its extraction's mentions (:func:`mention_space`), and ``papers`` and ``sigs`` as
    in :class:`Kept`. (The mentions are taken from this build's extractions: loading
    over a million mention objects on a large corpus, and they would be copies.)
    ``digests``: paper or entity id -> the digest the write stage made of it (:func:`kg.build.reuse.unit_digests`)."""

    nodes: dict
    links: dict
    papers: dict[str, bytes]
    sigs: dict[Sig, tuple]
    #: the full state's signature, and what its delta (if one was read) changed
    base: bytes | None = None
    changed: dict = field(default_factory=lambda: {"papers": set(), "methods": set(), "sigs": set(), "entities": set()})
    digests: dict[str, str] = field(default_factory=dict)


def mention_space(ex: Extraction) -> list:
    """The mentions a paper's links take their evidence from, in a fixed order: each
    entity's, then the extraction's own (an equal extraction, an equal list)."""
    return [m for e in ex.entities for m in e.mentions] + list(ex.mentions)


def paper_fingerprints(groups: dict[str, list[Record]], identities: dict[str, str] | None) -> dict[str, bytes]:
    """A digest of each paper's inputs: the fields of its records that resolution reads,
    in order, and the identity of its first record's extraction (``identities``: doc ->
    identity, from :func:`kg.extract.extract_records`). Papers whose first record has no
    identity get none (they are always resolved again).

    >>> r = Record(doc="a", abstract="x", source="s", index=0)
    >>> list(paper_fingerprints({"paper/1": [r]}, {"a": "k"}).values())[0].hex()[:8] != ""
    True
    >>> paper_fingerprints({"paper/1": [r]}, {})
    {}
    """
    out = {}
    if not identities:
        return out
    dumps, digest = marshal.dumps, hashlib.blake2b
    for pid, recs in groups.items():
        ident = identities.get(recs[0].doc)
        if ident is None:
            continue
        fields = [ident, [(r.doc, r.abstract, r.title, r.venue, r.year, r.url, r.code) for r in recs]]
        out[pid] = digest(dumps(fields, 2), digest_size=16).digest()
    return out


@dataclass
class Resolution:
    """What :func:`resolve_graph` made: the graph, the state to keep, how many papers
    were resolved again (all of them without a usable kept state) and ``known``, the
    digests of the papers taken unchanged from the kept graph and of the entities whose
    blocks are as they were (for :func:`kg.build.reuse.unit_digests`)."""

    G: nx.MultiDiGraph
    kept: Kept
    papers: int
    resolved: int
    known: dict[str, str] = field(default_factory=dict)


@without_gc
def resolve_graph(records: list[Record], extractions: list[Extraction], identities: dict[str, str] | None = None,
                  previous: Previous | None = None) -> Resolution:
    """The graph of ``records`` (what :func:`kg.resolve.entities.resolve` and :func:`kg.resolve.graph.build_graph`
    make) and the state to keep for the next build. With ``previous`` (the last build's,
    from :func:`load_kept`), the papers whose inputs and entities are unchanged are taken
    from its graph, and the derived relations only their papers changed are made again.

    >>>     >>> from kg.extract import extract_records
    >>> recs = [Record(doc="a", abstract="We propose FooNet for image classification.", source="x", index=0)]
    >>> exs, folder = list(extract_records(recs)), Path(tempfile.mkdtemp())
    >>> first = resolve_graph(recs, exs, {"a": "id-a"})
    >>> save_kept(folder / "state", first.kept, folder)
    'full'
    >>> again = resolve_graph(recs, exs, {"a": "id-a"}, load_kept(folder / "state", folder)[0])
    >>> again.resolved, list(again.G.edges(keys=True)) == list(first.G.edges(keys=True))
    (0, True)
    """
    groups = paper_groups(records)
    paper_ex = paper_extractions(groups, extractions)
    sig_root, entities = clusters(paper_ex)
    repos, venues = registry(groups, paper_ex)
    fps = paper_fingerprints(groups, identities)
    sigs = {sig: (root, entities[root]) for sig, root in sig_root.items()}
    if previous is None:
        G = build_graph(resolve_parts(groups, paper_ex, sig_root, entities, repos, venues))
        return Resolution(G, Kept(G, paper_ex, fps, sigs), len(groups), len(groups))

    old_fps, old_sigs = previous.papers, previous.sigs
    changed = {sig for sig, v in sigs.items() if old_sigs.get(sig) != v}
    again: dict[str, tuple] = {}  # paper id -> (Paper, relations) resolved again
    for pid, recs in groups.items():
        fp = fps.get(pid)
        ex = paper_ex.get(pid)
        if (fp is None or ex is None or old_fps.get(pid) != fp or pid not in previous.links
                or (changed and any((e.type, e.name, e.aliases) in changed for e in ex.entities))):
            again[pid] = resolve_paper(pid, recs, ex, sig_root, entities)
    gone = [n for n in previous.nodes if n not in groups]
    G, touched = _assemble(groups, paper_ex, again, gone, venues, entities, repos, previous)
    old_digests = previous.digests
    known = {pid: old_digests[pid] for pid in groups if pid not in again and pid in old_digests}
    # the entities whose blocks may have changed: those a paper resolved again or gone links to,
    # before (its kept links) or now, and the methods whose derived relations were made again
    linked = set(touched)
    for pid in [*again, *gone]:
        linked.update(previous.links.get(pid) or ())
    for _, rels in again.values():
        linked.update(o for _, o in rels)
    nodes = G._node
    fresh = set()  # entities digested anew by the write stage
    for n, d in nodes.items():
        if d["type"] in ("Paper", "Venue"):
            continue
        if n in linked or n not in old_digests:
            fresh.add(n)
        else:
            known[n] = old_digests[n]
    since = previous.changed  # what changed since the full state: what its delta said, and now this
    changes = {"papers": since["papers"] | set(again) | set(gone),
               "methods": since["methods"] | touched,  # a method gone with its papers is among them
               "sigs": since["sigs"] | changed | {sig for sig in old_sigs if sig not in sigs},
               "entities": since["entities"] | fresh | {n for n in old_digests if n not in nodes}}
    kept = Kept(G, paper_ex, fps, sigs, previous.base, changes)
    return Resolution(G, kept, len(groups), len(again), known)


def _assemble(groups: dict, paper_ex: dict, again: dict, gone: list, venues: dict, entities: dict, repos: dict,
              previous: Previous) -> tuple[nx.MultiDiGraph, set]:
    """The graph as build_graph makes it: every node first (papers, venues, entities, each
    sorted), then the papers' links (papers in order, each one's sorted), then the derived
    (sorted); the papers not in ``again`` (id -> (Paper, relations)) and the derived
    relations none of whose papers changed taken from ``previous`` (which this uses up).
    Returns it and the methods whose derived relations were made again."""
    old_nodes, old_links = previous.nodes, previous.links
    G = nx.MultiDiGraph()
    nodes, succ, pred = G._node, G._succ, G._pred
    pids = sorted(groups)
    for pid in pids:
        redone = again.get(pid)
        nodes[pid] = paper_attrs(redone[0]) if redone is not None else old_nodes[pid]
    for v in sorted(venues.values(), key=lambda v: v.id):
        nodes[v.id] = venue_attrs(v)
    for e in sorted(list(entities.values()) + list(repos.values()), key=lambda e: e.id):
        nodes[e.id] = entity_attrs(e)
    for n in nodes:
        succ[n] = {}
        pred[n] = {}

    # derived relations: those of the papers resolved again (or gone), as they were and as they are
    minus: dict[tuple, set] = defaultdict(set)
    plus: dict[tuple, set] = defaultdict(set)
    for pid in [*again, *gone]:
        if pid in old_links:
            for t in derived_of((p, o) for o, keys in old_links[pid].items() for p in keys):
                minus[t].add(pid)
    for pid, (_, rels) in again.items():
        for t in derived_of(rels):
            plus[t].add(pid)

    for pid in pids:
        redone = again.get(pid)
        if redone is None:
            space = mention_space(paper_ex[pid])
            mine = succ[pid] = old_links[pid]  # its links as they were: same targets, same data
            for v, keys in mine.items():
                for data in keys.values():
                    data["mentions"] = [space[i] for i in data["mentions"]]
                pred[v][pid] = keys
            continue
        mine = succ[pid]
        for (p, o), ms in sorted(redone[1].items()):
            keys = mine.get(o)
            if keys is None:
                keys = mine[o] = pred[o][pid] = {}
            keys[p] = edge_data(p, evidence(ms), ())

    touched: dict[str, list] = defaultdict(list)  # method -> its derived relations that changed
    for t in {*minus, *plus}:
        touched[t[0]].append(t)
    for s, d in nodes.items():
        if d["type"] != "Method":
            continue
        old = old_links.get(s)
        if s not in touched:
            if old:  # none of its derived relations changed: they are as they were
                succ[s] = old
                for o, keys in old.items():
                    pred[o][s] = keys
            continue
        rows = {(p, o): data["derived_from"] for o, keys in (old or {}).items() for p, data in keys.items()}
        for _, p, o in touched[s]:
            src = (set(rows.get((p, o), ())) - minus.get((s, p, o), set())) | plus.get((s, p, o), set())
            if src:
                rows[(p, o)] = sorted(src)
            else:
                rows.pop((p, o), None)
        mine = succ[s]
        for (p, o), src in sorted(rows.items()):
            keys = mine.get(o)
            if keys is None:
                keys = mine[o] = pred[o][s] = {}
            keys[p] = edge_data(p, (), src)
    return G, set(touched)
