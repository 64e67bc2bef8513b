"""The HTML pages: served by `kg serve` for every resource IRI, and written by `kg site`
(a real build, a real server on 127.0.0.1, real Chromium)."""
import hashlib
import re
import threading
import urllib.parse
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import pytest

from kg import KnowledgeGraph
from kg.io.graphjson import read_graph_json
from kg.web.pageindex import PAGE_INDEX, PageIndex, write_page_index
from kg.web.serve import make_server
from kg.web.site import write_site

from .conftest import non_local
from .test_serve import get

BROWSER = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
HOSTILE = ('We propose EvilNet2 </script><script>window.__pwned=1</script> for image classification. '
           '<img src=x onerror="window.__pwned=2"> on <b onmouseover="window.__pwned=4">ImageNet</b>. '
           'Code: https://github.com/evil/EvilNet2')


def serve(folder):
    server, pool = make_server(folder, host="127.0.0.1", port=0, timeout=5.0, workers=1, max_rows=500)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    return f"http://{host}:{port}", server, pool


@pytest.fixture(scope="module")
def site(built):
    url, server, pool = serve(built)
    yield url
    server.shutdown()
    server.server_close()
    pool.close()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    out = tmp_path_factory.mktemp("hostile") / "out"
    kg = KnowledgeGraph.from_records([
        {"id": "h1", "abstract": HOSTILE, "title": "<b onmouseover=\"window.__pwned=5\">EvilNet2</b>: a title",
         "venue": "<script>window.__pwned=6</script>", "year": 2024},
        {"id": "h2", "abstract": "We compare with EvilNet2 on image classification and ImageNet.", "year": 2025}])
    kg.save(out)
    url, server, pool = serve(out)
    yield out, url
    server.shutdown()
    server.server_close()
    pool.close()


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.scripts = [], 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])
        if tag == "script":
            self.scripts += 1
        if any(k.startswith("on") for k in a):
            raise AssertionError(f"an event handler attribute in <{tag}>")


def links_of(html: str) -> _Links:
    p = _Links()
    p.feed(html)
    return p


def html_of(url: str) -> tuple[int, str]:
    """The status of a GET as a browser, and the body if it is a page (else "")."""
    status, headers, body = get(url, BROWSER)
    return status, body if headers["Content-Type"].startswith("text/html") else ""


def crawl(start: str, fetch, local) -> dict[str, str]:
    """Every page reachable from ``start`` through local links: {url: html}."""
    seen, todo, pages = {start}, [start], {}
    while todo:
        url = todo.pop()
        status, html = fetch(url)
        assert status == 200, (url, status)
        pages[url] = html
        for href in links_of(html).links:
            target = urllib.parse.urljoin(url, href).split("#")[0]
            if local(target) and target not in seen:
                seen.add(target)
                todo.append(target)
    return pages


def test_the_page_index_of_a_build_is_that_of_its_graph(built, tmp_path):
    G = read_graph_json(built / "graph.json.gz")
    write_page_index(G, tmp_path / "a.sqlite")
    write_page_index(G, tmp_path / "b.sqlite")
    digest = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in (tmp_path / "a.sqlite", tmp_path / "b.sqlite",
                                                                         built / PAGE_INDEX)}
    assert len(set(digest.values())) == 1


def test_a_resource_iri_opened_in_a_browser_is_its_page(site):
    status, headers, html = get(site + "/resource/method/tarot", BROWSER)
    assert status == 200 and headers["Content-Type"].startswith("text/html") and "Accept" in headers["Vary"]
    assert "script-src" not in headers["Content-Security-Policy"] and "frame-ancestors 'none'" in headers[
        "Content-Security-Policy"]
    assert re.search(r"<h1>TAROT <span", html)
    assert 'href="https://github.com/vita-epfl/TAROT"' in html
    papers = [h for h in links_of(html).links if h.startswith("/resource/paper/")]
    assert len(papers) == 1
    # the paper's page: the name linked from the abstract, the code link
    status, _, paper = get(site + papers[0], BROWSER)
    assert status == 200 and '<mark class="Method"><a href="/resource/method/tarot">TAROT</a></mark>' in paper
    assert "github.com/vita-epfl/TAROT" in paper
    # an RDF client still gets RDF
    status, headers, _ = get(site + "/resource/method/tarot", {"Accept": "text/turtle"})
    assert status == 200 and headers["Content-Type"].startswith("text/turtle")


def test_a_crawl_from_the_front_page_finds_no_broken_link_and_every_page_type(site, built):
    pages = crawl(site + "/", html_of, lambda u: u.startswith(site) and "format=" not in u)
    kinds = {m for html in pages.values() for m in re.findall(r'<h1>.*?<span class="kind (\w+)">', html)}
    assert kinds == {"Paper", "Method", "Task", "Dataset", "Venue", "CodeRepository"}
    ix = PageIndex(built / PAGE_INDEX)
    try:
        ids = {i for (i,) in ix.con.execute("SELECT id FROM node")}
    finally:
        ix.close()
    reached = {u[len(site) + len("/resource/"):] for u in pages if "/resource/" in u and "?" not in u}
    assert ids <= reached
    # every RDF link of a page resolves too
    rdf = {urllib.parse.urljoin(u, h) for u, html in list(pages.items())[:20] for h in links_of(html).links
           if "format=turtle" in h}
    assert all(get(u)[0] == 200 for u in rdf)


def test_long_paper_lists_page_and_sort(site, built):
    ix = PageIndex(built / PAGE_INDEX)
    try:
        venue = ix.front()["Venue"][0]
    finally:
        ix.close()
    _, _, first = get(site + "/resource/" + venue[0], BROWSER)
    assert "page 1 of 1" not in first  # the sample's venues fit one page: no pager
    years = [int(y) for y in re.findall(r'<td class="n">(\d{4})</td>', first)]
    assert years == sorted(years, reverse=True)
    _, _, oldest = get(site + "/resource/" + venue[0] + "?list=publishedIn&sort=oldest", BROWSER)
    years = [int(y) for y in re.findall(r'<td class="n">(\d{4})</td>', oldest)]
    assert years == sorted(years)


def test_search_by_name_acronym_and_title_words(site):
    status, headers, body = get(site + "/search?q=tarot&format=json")
    import json

    found = json.loads(body)
    assert status == 200 and found["entities"][0]["id"] == "method/tarot"
    _, _, body = get(site + "/search?q=" + urllib.parse.quote("optimal transport"), {"Accept": "application/json"})
    assert json.loads(body)["papers"] or json.loads(body)["entities"]
    status, _, html = get(site + "/search?q=" + urllib.parse.quote('"<x>*'), BROWSER)
    assert status == 200 and "<x>" not in html and "&lt;x&gt;" in html


def test_resources_without_a_page_of_their_own_resolve_too(site):
    import json

    def first(pattern):
        _, _, body = get(site + "/sparql?query=" + urllib.parse.quote(
            f"PREFIX kg: <https://w3id.org/abstract-kg/ontology#> SELECT ?x WHERE {{ {pattern} }} ORDER BY ?x LIMIT 1"),
            {"Accept": "application/sparql-results+json"})
        return json.loads(body)["results"]["bindings"][0]["x"]["value"].split("/resource/")[1]

    # a mention's page is its paper's (303), whose page names the mention's text
    mention = first("?p kg:hasMention ?x")
    with urllib.request.urlopen(urllib.request.Request(site + "/resource/" + mention, headers=BROWSER)) as r:
        assert r.status == 200 and r.url.startswith(site + "/resource/paper/" + mention.split("/")[1])
        assert '<span class="kind Paper">' in r.read().decode("utf-8")
    # a usage count: its triples, linked
    usage = first("?x a kg:MethodUsage")
    status, _, html = get(site + "/resource/" + urllib.parse.quote(usage), BROWSER)
    assert status == 200 and "ontology#paperCount" in html and 'href="/resource/method/' in html


def test_hostile_text_is_escaped_in_every_page(hostile):
    out, url = hostile
    pages = crawl(url + "/", html_of, lambda u: u.startswith(url) and "format=" not in u)
    assert any("EvilNet2" in html for html in pages.values())
    for url, html in pages.items():
        if url.endswith((".html", "/query")):  # the views and the query page are tested elsewhere
            continue
        assert links_of(html).scripts == 0  # and no on* attribute (the parser fails on one)
        assert "<img src=x" not in html and "<b onmouseover" not in html


def test_kg_site_writes_the_same_pages_with_relative_links(built, tmp_path):
    out = tmp_path / "site"
    files, size = write_site(built, out)
    assert files > 100 and size > 0
    names = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    again = tmp_path / "again"
    write_site(built, again)
    assert all((out / n).read_bytes() == (again / n).read_bytes() for n in names)  # deterministic

    def fetch(url):
        path = Path(urllib.parse.unquote(urllib.parse.urlsplit(url).path))
        return (200, path.read_text(encoding="utf-8")) if path.is_file() else (404, "")

    start = (out / "index.html").as_uri()
    pages = crawl(start, fetch, lambda u: u.startswith("file:") and not u.endswith(".js"))
    assert len([u for u in pages if "/resource/" in u]) > 100
    tarot = (out / "resource" / "method" / "tarot.html").read_text(encoding="utf-8")
    assert re.search(r"<h1>TAROT <span", tarot) and 'href="https://github.com/vita-epfl/TAROT"' in tarot
    assert 'href="../paper/' in tarot and "/resource/" not in re.sub(r'<p class="iri">.*?</p>', "", tarot)


def one_of_each_type(folder) -> list[str]:
    """The first page id of every type in a build's page index."""
    ix = PageIndex(folder / PAGE_INDEX)
    try:
        return [i for (i,) in ix.con.execute("SELECT min(id) FROM node GROUP BY type ORDER BY type")]
    finally:
        ix.close()


def main_text(html: str) -> str:
    """What a page says (its <main>, tags out): the same whoever serves it."""
    main = html.split("<main>", 1)[1].split("</main>", 1)[0]
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", main)).strip()


def test_kg_site_pages_say_what_the_served_pages_say(site, built, tmp_path):
    write_site(built, tmp_path / "site")
    ids = one_of_each_type(built)
    assert len(ids) == 6
    for i in ids:
        served = get(site + "/resource/" + i, BROWSER)[2]
        static = (tmp_path / "site" / "resource" / f"{i}.html").read_text(encoding="utf-8")
        assert main_text(served) == main_text(static), i


def test_pages_in_chromium_run_no_script_and_request_nothing_off_the_machine(site, built, hostile, browser, tmp_path):
    out, url = hostile
    write_site(out, tmp_path / "site")
    targets = [site + "/", site + "/resource/method/tarot", site + "/search?q=learning", url + "/",
               url + "/resource/method/evilnet2", (tmp_path / "site" / "index.html").as_uri(),
               (tmp_path / "site" / "search.html").as_uri() + "?q=evil"]
    ids = [u for u in get(url + "/search?q=evilnet2&format=json")[2].split('"') if u.startswith("paper/")]
    targets += [url + "/resource/" + i for i in ids]
    targets += [site + "/resource/" + i for i in one_of_each_type(built)]
    for target in targets:
        page = browser.new_page()
        log = {"requests": [], "errors": []}
        page.on("request", lambda r: log["requests"].append(r.url))
        page.on("pageerror", lambda e: log["errors"].append(str(e)))
        page.on("console", lambda m: log["errors"].append(m.text) if m.type == "error" else None)
        page.on("dialog", lambda d: (log["errors"].append("dialog"), d.dismiss()))
        page.route(re.compile(r"^(?!file:|data:|http://127\.0\.0\.1).*"), lambda route: route.abort())
        page.goto(target)
        page.wait_for_load_state("load")
        for a in page.locator("mark a, td a").all()[:5]:
            a.hover()
        assert page.evaluate("window.__pwned === undefined"), target
        assert log["errors"] == [], (target, log["errors"])
        assert [u for u in non_local(log) if not u.startswith("http://127.0.0.1")] == [], target
        if "search.html" in target:
            hrefs = [a.get_attribute("href") for a in page.locator("#results a").all()]
            assert hrefs and all((tmp_path / "site" / urllib.parse.unquote(h)).is_file() for h in hrefs)
        page.close()


def test_a_page_opens_the_map_on_its_concept_and_the_map_links_back(site, browser):
    _, _, html = get(site + "/resource/method/tarot", BROWSER)
    href = next(h for h in links_of(html).links if "#focus=" in h)
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(site + href)
    page.wait_for_selector("body[data-ready='1']", timeout=30000)
    assert page.locator("#card h2").inner_text() == "TAROT"
    back = page.locator("#card a", has_text="Open its page")
    assert back.get_attribute("href") == "/resource/method/tarot"
    back.click()
    page.wait_for_load_state("load")
    assert page.locator("h1").inner_text().startswith("TAROT") and errors == []
    page.close()


def test_the_other_views_served_link_their_cards_to_the_pages(site, browser):
    page = browser.new_page()
    page.goto(site + "/methods-tasks.html")
    page.wait_for_selector("body[data-ready='1']", timeout=30000)
    assert page.evaluate("window.kgView.focusNode('method/tarot')")
    link = page.locator("#card a", has_text="Open its page")
    assert link.get_attribute("href") == "/resource/method/tarot"
    link.click()
    page.wait_for_load_state("load")
    assert page.locator("h1").inner_text().startswith("TAROT")
    page.close()
