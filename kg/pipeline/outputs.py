"""Write the outputs of a build: RDF files, store, graph.json, HTML views, the page
index (:mod:`kg.web.pageindex`), stats.

Everything goes into the build's :class:`~kg.pipeline.staging.Staging` folder, swapped
in whole at the end. Two processes share the work, each with a fixed role:

- this process draws the views and writes the page index (and the JSON Lines files when no child of
  the staging folder writes them);
- the blocks of the RDF files and graph.json, with the store, are written here in a
  full build (Oxigraph loads graph.nt.gz in Rust, without the GIL, on the second core
  while the views are drawn), and by a forked child in an incremental one: it
  digests the units, copies the unchanged blocks from the last build's files, sends
  the store's changes (the update runs in a thread here), then writes graph.json
  and the build state.
"""
from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import networkx as nx
from jinja2 import Environment, FileSystemLoader, select_autoescape

from kg._gc import without_gc
from kg.pipeline.forked import Forked
from kg.pipeline.jsonl import EXTRACTIONS, RECORDS, write_jsonl
from kg.io.graphjson import GRAPH_FILE
from kg.pipeline.blocks import DELTA_MIN_SHARE, Blocks
from kg.pipeline.digests import unit_digests
from kg.pipeline.state import STATE_FILE, file_check, read_state, write_state
from kg.pipeline.writeback import Sink
from kg.files import atomic_write, swap
from kg.pipeline.staging import Staging
from kg.talk import Talk
from kg.extract import PIPELINE_VERSION
from kg.model import Extraction
from kg.rdf.namespace import DEFAULT_BASE
from kg.rdf.ontology import ontology_quads
from kg.rdf.serialize import jsonld_context
from kg.rdf.statements import usage_table
from kg.rdf.store import STORE_DIR, StoreLoader, StoreUpdater, compact_after
from kg.resolve.algorithms import top
from kg.web.pageindex import PAGE_INDEX, write_page_index
from kg.web.views import VIEWS
from kg.web.viz import CardCache, page_html, render_html

#: The file of each view in an output folder.
VIEW_FILES = {"overview": "graph.html", "method-task": "methods-tasks.html", "dataset": "datasets.html",
              "paper": "papers.html"}

#: RDF serializations a build can write, gzip-compressed, a member a unit (:mod:`kg.gzipped`);
#: N-Triples always (the store is loaded from it, and updated from its changed blocks).
RDF_FORMATS = {"ttl": "graph.ttl.gz", "nt": "graph.nt.gz", "jsonld": "graph.jsonld.gz"}
#: What a build writes unless asked for more: the store and one dump, the smallest.
DEFAULT_RDF = ("nt",)
#: The node-link JSON of the graph (:mod:`kg.io.graphjson`), a gzip member a unit as the RDF.
GRAPH_JSON = GRAPH_FILE

#: What this process writes besides the blocks: the views and the JSON Lines files, slowest first.
JOBS = ("method-task", "overview", "paper", "dataset", PAGE_INDEX, EXTRACTIONS, RECORDS)


#: How many of the leading tasks, methods and datasets ``stats.json`` lists.
TOP_N = 10


def graph_stats(G: nx.MultiDiGraph, n_records: int | None = None, skipped: int = 0) -> dict:
    """Counts of nodes by type and edges by relation, and the leading tasks, methods and
    datasets by papers (plain data)."""
    nodes = Counter(t for _, t in G.nodes(data="type"))
    edges = Counter(k for _, _, k in G.edges(keys=True))
    out = {"pipeline_version": PIPELINE_VERSION, "nodes": dict(sorted(nodes.items())),
           "edges": dict(sorted(edges.items())), "node_count": G.number_of_nodes(),
           "edge_count": sum(edges.values()),
           "top": {t: [[G.nodes[v]["name"], n] for v, n in top(G, t, n=TOP_N)] for t in ("Task", "Method", "Dataset")}}
    if n_records is not None:
        out["records"] = n_records
        out["records_skipped"] = skipped
    return out


def rdf_formats(formats) -> list[str]:
    """The RDF formats to write, in a fixed order, N-Triples always included.

    >>> rdf_formats("jsonld, nt".split(","))
    ['nt', 'jsonld']
    """
    formats = {f.strip() for f in formats if f.strip()}
    unknown = sorted(formats - set(RDF_FORMATS))
    if unknown:
        raise ValueError(f"unknown RDF format(s) {', '.join(unknown)} (choose from {', '.join(RDF_FORMATS)})")
    return [f for f in RDF_FORMATS if f in formats or f == "nt"]


def draw_view(G: nx.MultiDiGraph, folder: Path, view: str, cards: dict) -> tuple:
    """Write the page of ``view`` into ``folder``; returns its row of the index page:
    (file, name, description, nodes shown, note). ``cards`` caches node cards."""
    html, shown, note = page_html(G, view=view, cards=cards)
    (folder / VIEW_FILES[view]).write_text(html, encoding="utf-8")
    return (VIEW_FILES[view], *VIEWS[view], shown, note)


def write_html(page, path: str | Path) -> None:
    """Write one page (HTML text, or a view from :func:`kg.web.viz.build_view`) atomically."""
    atomic_write(path, page if isinstance(page, str) else render_html(page))


def _index_html(stats: dict, views: list[tuple], files) -> str:
    env = Environment(loader=FileSystemLoader(str(Path(__file__).parent.parent / "web" / "templates")),
                      autoescape=select_autoescape(["html"]))
    return env.get_template("index.html").render(stats=stats, views=views, files=files)


@without_gc
def write_outputs(G: nx.MultiDiGraph, extractions: list[Extraction], outdir: str | Path,
                  base: str = DEFAULT_BASE, n_records: int | None = None, records=None,
                  timings: dict | None = None, formats=DEFAULT_RDF, reuse: bool = True,
                  talk: Talk | None = None, staging: Staging | None = None, store_compaction: str = "auto", skipped: int = 0) -> dict:
    """Write every output of a build into ``outdir`` (replaced atomically); returns the stats.

    ``timings``, if given, receives the seconds each part took. ``formats`` are the RDF
    serializations (``ttl``, ``nt``, ``jsonld``, each gzip-compressed); N-Triples are
    always written. With
    ``reuse``, the blocks of papers and entities unchanged since the build already in
    ``outdir`` are copied from its files and its store is updated, not rebuilt (see
    :mod:`kg.pipeline.blocks`; the same bytes as without). ``talk`` (:class:`~kg.talk.Talk`)
    hears how much was reused, or why nothing was, and shows the progress. ``staging`` is the build's folder if it was made
    before the graph (its JSON Lines files then started). ``store_compaction``: when an updated store is
    compacted (``auto``, ``always``, ``never``; see :func:`kg.rdf.store.compact_after`).
    ``skipped``: the records left out as invalid (for the stats)."""
    formats = rdf_formats(formats)
    compact_runs = compact_after(store_compaction)
    outdir = Path(outdir).resolve()
    if staging is None:
        staging = Staging(outdir)
    elif staging.outdir != outdir:
        raise ValueError(f"the staging folder {staging.tmp} is not that of {outdir}")
    write, talk = None, talk or Talk()
    try:
        write = _Write(G, staging, base, formats, timings if timings is not None else {})
        write.bar = talk.bar("writing", 2 + sum(job not in staging.started for job in JOBS), "steps")
        old, why = read_state(outdir, base, [*formats, "json.nodes", "json.links"]) if reuse \
            else (None, "a full build was asked for")
        if old is not None and not (outdir / STORE_DIR).is_dir():
            old, why = None, "the previous build has no store"
        write.start_blocks(old, compact_runs)
        write.draw([job for job in JOBS if job not in staging.started], extractions, records)
        write.finish_blocks()
        write.timings.update(staging.wait())
        write.lap("staged-wait")
        stats = write.index(n_records, skipped)
        write.close_store()
        write.bar.close()
        talk.detail(write.reuse_line(why))
        if write.old is not None:
            talk.say(write.reuse_summary())
        swap(staging.tmp, outdir)
        staging.release()
    except BaseException:
        if write is not None:
            write.abort()
        staging.abort()
        raise
    return stats


class _Write:
    """One build's write into its staging folder (see the module docstring)."""

    def __init__(self, G, staging: Staging, base: str, formats: list[str], timings: dict):
        self.G, self.tmp, self.outdir = G, staging.tmp, staging.outdir
        self.base, self.formats, self.timings = base, formats, timings
        self.sinks = {f: Sink(self.tmp / RDF_FORMATS[f], compress=True) for f in formats}
        self.sinks["json"] = Sink(self.tmp / GRAPH_JSON, compress=True)
        self.nt_path = self.tmp / RDF_FORMATS["nt"]
        self.old = None  # the last build's state, in an incremental build
        self.blocks: Blocks | None = None  # when the blocks are written here
        self.child: Forked | None = None  # the block writer of an incremental build
        self.delta: dict | None = None  # what the child wrote, once it ends
        self.loader = None  # the store's builder: a StoreLoader, or a StoreUpdater of the old store
        self.triples = 0
        self.compact_runs = None
        self.drawn: dict[str, tuple] = {}  # view -> its row of the index page
        self.bar = None  # the progress bar of the write (Talk.bar)
        self._usages: dict | None = None
        self._clock = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.timings[name] = self.timings.get(name, 0.0) + now - self._clock
        self._clock = now

    def usages(self) -> dict:
        """The tasks' method usages (:func:`kg.rdf.statements.usage_table`), made once."""
        if self._usages is None:
            self._usages = usage_table(self.G)
        return self._usages

    # -- the blocks: here in a full build, in a child in an incremental one
    def start_blocks(self, old: dict | None, compact_runs) -> None:
        self.old, self.compact_runs = old, compact_runs
        if old is None:
            digests = unit_digests(self.G, self.usages())
            self.lap("digest")
            self.write_here(digests)
            self.lap("blocks")
            self.bar.update()
        else:
            self.child = Forked(self.write_in_child, on_now=self.start_store_update)

    def write_here(self, digests: dict[str, str]) -> None:
        """Every block written here (those unchanged copied, if there is an old build),
        the store loaded in full from graph.nt.gz as it is written."""
        self.blocks = Blocks(digests, self.sinks, self.old, self.outdir if self.old else None)
        self.loader = StoreLoader(self.tmp / STORE_DIR, self.nt_path, also=ontology_quads())
        self.sinks["nt"].on_flush = self.loader.grow
        t = time.perf_counter()
        self.triples = self.write_rdf_files(self.blocks)
        self.loader.grow(self.nt_path.stat().st_size, done=True)
        self.timings["rdf"] = time.perf_counter() - t
        self.write_json_file(self.blocks)
        self.timings["graph.json"] = time.perf_counter() - t - self.timings["rdf"]

    def write_in_child(self, send) -> dict:
        """The forked block writer: digest the units; if too few are unchanged, return
        the digests (the parent writes in full). Else write the RDF blocks, send the
        store's changes, then write graph.json and the build state."""
        seconds: dict[str, float] = {}
        t = time.perf_counter()
        digests = unit_digests(self.G, self.usages())
        blocks = Blocks(digests, self.sinks, self.old, self.outdir)
        seconds["digest"] = time.perf_counter() - t
        if blocks.share_reusable() < DELTA_MIN_SHARE:
            blocks.close()
            return {"delta": False, "digests": digests, "seconds": seconds}
        t = time.perf_counter()
        triples = self.write_rdf_files(blocks)
        seconds["rdf"] = time.perf_counter() - t
        send({"changes": blocks.changed_triples(self.outdir / RDF_FORMATS["nt"], self.nt_path),
              "triples": triples}, now=True)
        steps = [("graph.json", lambda: self.write_json_file(blocks)),
                 ("build-state", lambda: self.write_build_state(blocks))]
        for name, step in steps:
            t = time.perf_counter()
            step()
            seconds[name] = time.perf_counter() - t
        blocks.close()
        return {"delta": True, "reused": blocks.reused, "reused_papers": blocks.reused_papers,
                "units": len(digests), "papers": sum(1 for u in digests if u.startswith("paper/")),
                "seconds": seconds}

    def start_store_update(self, message: dict) -> None:
        """The store of this build from the last one's, once the child's RDF files are
        written (run by the thread that reads the child)."""
        removed, added = message["changes"]
        self.triples = message["triples"]
        self.loader = StoreUpdater(self.outdir / STORE_DIR, self.tmp / STORE_DIR, self.outdir / RDF_FORMATS["nt"],
                                   removed, self.nt_path, added, compact_after=self.compact_runs)

    def take(self, result: dict) -> None:
        """The child's result: what it wrote, or the digests to write everything here."""
        for name, seconds in result["seconds"].items():
            self.timings[f"child:{name}"] = seconds
        if not result["delta"]:
            self.write_here(result["digests"])
            self.lap("blocks")
            return
        for name, sink in self.sinks.items():
            sink.abort()  # this process's handles of the files the child wrote
        self.delta = result

    def poll(self) -> None:
        if self.child is not None and not self.child.done and self.child.ready():
            self.take(self.child.next())

    def write_rdf_files(self, blocks: Blocks) -> int:
        """graph.nt.gz (and .ttl.gz, .jsonld.gz with context.jsonld); returns the triples."""
        n = blocks.write_rdf(self.G, self.formats, self.base, self.usages())
        for f in self.formats:
            self.sinks[f].close()
        if "jsonld" in self.formats:
            (self.tmp / "context.jsonld").write_text(
                json.dumps({"@context": jsonld_context(self.base)}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return n

    def write_json_file(self, blocks: Blocks) -> None:
        blocks.write_graph_json(self.G, self.sinks["json"])
        self.sinks["json"].close()

    def write_build_state(self, blocks: Blocks) -> None:
        """The state the next build reuses blocks from, with checks of the files it describes."""
        names = sorted({RDF_FORMATS[f] for f in self.formats} | {GRAPH_JSON})
        write_state(self.tmp / STATE_FILE, blocks.state(self.base, {n: file_check(self.tmp / n) for n in names}))

    # -- this process's part
    def draw(self, jobs, extractions, records) -> None:
        """The views and the JSON Lines files not written yet, checking the child between them."""
        cards = CardCache(self.G)
        for job in jobs:
            self.poll()
            if job in VIEWS:
                self.drawn[job] = draw_view(self.G, self.tmp, job, cards)
                self.lap("html")
            elif job == PAGE_INDEX:
                write_page_index(self.G, self.tmp / PAGE_INDEX)
                self.lap("pages")
            else:
                write_jsonl(self.tmp, job, extractions, records)
                self.lap("jsonl")
            self.bar.update()

    def finish_blocks(self) -> None:
        """Wait for the child, if any; then, if the blocks were written here, the build state."""
        while self.child is not None and not self.child.done:
            self.take(self.child.next())
        self.lap("blocks-wait")
        if self.child is not None:
            self.bar.update()
        if self.blocks is not None:
            self.write_build_state(self.blocks)
            self.lap("state")

    def index(self, n_records: int | None, skipped: int) -> dict:
        """stats.json and index.html; returns the stats."""
        stats = graph_stats(self.G, n_records, skipped)
        stats["triples"] = self.triples
        (self.tmp / "stats.json").write_text(json.dumps(stats, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        views = [self.drawn[view] for view in VIEWS]
        (self.tmp / "index.html").write_text(
            _index_html(stats, views, [RDF_FORMATS[f] for f in self.formats]), encoding="utf-8")
        return stats

    def close_store(self) -> None:
        self.loader.close()
        self.timings["store"] = self.loader.seconds
        self.lap("store-wait")
        self.bar.update()
        if self.blocks is not None:
            self.blocks.close()

    def reuse_line(self, why: str) -> str:
        """The log line saying what was copied from the last build, or why nothing was."""
        if self.old is None:
            return f"reuse    none ({why})"
        done = self.delta or {"reused": self.blocks.reused, "reused_papers": self.blocks.reused_papers,
                              "units": len(self.blocks.digests),
                              "papers": sum(1 for u in self.blocks.digests if u.startswith("paper/"))}
        papers = done["papers"]
        copied = (f"{done['reused_papers']:,} of {papers:,} papers and {done['reused'] - done['reused_papers']:,} "
                  f"of {done['units'] - papers:,} entities copied from the last build")
        loader = self.loader
        if isinstance(loader, StoreLoader):  # blocks may still have been copied; the store was loaded in full
            return f"reuse    {copied}; store loaded in full (fewer than half of them unchanged)"
        phases = ", ".join(f"{k} {v:.2f}s" for k, v in loader.phases.items())
        n = loader.updates["updates"]
        since = "compacted" if loader.compacted else f"{n} update{'s' if n != 1 else ''} since its last compaction"
        return (f"reuse    {copied}; store updated ({loader.removed_triples:,} triples removed, "
                f"{loader.added_bytes / 1e6:.1f} MB of N-Triples added; {phases}; {since})")

    def reuse_summary(self) -> str:
        """What was reused of the last build, in a user's words."""
        done = self.delta or {"reused_papers": self.blocks.reused_papers,
                              "papers": sum(1 for u in self.blocks.digests if u.startswith("paper/"))}
        store = "updated" if isinstance(self.loader, StoreUpdater) else "loaded anew"
        return (f"reused the outputs of {done['reused_papers']:,} of {done['papers']:,} papers from the last build; "
                f"the SPARQL store {store}")

    def abort(self) -> None:
        """Stop the child and close every file (a failed build)."""
        if self.child is not None:
            self.child.kill()
        for sink in self.sinks.values():
            sink.abort()
        if self.blocks is not None:
            self.blocks.close()
        if self.loader is not None:
            self.loader.abort()  # never delete files under a running loader
