"""The Oxigraph store: build it from N-Triples, open it read-only, run SPARQL.

Parameters go in through Oxigraph's ``substitutions`` (the SEP-0007 analogue
of rdflib's ``initBindings``), never by formatting query text.
"""
from __future__ import annotations

import io
import itertools
import json
import os
import threading
import time
from pathlib import Path

import pyoxigraph as ox

from kg.gzipped import EXPANSION, GunzipLines

from kg.rdf.results import serialize_solutions
from kg.rdf.sparqltext import REFUSED, refused, where_open

STORE_DIR = "store"


class QueryError(ValueError):
    """A SPARQL query that does not parse or cannot run."""


class StoreLoader:
    """Builds an Oxigraph store in ``store_dir`` from the gzip-compressed N-Triples file
    ``nt_path`` while that file is being written.

    The writer flushes whole members and calls :meth:`grow` with the file's size; a
    loader thread reads what is new (about ``chunk_bytes`` of text at a time), decompresses
    it and has Oxigraph parse and index it up to the last line end, both without
    holding the GIL. The
    writer never waits for the loader: the text is read back from the file (the
    page cache), so memory stays bounded by one chunk however far the loader lags.
    :meth:`close` waits for the end and re-raises the loader's error; :meth:`abort`
    stops it. The quads ``also`` (the ontology) are added last; an updated
    store (:class:`StoreUpdater`) keeps them from the store it starts from.
    """

    def __init__(self, store_dir: str | Path, nt_path: str | Path, chunk_bytes: int = 32 << 20,
                 also: tuple = ()):
        self._cond = threading.Condition()
        self._available = 0  # bytes of whole lines the writer has flushed
        self._done = False
        self._stop = False
        self._error: BaseException | None = None
        self.seconds = 0.0  # time the loader thread was busy

        def run():  # the store lives only in this thread: closed when loading ends
            try:
                store = ox.Store(str(store_dir))
                pos, lines = 0, GunzipLines()
                piece = max(1, chunk_bytes // EXPANSION)  # of the file: about chunk_bytes of text
                with open(nt_path, "rb") as f:
                    while True:
                        with self._cond:
                            while not (self._stop or self._done or self._available > pos):
                                self._cond.wait()
                            if self._stop:
                                return
                            available, done = self._available, self._done
                        while pos < available and not self._stop:
                            data = f.read(min(piece, available - pos))
                            pos += len(data)
                            t = time.perf_counter()
                            text = lines.feed(data)  # whole lines only; the rest goes with the next
                            if text:
                                store.bulk_load(text, format=ox.RdfFormat.N_TRIPLES)
                            self.seconds += time.perf_counter() - t
                        if done and pos >= available:
                            break
                if not lines.complete:
                    raise OSError(f"{nt_path}: ends inside a line or a gzip member")
                if not self._stop:
                    t = time.perf_counter()
                    store.extend(also)
                    store.flush()
                    store.optimize()
                    self.seconds += time.perf_counter() - t
            except BaseException as exc:  # re-raised by grow() / close()
                self._error = exc

        self._thread = threading.Thread(target=run, name="kg-store-loader", daemon=True)
        self._thread.start()

    def grow(self, size: int, done: bool = False) -> None:
        """The file now holds ``size`` bytes of whole lines (``done``: and no more will come)."""
        if self._error is not None:
            raise self._error
        with self._cond:
            self._available = size
            self._done = self._done or done
            self._cond.notify()

    def close(self, size: int | None = None) -> None:
        """Wait until the store holds the whole file (``size`` bytes if given) and is compacted."""
        with self._cond:
            if size is not None:
                self._available = size
            self._done = True
            self._cond.notify()
        while self._thread.is_alive():
            self._thread.join(0.2)
        if self._error is not None:
            raise self._error

    def abort(self) -> None:
        """Stop loading (the store folder is left half-built for the caller to remove)."""
        with self._cond:
            self._stop = True
            self._cond.notify()
        while self._thread.is_alive():
            self._thread.join(0.2)


#: A store's own record of the updates it took since it was last compacted (a file in the
#: store folder, beside RocksDB's; a store without one, as a full build makes it, is compacted).
UPDATES_FILE = "abstract-kg-updates.json"

#: Table runs (bulk loads, and the flush of the deletions) an updated store may carry before
#: an update compacts it: each run is a sorted file of every index that overlaps all the others,
#: read by every lookup until compaction merges them, so queries slow down with each run,
#: while compacting costs several times an update (``docs/benchmarks.md``). 8: every 4th
#: +1% rebuild compacts.
COMPACT_AFTER_RUNS = 8

#: When an updated store is compacted (``kg build --store-compaction``).
STORE_COMPACTION = ("auto", "always", "never")


def compact_after(store_compaction: str) -> int | None:
    """The ``compact_after`` of :class:`StoreUpdater` for a ``store_compaction`` value.

    >>> compact_after("auto") == COMPACT_AFTER_RUNS, compact_after("always"), compact_after("never")
    (True, 0, None)
    """
    try:
        return {"auto": COMPACT_AFTER_RUNS, "always": 0, "never": None}[store_compaction]
    except KeyError:
        raise ValueError(f"store compaction {store_compaction!r}: one of {', '.join(STORE_COMPACTION)}") from None


def store_updates(store_dir: str | Path) -> dict:
    """What :data:`UPDATES_FILE` of a store says: ``{"updates": n, "runs": m}`` since its last
    compaction (zeros for a store without the file, as a full build makes it)."""
    try:
        data = json.loads((Path(store_dir) / UPDATES_FILE).read_text(encoding="utf-8"))
        return {"updates": int(data["updates"]), "runs": int(data["runs"])}
    except (OSError, ValueError, KeyError, TypeError):
        return {"updates": 0, "runs": 0}


def nt_batches(path, items, chunk_bytes: int, stopped):
    """The N-Triples of ``items`` of the gzip file ``path`` (each a byte range
    ``(start, end)`` of whole members, or ``bytes`` of whole N-Triples lines) in
    batches of about ``chunk_bytes``, whole lines each: each ``bulk_load`` call writes
    and ingests table files of its own, so thousands of small calls (one a changed
    entity) cost a minute where one costs a second. Stops early once ``stopped()``."""
    batch, size = [], 0
    for data in nt_pieces(path, items, chunk_bytes, stopped):
        batch.append(data)
        size += len(data)
        if size >= chunk_bytes:
            yield b"".join(batch)
            batch, size = [], 0
    if batch:
        yield b"".join(batch)


def nt_pieces(path, items, chunk_bytes: int, stopped):
    """The N-Triples of ``items`` (see :func:`nt_batches`), about ``chunk_bytes`` of
    text at a time, cut at line ends."""
    with open(path, "rb") as f:
        for item in items:
            if isinstance(item, bytes):  # whole lines already
                yield item
                continue
            start, end = item
            lines = GunzipLines()
            while start < end and not stopped():
                data = os.pread(f.fileno(), min(max(1, chunk_bytes // EXPANSION), end - start), start)
                if not data:
                    raise OSError(f"{path}: shorter than the build state says")
                start += len(data)
                text = lines.feed(data)
                if text:
                    yield text
            if not stopped() and not lines.complete:
                raise OSError(f"{path}: a range of the build state does not hold whole blocks")


class StoreUpdater:
    """Builds the store of a new build in ``new_dir`` from the last build's store in
    ``old_dir``: a checkpoint of it (RocksDB hard-links the immutable table files,
    so nothing is copied), less the triples of ``removed``, plus those of ``added``:
    each a list of byte ranges ``(start, end)`` of whole members of a graph.nt.gz
    (the old one for ``removed``, the new one for ``added``) and ``bytes`` of whole
    N-Triples lines (see :meth:`kg.pipeline.blocks.Blocks.changed_triples`). Runs in a thread like
    :class:`StoreLoader` (same ``close`` / ``abort`` / ``seconds``); the two files
    must be complete.

    Each update leaves table runs that every lookup reads until they are merged, so
    queries slow down update after update: once the store carries ``compact_after``
    runs (:data:`COMPACT_AFTER_RUNS`; ``0``: every update; ``None``: never), the update
    compacts it (``compacted`` says so), as a full build does. The count is kept in the
    store's :data:`UPDATES_FILE`.
    """

    def __init__(self, old_dir: str | Path, new_dir: str | Path, old_nt: str | Path, removed: list,
                 new_nt: str | Path, added: list, chunk_bytes: int = 32 << 20,
                 compact_after: int | None = COMPACT_AFTER_RUNS):
        self._error: BaseException | None = None
        self._stop = False
        self.seconds = 0.0
        self.removed_triples = 0
        self.phases: dict[str, float] = {}
        self.compacted = False
        self.updates = store_updates(old_dir)  # since the last compaction, this update's included once done
        self.added_bytes = sum(len(i) if isinstance(i, bytes) else i[1] - i[0] for i in added)

        self._thread = threading.Thread(target=self._run, name="kg-store-updater", daemon=True,
                                        args=(old_dir, new_dir, old_nt, removed, new_nt, added, chunk_bytes,
                                              compact_after))
        self._thread.start()

    def _run(self, old_dir, new_dir, old_nt, removed, new_nt, added, chunk_bytes, compact_after) -> None:
        t = time.perf_counter()
        try:
            ox.Store.read_only(str(old_dir)).backup(str(new_dir))
            store = ox.Store(str(new_dir))
            self.phases["checkpoint"] = time.perf_counter() - t
            runs = 0
            for data in nt_batches(old_nt, removed, chunk_bytes, self._stopped):
                runs = 1  # the deletions, flushed as one run
                self.removed_triples += data.count(b"\n")
                try:  # in Oxigraph, without the GIL: N-Triples lines are SPARQL triples
                    store.update("DELETE DATA {\n" + data.decode("utf-8") + "}")
                except SyntaxError:  # pragma: no cover - one quad at a time, holding the GIL
                    for quad in ox.parse(data, format=ox.RdfFormat.N_TRIPLES):
                        store.remove(quad)
            self.phases["remove"] = time.perf_counter() - t - sum(self.phases.values())
            for data in nt_batches(new_nt, added, chunk_bytes, self._stopped):
                store.bulk_load(data, format=ox.RdfFormat.N_TRIPLES)
                runs += 1
            self.phases["add"] = time.perf_counter() - t - sum(self.phases.values())
            if not self._stop:
                store.flush()
            self.phases["flush"] = time.perf_counter() - t - sum(self.phases.values())
            updates = {"updates": self.updates["updates"] + 1, "runs": self.updates["runs"] + runs}
            if not self._stop and compact_after is not None and updates["runs"] >= compact_after:
                store.optimize()
                self.compacted = True
                updates = {"updates": 0, "runs": 0}
                self.phases["compact"] = time.perf_counter() - t - sum(self.phases.values())
            self.updates = updates
            if not self._stop:
                (Path(new_dir) / UPDATES_FILE).write_text(json.dumps(updates, sort_keys=True) + "\n",
                                                          encoding="utf-8")
        except BaseException as exc:  # re-raised by close()
            self._error = exc
        finally:
            self.seconds = time.perf_counter() - t

    def _stopped(self) -> bool:
        return self._stop

    def close(self) -> None:
        while self._thread.is_alive():
            self._thread.join(0.2)
        if self._error is not None:
            raise self._error

    def abort(self) -> None:
        self._stop = True
        while self._thread.is_alive():
            self._thread.join(0.2)


def store_path(where: str | Path) -> Path:
    """The store folder of an output folder (or the store folder itself)."""
    p = Path(where)
    return p / STORE_DIR if (p / STORE_DIR).is_dir() else p


def open_store(where: str | Path) -> ox.Store:
    """Open a built store read-only (many readers may share it)."""
    p = store_path(where)
    if not p.is_dir():
        raise FileNotFoundError(f"{where}: no Oxigraph store here (run `kg build` first)")
    try:
        return ox.Store.read_only(str(p))
    except OSError as exc:
        raise FileNotFoundError(f"{where}: not a readable Oxigraph store ({exc})") from None


def to_term(value) -> ox.NamedNode | ox.Literal | ox.BlankNode:
    """A Python value or rdflib term as an Oxigraph term.

    >>> to_term("data attribution")
    <Literal value=data attribution datatype=<NamedNode value=http://www.w3.org/2001/XMLSchema#string>>
    >>> to_term(3).datatype.value
    'http://www.w3.org/2001/XMLSchema#integer'
    """
    if isinstance(value, (ox.NamedNode, ox.Literal, ox.BlankNode)):
        return value
    try:
        import rdflib
    except ImportError:  # pragma: no cover - rdflib is a dependency
        rdflib = None
    if rdflib is not None:
        if isinstance(value, rdflib.URIRef):
            return ox.NamedNode(str(value))
        if isinstance(value, rdflib.BNode):
            return ox.BlankNode(str(value))
        if isinstance(value, rdflib.Literal):
            if value.language:
                return ox.Literal(str(value), language=value.language)
            if value.datatype:
                return ox.Literal(str(value), datatype=ox.NamedNode(str(value.datatype)))
            return ox.Literal(str(value))
    if isinstance(value, bool):
        return ox.Literal("true" if value else "false", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#boolean"))
    if isinstance(value, int):
        return ox.Literal(str(value), datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer"))
    if isinstance(value, float):
        return ox.Literal(repr(value), datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#double"))
    return ox.Literal(str(value))


def run_query(store: ox.Store, sparql: str, bindings: dict | None = None, prefixes: dict | None = None):
    """Run a SPARQL query; ``bindings`` maps variable names to values or terms,
    ``prefixes`` are declared for the query (by Oxigraph, not in the text).

    A bound variable is substituted by Oxigraph (SPARQL 1.2 SEP-0007) when the query
    projects it; when it does not (``SELECT ?e WHERE { ... FILTER(?l = ?name) }``),
    the values join the WHERE pattern as a ``VALUES`` block at its head, each written
    by Oxigraph as an RDF term (escaped). Unlike a substitution, such a value is not
    seen by a FILTER inside a nested group or UNION branch: select the variable to
    have it substituted everywhere. Federated
    queries and datasets (``FROM``) are refused (:mod:`kg.rdf.sparqltext`)."""
    no = refused(sparql)
    if no is not None:
        raise QueryError(REFUSED[no])
    subs = {ox.Variable(k.lstrip("?$")): to_term(v) for k, v in (bindings or {}).items()}
    try:
        try:
            return store.query(sparql, prefixes=prefixes, substitutions=subs or None)
        except (OSError, RuntimeError) as exc:
            if not subs or "projection" not in str(exc):
                raise
            return store.query(with_values(sparql, subs), prefixes=prefixes)
    except SyntaxError as exc:
        raise QueryError(f"SPARQL syntax error: {exc}") from None
    except (OSError, RuntimeError) as exc:
        raise QueryError(f"query failed: {exc}") from None


def with_values(sparql: str, subs: dict) -> str:
    """The query with a ``VALUES`` block of ``subs`` (variable -> IRI or literal) at the
    head of its WHERE pattern.

    >>> print(with_values('SELECT ?e WHERE { ?e ?p ?l FILTER(?l = ?name) }', {ox.Variable("name"): ox.Literal('a"b')}))
    SELECT ?e WHERE { VALUES (?name) { ("a\\"b") } ?e ?p ?l FILTER(?l = ?name) }
    """
    at = where_open(sparql)
    if at is None:
        raise QueryError("a bound variable needs a WHERE pattern to join")
    if any(isinstance(t, ox.BlankNode) for t in subs.values()):
        raise QueryError("a blank node cannot be bound to a variable the query does not select")
    names = " ".join(str(v) for v in subs)
    terms = " ".join(str(t) for t in subs.values())
    return f"{sparql[:at + 1]} VALUES ({names}) {{ ({terms}) }}{sparql[at + 1:]}"


def python_value(term):
    """A plain Python value of an Oxigraph term (IRIs as strings, numbers as numbers)."""
    if term is None:
        return None
    if isinstance(term, ox.Literal):
        dt = term.datatype.value if term.datatype else ""
        if dt.endswith(("#integer", "#int", "#long", "#nonNegativeInteger", "#positiveInteger", "#short")):
            try:
                return int(term.value)
            except ValueError:
                return term.value
        if dt.endswith(("#decimal", "#double", "#float")):
            try:
                return float(term.value)
            except ValueError:
                return term.value
        if dt.endswith("#boolean"):
            return term.value == "true"
        return term.value
    return term.value


def rows(results) -> list[dict]:
    """SELECT results as a list of {variable: python value} dicts."""
    names = [v.value for v in results.variables]
    return [{n: python_value(sol[n]) for n in names} for sol in results]


FORMATS = {"json": ox.QueryResultsFormat.JSON, "csv": ox.QueryResultsFormat.CSV,
           "tsv": ox.QueryResultsFormat.TSV, "xml": ox.QueryResultsFormat.XML}
GRAPH_FORMATS = {"turtle": ox.RdfFormat.TURTLE, "nt": ox.RdfFormat.N_TRIPLES, "ntriples": ox.RdfFormat.N_TRIPLES}


def serialize_results(results, fmt: str, prefixes: dict[str, str] | None = None, limit: int | None = None) -> str:
    """Results as text: ``table`` (aligned columns), ``json`` (W3C SPARQL JSON),
    ``csv`` / ``tsv`` / ``xml`` (W3C formats); CONSTRUCT / DESCRIBE results as
    Turtle (``table``, ``turtle``) or N-Triples (``nt``). ``limit``: at most that many
    rows (or triples)."""
    if isinstance(results, ox.QueryTriples):
        gfmt = GRAPH_FORMATS.get(fmt, ox.RdfFormat.TURTLE)
        if limit is None:
            return results.serialize(format=gfmt).decode("utf-8")
        return ox.serialize(list(itertools.islice(results, limit)), format=gfmt).decode("utf-8")
    if fmt == "table":
        return format_table(results, prefixes or {}, limit)
    if fmt not in FORMATS:
        raise QueryError(f"unknown output format {fmt!r} (use table, json, csv, tsv or xml)")
    if limit is not None and isinstance(results, ox.QuerySolutions):
        names = [v.value for v in results.variables]
        rows = [[sol[n] for n in names] for sol in itertools.islice(results, limit)]
        return serialize_solutions(names, rows, fmt)
    buf = io.BytesIO()
    results.serialize(buf, format=FORMATS[fmt])
    return buf.getvalue().decode("utf-8")


def _short(term, prefixes: dict[str, str]) -> str:
    if term is None:
        return ""
    if isinstance(term, ox.NamedNode):
        for p, ns in prefixes.items():
            if term.value.startswith(ns) and len(term.value) > len(ns):
                return f"{p}:{term.value[len(ns):]}"
        return f"<{term.value}>"
    if isinstance(term, ox.BlankNode):
        return f"_:{term.value}"
    return term.value


def format_table(results, prefixes: dict[str, str], limit: int | None = None) -> str:
    """An aligned plain-text table (``ASK`` gives ``true`` / ``false``) of at most ``limit`` rows."""
    if isinstance(results, ox.QueryBoolean):
        return "true\n" if bool(results) else "false\n"
    names = [v.value for v in results.variables]
    data = [[" ".join(_short(sol[n], prefixes).split()) for n in names] for sol in itertools.islice(results, limit)]
    widths = [min(60, max([len(n)] + [len(r[i]) for r in data])) for i, n in enumerate(names)]

    def fit(cell: str, w: int) -> str:
        return (cell if len(cell) <= w else cell[: w - 1] + "…").ljust(w)

    lines = ["  ".join(fit(n, w) for n, w in zip(names, widths)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(fit(c, w) for c, w in zip(r, widths)).rstrip() for r in data]
    lines.append(f"({len(data)} row{'s' if len(data) != 1 else ''})")
    return "\n".join(lines) + "\n"
