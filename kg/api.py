"""The Python entry point: :class:`KnowledgeGraph`.

>>> from kg import KnowledgeGraph
>>> kg = KnowledgeGraph.from_records([
...     {"id": "a", "abstract": "We propose FooNet, a network for image classification."},
...     {"id": "b", "abstract": "We compare FooNet with ResNet-50 on image classification."},
... ])
>>> sorted(m.name for m in kg.methods())
['FooNet', 'ResNet-50']
>>> [t.name for t in kg.tasks()]
['image classification']
>>> kg.query("SELECT (COUNT(?p) AS ?n) WHERE { ?p a kg:Paper }")
[{'n': 2}]
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import networkx as nx

from .extract import extract_records
from .graph import build_graph, nodes_of_type
from .ingest import read_records, sample_paths
from .model import Extraction, Record
from .namespace import DEFAULT_BASE, QUERY_PREFIXES
from .resolve import resolve

@dataclass(frozen=True, slots=True)
class Node:
    """A read-only view of one graph node."""

    id: str
    type: str
    name: str
    aliases: tuple[str, ...] = ()
    papers: tuple[str, ...] = ()


class HtmlView:
    """A self-contained HTML page that Jupyter displays inline (``_repr_html_``)."""

    def __init__(self, html: str, height: int = 640):
        self.html = html
        self.height = height

    def _repr_html_(self) -> str:
        from html import escape

        return (f'<iframe srcdoc="{escape(self.html, quote=True)}" sandbox="allow-scripts" '
                f'style="width: 100%; height: {int(self.height)}px; border: 1px solid #ddd"></iframe>')

    def save(self, path: str | Path) -> Path:
        from .export import atomic_write

        atomic_write(path, self.html)
        return Path(path)


def resolve_name(G: nx.MultiDiGraph, name: str) -> str:
    """The node id for an id, a canonical name or an alias (case-insensitive).

    Entities win over papers; among several, the one with most links.
    """
    if name in G:
        return name
    low = name.strip().lower()
    hits = [n for n, d in G.nodes(data=True)
            if low == str(d.get("label", "")).lower() or low in (str(a).lower() for a in d.get("aliases", []))]
    if not hits:
        raise KeyError(f"no node named {name!r}")
    return sorted(hits, key=lambda n: (G.nodes[n]["type"] == "Paper", -G.degree(n), n))[0]


class KnowledgeGraph:
    """A built graph of papers and the methods, tasks, datasets and code they name."""

    def __init__(self, G: nx.MultiDiGraph, records: list[Record] | None = None,
                 extractions: list[Extraction] | None = None, base: str = DEFAULT_BASE):
        self._G = G
        self.records = list(records or [])
        self.extractions = list(extractions or [])
        self.base = base

    # ------------------------------------------------------------------ building
    @classmethod
    def build(cls, sources: Iterable[str | Path | dict] | None = None, base: str = DEFAULT_BASE) -> "KnowledgeGraph":
        """Build from files (seed .txt, .jsonl, .json, .csv) and/or record dicts.

        With no sources, the bundled sample abstracts are used.
        """
        records = read_records(sample_paths() if sources is None else sources)
        extractions = list(extract_records(records))
        G = build_graph(resolve(records, extractions))
        return cls(G, records, extractions, base)

    @classmethod
    def from_records(cls, records: Iterable[dict], base: str = DEFAULT_BASE) -> "KnowledgeGraph":
        """Build from record dicts with at least ``abstract``."""
        return cls.build(list(records), base=base)

    # ------------------------------------------------------------------ access
    @property
    def nx(self) -> nx.MultiDiGraph:
        """The networkx ``MultiDiGraph`` (nodes typed, edges keyed by relation)."""
        return self._G

    @cached_property
    def rdf(self):
        """The graph as an rdflib ``Graph``."""
        from .rdf import to_rdf

        return to_rdf(self._G, base=self.base)

    def _nodes(self, type_: str) -> list[Node]:
        G = self._G
        out = []
        for n in nodes_of_type(G, type_):
            d = G.nodes[n]
            if type_ == "Paper":
                linked = tuple(sorted(v for _, v in G.out_edges(n)))
            else:
                linked = tuple(sorted({u for u, _ in G.in_edges(n) if G.nodes[u]["type"] == "Paper"}))
            out.append(Node(id=n, type=type_, name=d.get("label", n), aliases=tuple(d.get("aliases", ())), papers=linked))
        return out

    def papers(self) -> list[Node]:
        return self._nodes("Paper")

    def methods(self) -> list[Node]:
        return self._nodes("Method")

    def tasks(self) -> list[Node]:
        return self._nodes("Task")

    def datasets(self) -> list[Node]:
        return self._nodes("Dataset")

    def repositories(self) -> list[Node]:
        return self._nodes("CodeRepository")

    # ------------------------------------------------------------------ SPARQL
    @cached_property
    def _store(self):
        import pyoxigraph as ox

        from .rdf import to_ntriples

        store = ox.Store()
        store.load(to_ntriples(self.rdf).encode("utf-8"), format=ox.RdfFormat.N_TRIPLES)
        return store

    def query(self, sparql: str, **bindings) -> list[dict] | bool | list[tuple]:
        """Run SPARQL on the graph; ``bindings`` set variables (values or rdflib terms).

        SELECT gives a list of {variable: Python value} rows, ASK a bool,
        CONSTRUCT / DESCRIBE a list of (s, p, o) string triples. The prefixes
        ``kg``, ``res``, ``rdf``, ``rdfs``, ``skos``, ``dcterms``, ``prov``,
        ``schema`` and ``xsd`` are predeclared.
        """
        import pyoxigraph as ox

        from .store import QueryError, python_value, rows, to_term

        subs = {ox.Variable(k): to_term(v) for k, v in bindings.items()}
        try:
            res = self._store.query(sparql, prefixes=QUERY_PREFIXES, substitutions=subs or None)
        except SyntaxError as exc:
            raise QueryError(f"SPARQL syntax error: {exc}") from None
        except (OSError, RuntimeError) as exc:
            raise QueryError(f"query failed: {exc}") from None
        if isinstance(res, ox.QueryBoolean):
            return bool(res)
        if isinstance(res, ox.QueryTriples):
            return [tuple(python_value(x) for x in (t.subject, t.predicate, t.object)) for t in res]
        return rows(res)

    # ------------------------------------------------------------------ outputs
    def save(self, outdir: str | Path) -> dict:
        """Write every output (RDF, store, HTML, extractions, stats) to ``outdir``."""
        from .export import write_outputs

        return write_outputs(self._G, self.extractions, outdir, base=self.base, n_records=len(self.records) or None)

    def to_html(self, path: str | Path, focus: str | None = None, depth: int = 2) -> Path:
        """Write an interactive view (of the whole graph, or around ``focus``)."""
        from .export import write_html
        from .viz import build_view

        node = self._resolve_name(focus) if focus else None
        write_html(build_view(self._G, focus=node, depth=depth), path)
        return Path(path)

    def show(self, view: str = "overview", focus: str | None = None, depth: int = 2, height: int = 640) -> "HtmlView":
        """An interactive view for a Jupyter notebook (displayed inline, in a sandboxed iframe)."""
        from .viz import build_view, render_html

        node = self._resolve_name(focus) if focus else None
        return HtmlView(render_html(build_view(self._G, view=view, focus=node, depth=depth)), height)

    def _resolve_name(self, name: str) -> str:
        return resolve_name(self._G, name)

    def _repr_html_(self) -> str:
        from html import escape

        counts = {t: len(nodes_of_type(self._G, t)) for t in ("Paper", "Method", "Task", "Dataset", "CodeRepository")}
        cells = "".join(f"<tr><td>{escape(t)}</td><td>{n}</td></tr>" for t, n in counts.items())
        return f"<table><caption>KnowledgeGraph</caption>{cells}</table>"

    def __repr__(self) -> str:
        return f"<KnowledgeGraph {self._G.number_of_nodes()} nodes, {self._G.number_of_edges()} edges>"
