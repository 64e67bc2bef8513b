#!/usr/bin/env python3
"""What a notebook user waits for: ``KnowledgeGraph.load(DIR)`` and a first query, on a
build folder, in a fresh process each (time and peak memory), against the same query
through ``kg query`` and against the in-memory store a graph without a build folder
makes (what ``load`` did before it queried the build's store); and ``load`` then a
first ``node(name)``, answered from the build's store, against the same after reading
the graph (``graph.json``, what ``node`` did before).

    python scripts/bench_api.py --store OUTDIR [--repeat 2] [--name GAN]

OUTDIR is a ``kg build`` output folder (for the issue's figure, the corpus's 22,804
ML-venue records: ``scripts/bench_corpus.py`` selects them).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUERY = "SELECT ?t (COUNT(?p) AS ?n) WHERE { ?p kg:addressesTask ?t } GROUP BY ?t ORDER BY DESC(?n) LIMIT 5"

CHILD = """
import json, resource, sys, time
t = time.perf_counter()
from kg import KnowledgeGraph
kg = KnowledgeGraph.load(sys.argv[1])
if sys.argv[2] == "memory":  # the graph alone: its store made in memory from its RDF
    kg = KnowledgeGraph(kg.nx, base=kg.base)
if sys.argv[2] == "graph-node":  # the graph read first
    kg.nx
rows = [kg.node(sys.argv[3])] if sys.argv[2].endswith("node") else kg.query(sys.argv[3])
seconds = time.perf_counter() - t
print(json.dumps({"seconds": seconds, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "rows": len(rows)}))
"""


def child(store: Path, how: str, what: str = QUERY) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(store), how, what], check=True,
                         capture_output=True, text=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def cli(store: Path) -> dict:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "kg.cli", "query", QUERY, "--store", str(store)], check=True,
                   capture_output=True, cwd=ROOT)
    return {"seconds": time.perf_counter() - t}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", type=Path, required=True, help="a kg build output folder")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--name", default="GAN", help="the name node() looks up")
    args = ap.parse_args()
    runs: dict[str, list[dict]] = {"load": [], "cli": [], "memory": [], "node": [], "graph-node": []}
    for _ in range(args.repeat):  # interleaved, so that a drift of the machine's speed hits each alike
        runs["load"].append(child(args.store, "store"))
        runs["cli"].append(cli(args.store))
        runs["memory"].append(child(args.store, "memory"))
        runs["node"].append(child(args.store, "node", args.name))
        runs["graph-node"].append(child(args.store, "graph-node", args.name))
    best = {k: min(r["seconds"] for r in v) for k, v in runs.items()}
    for k, label in (("load", "KnowledgeGraph.load + first query"), ("cli", "kg query (a process)"),
                     ("memory", "graph + in-memory store + first query"),
                     ("node", f"load + node({args.name!r}) from the store"),
                     ("graph-node", f"load + node({args.name!r}) from graph.json")):
        rss = max((r.get("rss_mb", 0) for r in runs[k]), default=0)
        print(f"{label:<40} {best[k]:7.2f} s" + (f"  peak {rss:,.0f} MB" if rss else ""))
    print(f"load / kg query: {best['load'] / best['cli']:.2f}x; in-memory / load: {best['memory'] / best['load']:.1f}x; "
          f"node from graph.json / from the store: {best['graph-node'] / best['node']:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
