#!/usr/bin/env python3
"""Extraction speed: corpus records per second of `kg extract`'s pipeline on one
core, after the model is loaded, against bare `spacy.blank("en")` tokenization of
the same titles and abstracts, measured in one run (the ratio is what to compare
across machines; these machines are noisy).

    python scripts/bench_extract.py [--n 5000] [--repeat 1]

Records: every k-th record of the corpus (k chosen to spread ``--n`` records over
all of it, so every venue and year is in the sample), titles and abstracts as
they are. Single process, one core.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import spacy  # noqa: E402

from kg.extract import extract_records, make_nlp  # noqa: E402
from kg.model import Record  # noqa: E402


def corpus_records(path: Path, n: int) -> list[Record]:
    """``n`` records spread evenly over the corpus file, in its order."""
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        lines = fh.readlines()
    step = max(1, len(lines) // n)
    out = []
    for i, line in enumerate(lines[::step][:n]):
        obj = json.loads(line)
        out.append(Record(doc=obj["id"], abstract=obj["abstract"], title=obj.get("title"),
                          source="bench", index=i))
    return out


def best_of(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "data" / "corpus" / "abstracts.jsonl.gz")
    args = ap.parse_args()
    try:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    except (AttributeError, OSError):
        pass
    records = corpus_records(args.corpus, args.n)
    texts = [f"{r.title or ''}\n{r.abstract}" for r in records]
    blank = spacy.blank("en")
    nlp = make_nlp()
    list(extract_records(records[-50:], nlp=nlp))  # warm up (the model loads, matchers compile)

    t_tok = best_of(args.repeat, lambda: [blank.make_doc(t) for t in texts])
    t_ext = best_of(args.repeat, lambda: list(extract_records(records, nlp=nlp)))
    words = sum(len(t.split()) for t in texts)
    print(f"{len(records)} corpus records, {words} words, best of {args.repeat}, one core")
    print(f"spacy.blank('en') tokenization : {len(records) / t_tok:10.0f} records/s")
    print(f"kg extract pipeline            : {len(records) / t_ext:10.1f} records/s")
    print(f"ratio extraction / tokenization time: {t_ext / t_tok:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
