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


def test_cache_key_depends_on_text_title_and_pipeline():
    assert text_key("a", 0) != text_key("b", 0) != text_key("a", 3)
    assert len(fingerprint()) == 16
