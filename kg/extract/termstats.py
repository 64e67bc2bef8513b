"""How a phrase behaves across a corpus of abstracts: evidence of what it names.

A name like "early stopping" or "image classification" is used the same way in thousands
of abstracts, most of which nobody annotated. Counted over the unlabelled corpus, each
phrase of one to :data:`MAX_WORDS` words (read as candidates are, its last word singular)
gets a row of counts: how often it occurs, in titles, with a capital, as an author
keyword, how often a longer phrase continues it on either side ("large language" is
nearly always "large language model"), and how often it stands after "for" / "of" or
"using" / "via", before "task" / "problem", "algorithm" / "model", "dataset" /
"benchmark", "(" or after an article. The span classifier reads these as features
(:func:`TermStats.features`), so what the corpus says reaches names the annotated
records never contained.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import numpy

from kg.text import singular
from kg.extract.candidates import INNER, MAX_TERM_WORDS as MAX_WORDS, _breaks, _edge_ok, phrase_key

#: Phrases seen fewer times are not kept (a missing phrase reads as rare).
MIN_COUNT = 5

_PREV_FOR = frozenset("for of on in".split())
_PREV_USE = frozenset("using via with by use uses used apply applying applied employ employing".split())
_PREV_DET = frozenset("the a an".split())
_NEXT_TASK = frozenset("task tasks problem problems".split())
_NEXT_METHOD = frozenset("algorithm algorithms method methods model models network networks architecture "
                         "architectures framework approach approaches technique techniques estimator "
                         "estimators layer layers".split())
_NEXT_DATA = frozenset("dataset datasets benchmark benchmarks corpus corpora data".split())

#: The row of a phrase, after its count.
FIELDS = ("title", "cap", "kw", "right", "left", "for", "use", "det", "ntask", "nmethod", "ndata", "paren")


def _phrases(texts: list[str], lowers: list[str]) -> Iterable[tuple[int, int]]:
    """The (start, end) of each run that may name something (as candidate spans are cut)."""
    ok = [_edge_ok(t, w) for t, w in zip(texts, lowers)]
    stop = [_breaks(t, w) and w not in INNER for t, w in zip(texts, lowers)]
    n = len(texts)
    for i in range(n):
        if ok[i]:
            for j in range(i + 1, min(n, i + MAX_WORDS) + 1):
                if j - 1 > i and stop[j - 1]:
                    break
                if ok[j - 1]:
                    yield i, j


def count_phrases(docs: Iterable[tuple[list[str], list[str], list[list[str]]]]) -> dict[str, list[int]]:
    """{phrase key: [count, *FIELDS counts]} of every phrase seen :data:`MIN_COUNT` times
    or more. ``docs``: (title tokens, abstract tokens, keywords as token lists) each;
    iterated twice, so a list."""
    counts: Counter = Counter()
    for title, abstract, _ in docs:
        for part in (title, abstract):
            lowers = [t.lower() for t in part]
            lasts = [singular(w) for w in lowers]
            for i, j in _phrases(part, lowers):
                counts[phrase_key(lowers, lasts, i, j)] += 1
    rows = {k: [n] + [0] * len(FIELDS) for k, n in counts.items() if n >= MIN_COUNT}
    del counts
    for k, row in rows.items():  # the most frequent one-word-longer phrase on each side
        words = k.split(" ")
        if len(words) > 1:
            for side, sub in ((4, " ".join(words[:-2] + [singular(words[-2])])), (5, " ".join(words[1:]))):
                r = rows.get(sub)
                if r is not None and row[0] > r[side]:
                    r[side] = row[0]
    for title, abstract, keywords in docs:
        for kw in keywords:
            lowers = [t.lower() for t in kw]
            if lowers:
                r = rows.get(phrase_key(lowers, [singular(w) for w in lowers], 0, len(lowers)))
                if r is not None:
                    r[3] += 1
        for part, in_title in ((title, 1), (abstract, 0)):
            lowers = [t.lower() for t in part]
            lasts = [singular(w) for w in lowers]
            n = len(part)
            for i, j in _phrases(part, lowers):
                r = rows.get(phrase_key(lowers, lasts, i, j))
                if r is None:
                    continue
                r[1] += in_title
                r[2] += any(c.isupper() for t in part[i:j] for c in t)
                p = lowers[i - 1] if i else ""
                x = lowers[j] if j < n else ""
                r[6] += p in _PREV_FOR
                r[7] += p in _PREV_USE
                r[8] += p in _PREV_DET
                r[9] += x in _NEXT_TASK
                r[10] += x in _NEXT_METHOD
                r[11] += x in _NEXT_DATA
                r[12] += x == "("
    return rows


def _count_bin(c: int) -> str:
    return "<10" if c < 10 else "<50" if c < 50 else "<200" if c < 200 else "<1k" if c < 1000 else "1k+"


def _ratio_bin(a: int, c: int) -> str:
    r = a / c
    return "0" if a == 0 else "<.05" if r < .05 else "<.2" if r < .2 else "<.5" if r < .5 else "<.8" if r < .8 else "hi"


class TermStats:
    """The phrase table of a corpus and the features it gives a candidate."""

    def __init__(self, rows: dict[str, list[int]] | None = None):
        self.rows = rows or {}
        self._memo: dict[str, list[str]] = {}  # common phrases recur in every abstract

    def features(self, key: str) -> list[str]:
        out = self._memo.get(key)
        if out is None:
            row = self.rows.get(key)
            if row is None:
                out = ["df=rare"] if self.rows else []
            else:
                c = row[0]
                out = ["df=" + _count_bin(c)] + [f"{name}={_ratio_bin(a, c)}" for name, a in zip(FIELDS, row[1:])]
            if len(self._memo) >= 1 << 16:
                self._memo.clear()
            self._memo[key] = out
        return out

    def to_disk(self, folder: Path) -> None:
        """``termstats.txt`` (the phrases, one a line) and ``termstats.npy`` (their rows):
        read back in half the time of JSON."""
        folder = Path(folder)
        keys = sorted(self.rows)
        (folder / "termstats.txt").write_text("".join(k + "\n" for k in keys), encoding="utf-8")
        rows = numpy.array([self.rows[k] for k in keys], dtype=numpy.uint32).reshape(len(keys), 1 + len(FIELDS))
        numpy.save(folder / "termstats.npy", rows, allow_pickle=False)

    @classmethod
    def from_disk(cls, folder: Path) -> TermStats:
        folder = Path(folder)
        if not (folder / "termstats.npy").exists():
            return cls()
        keys = (folder / "termstats.txt").read_text(encoding="utf-8").split("\n")[:-1]
        rows = numpy.load(folder / "termstats.npy", allow_pickle=False).tolist()
        return cls(dict(zip(keys, rows)))
