"""What the Python API hands back: :class:`Node`, :class:`Ranked`, :class:`Results` (a
list a notebook shows as a table) and :class:`HtmlView`.

Their ``repr`` is one line, whatever the size of the graph; a notebook shows a list of
them as an HTML table (``_repr_html_``), every text escaped.
"""
from __future__ import annotations

from dataclasses import dataclass
from html import escape
from pathlib import Path


def _short(text: str, n: int = 60) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[:n - 1] + "…"


@dataclass(frozen=True, slots=True)
class Node:
    """A read-only record of one graph node: its id, type, canonical name, aliases and
    the ids it is linked to (a paper's entities; an entity's papers); a paper's title,
    venue, year and abstract."""

    id: str
    type: str
    name: str
    aliases: tuple[str, ...] = ()
    papers: tuple[str, ...] = ()
    linked: tuple[str, ...] = ()
    title: str = ""
    venue: str = ""
    year: int | None = None
    abstract: str = ""

    def __repr__(self) -> str:
        if self.type == "Paper":
            where = " ".join(x for x in (self.venue, "" if self.venue else str(self.year or "")) if x)
            return f"<Node {self.id} Paper {_short(self.title or self.name)!r}{' ' + where if where else ''}>"
        return f"<Node {self.id} {self.type} {_short(self.name)!r}, {len(self.papers)} papers>"

    def _repr_html_(self) -> str:
        return Results([self])._repr_html_()


@dataclass(frozen=True, slots=True)
class Ranked:
    """A node with a score (papers, degree or relatedness) and what it shares."""

    node: Node
    score: float
    shared: tuple[str, ...] = ()

    def __repr__(self) -> str:
        shared = f", shares {_short('; '.join(self.shared), 40)!r}" if self.shared else ""
        return f"<Ranked {self.node.id} {_short(self.node.name)!r} {self.score:g}{shared}>"

    def _repr_html_(self) -> str:
        return Results([self])._repr_html_()


class Results(list):
    """A list of :class:`Node` or :class:`Ranked` that a notebook shows as a table."""

    def _repr_html_(self) -> str:
        ranked = any(isinstance(x, Ranked) for x in self)
        head = ["name", "type", *(["score"] if ranked else []), "papers", "id"]
        rows = []
        for x in self:
            node, score = (x.node, x.score) if isinstance(x, Ranked) else (x, None)
            label = node.title or node.name if node.type == "Paper" else node.name
            cells = [_short(label, 80), node.type, *([f"{score:g}"] if ranked else []),
                     str(len(node.papers)) if node.type != "Paper" else "", node.id]
            rows.append("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>")
        return ("<table><thead><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr></thead><tbody>"
                + "".join(rows) + "</tbody></table>")


class HtmlView:
    """A self-contained HTML page that Jupyter displays inline (``_repr_html_``)."""

    def __init__(self, html: str, height: int = 640):
        self.html = html
        self.height = height

    def __repr__(self) -> str:
        return f"<HtmlView {len(self.html):,} characters>"

    def _repr_html_(self) -> str:
        return (f'<iframe srcdoc="{escape(self.html, quote=True)}" sandbox="allow-scripts" '
                f'style="width: 100%; height: {int(self.height)}px; border: 1px solid #ddd"></iframe>')

    def save(self, path: str | Path) -> Path:
        from kg.files import atomic_write

        atomic_write(path, self.html)
        return Path(path)
