import os
import re

import pytest

from kg import KnowledgeGraph
from kg.web.viz import build_view, render_html

from .conftest import node_point, non_local, open_page

HOSTILE = ('We propose EvilNet2 </script><script>window.__pwned=1</script> for image classification. '
           '<img src=x onerror="window.__pwned=2"> See <a href="javascript:window.__pwned=3">here</a>. '
           'Code: https://github.com/evil/EvilNet2')


@pytest.fixture(scope="module")
def hostile_page(tmp_path_factory):
    kg = KnowledgeGraph.from_records([{"id": "h1", "abstract": HOSTILE, "title": "<b onmouseover=alert(1)>T</b>"},
                                      {"id": "h2", "abstract": "We compare with EvilNet2 on image classification."}])
    path = tmp_path_factory.mktemp("viz") / "h.html"
    kg.to_html(path)
    return kg, path


def test_page_is_self_contained(built):
    html = (built / "graph.html").read_text(encoding="utf-8")
    # No script, style or image is loaded from anywhere: everything is inline.
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)\s*=", html, re.I)
    assert all(u.strip("'\" ").startswith("data:") for u in re.findall(r"url\(([^)]*)\)", html))
    assert "Content-Security-Policy" in html
    index = (built / "index.html").read_text(encoding="utf-8")
    assert 'href="graph.html"' in index and "68 papers" in index


def test_abstract_text_cannot_break_out_of_the_data(hostile_page):
    _, path = hostile_page
    html = path.read_text(encoding="utf-8")
    assert "<script>window.__pwned" not in html
    assert "<img src=x" not in html and "<b onmouseover" not in html
    # vis-network, our code, and the one string literal inside vis-network's bundle.
    assert len(re.findall(r"<script\b", html)) == 3


def test_view_object_holds_every_node(sample_kg):
    net = build_view(sample_kg.nx)
    assert len(net.nodes) == sample_kg.nx.number_of_nodes()
    assert len(net.edges) == sample_kg.nx.number_of_edges()
    assert set(net.cards) == set(sample_kg.nx.nodes)
    html = render_html(net)
    assert html == render_html(build_view(sample_kg.nx))  # deterministic


VIEW_FILES = ["graph.html", "methods-tasks.html", "datasets.html", "papers.html"]


@pytest.mark.parametrize("fname", VIEW_FILES)
def test_every_view_in_chromium(built, browser, fname):
    from kg.io.graphjson import read_graph_json
    from kg.web.views import view_graph

    from kg.web.fieldmap import generate_map

    view = {"graph.html": "overview", "methods-tasks.html": "method-task", "datasets.html": "dataset",
            "papers.html": "paper"}[fname]
    G = read_graph_json(built / "graph.json.gz")
    if view == "overview":  # the map of the field: the concepts of its opening view
        expected = sum(1 for n in generate_map(G)["nodes"] if "x" in n)
    else:
        expected = view_graph(G, view).number_of_nodes()
    page, log = open_page(browser, (built / fname).as_uri())
    try:
        assert page.evaluate("window.kgView.nodes.length") == expected
        assert non_local(log) == [] and log["errors"] == []
    finally:
        page.close()


def test_map_search_reveals_a_concept_and_filters_hide_types_and_venues(built, browser):
    page, log = open_page(browser, (built / "graph.html").as_uri())
    try:
        # search by an alias (the expansion of an acronym), as a user types it
        page.fill("#search", "Feature Shift Localization Network")
        page.press("#search", "Enter")
        assert page.evaluate("window.kgView.network.getSelectedNodes()") == ["method/fsl-net"]
        assert "FSL-Net" in page.inner_text("#card h2")
        assert re.search(r"\b1 paper\b", page.inner_text("#card"))
        # type filter hides methods; venue filter hides what only one venue's papers name
        page.uncheck("#types input[data-type='Method']")
        assert page.evaluate("window.kgView.nodes.get({filter: n => n.id.startsWith('method/')}).length") == 0
        page.check("#types input[data-type='Method']")
        before = page.evaluate("window.kgView.nodes.length")
        page.uncheck("#series input >> nth=0")
        assert 0 < page.evaluate("window.kgView.nodes.length") < before
        assert log["errors"] == [] and non_local(log) == []
    finally:
        page.close()


def test_focus_view_card_of_a_paper_shows_its_abstract(sample_kg, tmp_path, browser):
    path = sample_kg.to_html(tmp_path / "focus.html", focus="FSL-Net", depth=1)
    page, log = open_page(browser, path.as_uri())
    try:
        paper = page.evaluate("""window.kgView.network.getConnectedNodes("method/fsl-net")
                                 .filter(n => n.startsWith("paper/"))[0]""")
        page.evaluate("id => window.kgView.network.moveTo({scale: 1.5, position: window.kgView.network.getPosition(id), animation: false})", paper)
        x, y = node_point(page, paper)
        page.mouse.click(x, y)
        assert "Feature shifts between data sources" in page.inner_text("#card .abstract")
        assert page.locator("#card mark").count() >= 2  # the extracted names are highlighted
        assert page.get_attribute("#card a", "href") == "https://github.com/AI-sandbox/FSL-Net"
        assert log["errors"] == [] and non_local(log) == []
    finally:
        page.close()


def test_hostile_abstract_runs_no_script_in_chromium(hostile_page, browser):
    kg, path = hostile_page
    page, log = open_page(browser, path.as_uri())
    try:
        for node in page.evaluate("window.kgView.nodes.getIds()"):
            page.evaluate("id => window.kgView.network.moveTo({position: window.kgView.network.getPosition(id), animation: false})", node)
            x, y = node_point(page, node)
            page.mouse.move(x, y)
            page.mouse.click(x, y)
            for link in page.locator("#card a, #card button").all():
                href = link.get_attribute("href")
                assert href is None or href.startswith("https://github.com/")
        assert page.evaluate("window.__pwned === undefined")
        assert page.locator("#card a[href^='javascript']").count() == 0
        assert [e for e in log["errors"] if "dialog" in e] == []
        assert non_local(log) == []
    finally:
        page.close()


def test_budget_keeps_the_best_connected_nodes_and_says_so(sample_kg):
    net = build_view(sample_kg.nx, budget=40)
    assert len(net.nodes) == 40
    assert "Showing the 40 best-connected of" in render_html(net)
    degrees = sorted((sample_kg.nx.degree(n) for n in sample_kg.nx), reverse=True)
    assert min(sample_kg.nx.degree(n["id"]) for n in net.nodes) >= degrees[39]


def test_notebook_display_is_a_sandboxed_iframe(sample_kg):
    view = sample_kg.show(focus="TAROT")
    html = view._repr_html_()
    assert html.startswith("<iframe srcdoc=") and 'sandbox="allow-scripts"' in html
    assert "<script>" not in html  # the page is escaped inside the attribute


def test_ego_view_is_centred_on_the_focus(sample_kg):
    net = build_view(sample_kg.nx, focus="method/tarot", depth=1)
    ids = {n["id"] for n in net.nodes}
    assert "method/tarot" in ids and all(sample_kg.nx.has_edge(i, "method/tarot") or
                                         sample_kg.nx.has_edge("method/tarot", i) or i == "method/tarot" for i in ids)


@pytest.mark.slow
def test_views_over_budget_do_not_depend_on_the_hash_seed(tmp_path):
    # Over the budget a view keeps a part of the graph, and big views are laid out in
    # numpy (here from 20 nodes on): node order must not come from iterating a set of strings.
    import subprocess
    import sys

    code = ("import sys, hashlib; from kg import KnowledgeGraph; import kg.web.viz as V; "
            "from kg.web.viz import build_view, render_html; V.PHYSICS_LIMIT = 20; G = KnowledgeGraph.build().nx; "
            "print(*(hashlib.sha256(render_html(build_view(G, view=v, budget=40)).encode()).hexdigest() "
            "for v in ('overview', 'paper')))")
    out = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env=dict(os.environ, PYTHONHASHSEED=seed)).stdout for seed in ("1", "2")]
    assert out[0] == out[1] and len(out[0].split()) == 2


def test_hub_cards_list_the_first_links_and_count_the_rest():
    import networkx as nx

    from kg.web.viz import CARD_LINKS

    G = nx.MultiDiGraph()
    G.add_node("task/t", type="Task", label="t", aliases=[])
    for i in range(CARD_LINKS + 7):
        G.add_node(f"paper/{i:04d}", type="Paper", label=f"P{i:04d}", abstract="x", docs=[f"d{i}"])
        G.add_edge(f"paper/{i:04d}", "task/t", key="addressesTask")
    card = build_view(G, view="overview").cards["task/t"]
    assert len(card["links"]) == CARD_LINKS and card["more"] == 7
    assert card["links"][0][2] == "paper/0000" and card["links"][-1][2] == f"paper/{CARD_LINKS - 1:04d}"
    assert "more" not in build_view(G, view="overview").cards["paper/0000"]


@pytest.mark.parametrize("view", ["method-task", "dataset"])
@pytest.mark.parametrize("limit", [5, 20])
def test_a_limited_view_is_the_best_connected_part_of_the_full_one(sample_kg, view, limit):
    """Views that pick their nodes before making edges (100k papers: half a million
    method-task pairs) give what cutting the full view down would."""
    from kg.web.views import best_connected, degrees, induced, view_graph

    G = sample_kg.nx
    full = view_graph(G, view)
    assert full.number_of_nodes() > limit
    small = view_graph(G, view, limit=limit)
    expected = induced(full, best_connected(degrees(full), limit))
    assert list(small.nodes(data=True)) == list(expected.nodes(data=True))
    assert list(small.edges(keys=True, data=True)) == list(expected.edges(keys=True, data=True))
    assert small.graph["total_nodes"] == full.number_of_nodes()


def test_a_hub_card_lists_the_same_first_links_with_or_without_the_cached_order():
    import random

    import networkx as nx

    from kg.web.viz import CARD_LINKS, CardCache, _card

    rng = random.Random(3)
    G = nx.MultiDiGraph()
    G.add_node("task/t", type="Task", label="T", aliases=[])
    for i in range(3 * CARD_LINKS):
        kind = rng.choice(["Paper", "Method"])
        u = f"{kind.lower()}/{i}"
        G.add_node(u, type=kind, label=rng.choice(["Alpha", "beta", "Gamma", f"x{i % 17}"]))
        G.add_edge(u, "task/t", key="addressesTask" if kind == "Paper" else "appliedTo")
        if i % 5 == 0:
            G.add_edge(u, "task/t", key="appliedTo")  # two links from one node
    cache = CardCache(G)
    fast = _card(G, "task/t", cache)
    assert fast == _card(G, "task/t")
    assert fast["more"] > 0 and len(fast["links"]) == CARD_LINKS


def test_venue_filter_goes_by_series(built, browser):
    page, log = open_page(browser, (built / "papers.html").as_uri())
    try:
        assert page.locator("#venues input").count() == 2  # ICLR and ICML, not one box a venue-year
        page.uncheck("#venues label:has-text('ICLR') input")
        shown = page.evaluate("window.kgView.nodes.get({filter: n => n.kgtype === 'Paper' && !n.hidden}).map(n => n.kgvenue)")
        assert shown and set(shown) == {"ICML 2025"}
        assert log["errors"] == []
    finally:
        page.close()
