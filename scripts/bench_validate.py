#!/usr/bin/env python3
"""What ``kg validate`` costs beside the build it checks, measured in one run: the full
build of the corpus's ML-venue records (``kg build --workers 2 --no-cache``), then
``kg validate`` of it (the shapes compiled to SPARQL on its store), and the ratio.

    python scripts/bench_validate.py [--corpus ../shared/data/corpus/abstracts.jsonl.gz]
                                     [--venues ml|all] [--limit N] [--pyshacl]

``--pyshacl`` also times ``kg validate --engine pyshacl`` (hours at this size: for a
small ``--limit`` only).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from bench_corpus import corpus_arguments, read  # noqa: E402


def timed(args: list[str]) -> float:
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "kg.cli", *args], cwd=ROOT, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(done.stderr)
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    corpus_arguments(ap)
    ap.add_argument("--pyshacl", action="store_true")
    args = ap.parse_args()
    records = read(args.corpus, args.venues, args.limit)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "records.jsonl"
        src.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        out = Path(tmp) / "out"
        build = timed(["build", str(src), "--out", str(out), "--workers", "2", "--no-cache", "-q"])
        validate = timed(["validate", "-s", str(out), "-q"])
        print(f"{len(records):,} records: build {build:.1f} s, kg validate {validate:.1f} s "
              f"({validate / build:.2f}x the build)")
        if args.pyshacl:
            slow = timed(["validate", "-s", str(out), "-q", "--engine", "pyshacl"])
            print(f"kg validate --engine pyshacl {slow:.1f} s ({slow / validate:.1f}x the SPARQL engine)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
