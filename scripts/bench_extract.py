#!/usr/bin/env python3
"""Extraction speed: abstracts per second of `kg extract`'s pipeline against
bare `spacy.blank("en")` tokenization of the same texts, measured in one run
(the ratio is what to compare across machines; these machines are noisy).

    python scripts/bench_extract.py [--n 2000] [--repeat 3]

Texts: the SciREX abstracts, SciERC train/dev abstracts and the sample
abstracts, cycled with a running suffix so that every text is distinct (the
pipeline processes identical texts once). Single process, one core.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import spacy  # noqa: E402

from kg.extract import extract_records, make_nlp  # noqa: E402
from kg.ingest import read_records, sample_paths  # noqa: E402
from kg.model import Record  # noqa: E402


def corpus(shared: Path, n: int) -> list[str]:
    base = [r.abstract for r in read_records(sample_paths())]
    scirex = shared / "data" / "scirex" / "abstracts.jsonl"
    if scirex.is_file():
        base += [json.loads(x)["abstract"] for x in scirex.read_text(encoding="utf-8").splitlines()]
    for split in ("train", "dev"):
        p = shared / "data" / "scierc" / f"{split}.jsonl"
        if p.is_file():
            base += [json.loads(x)["text"] for x in p.read_text(encoding="utf-8").splitlines()]
    return [f"{base[i % len(base)]} (Copy {i}.)" for i in range(n)]


def best_of(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    args = ap.parse_args()
    try:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    except (AttributeError, OSError):
        pass
    texts = corpus(args.shared, args.n)
    records = [Record(doc=f"b{i}", abstract=t, source="bench", index=i) for i, t in enumerate(texts)]
    words = sum(len(t.split()) for t in texts)
    blank = spacy.blank("en")
    nlp = make_nlp()
    list(extract_records(records[:50], nlp=nlp))  # warm up (gazetteer matchers, caches)

    t_tok = best_of(args.repeat, lambda: [blank.make_doc(t) for t in texts])
    t_ext = best_of(args.repeat, lambda: list(extract_records(records, nlp=nlp)))
    print(f"{len(texts)} abstracts, {words} words, best of {args.repeat}, one core")
    print(f"spacy.blank('en') tokenization : {len(texts) / t_tok:10.0f} abstracts/s")
    print(f"kg extract pipeline            : {len(texts) / t_ext:10.0f} abstracts/s")
    print(f"ratio extraction / tokenization time: {t_ext / t_tok:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
