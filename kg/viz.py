"""Interactive HTML views of the graph (pyvis / vis-network), fully offline.

:func:`build_view` returns a pyvis ``Network`` (with the node cards attached);
:func:`render_html` turns it into one self-contained page: vis-network's
script and style are inlined from the pyvis package, nothing is fetched from
a CDN, and every text from an abstract reaches the page as JSON data shown
through ``textContent`` (never as HTML).
"""
from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import networkx as nx
from jinja2 import Environment, FileSystemLoader, select_autoescape
from pyvis.network import Network

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
}
#: Above this many nodes, positions come from networkx and physics is off.
PHYSICS_LIMIT = 300
#: Above this many nodes a view keeps the top nodes by degree and says so.
NODE_BUDGET = 2000


def _safe_json(obj) -> str:
    """JSON that can sit inside a <script> element: no "</script>", no HTML."""
    text = json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026") \
        .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _card(G: nx.MultiDiGraph, n: str) -> dict:
    d = G.nodes[n]
    card = {"id": n, "type": d["type"], "label": d.get("label", n)}
    if d["type"] == "Paper":
        card.update(title=d.get("title") or "", abstract=d.get("abstract", ""), venue=d.get("venue") or "",
                    docs=list(d.get("docs", [])))
        spans = []
        for _, v, key, ed in G.out_edges(n, keys=True, data=True):
            for m in ed.get("mentions", []):
                if not m.source.endswith("@title"):
                    spans.append([m.start, m.end, G.nodes[v]["type"]])
        card["spans"] = sorted(set(map(tuple, spans)))
        card["links"] = sorted(
            [key, G.nodes[v].get("label", v), v] for _, v, key in G.out_edges(n, keys=True) if key != "publishedIn"
        )
        card["code"] = sorted(G.nodes[v]["url"] for _, v, k in G.out_edges(n, keys=True) if k == "hasCode")
    else:
        card["aliases"] = list(d.get("aliases", []))
        if d.get("url", "").startswith("https://github.com/"):
            card["url"] = d["url"]
        card["links"] = sorted([k, G.nodes[u].get("label", u), u] for u, _, k in G.in_edges(n, keys=True))
    return card


def _tooltip(G: nx.MultiDiGraph, n: str) -> str:
    d = G.nodes[n]
    if d["type"] == "Paper":
        text = d.get("abstract", "")
        return (d.get("label", "") + "\n\n" + (text[:400] + ("…" if len(text) > 400 else "")))
    aliases = d.get("aliases", [])
    return f"{d['type']}: {d.get('label', n)}" + (f"\nalso: {', '.join(aliases)}" if aliases else "")


def ego_graph(G: nx.MultiDiGraph, focus: str, depth: int = 2) -> nx.MultiDiGraph:
    """The nodes within ``depth`` hops of ``focus`` (edges in either direction)."""
    return G.subgraph(nx.ego_graph(G.to_undirected(as_view=True), focus, radius=depth).nodes).copy()


def build_view(G: nx.MultiDiGraph, title: str = "abstract-kg", focus: str | None = None, depth: int = 2,
               budget: int = NODE_BUDGET) -> Network:
    """A pyvis ``Network`` of ``G`` (or of the ego graph of ``focus``).

    The network carries ``kg_title``, ``kg_cards`` (node cards keyed by id)
    and ``kg_note`` (what was left out, if anything) for :func:`render_html`.

    >>> G = nx.MultiDiGraph(); G.add_node("task/x", type="Task", label="x", aliases=[])
    >>> build_view(G).nodes[0]["label"]
    'x'
    """
    if focus is not None:
        G = ego_graph(G, focus, depth)
    note = ""
    if G.number_of_nodes() > budget:
        keep = sorted(G.nodes, key=lambda n: (-G.degree(n), n))[:budget]
        note = f"Showing the {budget} best-connected of {G.number_of_nodes()} nodes."
        G = G.subgraph(keep).copy()
    net = Network(height="100%", width="100%", directed=True, cdn_resources="in_line")
    big = G.number_of_nodes() > PHYSICS_LIMIT
    pos = nx.spring_layout(nx.Graph(G.to_undirected(as_view=True)), seed=7, k=None, iterations=50) if big else {}
    for n in sorted(G.nodes):
        d = G.nodes[n]
        color, shape = STYLE.get(d["type"], ("#bab0ac", "dot"))
        deg = G.degree(n)
        label = d.get("label", n)
        opts = dict(title=_tooltip(G, n), size=10 + min(30, 3 * deg ** 0.5 * 2),
                    kgtype=d["type"], kgnames=[label, *d.get("aliases", [])])
        if n == focus:
            opts["borderWidth"] = 4
        if big:
            opts.update(x=round(float(pos[n][0]) * 1500, 1), y=round(float(pos[n][1]) * 1500, 1), physics=False)
        cut = 28 if d["type"] == "Paper" else 40
        net.add_node(n, label=label if len(label) <= cut else label[:cut - 1] + "…", color=color, shape=shape, **opts)
    for u, v, key in sorted(G.edges(keys=True)):
        net.add_edge(u, v, title=key, color=EDGE_COLOR.get(key, "#bbbbbb"), arrows="to", kgrel=key)
    net.set_options(json.dumps({
        "physics": {"enabled": not big, "stabilization": {"iterations": 300},
                    "barnesHut": {"gravitationalConstant": -6000, "springLength": 120}},
        "interaction": {"hover": True, "tooltipDelay": 150, "navigationButtons": False},
        "edges": {"smooth": False, "width": 1},
        "nodes": {"font": {"size": 12}},
    }))
    net.kg_title = title
    net.kg_note = note
    net.kg_cards = {n: _card(G, n) for n in sorted(G.nodes)}
    return net


def _asset(name: str) -> str:
    return (resources.files("pyvis") / "lib" / "vis-9.1.2" / name).read_text(encoding="utf-8")


def render_html(net: Network) -> str:
    """The page of a view as one self-contained HTML string (no external request)."""
    env = Environment(loader=FileSystemLoader(str(Path(__file__).parent / "templates")),
                      autoescape=select_autoescape(["html"]))
    tpl = env.get_template("view.html")
    options = net.options if isinstance(net.options, dict) else json.loads(net.options.to_json())
    return tpl.render(
        title=getattr(net, "kg_title", "abstract-kg"),
        note=getattr(net, "kg_note", ""),
        vis_js=_asset("vis-network.min.js").replace("</script", "<\\/script"),
        vis_css=_asset("vis-network.css"),
        nodes_json=_safe_json(net.nodes),
        edges_json=_safe_json(net.edges),
        options_json=_safe_json(options),
        cards_json=_safe_json(getattr(net, "kg_cards", {})),
        legend=[(t, c, s) for t, (c, s) in STYLE.items()],
    )
