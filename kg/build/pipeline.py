"""The build pipeline: ingest -> extract -> resolve -> write.

:func:`build` is ``kg build``; :meth:`kg.KnowledgeGraph.build` runs the same
stages (:func:`read`, :func:`extract`, :func:`resolve`) in memory and
:meth:`~kg.KnowledgeGraph.save` the last one (:func:`kg.build.outputs.write_outputs`).
Both give the same files.

A build into a folder also overlaps its stages on a second core: the JSON Lines files
(and, with a cache, the corpus-name pass) are written by a forked child of the
staging folder while this process resolves, and the outputs of an earlier build in
the folder are reused where unchanged (:mod:`kg.build.kept`, :mod:`kg.build.reuse`).
"""
from __future__ import annotations

import contextlib
import functools
import os
import time
from dataclasses import dataclass
from pathlib import Path

import networkx as nx

from kg.build.kept import Resolution, resolve_graph
from kg.build.lock import output_lock
from kg.build.outputs import RDF_FORMATS, rdf_formats, write_outputs
from kg.build.staging import Staging
from kg.build.talk import Talk
from kg.extract import extract_first, extract_records
from kg.ingest import input_files, read_records, sample_paths
from kg.model import Extraction, Record
from kg.rdf.namespace import DEFAULT_BASE
from kg.resolve.algorithms import edge_count


@dataclass
class BuildOptions:
    """How ``kg build`` runs; the defaults are the command's."""

    workers: int = 1  # processes of the spaCy pass
    cache: str | Path | None = None  # the extraction cache's folder (None: the user's cache folder)
    use_cache: bool = True  # False: extract everything, reuse nothing
    dask: str | None = None  # a Dask scheduler's address (or "local")
    skip_invalid: bool = False  # skip bad records with a warning instead of failing
    base: str = DEFAULT_BASE
    formats: tuple[str, ...] = tuple(RDF_FORMATS)
    store_compaction: str = "auto"


def read(sources=None, skip_invalid: bool = False, warn=None, skipped: list | None = None) -> list[Record]:
    """Ingest: the records of files, folders and record dicts; the bundled samples if
    ``sources`` is None. ``skipped`` receives the message of each invalid record left out."""
    return read_records(sample_paths() if sources is None else sources, skip_invalid, warn, skipped)


def extract(records: list[Record]) -> list[Extraction]:
    """Extract in this process, without a cache: what :func:`build` extracts."""
    return list(extract_records(records))


def resolve(records: list[Record], extractions: list[Extraction]) -> nx.MultiDiGraph:
    """Resolve: the typed graph of the records' extractions."""
    return resolve_graph(records, extractions).G


@dataclass
class Built:
    """What :func:`build` made: the stats written, and the records, extractions and graph."""

    stats: dict
    records: list[Record]
    extractions: list[Extraction]
    graph: nx.MultiDiGraph
    seconds: float


def build(sources, out: str | Path, options: BuildOptions | None = None, talk: Talk | None = None) -> Built:
    """``kg build``: the outputs of ``sources`` (files and folders; the bundled samples if
    none) written into ``out``. ``talk`` hears what each stage did (:class:`Talk`)."""
    options, talk = options or BuildOptions(), talk or Talk()
    t0 = time.perf_counter()
    formats = rdf_formats(options.formats)  # a typo fails now, not after extraction
    files = [f for src in sources for f in input_files(src)] if sources else sample_paths()
    with output_lock(out):  # before extraction: a second build into the folder fails at once
        skipped: list[str] = []
        records = read(files, options.skip_invalid, talk.warn, skipped)
        talk.say(f"read {len(records):,} records from {len(files):,} file{'s' if len(files) != 1 else ''}"
                 + (f"; skipped {len(skipped):,} invalid" if skipped else ""))
        talk.detail(f"ingest: {time.perf_counter() - t0:.2f}s")
        cache = _open_cache(options)
        identities = {} if cache is not None else None  # each record's extraction identity (kg.build.kept)
        t = time.perf_counter()
        first, extractions, hits = _extract_first(records, options, cache, identities, talk)
        with Staging(out) as staging:
            extractions, kept = _finish_extraction(first, extractions, records, staging, cache, out, talk)
            first = None  # the first pass's results: all in the extractions now
            talk.say(f"extracted {sum(len(e.mentions) for e in extractions):,} mentions from {len(records):,} "
                     f"records in {time.perf_counter() - t:.1f} s" + hits)
            talk.detail(f"extract: {time.perf_counter() - t:.2f}s")
            t = time.perf_counter()
            res = resolve_graph(records, extractions, identities, kept.previous)
            kept.previous = None  # its graph's unchanged parts live on in the new one
            again = f" ({res.papers - res.resolved:,} unchanged papers taken from the last build)" \
                if res.resolved < res.papers else ""
            talk.say(f"resolved {res.G.number_of_nodes():,} nodes and {edge_count(res.G):,} links{again}")
            talk.detail(f"resolve: {time.perf_counter() - t:.2f}s")
            t, timings = time.perf_counter(), {}
            stats = write_outputs(res.G, extractions, out, base=options.base, n_records=len(records),
                                  records=records, timings=timings, formats=formats, reuse=options.use_cache,
                                  store_compaction=options.store_compaction, talk=talk, staging=staging,
                                  keep=kept.saver(res), known=res.known, skipped=len(skipped))
    seconds = time.perf_counter() - t
    talk.detail(f"write: {seconds:.2f}s ({stats['triples']} triples; "
                + ", ".join(f"{k} {v:.2f}s" for k, v in timings.items()) + ")")
    talk.say(f"wrote {out}/ ({stats['triples']:,} triples) in {seconds:.1f} s")
    return Built(stats, records, extractions, res.G, time.perf_counter() - t0)


def _open_cache(options: BuildOptions):
    if not options.use_cache:
        return None
    from kg.extract.cache import ExtractionCache, default_cache_dir

    return ExtractionCache(options.cache or default_cache_dir())


def _extract_first(records, options: BuildOptions, cache, identities, talk: Talk) -> tuple:
    """The spaCy pass (cached texts read, the others extracted), on a Dask cluster if asked:
    (the corpus-name pass to run, the extractions if it ran here already, the log's word on
    the cache). Without a kept state to load meanwhile (no cache), on Dask or without fork,
    the corpus-name pass runs here and now."""
    with contextlib.ExitStack() as stack:
        client = None
        if options.dask:
            from kg.extract.dask_cluster import dask_client

            client = stack.enter_context(dask_client(options.dask, options.workers))
            talk.say(f"extracting on {len(client.scheduler_info().get('workers', ()))} Dask workers at {options.dask}")
        first = extract_first(records, workers=options.workers, cache=cache, dask=client,
                              progress=talk.counter("extracting", "texts"), identities=identities)
        extractions = None
        if cache is None or client is not None or not hasattr(os, "fork"):
            extractions = list(first.finish())
    hits = ""
    if cache is not None:
        hits = f"; {cache.hits:,} texts taken from the cache" if cache.hits else ""
        cache.close()  # a forked child opens its own connection
    return first, extractions, hits


@dataclass
class _Kept:
    """The last build's kept resolution state (or none) and where this build's goes."""

    previous: object = None
    path: Path | None = None

    def saver(self, res: Resolution):
        from kg.build.kept_files import save_kept
        from kg.extract.cache import default_cache_dir

        return None if self.path is None else functools.partial(save_kept, self.path, res.kept, default_cache_dir())


def _finish_extraction(first, extractions, records, staging: Staging, cache, out, talk: Talk) -> tuple[list, _Kept]:
    """The extractions, with the JSON Lines files started in the staging folder's child,
    and the kept state loaded. With a cache, the corpus-name pass runs in that child while
    this process loads the kept state (loaded after the fork: its pages, written by the
    resolution, would otherwise be shared with the child and copied first)."""
    staging.start(extractions, records, corpus=first if extractions is None else None)
    kept = _load_kept(cache, out, talk) if cache is not None else _Kept()
    if extractions is None:  # the corpus-name pass's additions, from the child
        extractions = first.apply(staging.additions())
    return extractions, kept


def _load_kept(cache, out, talk: Talk) -> _Kept:
    """The kept state of the last build into ``out`` (if any, and signed by this user's builds)."""
    from kg.build.kept_files import load_kept, signing_key, state_path
    from kg.extract.cache import default_cache_dir

    t = time.perf_counter()
    kept = _Kept(path=state_path(cache.folder, out))
    try:
        signing_key(default_cache_dir())  # made now if need be: a build that cannot sign keeps nothing
        kept.previous, why = load_kept(kept.path, default_cache_dir())
    except OSError as exc:
        kept.path, why = None, f"no signing key in {default_cache_dir()}: {exc.strerror}"
    took = time.perf_counter() - t
    talk.detail(f"kept resolution state: none ({why}), {took:.2f}s" if kept.previous is None
                else f"kept resolution state: {len(kept.previous.papers):,} papers, loaded in {took:.2f}s")
    return kept
