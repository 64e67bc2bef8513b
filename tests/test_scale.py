"""Parallel extraction and the extraction cache give the same results as a plain run."""
import os

import pytest

from kg import extract
from kg.extract import extract_records
from kg.extract.cache import ExtractionCache, fingerprint, text_key
from kg.ingest import read_records, sample_paths
from kg.model import Record


def corpus(n: int):
    base = read_records(sample_paths())
    return [Record(doc=f"c{i}", abstract=f"{base[i % len(base)].abstract} (Variant {i}.)", source="t", index=i)
            for i in range(n)]


@pytest.mark.slow
def test_two_workers_give_the_same_extractions(monkeypatch):
    monkeypatch.setattr(extract, "SECOND_PASS_POOL_MIN", 200)  # the corpus-name pass in the workers too
    recs = corpus(260)
    one = list(extract_records(recs, workers=1))
    two = list(extract_records(recs, workers=2))
    assert one == two


@pytest.mark.slow
def test_cache_hits_give_the_same_extractions(tmp_path):
    recs = corpus(120)
    plain = list(extract_records(recs))
    cache = ExtractionCache(tmp_path)
    first = list(extract_records(recs, cache=cache))
    assert (cache.hits, cache.misses) == (0, 120)
    more = recs + corpus(130)[120:]
    second = list(extract_records(more, cache=cache))
    assert (cache.hits, cache.misses) == (120, 130)  # only the new texts were extracted
    assert first == plain and second[:120] == plain
    cache.close()


def test_cached_results_share_their_repeated_strings(tmp_path):
    """A decoded result holds one object per distinct sentence, name and rule, not one per
    mention (equal values: the test above); memory a build faults in and its children copy."""
    recs = corpus(40) + [_defining(0, "ZorbNet"), _using(0, "ZorbNet")]  # and the corpus-name pass
    cache = ExtractionCache(tmp_path)
    fresh = list(extract_records(recs, cache=cache))
    hits = list(extract_records(recs, cache=cache))
    assert cache.hits == len(recs)
    cache.close()
    for run in (fresh, hits):  # spaCy's results in this process, then the cache's decoded
        mentions = [m for ex in run for m in ex.mentions]
        sentences = {(ex.doc, m.sentence) for ex in run for m in ex.mentions}
        assert len(mentions) > len(sentences)  # some sentences name several things
        assert len({id(m.sentence) for m in mentions}) == len(sentences)
        assert any(m.source == "kg_corpus" for m in mentions)
    assert len({id(m.source) for m in mentions}) == len({m.source for m in mentions})
    for ex in hits:
        texts = {m.text: m.text for m in ex.mentions}
        for e in ex.entities:
            assert all(m.text is texts[m.text] for m in e.mentions)
            assert e.name not in texts or e.name is texts[e.name]


def _defining(i: int, name: str) -> Record:
    return Record(doc=f"d{i}", abstract=f"We propose {name}, a new model for image segmentation. "
                  f"{name} improves accuracy on several benchmarks.", source="t", index=1000 + i)


def _using(i: int, names: str) -> Record:
    # phrased so that the first pass misses the first name (the shipped model does): the
    # corpus-name pass must add it where a paper of the corpus defines it
    return Record(doc=f"u{i}", abstract=f"Robust training is studied here ({i}); see {names} in the appendix.",
                  source="t", index=2000 + i)


@pytest.mark.slow
def test_corpus_name_pass_reuses_stored_results_that_still_hold(tmp_path):
    """Names defined by added or dropped papers reach (or leave) exactly the texts they
    should: with a cache, each corpus gets what a run without one gives."""
    cache = ExtractionCache(tmp_path)
    users = [_using(i, "QuillFormer and ZorbNet") for i in range(3)] + [_using(9, "plain baselines")]
    base = corpus(40) + users + [_defining(1, "QuillFormer")]
    grown = base + [_defining(2, "ZorbNet")]  # a new name, used by texts already built
    # a first definer with an expansion: QuillFormer's lexicon entry changes, its texts gain the long form
    renamed = [Record(doc="e", abstract="We propose the Quill Former Network (QuillFormer), a model for image "
                      "segmentation.", source="t", index=999)] + grown
    for recs in (base, grown, renamed, base, grown):
        assert list(extract_records(recs, cache=cache)) == list(extract_records(recs)), [r.doc for r in recs[-2:]]
    names = {e.name for ex in extract_records(grown, cache=cache) if ex.doc == "u0" for e in ex.entities}
    assert {"ZorbNet", "QuillFormer"} <= names  # the test exercises propagation at all
    lexicons, rows = (cache.db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("lexicon", "corpus_pass"))
    assert lexicons == 3 and rows == len({r.abstract for r in renamed})
    cache.close()


@pytest.mark.slow
def test_corpus_name_pass_with_a_cache_in_two_workers(tmp_path, monkeypatch):
    monkeypatch.setattr(extract, "SECOND_PASS_POOL_MIN", 200)
    cache = ExtractionCache(tmp_path)
    base = corpus(230) + [_using(i, "ZorbNet") for i in range(3)]
    grown = base + [_defining(2, "ZorbNet")]
    plain = list(extract_records(grown))
    list(extract_records(base, cache=cache, workers=2))  # over 200 texts: the pass runs in the workers
    assert list(extract_records(grown, cache=cache, workers=2)) == plain
    assert list(extract_records(corpus(240) + grown[230:], cache=cache, workers=2)) == \
        list(extract_records(corpus(240) + grown[230:]))
    cache.close()


def test_corpus_name_pass_results_go_with_their_lexicon(tmp_path):
    cache = ExtractionCache(tmp_path)
    cache.KEEP_LEXICONS = 1
    first = corpus(20) + [_defining(1, "ZorbNet"), _using(1, "ZorbNet")]
    second = corpus(20)[:5] + [_defining(2, "QuillFormer"), _using(2, "QuillFormer")]
    list(extract_records(first, cache=cache))
    assert list(extract_records(second, cache=cache)) == list(extract_records(second))
    # the first corpus's lexicon was dropped, and its results with it: the second's stay
    assert cache.db.execute("SELECT COUNT(*) FROM lexicon").fetchone()[0] == 1
    assert cache.db.execute("SELECT COUNT(*) FROM corpus_pass").fetchone()[0] == len(second)
    assert list(extract_records(first, cache=cache)) == list(extract_records(first))
    cache.close()


def test_opening_a_cache_removes_other_pipelines_stale_files(tmp_path):
    import os
    import time

    old, recent = tmp_path / "extractions-0.1.0-aaaa.sqlite", tmp_path / "extractions-0.1.0-bbbb.sqlite"
    other = tmp_path / "notes.sqlite"
    for p in (old, recent, other):
        p.write_bytes(b"x")
    month_ago = time.time() - 40 * 86400
    os.utime(old, (month_ago, month_ago))
    os.utime(other, (month_ago, month_ago))
    cache = ExtractionCache(tmp_path)
    assert not old.exists() and recent.exists() and other.exists() and cache.path.exists()
    cache.close()


def test_cache_key_depends_on_text_title_and_pipeline():
    assert text_key("a", 0) != text_key("b", 0) != text_key("a", 3)
    assert len(fingerprint()) == 16


# --- Dask -------------------------------------------------------------------------------------------

import subprocess  # noqa: E402
import sys  # noqa: E402

from kg.extract.dask_cluster import ClusterError, dask_client  # noqa: E402


@pytest.fixture(scope="module")
def local_dask():
    pytest.importorskip("distributed")
    with dask_client("local", workers=2) as client:
        yield client


@pytest.mark.slow
def test_dask_local_cluster_gives_the_same_extractions(local_dask):
    recs = corpus(150)
    assert len(local_dask.scheduler_info()["workers"]) == 2
    # both passes (spaCy, then names defined elsewhere in the corpus) run on the cluster
    assert list(extract_records(recs, dask=local_dask)) == list(extract_records(recs))


@pytest.mark.slow
def test_kg_build_on_dask_writes_the_same_rdf(tmp_path, built):
    pytest.importorskip("distributed")
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "kg.cli", "build", "--dask", "local", "--workers", "2", "--no-cache",
                        "--rdf", "nt,ttl,jsonld", "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "extracting on 2 Dask workers at local" in r.stderr
    for name in ("graph.nt.gz", "graph.ttl.gz", "graph.jsonld.gz", "graph.json.gz", "extractions.jsonl.gz"):
        assert (out / name).read_bytes() == (built / name).read_bytes(), name


def test_unreachable_dask_scheduler_is_a_clear_error():
    pytest.importorskip("distributed")
    with pytest.raises(ClusterError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        with dask_client("tcp://127.0.0.1:9", timeout="1s"):
            pass


@pytest.mark.slow
def test_a_build_of_cached_texts_does_not_import_spacy(tmp_path):
    """spaCy is imported where a text goes through the pipeline: a build whose texts are all
    cached never imports it (about 1.5 s of every rebuild)."""
    code = ("import sys; from kg.cli import main; "
            f"rc = main(['build', '--out', {str(tmp_path / 'out')!r}, '--cache', {str(tmp_path / 'cache')!r}]); "
            "print(rc, 'spacy' in sys.modules)")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()[-2:]
            for _ in range(2)]
    assert runs == [["0", "True"], ["0", "False"]]  # the first build extracts, the second finds every text cached
