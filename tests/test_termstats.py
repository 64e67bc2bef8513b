"""Phrase statistics of an unlabelled corpus: what they count and the features they give."""
from kg.extract.pipeline import make_nlp
from kg.extract.termstats import FIELDS, TermStats, count_phrases

#: Made-up abstracts: "large language" is always continued, "leaf counting" is a task.
ABSTRACTS = [
    ("Leaf Counting with Large Language Models",
     "We use large language models for leaf counting. The leaf counting task is hard.", ["leaf counting"]),
    ("Stem detection", "Large language models help stem detection and leaf counting.", []),
    ("A study", "We study leaf counting on the Quux dataset with large language models.", ["Quux"]),
    ("Another study", "The leaf counting problem and large language models.", []),
    ("More", "Leaf counting (LC) is studied using large language models.", []),
]


def corpus():
    tok = make_nlp(model=None).tokenizer
    words = lambda t: [x.text for x in tok(t) if not x.is_space]  # noqa: E731
    return [(words(t), words(a), [words(k) for k in kws]) for t, a, kws in ABSTRACTS]


def test_counts_of_a_phrase():
    rows = count_phrases(corpus())
    row = dict(zip(("count", *FIELDS), rows["leaf counting"]))
    assert row["count"] == 7 and row["title"] == 1 and row["kw"] == 1
    assert row["for"] == 1 and row["ntask"] == 2 and row["paren"] == 1 and row["det"] == 2
    # the plural is read as its singular; "large language" is nearly always continued
    assert rows["large language model"][0] == 6
    assert dict(zip(FIELDS, rows["large language"][1:]))["right"] == 6
    assert "stem detection" not in rows  # seen once: too rare to keep


def test_features_and_disk_round_trip(tmp_path):
    stats = TermStats(count_phrases(corpus()))
    assert "right=hi" in stats.features("large language")
    assert "right=0" in stats.features("leaf counting")
    assert stats.features("never seen") == ["df=rare"]
    assert TermStats().features("leaf counting") == []
    stats.to_disk(tmp_path)
    assert TermStats.from_disk(tmp_path).rows == stats.rows
    assert TermStats.from_disk(tmp_path / "missing").rows == {}
