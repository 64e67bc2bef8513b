"""Incremental builds: copy what did not change from the last build's files.

A build writes ``build-state.json`` beside its outputs. For every *unit* (the
extraction run, or one node with the mentions of its statements; see
:func:`kg.rdf.statements.units`) it keeps a digest, the unit's number of triples, and the
byte range of its blocks (a gzip member each) in ``graph.nt.gz`` and, when written,
``graph.ttl.gz`` and ``graph.jsonld.gz``, and of the node and link sections of
``graph.json``.

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

import os
from pathlib import Path

import networkx as nx

from kg.io.graphjson import generate_graph_json
from kg.pipeline.digests import STATE_FORMAT, code_fingerprint, digest_bytes
from kg.pipeline.state import COLUMN, SLOT_FILES, SLOTS
from kg.gzipped import gunzip
from kg.pipeline.writeback import Sink, Source
from kg.rdf.serialize import generate_rdf

#: Below this share of papers reused, the store is loaded in full (a delta would not be cheaper).
DELTA_MIN_SHARE = 0.5


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
        rdf_slots = [f for f in ("nt", "ttl", "jsonld") if f in sinks]  # the RDF files written
        self.plan = plan_copies(digests, old, [*rdf_slots, "json.nodes", "json.links"])
        # a unit's RDF blocks are copied together or written together (one pass writes them all)
        self.rdf_copied = frozenset.intersection(*(self.plan[f] for f in rdf_slots)) if rdf_slots else frozenset()

    def share_reusable(self) -> float:
        """The share of this build's papers and entities whose blocks can be copied."""
        return len(self.rdf_copied) / len(self.digests) if self.digests else 0.0

    # -- the files: each unit's blocks copied or rendered
    def write_rdf(self, G: nx.MultiDiGraph, formats, base: str, usages: dict) -> int:
        """The RDF files of ``formats`` (:func:`kg.rdf.serialize.generate_rdf`), each
        unit's blocks copied from the last build's files if it can be, else rendered;
        records where each unit went and returns the number of triples."""
        n = 0
        for unit, texts, count in generate_rdf(G, formats, base, usages, skip=self.rdf_copied):
            starts = {fmt: self.sinks[fmt].pos for fmt in formats}
            if texts is None:
                old = self.old_units[unit]
                for fmt in formats:
                    i = COLUMN[fmt]
                    self.sinks[fmt].copy(self._sources[SLOT_FILES[fmt]], old[i], old[i + 1])
                self.reused += 1
                self.reused_papers += unit.startswith("paper/")
                digest, count = old[0], old[1]
            else:
                for fmt, text in texts.items():
                    self.sinks[fmt].write(text)
                if unit is None:  # a file's head or end
                    continue
                digest = self.digests.get(unit) or digest_bytes(texts.get("nt", "").encode("utf-8"))
            n += count
            row = self.units[unit] = [digest, count] + [-1] * (2 * len(SLOTS))
            for fmt, start in starts.items():
                row[COLUMN[fmt]], row[COLUMN[fmt] + 1] = start, self.sinks[fmt].pos
        return n

    def write_graph_json(self, G: nx.MultiDiGraph, sink: Sink) -> None:
        """graph.json (:func:`kg.io.graphjson.generate_graph_json`), each unit's node and
        links copied from the last build's file if they can be, else rendered; records
        where each went."""
        for slot, unit, text in generate_graph_json(G, skip=self.plan):
            start = sink.pos
            if text is None:
                old, i = self.old_units[unit], COLUMN[slot]
                sink.copy(self._sources[SLOT_FILES[slot]], old[i], old[i + 1])
            else:
                sink.write(text)
            if slot is None:
                continue
            self.firsts.setdefault(slot, unit)
            row = self.units.get(unit)
            if row is None:
                row = self.units[unit] = [self.digests.get(unit, ""), 0] + [-1] * (2 * len(SLOTS))
            row[COLUMN[slot]], row[COLUMN[slot] + 1] = start, sink.pos

    # -- what changed (for the store)
    def changed_triples(self, old_nt: str | Path, new_nt: str | Path) -> tuple[list, list]:
        """(what to remove from the last build's store, what to add to it), each a list of
        ``(start, end)`` ranges of whole gzip members of a graph.nt.gz (the old file for
        removals, ``new_nt`` for additions; adjacent ranges merged) and at most one
        ``bytes`` of whole N-Triples lines.

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
                    was = gunzip(_read(old_file, old[nt], old[nt + 1])).split(b"\n")[:-1]
                    now = gunzip(_read(new_file, row[nt], row[nt + 1])).split(b"\n")[:-1]
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
