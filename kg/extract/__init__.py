"""Extraction: records in, :class:`~kg.model.Extraction` objects out (spaCy only here).

spaCy is imported where a text goes through the pipeline (:func:`get_nlp`, :func:`make_nlp`,
the first pass), not with this package: a build whose texts are all cached, or whose new
texts go to forked workers, does not import it in the build process (the workers import it
meanwhile, beside the decoding of the cached results).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from kg._gc import gc_paused
from kg.model import Extraction, Record
from kg.extract.cache import decode, decode_added, encode, encode_added
from kg.extract.propagate import (_pattern, add_entities, build_lexicon, changed_forms, lexicon_digest, lexicon_json,
                        propagate, substring_regex)
from kg.extract.normalize import KEYWORDS_MARK, normalize_record
from kg.extract.version import PIPELINE_VERSION

__all__ = ["extract_records", "extract_text", "PIPELINE_VERSION", "make_nlp", "get_nlp"]

_TITLE_SEP = ". "


def _text_of(rec: Record) -> tuple[str, int]:
    """The text the pipeline reads and the length of its title prefix. Author keywords
    ride behind the abstract (:data:`~kg.extract.normalize.KEYWORDS_MARK`): the text is
    a record's identity for the caches, and keywords are evidence of its extraction."""
    text, tlen = rec.abstract, 0
    if rec.title:
        title = rec.title.rstrip(". ")
        text, tlen = title + _TITLE_SEP + rec.abstract, len(title) + len(_TITLE_SEP)
    if rec.keywords:
        text += KEYWORDS_MARK + "; ".join(rec.keywords)
    return text, tlen


_LONG_RUN = re.compile(r"\S{%d,}" % 200)


def tokenizer_safe(text: str) -> str:
    """``text`` with the same length, long runs without spaces broken every 100
    characters: spaCy's affix splitting is quadratic in the length of one
    token ("((((...))))" x 5,000), and no name is 200 characters long."""
    if not _LONG_RUN.search(text):
        return text
    return _LONG_RUN.sub(lambda m: "".join(c if i % 100 else " " for i, c in enumerate(m.group(0), 1)), text)


def make_nlp(*args, **kwargs):
    """A fresh extraction pipeline (:func:`kg.extract.pipeline.make_nlp`)."""
    from kg.extract.pipeline import make_nlp

    return make_nlp(*args, **kwargs)


def get_nlp():
    """This process's extraction pipeline, built at the first call (:func:`kg.extract.pipeline.get_nlp`)."""
    from kg.extract.pipeline import get_nlp

    return get_nlp()


def _first_pass(items: list[tuple[str, int]], batch_size: int = 64, nlp=None) -> list[tuple[Extraction, list]]:
    """spaCy over (text, title length) items: the per-text extraction and sentence spans."""
    from kg.extract.assemble import assemble, remap
    from kg.extract.components import sentences

    nlp = nlp or get_nlp()
    groups = nlp.get_pipe("kg_span_classifier").groups
    cleaned = [normalize_record(text, tlen, _TITLE_SEP) for text, tlen in items]

    def gen():
        for clean, tlen, _, _, keywords in cleaned:
            doc = nlp.make_doc(tokenizer_safe(clean))
            doc._.kg_title_len = tlen
            doc._.kg_keywords = keywords
            yield doc

    out = []
    for doc, (_, tlen, tmap, amap, _) in zip(nlp.pipe(gen(), batch_size=batch_size), cleaned):
        sents = [(s.start_char - tlen, s.end_char - tlen) for s in sentences(doc) if s.start_char >= tlen]
        out.append(remap(assemble(doc, "", offset=tlen, title_len=tlen, groups=groups), sents, tmap, amap))
    return out


#: The corpus-name pass runs in worker processes only over at least this many texts. It is
#: cheap a text, and forking workers from a process that holds a large corpus's decoded
#: extractions costs more than it saves on a few: after the fork this process's memory is
#: write-protected, and each page it then writes is copied first.
SECOND_PASS_POOL_MIN = 5000

_POOL_NLP = None  # a caller's own pipeline, which forked workers inherit (set just before the pool starts)
_POOL_STATE = None  # (texts, done, lexicon, finder) for the second pass in forked workers


def _second_pass_chunk(keys):  # in a forked worker: only the extractions that changed go back
    texts, done, lexicon, finder = _POOL_STATE
    out = []
    for t in keys:
        ex, sents = done[t]
        out.append(encode_added(propagate(ex, texts[t][1], lexicon, finder, sents), ex))
    return out


def _first_pass_chunk(items):  # in a forked worker; compact JSON travels faster than pickled objects
    import gc

    out = [encode(*r) for r in _first_pass(items, nlp=_POOL_NLP)]
    # The worker was forked with the collector paused (and what it inherited frozen): without
    # a collection the reference cycles of every Doc it made stay until it ends (several
    # times the memory). One per chunk costs less than the automatic ones.
    gc.collect()
    return out


def _dask_first_pass(items):  # on a Dask worker: the worker's own pipeline, built once per process
    return [encode(*r) for r in _first_pass(items)]


def _dask_second_pass(rows, names):  # on a Dask worker: rows of (abstract, extraction, sentences)
    lexicon, finder = names
    out = []
    for abstract, ex, sents in rows:
        new = propagate(ex, abstract, lexicon, finder, sents)
        out.append(None if new is ex else new)
    return out


def _dask_fingerprint():  # on a Dask worker
    from kg.extract.cache import fingerprint

    return PIPELINE_VERSION, fingerprint()


def _dask_map(client, fn, chunks, **shared):
    """The results of ``fn`` over ``chunks`` on a ``dask.distributed`` client, in
    order. ``shared`` values are sent to every worker once."""
    import warnings

    shared = {k: client.scatter(v, broadcast=True) for k, v in shared.items()}
    with warnings.catch_warnings():
        # Each chunk is used by one task, so it travels with it: Dask warns about a
        # "large graph", but scattering the chunks first is slower.
        warnings.filterwarnings("ignore", message="Sending large graph")
        futures = client.map(fn, chunks, pure=False, **shared)
    try:
        for fut in futures:
            yield fut.result()
    finally:
        client.cancel(futures)


def _check_dask_workers(client) -> None:
    """Every worker must run this very extraction code, or results would differ."""
    from kg.extract.dask_cluster import ClusterError
    from kg.extract.cache import fingerprint

    here = (PIPELINE_VERSION, fingerprint())
    there = client.run(_dask_fingerprint)
    if not there:
        raise ClusterError("the Dask cluster has no workers")
    bad = sorted(addr for addr, fp in there.items() if tuple(fp) != here)
    if bad:
        raise ClusterError(f"Dask workers {', '.join(bad)} run another version of the extraction code "
                           f"(install the same abstract-kg {PIPELINE_VERSION} there)")


def _map_chunks(kind: str, chunks: list, workers: int, client, meanwhile=None):
    """One pass ("first": spaCy, "second": corpus names) over ``chunks`` in ``workers``
    forked processes, or on Dask if ``client``; yields (chunk, result) in order.
    ``meanwhile()`` is called here once the workers have their work (before, on Dask)."""
    if meanwhile is not None and client is not None:
        meanwhile()
    if client is not None and kind == "first":
        results = _dask_map(client, _dask_first_pass, chunks)
    elif client is not None:
        texts, done, lexicon, finder = _POOL_STATE
        rows = [[(texts[t][1], *done[t]) for t in chunk] for chunk in chunks]
        results = _dask_map(client, _dask_second_pass, rows, names=(lexicon, finder))
    else:
        import gc

        # Objects frozen before the fork are never walked by the workers' collector,
        # so their pages stay shared instead of being copied into every worker.
        gc.freeze()
        try:
            with _pool(workers) as pool:
                results = pool.imap(_first_pass_chunk if kind == "first" else _second_pass_chunk, chunks)
                if meanwhile is not None:
                    meanwhile()
                yield from zip(chunks, results)
        finally:
            gc.unfreeze()
        return
    yield from zip(chunks, results)


def _pool(workers: int):
    """A pool of ``workers`` forked processes, forked with Ctrl-C held back (see
    :mod:`kg._fork`; the pool is stopped if one came). The workers keep it blocked: on
    Ctrl-C the build process stops them (``Pool.__exit__``), without a traceback from each.
    They die with the build process, without its output lock (:func:`kg._fork.child_started`):
    killed with ``kill -9``, it left them to fail on the broken pipe, each with a traceback."""
    import multiprocessing as mp

    from kg._fork import child_started, fork_held, prepare

    parent = prepare()
    return fork_held(lambda mask: mp.get_context("fork").Pool(workers, initializer=child_started, initargs=(parent,)),
                     stop=lambda pool: pool.terminate())


def _n_workers(workers: int, client) -> int:
    return max(workers, len(client.scheduler_info().get("workers", ())) if client is not None else 1, 1)


#: What the first pass costs, counted in texts through spaCy in one process: decoding one
#: cached result (a fortieth of a text) and, in a worker, importing spaCy and building the
#: pipeline (as long as some 1,200 texts). See :func:`_first_pass_pool`.
DECODE_COST = 1 / 40
PIPELINE_COST = 1200


def _first_pass_pool(workers: int, new: int, cached: int) -> int:
    """How many processes to fork for the first pass over ``new`` texts when this process
    decodes ``cached`` stored results meanwhile, ``workers`` being asked for: one fewer when
    one worker would be done within the decoding (the decoding keeps a core busy, and
    another worker would share it while building its own pipeline).
    Results are the same for any number.

    >>> _first_pass_pool(2, 1000, 99000), _first_pass_pool(2, 1000, 0), _first_pass_pool(2, 10000, 90000)
    (1, 2, 2)
    """
    if workers > 1 and PIPELINE_COST + new <= cached * DECODE_COST:
        return workers - 1
    return workers


def extract_records(records: Iterable[Record], batch_size: int = 64, nlp=None, corpus_names: bool = True,
                    workers: int = 1, cache=None, progress=None, dask=None) -> Iterator[Extraction]:
    """One :class:`Extraction` per record, in input order.

    Records with the same title and abstract are processed once. With
    ``corpus_names``, names that one record defines are also found in the
    others (see :mod:`kg.extract.propagate`). ``workers`` > 1 runs the spaCy
    pass in that many processes (same results as one); ``dask``, a
    ``distributed.Client``, runs both passes on that Dask cluster instead (same
    results too; every worker must have this version of abstract-kg installed).
    ``cache`` (an :class:`~kg.extract.cache.ExtractionCache`) skips texts seen
    before by this pipeline version. ``progress(done, total)`` is called as
    texts are done.
    """
    records = list(records)
    texts: dict[str, tuple[int, str]] = {}
    text_of: list[str] = []  # each record's text, in record order
    for rec in records:
        text, tlen = _text_of(rec)
        texts.setdefault(text, (tlen, rec.abstract))
        text_of.append(text)
    keys = None
    if cache is not None:
        from kg.extract.cache import text_key

        keys = {t: text_key(t, texts[t][0]) for t in texts}
    done = _spacy_pass(texts, keys, batch_size, nlp, workers, cache, progress, dask)
    with gc_paused():
        _corpus_pass(texts, done, corpus_names, workers, dask, cache, keys)
        out = []
        for rec, text in zip(records, text_of):
            ex = done[text][0]
            out.append(Extraction(rec.doc, ex.entities, ex.github, ex.mentions))  # every field; faster than dataclasses.replace
    return iter(out)


def _spacy_pass(texts: dict[str, tuple[int, str]], keys: dict[str, str] | None, batch_size: int, nlp, workers: int,
                cache, progress, dask) -> dict[str, tuple[Extraction, list]]:
    """The first pass of :func:`extract_records`: text -> (extraction, sentence spans), the
    cached texts decoded and the others through spaCy (then cached)."""
    global _POOL_NLP
    done: dict[str, tuple[Extraction, list]] = {}
    todo = list(texts)
    stored: dict[str, str] = {}  # text -> its first-pass result in the cache, not yet decoded
    if cache is not None:
        hits = cache.get_encoded(list(keys.values()))
        stored = {t: hits[k] for t, k in keys.items() if k in hits}
        todo = [t for t in todo if t not in stored]
    total = len(texts)

    def decode_stored() -> None:
        """The cached results as objects: while the workers run spaCy over the other texts
        (a rebuild decodes many cached results next to a few new texts)."""
        with gc_paused():  # decoding builds millions of objects: each collection walked them all again
            for t, value in stored.items():
                done[t] = decode(value)
        stored.clear()
        if progress:
            progress(len(done), total)
    if dask is not None:
        _check_dask_workers(dask)
    fresh: dict[str, tuple[Extraction, list]] = {}
    encoded: dict[str, str] = {}  # what workers sent, as the cache stores it
    items = [(t, texts[t][0]) for t in todo]
    if items and (dask is not None or (workers > 1 and len(items) > 200)):
        # forked workers: one fewer while this process decodes a long stretch of cached results
        n = _n_workers(workers, dask) if dask is not None else _first_pass_pool(workers, len(items), len(stored))
        size = max(50, min(250, len(items) // (n * 4) + 1))  # small: no worker idles long at the end
        chunks = [items[i:i + size] for i in range(0, len(items), size)]
        try:
            with gc_paused():  # the cached results decoded above are millions of objects for the collector
                if dask is None:
                    # A caller's pipeline is inherited by the forked workers; else each takes
                    # get_nlp(), this process's if it has one, or builds its own while
                    # this process decodes the cached results
                    _POOL_NLP = nlp
                for chunk, results in _map_chunks("first", chunks, n, dask, meanwhile=decode_stored):
                    for (t, _), r in zip(chunk, results):
                        if cache is not None:  # only a cache needs the text (a large string a text)
                            encoded[t] = r
                        fresh[t] = decode(r)
                    if progress:
                        progress(len(done) + len(fresh), total)
        finally:
            _POOL_NLP = None
    else:
        decode_stored()
        if items and nlp is None:
            with gc_paused():
                nlp = get_nlp()
        for i in range(0, len(items), 1000):
            chunk = items[i:i + 1000]
            fresh.update({t: r for (t, _), r in zip(chunk, _first_pass(chunk, batch_size, nlp))})
            if progress:
                progress(len(done) + len(fresh), total)
    if cache is not None and fresh:
        cache.put_many({keys[t]: encoded.get(t) or r for t, r in fresh.items()})
    done.update(fresh)
    return done


def _stored_corpus_pass(cache, keys, texts, done, lexicon, lexicon_id) -> tuple[list[str], list[str]]:
    """Puts into ``done`` the corpus-name pass results ``cache`` holds that still hold
    under ``lexicon``: those computed under it, and those computed under another
    lexicon for texts in which no form whose entry differs occurs (see
    :func:`~kg.extract.propagate.changed_forms`). Returns the texts left to do and
    the keys of the results to relabel as computed under ``lexicon``."""
    rows = cache.get_final([keys[t] for t in texts])
    by_lexicon: dict[str, list[str]] = {}
    for t in texts:
        row = rows.get(keys[t])
        if row is not None:
            by_lexicon.setdefault(row[0], []).append(t)
    valid, relabel = set(), []
    for old_id, ts in by_lexicon.items():
        if old_id == lexicon_id:
            valid.update(ts)
            continue
        old = cache.get_lexicon(old_id)
        if old is None:
            continue
        rx = substring_regex(changed_forms(lexicon, old))
        still = [t for t in ts if rx is None or not rx.search(texts[t][1])]
        valid.update(still)
        relabel += [keys[t] for t in still]
    for t in valid:
        value = rows[keys[t]][1]
        if value is not None:
            ex, sents = done[t]
            done[t] = (add_entities(ex, decode_added(value, ex)), sents)
    return [t for t in texts if t not in valid], relabel


def _corpus_pass(texts, done, corpus_names, workers, dask, cache=None, keys=None) -> None:
    """The corpus-name pass over the first-pass results ``done`` (updated in place). With
    ``cache`` (and the texts' cache ``keys``), results stored by an earlier build that
    still hold are reused, only the other texts are passed over, and what the pass
    added to them is stored (:func:`~kg.extract.cache.encode_added`)."""
    global _POOL_STATE
    if not corpus_names:
        return
    lexicon = build_lexicon(done[t][0] for t in texts)
    pattern = _pattern(lexicon)
    todo, relabel, lexicon_id = list(texts), [], None
    if cache is not None and pattern is not None:
        forms = lexicon_json(lexicon)
        lexicon_id = lexicon_digest(forms)
        todo, relabel = _stored_corpus_pass(cache, keys, texts, done, lexicon, lexicon_id)
    finals: dict[str, str | None] = {}  # text -> what the pass added, as the cache stores it
    if pattern is not None and (dask is not None or (workers > 1 and len(todo) >= SECOND_PASS_POOL_MIN)):
        n = _n_workers(workers, dask)
        size = max(100, len(todo) // (n * 4) + 1)
        chunks = [todo[i:i + size] for i in range(0, len(todo), size)]
        _POOL_STATE = (texts, done, lexicon, pattern)
        try:
            for chunk, results in _map_chunks("second", chunks, workers, dask):
                for t, new in zip(chunk, results):
                    ex, sents = done[t]
                    if isinstance(new, str):  # from a forked worker: what it added
                        done[t] = (add_entities(ex, decode_added(new, ex)), sents)
                    elif new is not None:  # from Dask: the whole extraction
                        done[t] = (new, sents)
                        new = encode_added(new, ex)
                    finals[t] = new
        finally:
            _POOL_STATE = None
    else:
        for t in todo:
            ex, sents = done[t]
            new = propagate(ex, texts[t][1], lexicon, pattern, sents)
            done[t] = (new, sents)
            finals[t] = encode_added(new, ex) if lexicon_id is not None and new is not ex else None
    if lexicon_id is not None:
        cache.put_final(lexicon_id, {keys[t]: v for t, v in finals.items()}, relabel)
        cache.put_lexicon(lexicon_id, forms)  # after: results just relabelled survive the oldest lexicon


def extract_text(text: str, doc_id: str = "text#0", title: str | None = None) -> Extraction:
    """Extract from one abstract given as a string."""
    rec = Record(doc=doc_id, abstract=text, source="<text>", index=0, title=title)
    return next(extract_records([rec]))
