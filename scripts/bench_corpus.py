#!/usr/bin/env python3
"""What a build of the whole corpus costs, in figures measured in one run:

- the full build (``kg build --workers 2 --no-cache``) against one process's bare
  ``spacy.blank("en")`` tokenization of the same texts (title + abstract); the
  tokenization runs before the build and after it, and the ratio takes their mean, so
  that a drift of this machine's speed cancels;
- the build's extraction phase in records a second a core (from its own log line),
  the peak resident set of its largest process, and the size of each output;
- ``kg extract``'s pipeline on one core (abstracts per second, and against the same
  tokenization).

    python scripts/bench_corpus.py [--corpus ../shared/data/corpus/abstracts.jsonl.gz]
                                   [--venues all|ml] [--limit N] [--extract-n 2000] [--out DIR]

``--out`` keeps the build folder (for ``scripts/bench_api.py``).
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ML_VENUES = frozenset("ICML NIPS ICLR AISTATS UAI COLT ACML COLM CORL AUTOML ALT".split())


def read(path: Path, venues: str, limit: int | None) -> list[dict]:
    out = []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            obj = json.loads(line)
            if venues == "ml" and obj.get("venue", "").rsplit(" ", 1)[0].upper() not in ML_VENUES:
                continue
            out.append(obj)
            if limit and len(out) >= limit:
                break
    return out


def tokenize_seconds(texts: list[str]) -> float:
    import spacy

    nlp = spacy.blank("en")
    t = time.perf_counter()
    for doc in nlp.pipe(texts, batch_size=256):
        pass
    return time.perf_counter() - t


def corpus_arguments(ap: argparse.ArgumentParser) -> None:
    """``--corpus``, ``--venues``, ``--limit``: which records of the corpus a benchmark takes."""
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "data" / "corpus" / "abstracts.jsonl.gz")
    ap.add_argument("--venues", choices=("ml", "all"), default="all")
    ap.add_argument("--limit", type=int)


#: The build's line that says how long its extraction took.
EXTRACTED = re.compile(r"from ([\d,]+) records in ([\d.]+) s")


#: A line of ``kg build --verbose`` that times one step.
STEP = re.compile(r"\w+: [\d.]+s( \(.*\))?")


def output_sizes(out: Path) -> dict[str, int]:
    """Bytes of each entry of a build folder (a folder's files summed), largest first."""
    sizes = {p.name: (sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.is_dir() else p.stat().st_size)
             for p in out.iterdir()}
    return dict(sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0])))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    corpus_arguments(ap)
    ap.add_argument("--extract-n", type=int, default=2000, help="records for the one-core kg extract rate")
    ap.add_argument("--out", type=Path, help="keep the build folder here (default: a temporary one)")
    args = ap.parse_args()
    records = read(args.corpus, args.venues, args.limit)
    texts = [f"{r.get('title') or ''}. {r['abstract']}" for r in records]
    kg = [sys.executable, "-m", "kg.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        inp = Path(tmp) / "records.jsonl"
        inp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
        out = args.out or Path(tmp) / "out"
        tok1 = tokenize_seconds(texts)
        t = time.perf_counter()
        log = subprocess.run([*kg, "build", str(inp), "--out", str(out), "--workers", "2", "--no-cache",
                              "--verbose"], check=True, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        build = time.perf_counter() - t
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # the largest process of the build
        sizes = output_sizes(out)
        tok2 = tokenize_seconds(texts)
        small = Path(tmp) / "small.jsonl"
        small.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records[:args.extract_n]),
                         encoding="utf-8")
        def extract_seconds(path: Path) -> float:
            t = time.perf_counter()
            subprocess.run([*kg, "extract", str(path), "-o", str(Path(tmp) / "ex.jsonl")], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
            return time.perf_counter() - t

        extract = extract_seconds(small)
        one = Path(tmp) / "one.jsonl"  # the process start: loading spaCy, the rules and the model
        one.write_text(json.dumps(records[0], ensure_ascii=False) + "\n", encoding="utf-8")
        start = extract_seconds(one)
        tok3 = tokenize_seconds(texts[:args.extract_n])
    tok = (tok1 + tok2) / 2
    n, m = len(records), min(args.extract_n, len(records))
    print(f"records: {n} ({args.venues} venues)")
    print(f"blank tokenization, one process: {tok1:.1f} s before the build, {tok2:.1f} s after ({n / tok:.0f}/s)")
    print(f"kg build --workers 2 --no-cache: {build:.1f} s = {build / tok:.1f}x the tokenization (target <= 8x)")
    m_ex = EXTRACTED.search(log.stdout + log.stderr)
    if m_ex:
        done, seconds = int(m_ex.group(1).replace(",", "")), float(m_ex.group(2))
        print(f"its extraction: {done} records in {seconds:.1f} s = {done / seconds / 2:.0f} records/s a core "
              "(two workers; target >= 300)")
    print("its steps:", "; ".join(line.strip() for line in (log.stdout + log.stderr).splitlines()
                                  if STEP.fullmatch(line.strip())))
    print(f"peak resident set of its largest process: {peak_mb:,.0f} MB (target <= 2,048)")
    print(f"outputs: {sum(sizes.values()) / 1e9:.2f} GB (target <= 2.5): "
          + ", ".join(f"{name} {size / 1e9:.2f}" for name, size in sizes.items()))
    print(f"kg extract, one core, {m} records: {extract:.1f} s = {m / extract:.0f} abstracts/s with the process "
          f"start ({start:.1f} s), {m / (extract - start):.0f}/s after it (target >= 100/s); "
          f"{extract / tok3:.1f}x their tokenization")
    return 0


if __name__ == "__main__":
    sys.exit(main())
