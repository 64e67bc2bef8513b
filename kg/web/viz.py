"""Interactive HTML views of the graph (pyvis / vis-network), fully offline.

:func:`build_view` returns a :class:`View` (pyvis's node records, the links, the
options and the node cards); :func:`render_html` turns it into one
self-contained page: vis-network's script and style are inlined through pyvis's
own template loader, as its ``cdn_resources="in_line"`` pages are, nothing is fetched from
a CDN, and every text from an abstract reaches the page as JSON data shown
through ``textContent`` (never as HTML).
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import math

import networkx as nx
import numpy as np
import orjson
from jinja2 import ChoiceLoader, Environment, FileSystemLoader, select_autoescape
from pyvis.network import Network
from pyvis.node import Node

from kg.web.layout import layout_pairs
from kg.web.views import VIEWS, best_connected, degrees, ego_graph, induced, member_names, view_graph

#: Colour and shape of each node type (also the legend).
STYLE = {
    "Paper": ("#4e79a7", "dot"),
    "Method": ("#e15759", "diamond"),
    "Task": ("#59a14f", "triangle"),
    "Dataset": ("#f28e2b", "square"),
    "CodeRepository": ("#76b7b2", "star"),
    "Venue": ("#9c755f", "hexagon"),
}
EDGE_COLOR = {
    "proposes": "#e15759", "usesMethod": "#f1a3a5", "addressesTask": "#59a14f", "usesDataset": "#f28e2b",
    "hasCode": "#76b7b2", "publishedIn": "#c9b9ab", "appliedTo": "#8cd17d", "evaluatedOn": "#ffbe7d",
    "usedFor": "#b6d7a8", "shares": "#9fb3c8",
}
#: Above this many nodes, positions come from networkx and physics is off.
PHYSICS_LIMIT = 300
#: Above this many nodes a view keeps the top nodes by degree and says so.
NODE_BUDGET = 5000
#: Above this many links a view keeps the heaviest ones and says so.
EDGE_BUDGET = 20000
#: A node card lists at most this many links (and how many more there are).
CARD_LINKS = 200


def _safe_json(obj) -> str:
    """JSON that can sit inside a <script> element: no "</script>", no HTML.

    Written by orjson (keys sorted, compact, UTF-8): a large build's four pages hold
    over a hundred megabytes of it, several times faster than the standard library.

    >>> print(_safe_json({"b": "</script>", "a": [1, 0.5, None]}))
    {"a":[1,0.5,null],"b":"\\u003c/script\\u003e"}
    """
    text = orjson.dumps(obj, option=orjson.OPT_SORT_KEYS).decode("utf-8")
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026") \
        .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


class CardCache(dict):
    """Node cards (id -> card) made for one graph, kept between its views, with the
    graph's labels and their order, made once for all the views that need them."""

    def __init__(self, G: nx.MultiDiGraph):
        super().__init__()
        self.G = G
        self._labels: dict | None = None
        self._rank: dict | None = None

    @property
    def labels(self) -> dict:
        """node -> label, every node of the graph."""
        if self._labels is None:
            self._labels = {u: d.get("label", u) for u, d in self.G.nodes(data=True)}
        return self._labels

    @property
    def rank(self) -> dict:
        """node -> its place in the order of (label, id) of every node."""
        if self._rank is None:
            labels = self.labels
            self._rank = {u: i for i, u in enumerate(sorted(labels, key=lambda u: (labels[u], u)))}
        return self._rank


def first_links(pred: dict, label, rank: dict, limit: int) -> list[tuple]:
    """The ``limit`` smallest (key, label, node) of the links into a node (``pred``:
    node -> key -> data, its predecessors in networkx's adjacency), where ``rank``
    orders nodes by (label, id): without a tuple for each of a hub's thousands of links.

    >>> rank = {"a": 1, "b": 0, "c": 2}
    >>> first_links({"a": {"x": {}}, "b": {"y": {}, "x": {}}, "c": {"x": {}}}, str.upper, rank, 3)
    [('x', 'B', 'b'), ('x', 'A', 'a'), ('x', 'C', 'c')]
    """
    order = sorted(pred, key=rank.__getitem__)
    out: list[tuple] = []
    for k in sorted(set().union(*pred.values())):
        for u in order:
            if k in pred[u]:
                out.append((k, label(u), u))
                if len(out) == limit:
                    return out
    return out


def _card(G: nx.MultiDiGraph, n: str, cache: CardCache | None = None) -> dict:
    """The card of node ``n``: what the page shows when it is clicked. ``cache`` (of
    ``G``), its labels and their order, saves the lookups when many cards are made."""
    nodes, succ = G.nodes, G.succ
    label = cache.labels.__getitem__ if cache is not None else (lambda u: nodes[u].get("label", u))
    d = nodes[n]
    card = {"id": n, "type": d["type"], "label": d.get("label", n)}
    if d["type"] == "Paper":
        card.update(title=d.get("title") or "", abstract=d.get("abstract", ""), venue=d.get("venue") or "",
                    docs=list(d.get("docs", [])))
        spans = []
        for v, keys in succ[n].items():
            for ed in keys.values():
                for m in ed.get("mentions", []):
                    if not m.source.endswith("@title"):
                        spans.append([m.start, m.end, nodes[v]["type"]])
        card["spans"] = sorted(set(map(tuple, spans)))
        card["links"] = sorted(
            [key, label(v), v] for v, keys in succ[n].items() for key in keys if key != "publishedIn"
        )
        card["code"] = sorted(nodes[v]["url"] for v, keys in succ[n].items() for k in keys if k == "hasCode")
    else:
        card["aliases"] = list(d.get("aliases", []))
        if d.get("url", "").startswith("https://github.com/"):
            card["url"] = d["url"]
        pred = G.pred[n]
        count = sum(map(len, pred.values()))
        if count > CARD_LINKS:  # a hub named by thousands of papers: the first ones and a count
            card["more"] = count - CARD_LINKS
            if cache is not None:
                links = first_links(pred, label, cache.rank, CARD_LINKS)
            else:
                links = heapq.nsmallest(CARD_LINKS, ((k, label(u), u) for u, keys in pred.items() for k in keys))
        else:
            links = [(k, label(u), u) for u, keys in pred.items() for k in keys]  # tuples: JSON arrays too
        card["links"] = sorted(links)
    return card


def _tooltip(G: nx.MultiDiGraph, n: str) -> str:
    d = G.nodes[n]
    if d["type"] == "Paper":
        text = d.get("abstract", "")
        return (d.get("label", "") + "\n\n" + (text[:400] + ("…" if len(text) > 400 else "")))
    aliases = d.get("aliases", [])
    return f"{d['type']}: {d.get('label', n)}" + (f"\nalso: {', '.join(aliases)}" if aliases else "")


def _edge_title(key: str, shared: list[str], count: int) -> str:
    """The hover text of a link: its relation and the first of the ``count`` names behind it."""
    head = {"usedFor": "used for", "shares": "shares"}.get(key, key)
    if count:
        more = f" (+{count - len(shared)} more)" if count > len(shared) else ""
        return f"{head}: " + "; ".join(shared) + more
    return head


def view_positions(H: nx.MultiDiGraph) -> dict:
    """Positions of a view's nodes from the numpy layout (:mod:`kg.web.layout`). Venues
    link to every paper: they stay out of the forces, each at its papers' centre."""
    venues = [n for n, d in H.nodes(data=True) if d["type"] == "Venue"]
    core = [n for n, d in H.nodes(data=True) if d["type"] != "Venue"]
    index = {n: i for i, n in enumerate(core)}
    pairs = np.fromiter((i for u, v in H.edges() if u in index and v in index for i in (index[u], index[v])),
                        dtype=np.int64)
    pos = layout_pairs(core, pairs.reshape(-1, 2), iterations=60 if len(core) <= 2000 else 35)
    for v in venues:
        pts = [pos[u] for u in H.predecessors(v) if u in pos] or [(0.0, 0.0)]
        pos[v] = (sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts))
    return pos


def edge_records(G: nx.MultiDiGraph, H: nx.MultiDiGraph, deg: dict, budget: int) -> tuple[list[dict], str]:
    """vis-network's edge records of a view (pyvis's own format, appended as they are:
    ``Network.add_edge`` checks node membership in a list, O(n) a call), and what a
    ``budget`` of links left out ("" if nothing). Over the budget the heaviest links
    stay, and among equals those of the least connected nodes (they would vanish)."""
    edges = [(u, v, k, d) for u, v, k, d in H.edges(keys=True, data=True)]
    n_edges = len(edges)
    dropped = ""
    if n_edges > budget:
        # the key ends with (u, v, key), a total order: the input order does not matter
        # (tuples compared in C: a key function a link is several times slower)
        ranked = sorted([(-d.get("weight", 1), min(deg[u], deg[v]), u, v, k, d) for u, v, k, d in edges])
        edges = sorted([e[2:] for e in ranked[:budget]])  # (u, v, key) are distinct: data never compared
        dropped = f"Showing {budget:,} of {n_edges:,} links."
    else:
        edges.sort(key=lambda e: e[:3])
    records = []
    for u, v, key, d in edges:
        width = round(1 + min(6, math.log2(1 + d.get("weight", 1))), 2)
        records.append({"from": u, "to": v, "title": _edge_title(key, *member_names(G, d, first=12)),
                        "color": EDGE_COLOR.get(key, "#bbbbbb"), "width": width, "arrows": "to" if key != "shares" else "",
                        "kgrel": key})
    return records, dropped


@dataclass
class View:
    """One drawn view: vis-network's node records (made by pyvis's ``Node``) and
    links, its options, and what the page shows beside them: the title, the note
    on what a budget left out, the node cards (from the full graph, keyed by id),
    the venue checkboxes, the node types and the node in focus."""
    nodes: list[dict]
    edges: list[dict]
    options: dict
    title: str
    note: str = ""
    cards: dict = field(default_factory=dict)
    venues: list = field(default_factory=list)
    types: list = field(default_factory=list)
    focus: str | None = None


def build_view(G: nx.MultiDiGraph, view: str = "overview", focus: str | None = None, depth: int = 2,
               budget: int = NODE_BUDGET, title: str | None = None, edge_budget: int | None = None,
               cards: dict | None = None) -> View:
    """A :class:`View` of one view of ``G`` (see :mod:`kg.web.views`), or of the
    ego graph of ``focus`` (``depth`` hops).

    ``cards``, if given, a :class:`CardCache` of ``G``, keeps node cards (and the
    graph's labels) between views of one graph.

    >>> G = nx.MultiDiGraph(); G.add_node("task/x", type="Task", label="x", aliases=[])
    >>> build_view(G).nodes[0]["label"]
    'x'
    """
    H = ego_graph(G, focus, depth) if focus is not None else view_graph(G, view, limit=budget)
    total = H.graph.get("total_nodes", H.number_of_nodes())
    if H.number_of_nodes() > budget:
        keep = best_connected(degrees(H), budget)
        if focus is not None and focus not in keep:
            keep[-1] = focus
        H = induced(H, keep)
    note = f"Showing the {H.number_of_nodes():,} best-connected of {total:,} nodes." \
        if total > H.number_of_nodes() else ""
    deg = degrees(H)
    big = H.number_of_nodes() > PHYSICS_LIMIT
    edges, dropped = edge_records(G, H, deg, edge_budget or EDGE_BUDGET)
    if dropped:
        note = (note + " " if note else "") + dropped
    label = VIEWS.get(view, ("View", ""))[0] if focus is None else f"around {G.nodes[focus].get('label', focus)}"
    cards = cards if cards is not None else CardCache(G)
    todo = [n for n in H.nodes if n not in cards]
    shared = cards if len(todo) > 100 else None  # its labels pay off over many cards
    for n in todo:
        cards[n] = _card(G, n, shared)
    venues: dict[str, int] = {}
    for _, d in H.nodes(data=True):
        if d.get("venue") and d["type"] == "Paper":
            venues[d["venue"]] = venues.get(d["venue"], 0) + 1
    return View(nodes=node_records(G, H, deg, focus, big), edges=edges, options=view_options(big),
                title=title or f"abstract-kg: {label}", note=note, cards={n: cards[n] for n in sorted(H.nodes)},
                venues=venue_groups(venues), types=sorted({d["type"] for _, d in H.nodes(data=True)}), focus=focus)


def node_records(G: nx.MultiDiGraph, H: nx.MultiDiGraph, deg: dict, focus: str | None, big: bool) -> list[dict]:
    """vis-network's records of the nodes of ``H``, in sorted order, as pyvis's ``Node``
    makes them; a large view gets fixed positions from networkx."""
    pos = view_positions(H) if big else {}
    spread = 250 * max(1.0, H.number_of_nodes() ** 0.5)
    records = []
    for n in sorted(H.nodes):
        d = H.nodes[n]
        color, shape = STYLE.get(d["type"], ("#bab0ac", "dot"))
        label = d.get("label", n)
        opts = dict(title=_tooltip(G, n), size=round(8 + min(32, 4 * deg[n] ** 0.5), 1),
                    kgtype=d["type"], kgnames=[label, *d.get("aliases", [])], kgvenue=d.get("venue") or "")
        if n == focus:
            opts.update(borderWidth=4, size=40)
        if big:
            opts.update(x=round(pos[n][0] * spread, 1), y=round(pos[n][1] * spread, 1), physics=False)
        cut = 28 if d["type"] == "Paper" else 40
        shown = (label if len(label) <= cut else label[:cut - 1] + "…") or n
        records.append(Node(n, shape, label=shown, color=color, font_color=False, **opts).options)
    return records


def view_options(big: bool) -> dict:
    """vis-network's options of a view; a large one is drawn without physics."""
    return {
        "physics": {"enabled": not big, "stabilization": {"iterations": 250},
                    "barnesHut": {"gravitationalConstant": -6000, "springLength": 120}},
        "interaction": {"hover": True, "tooltipDelay": 150, "hideEdgesOnDrag": big, "hideEdgesOnZoom": big},
        "edges": {"smooth": False},
        "nodes": {"font": {"size": 14}, "scaling": {"label": {"drawThreshold": 3}}},
        "layout": {"improvedLayout": not big},
    }


@lru_cache(maxsize=1)
def _environment() -> Environment:
    """The page templates, and pyvis's own (whose ``lib/`` holds the vis-network
    script and style that pages include inline, as pyvis's in-line pages do); made
    once, so that the 470 kB script is compiled once a process, not once a page."""
    pyvis_templates = Network(cdn_resources="in_line").templateEnv.loader
    return Environment(loader=ChoiceLoader([FileSystemLoader(str(Path(__file__).parent / "templates")),
                                            pyvis_templates]),
                       autoescape=select_autoescape(["html"]))


def render_html(view: View) -> str:
    """The page of a view as one self-contained HTML string (no external request)."""
    return _environment().get_template("view.html").render(
        title=view.title,
        note=view.note,
        nodes_json=_safe_json(view.nodes),
        edges_json=_safe_json(view.edges),
        options_json=_safe_json(view.options),
        cards_json=_safe_json(view.cards),
        legend=[(t, c, s) for t, (c, s) in STYLE.items() if t in view.types],
        edge_legend=sorted((k, c) for k, c in EDGE_COLOR.items() if k in {e.get("kgrel") for e in view.edges}),
        focus_json=_safe_json(view.focus),
        venues=view.venues,
    )


#: Venue series with a checkbox of their own on the map; the others share one.
SERIES_CONTROLS = 19


def venue_groups(papers: dict[str, int], limit: int = SERIES_CONTROLS) -> list[tuple[str, list[str]]]:
    """The venue checkboxes of a page: (name, its venues) for each of the ``limit``
    venue series with the most papers (``papers``: venue -> papers), by name, then one
    for all the others. A series is a venue without its year ("NeurIPS 2018" and
    "NeurIPS 2019" are "NeurIPS").

    >>> venue_groups({"ICML 2024": 3, "ICML 2025": 1, "UAI 2020": 2, "COLT 2019": 1}, limit=2)
    [('ICML', ['ICML 2024', 'ICML 2025']), ('UAI', ['UAI 2020']), ('other venues', ['COLT 2019'])]
    """
    from kg.web.fieldmap import venue_series

    members: dict[str, list[str]] = {}
    count: dict[str, int] = {}
    for venue, n in sorted(papers.items()):
        s = venue_series(venue)
        members.setdefault(s, []).append(venue)
        count[s] = count.get(s, 0) + n
    order = sorted(members, key=lambda s: (-count[s], s))
    rows = [(s or "no venue", members[s]) for s in sorted(order[:limit])]
    if len(order) > limit:
        rows.append(("other venues", sorted(v for s in order[limit:] for v in members[s])))
    return rows


def series_controls(data: dict, limit: int = SERIES_CONTROLS) -> list[tuple[str, str]]:
    """(name, comma-separated indexes into ``data["series"]``) of each venue checkbox
    of the map (:func:`venue_groups`).

    >>> series_controls({"series": ["A", "B", "C"], "papers": [["p", "B 2020", 2020, "x"]]}, limit=1)
    [('B', '1'), ('other venues', '0,2')]
    """
    from kg.web.fieldmap import venue_series

    papers = {s: 0 for s in data["series"]}
    for _, venue, _, _ in data["papers"]:
        papers[venue_series(venue)] += 1
    index = {s: k for k, s in enumerate(data["series"])}
    return [(name, ",".join(str(index[s]) for s in sorted(venues, key=index.get)))
            for name, venues in venue_groups(papers, limit)]


def render_map(G: nx.MultiDiGraph, title: str | None = None, data: dict | None = None) -> str:
    """The field map of ``G`` (:mod:`kg.web.fieldmap`) as one self-contained page."""
    from kg.web.fieldmap import CONCEPTS, generate_map, opening_size, trend_svg

    data = data if data is not None else generate_map(G)
    env = _environment()
    shown = opening_size(data)
    note = (f"The {shown:,} concepts with the most papers, of {data['total']:,}; search or expand a concept "
            f"to draw more.") if data["total"] > shown else f"All {shown:,} concepts."
    return env.get_template("map.html").render(
        title=title or "abstract-kg: map of the field",
        map_json=_safe_json(data),
        types=[(t, STYLE[t][0]) for t in CONCEPTS],
        years=data["years"],
        series_controls=series_controls(data),
        clusters=data["clusters"],
        trend_svg=trend_svg(data),
        note=note,
    )


def page_html(G: nx.MultiDiGraph, view: str = "overview", focus: str | None = None, depth: int = 2,
              title: str | None = None, cards: dict | None = None) -> tuple[str, int, str]:
    """One page of ``G``: (html, nodes drawn at the opening, note). The overview is the
    map of the field (:func:`render_map`); a ``focus`` gives the ego view around it;
    the other views are drawn by :func:`build_view`."""
    if focus is None and view == "overview":
        from kg.web.fieldmap import generate_map, opening_size

        data = generate_map(G)
        shown = opening_size(data)
        note = f"the {shown:,} concepts with the most papers, of {data['total']:,}" if data["total"] > shown else ""
        return render_map(G, title, data), shown, note
    net = build_view(G, view=view, focus=focus, depth=depth, title=title, cards=cards)
    return render_html(net), len(net.nodes), net.note
