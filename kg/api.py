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
from functools import cached_property
from pathlib import Path

import networkx as nx

from kg.handles import HtmlView, Node, Ranked, Results
from kg.model import Extraction, Record
from kg.rdf.namespace import DEFAULT_BASE, QUERY_PREFIXES
from kg.rdf.ontology import ontology_quads
from kg.resolve import algorithms as alg
from kg.refs import AmbiguousName, GraphLookup, StoreLookup, resolve_name  # noqa: F401  (AmbiguousName: part of this API)
from kg.resolve.graph import nodes_of_type


class KnowledgeGraph:
    """A built graph of papers and the methods, tasks, datasets and code they name.

    Examples
    --------
    >>> kg = KnowledgeGraph.from_records([{"id": "a", "abstract": "We propose ZetaNet for image classification."}])
    >>> kg.get("ZetaNet").type
    'Method'
    """

    def __init__(self, G: nx.MultiDiGraph | None, records: list[Record] | None = None,
                 extractions: list[Extraction] | None = None, base: str = DEFAULT_BASE,
                 outdir: Path | None = None):
        self._graph = G
        self._records = None if records is None and outdir is not None else list(records or [])
        self.extractions = list(extractions or [])
        self.base = base
        self._outdir = outdir  # a build's folder: the graph and records are read from it when first needed

    @property
    def _G(self) -> nx.MultiDiGraph:
        if self._graph is None:
            from kg.io.graphjson import GRAPH_FILE, in_build, read_graph_json

            self._graph = read_graph_json(in_build(self._outdir, GRAPH_FILE))
        return self._graph

    @property
    def records(self) -> list[Record]:
        """The input records (read from a loaded build's ``records.jsonl.gz`` when first asked for)."""
        if self._records is None:
            from kg.io.graphjson import RECORDS_FILE, in_build, records_from_jsonl

            path = in_build(self._outdir, RECORDS_FILE)
            self._records = records_from_jsonl(path) if path.is_file() else []
        return self._records

    # ------------------------------------------------------------------ building
    @classmethod
    def build(cls, sources: Iterable[str | Path | dict] | None = None, base: str = DEFAULT_BASE) -> "KnowledgeGraph":
        """Build from files (seed .txt, .jsonl, .json, .csv, .tsv) and/or record dicts.

        With no sources, the bundled sample abstracts are used.

        >>> len(KnowledgeGraph.build().papers())
        68
        """
        from kg.pipeline import stages  # here: a notebook that only loads a build never imports the build

        return cls._from(stages.read(sources), base)

    @classmethod
    def _from(cls, records: list[Record], base: str) -> "KnowledgeGraph":
        """The stages of ``kg build`` (:mod:`kg.pipeline.stages`) after ingest, in memory."""
        from kg.pipeline import stages

        extractions = stages.extract(records)
        return cls(stages.resolve(records, extractions), records, extractions, base)

    @classmethod
    def from_records(cls, records: Iterable[dict], base: str = DEFAULT_BASE) -> "KnowledgeGraph":
        """Build from record dicts with at least ``abstract`` (``id``, ``title``, ``venue`` ... optional).

        >>> KnowledgeGraph.from_records([{"abstract": "We study image classification."}]).tasks()[0].name
        'image classification'
        """
        return cls.build(list(records), base=base)

    def add(self, sources: Iterable[str | Path | dict]) -> "KnowledgeGraph":
        """A new graph with more records (files or dicts); names one paper defines are
        found in the others across old and new records.

        >>> kg = KnowledgeGraph.from_records([{"id": "a", "abstract": "We propose the Gated Spectral Unit (GSU)."}])
        >>> kg2 = kg.add([{"id": "b", "abstract": "We compare with GSU."}])
        >>> len(kg2.papers_for("GSU"))
        2
        """
        from kg.pipeline import stages

        return self._from(self.records + stages.read(sources), self.base)

    # ------------------------------------------------------------------ saving
    def save(self, outdir: str | Path, rdf: tuple[str, ...] = ("nt",)) -> dict:
        """Write every output (store, RDF, HTML views, graph.json, records, stats) to ``outdir``;
        ``rdf`` names the gzip-compressed RDF dumps (``nt``, ``ttl``, ``jsonld``; N-Triples
        always), as ``kg build --rdf``.
        Into a folder that holds an earlier build, the unchanged papers' and entities'
        blocks are copied and the store is updated (the same files as a fresh save)."""
        from kg.pipeline.outputs import write_outputs

        return write_outputs(self._G, self.extractions, outdir, base=self.base,
                             n_records=len(self.records) or None, records=self.records, formats=rdf)

    @classmethod
    def load(cls, outdir: str | Path) -> "KnowledgeGraph":
        """Open a graph written by :meth:`save` or ``kg build`` (round trip exact).

        Nothing large is read at once: queries run on the build's SPARQL store, and
        ``graph.json.gz`` and ``records.jsonl.gz`` are read when the graph or the records are
        first needed.

        >>> import tempfile
        >>> out = tempfile.mkdtemp() + "/o"
        >>> _ = sample.save(out)
        >>> sorted(KnowledgeGraph.load(out).nx.edges(keys=True)) == sorted(sample.nx.edges(keys=True))
        True
        """
        outdir = Path(outdir)
        from kg.io.graphjson import GRAPH_FILE, in_build

        if not in_build(outdir, GRAPH_FILE).is_file():
            raise FileNotFoundError(f"{outdir}: no graph.json.gz here (save or build first)")
        kg = cls(None, None, [], DEFAULT_BASE, outdir=outdir)
        ctx = outdir / "context.jsonld"
        if ctx.is_file():
            import json

            kg.base = json.loads(ctx.read_text(encoding="utf-8"))["@context"].get("res", DEFAULT_BASE)
        elif kg._store_dir is not None:  # a build without JSON-LD: the base its store's IRIs have
            from kg.rdf.statements import RUN_QUERY, base_of_run

            kg.base = next((base_of_run(r["r"].value) for r in kg._store.query(RUN_QUERY)), None) or DEFAULT_BASE
        return kg

    # ------------------------------------------------------------------ access
    @property
    def nx(self) -> nx.MultiDiGraph:
        """The networkx ``MultiDiGraph`` (nodes typed, edges keyed by relation)."""
        return self._G

    @cached_property
    def rdf(self):
        """The graph as an rdflib ``Graph``."""
        from kg.rdf.serialize import to_rdf

        return to_rdf(self._G, base=self.base)

    def node(self, name) -> Node:
        """The record of one node by :class:`Node`, id, IRI, canonical name or alias (an
        acronym among them); every look-up of this class takes a node the same way.

        >>> sample.node("FSL-Net").type, sample.node("fsl-net").id == sample.node("FSL-Net").id
        ('Method', True)
        """
        return Node(**self._lookup.node_fields(self._lookup.resolve(name)))

    @property
    def _lookup(self) -> GraphLookup | StoreLookup:
        """What answers the look-ups: a loaded build's SPARQL store until its graph is
        read (a node or a ranking costs a few index reads, not the whole graph), else
        the graph."""
        if self._graph is None and self._store_dir is not None:
            return StoreLookup(self._store, self.base)
        return GraphLookup(self._G, self.base)

    def _nodes(self, type_: str) -> Results:
        look = GraphLookup(self._G, self.base)  # the ids are the graph's: no name to resolve
        return Results(self._as_node(look, n) for n in nodes_of_type(look.G, type_))

    def papers(self) -> Results:
        """Every paper, sorted by id."""
        return self._nodes("Paper")

    def methods(self) -> Results:
        """Every method (proposed or used), sorted by id."""
        return self._nodes("Method")

    def tasks(self) -> Results:
        """Every task, sorted by id.

        >>> "data attribution" in [t.name for t in sample.tasks()]
        True
        """
        return self._nodes("Task")

    def datasets(self) -> Results:
        """Every dataset or benchmark, sorted by id.

        >>> "ShapeNet" in [d.name for d in sample.datasets()]
        True
        """
        return self._nodes("Dataset")

    def repositories(self) -> Results:
        """Every code repository, sorted by id.

        >>> len(sample.repositories())
        7
        """
        return self._nodes("CodeRepository")

    def get(self, name_or_alias) -> Node:
        """The node with this id, canonical name or alias (case-insensitive); KeyError if none.

        >>> KnowledgeGraph.build().get("Feature Shift Localization Network").name
        'FSL-Net'
        """
        return self.node(name_or_alias)

    def papers_for(self, entity) -> Results:
        """Papers linked to an entity (by name, alias or id).

        >>> len(KnowledgeGraph.build().papers_for("data attribution")) >= 3
        True
        """
        look = self._lookup
        return Results(self._as_node(look, p) for p in look.papers_for(look.resolve(entity)))

    def methods_for_task(self, task) -> Results:
        """Methods proposed or used by papers on a task, by number of papers.

        >>> [(r.node.name, r.score) for r in sample.methods_for_task("semantic segmentation")]
        [('optimal transport distance', 1), ('Optimal Transport theory', 1), ('TAROT', 1)]
        """
        look = self._lookup
        return Results(Ranked(self._as_node(look, m), n) for m, n in look.methods_for_task(look.resolve(task)))

    def datasets_for(self, method) -> Results:
        """Datasets used by the papers that propose or use a method, by number of papers.

        >>> [r.node.name for r in sample.datasets_for("CELL-Diff")]
        ['Human Protein Atlas', 'OpenCell']
        """
        look = self._lookup
        return Results(Ranked(self._as_node(look, d), n) for d, n in look.datasets_for(look.resolve(method)))

    def related_papers(self, paper, k: int = 10) -> Results:
        """Papers sharing entities with a paper, ranked by the rarity-weighted count of
        shared methods, tasks and datasets (``shared`` names them).

        >>> paper = sample.papers_for("TAROT")[0]
        >>> sample.related_papers(paper, k=1)[0].shared
        ('instruction tuning',)
        """
        look = self._lookup
        return Results(Ranked(self._as_node(look, o), score, tuple(look.label(e) for e in shared))
                       for o, score, shared in look.related_papers(look.resolve(paper), k))

    def top(self, kind: str, n: int = 20, by: str = "papers") -> Results:
        """The top ``n`` methods / tasks / datasets / repositories / venues / papers, by
        papers or by degree.

        >>> sample.top("Task", 1)[0].node.type
        'Task'
        """
        if not isinstance(n, int) or isinstance(n, bool):
            raise TypeError(f"n must be a number of results, not {n!r}")
        look = self._lookup
        return Results(Ranked(self._as_node(look, v), s) for v, s in look.top(kind, by, n))

    def shortest_path(self, a, b) -> Results:
        """The shortest chain of nodes between two names (edges either way); [] if none.

        >>> [n.type for n in sample.shortest_path("TAROT", "FSL-Net")][:2]
        ['Method', 'Paper']
        """
        return Results(self.node(n) for n in alg.shortest_path(self._G, self._resolve_name(a), self._resolve_name(b)))

    def subgraph(self, entities: Iterable[str], depth: int = 1) -> "KnowledgeGraph":
        """A graph of the nodes within ``depth`` hops of the given names.

        >>> sorted(n.split("/")[0] for n in sample.subgraph(["FSL-Net"]).nx)   # its paper and task
        ['method', 'paper', 'task']
        """
        ids = [self._resolve_name(e) for e in entities]
        return KnowledgeGraph(alg.subgraph(self._G, ids, depth), base=self.base)

    # ------------------------------------------------------------------ SPARQL
    @cached_property
    def _store(self):
        """The SPARQL store: a loaded build's own (opened read-only), else one made in
        memory from the graph and the ontology, as a build's store holds them."""
        import pyoxigraph as ox

        from kg.rdf.serialize import to_ntriples

        if self._store_dir is not None:
            return ox.Store.read_only(str(self._store_dir))
        store = ox.Store()
        store.load(to_ntriples(self._G, self.base).encode("utf-8"), format=ox.RdfFormat.N_TRIPLES)
        store.extend(ontology_quads())
        return store

    def query(self, sparql: str, **bindings):
        """Run SPARQL on the graph; ``bindings`` set variables (Python values or rdflib terms).

        SELECT gives a list of {variable: Python value} rows, ASK a bool, CONSTRUCT /
        DESCRIBE an rdflib ``Graph``. The prefixes ``kg``, ``res``, ``rdf``, ``rdfs``,
        ``owl``, ``skos``, ``dcterms``, ``prov``, ``schema``, ``lpwcc``, ``lpwcp`` and
        ``xsd`` are predeclared. A bound variable need not be selected
        (``FILTER(LCASE(?l) = LCASE(?name))``).

        >>> sample.query("SELECT ?e WHERE { ?e skos:prefLabel ?l FILTER(LCASE(?l) = LCASE(?n)) }", n="tarot")
        [{'e': 'https://w3id.org/abstract-kg/resource/method/tarot'}]
        >>> len(sample.query("CONSTRUCT { ?v a kg:Venue } WHERE { ?v a kg:Venue }"))
        2
        """
        import pyoxigraph as ox

        from kg.rdf.store import rows, run_query

        res = run_query(self._store, sparql, bindings, prefixes=QUERY_PREFIXES)
        if isinstance(res, ox.QueryBoolean):
            return bool(res)
        if isinstance(res, ox.QueryTriples):
            from rdflib import Graph

            g = Graph()
            for prefix, ns in QUERY_PREFIXES.items():
                g.bind(prefix, ns)
            return g.parse(data=ox.serialize(list(res), format=ox.RdfFormat.N_TRIPLES), format="nt")
        return rows(res)

    def query_df(self, sparql: str, **bindings):
        """The results as a pandas DataFrame (needs pandas): a SELECT's rows, a
        CONSTRUCT's triples (``subject``, ``predicate``, ``object`` as rdflib terms, so
        IRIs and literals stay apart), an ASK's answer in a ``boolean`` column.

        >>> sample.query_df("ASK { ?p a kg:Paper }").to_dict("records")
        [{'boolean': True}]
        """
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("query_df needs pandas: pip install pandas") from None
        res = self.query(sparql, **bindings)
        if isinstance(res, bool):
            return pd.DataFrame({"boolean": [res]})
        if isinstance(res, list):
            return pd.DataFrame(res)
        return pd.DataFrame(sorted(res), columns=["subject", "predicate", "object"])

    # ------------------------------------------------------------------ reasoning and validation
    def infer(self, semantics: str = "rdfs"):
        """The graph with the ontology and what they entail (owlrl): ``rdfs`` or
        ``owl-rl`` semantics. An rdflib ``Graph``.

        >>> from rdflib.namespace import PROV, RDF
        >>> from kg.rdf.namespace import KG
        >>> g = sample.infer()   # mentions and sentences are prov:Entity: only a reasoner says so
        >>> entities = set(g.subjects(RDF.type, PROV.Entity))
        >>> entities == set(g.subjects(RDF.type, KG.Mention)) | set(g.subjects(RDF.type, KG.Sentence))
        True
        """
        import owlrl

        from kg.rdf.ontology import ontology

        kinds = {"rdfs": owlrl.RDFS_Semantics, "owl-rl": owlrl.OWLRL_Semantics}
        if semantics not in kinds:
            raise ValueError(f"semantics must be 'rdfs' or 'owl-rl', not {semantics!r}")
        g = ontology() + self.rdf
        owlrl.DeductiveClosure(kinds[semantics]).expand(g)
        return g

    def validate(self):
        """Check the graph against the SHACL shapes (``ontology/shapes.ttl``), as ``kg
        validate`` does: a report with ``conforms``, ``violations`` and ``text``.

        >>> sample.validate().conforms
        True
        """
        from kg.rdf.validate import validate_graph

        return validate_graph(self.rdf)

    # ------------------------------------------------------------------ exports and views
    def export(self, fmt: str, out: str | Path) -> list[Path]:
        """Write the graph as ``graphml``, ``gexf``, ``node-link``, ``cytoscape`` or ``neo4j`` (a folder).

        >>> import tempfile, pathlib
        >>> sample.export("gexf", pathlib.Path(tempfile.mkdtemp()) / "g.gexf")[0].suffix
        '.gexf'
        """
        from kg.io.exports import export

        return export(self._G, fmt, out)

    def to_html(self, path: str | Path, focus: str | None = None, depth: int = 2, view: str = "overview") -> Path:
        """Write an interactive view: the map of the field, another view of the whole
        graph, or the neighbourhood of ``focus``.

        >>> import tempfile, pathlib
        >>> sample.to_html(pathlib.Path(tempfile.mkdtemp()) / "v.html", focus="TAROT").read_text()[:15]
        '<!DOCTYPE html>'
        """
        from kg.pipeline.outputs import write_html
        from kg.web.viz import page_html

        node = self._resolve_name(focus) if focus else None
        write_html(page_html(self._G, view=view, focus=node, depth=depth)[0], path)
        return Path(path)

    def show(self, view: str = "overview", focus: str | None = None, depth: int = 2, height: int = 640) -> "HtmlView":
        """An interactive view for a Jupyter notebook (displayed inline, in a sandboxed iframe)."""
        from kg.web.viz import page_html

        node = self._resolve_name(focus) if focus else None
        return HtmlView(page_html(self._G, view=view, focus=node, depth=depth)[0], height)

    @staticmethod
    def _as_node(look: GraphLookup | StoreLookup, node_id: str) -> Node:
        return Node(**look.node_fields(node_id))

    def _resolve_name(self, ref) -> str:
        return resolve_name(self._G, ref, self.base)

    @property
    def _store_dir(self) -> Path | None:
        """A loaded build's SPARQL store folder, if it has one."""
        store = self._outdir / "store" if self._outdir is not None else None
        return store if store is not None and store.is_dir() else None

    def _repr_html_(self) -> str:
        from html import escape

        counts = {t: len(nodes_of_type(self._G, t)) for t in ("Paper", "Method", "Task", "Dataset", "CodeRepository")}
        cells = "".join(f"<tr><td>{escape(t)}</td><td>{n}</td></tr>" for t, n in counts.items())
        return f"<table><caption>KnowledgeGraph</caption>{cells}</table>"

    def __repr__(self) -> str:
        return f"<KnowledgeGraph {self._G.number_of_nodes()} nodes, {self._G.number_of_edges()} edges>"
