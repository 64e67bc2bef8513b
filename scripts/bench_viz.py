#!/usr/bin/env python3
"""Time to build the overview pages of a large graph, and until they are drawn and
interactive in headless Chromium.

    python scripts/bench_viz.py [--nodes 5000] [--graph outputs/graph.json.gz] [--runs 3]

Takes a built graph (``--graph``, the ``graph.json.gz`` of a ``kg build``) or builds a
synthetic typed graph of N nodes (papers, methods, tasks, datasets, repositories,
venues; heavy-tailed entity popularity, like real literature). Builds, in interleaved
runs, the map of the field (the overview page) and the drawing of every node (the
former overview) and prints both times and their ratio; then opens each page in
Debian's Chromium through Playwright and reports the page size, the time from
navigation to the page's ready mark (drawn, labels placed), and the time for a click
on a node to show its card.
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

from kg.web.viz import build_view, render_html, render_map  # noqa: E402

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


def open_and_click(browser, page_path: Path) -> tuple[float, float]:
    """(navigation -> ready, click on the first node -> card shown), in seconds."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    t = time.perf_counter()
    page.goto(page_path.as_uri())
    page.wait_for_selector("body[data-ready='1']", timeout=120000)
    ready = time.perf_counter() - t
    node = page.evaluate("window.kgView.nodes.getIds()[0]")
    page.evaluate("id => window.kgView.network.moveTo({position: window.kgView.network.getPosition(id), animation: false})",
                  node)
    xy = page.evaluate("""id => { const v = window.kgView, d = v.network.canvasToDOM(v.network.getPosition(id));
                           const r = document.getElementById('graph').getBoundingClientRect();
                           return [r.left + d.x, r.top + d.y]; }""", node)
    t = time.perf_counter()
    page.mouse.click(*xy)
    page.wait_for_function("document.querySelector('#card .type') !== null")
    click = time.perf_counter() - t
    page.close()
    return ready, click


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--graph", type=Path, help="a built graph.json instead of a synthetic graph")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        print("needs Debian's chromium (apt-get install chromium)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    if args.graph:
        from kg.io.graphjson import read_graph_json

        G = read_graph_json(args.graph)
    else:
        G = synthetic_graph(args.nodes)
    pages = {"map": lambda: render_map(G), "every node": lambda: render_html(build_view(G, view="overview"))}
    times: dict[str, list[float]] = {k: [] for k in pages}
    html = {}
    for _ in range(args.runs):  # interleaved: the machine's drift hits both alike
        for name, make in pages.items():
            t = time.perf_counter()
            html[name] = make()
            times[name].append(time.perf_counter() - t)
    tmp = Path(tempfile.mkdtemp())
    paths = {}
    for name, text in html.items():
        paths[name] = tmp / (name.replace(" ", "-") + ".html")
        paths[name].write_text(text, encoding="utf-8")
    ready: dict[str, list[float]] = {k: [] for k in pages}
    click: dict[str, list[float]] = {k: [] for k in pages}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=ARGS)
        for _ in range(args.runs):
            for name in pages:
                r, c = open_and_click(browser, paths[name])
                ready[name].append(r)
                click[name].append(c)
        browser.close()
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"graph: {G.number_of_nodes()} nodes, {G.number_of_edges()} edges")
    med = {k: statistics.median(v) for k, v in times.items()}
    for name in pages:
        print(f"{name:>10}: build (Python) median {med[name]:.2f} s; page {len(html[name]) / 1e6:.1f} MB; "
              f"navigation -> ready median {statistics.median(ready[name]):.2f} s "
              f"({', '.join(f'{x:.2f}' for x in ready[name])}); click -> card {statistics.median(click[name]) * 1000:.0f} ms")
    print(f"map build / every-node build: {med['map'] / med['every node']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
