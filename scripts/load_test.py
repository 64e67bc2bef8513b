#!/usr/bin/env python3
"""Load test of `kg serve` on loopback only: C clients x Q queries, then a
cartesian-product query cut at the timeout while the server keeps answering.

    python scripts/load_test.py [--store outputs] [--clients 20] [--queries 50] [--timeout 5]

Starts the endpoint in this process on 127.0.0.1 (an ephemeral port), sends
the named queries round-robin from C threads (each request bounded by a
client timeout), and prints errors, throughput and latency p50 / p99. Traffic
never leaves 127.0.0.1; the run is bounded in count and time and stops itself.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CARTESIAN = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"


def queries() -> list[str]:
    from kg.rdf.named import list_named

    return [q.text for q in list_named()]


def ask(url: str, query: str, timeout: float) -> tuple[int, float]:
    data = urllib.parse.urlencode({"query": query}).encode()
    req = urllib.request.Request(url, data=data, headers={"Accept": "application/sparql-results+json"})
    t = time.perf_counter()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            r.read()
            status = r.status
    except urllib.error.HTTPError as e:
        status = e.code
    except OSError:
        status = 0
    return status, time.perf_counter() - t


def run(store: Path, clients: int, per_client: int, timeout: float, workers: int) -> dict:
    from kg.web.serve import make_server

    server, pool = make_server(store, host="127.0.0.1", port=0, timeout=timeout, workers=workers)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    url = f"http://{host}:{port}/sparql"
    qs = queries()
    results: list[tuple[int, float]] = []
    lock = threading.Lock()

    def client(i: int) -> None:
        mine = []
        for j in range(per_client):
            mine.append(ask(url, qs[(i + j) % len(qs)], timeout + 30))
        with lock:
            results.extend(mine)

    t = time.perf_counter()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    wall = time.perf_counter() - t
    lat = sorted(x for _, x in results)
    errors = sum(1 for s, _ in results if s != 200)
    t = time.perf_counter()
    cut_status, _ = ask(url, CARTESIAN, timeout + 30)
    cut = time.perf_counter() - t
    after_status, _ = ask(url, qs[0], timeout + 30)
    server.shutdown()
    server.server_close()
    pool.close()
    return {"requests": len(results), "errors": errors, "wall": wall, "p50": statistics.median(lat),
            "p99": lat[int(0.99 * (len(lat) - 1))], "cut_status": cut_status, "cut_seconds": cut,
            "after_status": after_status}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", type=Path, help="a built output folder (default: build the samples in a temp folder)")
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--timeout", type=float, default=5.0)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    store = args.store
    if store is None:
        from kg import KnowledgeGraph

        store = Path(tempfile.mkdtemp()) / "outputs"
        KnowledgeGraph.build().save(store)
    r = run(store, args.clients, args.queries, args.timeout, args.workers)
    print(f"{args.clients} clients x {args.queries} queries: {r['requests']} requests, {r['errors']} errors, "
          f"{r['requests'] / r['wall']:.0f} req/s, latency p50 {r['p50'] * 1000:.1f} ms, p99 {r['p99'] * 1000:.1f} ms")
    print(f"cartesian-product query: HTTP {r['cut_status']} after {r['cut_seconds']:.2f} s "
          f"(timeout {args.timeout:g} s); next query: HTTP {r['after_status']}")
    return 0 if r["errors"] == 0 and r["cut_status"] == 503 and r["after_status"] == 200 else 1


if __name__ == "__main__":
    raise SystemExit(main())
