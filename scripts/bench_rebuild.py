#!/usr/bin/env python3
"""A full build against a +1% rebuild, and against the same build by another commit.

For the code in this checkout and, with ``--against REF``, the code of that commit
(extracted with ``git archive`` into a temporary folder), alternated:

- a full build: ``kg build all.jsonl --workers 2 --no-cache`` into a fresh folder;
- a +1% rebuild: the first 99% of the records built with a fresh extraction cache
  into a folder (not timed), then all of them into the same folder with that cache
  (timed: extraction of the 1% new records, resolution, reused blocks, store
  update).

Each build runs in a fresh process, as ``kg build`` does. The ratios printed are
taken within this one run.

    python scripts/bench_rebuild.py [--corpus ../shared/data/corpus/abstracts.jsonl.gz]
                                    [--limit N] [--against REF] [--work DIR]
"""
from __future__ import annotations

import argparse
import gzip
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def split_corpus(corpus: Path, limit: int | None, folder: Path) -> tuple[Path, Path, int]:
    """all.jsonl and first99.jsonl (its first 99% of lines) in ``folder``; the record count."""
    with gzip.open(corpus, "rt", encoding="utf-8") as fh:
        lines = list(itertools.islice(fh, limit))
    every, first = folder / "all.jsonl", folder / "first99.jsonl"
    every.write_text("".join(lines), encoding="utf-8")
    first.write_text("".join(lines[: len(lines) * 99 // 100]), encoding="utf-8")
    return every, first, len(lines)


def code_of(ref: str, folder: Path) -> Path:
    """The package of commit ``ref``, extracted into ``folder``."""
    folder.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "kg", "ontology"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def kg_build(code: Path, args: list[str]) -> float:
    """Seconds of one ``kg build`` by the package under ``code``, in a fresh process."""
    env = dict(os.environ, PYTHONPATH=str(code))
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", "import sys; sys.argv = ['kg'] + sys.argv[1:]; "
                        "from kg.cli import run; run()", "build", *args, "--quiet"],
                       env=env, cwd=code, capture_output=True, text=True)
    seconds = time.perf_counter() - t
    if r.returncode != 0:
        raise SystemExit(f"kg build {' '.join(args)} failed ({code}):\n{r.stderr[-2000:]}")
    return seconds


def full(code: Path, every: Path, work: Path, name: str) -> float:
    out = work / f"full-{name}"
    seconds = kg_build(code, [str(every), "-o", str(out), "--workers", "2", "--no-cache"])
    shutil.rmtree(out)
    return seconds


def rebuild(code: Path, every: Path, first: Path, work: Path, name: str) -> float:
    out, cache = work / f"inc-{name}", work / f"cache-{name}"
    kg_build(code, [str(first), "-o", str(out), "--workers", "2", "--cache", str(cache)])
    seconds = kg_build(code, [str(every), "-o", str(out), "--workers", "2", "--cache", str(cache)])
    shutil.rmtree(out)
    shutil.rmtree(cache)
    return seconds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "data" / "corpus" / "abstracts.jsonl.gz")
    ap.add_argument("--limit", type=int, help="the first N records only")
    ap.add_argument("--against", help="a commit whose builds to time beside this checkout's")
    ap.add_argument("--work", type=Path, help="a folder for the corpus files and builds (default: a temporary one)")
    ap.add_argument("--against-first", action="store_true", help="time the other commit's full build first")
    ap.add_argument("--full-only", action="store_true", help="time the full builds only")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-rebuild-", dir=args.work))
    try:
        every, first, n = split_corpus(args.corpus, args.limit, work)
        codes = {"this checkout": ROOT}
        if args.against:
            codes[args.against] = code_of(args.against, work / "against")
            if args.against_first:
                codes = dict(reversed(codes.items()))
        print(f"{n:,} records; +1% = the last {n - n * 99 // 100:,}", flush=True)
        fulls: dict[str, float] = {}
        rebuilds: dict[str, float] = {}
        for i, (name, code) in enumerate(codes.items()):  # full builds alternated, then the rebuilds
            fulls[name] = full(code, every, work, str(i))
            print(f"full build, {name}: {fulls[name]:.1f} s", flush=True)
        for i, (name, code) in enumerate(reversed(codes.items()) if not args.full_only else ()):
            rebuilds[name] = rebuild(code, every, first, work, str(i))
            print(f"+1% rebuild, {name}: {rebuilds[name]:.1f} s ({rebuilds[name] / fulls[name]:.1%} of its full build)",
                  flush=True)
        if args.against:
            a, b = "this checkout", args.against
            print(f"full build, this checkout / {b}: {fulls[a] / fulls[b]:.3f}"
                  + (f"; +1% rebuild: {rebuilds[a] / rebuilds[b]:.3f}" if rebuilds else ""))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
