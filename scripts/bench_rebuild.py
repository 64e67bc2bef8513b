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
                                    [--rebuild-only] [--rounds N]
"""
from __future__ import annotations

import argparse
import gzip
import itertools
import os
import shutil
import statistics
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


def seed(code: Path, first: Path, work: Path, name: str) -> tuple[Path, Path]:
    """The build of the first 99% and its extraction cache (not timed)."""
    out, cache = work / f"seed-{name}", work / f"seed-cache-{name}"
    kg_build(code, [str(first), "-o", str(out), "--workers", "2", "--cache", str(cache)])
    return out, cache


def rebuild(code: Path, every: Path, seeded: tuple[Path, Path], work: Path, name: str) -> float:
    """A +1% rebuild into a copy of the seed build, with a copy of its cache."""
    out, cache = work / f"inc-{name}", work / f"cache-{name}"
    shutil.copytree(seeded[0], out)
    shutil.copytree(seeded[1], cache)
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
    ap.add_argument("--rebuild-only", action="store_true", help="time the +1%% rebuilds only")
    ap.add_argument("--rounds", type=int, default=1, help="rebuilds of each code, alternated (default: 1)")
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
        for i, (name, code) in enumerate(codes.items() if not args.rebuild_only else ()):
            fulls[name] = full(code, every, work, str(i))  # full builds alternated, then the rebuilds
            print(f"full build, {name}: {fulls[name]:.1f} s", flush=True)
        seeds = {name: seed(code, first, work, str(i)) for i, (name, code) in
                 enumerate(codes.items() if not args.full_only else ())}
        for r in range(args.rounds if not args.full_only else 0):
            for i, (name, code) in enumerate(reversed(codes.items())):
                seconds = rebuild(code, every, seeds[name], work, str(i))
                rebuilds.setdefault(name, []).append(seconds)
                share = f" ({seconds / fulls[name]:.1%} of its full build)" if name in fulls else ""
                print(f"+1% rebuild {r + 1}, {name}: {seconds:.1f} s{share}", flush=True)
        if args.against:
            a, b = "this checkout", args.against
            ratios = [f"full build, this checkout / {b}: {fulls[a] / fulls[b]:.3f}"] if fulls else []
            if rebuilds:
                ratios.append(f"+1% rebuild (median of {args.rounds}): "
                              f"{statistics.median(rebuilds[a]) / statistics.median(rebuilds[b]):.3f}")
            print("; ".join(ratios))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
