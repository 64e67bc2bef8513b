"""``kg site``: a build's pages as static files, for any static host.

The same pages as ``kg serve`` (:mod:`kg.web.pages`), linked relatively: the front
page ``index.html``, a page a node (``resource/method/tarot.html``) and a file for each
later page or the oldest-first order of a paper list, ``search.html``, which
searches a small index of names and titles (``search-index.js``) in the browser, and
the build's map of the field (``graph.html``), whose concepts link to their pages. The
folder is written beside the target and swapped in whole at the end.
"""
from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

from kg.files import swap
from kg.web import pages
from kg.web.pageindex import PAGE_INDEX, PAPER_LISTS, PageIndex
from kg.web.pages import PER_PAGE, SiteLinks, site_path

_SEARCH_JS = Path(__file__).parent / "templates" / "search.js"


def site_files(ix: PageIndex, store: Path) -> Iterator[tuple[str, str, bool]]:
    """(path in the site, text, whether it is a node's own page) of every file of the
    site, the front page first; the build's map of the field (``graph.html``) comes too,
    its concepts linked to their pages."""
    yield "index.html", pages.front_page(ix.front(), SiteLinks("index.html")), False
    yield "search.html", pages.site_search_page(SiteLinks("search.html")), False
    yield "search.js", _SEARCH_JS.read_text(encoding="utf-8"), False
    yield "style.css", pages.stylesheet(), False
    view = store / "graph.html"
    if view.is_file():
        yield "graph.html", view.read_text(encoding="utf-8").replace('<body data-pages="serve">',
                                                                   '<body data-pages="site">', 1), False
    yield "search-index.js", "var KG_SEARCH = " + json.dumps(search_index(ix), ensure_ascii=False,
                                                              separators=(",", ":")) + ";\n", False
    for (id_,) in ix.con.execute("SELECT id FROM node ORDER BY id").fetchall():
        node = ix.node(id_)
        here = site_path(id_)
        if node["type"] == "Paper":
            yield here, pages.paper_page(node, SiteLinks(here)), True
            continue
        yield here, pages.entity_page(ix, node, SiteLinks(here)), True
        for rel, _ in PAPER_LISTS.get(node["type"], ()):
            n = ix.paper_count(id_, rel)
            last = (n + PER_PAGE - 1) // PER_PAGE
            for newest in (True, False):
                for page in range(1, last + 1):
                    if (page == 1 and newest) or n < 2:
                        continue
                    path = site_path(id_, rel, page, newest)
                    yield path, pages.entity_page(ix, node, SiteLinks(path), None, rel, page, newest), False


def search_index(ix: PageIndex) -> dict:
    """What the site's search page searches, compact: each name as [label, id, papers,
    aliases] (its page and type follow from the id) and each paper as [title, the id
    without ``paper/``, year]."""
    names, papers = [], []
    texts = dict(ix.con.execute("SELECT id, text FROM ent_fts"))  # (joined, the FTS table is scanned a row)
    for id_, t, label, n, year in ix.con.execute("SELECT id, type, label, papers, year FROM node ORDER BY id"):
        if t == "Paper":
            papers.append([label, id_.split("/", 1)[1], year or 0])
        else:
            aliases = [a for a in (texts.get(id_) or "").split(" ; ")[1:] if a]
            names.append([label, id_, n, aliases] if aliases else [label, id_, n])
    return {"names": names, "papers": papers}


def write_site(store: str | Path, out: str | Path, talk=None) -> tuple[int, int]:
    """Write the site of the build in ``store`` to the folder ``out`` (replaced whole);
    returns (files, bytes)."""
    store, out = Path(store), Path(out).resolve()
    ix = PageIndex(store / PAGE_INDEX)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    files = size = 0
    try:
        total = ix.con.execute("SELECT count(*) FROM node").fetchone()[0]
        bar = talk.bar("writing pages", total, "pages") if talk else None
        made: set[Path] = set()
        for path, text, own in site_files(ix, store):
            target = tmp / path
            if target.parent not in made:
                target.parent.mkdir(parents=True, exist_ok=True)
                made.add(target.parent)
            data = text.encode("utf-8")
            target.write_bytes(data)
            files += 1
            size += len(data)
            if bar is not None and own:
                bar.update()
        if bar is not None:
            bar.close()
        swap(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        ix.close()
    return files, size
