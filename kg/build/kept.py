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

The state is a pickle in the extraction cache's folder, one per output folder,
signed with a key kept in the user's own cache folder (unpickling a file runs
code: a file this user's builds did not write is never loaded). A build writes it
in full, or, while the papers that changed since the last full state are at most
:data:`DELTA_MAX_SHARE` of them, only what changed (a signed delta file bound to
the full state by its signature). It is tied to the code that resolves: another
version of it, or of networkx or Python, starts from a full resolution.

The state also keeps each paper's and entity's digest as the write stage made it
(:func:`kg.build.reuse.unit_digests`): a paper taken unchanged from the kept graph has the digest it
had, and so has an entity that no paper resolved again (or gone) links to, before or now, and
whose derived relations did not change; the next write stage takes those instead of digesting
them again (``Resolution.known``). (An entity's block is written from its node, its paper count
and, for a method, its derived relations: its node changes only with its cluster, whose papers
are then resolved again, its count only with a paper linking to it, and its derived relations
only with a paper proposing it. 100k papers + 1%: 70,913 of 74,925 entities known; the write stage's
digests took 0.98 s, against 2.67 s with the papers' alone.)
"""
from __future__ import annotations

import hashlib
import hmac
import marshal
import os
import pickle
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import networkx as nx

from kg._source import source_hash
from kg._gc import without_gc
from kg.resolve.graph import build_graph, edge_data, entity_attrs, paper_attrs, venue_attrs
from kg.model import Extraction, Record
from kg.resolve.entities import (Sig, clusters, derived_of, evidence, paper_extractions, paper_groups, registry,
                      resolve_paper, resolve_parts)

#: The first bytes of a state file; then the signature (32 bytes), then the pickle.
MAGIC = b"abstract-kg kept resolution 1\n"
#: State files kept in a cache folder (one an output folder, most recently written first).
KEEP_FILES = 4
#: A build writes only what changed since the last full state while the papers that changed
#: are at most this share of all (100k + 1%: 1.6 MB, against 173 MB and 5-6 s for a full state).
DELTA_MAX_SHARE = 0.25


@lru_cache(maxsize=1)
def code_version() -> str:
    """A hash of the code a kept graph was made by (the whole package, see
    :func:`kg._source.source_hash`) and of the networkx and Python versions (the pickle's classes)."""
    return source_hash(f"kept\x00{nx.__version__}\x00{sys.version_info[:2]}")


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
    1.2M mention objects at 100k papers cost seconds, and they would be copies.)
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

    >>> import tempfile
    >>> from kg.extract import extract_records
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


# ---------------------------------------------------------------- files

def signing_key(folder: str | Path) -> bytes:
    """The signing key in ``folder``, made on first use (readable by this user only);
    OSError if it can be neither read nor made."""
    folder = Path(folder)
    path = folder / "kept.key"
    try:
        return path.read_bytes()
    except FileNotFoundError:
        pass
    folder.mkdir(parents=True, exist_ok=True)
    key = os.urandom(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # made meanwhile by another build
        return path.read_bytes()
    with os.fdopen(fd, "wb") as fh:
        fh.write(key)
    return key


def state_path(cache_folder: str | Path, outdir: str | Path) -> Path:
    """Where the kept state of the builds into ``outdir`` is (in the cache folder)."""
    name = hashlib.sha256(str(Path(outdir).resolve()).encode()).hexdigest()[:24]
    return Path(cache_folder) / "kept" / f"{name}.pickle"


def _sign(key: bytes, data) -> bytes:
    return hmac.new(key, data, hashlib.sha256).digest()


def _lite(kept: Kept, u: str):
    """A node's links as a state file holds them: a paper's mentions as positions in its
    extraction's mentions (None when one is not there: the paper is then resolved again
    next time), a method's derived relations as they are."""
    nbrs = kept.G._succ[u]
    ex = kept.paper_ex.get(u)
    if ex is None:
        return None if kept.G._node[u].get("type") == "Paper" else nbrs
    pos: dict[int, int] = {}
    for i, m in enumerate(mention_space(ex)):
        pos.setdefault(id(m), i)
    try:
        return {v: {k: {**d, "mentions": [pos[id(m)] for m in d["mentions"]]} for k, d in keys.items()}
                for v, keys in nbrs.items()}
    except KeyError:
        return None


def _full(kept: Kept, digests: dict[str, str]) -> dict:
    """What a full state file holds: the version, the papers' nodes, the papers' and
    methods' links (:func:`_lite`), papers, sigs and the papers' and entities' ``digests``."""
    nodes, succ = kept.G._node, kept.G._succ
    papers = {n: d for n, d in nodes.items() if d.get("type") == "Paper"}
    links = {}
    for u, nbrs in succ.items():
        if nbrs or u in papers:
            lite = _lite(kept, u)
            if lite is not None:
                links[u] = lite
    return {"version": code_version(), "nodes": papers, "links": links, "papers": kept.papers, "sigs": kept.sigs,
            "digests": {n: d for n, d in digests.items() if n in nodes}}


def _delta(kept: Kept, digests: dict[str, str]) -> dict:
    """What a delta file holds: the full state's signature and, for each paper, method and
    entity spelling that changed since it, its value now (None: there is none now), and the
    digests of the papers and entities that changed since it."""
    nodes, ch = kept.G._node, kept.changed
    links = {u: (_lite(kept, u) if u in nodes else None) for u in ch["papers"] | ch["methods"]}
    return {"version": code_version(), "base": kept.base,
            "nodes": {p: nodes.get(p) for p in ch["papers"]}, "links": links,
            "papers": {p: kept.papers.get(p) for p in ch["papers"]},
            "sigs": {s: kept.sigs.get(s) for s in ch["sigs"]},
            "digests": {u: digests.get(u) for u in ch["papers"] | ch["entities"]}}


def delta_path(path: Path) -> Path:
    return path.with_suffix(".delta")


def _write_signed(path: Path, state: dict, key: bytes) -> bytes:
    """``state`` pickled into ``path`` (through a temporary file), signed; returns the signature."""
    mac = hmac.new(key, digestmod=hashlib.sha256)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(MAGIC + bytes(mac.digest_size))  # the signature's place, filled in below

            class Signed:  # the pickle streamed to the file as it is made (100k: 170 MB not held twice)
                @staticmethod
                def write(data) -> int:
                    mac.update(data)
                    return fh.write(data)

            pickle.dump(state, Signed, protocol=pickle.HIGHEST_PROTOCOL)
            fh.seek(len(MAGIC))
            fh.write(mac.digest())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return mac.digest()


def _signature(path: Path) -> bytes | None:
    """The signature a state file says it has (not checked)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(MAGIC) + 32)
    except OSError:
        return None
    return head[len(MAGIC):] if head[:len(MAGIC)] == MAGIC and len(head) == len(MAGIC) + 32 else None


def save_kept(path: str | Path, kept: Kept, key_folder: str | Path, digests: dict[str, str] | None = None) -> str:
    """Write ``kept`` at ``path``: only what changed since the full state there (a delta
    file next to it) when it started from that state and few papers changed since; else
    in full. ``digests`` are the write stage's digests of ``kept.G``'s units
    (:func:`kg.build.reuse.unit_digests`; the papers' and entities' are kept, none without). Keeps the
    :data:`KEEP_FILES` most recent states of the folder. Returns "delta" or "full"."""
    digests = digests or {}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    key = signing_key(key_folder)
    papers = sum(1 for d in kept.G._node.values() if d.get("type") == "Paper")
    if (kept.base is not None and kept.changed is not None and _signature(path) == kept.base
            and len(kept.changed["papers"]) <= DELTA_MAX_SHARE * max(papers, 1)):
        _write_signed(delta_path(path), _delta(kept, digests), key)
        written = "delta"
    else:
        delta_path(path).unlink(missing_ok=True)  # first: a delta never outlives its full state
        _write_signed(path, _full(kept, digests), key)
        written = "full"
    others = sorted((p for p in path.parent.glob("*.pickle") if p != path), key=lambda p: -p.stat().st_mtime)
    for old in others[KEEP_FILES - 1:]:
        delta_path(old).unlink(missing_ok=True)
        old.unlink(missing_ok=True)
    for tmp in path.parent.glob(".*"):  # the temporary files of builds killed while writing
        try:
            if time.time() - tmp.stat().st_mtime > 3600:
                tmp.unlink()
        except OSError:
            pass
    return written


def _read_signed(path: Path, key: bytes) -> tuple[dict | None, bytes, str]:
    """(state, its signature, "") or (None, b"", why not)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None, b"", "none kept for this output folder"
    except OSError as exc:
        return None, b"", f"unreadable ({exc.strerror})"
    head = len(MAGIC)
    if data[:head] != MAGIC or len(data) < head + 32:
        return None, b"", "not a state file of this version"
    body = memoryview(data)[head + 32:]
    if not hmac.compare_digest(data[head:head + 32], _sign(key, body)):
        return None, b"", "not signed by this user's builds"
    try:
        state = pickle.loads(body)
    except Exception as exc:  # signed by this user's builds, yet not a whole pickle (a damaged disk)
        return None, b"", f"unreadable ({type(exc).__name__})"
    if not isinstance(state, dict) or state.get("version") != code_version():
        return None, b"", "made by another version of the resolution code"
    return state, data[head:head + 32], ""


@without_gc
def load_kept(path: str | Path, key_folder: str | Path) -> tuple[Previous | None, str]:
    """The state at ``path`` (the full state, and its delta if there is a valid one):
    (Previous, "") or (None, why it is not used)."""
    path = Path(path)
    key_path = Path(key_folder) / "kept.key"
    if not path.is_file():
        return None, "no state kept for this output folder"
    if not key_path.is_file():
        return None, "no signing key"
    key = key_path.read_bytes()
    state, signature, why = _read_signed(path, key)
    if state is None:
        return None, why
    previous = Previous(state["nodes"], state["links"], state["papers"], state["sigs"], signature,
                        digests=state["digests"])
    delta, _, why = _read_signed(delta_path(path), key)
    if delta is not None and delta.get("base") == signature:  # else the full state alone (valid too)
        for name in ("nodes", "links", "papers", "sigs", "digests"):
            mine = getattr(previous, name)
            for k, v in delta[name].items():
                if v is None:
                    mine.pop(k, None)
                else:
                    mine[k] = v
        previous.changed = {"papers": set(delta["nodes"]), "methods": set(delta["links"]) - set(delta["nodes"]),
                            "sigs": set(delta["sigs"]), "entities": set(delta["digests"]) - set(delta["nodes"])}
    return previous, ""
