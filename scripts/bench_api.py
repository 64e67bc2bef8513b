#!/usr/bin/env python3
"""What a notebook user waits for: ``KnowledgeGraph.load(DIR)`` and a first query, on a
build folder, in a fresh process each (time and peak memory), against the same query
through ``kg query``; and ``load`` then a first look-up (``node(name)``, ``top("methods", 10)``,
``papers_for(name)``, ``related_papers`` of its first paper), answered from the
build's store, against the same after reading the graph (``graph.json.gz``).

    python scripts/bench_api.py --store OUTDIR [--repeat 2] [--name Adam]

OUTDIR is a ``kg build`` output folder (the whole corpus: ``scripts/bench_corpus.py
--out OUTDIR`` builds it).
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
how, what = sys.argv[2].removeprefix("graph-"), sys.argv[3]
if sys.argv[2].startswith("graph-"):  # the graph read first
    kg.nx
rows = {"node": lambda: [kg.node(what)], "top": lambda: kg.top("methods", 10),
        "papers": lambda: kg.papers_for(what), "related": lambda: kg.related_papers(kg.papers_for(what)[0]),
        }.get(how, lambda: kg.query(what))()
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
    ap.add_argument("--name", default="Adam", help="the name node() and papers_for() look up")
    args = ap.parse_args()
    lookups = ("node", "top", "papers", "related")
    runs: dict[str, list[dict]] = {k: [] for k in ("load", "cli", *lookups, *(f"graph-{k}" for k in lookups))}
    for _ in range(args.repeat):  # interleaved, so that a drift of the machine's speed hits each alike
        runs["load"].append(child(args.store, "store"))
        runs["cli"].append(cli(args.store))
        for k in lookups:
            runs[k].append(child(args.store, k, args.name))
            runs[f"graph-{k}"].append(child(args.store, f"graph-{k}", args.name))
    best = {k: min(r["seconds"] for r in v) for k, v in runs.items()}
    asked = {"node": f"node({args.name!r})", "top": "top('methods', 10)", "papers": f"papers_for({args.name!r})",
             "related": "related_papers(its first paper)"}
    for k, label in (("load", "KnowledgeGraph.load + first query"), ("cli", "kg query (a process)"),
                     *((k, f"load + {asked[k]} from the store") for k in lookups),
                     *((f"graph-{k}", f"load + {asked[k]} from graph.json") for k in lookups)):
        rss = max((r.get("rss_mb", 0) for r in runs[k]), default=0)
        print(f"{label:<56} {best[k]:7.2f} s" + (f"  peak {rss:,.0f} MB" if rss else ""))
    print(f"load / kg query: {best['load'] / best['cli']:.2f}x")
    print("from graph.json / from the store: "
          + ", ".join(f"{k} {best[f'graph-{k}'] / best[k]:.1f}x" for k in lookups))
    return 0


if __name__ == "__main__":
    sys.exit(main())
