#!/usr/bin/env python3
"""Time and peak memory of `kg build` on hostile records, each alone in a JSON Lines file:

- a 50 MB abstract (cut at ingest, with a warning);
- records of common words with no full stop (one sentence), at growing lengths
  up to 1.2 MB: time and memory should grow linearly below the ingest cap and stay
  flat above it.

Each build runs `kg build FILE --no-cache` in a fresh process; its peak RSS is the
process's own and its workers' (``ru_maxrss``).

    python scripts/bench_hostile.py [--work DIR]
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORDS = ("we study image classification with a convolutional network on imagenet and compare the transformer "
         "model for language modeling using graph neural networks").split()


def words(n_chars: int) -> str:
    out, size, i = [], 0, 0
    while size < n_chars:
        out.append(WORDS[i % len(WORDS)])
        size += len(out[-1]) + 1
        i += 1
    return " ".join(out)[:n_chars]


def build(path: Path, out: Path) -> tuple[float, float, str]:
    """(seconds, peak RSS in MB, the warnings printed) of one build."""
    code = ("import resource, sys; from kg.cli import main; rc = main(sys.argv[1:]); "
            "print('PEAK', max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "
            "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss), file=sys.stderr); sys.exit(rc)")
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", code, "build", str(path), "-o", str(out), "--no-cache", "-q"],
                       capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - t
    if r.returncode != 0:
        raise SystemExit(f"kg build {path} failed:\n{r.stderr[-2000:]}")
    peak = int(r.stderr.rsplit("PEAK", 1)[1].split()[0]) / 1024
    warnings = [line for line in r.stderr.splitlines() if "warning" in line]
    shutil.rmtree(out)
    return seconds, peak, "; ".join(w[:120] for w in warnings)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, help="a folder for the inputs and builds (default: a temporary one)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-hostile-", dir=args.work))
    try:
        big = work / "big.jsonl"
        with big.open("w", encoding="utf-8") as fh:
            fh.write(json.dumps({"id": "big", "abstract": "We propose FooNet for image classification. "
                                 + words(50_000_000)}) + "\n")
        seconds, peak, said = build(big, work / "out")
        print(f"50 MB abstract: {seconds:.1f} s, peak {peak:.0f} MB; {said}", flush=True)
        rows = []
        for n in (200, 25_000, 50_000, 100_000, 1_200_000):
            path = work / f"words-{n}.jsonl"
            path.write_text(json.dumps({"id": f"w{n}", "abstract": words(n)}) + "\n", encoding="utf-8")
            seconds, peak, said = build(path, work / "out")
            rows.append((n, seconds, peak))
            print(f"{n:,} characters without a full stop: {seconds:.1f} s, peak {peak:.0f} MB"
                  + (f"; {said}" if said else ""), flush=True)
        (_, s_base, p_base), (n0, s0, p0), (n1, s1, p1) = rows[0], rows[1], rows[3]
        print(f"from {n0:,} to {n1:,} characters ({n1 / n0:.0f}x), above a {rows[0][0]}-character record's build: "
              f"time {(s1 - s_base) / (s0 - s_base):.2f}x, peak memory {(p1 - p_base) / (p0 - p_base):.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
