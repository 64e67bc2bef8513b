#!/usr/bin/env python3
"""How fast the pages are: ``kg serve``'s pages and search over HTTP, and ``kg site``.

    python scripts/bench_pages.py --store BUILD [--site-store BUILD] [--requests 100]

``--store``: a build (with its store and page index), served on 127.0.0.1 by the same
code as ``kg serve``. Timed over real HTTP, one client at a time, each request read to
the end: the page of the task with the most papers (the first page of its lists),
pages of randomly drawn nodes of every type, and search (``/search?q=``, as HTML and as
JSON) for names, acronyms, prefixes and title words drawn from the build. Prints the
median and the 95th percentile of each, against the targets (a page under 200 ms, a
search under 100 ms at the 95th percentile).

``--site-store``: a build to write as a static site (``kg site``) into a temporary
folder: its time, files and size, and the size of its search index.
"""
from __future__ import annotations

import argparse
import gzip
import random
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kg.web.pageindex import PAGE_INDEX  # noqa: E402
from kg.web.serve import make_server  # noqa: E402
from kg.web.site import write_site  # noqa: E402

BROWSER = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


def timed(url: str, headers: dict) -> float:
    t = time.perf_counter()
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=60) as r:
        r.read()
        if r.status != 200:
            raise RuntimeError(f"{url}: {r.status}")
    return time.perf_counter() - t


def summary(name: str, times: list[float], target_ms: float | None = None) -> str:
    ms = sorted(t * 1000 for t in times)
    p95 = ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))]
    line = f"{name:<40} n={len(ms):<5} median {statistics.median(ms):7.1f} ms   p95 {p95:7.1f} ms"
    if target_ms is not None:
        line += f"   (target p95 < {target_ms:.0f} ms: {'met' if p95 < target_ms else 'NOT met'}, " \
                f"{p95 / target_ms:.2f}x of it)"
    return line


def queries(con: sqlite3.Connection, n: int, rng: random.Random) -> list[str]:
    """Search strings drawn from the build: whole names, acronyms, prefixes of names and
    two words of titles."""
    names = [r[0] for r in con.execute("SELECT key FROM name ORDER BY key")]
    titles = [r[0] for r in con.execute("SELECT label FROM node WHERE type='Paper' ORDER BY id")]
    out = []
    for k in range(n):
        kind = k % 4
        if kind == 0:
            out.append(rng.choice(names))
        elif kind == 1:
            acronyms = [x for x in rng.sample(names, min(200, len(names))) if x.isalnum() and len(x) <= 6]
            out.append(rng.choice(acronyms or names))
        elif kind == 2:
            name = rng.choice(names)
            out.append(name[:max(3, len(name) // 2)])
        else:
            words = [w for w in rng.choice(titles).split() if len(w) > 3] or ["learning"]
            out.append(" ".join(rng.sample(words, min(2, len(words)))))
    return out


def bench_serve(store: Path, n: int) -> None:
    con = sqlite3.connect(f"{(store / PAGE_INDEX).resolve().as_uri()}?mode=ro", uri=True)
    rng = random.Random(0)
    task, papers = con.execute(
        "SELECT id, papers FROM node WHERE type='Task' ORDER BY papers DESC, id LIMIT 1").fetchone()
    nodes = {t: [r[0] for r in con.execute("SELECT id FROM node WHERE type=? ORDER BY id", (t,))]
             for t in ("Paper", "Method", "Task", "Dataset", "Venue")}
    searches = queries(con, n, rng)
    con.close()
    server, pool = make_server(store, host="127.0.0.1", port=0, workers=2)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = "http://%s:%s" % server.server_address[:2]
    try:
        quote = urllib.parse.quote
        timed(base + "/", BROWSER)  # the first request opens the workers' stores
        print(f"{store}: the largest task is {task} ({papers:,} papers)")
        print(summary("largest task page", [timed(f"{base}/resource/{task}", BROWSER) for _ in range(n)], 200))
        print(summary("largest task page, its last page of papers",
                      [timed(f"{base}/resource/{task}?list=addressesTask&page={(papers + 49) // 50}&sort=oldest",
                             BROWSER) for _ in range(max(10, n // 5))], 200))
        for t, ids in nodes.items():
            if ids:
                sample = [rng.choice(ids) for _ in range(n)]
                print(summary(f"{t.lower()} pages (random)", [timed(f"{base}/resource/{i}", BROWSER) for i in sample],
                              200))
        print(summary("search, HTML", [timed(f"{base}/search?q={quote(q)}", BROWSER) for q in searches], 100))
        print(summary("search, JSON", [timed(f"{base}/search?q={quote(q)}&format=json", {}) for q in searches], 100))
        print(summary("front page", [timed(base + "/", BROWSER) for _ in range(max(10, n // 5))]))
    finally:
        server.shutdown()
        server.server_close()
        pool.close()


def bench_site(store: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "site"
        t = time.perf_counter()
        files, size = write_site(store, out)
        seconds = time.perf_counter() - t
        index = (out / "search-index.js").read_bytes()
        print(f"kg site of {store}: {seconds:.1f} s (target 180 s: {seconds / 180:.2f}x of it), {files:,} files, "
              f"{size / 1e6:,.1f} MB; search index {len(index) / 1e6:.1f} MB "
              f"({len(gzip.compress(index)) / 1e6:.1f} MB gzipped, as a static host sends it)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, help="a build to serve")
    ap.add_argument("--site-store", type=Path, help="a build to write as a static site")
    ap.add_argument("--requests", type=int, default=100, help="requests of each kind")
    args = ap.parse_args()
    if args.store:
        bench_serve(args.store, args.requests)
    if args.site_store:
        bench_site(args.site_store)
    return 0


if __name__ == "__main__":
    sys.exit(main())
