"""The build pipeline: ingest -> extract -> resolve -> write.

:func:`build` is ``kg build``; :meth:`kg.KnowledgeGraph.build` runs the same
stages (:func:`read`, :func:`extract`, :func:`resolve`) in memory and
:meth:`~kg.KnowledgeGraph.save` the last one (:func:`kg.pipeline.outputs.write_outputs`).
Both give the same files.

A build into a folder also overlaps its stages on a second core: the JSON Lines files
are written by a forked child of the staging folder while this process resolves, and
the outputs of an earlier build in the folder are reused where unchanged
(:mod:`kg.pipeline.blocks`).
"""
from __future__ import annotations

import contextlib
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import networkx as nx

from kg.pipeline.outputs import DEFAULT_RDF, rdf_formats, write_outputs
from kg.pipeline.staging import Staging
from kg.talk import Talk
from kg.extract import extract_records
from kg.ingest import input_files, read_records, sample_paths
from kg.model import Extraction, Record
from kg.rdf.namespace import DEFAULT_BASE
from kg.resolve.algorithms import edge_count
from kg.resolve.entities import resolve as resolve_entities
from kg.resolve.graph import build_graph


@dataclass
class BuildOptions:
    """How ``kg build`` runs; the defaults are the command's."""

    workers: int = 1  # processes of the spaCy pass
    cache: str | Path | None = None  # the extraction cache's folder (None: the user's cache folder)
    use_cache: bool = True  # False: extract everything, reuse nothing
    dask: str | None = None  # a Dask scheduler's address (or "local")
    skip_invalid: bool = False  # skip bad records with a warning instead of failing
    base: str = DEFAULT_BASE
    formats: tuple[str, ...] = DEFAULT_RDF  # the RDF dumps, gzip-compressed
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
    return build_graph(resolve_entities(records, extractions))


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
    # the folder's lock is taken before extraction, and held to the swap: a second build into it fails at once
    with Staging(out) as staging:
        skipped: list[str] = []
        records = read(files, options.skip_invalid, talk.warn, skipped)
        talk.say(f"read {len(records):,} records from {len(files):,} file{'s' if len(files) != 1 else ''}"
                 + (f"; skipped {len(skipped):,} invalid" if skipped else ""))
        talk.detail(f"ingest: {time.perf_counter() - t0:.2f}s")
        t = time.perf_counter()
        extractions, hits = _extract(records, options, talk)
        talk.say(f"extracted {sum(len(e.mentions) for e in extractions):,} mentions from {len(records):,} "
                 f"records in {time.perf_counter() - t:.1f} s" + hits)
        talk.detail(f"extract: {time.perf_counter() - t:.2f}s")
        staging.start(extractions, records)  # the JSON Lines files, by a forked child while this resolves
        t = time.perf_counter()
        G = resolve(records, extractions)
        talk.say(f"resolved {G.number_of_nodes():,} nodes and {edge_count(G):,} links")
        talk.detail(f"resolve: {time.perf_counter() - t:.2f}s")
        t, timings = time.perf_counter(), {}
        stats = write_outputs(G, extractions, out, base=options.base, n_records=len(records),
                              records=records, timings=timings, formats=formats, reuse=options.use_cache,
                              store_compaction=options.store_compaction, talk=talk, staging=staging,
                              skipped=len(skipped))
    seconds = time.perf_counter() - t
    talk.detail(f"write: {seconds:.2f}s ({stats['triples']} triples; "
                + ", ".join(f"{k} {v:.2f}s" for k, v in timings.items()) + ")")
    talk.say(f"wrote {out}/ ({stats['triples']:,} triples) in {seconds:.1f} s")
    return Built(stats, records, extractions, G, time.perf_counter() - t0)


def _extract(records: list[Record], options: BuildOptions, talk: Talk) -> tuple[list[Extraction], str]:
    """The extractions (cached texts read, the others extracted; on a Dask cluster if asked)
    and the log's word on the cache."""
    cache = _open_cache(options, talk)
    with contextlib.ExitStack() as stack:
        client = None
        if options.dask:
            from kg.extract.dask_cluster import dask_client

            client = stack.enter_context(dask_client(options.dask, options.workers))
            talk.say(f"extracting on {len(client.scheduler_info().get('workers', ()))} Dask workers at {options.dask}")
        extractions = list(extract_records(records, workers=options.workers, cache=cache, dask=client,
                                           progress=talk.counter("extracting", "texts")))
    if cache is None:
        return extractions, ""
    cache.close()  # before the forked children of the write stage
    return extractions, f"; {cache.hits:,} texts taken from the cache" if cache.hits else ""


def _open_cache(options: BuildOptions, talk: Talk):
    if not options.use_cache:
        return None
    from kg.extract.cache import ExtractionCache, default_cache_dir

    folder = Path(options.cache or default_cache_dir())
    _remove_resolution_state(folder, default_cache_dir(), talk)
    return ExtractionCache(folder)


def _remove_resolution_state(cache: Path, home: Path, talk: Talk) -> None:
    """Remove what builds of earlier versions kept between builds beside the extraction
    cache: a resolution state per output folder (``kept/``) and the key that signed it."""
    gone = [p for p in (cache / "kept", home / "kept.key") if p.exists()]
    for path in gone:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    if gone:
        talk.say(f"removed the resolution state that earlier versions kept in {cache} (builds keep none now)")
