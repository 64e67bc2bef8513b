#!/usr/bin/env python3
"""Scale benchmark: corpus sizes N (default 1k, 10k, 100k), measured in one run.

    python scripts/bench.py [--sizes 1000 10000 100000] [--ratio-size 20000] [--md docs/benchmarks.md]

Per N: extraction rate (one process) and its ratio to `spacy.blank("en")`
tokenization of the same texts; full `kg build` wall time (a fresh process,
no cache) with its stage breakdown and peak RSS; output sizes; named-query
latency (median, p95) on the Oxigraph store and, up to 10k, on rdflib's
in-memory store of the same triples (as a ratio); `--workers 2` extraction
speed-up (one process and two workers alternated, 1-2-1-2-1); the rebuild after
adding 1% new abstracts (with the extraction cache) as a share of the full build,
and the named queries on the store it updated beside those on the full build's.
This machine's speed drifts by 2x within an hour, so a ratio of two builds run
minutes apart can measure the drift: each ratio compares a build with builds run
on both sides of it (see sandwich). A full build runs just before the rebuild and
one just after it, each after a speed probe (one process's extraction rate at that
moment, printed with them), and the share is of their mean; the smaller of the two
largest sizes is built once more after the larger one, for the growth (10k -> 100k
by default). Then, at --ratio-size, full build over bare tokenization. Writes a
markdown table into --md between its two marker lines (see merge_results), keeping
the rest of the file.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PY = sys.executable

NAMED = [("methods-for-task", {"task": "image classification"}), ("papers-using-dataset", {"dataset": "CIFAR-10"}),
         ("top-datasets", {}), ("top-tasks", {}), ("proposed-methods-with-code", {}),
         ("aliases", {"name": "ResNet-50"}), ("evidence", {"name": "MNIST"}), ("venue-statistics", {}),
         ("datasets-for-method", {"method": "Adam"})]


def corpus(n: int) -> Path:
    path = ROOT / "bench-data" / f"corpus-{n}.jsonl"
    if not path.is_file():
        subprocess.run([PY, str(ROOT / "scripts" / "make_corpus.py"), str(n), "-o", str(path)], check=True)
    return path


def head(src: Path, n: int, dst: Path) -> Path:
    with src.open(encoding="utf-8") as fin, dst.open("w", encoding="utf-8") as fout:
        for i, line in enumerate(fin):
            if i >= n:
                break
            fout.write(line)
    return dst


#: Where a run's results go in an existing results file: the text between these lines is
#: replaced, the rest (notes of earlier sessions, analyses) kept.
BEGIN, END = "<!-- bench.py results: begin -->", "<!-- bench.py results: end -->"


def merge_results(old: str, results: str) -> str:
    """``old`` (a results file) with its part between :data:`BEGIN` and :data:`END`
    replaced by ``results``; ``results`` between the two lines, then ``old``, if
    ``old`` has no such part (nothing of it is lost).

    >>> merge_results("", "T\\n") == f"{BEGIN}\\nT\\n{END}\\n"
    True
    >>> merge_results(f"# x\\n{BEGIN}\\nold\\n{END}\\nnotes\\n", "new\\n")
    '# x\\n<!-- bench.py results: begin -->\\nnew\\n<!-- bench.py results: end -->\\nnotes\\n'
    """
    block = f"{BEGIN}\n{results}{END}\n"
    start, end = old.find(BEGIN), old.find(END)
    if start < 0 or end < start:
        return block + ("\n" + old if old else "")
    rest = old[end + len(END):]
    return old[:start] + block + (rest[1:] if rest.startswith("\n") else rest)


def child_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


#: The build process's own peak RSS, in kB. Linux keeps ``ru_maxrss`` across fork and exec, so a
#: child's figure is at least the RSS this (bench) process had when it started the child (it runs
#: spaCy over 20k texts before the 100k builds): ``VmHWM`` is that of the build's own memory.
PEAK_RSS_CODE = (
    "def peak_rss_kb():\n"
    "    import resource\n"
    "    try:\n"
    "        with open('/proc/self/status') as f:\n"
    "            return next(int(l.split()[1]) for l in f if l.startswith('VmHWM:'))\n"
    "    except (OSError, StopIteration):\n"
    "        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n")


def steal_seconds() -> float:
    """CPU seconds, summed over the cores, that the hypervisor gave to something else while this
    virtual machine had work for them (``steal`` in ``/proc/stat``; 0 on a machine without it):
    read before and after a measurement, the host's share of it."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        return int(fields[8]) / os.sysconf("SC_CLK_TCK") if fields[0] == "cpu" and len(fields) > 8 else 0.0
    except (OSError, ValueError, IndexError):
        return 0.0


def kg_build(inputs: list[Path], out: Path, *extra: str) -> tuple[float, dict, float]:
    """Wall time, stage seconds (from the build's log, and the CPU seconds of the build's
    processes: ``cpu:user``, ``cpu:system``; what the host took meanwhile: ``cpu:steal``) and the
    child's peak RSS (MB)."""
    # as the `kg` program (kg.cli.run) ends a build: flush, then os._exit
    code = (PEAK_RSS_CODE + "import os, resource, sys; sys.argv = ['kg'] + sys.argv[1:]; "
            "import kg.cli; kg.cli._ENDING = True; from kg.cli import main; rc = main(sys.argv[1:]); "
            "print('PEAK_RSS_KB', peak_rss_kb(), file=sys.stderr); "
            "sys.stdout.flush(); sys.stderr.flush(); os._exit(rc)")
    used, stolen = resource.getrusage(resource.RUSAGE_CHILDREN), steal_seconds()
    t = time.perf_counter()
    r = subprocess.run([PY, "-c", code, "build", *map(str, inputs), "--out", str(out), "--verbose", *extra],
                       capture_output=True, text=True)
    wall = time.perf_counter() - t
    # CPU time of the build and every process it forked and reaped (workers, writers)
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = {"cpu:user": now.ru_utime - used.ru_utime, "cpu:system": now.ru_stime - used.ru_stime,
           "cpu:steal": steal_seconds() - stolen}
    if r.returncode != 0:
        raise SystemExit(f"kg build failed:\n{r.stderr[-2000:]}")
    stages = {}  # from the lines of --verbose
    m = re.search(r"^\s+reuse\s+(.*)$", r.stderr, re.M)
    if m:
        stages["reuse"] = m.group(1)
    for name in ("ingest", "extract", "resolve", "write"):
        m = re.search(rf"^\s+{name}: ([\d.]+)s", r.stderr, re.M)
        if m:
            stages[name] = float(m.group(1))
    m = re.search(r"^\s+write: [\d.]+s \((\d+) triples; (.*)\)$", r.stderr, re.M)
    if m:
        for part in m.group(2).split(", "):
            k, v = part.split()
            stages[f"write:{k}"] = float(v.rstrip("s"))
        stages["triples"] = int(m.group(1))
    rss = int(re.search(r"PEAK_RSS_KB (\d+)", r.stderr).group(1)) / 1024
    stages.update(cpu)
    return wall, stages, rss


def extraction_rates(path: Path, limit: int | None = None) -> tuple[float, float, float, float, list[float], list]:
    """(abstracts/s one process, abstracts/s two workers, tokenization abstracts/s, n, the
    speed-up of each two-worker run against the one-process runs either side of it, each run's
    (workers, seconds, steal seconds: see :func:`steal_seconds`)).

    One process and two workers alternate, 1-2-1-2-1, and each rate is over the mean time of its
    runs: both sets have the same mean moment, so a drift of the machine's speed that is linear
    over the runs cancels out of the speed-up (``two / one``)."""
    import spacy

    from kg.extract import extract_records, make_nlp
    from kg.ingest import read_records

    records = read_records([path])[:limit]
    texts = [r.abstract for r in records]
    blank = spacy.blank("en")
    t = time.perf_counter()
    for x in texts:
        blank.make_doc(x)
    t_tok = time.perf_counter() - t
    nlp = make_nlp()
    list(extract_records(records[:20], nlp=nlp))
    ones, twos, runs = [], [], []
    for workers in (1, 2, 1, 2, 1):
        stolen, t = steal_seconds(), time.perf_counter()
        list(extract_records(records, nlp=nlp, workers=workers))
        runs.append((workers, time.perf_counter() - t, steal_seconds() - stolen))
        (ones if workers == 1 else twos).append(runs[-1][1])
    n = len(records)
    each = [sandwich(ones[i], ones[i + 1]) / t2 for i, t2 in enumerate(twos)]
    return n / statistics.mean(ones), n / statistics.mean(twos), n / t_tok, n, each, runs


def sandwich(before: float, after: float) -> float:
    """The time a build run between two others would have taken at its own moment, if the
    machine's speed drifted linearly: the mean of the build before and the build after.

    >>> sandwich(400.0, 500.0)
    450.0
    """
    return (before + after) / 2


#: Abstracts a speed probe extracts (about 1-5 s here).
PROBE = 1000


def speed_probe(path: Path) -> float:
    """Abstracts per second that one process extracts from the first :data:`PROBE` of ``path``, in a
    fresh process (imports and the pipeline not timed): the machine's speed at this moment, to
    read the builds' times next to (this host's speed drifts by 2x within an hour). The disk
    first writes what earlier builds left (``sync``), so that the next build does not wait on it."""
    os.sync()
    code = ("import sys, time; from pathlib import Path; from kg.extract import extract_records, make_nlp; "
            "from kg.ingest import read_records; rs = read_records([Path(sys.argv[1])])[:int(sys.argv[2])]; "
            "nlp = make_nlp(); list(extract_records(rs[:20], nlp=nlp)); t = time.perf_counter(); "
            "list(extract_records(rs, nlp=nlp)); print(len(rs) / (time.perf_counter() - t))")
    r = subprocess.run([PY, "-c", code, str(path), str(PROBE)], capture_output=True, text=True, check=True, cwd=ROOT)
    return float(r.stdout.split()[-1])


def query_latency(out: Path, with_rdflib: bool) -> tuple[float, float, float | None]:
    from kg.rdf.named import get_named
    from kg.rdf.store import open_store, run_query

    store = open_store(out)
    times = []
    per: dict[str, list[float]] = {}
    for _ in range(3):
        for name, binds in NAMED:
            t = time.perf_counter()
            list(run_query(store, get_named(name).text, binds))
            times.append(time.perf_counter() - t)
            per.setdefault(name, []).append(times[-1])
    print("  named query medians (ms): " + ", ".join(f"{k} {1000 * statistics.median(v):.1f}" for k, v in per.items()),
          flush=True)
    times.sort()
    med, p95 = statistics.median(times), times[int(0.95 * (len(times) - 1))]
    ratio = None
    if with_rdflib:
        from rdflib import Graph, Literal

        with gzip.open(out / "graph.nt.gz") as f:
            g = Graph().parse(f, format="nt")
        rtimes = []
        for name, binds in NAMED:
            t = time.perf_counter()
            list(g.query(get_named(name).text, initBindings={k: Literal(v) for k, v in binds.items()}))
            rtimes.append(time.perf_counter() - t)
        ratio = statistics.median(rtimes) / statistics.median(times[: len(NAMED)] or [1e-9])
    return med, p95, ratio


def size_mb(out: Path) -> dict:
    sizes = {p.name: p.stat().st_size / 1e6 for p in out.iterdir() if p.is_file()}
    sizes["store/"] = sum(p.stat().st_size for p in (out / "store").rglob("*") if p.is_file()) / 1e6
    return sizes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--ratio-size", type=int, default=20000)
    ap.add_argument("--md", type=Path, default=ROOT / "docs" / "benchmarks.md")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="kg-bench-"))
    rows = []
    results = {}
    for n in sorted(args.sizes):
        path = corpus(n)
        print(f"== N = {n:,}", flush=True)
        one, two, tok, _, each, runs = extraction_rates(path, limit=min(n, 20000))
        # incremental: build the first 99% with a cache, then all of it; a full build just before the
        # rebuild and one just after it, so that the rebuild's share compares it with builds run at
        # its own moment (this machine's speed drifts by 2x within an hour: see speed_probe)
        cache = tmp / f"cache-{n}"
        n99 = head(path, n - max(1, n // 100), tmp / f"c99-{n}.jsonl")
        _, _, base_rss = kg_build([n99], tmp / f"inc-{n}", "--cache", str(cache), "--workers", "2")
        speed_before = speed_probe(path)
        wall_a, _, rss_a = kg_build([path], tmp / f"outA-{n}", "--no-cache", "--workers", "2")
        shutil.rmtree(tmp / f"outA-{n}", ignore_errors=True)
        speed_inc = speed_probe(path)
        inc_wall, inc_stages, inc_rss = kg_build([path], tmp / f"inc-{n}", "--cache", str(cache), "--workers", "2")
        speed_full = speed_probe(path)
        out = tmp / f"out-{n}"
        wall, stages, rss = kg_build([path], out, "--no-cache", "--workers", "2")
        speed_after = speed_probe(path)
        sizes = size_mb(out)
        med, p95, ratio = query_latency(out, with_rdflib=n <= 10000)
        # the same graph's store as the rebuild updated it, then the full build's, one after the other
        inc_med, _, _ = query_latency(tmp / f"inc-{n}", with_rdflib=False)
        full_med, _, _ = query_latency(out, with_rdflib=False)
        results[n] = dict(one=one, two=two, each=each, runs=runs, tok=tok, wall=wall, wall_a=wall_a, stages=stages, rss=rss,
                          rss_a=rss_a, sizes=sizes, med=med, p95=p95, ratio=ratio, inc=inc_wall, inc_stages=inc_stages,
                          inc_rss=inc_rss, base_rss=base_rss, inc_med=inc_med, full_med=full_med,
                          speed=(speed_before, speed_inc, speed_full, speed_after))
        print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in results[n].items()
                          if k not in ("sizes",)}, default=str), flush=True)
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(tmp / f"inc-{n}", ignore_errors=True)
        rows.append(n)
    # growth (10k -> 100k by default: the two largest sizes): the smaller one's full build once more,
    # after the larger one's, so that its time is taken at the larger builds' moment on average (see
    # sandwich)
    again = None
    if len(rows) > 1:
        small_n, big_n = rows[-2], rows[-1]
        again, _, _ = kg_build([corpus(small_n)], tmp / "out-again", "--no-cache", "--workers", "2")
        shutil.rmtree(tmp / "out-again", ignore_errors=True)
        print(f"{small_n:,} full build again: {again:.1f} s", flush=True)
    # full build over bare tokenization at ratio-size
    rpath = head(corpus(max(args.sizes + [args.ratio_size])), args.ratio_size, tmp / "ratio.jsonl") \
        if args.ratio_size not in args.sizes else corpus(args.ratio_size)
    import spacy

    from kg.ingest import read_records

    texts = [r.abstract for r in read_records([rpath])]
    blank = spacy.blank("en")
    t = time.perf_counter()
    for x in texts:
        blank.make_doc(x)
    t_tok = time.perf_counter() - t
    r_wall, _, _ = kg_build([rpath], tmp / "ratio-out", "--no-cache", "--workers", "2")
    r_wall1, _, _ = kg_build([rpath], tmp / "ratio-out1", "--no-cache")
    lines = [f"Machine: {resource.getpagesize()} B pages, 2 cores; `python scripts/bench.py --sizes {' '.join(map(str, args.sizes))}`.",
             "Synthetic corpora from `scripts/make_corpus.py` (real sentences recombined, new names growing with N).", "",
             "| N | extract/s (1 proc) | ratio to tokenization | extract x2 workers | full build (2 workers) | peak RSS | "
             "triples | stage breakdown | outputs | SPARQL median / p95 | rdflib / Oxigraph | +1% rebuild |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for n in rows:
        r = results[n]
        st = r["stages"]
        breakdown = ", ".join(f"{k} {v:.1f}s" for k, v in st.items() if k not in ("triples", "reuse"))
        total_mb = sum(r["sizes"].values())
        mid = sandwich(r["wall_a"], r["wall"])
        lines.append(
            f"| {n:,} | {r['one']:.0f} | {r['tok'] / r['one']:.1f}x | {r['two'] / r['one']:.2f}x | "
            f"{r['wall_a']:.1f} s / {r['wall']:.1f} s | {max(r['rss_a'], r['rss']):.0f} MB | {st.get('triples', 0):,} | "
            f"{breakdown} | {total_mb:.0f} MB | {r['med'] * 1000:.1f} / {r['p95'] * 1000:.1f} ms | "
            f"{'%.1fx' % r['ratio'] if r['ratio'] else 'n/a'} | {r['inc']:.1f} s ({100 * r['inc'] / mid:.0f}%) |")
    lines.append("")
    lines.append("Extract x2 workers: one process and two workers alternated, 1-2-1-2-1, on the first "
                 "min(N, 20,000) abstracts; the mean one-process time over the mean two-worker time. Each "
                 "two-worker run against the one-process runs either side of it: "
                 + "; ".join(f"{n:,}: " + " / ".join(f"{x:.2f}x" for x in results[n]["each"]) for n in rows)
                 + ". The runs (workers: seconds (CPU seconds of the two cores the host took meanwhile, `steal` in /proc/stat)): "
                 + "; ".join(f"{n:,}: " + ", ".join(f"{w}: {t:.1f} s ({st:.1f})" for w, t, st in results[n]["runs"])
                             for n in rows) + ".")
    lines.append("Full build: the one before the +1% rebuild / the one after it (stage breakdown, outputs "
                 "and queries: the one after); peak RSS: the larger. The rebuild's share is of their mean.")
    lines.append("")
    for n in rows:
        st = results[n]["inc_stages"]
        lines.append(f"+1% rebuild at {n:,}: {results[n]['inc']:.1f} s; "
                     + ", ".join(f"{k} {v:.1f}s" for k, v in st.items() if k not in ("triples", "reuse"))
                     + f"; {st.get('reuse', 'no reuse line')}; peak RSS {results[n]['inc_rss']:.0f} MB (the 99% "
                       f"build before it, with the cache: {results[n]['base_rss']:.0f} MB); "
                       f"named-query median on its updated store {results[n]['inc_med'] * 1000:.1f} ms, then on the "
                       f"full build's {results[n]['full_med'] * 1000:.1f} ms; machine speed (one process, "
                       f"{PROBE:,} abstracts) before the first full build, before the rebuild, before the second "
                       "full build and after it: "
                       + " / ".join(f"{x:.0f}" for x in results[n]["speed"]) + " abstracts/s.")
    lines.append("")
    if again is not None:
        big, small = results[big_n], results[small_n]
        ten = sandwich(sandwich(small["wall_a"], small["wall"]), again)
        lines.append(f"Growth {small_n:,} -> {big_n:,} (full builds): {sandwich(big['wall_a'], big['wall']) / ten:.1f}x "
                     f"({big_n:,}: {big['wall_a']:.1f} s and {big['wall']:.1f} s; {small_n:,}: {small['wall_a']:.1f} s "
                     f"and {small['wall']:.1f} s, and {again:.1f} s after the {big_n:,} builds; the mean of that pair "
                     f"and the later one). Each {big_n:,} build against each {small_n:,} build: "
                     f"{min(big['wall_a'], big['wall']) / max(small['wall_a'], small['wall'], again):.1f}x to "
                     f"{max(big['wall_a'], big['wall']) / min(small['wall_a'], small['wall'], again):.1f}x.")
    lines.append(f"Full build of {args.ratio_size:,} abstracts over bare tokenization: "
                 f"{r_wall / t_tok:.1f}x with 2 workers, {r_wall1 / t_tok:.1f}x with one "
                 f"(tokenization {t_tok:.2f} s, builds {r_wall:.1f} s / {r_wall1:.1f} s).")
    old = args.md.read_text(encoding="utf-8") if args.md.exists() else "# abstract-kg scale benchmark\n\n"
    args.md.write_text(merge_results(old, "\n".join(lines) + "\n"), encoding="utf-8")
    print("\n".join(lines))
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
