import os
import re
import shutil

import pytest

from kg import KnowledgeGraph
from kg.viz import build_view, render_html

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
    assert set(net.kg_cards) == set(sample_kg.nx.nodes)
    html = render_html(net)
    assert html == render_html(build_view(sample_kg.nx))  # deterministic


def _chromium():
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None and os.environ.get("CI"):
        pytest.fail("CI must install Debian's chromium (see .ci/run)")
    if path is None:
        pytest.skip("chromium is not installed on this machine")
    pw = pytest.importorskip("playwright.sync_api")
    return path, pw


ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


def open_page(pw, exe, url):
    p = pw.sync_playwright().start()
    browser = p.chromium.launch(executable_path=exe, args=ARGS)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    log = {"requests": [], "errors": []}
    page.on("request", lambda r: log["requests"].append(r.url))
    page.on("pageerror", lambda e: log["errors"].append(str(e)))
    page.on("console", lambda m: log["errors"].append(m.text) if m.type == "error" else None)
    page.route(re.compile(r"^(?!file:|data:|blob:).*"), lambda route: route.abort())
    page.goto(url)
    page.wait_for_function("window.kgView !== undefined")
    return p, browser, page, log


def test_overview_in_chromium(built):
    exe, pw = _chromium()
    p, browser, page, log = open_page(pw, exe, (built / "graph.html").as_uri())
    try:
        n = page.evaluate("window.kgView.nodes.length")
        assert n == 150 or n > 100
        assert page.evaluate("window.kgView.focusNode(window.kgView.find('tarot'))") is True
        assert "TAROT" in page.inner_text("#card")
        paper = page.evaluate("window.kgView.nodes.get({filter: n => n.kgtype === 'Paper'})[0].id")
        page.evaluate(f"window.kgView.focusNode({paper!r})")
        assert len(page.inner_text("#card .abstract")) > 200
        assert [u for u in log["requests"] if not u.startswith(("file:", "data:", "blob:"))] == []
        assert log["errors"] == []
    finally:
        browser.close()
        p.stop()


def test_hostile_abstract_runs_no_script_in_chromium(hostile_page):
    exe, pw = _chromium()
    kg, path = hostile_page
    p, browser, page, log = open_page(pw, exe, path.as_uri())
    try:
        for node in page.evaluate("window.kgView.nodes.getIds()"):
            page.evaluate(f"window.kgView.focusNode({node!r})")
        assert page.evaluate("window.__pwned === undefined")
        assert page.locator("#card a[href^='javascript']").count() == 0
    finally:
        browser.close()
        p.stop()
