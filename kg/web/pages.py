"""The HTML pages of a build: one per paper, method, task, dataset, venue and code
repository, a front page and search results.

Pure functions: a node of the page index (:class:`kg.web.pageindex.PageIndex`) and a
:class:`Links` in, a page out. ``kg serve`` links pages by their paths
(``/resource/method/tarot``, :class:`ServeLinks`); ``kg site`` writes them as files
linked relatively (:class:`SiteLinks`). Every text from a record is escaped; the pages
load nothing from elsewhere and carry a Content-Security-Policy.
"""
from __future__ import annotations

import posixpath
from functools import lru_cache
from pathlib import Path
from urllib.parse import quote, urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup, escape

from kg.web.pageindex import PAPER_LISTS

#: Papers per page of a list.
PER_PAGE = 50
#: Entries of a counted list shown before "more" (the rest, up to 100, one click away).
LIST_SHOWN = 20
#: What a reader calls each type.
KINDS = {"Paper": "paper", "Method": "method", "Task": "task", "Dataset": "dataset", "Venue": "venue",
         "CodeRepository": "code repository"}
#: No script, no request off the page: styles and data images only (a server adds
#: ``frame-ancestors``, which a page's own ``<meta>`` cannot set).
PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'self'"
#: A site's pages take their stylesheet from the site; its search page runs one script, from the site too.
SITE_CSP = "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'self'"
SITE_SEARCH_CSP = SITE_CSP.replace("default-src 'none';", "default-src 'none'; script-src 'self';")


class Links:
    """Where a page's links go."""

    def node(self, id_: str) -> str:
        raise NotImplementedError

    def papers(self, id_: str, rel: str, page: int, newest: bool) -> str:
        """A page of one paper list of a node's page (page 1 newest is the page itself)."""
        raise NotImplementedError

    def home(self) -> str:
        raise NotImplementedError

    def search(self) -> str:
        raise NotImplementedError

    def rdf(self, id_: str) -> str | None:
        return None

    def query(self) -> str | None:
        """The SPARQL query page, where there is one."""
        return None

    def stylesheet(self) -> str | None:
        """The pages' shared stylesheet; None: the styles are inline."""
        return None

    def map(self, id_: str) -> str:
        """The map of the field (the build's ``graph.html``) opened on a concept."""
        return self.map_page() + "#focus=" + quote(id_, safe="/")

    def map_page(self) -> str:
        raise NotImplementedError


class ServeLinks(Links):
    """Links of ``kg serve``: the resources' own paths."""

    def node(self, id_: str) -> str:
        return "/resource/" + id_

    def papers(self, id_: str, rel: str, page: int, newest: bool) -> str:
        if page == 1 and newest:
            return self.node(id_)
        return self.node(id_) + "?" + urlencode({"list": rel, "page": page, "sort": "newest" if newest else "oldest"})

    def home(self) -> str:
        return "/"

    def search(self) -> str:
        return "/search"

    def rdf(self, id_: str) -> str | None:
        return self.node(id_) + "?format=turtle"

    def query(self) -> str | None:
        return "/query"

    def map_page(self) -> str:
        return "/graph.html"


class SiteLinks(Links):
    """Links of a static site, relative to the page at ``here`` (a path in the site)."""

    def __init__(self, here: str):
        self.dir = posixpath.dirname(here)

    def _rel(self, path: str) -> str:
        return quote(posixpath.relpath(path, self.dir or "."), safe="/.-_~")

    def node(self, id_: str) -> str:
        return self._rel(site_path(id_))

    def papers(self, id_: str, rel: str, page: int, newest: bool) -> str:
        return self._rel(site_path(id_, rel, page, newest))

    def home(self) -> str:
        return self._rel("index.html")

    def search(self) -> str:
        return self._rel("search.html")

    def stylesheet(self) -> str | None:
        return self._rel("style.css")

    def map_page(self) -> str:
        return self._rel("graph.html")


def site_path(id_: str, rel: str | None = None, page: int = 1, newest: bool = True) -> str:
    """The file of a node's page in a site (``resource/method/tarot.html``); a later
    page or the other order of one of its paper lists has its own file."""
    if rel is None or (page == 1 and newest):
        return f"resource/{id_}.html"
    return f"resource/{id_}.{rel}-{'new' if newest else 'old'}-{page}.html"


@lru_cache(maxsize=1)
def _template():
    env = Environment(loader=FileSystemLoader(str(Path(__file__).parent / "templates")),
                      autoescape=select_autoescape(["html"]))
    return env.get_template("page.html")


@lru_cache(maxsize=1)
def stylesheet() -> str:
    """The pages' styles: inline in a served page, one shared file in a site."""
    return (Path(__file__).parent / "templates" / "page.css").read_text(encoding="utf-8")


def _wrap(title: str, body: str, links: Links, iri: str | None = None, q: str = "", rdf: str | None = None,
          csp: str = PAGE_CSP, scripts: tuple[str, ...] = ()) -> str:
    if csp == PAGE_CSP and links.stylesheet():
        csp = SITE_CSP
    nav = [("Tasks", links.home() + "#tasks"), ("Methods", links.home() + "#methods"),
           ("Datasets", links.home() + "#datasets"), ("Map", links.map_page())]
    if links.query():
        nav.append(("SPARQL", links.query()))
    return _template().render(title=title, body=Markup(body), iri=iri, rdf_href=rdf, q=q, nav=nav, csp=csp,
                              home_href=links.home(), search_href=links.search(), scripts=scripts,
                              css_href=links.stylesheet(), css=Markup(stylesheet()))


def _a(href: str, text) -> str:
    return f'<a href="{escape(href)}">{escape(text)}</a>'


def _ext(url: str, text) -> str:
    """A link off the site, only to a web address (never ``javascript:``)."""
    if url.startswith(("https://", "http://")):
        return f'<a href="{escape(url)}" rel="nofollow noopener">{escape(text)}</a>'
    return str(escape(text))


def _kind(t: str) -> str:
    return f'<span class="kind {escape(t)}">{escape(KINDS.get(t, t))}</span>'


def year_chart(years: dict[str, int], width: int = 520, height: int = 90) -> str:
    """Papers per year as a small inline SVG bar chart (every year from the first to the
    last, empty ones too)."""
    if not years:
        return ""
    ys = sorted(int(y) for y in years)
    span = list(range(ys[0], ys[-1] + 1))
    top = max(years.values())
    bw = max(4.0, min(28.0, (width - 40) / len(span)))
    w = int(bw * len(span)) + 40
    bars = []
    for k, y in enumerate(span):
        n = years.get(str(y), 0)
        h = (height - 24) * n / top if top else 0
        x = 30 + k * bw
        bars.append(f'<rect x="{x:.1f}" y="{height - 14 - h:.1f}" width="{bw - 1:.1f}" height="{h:.1f}">'
                    f'<title>{y}: {n} papers</title></rect>')
    every = max(1, len(span) // 8)
    ticks = [f'<text x="{30 + k * bw + bw / 2:.1f}" y="{height - 2}" text-anchor="middle">{y}</text>'
             for k, y in enumerate(span) if k % every == 0 or k == len(span) - 1]
    return (f'<svg class="years" role="img" aria-label="Papers per year" width="{w}" height="{height}" '
            f'viewBox="0 0 {w} {height}" xmlns="http://www.w3.org/2000/svg">'
            f'<text x="0" y="10">{top}</text>{"".join(bars)}{"".join(ticks)}</svg>')


def _counted(title: str, rows: list, total: int, links: Links, anchor: str = "") -> str:
    """A table of linked names with paper counts (the first of ``total``)."""
    if not rows:
        return ""
    count = f"{total:,}" if total <= len(rows) else f"{total:,}; the {len(rows)} with the most papers"
    more = f' <span class="muted">({count})</span>' if total > 1 else ""
    def table(part):
        body = "".join(f'<tr><td>{_a(links.node(i), lab)}</td><td class="n">{n:,}</td></tr>' for i, lab, n in part)
        return f'<table><tr><th></th><th class="n">papers</th></tr>{body}</table>'

    ident = f' id="{escape(anchor)}"' if anchor else ""
    rest = ""
    if len(rows) > LIST_SHOWN:
        rest = f"<details><summary>{len(rows) - LIST_SHOWN} more</summary>{table(rows[LIST_SHOWN:])}</details>"
    return f"<section><h2{ident}>{escape(title)}{more}</h2>{table(rows[:LIST_SHOWN])}{rest}</section>"


def _paper_list(ix, node: dict, rel: str, heading: str, links: Links, page: int, newest: bool) -> str:
    """One page of a node's papers under ``rel``, with the pager and the order switch."""
    total = ix.paper_count(node["id"], rel)
    if not total:
        return ""
    pages = (total + PER_PAGE - 1) // PER_PAGE
    page = min(max(page, 1), pages)
    rows = ix.papers(node["id"], rel, (page - 1) * PER_PAGE, PER_PAGE, newest)
    trs = []
    for p in rows:
        code = f' · {_ext(p["code"], "code")}' if p["code"] else ""
        venue = escape(p["venue"]) if p["venue"] else ""
        trs.append(f'<tr><td>{_a(links.node(p["id"]), p["label"])}<div class="meta">{venue}{code}</div></td>'
                   f'<td class="n">{p["year"] or ""}</td></tr>')
    order = ("newest first · " + _a(links.papers(node["id"], rel, 1, False), "oldest first")) if newest else \
        (_a(links.papers(node["id"], rel, 1, True), "newest first") + " · oldest first")
    if total < 2:
        order = ""
    pager = []
    if page > 1:
        pager.append(_a(links.papers(node["id"], rel, page - 1, newest), "← previous"))
    if pages > 1:
        pager.append(f"page {page} of {pages}")
    if page < pages:
        pager.append(_a(links.papers(node["id"], rel, page + 1, newest), "next →"))
    return (f'<section><h2 id="{escape(rel)}">{escape(heading)} <span class="muted">({total:,})</span></h2>'
            f'<div class="meta">{order}</div><table class="papers">{"".join(trs)}</table>'
            f'<div class="pager">{" ".join(pager)}</div></section>')


#: Aliases a page shows before "more".
ALIASES_SHOWN = 12


def _header(node: dict, links: Links, extra: str = "") -> str:
    aliases = node.get("aliases") or []
    also = ""
    if aliases:
        more = ""
        if len(aliases) > ALIASES_SHOWN:
            more = (f' <details><summary>and {len(aliases) - ALIASES_SHOWN:,} more</summary>'
                    f'{escape(", ".join(aliases[ALIASES_SHOWN:]))}</details>')
        also = f'<div class="meta">Also: {escape(", ".join(aliases[:ALIASES_SHOWN]))}{more}</div>'
    return f'<h1>{escape(node["label"])} {_kind(node["type"])}</h1>{also}{extra}'


def entity_page(ix, node: dict, links: Links, iri: str | None = None, list_rel: str | None = None,
                page: int = 1, newest: bool = True) -> str:
    """The page of a method, task, dataset, venue or code repository; ``list_rel``,
    ``page`` and ``newest`` choose the page of one of its paper lists."""
    t = node["type"]
    facts = [f'{node["papers"]:,} papers']
    if node.get("url"):
        facts.append(_ext(node["url"], node["url"]))
    if node.get("on_map"):
        facts.append(_a(links.map(node["id"]), "on the map of the field"))
    body = [_header(node, links, f'<p class="meta">{" · ".join(facts)}</p>'), year_chart(node.get("years") or {})]
    sections = {
        "Task": [("Methods proposed for it", "proposed"), ("Methods used for it", "used"), ("Datasets", "datasets"),
                 ("Related tasks", "related")],
        "Method": [("Tasks", "tasks"), ("Datasets", "datasets"), ("Code of the papers that propose it", "repos")],
        "Dataset": [("Tasks", "tasks"), ("Methods evaluated on it", "methods")],
        "Venue": [("Top tasks", "tasks"), ("Top methods", "methods"), ("Top datasets", "datasets")],
        "CodeRepository": [("Methods its papers propose", "methods")],
    }[t]
    grid = "".join(_counted(title, node.get(key) or [], node.get(key + "_total", 0), links)
                   for title, key in sections)
    body.append(f'<div class="grid">{grid}</div>')
    for rel, heading in PAPER_LISTS.get(t, ()):
        on = rel == list_rel
        body.append(_paper_list(ix, node, rel, heading, links, page if on else 1, newest if on else True))
    return _wrap(node["label"], "".join(body), links, iri, rdf=links.rdf(node["id"]))


def highlighted(text: str, spans: list, links: Links) -> str:
    """``text`` escaped, each span (start, end, node, type) a link to its node's page."""
    out, at = [], 0
    for s, e, node, t in spans:
        out.append(str(escape(text[at:s])))
        out.append(f'<mark class="{escape(t)}"><a href="{escape(links.node(node))}">{escape(text[s:e])}</a></mark>')
        at = e
    out.append(str(escape(text[at:])))
    return "".join(out)


def paper_page(node: dict, links: Links, iri: str | None = None) -> str:
    """A paper: title, venue, year, code, the abstract with its names linked, the names
    by role and related papers."""
    hl = node.get("highlights") or []
    spans = {f: [(s, e, n, t) for f2, s, e, n, t in hl if f2 == f] for f in ("title", "abstract")}
    title = highlighted(node["title"], spans["title"], links) if node.get("title") else str(escape(node["label"]))
    facts = []
    if node.get("venue"):
        facts.append(_a(links.node(node["venue"][0]), node["venue"][1]))
    if node.get("year"):
        facts.append(str(node["year"]))
    if node.get("url"):
        facts.append(_ext(node["url"], "paper"))
    for i, label, url in node.get("code") or []:
        facts.append("code: " + _ext(url, label) + f' ({_a(links.node(i), "page")})')
    body = [f'<h1>{title} {_kind("Paper")}</h1><p class="meta">{" · ".join(facts)}</p>']
    if node.get("abstract"):
        body.append(f'<h2>Abstract</h2><div class="abstract">'
                    f'{highlighted(node["abstract"], spans["abstract"], links)}</div>')
    names = node.get("names") or {}
    parts = []
    for rel, heading in (("proposes", "Proposes"), ("usesMethod", "Uses"), ("addressesTask", "Tasks"),
                         ("usesDataset", "Datasets")):
        if names.get(rel):
            items = ", ".join(_a(links.node(i), lab) for i, lab in names[rel])
            parts.append(f"<tr><th>{heading}</th><td>{items}</td></tr>")
    if parts:
        body.append(f'<h2>Names found</h2><table>{"".join(parts)}</table>')
    if node.get("related"):
        rows = "".join(f"<li>{_a(links.node(i), lab)}</li>" for i, lab, _ in node["related"])
        body.append(f"<h2>Related papers</h2><ul>{rows}</ul>")
    plain = node.get("title") or node["label"]
    return _wrap(plain, "".join(body), links, iri, rdf=links.rdf(node["id"]))


def front_page(front: dict, links: Links) -> str:
    """Counts, the tasks, methods, datasets and venues with the most papers, a search box."""
    counts = front["counts"]
    facts = " · ".join(f"{counts.get(t, 0):,} {KINDS[t]}{'s' if counts.get(t, 0) != 1 else ''}"
                       for t in ("Paper", "Method", "Task", "Dataset", "Venue", "CodeRepository") if t in counts)
    grid = "".join(_counted(title, front.get(t) or [], counts.get(t, 0), links, anchor)
                   for title, t, anchor in (("Tasks", "Task", "tasks"), ("Methods", "Method", "methods"),
                                            ("Datasets", "Dataset", "datasets"), ("Venues", "Venue", "venues")))
    body = (f'<h1>A knowledge graph of machine-learning research</h1><p class="meta">{facts}</p>'
            f'<form action="{escape(links.search())}" method="get"><input type="search" name="q" size="50" '
            f'placeholder="A method, task, dataset, acronym or title words" aria-label="Search"> '
            f'<button>Search</button></form><div class="grid">{grid}</div>')
    return _wrap("abstract-kg", body, links)


def search_page(q: str, found: dict, links: Links) -> str:
    """Search results: names first, then paper titles."""
    ents = "".join(f'<tr><td>{_a(links.node(e["id"]), e["label"])} {_kind(e["type"])}</td>'
                   f'<td class="n">{e["papers"]:,}</td></tr>' for e in found["entities"])
    papers = "".join(f'<tr><td>{_a(links.node(p["id"]), p["label"])}</td><td class="n">{p["year"] or ""}</td></tr>'
                     for p in found["papers"])
    body = [f"<h1>Search: {escape(q)}</h1>" if q else "<h1>Search</h1>"]
    if q and not ents and not papers:
        body.append('<p class="muted">Nothing found.</p>')
    if ents:
        body.append('<h2>Methods, tasks, datasets</h2><table><tr><th></th><th class="n">papers</th></tr>'
                    f"{ents}</table>")
    if papers:
        body.append(f'<h2>Papers</h2><table class="papers">{papers}</table>')
    return _wrap(f"Search: {q}" if q else "Search", "".join(body), links, q=q)


def description_page(id_: str, iri: str, rows: list, base: str, links: Links) -> str:
    """A resource without a page of its own: its triples, ``rows`` of (predicate,
    SPARQL JSON object term, the object's label or None)."""
    trs = []
    for p, o, label in rows:
        value = o["value"]
        if o["type"] == "uri" and value.startswith(base) and base:
            cell = _a(links.node(value[len(base):]), label or value)
        elif o["type"] == "uri":
            cell = f'<span class="iri">{escape(value)}</span>'
        else:
            cell = str(escape(value))
        trs.append(f'<tr><td class="iri">{escape(p)}</td><td>{cell}</td></tr>')
    body = f'<h1>{escape(id_)}</h1><table class="papers">{"".join(trs)}</table>'
    return _wrap(id_, body, links, iri, rdf=links.rdf(id_))


def site_search_page(links: Links) -> str:
    """A static site's search page: its script reads ``?q=`` and searches
    ``search-index.js`` in the browser."""
    body = ('<h1>Search</h1><p id="status" class="muted">Type a name, an acronym or words of a title above.</p>'
            '<div id="results"></div>')
    return _wrap("Search", body, links, csp=SITE_SEARCH_CSP, scripts=("search-index.js", "search.js"))
