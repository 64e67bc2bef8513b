"""Training data for the span classifier: annotated records in, labelled candidates out.

The gold (``GUIDELINES.md``) lists each entity as a set of surface forms, not spans. A
candidate is labelled with the type of the gold entity one of whose forms it equals under
the guideline's normalization (case, hyphens, plurals, markup); a candidate equal to an
optional entity is left out of training; every other candidate is ``none``.
"""
from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..model import Record
from ..text import compact_key

GREEK = dict(zip("αβγδεζηθικλμνξοπρστυφχψω",
                 "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi "
                 "omicron pi rho sigma tau upsilon phi chi psi omega".split()))
GOLD_FIELDS = (("methods_proposed", 1), ("methods_used", 2), ("tasks", 3), ("datasets", 4))


def gold_key(text: str) -> str:
    """The guideline's normalization of a surface form (as the shared scorer's)."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"</?[a-z][^>]*>", "", text)
    text = re.sub(r"\\(?:texttt|textit|emph|mathrm|textbf|url|mathbf)\s*", "", text)
    text = text.replace("$", "")
    text = "".join(" " + GREEK[c] + " " if c in GREEK else c for c in text)
    text = text.replace("ς", "sigma").replace("ϵ", "epsilon").replace("+", " plus ").replace("*", " star ")
    out = []
    for w in re.findall(r"[a-z0-9]+", text):
        if len(w) > 4 and w.endswith("ies"):
            w = w[:-3] + "y"
        elif len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.append(w)
    return "".join(out)


@dataclass
class Gold:
    """One annotated record: gold key -> class (1-4), and the keys of optional entities."""
    doc: str
    labels: dict[str, int] = field(default_factory=dict)
    optional: set[str] = field(default_factory=set)
    raw: dict = field(default_factory=dict)

    @classmethod
    def from_json(cls, obj: dict) -> Gold:
        g = cls(obj["doc"], raw=obj)
        for name, label in GOLD_FIELDS:
            for ent in obj.get(name, []):
                for form in ent:
                    g.labels.setdefault(gold_key(form), label)
        for ents in obj.get("optional", {}).values():
            for ent in ents:
                for form in ent:
                    k = gold_key(form)
                    if k not in g.labels:
                        g.optional.add(k)
        return g

    def label(self, text: str) -> int | None:
        """The class of a candidate's text, None when it is optional."""
        k = gold_key(text)
        if k in self.labels:
            return self.labels[k]
        return None if k in self.optional else 0


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def load_annotated(shared: Path) -> list[tuple[str, Record, Gold]]:
    """(set name, record, gold) for dev (the sample abstracts), dev2 and train."""
    from ..ingest import read_records, sample_paths

    out = []
    dev_gold = {o["doc"]: Gold.from_json(o) for o in read_jsonl(shared / "eval" / "gold" / "dev.jsonl")}
    for rec in read_records(sample_paths()):
        for doc_id in rec_ids(rec):
            if doc_id in dev_gold:
                out.append(("dev", rec, dev_gold[doc_id]))
    for name in ("dev2", "train"):
        gold = {o["doc"]: Gold.from_json(o) for o in read_jsonl(shared / "eval" / "gold" / f"{name}.jsonl")}
        for rec in read_records([shared / "eval" / name / "input.jsonl"]):
            if rec.doc in gold:
                out.append((name, rec, gold[rec.doc]))
    return out


def rec_ids(rec: Record) -> list[str]:
    return [rec.doc]


class Lexicon:
    """What the annotated records say of a compact key: in how many records it was
    annotated with each class, and in how many it occurred as a candidate."""

    def __init__(self):
        self.annotated: dict[str, list[int]] = {}
        self.seen: Counter = Counter()

    def add(self, seen_keys: set[str], labelled: dict[str, int]) -> None:
        for k in seen_keys:
            self.seen[k] += 1
        for k, c in labelled.items():
            self.annotated.setdefault(k, [0, 0, 0, 0, 0])[c] += 1

    def remove(self, seen_keys: set[str], labelled: dict[str, int]) -> None:
        for k in seen_keys:
            self.seen[k] -= 1
        for k, c in labelled.items():
            self.annotated[k][c] -= 1

    def features(self, key: str) -> list[str]:
        row = self.annotated.get(key)
        if row is None:
            return []
        seen = max(self.seen.get(key, 0), sum(row[1:]))
        out = []
        for c in range(1, 5):
            if row[c]:
                out.append(f"lx{c}={_bin(row[c])}")
                out.append(f"lxr{c}={_ratio(row[c], seen)}")
        if not any(row[1:]) and seen:
            out.append(f"lx0={_bin(seen)}")
        return out

    def to_json(self) -> dict:
        keep = sorted(k for k, row in self.annotated.items() if any(row[1:]))
        return {k: [self.seen.get(k, 0), *self.annotated[k][1:]] for k in keep}

    @classmethod
    def from_json(cls, obj: dict) -> Lexicon:
        lx = cls()
        for k, (seen, *row) in obj.items():
            lx.seen[k] = seen
            lx.annotated[k] = [0, *row]
        return lx


def _bin(n: int) -> str:
    return "1" if n == 1 else "2" if n == 2 else "3-5" if n <= 5 else "6+"


def _ratio(a: int, b: int) -> str:
    r = a / b if b else 1.0
    return "<.2" if r < .2 else "<.5" if r < .5 else "<.8" if r < .8 else "hi"


def doc_keys(texts: list[str], labels: list[int | None]) -> tuple[set[str], dict[str, int]]:
    """The compact keys a record's candidates have, and those with a class."""
    seen = {compact_key(t) for t in texts}
    labelled = {}
    for t, y in zip(texts, labels):
        if y:
            labelled[compact_key(t)] = y
    return seen, labelled
