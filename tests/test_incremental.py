"""Incremental builds: a build into a folder that holds a previous build copies the
unchanged papers' blocks and updates its store, and every file comes out exactly
as a full build of the same input would write it."""
from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path

import pyoxigraph as ox
import pytest

from kg.extract import extract_records
from kg.resolve.graph import build_graph
from kg.ingest import read_records, sample_paths
from kg.model import Record
from kg.pipeline.outputs import write_outputs
from kg.pipeline.staging import Staging
from kg.talk import Talk
from kg.resolve.entities import resolve
from kg.rdf.namespace import DEFAULT_BASE
from kg.pipeline.state import STATE_FILE, read_state
from kg.rdf.store import store_updates
import kg.rdf.store

SKIP = {"store"}


def corpus(n: int, seed: int) -> list[Record]:
    """Sample abstracts and variants: new method names, titles, venues, code links and
    repeated abstracts, so that a split changes entity names, counts and aliases."""
    rng = random.Random(seed)
    base = read_records(sample_paths())
    out = []
    for i in range(n):
        src = base[rng.randrange(len(base))]
        name = f"Net{rng.randrange(40)}"
        text = src.abstract if rng.random() < 0.1 else \
            f"We propose {name} ({name[:2].upper()}{i % 7}N) for image segmentation. {src.abstract} (Variant {i}.)"
        out.append(Record(doc=f"r{i}", abstract=text, source="t", index=i,
                          title=f"Paper {i}" if rng.random() < 0.7 else None,
                          venue=rng.choice([None, "ICML 2025", "ICLR 2025"]),
                          year=2025, code=(f"https://github.com/lab{i % 5}/{name.lower()}",) if i % 4 == 0 else ()))
    return out


def build(records: list[Record], out: Path, reuse: bool = True, base: str | None = None,
          staged: bool = False, store_compaction: str = "auto") -> list[str]:
    """write_outputs as the library calls it, or (``staged``) as ``kg build`` does: the
    JSON Lines files started in a forked child before the graph is resolved."""
    said: list[str] = []
    extractions = list(extract_records(records))
    kw = {"base": base} if base else {}
    with Staging(out) as staging:
        if staged:
            staging.start(extractions, records)
        G = build_graph(resolve(records, extractions))
        write_outputs(G, extractions, out, n_records=len(records), records=records, reuse=reuse,
                      talk=Talk(detail=said.append), staging=staging, store_compaction=store_compaction,
                      formats=("nt", "ttl", "jsonld"), **kw)
    return said


def reused(said: list[str]) -> tuple[int, ...]:
    """(papers copied, papers, entities copied, entities) from the build's reuse line."""
    m = re.match(r"reuse +([\d,]+) of ([\d,]+) papers and ([\d,]+) of ([\d,]+) entities copied", said[0])
    assert m, said
    return tuple(int(g.replace(",", "")) for g in m.groups())


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name not in SKIP}


def triples(folder: Path) -> list[str]:
    return sorted(str(q) for q in ox.Store.read_only(str(folder / "store")))


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_incremental_build_equals_a_full_build(tmp_path, seed):
    rng = random.Random(seed)
    records = corpus(90, seed)
    before = [r for r in records if rng.random() < 0.85]
    after = [r for r in records if r in before or rng.random() < 0.8]  # new records, and some dropped
    after = [r for r in after if not (r in before and rng.random() < 0.05)]
    inc, full = tmp_path / "inc", tmp_path / "full"
    build(before, inc)
    said = build(after, inc)
    build(after, full, reuse=False)
    assert files(inc) == files(full)
    assert triples(inc) == triples(full)
    papers, _, entities, total = reused(said)  # the blocks were reused, and not all of them
    assert 0 < papers < len(after) and 0 < entities < total


def test_without_posix_fadvise_a_rebuild_still_equals_a_full_build(tmp_path, monkeypatch):
    # macOS and Windows have no posix_fadvise: the copied blocks' pages are then left cached
    monkeypatch.delattr(os, "posix_fadvise", raising=False)
    records = corpus(40, 5)
    inc, full = tmp_path / "inc", tmp_path / "full"
    build(records[:30], inc)
    said = build(records, inc)
    build(records, full, reuse=False)
    assert reused(said)[0] > 0, said  # blocks were copied
    assert files(inc) == files(full)


def test_a_rebuild_of_the_same_input_copies_every_paper(tmp_path):
    records = corpus(40, 7)
    build(records, tmp_path / "out")
    first = files(tmp_path / "out")
    said = build(records, tmp_path / "out")
    nodes = json.loads(first["stats.json"])["nodes"]
    papers, entities = nodes["Paper"], sum(nodes[t] for t in ("Method", "Task", "Dataset", "CodeRepository"))
    assert reused(said) == (papers, papers, entities, entities), said
    assert "(0 triples removed, 0.0 MB of N-Triples added" in said[0]
    assert files(tmp_path / "out") == first


@pytest.mark.parametrize("damage", ["graph.nt.gz", "graph.json.gz", STATE_FILE, "base", "store"])
def test_nothing_is_reused_from_outputs_that_are_not_what_the_state_says(tmp_path, damage):
    records = corpus(40, 5)
    out = tmp_path / "out"
    build(records[:30], out)
    base = None
    if damage == "base":
        base = "https://example.org/other/"
    elif damage == "store":
        import shutil

        shutil.rmtree(out / "store")
    else:
        path = out / damage
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0x20  # same size, one byte changed
        path.write_bytes(bytes(data))
    said = build(records, out, base=base)
    assert said[0].startswith("reuse    none"), said
    build(records, tmp_path / "full", reuse=False, base=base)
    assert files(out) == files(tmp_path / "full")
    assert triples(out) == triples(tmp_path / "full")


def test_a_failed_incremental_build_leaves_the_previous_outputs(tmp_path, monkeypatch):
    import kg.pipeline.outputs

    records = corpus(40, 9)
    out = tmp_path / "out"
    build(records[:30], out)
    before = files(out)

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(kg.pipeline.outputs, "page_html", broken)
    with pytest.raises(RuntimeError):
        build(records, out)
    assert files(out) == before
    assert triples(out)  # the old store is still whole
    assert not list(tmp_path.glob(".out.tmp-*"))


@pytest.mark.parametrize("part, in_child", [("write_rdf", True), ("write_graph_json", True),
                                            ("draw_view", False)])
def test_an_error_of_the_block_writer_process_reaches_the_build(tmp_path, monkeypatch, part, in_child):
    """The blocks of an incremental build are written in a forked child, the views in the
    build process: an error of either (a full disk here) is the build's, and the previous
    outputs stay."""
    import errno

    import kg.pipeline.outputs
    from kg.pipeline.blocks import Blocks

    records = corpus(40, 11)
    out = tmp_path / "out"
    build(records[:30], out)
    before = files(out)

    def full_disk(*args, **kwargs):
        (tmp_path / "pid").write_text(str(os.getpid()))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(kg.pipeline.outputs if part == "draw_view" else Blocks, part, full_disk)
    with pytest.raises(OSError) as err:
        build(records, out)
    assert err.value.errno == errno.ENOSPC
    assert (int((tmp_path / "pid").read_text()) != os.getpid()) == in_child  # the child's, or this process's
    assert files(out) == before and triples(out)
    assert not list(tmp_path.glob(".out.tmp-*"))


def test_the_child_process_sends_its_messages_without_waiting_for_the_parent(tmp_path):
    """The block writer's child sends the store ranges (large at 100k papers), then goes on
    to the JSON Lines: a parent busy drawing views must not hold it at a full pipe."""
    import time

    from kg.pipeline.forked import Forked

    after = tmp_path / "after"

    def child(send):
        send(b"x" * (8 << 20))  # far more than a pipe holds
        after.write_text("sent")
        send(2)
        raise ValueError("then an error")

    writer = Forked(child)
    deadline = time.monotonic() + 30
    while not after.exists() and time.monotonic() < deadline:  # the parent reads nothing meanwhile
        time.sleep(0.01)
    assert after.exists()
    assert writer.next() == b"x" * (8 << 20) and not writer.done
    assert writer.next() == 2
    with pytest.raises(ValueError, match="then an error"):
        writer.next()
    assert writer.done


def test_a_message_sent_now_is_taken_as_it_arrives_the_others_in_order(tmp_path):
    """The store ranges start the store update at once, not when the build process is
    done with the view it draws; other messages still come through next(), in order."""
    import threading
    import time

    from kg.pipeline.forked import Forked

    got, arrived = [], threading.Event()

    def on_now(value):
        got.append(value)
        arrived.set()
        if value == "bad":
            raise KeyError("refused")

    def child(send):
        send(1)
        send({"ranges": [(0, 5)]}, now=True)
        send(2)
        send("bad", now=True)
        return 3

    writer = Forked(child, on_now=on_now)
    assert arrived.wait(30)  # while the parent has not asked for anything
    assert got[0] == {"ranges": [(0, 5)]}
    assert writer.next() == 1 and writer.next() == 2
    with pytest.raises(KeyError, match="refused"):
        writer.next()
    assert writer.done and got == [{"ranges": [(0, 5)]}, "bad"]
    plain = Forked(lambda send: send("x", now=True) or 4)  # without on_now: an ordinary message
    assert plain.next() == "x" and plain.next() == 4


def test_without_fork_the_blocks_are_written_in_the_build_process(tmp_path, monkeypatch):
    records = corpus(40, 13)
    build(records[:30], tmp_path / "inc")
    full = tmp_path / "full"
    build(records, full, reuse=False)
    monkeypatch.delattr(os, "fork")  # as on Windows
    said = build(records, tmp_path / "inc")
    assert reused(said)[0] > 0
    assert files(tmp_path / "inc") == files(full)


def test_the_store_update_removes_triples_with_any_text(tmp_path):
    # The old triples leave the store through SPARQL DELETE DATA: every escape the
    # N-Triples writer makes must mean the same there (a triple left behind shows here).
    odd = ['We propose "Quo\\teNet" \\ a back\\slash model\x01 with\ttabs for image classification.',
           "We propose ÆthirNet 🚀 (ÆN) for 画像分類 and\u2028line separators, evaluated on ImageNet.",
           "We propose CtrlNet\x7f\x1f\r\n for speech recognition on LibriSpeech."]
    records = corpus(30, 11)
    weird = [Record(doc=f"w{i}", abstract=t, source="t", index=100 + i, title=f'Odd "{i}" \\ title\x02')
             for i, t in enumerate(odd)]
    out = tmp_path / "out"
    build(records + weird, out)
    said = build(records[:25] + weird[1:], out)  # a weird paper gone, its entities' counts changed
    assert reused(said)[0] > 0
    build(records[:25] + weird[1:], tmp_path / "full", reuse=False)
    assert triples(out) == triples(tmp_path / "full")
    assert files(out) == files(tmp_path / "full")


def test_a_mostly_new_input_loads_the_store_in_full(tmp_path):
    out = tmp_path / "out"
    build(corpus(40, 21)[:12], out)
    said = build(corpus(40, 21), out)  # 12 of 40 papers known: the store is loaded, not patched
    assert "store loaded in full" in said[0], said
    build(corpus(40, 21), tmp_path / "full", reuse=False)
    assert files(out) == files(tmp_path / "full")
    assert triples(out) == triples(tmp_path / "full")


@pytest.mark.slow
def test_a_staged_build_writes_the_same_files_and_a_failed_one_keeps_the_last(tmp_path):
    records = corpus(40, 7)
    build(records, tmp_path / "plain", reuse=False)
    build(records, tmp_path / "staged", reuse=False, staged=True)
    assert files(tmp_path / "staged") == files(tmp_path / "plain")
    inc = tmp_path / "inc"
    build(records[:30], inc, staged=True)
    said = build(records, inc, staged=True)
    assert reused(said)[0] > 0 and files(inc) == files(tmp_path / "plain")
    before = files(inc)
    extractions = list(extract_records(records))
    with pytest.raises(AttributeError, match="object"):  # the child's error, raised here
        with Staging(inc) as staging:
            staging.start(extractions, [object()])  # a record that cannot be written
            write_outputs(build_graph(resolve(records, extractions)), extractions, inc, records=records,
                          staging=staging)
    assert files(inc) == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".inc.")]


def test_sink_bytes_the_same_with_a_small_writeback_window(tmp_path):
    """Text and copied ranges through a Sink whose dirty pages are written back and dropped
    every 4 KiB, the copies read 8 KiB at a time: the file holds exactly what was written,
    in order (on Linux the pages written before the last two windows were handed to the
    disk and dropped)."""
    import sys

    from kg.pipeline.writeback import Source
    from kg.pipeline.writeback import Sink

    rng = random.Random(7)
    old = tmp_path / "old.bin"
    old.write_bytes(bytes(rng.randrange(256) for _ in range(50_000)))
    source = Source(old, window=8192)
    expected = bytearray()
    sink = Sink(tmp_path / "new.bin", every=1000, window=4096)
    try:
        for i in range(60):
            if i % 3:
                text = f"<line {i}> é {'x' * rng.randrange(3000)}\n"
                sink.write(text)
                expected += text.encode("utf-8")
            else:
                start = rng.randrange(40_000)
                end = start + rng.randrange(1, 10_000)
                sink.copy(source, start, end)
                expected += old.read_bytes()[start:end]
        sink.close()
    finally:
        source.close()
    assert (tmp_path / "new.bin").read_bytes() == bytes(expected)
    assert sink.pos == sink.written == len(expected)
    if sys.platform.startswith("linux") and sink.writeback.enabled:
        assert sink.writeback.dropped > 0
        assert sink.writeback.started - sink.writeback.dropped <= 2 * 4096 + 10_000


def test_the_store_delta_moves_only_the_lines_that_changed(tmp_path):
    # A changed unit's old and new blocks are compared line by line; a new unit's block is
    # added and a gone unit's removed as byte ranges of their files.
    from kg.gzipped import member
    from kg.pipeline.blocks import Blocks
    from kg.pipeline.state import COLUMN, SLOTS

    def row(digest, start, end):
        r = [digest, 0] + [-1] * (2 * len(SLOTS))
        r[COLUMN["nt"]], r[COLUMN["nt"] + 1] = start, end
        return r

    old_lines = [b"<a> <p> <x> .\n", b'<a> <count> "3" .\n', b"<a> <q> <y> .\n", b"<c> <p> <z> .\n", b"<k> <p> <k> .\n"]
    new_lines = [b"<k> <p> <k> .\n", b"<a> <p> <x> .\n", b'<a> <count> "4" .\n', b"<a> <q> <y> .\n",
                 b"<b> <p> <x> .\n"]
    def gz_file(path, units):  # a gzip member a unit, as a build writes graph.nt.gz; their ends
        members = [member(b"".join(lines)) for lines in units]
        path.write_bytes(b"".join(members))
        return [sum(map(len, members[:i])) for i in range(len(members) + 1)]

    ends = gz_file(tmp_path / "old.nt.gz", [old_lines[:3], old_lines[3:4], old_lines[4:]])
    new_ends = gz_file(tmp_path / "new.nt.gz", [new_lines[:1], new_lines[1:4], new_lines[4:]])
    old = {"units": {"a": row("a1", ends[0], ends[1]), "c": row("c1", ends[1], ends[2]), "k": row("k1", ends[2], ends[3])},
           "firsts": {}, "files": {}}
    blocks = Blocks({}, {}, old, tmp_path)
    blocks.units = {"k": row("k1", new_ends[0], new_ends[1]), "a": row("a2", new_ends[1], new_ends[2]),
                    "b": row("b1", new_ends[2], new_ends[3])}
    removed, added = blocks.changed_triples(tmp_path / "old.nt.gz", tmp_path / "new.nt.gz")
    assert removed == [(ends[1], ends[2]), b'<a> <count> "3" .\n']  # unit c gone; one line of a
    assert added == [(new_ends[2], new_ends[3]), b'<a> <count> "4" .\n']  # unit b new; one line of a


@pytest.mark.slow
def test_a_rebuild_removes_from_the_store_only_the_triples_that_changed(tmp_path):
    # One paper more: the entities it names get a new kg:paperCount (and the odd new link or
    # alias); those triples leave the store, not the whole blocks of the changed entities.
    # The store is still a full build's.
    def units(folder: Path) -> dict:
        state, why = read_state(folder, DEFAULT_BASE, [])
        assert state is not None, why
        return state["units"]

    records = corpus(60, 13)
    out = tmp_path / "out"
    build(records[:59], out)
    before = units(out)
    said = build(records, out)
    after = units(out)
    changed = [u for u, row in after.items() if u in before and before[u][0] != row[0]]
    in_their_blocks = sum(before[u][1] for u in changed)  # the triples of their old blocks
    removed = int(re.search(r"\(([\d,]+) triples removed", said[0]).group(1).replace(",", ""))
    assert 0 < removed < in_their_blocks / 2, (said, in_their_blocks)
    build(records, tmp_path / "full", reuse=False)
    assert triples(out) == triples(tmp_path / "full")


@pytest.mark.parametrize("policy, expected", [("auto", [1, 0, 1, 0]), ("always", [0, 0, 0, 0]),
                                              ("never", [1, 2, 3, 4])])
@pytest.mark.slow
def test_an_updated_store_is_compacted_once_it_carries_enough_runs(tmp_path, monkeypatch, policy, expected):
    # Each rebuild below removes some triples and adds some: 2 table runs. With 4 runs allowed,
    # every second update compacts (auto); the count is the store's own, carried from build to
    # build, and the store always holds a full build's triples.
    monkeypatch.setattr(kg.rdf.store, "COMPACT_AFTER_RUNS", 4)
    records = corpus(60, 17)
    out = tmp_path / "out"
    build(records[:56], out)
    assert store_updates(out / "store") == {"updates": 0, "runs": 0}  # a full build's store: compacted
    seen = []
    for n in range(57, 61):
        said = build(records[:n], out, store_compaction=policy)
        assert "store updated" in said[0], said
        seen.append(store_updates(out / "store")["updates"])
        compacted = seen[-1] == 0
        assert ("compacted)" in said[0]) == compacted and (", compact " in said[0]) == compacted, said
        if not compacted:
            assert f"{seen[-1]} update{'s' if seen[-1] > 1 else ''} since its last compaction" in said[0], said
    assert seen == expected
    build(records, tmp_path / "full", reuse=False)
    assert triples(out) == triples(tmp_path / "full")
    assert files(out) == files(tmp_path / "full")


def test_an_unknown_store_compaction_is_refused(tmp_path):
    with pytest.raises(ValueError, match="store compaction 'sometimes'"):
        build(corpus(5, 3), tmp_path / "out", store_compaction="sometimes")


def test_an_edit_to_any_module_changes_what_caches_are_keyed_by(tmp_path):
    """Cached extractions and reused output blocks are keyed by a hash of the whole
    package: a module left out would serve stale results after an edit to it. Each
    module of the package in turn gets a line appended, in a copy of the package."""
    import shutil

    import kg
    from kg._source import source_hash

    root = tmp_path / "kg"
    shutil.copytree(Path(kg.__file__).parent, root, ignore=shutil.ignore_patterns("__pycache__", "model"))
    modules = sorted(root.rglob("*.py"))
    assert len(modules) > 40 and root / "extract" / "names.py" in modules
    before = source_hash("salt", root)
    for path in modules + [root / "web" / "templates" / "map.html", root / "resources" / "tasks.txt"]:
        text = path.read_bytes()
        path.write_bytes(text + b"\n")
        assert source_hash("salt", root) != before, path.relative_to(root)
        path.write_bytes(text)
    assert source_hash("salt", root) == before
