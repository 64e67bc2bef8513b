"""Kept resolution: a graph assembled from the last build's kept graph and the papers
resolved again is the graph a full resolution makes, node for node, edge for edge,
in the same order; the state file is used only when this user's builds signed it."""
from __future__ import annotations

import pickle
import random
from dataclasses import replace

import pytest

from kg.extract import extract_records
from kg.extract.cache import ExtractionCache
from kg.resolve.graph import build_graph
from kg.build.kept import resolve_graph
from kg.build.kept_files import MAGIC, load_kept, save_kept, state_path
from kg.model import Record
from kg.resolve.entities import resolve
from kg.build.reuse import unit_digests

from .test_incremental import corpus


def dump(G) -> tuple:
    """Everything of a networkx graph, in its order: nodes and their data, each node's
    out-links (neighbour, key, data) and in-links (neighbour, keys)."""
    nodes = [(n, list(d.items())) for n, d in G._node.items()]
    succ = [(u, [(v, [(k, list(d.items())) for k, d in keys.items()]) for v, keys in nbrs.items()])
            for u, nbrs in G._succ.items()]
    pred = [(v, [(u, list(keys)) for u, keys in nbrs.items()]) for v, nbrs in G._pred.items()]
    return nodes, succ, pred, dict(G.graph)


def shared_keys(G) -> bool:
    """Each edge's key dict is the same object seen from either end, as networkx keeps it."""
    return all(G._pred[v][u] is keys for u, nbrs in G._succ.items() for v, keys in nbrs.items()) and \
        sum(map(len, G._succ.values())) == sum(map(len, G._pred.values()))


def kept_and_loaded(kept, folder):
    """The state as the next build has it: written to a file (with the digests the write
    stage makes of its graph) and read back."""
    path = state_path(folder / "cache", folder / "out")
    save_kept(path, kept, folder / "keys", unit_digests(kept.G))
    previous, why = load_kept(path, folder / "keys")
    assert why == ""
    return previous


def known_digests_hold(res) -> bool:
    """The digests a kept resolution gives for the papers it took unchanged and the entities
    it did not touch are those the write stage would make of them now; and it gives some."""
    now = unit_digests(res.G)
    return bool(res.known) and all(now[p] == d for p, d in res.known.items())


def extracted(records, cache):
    ids: dict = {}
    exs = list(extract_records(records, cache=cache, identities=ids))
    return exs, ids


def variants(records: list[Record], rng: random.Random) -> list[Record]:
    """The next input of a series: some records dropped, some edited, new ones added."""
    out = []
    for r in records:
        x = rng.random()
        if x < 0.05:
            continue
        if x < 0.10:
            r = replace(r, title=f"{r.title or 'untitled'} (revised)", venue=rng.choice([None, "NeurIPS 2025"]))
        out.append(r)
    n = len(records)
    for i in range(rng.randrange(3, 12)):
        k = n + 1000 + rng.randrange(10_000)
        acro = rng.choice(["SN", "NE", "NT"])
        out.append(Record(doc=f"n{k}", source="t", index=k, title=f"New {k}",
                          abstract=f"We propose SegNet{k % 9} ({acro}{k % 5}N), a network for image segmentation "
                                   f"and object detection, evaluated on ImageNet. Code: github.com/Lab{k % 3}/seg{k % 4}."))
    for i in range(rng.randrange(2, 6)):  # other spellings of old names, and other expansions of their acronyms
        k = n + 20_000 + rng.randrange(10_000)
        j = rng.randrange(40)
        out.append(Record(doc=f"s{k}", source="t", index=k, abstract=(
            f"We use Net-{j} and NET{rng.randrange(40)} for semantic segmentation (run {k}). "
            f"We propose Neural Echo Network (NE{j % 7}N) for image segmentation.")))
    rng.shuffle(out)  # record order decides which record of a paper is first, and first mentions
    return out


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_kept_graph_with_the_changed_papers_resolved_again_is_the_full_graph(tmp_path, seed):
    rng = random.Random(seed)
    cache = ExtractionCache(tmp_path / "cache")
    records = corpus(80, seed)
    exs, ids = extracted(records, cache)
    kept = resolve_graph(records, exs, ids).kept
    assert dump(kept.G) == dump(build_graph(resolve(records, exs)))
    again_counts = []
    for _ in range(3):  # a series of builds, each from the last one's kept state
        records = variants(records, rng)
        exs, ids = extracted(records, cache)
        res = resolve_graph(records, exs, ids, kept_and_loaded(kept, tmp_path))
        assert dump(res.G) == dump(build_graph(resolve(records, exs)))
        assert shared_keys(res.G)
        assert known_digests_hold(res)
        assert sum(1 for u in res.known if u.startswith("paper/")) == res.papers - res.resolved
        assert any(not u.startswith("paper/") for u in res.known)  # entities' digests known too
        again_counts.append(res.resolved)
        assert res.papers == len({p for p, d in res.G.nodes(data=True) if d["type"] == "Paper"})
        kept = res.kept
    # most papers were taken from the kept graph, and some were resolved again
    assert all(0 < n < res.papers // 2 for n in again_counts), again_counts


def test_an_unchanged_input_resolves_no_paper_again_and_without_identities_all(tmp_path):
    cache = ExtractionCache(tmp_path / "cache")
    records = corpus(30, 7)
    exs, ids = extracted(records, cache)
    first = resolve_graph(records, exs, ids)
    assert resolve_graph(records, exs, ids, kept_and_loaded(first.kept, tmp_path)).resolved == 0
    assert resolve_graph(records, exs, None, kept_and_loaded(first.kept, tmp_path)).resolved == first.papers


def test_a_paper_whose_entity_is_renamed_elsewhere_is_resolved_again(tmp_path):
    """Adding papers that spell a method otherwise renames the entity (most papers'
    spelling): the old paper naming it is resolved again though its input is the same."""
    cache = ExtractionCache(tmp_path / "cache")
    one = [Record(doc="a", abstract="We use Graph-Net for node classification on Cora.", source="t", index=0)]
    exs, ids = extracted(one, cache)
    kept = resolve_graph(one, exs, ids).kept
    more = one + [Record(doc=f"b{i}", abstract=f"We use GraphNet for link prediction (study {i}).", source="t",
                         index=i + 1) for i in range(3)]
    exs, ids = extracted(more, cache)
    res = resolve_graph(more, exs, ids, kept_and_loaded(kept, tmp_path))
    assert dump(res.G) == dump(build_graph(resolve(more, exs)))
    assert res.resolved == 4  # the three new papers, and the old one


def test_the_state_loads_only_when_signed_by_this_users_key(tmp_path):
    cache = ExtractionCache(tmp_path / "cache")
    records = corpus(20, 3)
    exs, ids = extracted(records, cache)
    kept = resolve_graph(records, exs, ids).kept
    path = state_path(tmp_path / "cache", tmp_path / "out")
    save_kept(path, kept, tmp_path / "keys")
    loaded, why = load_kept(path, tmp_path / "keys")
    assert why == "" and loaded.papers == kept.papers
    assert loaded.nodes == {n: d for n, d in kept.G.nodes(data=True) if d["type"] == "Paper"}
    assert (tmp_path / "keys" / "kept.key").stat().st_mode & 0o077 == 0
    # another user's key, a file someone else wrote, a truncated file, none
    assert load_kept(path, tmp_path / "other")[0] is None
    data = path.read_bytes()
    forged = data[:len(MAGIC) + 32] + pickle.dumps(kept)[:-1] + b"."
    path.write_bytes(forged)
    assert load_kept(path, tmp_path / "keys") == (None, "not signed by this user's builds")
    path.write_bytes(data[:10])
    assert load_kept(path, tmp_path / "keys")[0] is None
    path.unlink()
    assert load_kept(path, tmp_path / "keys") == (None, "no state kept for this output folder")


def test_state_files_of_other_output_folders_are_kept_up_to_a_few(tmp_path):
    cache = ExtractionCache(tmp_path / "cache")
    records = corpus(5, 1)
    exs, ids = extracted(records, cache)
    kept = resolve_graph(records, exs, ids).kept
    paths = [state_path(tmp_path / "cache", tmp_path / f"out{i}") for i in range(6)]
    assert len(set(paths)) == 6
    for p in paths:
        save_kept(p, kept, tmp_path / "keys")
    left = sorted(p.name for p in (tmp_path / "cache" / "kept").iterdir())
    assert len(left) == 4 and paths[-1].name in left


def write_input(path, records) -> str:
    import json

    with open(path, "w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps({"id": r.doc, "title": r.title, "abstract": r.abstract, "venue": r.venue,
                                 "code": list(r.code)}) + "\n")
    return str(path)


def test_kg_build_into_a_built_folder_resolves_from_the_kept_state_and_writes_a_full_builds_files(
        tmp_path, monkeypatch, capsys):
    from kg.cli import main

    from .test_incremental import files, triples

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))  # the signing key's folder
    rng = random.Random(5)
    before = corpus(60, 5)
    after = variants(before, rng)
    out, full, cache = tmp_path / "out", tmp_path / "full", str(tmp_path / "cache")
    assert main(["build", write_input(tmp_path / "a.jsonl", before), "--out", str(out), "--cache", cache, "-v"]) == 0
    assert "kept resolution state: none (no state kept for this output folder)" in capsys.readouterr().err
    assert main(["build", write_input(tmp_path / "b.jsonl", after), "--out", str(out), "--cache", cache, "-v"]) == 0
    said = capsys.readouterr().err
    assert main(["build", str(tmp_path / "b.jsonl"), "--out", str(full), "--no-cache"]) == 0
    assert "papers, loaded in" in said and "unchanged papers taken from the last build" in said, said
    assert files(out) == files(full)
    assert triples(out) == triples(full)
    # a state that does not load (here: another user's) costs a full resolution, nothing else
    (tmp_path / "home-cache" / "abstract-kg" / "kept.key").write_bytes(b"k" * 32)
    assert main(["build", str(tmp_path / "b.jsonl"), "--out", str(out), "--cache", cache, "-v"]) == 0
    assert "kept resolution state: none (not signed by this user's builds)" in capsys.readouterr().err
    assert files(out) == files(full)


def test_a_build_that_cannot_make_its_signing_key_keeps_nothing_and_still_builds(tmp_path, monkeypatch, capsys):
    from kg.cli import main

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # ~/.cache/abstract-kg cannot be made under a file
    src = write_input(tmp_path / "a.jsonl", corpus(10, 2))
    out, cache = tmp_path / "out", str(tmp_path / "cache")
    for _ in range(2):
        assert main(["build", src, "--out", str(out), "--cache", cache, "-v"]) == 0
        assert "kept resolution state: none (no signing key in " in capsys.readouterr().err
    assert not (tmp_path / "cache" / "kept").exists()


def test_a_build_writes_only_what_changed_until_much_has_changed(tmp_path, monkeypatch):
    """After a full state, a build that changed few papers writes a delta next to it (the
    full state untouched); each delta holds all changes since the full state; once more
    papers changed than DELTA_MAX_SHARE allows, the full state is written again."""
    import kg.build.kept_files as kept_mod
    from kg.build.kept_files import delta_path

    rng = random.Random(11)
    monkeypatch.setattr(kept_mod, "DELTA_MAX_SHARE", 1.0)  # a small corpus: renames touch many of its papers
    cache = ExtractionCache(tmp_path / "cache")
    path = state_path(tmp_path / "cache", tmp_path / "out")
    records = corpus(80, 11)
    exs, ids = extracted(records, cache)
    res = resolve_graph(records, exs, ids)
    assert save_kept(path, res.kept, tmp_path / "keys", unit_digests(res.G)) == "full"
    full_bytes = path.read_bytes()
    sizes = []
    for _ in range(3):
        records = variants(records, rng)
        exs, ids = extracted(records, cache)
        res = resolve_graph(records, exs, ids, load_kept(path, tmp_path / "keys")[0])
        assert dump(res.G) == dump(build_graph(resolve(records, exs)))
        # papers changed by an earlier delta have the digests that delta kept, not the full state's
        assert known_digests_hold(res)
        assert save_kept(path, res.kept, tmp_path / "keys", unit_digests(res.G)) == "delta"
        assert path.read_bytes() == full_bytes
        sizes.append(delta_path(path).stat().st_size)
    # cumulative, and smaller than the full state (after three rounds of renames on 80 papers, ids being
    # slugs of labels, about half of it)
    assert sizes == sorted(sizes) and sizes[-1] < len(full_bytes) * 0.6
    monkeypatch.setattr(kept_mod, "DELTA_MAX_SHARE", 0.0)
    records = variants(records, rng)
    exs, ids = extracted(records, cache)
    res = resolve_graph(records, exs, ids, load_kept(path, tmp_path / "keys")[0])
    assert save_kept(path, res.kept, tmp_path / "keys") == "full"
    assert not delta_path(path).exists()
    again = resolve_graph(records, exs, ids, load_kept(path, tmp_path / "keys")[0])
    assert again.resolved == 0 and dump(again.G) == dump(build_graph(resolve(records, exs)))


def test_a_delta_that_is_not_of_the_full_state_is_left_out(tmp_path, monkeypatch):
    """A delta whose full state was replaced (or that does not verify) is ignored: the
    full state alone is an older, still valid, state."""
    import kg.build.kept_files as kept_mod
    from kg.build.kept_files import delta_path

    monkeypatch.setattr(kept_mod, "DELTA_MAX_SHARE", 1.0)

    rng = random.Random(12)
    cache = ExtractionCache(tmp_path / "cache")
    path = state_path(tmp_path / "cache", tmp_path / "out")
    first = corpus(40, 12)
    exs, ids = extracted(first, cache)
    save_kept(path, resolve_graph(first, exs, ids).kept, tmp_path / "keys")
    second = variants(first, rng)
    exs2, ids2 = extracted(second, cache)
    save_kept(path, resolve_graph(second, exs2, ids2, load_kept(path, tmp_path / "keys")[0]).kept, tmp_path / "keys")
    assert delta_path(path).exists()
    # the delta garbled: the full state (of `first`) is used, and the graph is still exact
    data = delta_path(path).read_bytes()
    delta_path(path).write_bytes(data[:-3] + b"xyz")
    previous, why = load_kept(path, tmp_path / "keys")
    assert why == "" and set(previous.nodes) == {p for p in build_graph(resolve(first, exs)).nodes if p.startswith("paper/")}
    res = resolve_graph(second, exs2, ids2, previous)
    assert dump(res.G) == dump(build_graph(resolve(second, exs2)))


def test_a_method_that_vanishes_and_comes_back_has_only_its_new_papers(tmp_path, monkeypatch):
    """Through deltas: a method proposed by one paper, gone with it, then proposed by
    another: its derived relation names only the new paper."""
    import kg.build.kept_files as kept_mod

    monkeypatch.setattr(kept_mod, "DELTA_MAX_SHARE", 1.0)
    cache = ExtractionCache(tmp_path / "cache")
    path = state_path(tmp_path / "cache", tmp_path / "out")
    other = [Record(doc=f"o{i}", abstract=f"We use BERT for question answering (case {i}).", source="t", index=i)
             for i in range(3)]
    a = Record(doc="a", abstract="We propose FooNet for image segmentation on Cityscapes.", source="t", index=9)
    b = Record(doc="b", abstract="We propose FooNet, a new network for image segmentation.", source="t", index=10)
    previous = None
    for records in (other + [a], other, other + [b]):
        exs, ids = extracted(records, cache)
        res = resolve_graph(records, exs, ids, previous)
        assert dump(res.G) == dump(build_graph(resolve(records, exs)))
        save_kept(path, res.kept, tmp_path / "keys")
        previous = load_kept(path, tmp_path / "keys")[0]
    derived = [d["derived_from"] for _, _, k, d in res.G.edges(keys=True, data=True) if k == "appliedTo"]
    assert derived and all(len(src) == 1 for src in derived), derived


def test_a_signed_state_that_does_not_unpickle_and_old_temporary_files(tmp_path):
    """A file signed with this user's key whose pickle is damaged is not used (no error);
    temporary files of killed builds older than an hour are removed by the next save."""
    import hmac
    import hashlib
    import os
    import time

    from kg.build.kept_files import signing_key

    cache = ExtractionCache(tmp_path / "cache")
    records = corpus(5, 4)
    exs, ids = extracted(records, cache)
    kept = resolve_graph(records, exs, ids).kept
    path = state_path(tmp_path / "cache", tmp_path / "out")
    path.parent.mkdir(parents=True)
    body = pickle.dumps({"version": "x"})[:-4]
    key = signing_key(tmp_path / "keys")
    path.write_bytes(MAGIC + hmac.new(key, body, hashlib.sha256).digest() + body)
    previous, why = load_kept(path, tmp_path / "keys")
    assert previous is None and why.startswith("unreadable ("), why
    stale, fresh = path.parent / ".x.pickle.abc", path.parent / ".y.pickle.def"
    stale.write_bytes(b"half")
    fresh.write_bytes(b"half")
    os.utime(stale, (time.time() - 7200, time.time() - 7200))
    save_kept(path, kept, tmp_path / "keys")
    assert not stale.exists() and fresh.exists()
    assert load_kept(path, tmp_path / "keys")[1] == ""
