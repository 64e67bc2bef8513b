"""The field map: the concepts of a build (tasks, methods, datasets) as a map, the
overview page of every build.

Concepts, not papers, are the units (papers stay one click away): each is sized by
the papers that link to it, linked to the concepts its papers share, coloured by its
community (Louvain, fixed seed) and placed by a force layout computed here, once.
Networkx in, plain data out (:func:`generate_map`); :mod:`kg.web.viz` draws it.

- The page holds the :data:`MAX_CONCEPTS` concepts with the most papers, so that
  search and "expand" reach far beyond what the opening view draws.
- The opening view draws at most :data:`OPENING` of them, every named cluster
  represented by its leading concepts, spread over the canvas (:func:`spread`).
- Counts per venue series ("NeurIPS") and year feed the filters and the trends.
"""
from __future__ import annotations

import math
import re
from collections import Counter, defaultdict

import networkx as nx
import numpy as np

from kg.web.layout import layout_pairs

CONCEPTS = ("Task", "Method", "Dataset")
PAPER_LINKS = ("proposes", "usesMethod", "addressesTask", "usesDataset")
#: The concepts a page holds at most (the ones with the most papers).
MAX_CONCEPTS = 3000
#: The concepts the opening view draws at most.
OPENING = 400
#: Links a concept keeps to the concepts it shares the most papers with (relative to
#: their sizes): what the communities and the layout see.
LINKS_PER_CONCEPT = 8
#: The clusters are found among this many times :data:`OPENING` leading concepts; and at
#: this Louvain resolution (below 1: fewer, larger communities).
CORE = 2
RESOLUTION = 0.8
#: Clusters named in the legend, each in its own colour; the rest are grey.
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
           "#9c755f", "#17becf", "#bcbd22", "#8c564b")
OTHER_COLOR = "#b9b9b9"
#: The fewest concepts a cluster needs to be named in the legend.
MIN_CLUSTER = 3


#: The map's radius in pixels the layout plans for (the page fits the map to its canvas).
NOMINAL_RADIUS = 400.0


def node_radius(papers: int, most: int) -> float:
    """A concept's radius in pixels at the opening zoom (the page draws the same)."""
    return 4 + 18 * math.sqrt(papers / max(most, 1))


def venue_series(venue: str) -> str:
    """The series of a venue: its name without the year ("NeurIPS 2018" -> "NeurIPS").

    >>> venue_series("NeurIPS 2018"), venue_series("ICML"), venue_series("")
    ('NeurIPS', 'ICML', '')
    """
    return re.sub(r"\s*\b(19|20)\d\d\b\s*", " ", venue or "").strip()


def concept_papers(G: nx.MultiDiGraph) -> dict[str, list[str]]:
    """{concept id: the sorted ids of the papers that link to it}."""
    links = frozenset(PAPER_LINKS)
    out = {}
    for e, d in G.nodes(data="type"):
        if d in CONCEPTS:
            papers = sorted(p for p, keys in G.pred[e].items() if not links.isdisjoint(keys))
            if papers:
                out[e] = papers
    return dict(sorted(out.items()))


def leading(papers_of: dict[str, list[str]], limit: int = MAX_CONCEPTS) -> list[str]:
    """The ``limit`` concepts with the most papers (ties by id)."""
    return sorted(papers_of, key=lambda e: (-len(papers_of[e]), e))[:limit]


def shared_papers(papers_of: dict[str, list[str]], nodes: list[str]) -> Counter:
    """{(i, j): papers that link to both ``nodes[i]`` and ``nodes[j]``}, i < j."""
    by_paper: dict[str, list[int]] = defaultdict(list)
    for k, e in enumerate(nodes):
        for p in papers_of[e]:
            by_paper[p].append(k)
    n = len(nodes)
    codes = []  # each pair of a paper as i * n + j, counted at once
    for ks in by_paper.values():
        if len(ks) > 1:
            a = np.array(ks, dtype=np.int64)
            i, j = np.triu_indices(len(a), 1)
            codes.append(a[i] * n + a[j])
    if not codes:
        return Counter()
    pairs, counts = np.unique(np.concatenate(codes), return_counts=True)
    return Counter({(int(c // n), int(c % n)): int(m) for c, m in zip(pairs.tolist(), counts.tolist())})


def strongest_links(pairs: Counter, sizes: list[int], per_node: int = LINKS_PER_CONCEPT) -> dict:
    """{(i, j): weight} keeping each node's ``per_node`` strongest links, the weight the
    shared papers over the geometric mean of the two sizes (a big concept does not
    pull every other one to itself)."""
    best: dict[int, list] = defaultdict(list)
    for (i, j), c in pairs.items():
        w = c / math.sqrt(sizes[i] * sizes[j])
        best[i].append((-w, j))
        best[j].append((-w, i))
    kept = {}
    for i, row in best.items():
        row.sort()
        for w, j in row[:per_node]:
            kept[(min(i, j), max(i, j))] = -w
    return dict(sorted(kept.items()))


def communities(n: int, links: dict, sizes: list[int], core: int, seed: int = 0, resolution: float = RESOLUTION
                ) -> list[int]:
    """Each node's cluster: Louvain communities (fixed seed) of the links among the
    ``core`` largest nodes, numbered by their papers, largest first; a node outside the
    core joins the cluster of the core node it is most strongly linked to (-1: none).
    The rare concepts of the tail would otherwise make hundreds of tiny communities."""
    H = nx.Graph()
    H.add_nodes_from(range(min(n, core)))
    H.add_weighted_edges_from((i, j, w) for (i, j), w in links.items() if i < core and j < core)
    parts = nx.community.louvain_communities(H, weight="weight", seed=seed, resolution=resolution)
    parts.sort(key=lambda c: (-sum(sizes[k] for k in c), min(c)))
    cluster = [-1] * n
    for c, members in enumerate(parts):
        for k in members:
            cluster[k] = c
    best: dict[int, tuple] = {}
    for (i, j), w in links.items():  # links are sorted: the first of equal weights wins
        for a, b in ((i, j), (j, i)):
            if a >= core and b < core and (a not in best or w > best[a][0]):
                best[a] = (w, b)
    for a, (_, b) in best.items():
        cluster[a] = cluster[b]
    return cluster


def opening_nodes(sizes: list[int], cluster: list[int], limit: int = OPENING, named: int = len(PALETTE)
                  ) -> list[int]:
    """The nodes of the opening view: every named cluster's leading nodes (a share of
    ``limit`` by its papers, at least a few), then the largest of the rest."""
    n = len(sizes)
    if n <= limit:
        return list(range(n))
    members: dict[int, list[int]] = defaultdict(list)
    for k in sorted(range(n), key=lambda k: (-sizes[k], k)):
        members[cluster[k]].append(k)
    total = sum(sizes) or 1
    chosen: set[int] = set()
    for c in sorted(c for c in members if c >= 0)[:named]:
        share = sum(sizes[k] for k in members[c]) / total
        chosen.update(members[c][:max(5, int(limit * share * 0.6))])
    for k in sorted(range(n), key=lambda k: (-sizes[k], k)):
        if len(chosen) >= limit:
            break
        chosen.add(k)
    return sorted(chosen, key=lambda k: (-sizes[k], k))[:limit]


def spread(xy: np.ndarray) -> np.ndarray:
    """Positions moved along their rays from the centre so that their distances from it
    are spread evenly over a disc of radius 1: the layout's neighbourhoods and
    directions stay, the dense core opens up.

    >>> p = spread(np.array([[0.01, 0.0], [0.0, 0.02], [-0.03, 0.0], [0.0, -1.0]]))
    >>> [round(float(np.hypot(*q)), 2) for q in p]
    [0.35, 0.61, 0.79, 0.94]
    """
    if len(xy) == 0:
        return xy
    c = xy - np.median(xy, axis=0)
    r = np.hypot(c[:, 0], c[:, 1])
    order = np.argsort(r, kind="stable")
    target = np.empty(len(xy))
    target[order] = np.sqrt((np.arange(len(xy)) + 0.5) / len(xy))
    scale = np.where(r > 0, target / np.maximum(r, 1e-12), 0.0)
    return c * scale[:, None]


def separate(xy: np.ndarray, radii: np.ndarray, iterations: int = 60, gap: float = 0.004) -> np.ndarray:
    """Positions moved apart until no two circles (``radii``, in the same units)
    overlap, or ``iterations`` passes: each pass pushes every overlapping pair apart
    along the line between them, by half the overlap each.

    >>> xy = separate(np.array([[0.0, 0.0], [0.01, 0.0]]), np.array([0.05, 0.05]))
    >>> bool(np.hypot(*(xy[0] - xy[1])) >= 0.1)
    True
    """
    n = len(xy)
    # coincident points part along fixed directions
    xy = xy + 1e-6 * np.stack([np.cos(np.arange(n)), np.sin(np.arange(n))], axis=1)
    need = radii[:, None] + radii[None, :] + gap
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    for _ in range(iterations):
        d = xy[:, None, :] - xy[None, :, :]
        close = ((d * d).sum(axis=2) < need * need) & upper
        if not close.any():
            break
        i, j = np.nonzero(close)  # the overlapping pairs alone
        v = xy[i] - xy[j]
        dist = np.maximum(np.hypot(v[:, 0], v[:, 1]), 1e-9)
        push = ((need[i, j] - dist) / dist / 2)[:, None] * v
        np.add.at(xy, i, push)
        np.add.at(xy, j, -push)
    return xy


def place(links: dict, cluster: list[int], nodes: list[int], radii: list[float] | None = None, seed: int = 7
          ) -> dict[int, tuple]:
    """Positions in [-1, 1]^2 of ``nodes`` (indices): a force layout of their links and
    of a link from each to its cluster's largest node, then :func:`spread`, then
    :func:`separate` where ``radii`` (each node's, in the same units) are given."""
    index = {k: a for a, k in enumerate(nodes)}
    pairs = [(index[i], index[j]) for (i, j) in links if i in index and j in index]
    # a cluster holds together: each node is also pulled toward its cluster's largest node
    heads: dict[int, int] = {}
    for k in nodes:
        heads.setdefault(cluster[k], index[k])
    pairs += [(index[k], heads[cluster[k]]) for k in nodes if heads[cluster[k]] != index[k]]
    pos = layout_pairs(list(range(len(nodes))), np.array(pairs, dtype=np.int64).reshape(-1, 2), iterations=80,
                       seed=seed)
    xy = spread(np.array([pos[a] for a in range(len(nodes))], dtype=float).reshape(-1, 2))
    if radii is not None:
        r = np.array([radii[k] for k in nodes], dtype=float)
        xy = separate(xy, r)
        xy /= max(1.0, float((np.hypot(xy[:, 0], xy[:, 1]) + r).max()))  # within the unit disc again
    return {k: (float(xy[a, 0]), float(xy[a, 1])) for k, a in index.items()}


def _year_counts(papers: list[str], when: dict[str, tuple[int, int]]) -> list:
    """[series, year - year0, papers] triples of a concept's papers (``when``: paper ->
    (series, year - year0 or -1)), sorted."""
    c = Counter(when[p] for p in papers)
    return [[s, y, n] for (s, y), n in sorted(c.items())]


def generate_map(G: nx.MultiDiGraph, max_concepts: int = MAX_CONCEPTS, opening: int = OPENING, seed: int = 0
                 ) -> dict:
    """The field map of ``G`` as plain data (what the page embeds): concepts, their
    links, clusters, positions of the opening view, papers per venue series and year."""
    papers_of = concept_papers(G)
    nodes = leading(papers_of, max_concepts)
    sizes = [len(papers_of[e]) for e in nodes]
    pairs = shared_papers(papers_of, nodes)
    links = strongest_links(pairs, sizes)
    cluster = communities(len(nodes), links, sizes, CORE * opening, seed)
    first = opening_nodes(sizes, cluster, opening)
    top = max(sizes, default=1)
    pos = place(links, cluster, first, [node_radius(n, top) / NOMINAL_RADIUS for n in sizes])

    papers = sorted({p for e in nodes for p in papers_of[e]})
    paper_index = {p: k for k, p in enumerate(papers)}
    series_of = {p: venue_series(G.nodes[p].get("venue") or "") for p in papers}
    series = sorted(set(series_of.values()))
    series_index = {s: k for k, s in enumerate(series)}
    years = sorted({G.nodes[p]["year"] for p in papers if isinstance(G.nodes[p].get("year"), int)})
    year0 = years[0] if years else 0
    when = {}
    for p in papers:
        y = G.nodes[p].get("year")
        when[p] = (series_index[series_of[p]], (y - year0) if isinstance(y, int) else -1)

    members: dict[int, list[int]] = defaultdict(list)  # cluster -> its nodes, by papers, largest first
    for k, c in enumerate(cluster):
        members[c].append(k)
    named = [c for c in range(max(cluster, default=-1) + 1) if len(members[c]) >= MIN_CLUSTER][:len(PALETTE)]
    color = {c: PALETTE[a] for a, c in enumerate(named)}
    clusters = []
    for c in named:
        lead: list[str] = []  # the three largest, one of each label
        for k in members[c]:
            label = G.nodes[nodes[k]].get("label", nodes[k])
            if label not in lead:
                lead.append(label)
            if len(lead) == 3:
                break
        clusters.append({"id": c, "color": color[c], "name": " · ".join(lead), "concepts": len(members[c])})
    out_nodes = []
    for k, e in enumerate(nodes):
        d = G.nodes[e]
        row = {"id": e, "label": d.get("label", e), "type": d["type"], "papers": sizes[k],
               "cluster": cluster[k], "color": color.get(cluster[k], OTHER_COLOR),
               "aliases": list(d.get("aliases") or [])[:20],
               "counts": _year_counts(papers_of[e], when),
               "paperIds": [paper_index[p] for p in papers_of[e]]}
        if k in pos:
            row["x"], row["y"] = round(pos[k][0], 4), round(pos[k][1], 4)
        out_nodes.append(row)
    return {
        "nodes": out_nodes,
        "links": [[i, j, pairs[(i, j)]] for (i, j) in links],
        "clusters": clusters,
        "series": series,
        "year0": year0,
        "years": years,
        "papers": [[G.nodes[p].get("label", p), G.nodes[p].get("venue") or "",
                    G.nodes[p].get("year") if isinstance(G.nodes[p].get("year"), int) else None, p]
                   for p in papers],
        "total": len(papers_of),
    }


def opening_size(data: dict) -> int:
    """How many concepts the map's opening view draws (those laid out)."""
    return sum(1 for n in data["nodes"] if "x" in n)


def trend_series(data: dict, n: int = 10) -> list[tuple[str, list]]:
    """(label, share of each year's papers, from ``data["years"][0]`` to the last) of the
    ``n`` concepts with the most papers, where the build spans at least two years. A
    share, not a count: a corpus holds more papers of some years than of others. None
    for a year of too few papers to say."""
    years = data["years"]
    if len(years) < 2:
        return []
    y0, span = data["year0"], years[-1] - data["year0"]
    per_year = [0] * (span + 1)
    for _, _, y, _ in data["papers"]:
        if y is not None:
            per_year[y - y0] += 1
    # a year of a handful of papers gives shares that mean nothing: such years are left out
    thin = max(5, 0.02 * max(per_year))
    out = []
    for node in data["nodes"][:n]:  # nodes come by papers, largest first
        per = [0] * (span + 1)
        for _, y, c in node["counts"]:
            if y >= 0:
                per[y] += c
        label = f"{node['label']} ({node['type'].lower()})"
        out.append((label, [c / per_year[y] if per_year[y] >= thin else None for y, c in enumerate(per)]))
    return out


def trend_svg(data: dict, n: int = 10, width: int = 340, height: int = 200) -> str:
    """An inline SVG chart of the share of each year's papers that name each leading
    concept (one line and one legend row each), or "" for a build of one year. Labels
    are escaped."""
    from html import escape

    series = trend_series(data, n)
    if not series:
        return ""
    known = [y for y, c in enumerate(series[0][1]) if c is not None]
    if len(known) < 2:
        return ""
    first, span = known[0], known[-1] - known[0]
    y0 = data["year0"] + first
    top = max(c for _, v in series for c in v if c is not None) or 1.0
    left, right, plot_h = 34, width - 8, height - 24
    rows = [f'<svg class="trends" width="{width}" height="{height + 16 * len(series)}" role="img" '
            f'aria-label="share of each year\'s papers naming the leading concepts">',
            f'<line x1="{left}" y1="{plot_h}" x2="{right}" y2="{plot_h}" stroke="#999"/>',
            f'<text x="{left}" y="{plot_h + 14}">{y0}</text>',
            f'<text x="{right}" y="{plot_h + 14}" text-anchor="end">{y0 + span}</text>',
            f'<text x="{left - 4}" y="10" text-anchor="end">{100 * top:.0f}%</text>']
    for k, (label, per) in enumerate(series):
        color = PALETTE[k % len(PALETTE)]
        pts = " ".join(f"{left + (right - left) * (i - first) / span:.1f},{plot_h - (plot_h - 6) * c / top:.1f}"
                       for i, c in enumerate(per) if c is not None)
        rows.append(f'<polyline class="trend" points="{pts}" fill="none" stroke="{color}" stroke-width="1.6">'
                    f'<title>{escape(label)}</title></polyline>')
        y = height + 16 * k + 4
        rows.append(f'<rect x="{left}" y="{y}" width="10" height="10" fill="{color}"/>'
                    f'<text x="{left + 16}" y="{y + 9}">{escape(label)}</text>')
    rows.append("</svg>")
    return "".join(rows)
