#!/usr/bin/env python3
"""Time until a large overview is drawn and interactive in headless Chromium.

    python scripts/bench_viz.py [--nodes 5000] [--runs 3]

Builds a synthetic typed graph of N nodes (papers, methods, tasks, datasets,
repositories, venues; heavy-tailed entity popularity, like real literature),
writes its overview page with kg's own view code, opens it in Debian's
Chromium through Playwright, and reports: Python view build + layout time,
page size, time from navigation to the page's ready mark (drawn, physics
settled), and the time for a click on a node to show its card.
"""
from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import networkx as nx  # noqa: E402

from kg.viz import build_view, render_html  # noqa: E402

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


def synthetic_graph(n: int, seed: int = 1) -> nx.MultiDiGraph:
    rng = random.Random(seed)
    G = nx.MultiDiGraph()
    n_papers = n * 3 // 10
    kinds = [("Method", "method", "proposes"), ("Task", "task", "addressesTask"), ("Dataset", "dataset", "usesDataset")]
    sizes = {"Method": n * 4 // 10, "Task": n * 15 // 100, "Dataset": n * 1 // 10}
    for v in ("ICML 2025", "ICLR 2025"):
        G.add_node(f"venue/{v}", type="Venue", label=v, name=v, aliases=[])
    entities = {}
    for t, path, _ in kinds:
        entities[t] = [f"{path}/{i}" for i in range(sizes[t])]
        for i, e in enumerate(entities[t]):
            G.add_node(e, type=t, label=f"{t} {i}", name=f"{t} {i}", aliases=[f"T{i}"])
    weights = {t: [1 / (i + 1) ** 0.9 for i in range(len(es))] for t, es in entities.items()}
    for p in range(n_papers):
        pid = f"paper/{p}"
        venue = "ICML 2025" if p % 3 else "ICLR 2025"
        G.add_node(pid, type="Paper", label=f"Paper {p}: a study of things", abstract="word " * 150,
                   docs=[f"x#{p}"], venue=venue, title=None)
        G.add_edge(pid, f"venue/{venue}", key="publishedIn", predicate="publishedIn", mentions=[])
        for t, _, pred in kinds:
            for e in set(rng.choices(entities[t], weights[t], k=2)):
                key = pred if t != "Method" or rng.random() < 0.3 else "usesMethod"
                G.add_edge(pid, e, key=key, predicate=key, mentions=[])
    G.remove_nodes_from([v for v in list(G.nodes) if G.degree(v) == 0])  # every entity comes from a paper
    repos = n - G.number_of_nodes()
    for r in range(max(0, repos)):
        rid = f"repository/github/o/r{r}"
        G.add_node(rid, type="CodeRepository", label=f"o/r{r}", name=f"o/r{r}", aliases=[], url=f"https://github.com/o/r{r}")
        G.add_edge(f"paper/{r % n_papers}", rid, key="hasCode", predicate="hasCode", mentions=[])
    return G


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        print("needs Debian's chromium (apt-get install chromium)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    G = synthetic_graph(args.nodes)
    t = time.perf_counter()
    net = build_view(G, view="overview", budget=args.nodes)
    html = render_html(net)
    t_build = time.perf_counter() - t
    tmp = Path(tempfile.mkdtemp())
    page_path = tmp / "overview.html"
    page_path.write_text(html, encoding="utf-8")
    ready, click = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=ARGS)
        for _ in range(args.runs):
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            t = time.perf_counter()
            page.goto(page_path.as_uri())
            page.wait_for_selector("body[data-ready='1']", timeout=120000)
            ready.append(time.perf_counter() - t)
            node = page.evaluate("window.kgView.nodes.getIds()[0]")
            page.evaluate("id => window.kgView.network.moveTo({position: window.kgView.network.getPosition(id), scale: 1, animation: false})", node)
            xy = page.evaluate("""id => { const v = window.kgView, d = v.network.canvasToDOM(v.network.getPosition(id));
                                   const r = document.getElementById('graph').getBoundingClientRect();
                                   return [r.left + d.x, r.top + d.y]; }""", node)
            t = time.perf_counter()
            page.mouse.click(*xy)
            page.wait_for_function("document.querySelector('#card .type') !== null")
            click.append(time.perf_counter() - t)
            page.close()
        browser.close()
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"graph: {G.number_of_nodes()} nodes, {G.number_of_edges()} edges; drawn: {len(net.nodes)} nodes")
    print(f"view build + layout (Python): {t_build:.2f} s; page {len(html) / 1e6:.1f} MB")
    print(f"navigation -> drawn and interactive: median {statistics.median(ready):.2f} s "
          f"(runs: {', '.join(f'{x:.2f}' for x in ready)})")
    print(f"click -> card shown: median {statistics.median(click) * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
