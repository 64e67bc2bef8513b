"""The query workers of ``kg serve``: each query runs in a worker process with its
own read-only Oxigraph store, opened again when a new build has replaced the store
folder; a query still running at the timeout is stopped by ending its worker (a new
one takes its place)."""
from __future__ import annotations

import multiprocessing as mp
import os
import queue
import threading
from dataclasses import dataclass
from pathlib import Path

from kg.web.protocol import ACCEPT, GRAPH_FORMAT, GRAPH_MEDIA, pick_format


def _folder_id(path: str) -> tuple[int, int] | None:
    """The identity (device, inode) of a folder, None while it is missing."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _worker(store_dir: str, conn) -> None:  # pragma: no cover - runs in a child process
    import pyoxigraph as ox

    from kg.rdf.namespace import QUERY_PREFIXES
    from kg.rdf.results import MEDIA, serialize_boolean, serialize_solutions

    opened = _folder_id(store_dir)
    store = ox.Store.read_only(store_dir)
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg is None:
            return
        query, formats, max_rows = msg
        now = _folder_id(store_dir)
        if now is not None and now != opened:
            # a new `kg build` replaced the output folder (the old store is removed after the
            # swap): answer from the new one, as the views and files served next to it are
            try:
                store, opened = ox.Store.read_only(store_dir), now
            except OSError:  # not readable yet: the old one, still open, answers this query
                pass
        try:
            res = store.query(query, prefixes=QUERY_PREFIXES)
        except SyntaxError as exc:
            conn.send((400, "text/plain; charset=utf-8", f"Malformed query: {exc}\n"))
            continue
        except Exception as exc:  # evaluation errors (e.g. an unsupported SERVICE)
            conn.send((400, "text/plain; charset=utf-8", f"Query failed: {exc}\n"))
            continue
        kind = "boolean" if isinstance(res, ox.QueryBoolean) else "graph" if isinstance(res, ox.QueryTriples) \
            else "solutions"
        fmt = pick_format(formats, kind)
        if fmt is None:
            conn.send((406, "text/plain; charset=utf-8", "No acceptable format: this query's results come as "
                       + ", ".join(m for m, f in ACCEPT if pick_format([f], kind) == f) + ".\n"))
            continue
        try:
            if kind == "boolean":
                conn.send((200, MEDIA[fmt], serialize_boolean(bool(res), fmt)))
            elif kind == "graph":
                triples = []
                for t in res:
                    triples.append(t)
                    if len(triples) > max_rows:
                        break
                if len(triples) > max_rows:
                    conn.send((413, "text/plain; charset=utf-8",
                               f"Result too large: more than {max_rows} triples; narrow the query.\n"))
                    continue
                body = ox.serialize(triples, format=getattr(ox.RdfFormat, GRAPH_FORMAT[fmt]))
                conn.send((200, GRAPH_MEDIA[fmt], body))
            else:
                variables = [v.value for v in res.variables]
                rows = []
                for sol in res:
                    rows.append([sol[v] for v in variables])
                    if len(rows) > max_rows:
                        break
                if len(rows) > max_rows:
                    conn.send((413, "text/plain; charset=utf-8",
                               f"Result too large: more than {max_rows} rows; add a LIMIT.\n"))
                    continue
                conn.send((200, MEDIA[fmt], serialize_solutions(variables, rows, fmt)))
        except Exception as exc:
            conn.send((500, "text/plain; charset=utf-8", f"Query failed while reading results: {exc}\n"))


@dataclass
class _Worker:
    process: mp.process.BaseProcess
    conn: object


class WorkerPool:
    """Query workers, each a process with a read-only store; a stuck one is replaced."""

    def __init__(self, store_dir: str | Path, size: int = 2):
        self.store_dir = str(store_dir)
        self.ctx = mp.get_context("spawn")
        self.idle: queue.Queue[_Worker] = queue.Queue()
        self._all: list[_Worker] = []
        self._lock = threading.Lock()
        for _ in range(max(1, size)):
            self.idle.put(self._spawn())

    def _spawn(self) -> _Worker:
        parent, child = self.ctx.Pipe()
        p = self.ctx.Process(target=_worker, args=(self.store_dir, child), daemon=True)
        p.start()
        child.close()
        w = _Worker(p, parent)
        with self._lock:
            self._all.append(w)
        return w

    def _replace(self, w: _Worker) -> None:
        w.process.kill()
        w.process.join(5)
        w.conn.close()
        with self._lock:
            if w in self._all:
                self._all.remove(w)
        self.idle.put(self._spawn())

    def run(self, query: str, formats: list[str], max_rows: int, timeout: float) -> tuple[int, str, str]:
        try:
            w = self.idle.get(timeout=timeout)
        except queue.Empty:
            return 503, "text/plain; charset=utf-8", "All query workers are busy; try again.\n"
        try:
            w.conn.send((query, formats, max_rows))
            if w.conn.poll(timeout):
                result = w.conn.recv()
                self.idle.put(w)
                return result
        except (EOFError, OSError, BrokenPipeError):
            threading.Thread(target=self._replace, args=(w,), daemon=True).start()
            return 500, "text/plain; charset=utf-8", "The query worker failed; try again.\n"
        threading.Thread(target=self._replace, args=(w,), daemon=True).start()
        return 503, "text/plain; charset=utf-8", f"Query stopped at the {timeout:g} s timeout.\n"

    def close(self) -> None:
        with self._lock:
            workers = list(self._all)
        for w in workers:
            try:
                w.conn.send(None)
            except (OSError, BrokenPipeError):
                pass
            w.process.join(1)
            if w.process.is_alive():
                w.process.kill()
