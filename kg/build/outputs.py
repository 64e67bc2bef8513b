"""Write the outputs of a build: RDF files, extractions, store, HTML views, stats.

Everything is written into a temporary sibling folder first and swapped in
at the end, so a failed build never leaves a half-written output folder and
the previous outputs stay intact until the new ones are complete.
"""
from __future__ import annotations

import contextlib
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

from kg._gc import without_gc
from kg._json import dumps
from kg.extract import PIPELINE_VERSION
from kg.model import Extraction
from kg.rdf.namespace import DEFAULT_BASE
from kg.rdf.statements import jsonld_context, usage_table, write_rdf
from kg.build.reuse import DELTA_MIN_SHARE, STATE_FILE, Blocks, Sink, file_check, read_state, unit_digests, write_state
from kg.build.lock import output_lock
from kg.rdf.store import STORE_DIR, StoreLoader, StoreUpdater, compact_after
from kg.io.graphjson import records_to_jsonl, write_graph_json
from kg.web.views import VIEWS
from kg.web.viz import CardCache, page_html, render_html

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
    nodes = Counter(d["type"] for d in G._node.values())
    # networkx's adjacency (node -> neighbour -> key -> data), read once: its edge views cost seconds at 100k
    edges = Counter(k for nbrs in G._succ.values() for keys in nbrs.values() for k in keys)
    out = {"pipeline_version": PIPELINE_VERSION, "nodes": dict(sorted(nodes.items())),
           "edges": dict(sorted(edges.items())), "node_count": len(G._node), "edge_count": sum(edges.values())}
    if n_records is not None:
        out["records"] = n_records
    return out


def write_extractions(fh, extractions: Iterable[Extraction]) -> None:
    """The ``kg extract`` JSON Lines, one object a record."""
    for e in extractions:  # compact, keys in the order of the format (see kg._json)
        fh.write(dumps(e.to_json()) + "\n")


def extractions_jsonl(extractions: Iterable[Extraction]) -> str:
    import io

    buf = io.StringIO()
    write_extractions(buf, extractions)
    return buf.getvalue()


def _index_html(stats: dict, views: list[tuple[str, str, str]], files) -> str:
    env = Environment(loader=FileSystemLoader(str(Path(__file__).parent.parent / "web" / "templates")),
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
                  report=None, staging: "Staging | None" = None, keep=None, known: dict | None = None,
                  store_compaction: str = "auto") -> dict:
    """Write every output of a build into ``outdir`` (replaced atomically). Returns the stats;
    ``timings``, if given, receives the seconds each part took. ``formats`` are the RDF
    serializations to write (``ttl``, ``nt``, ``jsonld``); N-Triples are always written.

    With ``reuse``, the blocks of papers and entities unchanged since the build already
    in ``outdir`` are copied from its files and its store is updated, not rebuilt
    (see :mod:`kg.build.reuse`; same bytes as without). ``report(message)`` hears how
    much was reused, or why nothing was. ``staging``, if given, is the :class:`Staging`
    folder of this build, made (and its JSON Lines files started) before the graph.
    ``keep(digests)``, if given, is one more job (see :data:`KEEP_JOB`), done by whichever
    process is free: it writes the state the next build resolves from (:mod:`kg.build.kept`),
    with this build's digests of the units. ``known`` (unit -> digest) are the digests of
    units unchanged since they were made (:func:`kg.build.reuse.unit_digests`).
    ``store_compaction`` says when an updated store is compacted: ``auto`` once it
    carries :data:`kg.rdf.store.COMPACT_AFTER_RUNS` table runs of updates, ``always`` or
    ``never`` (a store loaded in full is always compacted)."""
    formats = rdf_formats(formats)
    compact_runs = compact_after(store_compaction)

    timings = timings if timings is not None else {}
    clock = [time.perf_counter()]

    def lap(name: str) -> None:
        now = time.perf_counter()
        timings[name] = timings.get(name, 0.0) + now - clock[0]
        clock[0] = now

    outdir = Path(outdir).resolve()
    if staging is None:
        staging = Staging(outdir)
    elif staging.outdir != outdir:
        raise ValueError(f"the staging folder {staging.tmp} is not that of {outdir}")
    tmp = staging.tmp
    old, why = None, "a full build was asked for"
    blocks = None
    sinks: dict[str, Sink] = {}
    store: dict = {}  # the store's builder ("loader"), made by whichever part writes graph.nt
    writer = queue = json_job = kept_job = None
    counts: dict = {}  # papers and digested units, for the report
    try:
        if reuse:
            old, why = read_state(outdir, base, [*formats, "json.nodes", "json.links"])
            if old is not None and not (outdir / STORE_DIR).is_dir():
                old, why = None, "the previous build has no store"
        sinks = {f: Sink(tmp / RDF_FORMATS[f]) for f in formats}
        sinks["json"] = Sink(tmp / "graph.json")
        nt_path = tmp / RDF_FORMATS["nt"]

        usage: dict = {}

        def usages() -> dict:
            """The tasks' method usages (:func:`kg.rdf.statements.usage_table`), made once for the digests
            and the RDF blocks of whichever process writes them."""
            if not usage:
                usage["table"] = usage_table(G)
            return usage["table"]

        def write_rdf_files(blocks: Blocks) -> int:
            """graph.nt / .ttl / .jsonld (and context.jsonld); returns the triples."""
            n = write_rdf(G, {f: sinks[f] for f in formats}, base, reuse=blocks, usages=usages())
            for f in formats:
                sinks[f].close()
            if "jsonld" in formats:
                (tmp / "context.jsonld").write_text(
                    json.dumps({"@context": jsonld_context(base)}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
            return n

        def write_json_file(blocks: Blocks) -> None:
            write_graph_json(G, sinks["json"], reuse=blocks)
            sinks["json"].close()

        def write_build_state(blocks: Blocks) -> None:
            """The state the next build reuses blocks from, with checks of the files it describes."""
            names = sorted({RDF_FORMATS[f] for f in formats} | {"graph.json"})
            write_state(tmp / STATE_FILE, blocks.state(base, {name: file_check(tmp / name) for name in names}))

        def run_job(job: str, cards: dict, digests) -> tuple[str, dict]:
            """One of the :data:`JOBS`: ("html", the view's row of the index page) or ("jsonl", {}),
            or the :data:`KEEP_JOB` ("kept", {}), with ``digests()`` the units' digests."""
            if job in VIEWS:
                return "html", {job: draw_view(G, tmp, job, cards)}
            if job == KEEP_JOB:
                keep(digests())
                return "kept", {}
            write_jsonl(tmp, job, extractions, records)
            return "jsonl", {}

        def full(digests: dict[str, str]) -> None:
            """Write every block here (copying those that can be), the store loaded in full
            from graph.nt as it is written (Oxigraph loads in Rust, without the GIL, on a
            second core while the JSON and HTML are written)."""
            nonlocal blocks
            blocks = Blocks(digests, sinks, old, outdir if old else None)
            counts.update(papers=sum(1 for u in digests if u.startswith("paper/")), units=len(digests))
            store["loader"] = StoreLoader(tmp / STORE_DIR, nt_path)
            sinks["nt"].on_flush = store["loader"].grow
            t = time.perf_counter()
            store["triples"] = write_rdf_files(blocks)
            store["loader"].grow(nt_path.stat().st_size, done=True)
            timings["rdf"] = time.perf_counter() - t
            write_json_file(blocks)
            timings["graph.json"] = time.perf_counter() - t - timings["rdf"]
            counts.update(reused=blocks.reused, reused_papers=blocks.reused_papers)

        def delta_child(send) -> dict:
            """In a forked child, when the last build's state is usable: digest the units and,
            if most are unchanged, send the digests (graph.json is written from them), write the
            RDF blocks (mostly copied from the last build's files), send what the parent needs
            of them (the store update starts on it, the state takes their rows), then take the
            jobs left: the kept state, a view, then graph.json if the build process has not taken
            it (the child then writes the build state too). Else send the digests back for a full
            write."""
            t = time.perf_counter()
            digests = unit_digests(G, known, usages())
            blocks = Blocks(digests, sinks, old, outdir)
            digest_seconds = time.perf_counter() - t
            if blocks.share_reusable() < DELTA_MIN_SHARE:
                blocks.close()
                return {"delta": False, "digests": digests, "digest": digest_seconds}
            send({"digests": digests})
            t = time.perf_counter()
            n = write_rdf_files(blocks)
            rdf_seconds = time.perf_counter() - t
            # the store update starts on it, in the parent's reader thread (not between two views)
            send({"changes": blocks.changed_triples(outdir / RDF_FORMATS["nt"], nt_path), "triples": n}, now=True)
            send({"delta": True, "reused": blocks.reused, "reused_papers": blocks.reused_papers,
                  "papers": sum(1 for u in digests if u.startswith("paper/")), "digested": len(digests),
                  "digest": digest_seconds, "rdf": rdf_seconds, "units": blocks.units})
            drawn: dict = {}  # then the jobs the build process has not taken yet
            seconds = {"html": 0.0, "jsonl": 0.0}
            cards = CardCache(G)
            # the kept state first, then a view left, then graph.json if still there
            while (job := kept_job.take() or queue.take() or json_job.take()) is not None:
                t = time.perf_counter()
                if job == GRAPH_JSON:  # graph.json from this child's blocks, then the state of them all
                    write_json_file(blocks)
                    seconds["graph.json"] = time.perf_counter() - t
                    write_build_state(blocks)
                    seconds["build-state"] = time.perf_counter() - t - seconds["graph.json"]
                    continue
                kind, rows = run_job(job, cards, lambda: digests)
                drawn.update(rows)
                seconds[kind] = seconds.get(kind, 0.0) + time.perf_counter() - t
            blocks.close()
            return {"views": drawn, "seconds": seconds, "state_written": "build-state" in seconds}

        def start_store_update(message: dict) -> None:
            """The store of this build from the last one's, once the child's RDF files are written."""
            removed, added = message["changes"]
            store["triples"] = message["triples"]
            store["loader"] = StoreUpdater(outdir / STORE_DIR, tmp / STORE_DIR, outdir / RDF_FORMATS["nt"],
                                           removed, nt_path, added, compact_after=compact_runs)

        child: dict = {}  # what the child sent of an incremental write: its digests, then its RDF blocks' rows

        def take(message: dict) -> None:
            """A message of the child: its digests; its RDF blocks are written (their rows
            for the state), or most units changed (write everything here); or the jobs it
            took are done. (Its store changes go to :func:`start_store_update` as they arrive.)"""
            if "views" in message:
                drawn.update(message["views"])
                for kind, seconds in message["seconds"].items():
                    timings[f"child:{kind}"] = seconds
                if message["state_written"]:  # graph.json and the state too
                    sinks["json"].abort()  # this process's copy of the file
                    counts["state_written"] = True
                return
            if "digests" in message and "delta" not in message:
                child["digests"] = message["digests"]
                return
            timings["digest"] = message["digest"]
            if not message["delta"]:
                full(message["digests"])
                return
            for name, sink in sinks.items():
                if name != "json":
                    sink.abort()  # this process's copies of the files the child wrote
            child["units"] = message["units"]
            counts.update(papers=message["papers"], units=message["digested"], reused=message["reused"],
                          reused_papers=message["reused_papers"])
            timings["child:rdf"] = message["rdf"]

        def digests_here() -> dict:
            """The units' digests: made here, or (in an incremental build) sent by the child."""
            while "digests" not in child and blocks is None:
                take(writer.next())
            return blocks.digests if blocks is not None else child["digests"]

        def json_here() -> None:
            """The graph.json job taken by this process in an incremental build: the file
            from the child's digests (unless most units changed and everything was written
            here). The state waits for the rows of the child's RDF blocks (:func:`state_here`)."""
            nonlocal blocks
            digests_here()
            if blocks is not None:  # written in full here (most units changed)
                return
            t = time.perf_counter()
            blocks = Blocks(child["digests"], {"json": sinks["json"]}, old, outdir)
            write_json_file(blocks)
            timings["graph.json"] = time.perf_counter() - t
            counts["json_here"] = True

        def state_here() -> None:
            """The build state, from this process's graph.json rows and those of the child's RDF blocks."""
            while "units" not in child:
                take(writer.next())
            t = time.perf_counter()
            blocks.merge_rows(child.pop("units"))
            write_build_state(blocks)
            counts["state_written"] = True
            timings["build-state"] = time.perf_counter() - t

        drawn: dict[str, tuple] = {}  # view -> its row of the index page
        # the views and JSON Lines files, each made by whichever process is free first
        queue = _Shared([job for job in JOBS if job not in staging.started])
        # the kept resolution state: taken first by the child of an incremental build (its
        # side of the write ends sooner), last by this process
        kept_job = _Shared([KEEP_JOB] if keep is not None else [])
        # In an incremental build, graph.json is written from the child's digests by whichever
        # side runs out of other jobs first: the child once its RDF blocks are copied and no
        # view is left, or this process once it has drawn the views. The child takes a view
        # left before graph.json. At 100k + 1%, with the papers' digests kept, the child's blocks
        # take 12-16 s and this process is then drawing its last view, so the child writes
        # graph.json. Also tried: this process writing graph.json after its first view, so that
        # the child drew the last one. The write stage was no shorter in two alternated pairs
        # (23.2 and 24.6 s, against 22.7 and 24.3 s for the code of 29bdaa4).
        json_job = _Shared([GRAPH_JSON] if old is not None else [])
        if old is not None:
            # Most of an incremental build's block writing is the kernel copying old blocks,
            # but the Python between the copies, in a thread, fought the views for the GIL
            # (100k: 13 s alone, 35 s next to them). A forked child has a GIL of its own; it
            # also digests the units (its pages are copied as it reads them: memory shared
            # only in part), then takes jobs as this process does.
            writer = _Forked(delta_child, on_now=start_store_update)
        else:
            digests = unit_digests(G, known, usages())
            lap("digest")
            full(digests)
        lap("blocks")
        cards = CardCache(G)
        while (job := queue.take() or json_job.take() or kept_job.take()) is not None:
            while writer is not None and writer.ready():
                take(writer.next())  # the store update runs in a thread while the other jobs are done
            if job == GRAPH_JSON:
                json_here()
                lap("json-state")
                continue
            kind, rows = run_job(job, cards, digests_here)
            drawn.update(rows)
            lap(kind)
        if writer is not None:
            if counts.get("json_here"):
                state_here()
                lap("json-state")
            while not writer.done:
                take(writer.next())
            writer = None
            lap("blocks-wait")
        timings.update(staging.wait())
        lap("staged-wait")
        n_triples = store["triples"]
        views = [drawn[view] for view in VIEWS]
        stats = graph_stats(G, n_records)
        stats["triples"] = n_triples
        (tmp / "stats.json").write_text(json.dumps(stats, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        (tmp / "index.html").write_text(_index_html(stats, views, [RDF_FORMATS[f] for f in formats]),
                                        encoding="utf-8")
        if not counts.get("state_written"):
            write_build_state(blocks)
        lap("state")
        loader = store["loader"]
        loader.close()
        timings["store"] = loader.seconds
        lap("store-wait")
        if blocks is not None:
            blocks.close()
        if report is not None:
            papers = counts["papers"]
            copied = (f"{counts['reused_papers']:,} of {papers:,} papers and {counts['reused'] - counts['reused_papers']:,} "
                      f"of {counts['units'] - papers:,} entities copied from the last build")
            if old is None:
                report(f"reuse    none ({why})")
            elif isinstance(loader, StoreLoader):  # blocks may still have been copied; the store was loaded in full
                report(f"reuse    {copied}; store loaded in full (fewer than half of them unchanged)")
            else:
                phases = ", ".join(f"{k} {v:.2f}s" for k, v in loader.phases.items())
                n = loader.updates["updates"]
                since = "compacted" if loader.compacted else \
                    f"{n} update{'s' if n != 1 else ''} since its last compaction"
                report(f"reuse    {copied}; store updated ({loader.removed_triples:,} triples removed, "
                       f"{loader.added_bytes / 1e6:.1f} MB of N-Triples added; {phases}; {since})")
        for jobs in (queue, json_job, kept_job):
            jobs.close()
        _swap(tmp, outdir)
        staging.release()
    except BaseException:
        if writer is not None:
            writer.kill()
        for jobs in (queue, json_job, kept_job):
            if jobs is not None:
                jobs.close()
        for sink in sinks.values():
            sink.abort()
        if blocks is not None:
            blocks.close()
        if store.get("loader") is not None:
            store["loader"].abort()  # never delete files under a running loader
        staging.abort()
        raise
    return stats


def write_jsonl(folder: Path, name: str, extractions: list[Extraction], records) -> None:
    """``extractions.jsonl`` (the ``kg extract`` lines) or ``records.jsonl`` (nothing
    without ``records``) into ``folder``."""
    if name != "extractions.jsonl" and not records:
        return
    sink = Sink(folder / name)  # 100k: 320 and 107 MB, their dirty pages bounded as graph.nt's
    try:
        if name == "extractions.jsonl":
            write_extractions(sink, extractions)
        else:
            sink.write(records_to_jsonl(records))
    except BaseException:
        sink.abort()
        raise
    sink.close()


class Staging:
    """The temporary sibling folder a build writes its outputs into, swapped in whole
    by :func:`write_outputs` (made on creation, after :func:`recover`). Made before the
    graph, it lets the files that need only the records and the extractions
    (``extractions.jsonl``, ``records.jsonl``) be written by a forked child while this
    process resolves the graph on the other core (:meth:`start`). Used as a context
    manager, it is removed if the build fails before :func:`write_outputs` swapped it in.

    >>> import tempfile; from pathlib import Path
    >>> out = Path(tempfile.mkdtemp()) / "out"
    >>> with Staging(out) as st:
    ...     st.start([], None)
    >>> st.wait()["early:jsonl"] >= 0, sorted(p.name for p in st.tmp.iterdir())
    (True, ['extractions.jsonl'])
    >>> st.abort(); st.tmp.exists()
    False
    """

    def __init__(self, outdir: str | Path):
        self.outdir = Path(outdir).resolve()
        self.outdir.parent.mkdir(parents=True, exist_ok=True)
        # held until the outputs are swapped in or the build fails (kg.build.lock): another build's
        # recovery would take this build's folder for a killed build's leftovers
        self._lock = contextlib.ExitStack()
        self._lock.enter_context(output_lock(self.outdir))
        try:
            recover(self.outdir)
            self.tmp = Path(tempfile.mkdtemp(prefix=f".{self.outdir.name}.tmp-", dir=self.outdir.parent))
        except BaseException:
            self.release()
            raise
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(self.tmp, 0o777 & ~umask)
        self.started: tuple[str, ...] = ()
        self._child: _Forked | None = None
        self._pass_pending = False  # the child runs a corpus-name pass whose additions are not taken yet
        self._pass_seconds: float | None = None  # the seconds it took, once taken

    def start(self, extractions: list[Extraction] | None, records, corpus=None) -> None:
        """Write ``extractions.jsonl`` and ``records.jsonl`` in a forked child, now. Given
        ``corpus`` (a :class:`kg.extract.CorpusPass`) instead of the ``extractions``, the
        child first runs that corpus-name pass, whose additions :meth:`additions` gives
        this process, and writes the extractions it then has."""
        tmp = self.tmp

        def child(send) -> float:
            final = extractions
            if corpus is not None:
                t = time.perf_counter()
                additions = corpus.run_in_child()
                send((additions, time.perf_counter() - t))
                final = corpus.extractions()
            t = time.perf_counter()
            for name in ("extractions.jsonl", "records.jsonl"):
                write_jsonl(tmp, name, final, records)
            return time.perf_counter() - t

        self.started = ("extractions.jsonl", "records.jsonl")
        self._child = _Forked(child)
        self._pass_pending = corpus is not None

    def additions(self) -> list:
        """What the child's corpus-name pass added to each text (see :meth:`start`): waits for it."""
        if self._child is None or not self._pass_pending:
            raise RuntimeError("no corpus-name pass is under way in the child")
        additions, self._pass_seconds = self._child.next()
        self._pass_pending = False
        return additions

    def wait(self) -> dict:
        """Wait for the files :meth:`start` began (raising the child's error, if any);
        returns the seconds they took, as timings."""
        if self._child is None:
            return {}
        if self._pass_pending:
            self.additions()  # the pass's message comes first
        child, self._child = self._child, None
        out = {"early:jsonl": child.next()}
        if self._pass_seconds is not None:
            out["early:corpus-pass"] = self._pass_seconds
        return out

    def abort(self) -> None:
        """Stop the child and remove the folder (a failed build)."""
        if self._child is not None:
            self._child.kill()
            self._child = None
        shutil.rmtree(self.tmp, ignore_errors=True)
        self.release()

    def release(self) -> None:
        """Let another build into the output folder (once this one is swapped in or failed)."""
        self._lock.close()  # a second call does nothing

    def __enter__(self) -> "Staging":
        return self

    def __exit__(self, kind, value, tb) -> None:
        if kind is not None:
            self.abort()
        self.release()


#: What is left once the graph is built, besides the blocks and the store: the views and the
#: JSON Lines files, slowest first (100k papers: 7.6, 5.3, 4.2, 3.9, 4.4 and 1.3 s). In an
#: incremental build the block writer's child takes the next one when its own work is done.
JOBS = ("method-task", "overview", "paper", "dataset", "extractions.jsonl", "records.jsonl")
#: The job of writing the kept resolution state, when there is one (after :data:`JOBS`).
KEEP_JOB = "kept"
#: The job of writing graph.json, in an incremental build (after :data:`JOBS`).
GRAPH_JSON = "graph.json"


def draw_view(G: nx.MultiDiGraph, folder: Path, view: str, cards: dict) -> tuple:
    """Write the page of ``view`` into ``folder``; returns its row of the index page:
    (file, name, description, nodes shown, note). ``cards`` caches node cards."""
    html, shown, note = page_html(G, view=view, cards=cards)
    (folder / VIEW_FILES[view]).write_text(html, encoding="utf-8")
    return (VIEW_FILES[view], *VIEWS[view], shown, note)


class _Shared:
    """Items taken, each once, by whichever of this process and its forked children asks
    first: one byte an item in a pipe read without blocking (a list where there is no fork)."""

    def __init__(self, items):
        self.items = list(items)
        self._left = None
        self._fds: tuple[int, int] | None = None
        if not hasattr(os, "fork"):
            self._left = list(range(len(self.items)))
            return
        self._fds = os.pipe()
        os.write(self._fds[1], bytes(range(len(self.items))))
        os.set_blocking(self._fds[0], False)

    def take(self):
        """The next item, or None when all are taken."""
        if self._fds is None:
            return self.items[self._left.pop(0)] if self._left else None
        try:
            got = os.read(self._fds[0], 1)
        except BlockingIOError:  # the pipe is empty: every item is taken
            return None
        return self.items[got[0]] if got else None

    def close(self) -> None:
        if self._fds is not None:
            for fd in self._fds:
                os.close(fd)
            self._fds = None
            self._left = []


class _Forked:
    """``fn(send)`` in a forked child process. The parent takes, in order, each value the
    child passed to ``send`` and then its return value, with :meth:`next` (which raises
    the child's error in their place); :attr:`done` is true once the last was taken.
    A thread of the parent reads the pipe as the child writes, so the child never
    waits for the parent. A value sent with ``send(value, now=True)`` goes instead to
    ``on_now(value)``, called by that thread as soon as it arrives (an error it raises
    is raised by :meth:`next`). The child shares the parent's memory copy-on-write and
    leaves with ``os._exit`` (no atexit handlers, no flushing of the parent's buffers).
    Where there is no ``os.fork`` (Windows), ``fn`` runs here, at once."""

    def __init__(self, fn, on_now=None):
        import queue

        self.done = False
        self.pid = None
        self._fd = -1
        self._messages: queue.Queue = queue.Queue()
        self._on_now = on_now
        if not hasattr(os, "fork"):
            def send_here(message, now: bool = False) -> None:
                if now and on_now is not None:
                    on_now(message)
                else:
                    self._messages.put(("message", message))

            try:
                value = fn(send_here)
                self._messages.put(("ok", value))
            except BaseException as exc:  # raised by next(), as a child's would be
                self._messages.put(("error", exc))
            return
        from kg._fork import fork_held

        # forked with Ctrl-C held back (see kg._fork): one that came meanwhile stops the child
        fork_held(lambda mask: self._start(fn, mask), stop=lambda _: self.kill())

    def _start(self, fn, mask) -> None:
        """Fork the child that runs ``fn`` (restoring the signal ``mask`` first), and the thread that reads it."""
        import pickle
        import signal
        import threading

        from kg._fork import child_started, prepare

        parent = prepare()
        read, write = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the child
            try:
                child_started(parent)  # dies with this process, without its output lock
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
                os.close(read)

                def put(kind, value) -> None:
                    try:
                        data = pickle.dumps((kind, value), protocol=pickle.HIGHEST_PROTOCOL)
                    except Exception as exc:  # an error that does not pickle
                        data = pickle.dumps(("error", RuntimeError(f"{value!r} ({exc})")))
                    # a frame: its length, a byte saying whether it goes to on_now, the pickle
                    view = memoryview((len(data) + 1).to_bytes(8, "little") + (b"n" if kind == "now" else b"m") + data)
                    while view:
                        view = view[os.write(write, view):]

                try:
                    value = fn(lambda message, now=False: put("now" if now else "message", message))
                    put("ok", value)
                except BaseException as exc:  # sent to the parent, raised there
                    put("error", exc)
            finally:
                os._exit(0)
        os.close(write)
        self._fd = read
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        """Thread: each message of the child, as bytes, into the queue; then reap the child."""

        def exactly(n: int) -> bytes:
            chunks = []
            while n:
                chunk = os.read(self._fd, min(n, 1 << 20))
                if not chunk:
                    raise EOFError
                chunks.append(chunk)
                n -= len(chunk)
            return b"".join(chunks)

        import pickle

        try:
            while True:
                data = exactly(int.from_bytes(exactly(8), "little"))
                if data[:1] == b"n" and self._on_now is not None:
                    try:
                        self._on_now(pickle.loads(memoryview(data)[1:])[1])
                    except Exception as exc:  # raised by next(), in its place among the messages
                        self._messages.put(("error", exc))
                    continue
                self._messages.put(("bytes", memoryview(data)[1:]))
        except (EOFError, OSError):
            pass
        os.close(self._fd)
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        # read only if the child ended before its result (killed, or out of memory)
        self._messages.put(("error", RuntimeError(f"the block writer process ended without a result "
                                                  f"(status {status})")))

    def ready(self) -> bool:
        """True if :meth:`next` has a value to give without waiting."""
        return not self.done and not self._messages.empty()

    def next(self):
        import pickle

        if self.done:
            raise RuntimeError("no more messages from the child process")
        kind, value = self._messages.get()
        if kind == "bytes":
            kind, value = pickle.loads(value)
        if kind in ("message", "now"):  # "now" without an on_now: an ordinary message
            return value
        self.done = True
        if kind == "error":
            raise value
        return value

    def kill(self) -> None:
        """Stop the child (on an error of the parent) and wait until it is reaped."""
        import signal

        pid = self.pid
        if pid is not None and not self.done:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.done = True
        if self._fd >= 0:
            self._reader.join()


def recover(outdir: Path) -> None:
    """Undo what a killed build left next to ``outdir``: put back the previous
    outputs if the kill fell between the two renames of the swap, and remove
    half-written temporary folders. Called under the folder's lock
    (:func:`kg.build.lock.output_lock`): no other build is writing next to it."""
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


def write_html(page, path: str | Path) -> None:
    """Write one page (HTML text, or a view from :func:`kg.web.viz.build_view`) atomically."""
    atomic_write(path, page if isinstance(page, str) else render_html(page))
