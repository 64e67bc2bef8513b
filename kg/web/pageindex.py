"""The page index: what the HTML pages of a build show, counted once at build time.

A task page lists the methods proposed and used for the task, its datasets and related
tasks, each with a paper count, and its papers by year. Counted per request from the
RDF store, the largest task of a 100k-record corpus took half a second; counted here,
in one pass over the graph's papers, every page is a few indexed look-ups in a SQLite
file (``pages.sqlite`` in the output folder) that ``kg serve`` and ``kg site`` read.

Tables:

- ``node``: one row per page (paper, method, task, dataset, venue, code repository):
  id (the IRI's path under the base, ``method/tarot``), type, label, papers (how
  many papers it links), year and ``brief`` (a paper's venue and code link, JSON),
  ``data`` (JSON: aliases, papers per year, the counted lists; for a paper its
  abstract, names found in it and related papers);
- ``link``: (node, rel, year, paper) for every paper listed on a page, indexed so that
  a page of papers sorted by year is one range scan;
- ``name``: every label and alias in lower case, for look-ups by name or acronym;
- ``ent_fts`` / ``title_fts``: full-text indexes of names and paper titles (FTS5);
- ``meta``: the front page (counts, top lists) and the format version.

Pure ``generate_*`` functions make the rows from a graph; ``write_page_index`` writes
them; :class:`PageIndex` reads them.
"""
from __future__ import annotations

import heapq
import json
import math
import os
import re
import sqlite3
import zlib
from collections import Counter
from pathlib import Path
from typing import Iterator

import networkx as nx

from kg.web.fieldmap import concept_papers, leading

PAGE_INDEX = "pages.sqlite"
VERSION = "1"
#: Entries kept in each counted list of a page (methods of a task...), the most papers first.
LIST_MAX = 100
#: Related papers kept for a paper page.
RELATED_MAX = 10
#: An entity named by more papers than this says too little to relate two papers.
RELATED_HUB = 500
#: Name matches a search reads, the names with the most papers first.
SEARCH_SCAN = 2000
#: Entries of each list on the front page.
FRONT_MAX = 20
PAGE_TYPES = ("Paper", "Method", "Task", "Dataset", "Venue", "CodeRepository")
#: The paper lists of each page type: (rel, heading).
PAPER_LISTS = {"Method": (("proposes", "Papers that propose it"), ("usesMethod", "Papers that use it")),
               "Task": (("addressesTask", "Papers"),), "Dataset": (("usesDataset", "Papers"),),
               "Venue": (("publishedIn", "Papers"),), "CodeRepository": (("hasCode", "Papers"),)}
_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE node(id TEXT PRIMARY KEY, type TEXT NOT NULL, label TEXT NOT NULL, papers INTEGER NOT NULL,
                  year INTEGER, brief TEXT, data BLOB NOT NULL);
CREATE TABLE link(node TEXT NOT NULL, rel TEXT NOT NULL, year INTEGER NOT NULL, paper TEXT NOT NULL);
CREATE TABLE name(key TEXT NOT NULL, id TEXT NOT NULL);
CREATE VIRTUAL TABLE ent_fts USING fts5(text, id UNINDEXED, tokenize='unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE title_fts USING fts5(text, id UNINDEXED, tokenize='unicode61 remove_diacritics 2');
"""
_INDEXES = """
CREATE INDEX link_page ON link(node, rel, year, paper);
CREATE INDEX name_key ON name(key);
CREATE INDEX node_type ON node(type, papers);
"""


class PageIndexError(ValueError):
    """A page index that is missing or from another version."""


# ----------------------------------------------------------------------------- counting

class _Papers:
    """Each paper's neighbours by relation, read once from the graph."""

    def __init__(self, G: nx.MultiDiGraph):
        self.G = G
        self.rels: dict[str, dict[str, list[str]]] = {}
        for p, d in G.nodes(data=True):
            if d.get("type") == "Paper":
                by: dict[str, list[str]] = {}
                for _, v, k in G.out_edges(p, keys=True):
                    by.setdefault(k, []).append(v)
                self.rels[p] = {k: sorted(set(vs)) for k, vs in by.items()}

    def year(self, p: str) -> int:
        y = self.G.nodes[p].get("year")
        return int(y) if isinstance(y, int) or (isinstance(y, str) and y.isdigit()) else 0


def _top(counter: Counter, n: int = LIST_MAX) -> list[list]:
    """[[id, papers], ...], the most papers first, ties by id."""
    return [[k, c] for k, c in heapq.nsmallest(n, counter.items(), key=_by_score)]


def _counters(papers: _Papers) -> dict[str, dict[str, Counter]]:
    """Per entity, the counted lists of its page: {entity: {list name: Counter}}."""
    out: dict[str, dict[str, Counter]] = {}

    def add(e: str, what: str, items) -> None:
        c = out.setdefault(e, {}).setdefault(what, Counter())
        c.update(items)

    for p, rels in papers.rels.items():
        prop, used = rels.get("proposes", []), rels.get("usesMethod", [])
        methods = sorted(set(prop) | set(used))
        tasks, datasets = rels.get("addressesTask", []), rels.get("usesDataset", [])
        repos, venues = rels.get("hasCode", []), rels.get("publishedIn", [])
        y = papers.year(p)
        for e in {*methods, *tasks, *datasets, *repos, *venues}:
            if y:
                add(e, "years", (y,))
        for t in tasks:
            add(t, "proposed", prop)
            add(t, "used", [m for m in used if m not in prop])
            add(t, "datasets", datasets)
            add(t, "related", [x for x in tasks if x != t])
        for m in methods:
            add(m, "tasks", tasks)
            add(m, "datasets", datasets)
        for m in prop:
            add(m, "repos", repos)
        for d in datasets:
            add(d, "tasks", tasks)
            add(d, "methods", methods)
        for v in venues:
            add(v, "tasks", tasks)
            add(v, "methods", methods)
            add(v, "datasets", datasets)
        for r in repos:
            add(r, "methods", prop)
    return out


def _related(papers: _Papers, members: dict[str, list[str]]) -> dict[str, list[list]]:
    """Per paper, the papers sharing the rarest methods, tasks and datasets with it
    (each shared entity weighs 1 / log2(1 + its papers), as
    :func:`kg.resolve.algorithms.related_papers`; entities of more than
    :data:`RELATED_HUB` papers are left out): [[paper, score], ...]."""
    weight = {e: 1.0 / math.log2(1 + len(ps)) for e, ps in members.items() if len(ps) <= RELATED_HUB}
    out = {}
    for p, rels in papers.rels.items():
        score: dict[str, float] = {}
        for k in ("proposes", "usesMethod", "addressesTask", "usesDataset"):
            for e in rels.get(k, []):
                w = weight.get(e)
                if w is None:
                    continue
                for o in members[e]:
                    if o != p:
                        score[o] = score.get(o, 0.0) + w
        # the sums add the same weights in the same order every run: no rounding needed to break ties
        best = heapq.nsmallest(RELATED_MAX, score.items(), key=_by_score)
        out[p] = [[o, round(s, 4)] for o, s in best]
    return out


def _by_score(kv: tuple[str, float]) -> tuple[float, str]:
    return -kv[1], kv[0]


def _members(papers: _Papers) -> dict[str, list[str]]:
    """{entity: its papers, sorted} over every relation a page lists."""
    out: dict[str, set[str]] = {}
    for p, rels in papers.rels.items():
        for vs in rels.values():
            for v in vs:
                out.setdefault(v, set()).add(p)
    return {e: sorted(ps) for e, ps in out.items()}


def _highlights(G: nx.MultiDiGraph, p: str, abstract: str, title: str) -> list[list]:
    """The names found in a paper, as [field, start, end, node, type] spans that do not
    overlap, in text order; only spans whose offsets still give their text."""
    spans = []
    for _, v, k, d in G.out_edges(p, keys=True, data=True):
        for m in d.get("mentions") or []:
            field = "title" if m.source.endswith("@title") else "abstract"
            text = title if field == "title" else abstract
            s, e = m.start, m.end
            if 0 <= s < e <= len(text) and text[s:e] == m.text:
                spans.append((field, s, e, v, G.nodes[v].get("type", "")))
    out, last = [], {}
    for field, s, e, v, t in sorted(set(spans), key=lambda x: (x[0], x[1], -x[2], x[3])):
        if s >= last.get(field, 0):
            out.append([field, s, e, v, t])
            last[field] = e
    return out


# ----------------------------------------------------------------------------- rows

def generate_page_rows(G: nx.MultiDiGraph) -> Iterator[tuple[str, tuple]]:
    """(table, row) of every row of the page index of ``G``, in a fixed order."""
    papers = _Papers(G)
    members = _members(papers)
    on_map = set(leading(concept_papers(G)))
    counts = _counters(papers)
    related = _related(papers, members)
    nodes = G.nodes

    def label(n: str) -> str:
        return str(nodes[n].get("label") or nodes[n].get("name") or n)

    names = []
    for n in sorted(G.nodes):
        d = nodes[n]
        t = d.get("type")
        if t not in PAGE_TYPES:
            continue
        aliases = sorted({a for a in d.get("aliases") or [] if a and a != label(n)})
        if t == "Paper":
            rels = papers.rels.get(n, {})
            title, abstract = d.get("title") or "", d.get("abstract") or ""
            venue = next(iter(rels.get("publishedIn", [])), None)
            code = [[r, nodes[r].get("url") or ""] for r in rels.get("hasCode", [])]
            data = {"title": title, "abstract": abstract, "url": d.get("url") or "", "venue": venue, "code": code,
                    "names": {k: vs for k, vs in sorted(rels.items())
                              if k in ("proposes", "usesMethod", "addressesTask", "usesDataset")},
                    "highlights": _highlights(G, n, abstract, title), "related": related.get(n, [])}
            brief = json.dumps([label(venue) if venue else "", code[0][1] if code else ""], ensure_ascii=False)
            yield "node", (n, t, label(n), 0, papers.year(n) or None, brief, _pack(data))
            yield "title_fts", (title or label(n), n)
            continue
        c = counts.get(n, {})
        data = {"aliases": aliases, "url": d.get("url") or "", "on_map": n in on_map,
                "years": {str(y): k for y, k in sorted(c.get("years", Counter()).items())}}
        for what, counter in sorted(c.items()):
            if what != "years":
                data[what] = _top(counter)
                data[what + "_total"] = len(counter)
        ps = members.get(n, [])
        yield "node", (n, t, label(n), len(ps), None, None, _pack(data))
        for rel, _ in PAPER_LISTS.get(t, ()):
            for p in ps:
                if n in papers.rels[p].get(rel, ()):
                    yield "link", (n, rel, papers.year(p), p)
        for key in sorted({label(n).casefold(), *(a.casefold() for a in aliases)}):
            yield "name", (key, n)
        names.append((-len(ps), n, " ; ".join([label(n), *aliases])))
    # the most papers first: a search reads the matches in this order and stops early
    for _, n, text in sorted(names):
        yield "ent_fts", (text, n)
    yield "meta", ("front", _dump(front_page(G, members)))
    yield "meta", ("version", VERSION)


def front_page(G: nx.MultiDiGraph, members: dict[str, list[str]]) -> dict:
    """Counts per type and the entities with the most papers of each type."""
    by_type: dict[str, list[tuple[int, str]]] = {}
    for n, d in G.nodes(data=True):
        t = d.get("type")
        if t in PAGE_TYPES:
            by_type.setdefault(t, []).append((len(members.get(n, ())), n))
    out = {"counts": {t: len(v) for t, v in sorted(by_type.items())}}
    for t in ("Task", "Method", "Dataset", "Venue"):
        best = heapq.nsmallest(FRONT_MAX, by_type.get(t, []), key=lambda x: (-x[0], x[1]))
        out[t] = [[n, k] for k, n in best]
    return out


def _dump(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _pack(obj) -> bytes:
    """A page's data as stored: compact JSON, compressed (a third of the size)."""
    return zlib.compress(_dump(obj).encode("utf-8"), 6)


def write_page_index(G: nx.MultiDiGraph, path: str | Path) -> None:
    """Write the page index of ``G`` to ``path`` (a new file; the same graph gives the
    same bytes)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".part")
    if tmp.exists():
        tmp.unlink()
    con = sqlite3.connect(tmp)
    try:
        con.execute("PRAGMA journal_mode=OFF")
        con.execute("PRAGMA synchronous=OFF")
        con.executescript(_SCHEMA)
        batch: dict[str, list[tuple]] = {}
        for table, row in generate_page_rows(G):
            rows = batch.setdefault(table, [])
            rows.append(row)
            if len(rows) >= 5000:
                _insert(con, table, rows)
                rows.clear()
        for table, rows in batch.items():
            _insert(con, table, rows)
        con.executescript(_INDEXES)
        con.commit()
        con.execute("VACUUM")
    finally:
        con.close()
    os.replace(tmp, path)


def _insert(con: sqlite3.Connection, table: str, rows: list[tuple]) -> None:
    if rows:
        con.executemany(f"INSERT INTO {table} VALUES ({','.join('?' * len(rows[0]))})", rows)


# ----------------------------------------------------------------------------- reading

_WORD = re.compile(r"\w+", re.UNICODE)


def _tier(label: str, words: list[str]) -> int:
    """How well a name matches a search: 0 its label has every word (the last as a
    prefix), 1 only an alias has them."""
    have = _WORD.findall(label.casefold())
    return 0 if all(any(h.startswith(w) for h in have) for w in words) else 1


class PageIndex:
    """A build's page index, opened read-only."""

    def __init__(self, path: str | Path):
        path = Path(path)
        if not path.is_file():
            raise PageIndexError(f"{path}: no page index (run `kg build` with this version)")
        self.path = path
        self.con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
        row = self.con.execute("SELECT value FROM meta WHERE key='version'").fetchone()
        if not row or row[0] != VERSION:
            self.con.close()
            raise PageIndexError(f"{path}: a page index of another version (rebuild with `kg build`)")

    def close(self) -> None:
        self.con.close()

    def front(self) -> dict:
        """Counts per type and the lists of the front page ([[id, label, papers], ...])."""
        data = json.loads(self.con.execute("SELECT value FROM meta WHERE key='front'").fetchone()[0])
        labels = self.labels([i for k, v in data.items() if k != "counts" for i, _ in v])
        return {k: v if k == "counts" else [[i, labels[i][0], n] for i, n in v] for k, v in data.items()}

    def labels(self, ids) -> dict[str, tuple[str, str]]:
        """{id: (label, type)} of the nodes ``ids`` names (the unknown left out)."""
        ids = sorted(set(ids))
        out = {}
        for a in range(0, len(ids), 500):
            chunk = ids[a:a + 500]
            out.update((i, (lab, t)) for i, lab, t in self.con.execute(
                f"SELECT id, label, type FROM node WHERE id IN ({','.join('?' * len(chunk))})", chunk))
        return out

    def node(self, id_: str) -> dict | None:
        """A page's node, or None: id, type, label, papers, year, brief and its data, the
        nodes it lists given with their labels (``[id, label, papers]``; for a paper,
        ``venue`` ``[id, label]``, ``code`` ``[[id, label, url]]``, ``names`` ``{rel:
        [[id, label]]}``, ``related`` ``[[id, label, score]]``)."""
        row = self.con.execute("SELECT id, type, label, papers, year, brief, data FROM node WHERE id=?",
                               (id_,)).fetchone()
        if row is None:
            return None
        data = json.loads(zlib.decompress(row[6]))
        node = {"id": row[0], "type": row[1], "label": row[2], "papers": row[3], "year": row[4],
                "brief": json.loads(row[5]) if row[5] else None}
        if row[1] == "Paper":
            names = data["names"]
            venue = data["venue"]
            labels = self.labels([*(i for vs in names.values() for i in vs), *(i for i, _ in data["related"]),
                                  *(i for i, _ in data["code"]), *([venue] if venue else [])])
            lab = lambda i: labels.get(i, (i, ""))[0]  # noqa: E731
            data.update(venue=[venue, lab(venue)] if venue else None,
                        code=[[i, lab(i), url] for i, url in data["code"]],
                        names={k: [[i, lab(i)] for i in vs] for k, vs in names.items()},
                        related=[[i, lab(i), sc] for i, sc in data["related"]])
        else:
            lists = [k for k, v in data.items() if isinstance(v, list) and k != "aliases"]
            labels = self.labels([i for k in lists for i, _ in data[k]])
            for k in lists:
                data[k] = [[i, labels.get(i, (i, ""))[0], n] for i, n in data[k]]
        return {**node, **data}

    def paper_count(self, id_: str, rel: str) -> int:
        return self.con.execute("SELECT count(*) FROM link WHERE node=? AND rel=?", (id_, rel)).fetchone()[0]

    def papers(self, id_: str, rel: str, offset: int = 0, limit: int = 50, newest: bool = True) -> list[dict]:
        """One page of the papers a node lists under ``rel``, by year (newest or oldest
        first, ties by id): [{id, label, year, venue, code}]."""
        order = "DESC" if newest else "ASC"
        rows = self.con.execute(
            "SELECT n.id, n.label, n.year, n.brief FROM link l JOIN node n ON n.id = l.paper "
            f"WHERE l.node=? AND l.rel=? ORDER BY l.year {order}, l.paper LIMIT ? OFFSET ?",
            (id_, rel, limit, offset)).fetchall()
        out = []
        for pid, lab, year, brief in rows:
            venue, code = json.loads(brief) if brief else ("", "")
            out.append({"id": pid, "label": lab, "year": year, "venue": venue, "code": code})
        return out

    def search(self, q: str, limit: int = 20) -> dict:
        """Entities by name, alias or acronym (exact names first, then names with these
        words, the most papers first) and papers by title words: {"entities": [...],
        "papers": [...]}, each {id, type, label, papers}."""
        q = q.strip()[:200]
        words = _WORD.findall(q.casefold())
        if not words:
            return {"entities": [], "papers": []}
        entities = self.con.execute(
            "SELECT n.id, n.type, n.label, n.papers FROM name m JOIN node n ON n.id = m.id WHERE m.key=? "
            "ORDER BY n.papers DESC, n.id LIMIT ?", (q.casefold(), limit)).fetchall()
        # every word, the last one also as a prefix ("segm" finds "segmentation") once it
        # has three letters: a shorter prefix matches too many words to be of use
        match = " ".join(f'"{w}"' for w in words) + ("*" if len(words[-1]) >= 3 else "")
        if len(entities) < limit:
            seen = {r[0] for r in entities}
            found = self.con.execute(
                "SELECT n.id, n.type, n.label, n.papers FROM (SELECT id FROM ent_fts WHERE ent_fts MATCH ? "
                "LIMIT ?) f JOIN node n ON n.id = f.id", (match, SEARCH_SCAN)).fetchall()
            entities += sorted((r for r in found if r[0] not in seen),
                               key=lambda r: (_tier(r[2], words), -r[3], r[0]))[:limit - len(entities)]
        papers = self.con.execute(
            "SELECT n.id, n.type, n.label, n.year FROM (SELECT id, rank FROM title_fts WHERE title_fts MATCH ? "
            "ORDER BY rank LIMIT ?) f JOIN node n ON n.id = f.id ORDER BY f.rank, n.id", (match, limit)).fetchall()
        keys = ("id", "type", "label", "papers")
        return {"entities": [dict(zip(keys, r)) for r in entities],
                "papers": [dict(zip(("id", "type", "label", "year"), r)) for r in papers]}
