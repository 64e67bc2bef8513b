"""Write the outputs of a build: RDF files, extractions, store, HTML views, stats.

Everything is written into a temporary sibling folder first and swapped in
at the end, so a failed build never leaves a half-written output folder and
the previous outputs stay intact until the new ones are complete.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import networkx as nx
from jinja2 import Environment, FileSystemLoader, select_autoescape

from ._gc import without_gc
from .extract import PIPELINE_VERSION
from .model import Extraction
from .namespace import DEFAULT_BASE
from .rdf import jsonld_context, write_rdf
from .reuse import DELTA_MIN_SHARE, STATE_FILE, Blocks, Sink, file_check, read_state, unit_digests, write_state
from .store import STORE_DIR, StoreLoader, StoreUpdater
from .graphio import records_to_jsonl, write_graph_json
from .views import VIEWS
from .viz import build_view, render_html

#: The file of each view in an output folder.
VIEW_FILES = {"overview": "graph.html", "method-task": "methods-tasks.html", "dataset": "datasets.html",
              "paper": "papers.html"}

#: RDF serializations a build can write; N-Triples always (the store and ``kg validate`` read them).
RDF_FORMATS = {"ttl": "graph.ttl", "nt": "graph.nt", "jsonld": "graph.jsonld"}


def atomic_write(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def graph_stats(G: nx.MultiDiGraph, n_records: int | None = None) -> dict:
    """Counts of nodes by type and edges by relation (plain data)."""
    nodes = Counter(d["type"] for _, d in G.nodes(data=True))
    edges = Counter(k for _, _, k in G.edges(keys=True))
    out = {"pipeline_version": PIPELINE_VERSION, "nodes": dict(sorted(nodes.items())),
           "edges": dict(sorted(edges.items())), "node_count": G.number_of_nodes(), "edge_count": G.number_of_edges()}
    if n_records is not None:
        out["records"] = n_records
    return out


def write_extractions(fh, extractions: Iterable[Extraction]) -> None:
    """The ``kg extract`` JSON Lines, one object a record."""
    encode = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode
    for e in extractions:
        fh.write(encode(e.to_json()) + "\n")


def extractions_jsonl(extractions: Iterable[Extraction]) -> str:
    import io

    buf = io.StringIO()
    write_extractions(buf, extractions)
    return buf.getvalue()


def _index_html(stats: dict, views: list[tuple[str, str, str]], files) -> str:
    env = Environment(loader=FileSystemLoader(str(Path(__file__).parent / "templates")),
                      autoescape=select_autoescape(["html"]))
    return env.get_template("index.html").render(stats=stats, views=views, files=files)


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


@without_gc
def write_outputs(G: nx.MultiDiGraph, extractions: list[Extraction], outdir: str | Path,
                  base: str = DEFAULT_BASE, n_records: int | None = None, records=None,
                  timings: dict | None = None, formats=tuple(RDF_FORMATS), reuse: bool = True,
                  report=None) -> dict:
    """Write every output of a build into ``outdir`` (replaced atomically). Returns the stats;
    ``timings``, if given, receives the seconds each part took. ``formats`` are the RDF
    serializations to write (``ttl``, ``nt``, ``jsonld``); N-Triples are always written.

    With ``reuse``, the blocks of papers and entities unchanged since the build already
    in ``outdir`` are copied from its files and its store is updated, not rebuilt
    (see :mod:`kg.reuse`; same bytes as without). ``report(message)`` hears how
    much was reused, or why nothing was."""
    formats = rdf_formats(formats)

    timings = timings if timings is not None else {}
    clock = [time.perf_counter()]

    def lap(name: str) -> None:
        now = time.perf_counter()
        timings[name] = timings.get(name, 0.0) + now - clock[0]
        clock[0] = now

    outdir = Path(outdir).resolve()
    outdir.parent.mkdir(parents=True, exist_ok=True)
    recover(outdir)
    old, why = None, "a full build was asked for"
    if reuse:
        old, why = read_state(outdir, base, [*formats, "json.nodes", "json.links"])
        if old is not None and not (outdir / STORE_DIR).is_dir():
            old, why = None, "the previous build has no store"
    digests = unit_digests(G)
    lap("digest")
    tmp = Path(tempfile.mkdtemp(prefix=f".{outdir.name}.tmp-", dir=outdir.parent))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)
    blocks = None
    sinks: dict[str, Sink] = {}
    store: dict = {}  # the store's builder ("loader"), made by whichever part writes graph.nt
    writer = None
    try:
        sinks = {f: Sink(tmp / RDF_FORMATS[f]) for f in formats}
        sinks["json"] = Sink(tmp / "graph.json")
        blocks = Blocks(digests, sinks, old, outdir if old else None)
        delta = old is not None and blocks.share_reusable() >= DELTA_MIN_SHARE
        nt_path = tmp / RDF_FORMATS["nt"]
        if not delta:
            # Oxigraph loads in Rust without the GIL: the store is built on a second core
            # from the N-Triples file as it is written, then while the JSON and HTML are.
            store["loader"] = StoreLoader(tmp / STORE_DIR, nt_path)
            sinks["nt"].on_flush = store["loader"].grow

        def write_blocks() -> tuple[int, float, float]:
            """graph.nt / .ttl / .jsonld (and context.jsonld), then graph.json; in a full build
            the store loader follows graph.nt. Returns the triples and the seconds of each part."""
            t = time.perf_counter()
            n = write_rdf(G, {f: sinks[f] for f in formats}, base, reuse=blocks)
            for f in formats:
                sinks[f].close()
            if not delta:
                store["loader"].grow(nt_path.stat().st_size, done=True)
            if "jsonld" in formats:
                (tmp / "context.jsonld").write_text(
                    json.dumps({"@context": jsonld_context(base)}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
            rdf_seconds = time.perf_counter() - t
            write_graph_json(G, sinks["json"], reuse=blocks)
            sinks["json"].close()
            return n, rdf_seconds, time.perf_counter() - t - rdf_seconds

        def delta_blocks() -> dict:
            """In a forked child (incremental build): the blocks, mostly copied from the last
            build's files; returns what the parent needs of ``blocks``, and the times."""
            n, rdf_seconds, json_seconds = write_blocks()
            return {"triples": n, "units": blocks.units, "firsts": blocks.firsts, "reused": blocks.reused,
                    "reused_papers": blocks.reused_papers, "ranges": blocks.changed_ranges(),
                    "rdf": rdf_seconds, "graph.json": json_seconds}

        def delta_done() -> int:
            """Take the child's result (waiting for it if need be); start the store update."""
            if store.get("loader") is None:
                res = writer.result()
                for sink in sinks.values():
                    sink.abort()  # this process's copies of the files the child wrote
                blocks.units, blocks.firsts = res["units"], res["firsts"]
                blocks.reused, blocks.reused_papers = res["reused"], res["reused_papers"]
                timings["rdf"], timings["graph.json"] = res["rdf"], res["graph.json"]
                removed, added = res["ranges"]
                store["loader"] = StoreUpdater(outdir / STORE_DIR, tmp / STORE_DIR, outdir / RDF_FORMATS["nt"],
                                               removed, nt_path, added)
                store["triples"] = res["triples"]
            return store["triples"]

        if delta:
            # Most of an incremental build's block writing is the kernel copying old blocks,
            # but the Python between the copies, in a thread, fought the views for the GIL
            # (100k: 13 s alone, 35 s next to them). A forked child has a GIL of its own and
            # touches few of the graph's pages (ids, digests, the changed units).
            writer = _Forked(delta_blocks)
        else:
            n_triples, timings["rdf"], timings["graph.json"] = write_blocks()
        lap("blocks")
        with open(tmp / "extractions.jsonl", "w", encoding="utf-8", newline="\n") as fh:
            write_extractions(fh, extractions)
        if records:
            with open(tmp / "records.jsonl", "w", encoding="utf-8", newline="\n") as fh:
                fh.write(records_to_jsonl(records))
        lap("jsonl")
        views, cards = [], {}
        for view, (name, what) in VIEWS.items():
            if writer is not None and writer.ready():
                delta_done()  # the store update runs in a thread while the other views are drawn
            fname = VIEW_FILES[view]
            net = build_view(G, view=view, cards=cards)
            (tmp / fname).write_text(render_html(net), encoding="utf-8")
            views.append((fname, name, what, len(net.nodes), net.kg_note))
        lap("html")
        if writer is not None:
            n_triples = delta_done()
            writer = None
            lap("blocks-wait")
        stats = graph_stats(G, n_records)
        stats["triples"] = n_triples
        (tmp / "stats.json").write_text(json.dumps(stats, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        (tmp / "index.html").write_text(_index_html(stats, views, [RDF_FORMATS[f] for f in formats]),
                                        encoding="utf-8")
        checks = {name: file_check(tmp / name) for name in sorted({RDF_FORMATS[f] for f in formats} | {"graph.json"})}
        write_state(tmp / STATE_FILE, blocks.state(base, checks))
        lap("state")
        loader = store["loader"]
        loader.close()
        timings["store"] = loader.seconds
        lap("store-wait")
        blocks.close()
        if report is not None:
            papers = sum(1 for u in digests if u.startswith("paper/"))
            copied = (f"{blocks.reused_papers:,} of {papers:,} papers and {blocks.reused - blocks.reused_papers:,} "
                      f"of {len(digests) - papers:,} entities copied from the last build")
            if old is None:
                report(f"reuse    none ({why})")
            elif not delta:  # blocks may still have been copied; the store was loaded in full
                report(f"reuse    {copied}; store loaded in full (fewer than half of them unchanged)")
            else:
                phases = ", ".join(f"{k} {v:.2f}s" for k, v in loader.phases.items())
                report(f"reuse    {copied}; store updated ({loader.removed_triples:,} triples removed, "
                       f"{loader.added_bytes / 1e6:.1f} MB of N-Triples added; {phases})")
        _swap(tmp, outdir)
    except BaseException:
        if writer is not None:
            writer.kill()
        for sink in sinks.values():
            sink.abort()
        if blocks is not None:
            blocks.close()
        if store.get("loader") is not None:
            store["loader"].abort()  # never delete files under a running loader
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return stats


class _Forked:
    """``fn()`` in a forked child process; :meth:`result` waits and returns its (pickled)
    value or raises its error. The child shares the parent's memory copy-on-write and
    leaves with ``os._exit`` (no atexit handlers, no flushing of the parent's buffers).
    Where there is no ``os.fork`` (Windows), ``fn()`` runs here, at once."""

    def __init__(self, fn):
        import pickle

        self._here = None
        if not hasattr(os, "fork"):
            self.pid, self._fd = None, -1
            try:
                self._here = ("ok", fn())
            except BaseException as exc:  # raised by result(), as a child's would be
                self._here = ("error", exc)
            return
        read, write = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the child
            try:
                os.close(read)
                try:
                    out = ("ok", fn())
                except BaseException as exc:  # sent to the parent, raised there
                    out = ("error", exc)
                try:
                    data = pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)
                except Exception as exc:  # an error that does not pickle
                    data = pickle.dumps(("error", RuntimeError(f"{out[1]!r} ({exc})")))
                view = memoryview(data)
                while view:
                    view = view[os.write(write, view):]
            finally:
                os._exit(0)
        os.close(write)
        self._fd = read

    def ready(self) -> bool:
        """True once the child has begun sending its result (it is done working)."""
        import select

        if self._here is not None:
            return True
        return self._fd >= 0 and bool(select.select([self._fd], [], [], 0)[0])

    def result(self):
        import pickle

        if self._here is not None:
            kind, value = self._here
            if kind == "error":
                raise value
            return value

        chunks = []
        while True:
            chunk = os.read(self._fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(self._fd)
        self._fd = -1
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        if not chunks:
            raise RuntimeError(f"the block writer process ended without a result (status {status})")
        kind, value = pickle.loads(b"".join(chunks))
        if kind == "error":
            raise value
        return value

    def kill(self) -> None:
        """Stop the child (on an error of the parent) and reap it."""
        import signal

        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        if self.pid is None:  # reaped already
            return
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.pid, 0)


def recover(outdir: Path) -> None:
    """Undo what a killed build left next to ``outdir``: put back the previous
    outputs if the kill fell between the two renames of the swap, and remove
    half-written temporary folders. (Two builds into one folder at once are not
    supported.)"""
    parent = outdir.parent
    for old in sorted(parent.glob(f".{outdir.name}.old-*")):
        prev = old / "prev"
        if prev.is_dir() and not outdir.exists():
            os.rename(prev, outdir)
        shutil.rmtree(old, ignore_errors=True)
    for tmp in parent.glob(f".{outdir.name}.tmp-*"):
        shutil.rmtree(tmp, ignore_errors=True)


def _swap(new: Path, outdir: Path) -> None:
    """Put ``new`` in place of ``outdir``; the old folder is removed only after."""
    old = None
    if outdir.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{outdir.name}.old-", dir=outdir.parent))
        os.rename(outdir, old / "prev")
    try:
        os.rename(new, outdir)
    except BaseException:
        if old is not None:
            os.rename(old / "prev", outdir)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def write_html(net, path: str | Path) -> None:
    """Write one view (from :func:`kg.viz.build_view`) as a self-contained page."""
    atomic_write(path, render_html(net))
