"""Parallel extraction and the extraction cache give the same results as a plain run."""
from kg.extract import extract_records
from kg.extract.cache import ExtractionCache, fingerprint, text_key
from kg.ingest import read_records, sample_paths
from kg.model import Record


def corpus(n: int):
    base = read_records(sample_paths())
    return [Record(doc=f"c{i}", abstract=f"{base[i % len(base)].abstract} (Variant {i}.)", source="t", index=i)
            for i in range(n)]


def test_two_workers_give_the_same_extractions():
    recs = corpus(260)
    one = list(extract_records(recs, workers=1))
    two = list(extract_records(recs, workers=2))
    assert one == two


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

import pytest  # noqa: E402

from kg.cluster import ClusterError, dask_client  # noqa: E402


@pytest.fixture(scope="module")
def local_dask():
    pytest.importorskip("distributed")
    with dask_client("local", workers=2) as client:
        yield client


def test_dask_local_cluster_gives_the_same_extractions(local_dask):
    recs = corpus(150)
    assert len(local_dask.scheduler_info()["workers"]) == 2
    # both passes (spaCy, then names defined elsewhere in the corpus) run on the cluster
    assert list(extract_records(recs, dask=local_dask)) == list(extract_records(recs))


def test_kg_build_on_dask_writes_the_same_rdf(tmp_path, built):
    pytest.importorskip("distributed")
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "kg.cli", "build", "--dask", "local", "--workers", "2", "--no-cache",
                        "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "dask     2 workers at local" in r.stderr
    for name in ("graph.nt", "graph.ttl", "graph.jsonld", "extractions.jsonl"):
        assert (out / name).read_bytes() == (built / name).read_bytes(), name


def test_unreachable_dask_scheduler_is_a_clear_error():
    pytest.importorskip("distributed")
    with pytest.raises(ClusterError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        with dask_client("tcp://127.0.0.1:9", timeout="1s"):
            pass
