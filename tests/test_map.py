"""The map of the field (kg.web.fieldmap, the overview page): its data, and what a
researcher sees when the page opens in Chromium."""
import random

import networkx as nx
import pytest

from kg.web.fieldmap import OPENING, PALETTE, generate_map, trend_series
from kg.web.viz import render_map, series_controls

from .conftest import non_local, open_page


def topical_graph(papers: int = 3000, topics: int = 14, seed: int = 3) -> nx.MultiDiGraph:
    """A literature of ``topics`` fields, each with its own methods, tasks and datasets
    of heavy-tailed popularity and a few shared across fields; 25 venue series over 12
    years. Built like kg's graph: typed nodes, paper -> concept edges keyed by relation."""
    rng = random.Random(seed)
    G = nx.MultiDiGraph()
    kinds = (("Method", "usesMethod", 40), ("Task", "addressesTask", 15), ("Dataset", "usesDataset", 8))
    pools = {}
    for t in range(topics):
        for typ, rel, n in kinds:
            ids = []
            for k in range(n):
                node = f"{typ.lower()}/t{t}-{k}"
                G.add_node(node, type=typ, label=f"{typ.lower()} {k} of field {t}", aliases=[])
                ids.append(node)
            pools[(t, typ)] = ids
    shared = [f"method/shared-{k}" for k in range(10)]
    for node in shared:
        G.add_node(node, type="Method", label=node.split("/")[1], aliases=[])
    for p in range(papers):
        t = rng.randrange(topics)
        node = f"paper/{p:05d}"
        G.add_node(node, type="Paper", label=f"paper {p}", venue=f"V{rng.randrange(25):02d} {2013 + p % 12}",
                   year=2013 + p % 12)
        for typ, rel, n in kinds:
            for _ in range(rng.randint(1, 3)):
                G.add_edge(node, pools[(t, typ)][min(n - 1, int(rng.paretovariate(1.2)) - 1)], key=rel)
        if rng.random() < 0.3:
            G.add_edge(node, shared[min(9, int(rng.paretovariate(1.0)) - 1)], key="usesMethod")
    return G


@pytest.fixture(scope="module")
def corpus_map(tmp_path_factory):
    G = topical_graph()
    data = generate_map(G)
    path = tmp_path_factory.mktemp("map") / "map.html"
    path.write_text(render_map(G, data=data), encoding="utf-8")
    return G, data, path


def test_map_data_is_deterministic_and_opens_on_every_named_cluster(corpus_map):
    G, data, _ = corpus_map
    assert generate_map(G) == data
    opening = [n for n in data["nodes"] if "x" in n]
    assert len(opening) == OPENING
    assert all(n["x"] ** 2 + n["y"] ** 2 <= 1.0 + 1e-9 for n in opening)
    colours = {c["color"] for c in data["clusters"]}
    assert len(data["clusters"]) >= 6 and colours <= set(PALETTE)
    assert colours == {n["color"] for n in opening} - {"#b9b9b9"}  # every named cluster is drawn
    # a concept's size is its papers
    papers = {n["id"]: n["papers"] for n in data["nodes"]}
    some = data["nodes"][0]["id"]
    assert papers[some] == len({p for p, _, k in G.in_edges(some, keys=True)})


def test_trends_are_shares_of_each_year(corpus_map):
    _, data, _ = corpus_map
    series = trend_series(data)
    assert len(series) == 10
    label, shares = series[0]
    assert all(0 <= s <= 1 for s in shares if s is not None) and max(s for s in shares if s is not None) > 0


def test_venue_controls_stay_few():
    data = {"series": [f"S{k:02d}" for k in range(30)], "papers": [["p", f"S{k % 30:02d} 2020", 2020, "x"]
                                                                   for k in range(90)]}
    rows = series_controls(data)
    assert len(rows) == 20 and rows[-1][0] == "other venues"
    assert sorted(int(i) for _, ids in rows for i in ids.split(",")) == list(range(30))


LABELS = """() => {
    const v = window.kgView, box = document.getElementById("graph").getBoundingClientRect();
    const ctx = document.createElement("canvas").getContext("2d"), scale = v.network.getScale();
    const out = [];
    v.nodes.forEach(n => {
        const px = n.font.size * scale;
        if (px < 9) return;
        ctx.font = px + "px system-ui, sans-serif";
        const p = v.network.canvasToDOM(v.network.getPositions([n.id])[n.id]);
        const w = ctx.measureText(n.label).width, r = n.size * scale;
        out.push({x0: p.x - w / 2, x1: p.x + w / 2, y0: p.y + r, y1: p.y + r + px, inside:
                  p.x - w / 2 >= 0 && p.x + w / 2 <= box.width && p.y + r + px <= box.height});
    });
    return out; }"""


IN_VIEW = """() => {  // the share of the concepts drawn inside the canvas that carry a readable label
    const v = window.kgView, b = document.getElementById("graph").getBoundingClientRect(), s = v.network.getScale();
    let inView = 0, labelled = 0;
    v.nodes.forEach(n => { const d = v.network.canvasToDOM(v.network.getPositions([n.id])[n.id]);
        if (d.x < 0 || d.y < 0 || d.x > b.width || d.y > b.height) return;
        inView++; if (n.font.size * s >= 9) labelled++; });
    return labelled / inView; }"""


def test_map_opens_readable_in_chromium(corpus_map, browser):
    _, data, path = corpus_map
    page, log = open_page(browser, path.as_uri())
    try:
        nodes = page.evaluate("""() => { const v = window.kgView, b = document.getElementById("graph").getBoundingClientRect();
            return v.nodes.get().map(n => { const d = v.network.canvasToDOM(v.network.getPositions([n.id])[n.id]);
                                            return [d.x / b.width, d.y / b.height, n.size]; }); }""")
        assert 0 < len(nodes) <= 600
        # spread over the canvas: the middle quarter holds less than half of the nodes
        middle = sum(1 for x, y, _ in nodes if 0.25 < x < 0.75 and 0.25 < y < 0.75)
        assert middle < len(nodes) / 2
        assert len({round(s, 1) for _, _, s in nodes}) >= 5  # sizes vary with papers
        labels = page.evaluate(LABELS)
        assert len(labels) >= 30 and all(r["inside"] for r in labels)
        for a in range(len(labels)):
            for b in range(a):
                p, q = labels[a], labels[b]
                assert not (p["x0"] < q["x1"] - 0.5 and q["x0"] < p["x1"] - 0.5 and p["y0"] < q["y1"] - 0.5
                            and q["y0"] < p["y1"] - 0.5), "labels overlap"
        assert page.locator("#legend li").count() >= 6
        assert page.locator("#series input").count() <= 20
        assert page.locator("svg.trends polyline.trend").count() >= 10
        # zooming in labels a larger share of the concepts in view
        share = page.evaluate(IN_VIEW)
        page.evaluate("window.kgView.network.moveTo({scale: 2.5, animation: false})")
        page.wait_for_timeout(200)
        assert page.evaluate(IN_VIEW) > share
        assert log["errors"] == [] and non_local(log) == []
    finally:
        page.close()


def test_map_card_pages_the_papers_and_expands_a_concept(corpus_map, browser):
    _, data, path = corpus_map
    page, log = open_page(browser, path.as_uri())
    try:
        big = data["nodes"][0]
        page.fill("#search", big["label"])
        page.press("#search", "Enter")
        assert big["label"] in page.inner_text("#card h2")
        assert page.locator("#card svg.spark").count() == 1
        assert page.locator("#card ul.plain").nth(1).locator("li").count() == 20  # one page of papers
        page.click("#card button:has-text('next')")
        assert "page 2 of" in page.inner_text("#card")
        hidden = next(n for n in data["nodes"] if "x" not in n)
        page.fill("#search", hidden["label"])
        page.press("#search", "Enter")
        assert hidden["id"] in page.evaluate("window.kgView.nodes.getIds()")
        assert log["errors"] == [] and non_local(log) == []
    finally:
        page.close()
