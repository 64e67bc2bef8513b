"""Incremental builds: copy what did not change from the last build's files.

A build writes ``build-state.json`` beside its outputs. For every *unit* (the
extraction run, or one node with the mentions of its statements; see
:func:`kg.rdf.statements.units`) it keeps a digest, the unit's number of triples, and the
byte range of its blocks in ``graph.nt``, ``graph.ttl``, ``graph.jsonld`` and the
node and link sections of ``graph.json``.

The next build into the same folder:

- digests every paper and entity from what its blocks are written from: the
  node, its out-links, for an entity its number of papers and for a task its
  method usages (:func:`unit_digests`); a unit whose digest is the one recorded has its
  blocks copied from the old files (read a window at a time, adjacent blocks
  in one copy: :class:`kg.pipeline.writeback.Source`) instead of being made, escaped
  and encoded again. Venues (their statistics read every paper's links) and the run are
  always written; their digest is that of their N-Triples;
- updates a checkpoint of the old store (:func:`kg.rdf.store.update_store`) with the
  triples of the units that changed, instead of loading every triple again.

The files are byte-identical to those of a full build (tested on random splits),
so a reused block is never a stale one: any change to the writing code (a
fingerprint of its modules), the base IRI, the old files (size and sampled
content) or the old state's format makes the build write everything.
"""
from __future__ import annotations

import hashlib
import marshal
import os
from functools import lru_cache
from pathlib import Path

from kg._json import dumps, loads
from kg._source import source_hash
from kg.pipeline.writeback import WINDOW, Source, Writeback
from kg.extract import PIPELINE_VERSION
from kg.model import mention_fields
from kg.rdf.statements import usage_table

STATE_FILE = "build-state.json"
STATE_FORMAT = 1
#: Where a unit's blocks are: the RDF files and the two sections of graph.json.
SLOTS = ("nt", "ttl", "jsonld", "json.nodes", "json.links")
#: The column of a slot's start in a unit's row ([digest, triples, start, end, start, end, ...]).
COLUMN = {slot: 2 + 2 * i for i, slot in enumerate(SLOTS)}
SLOT_FILES = {"nt": "graph.nt", "ttl": "graph.ttl", "jsonld": "graph.jsonld", "json.nodes": "graph.json",
              "json.links": "graph.json"}
#: Below this share of papers reused, the store is loaded in full (a delta would not be cheaper).
DELTA_MIN_SHARE = 0.5
_SAMPLE = 1 << 16


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of the whole package (:func:`kg._source.source_hash`): the bytes of a
    block and its digest come from modules all over it (the RDF writer, the JSON
    encoder, the names' slugs)."""
    return source_hash(f"{PIPELINE_VERSION}\x00{STATE_FORMAT}")


def _digest_bytes(data: bytes) -> str:
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
    nodes, succ, pred = G._node, G._succ, G._pred  # networkx's documented adjacency: node -> neighbour -> key -> data
    dumps = marshal.dumps
    papers = {n for n, d in nodes.items() if d.get("type") == "Paper"}
    for n, d in nodes.items():
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
            out[n] = _digest_bytes(dumps(payload, 2))
        except ValueError:  # a value marshal cannot write (an attribute someone added): always written
            pass
    return out


def file_check(path: Path) -> list:
    """[size, digest of samples spread over the file]: a cheap check that a file is
    the one a state describes (reading 3 GB to hash it would cost seconds)."""
    size = path.stat().st_size
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as f:
        step = max(_SAMPLE, size // 64)
        for pos in range(0, size, step):
            h.update(os.pread(f.fileno(), _SAMPLE, pos))
        if size:
            h.update(os.pread(f.fileno(), _SAMPLE, max(0, size - _SAMPLE)))
    return [size, h.hexdigest()]


class Sink:
    """A binary output file written as text (UTF-8) or by copying byte ranges of
    other files; ``pos`` is the number of bytes written so far. Adjacent copies from
    one file (a :class:`kg.pipeline.writeback.Source`) become one copy. The file's dirty pages
    are kept to two windows (:class:`kg.pipeline.writeback.Writeback`).
    ``on_flush(pos)`` is told each time the bytes up to ``pos`` are in the file
    (whole blocks: the store loader reads them)."""

    def __init__(self, path: str | Path, every: int = 8 << 20, on_flush=None, window: int = WINDOW):
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        self.every, self.on_flush = every, on_flush
        self.parts: list[bytes] = []
        self.pending = 0
        self.pos = 0
        self.copying: list | None = None  # [Source, start, end] not yet copied
        self.written = 0  # bytes in the file (pos counts those still pending too)
        self.writeback = Writeback(self.fd, window)  # its dirty pages kept to two windows

    def write(self, text: str) -> None:
        if not text:
            return
        if self.copying is not None:
            self._copy_now()
        data = text.encode("utf-8")
        self.parts.append(data)
        self.pending += len(data)
        self.pos += len(data)
        if self.pending >= self.every:
            self.flush()

    def copy(self, src: Source, start: int, end: int) -> None:
        if end <= start:
            return
        c = self.copying
        if c is not None and c[0] is src and c[2] == start:
            c[2] = end
        else:
            if c is not None:
                self._copy_now()
            self._write_parts()
            self.copying = [src, start, end]
        self.pos += end - start

    def _copy_now(self) -> None:
        src, start, end = self.copying
        self.copying = None
        self._write_parts()
        src.copy(self.fd, start, end, self._written)
        if self.on_flush is not None:
            self.on_flush(self.pos)

    def _written(self, n: int) -> None:
        self.written += n
        self.writeback.advance(self.written)

    def _write_parts(self) -> None:
        if self.parts:
            data = b"".join(self.parts)
            self.parts, self.pending = [], 0
            view = memoryview(data)
            while view:
                view = view[os.write(self.fd, view):]
            self._written(len(data))

    def flush(self) -> None:
        if self.copying is not None:
            self._copy_now()
        self._write_parts()
        if self.on_flush is not None:
            self.on_flush(self.pos)

    def close(self) -> None:
        if self.fd >= 0:
            try:
                self.flush()
            finally:
                os.close(self.fd)
                self.fd = -1

    def abort(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def plan_copies(digests: dict[str, str], old: dict | None, slots) -> dict[str, frozenset[str]]:
    """The plan of a write: for each of ``slots``, the units whose block is copied from
    the last build's files (``old``, its state); every other block is written. A unit's
    block is copied when its digest is the one the old state recorded, the block is in
    the old file, and the unit did not open that slot there (the first block of a JSON
    array has no separator before it).

    >>> old = {"units": {"paper/a": ["d1", 3, 0, 10], "paper/b": ["d2", 3, 10, 20]}, "firsts": {}}
    >>> plan_copies({"paper/a": "d1", "paper/b": "new"}, old, ["nt"])
    {'nt': frozenset({'paper/a'})}
    """
    units, firsts = (old["units"], old["firsts"]) if old else ({}, {})
    plan = {}
    for slot in slots:
        i, first = COLUMN[slot], firsts.get(slot)
        plan[slot] = frozenset(u for u, d in digests.items()
                               if (row := units.get(u)) is not None and row[0] == d and row[i] >= 0 and u != first)
    return plan


class Blocks:
    """The last build's units (``old``, read from its folder), the plan of what is copied
    from its files (:func:`plan_copies`), and this build's record of where each unit
    went. See the module docstring."""

    def __init__(self, digests: dict[str, str], sinks: dict[str, Sink], old: dict | None = None,
                 old_dir: Path | None = None):
        self.digests, self.sinks = digests, sinks
        self.old_units: dict = old["units"] if old else {}
        self.units: dict[str, list] = {}  # unit -> [digest, triples, start, end per slot]
        self.firsts: dict[str, str] = {}
        self.reused = self.reused_papers = 0
        self._sources: dict[str, Source] = {}  # the old files, by name
        if old:
            for slot in SLOTS:
                if old["files"].get(SLOT_FILES[slot]) and SLOT_FILES[slot] not in self._sources:
                    self._sources[SLOT_FILES[slot]] = Source(old_dir / SLOT_FILES[slot])
        self._starts: dict[str, int] = {}
        rdf_slots = [f for f in ("nt", "ttl", "jsonld") if f in sinks]  # the RDF files written
        self.plan = plan_copies(digests, old, [*rdf_slots, "json.nodes", "json.links"])
        # a unit's RDF blocks are copied together or written together (one pass writes them all)
        self._rdf = frozenset.intersection(*(self.plan[f] for f in rdf_slots)) if rdf_slots else frozenset()

    def reusable(self, unit: str, slots=None) -> bool:
        """True if ``unit``'s blocks of ``slots`` (default: the RDF files written) are copied."""
        if slots is None:
            return unit in self._rdf
        return all(unit in self.plan[slot] for slot in slots)

    def share_reusable(self) -> float:
        """The share of this build's papers and entities whose blocks can be copied."""
        return len(self._rdf) / len(self.digests) if self.digests else 0.0

    # -- the RDF pass (kg.rdf.statements.write_rdf)
    def begin(self, unit: str) -> None:
        for fmt, sink in self.sinks.items():
            if fmt in ("nt", "ttl", "jsonld"):
                self._starts[fmt] = sink.pos

    def copy_unit(self, unit: str, writers: dict) -> int:
        old = self.old_units[unit]
        for fmt, w in writers.items():
            if w.first:  # a JSON separator would differ (never a paper: the run comes first)
                raise RuntimeError(f"cannot copy {unit}: it would open the {fmt} output")
            i = COLUMN[fmt]
            self.sinks[fmt].copy(self._sources[SLOT_FILES[fmt]], old[i], old[i + 1])
        self.reused += 1
        if unit.startswith("paper/"):
            self.reused_papers += 1
        self._record(unit, old[0], old[1])
        return old[1]

    def end(self, unit: str, triples: int, nt_text: str) -> None:
        digest = self.digests.get(unit)
        if digest is None:
            digest = _digest_bytes(nt_text.encode("utf-8"))
        self._record(unit, digest, triples)

    def _record(self, unit: str, digest: str, triples: int) -> None:
        row = [digest, triples] + [-1] * (2 * len(SLOTS))
        for fmt, start in self._starts.items():
            i = COLUMN[fmt]
            row[i], row[i + 1] = start, self.sinks[fmt].pos
        self.units[unit] = row

    # -- the graph.json pass (kg.io.graphjson.write_graph_json)
    def json_block(self, slot: str, unit: str, first: bool, sink: Sink, write) -> None:
        """Copy ``unit``'s block of ``slot`` if it can be, else call ``write()``; record its range."""
        start = sink.pos
        if not first and self.reusable(unit, (slot,)):
            old, i = self.old_units[unit], COLUMN[slot]
            sink.copy(self._sources[SLOT_FILES[slot]], old[i], old[i + 1])
        else:
            write()
        if first:
            self.firsts[slot] = unit
        row = self.units.get(unit)
        if row is None:
            row = self.units[unit] = [self.digests.get(unit, ""), 0] + [-1] * (2 * len(SLOTS))
        i = COLUMN[slot]
        row[i], row[i + 1] = start, sink.pos

    # -- what changed (for the store)
    def changed_triples(self, old_nt: str | Path, new_nt: str | Path) -> tuple[list, list]:
        """(what to remove from the last build's store, what to add to it), each a list of
        ``(start, end)`` ranges of a graph.nt (the old file for removals, ``new_nt`` for
        additions; adjacent ranges merged) and at most one ``bytes`` of whole N-Triples lines.

        A new unit's triples are added and a gone unit's removed, as ranges. A unit whose
        digest changed has its old and new blocks compared line by line, and only the lines
        in one and not the other move: an entity that gained a paper changes one triple of
        its dozens, its ``kg:paperCount`` (a +1% rebuild so removes a few percent of the
        triples whole blocks would). The N-Triples writer spells a
        triple one way and writes no blank nodes, so equal lines are equal triples.
        """
        nt = COLUMN["nt"]
        removed, added = [], []
        gone: list[bytes] = []  # lines of changed units' old blocks not in their new ones
        new: list[bytes] = []  # and the other way round
        with open(old_nt, "rb") as old_file, open(new_nt, "rb") as new_file:
            for unit, row in self.units.items():
                old = self.old_units.get(unit)
                if old is None:
                    added.append((row[nt], row[nt + 1]))
                elif old[0] != row[0]:
                    was = _read(old_file, old[nt], old[nt + 1]).split(b"\n")[:-1]
                    now = _read(new_file, row[nt], row[nt + 1]).split(b"\n")[:-1]
                    was_set, now_set = set(was), set(now)
                    gone += (line for line in was if line not in now_set)
                    new += (line for line in now if line not in was_set)
        for unit, old in self.old_units.items():
            if unit not in self.units:
                removed.append((old[nt], old[nt + 1]))
        removed, added = _merge(removed), _merge(added)
        if gone:
            removed.append(b"\n".join(gone) + b"\n")
        if new:
            added.append(b"\n".join(new) + b"\n")
        return removed, added

    def close(self) -> None:
        for src in self._sources.values():
            src.close()
        self._sources = {}

    def state(self, base: str, files: dict[str, list]) -> dict:
        return {"format": STATE_FORMAT, "code": code_fingerprint(), "base": base, "files": files,
                "firsts": self.firsts, "units": self.units}


def _read(f, start: int, end: int) -> bytes:
    """Bytes ``start`` to ``end`` of the open file ``f``."""
    parts = []
    while start < end:
        data = os.pread(f.fileno(), end - start, start)
        if not data:
            raise OSError(f"{f.name}: shorter than the build state says")
        parts.append(data)
        start += len(data)
    return b"".join(parts)


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted ranges with adjacent or overlapping ones joined.

    >>> _merge([(5, 9), (0, 5), (12, 14), (20, 20)])
    [(0, 9), (12, 14)]
    """
    out: list[list[int]] = []
    for s, e in sorted(r for r in ranges if r[1] > r[0]):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def read_state(outdir: Path, base: str, slots) -> tuple[dict | None, str]:
    """The last build's state in ``outdir`` if its blocks can be reused for a build
    writing ``slots`` with ``base``: (state, "") or (None, why not)."""
    path = outdir / STATE_FILE
    if not path.is_file():
        return None, "no previous build state"
    try:
        data = path.read_bytes()
        body, _, check = data.rstrip(b"\n").rpartition(b"\n")
        if check.decode("ascii") != _digest_bytes(body):
            return None, "the previous build state is damaged"
        state = loads(body)  # by orjson: half the time of json's parser
        if state.get("format") != STATE_FORMAT or state.get("code") != code_fingerprint():
            return None, "the previous build was made by other code"
        if state.get("base") != base:
            return None, "the base IRI changed"
        for slot in slots:
            name = SLOT_FILES[slot]
            if name not in state["files"]:
                return None, f"the previous build did not write {name}"
            if file_check(outdir / name) != state["files"][name]:
                return None, f"{name} is not the file the previous build wrote"
        if not isinstance(state.get("units"), dict) or not isinstance(state.get("firsts"), dict):
            return None, "the previous build state is damaged"
    except (OSError, ValueError, TypeError, KeyError, AttributeError, UnicodeDecodeError) as exc:
        return None, f"the previous build state is unreadable ({exc.__class__.__name__})"
    return state, ""


def write_state(path: Path, state: dict) -> None:
    """The state as one line of JSON, then a line with its digest (a damaged or edited
    state must not make a build copy the wrong bytes)."""
    # compact, keys sorted, by orjson (several times faster than json's encoder)
    body = dumps(state, sort_keys=True).encode("utf-8")
    path.write_bytes(body + b"\n" + _digest_bytes(body).encode("ascii") + b"\n")
