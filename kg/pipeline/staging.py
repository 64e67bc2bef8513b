"""The folder a build writes into, and the swap that puts it in place of the outputs.

Everything is written into a temporary sibling folder first and swapped in
at the end, so a failed build never leaves a half-written output folder and
the previous outputs stay intact until the new ones are complete.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from pathlib import Path

from kg.pipeline.forked import Forked
from kg.pipeline.jsonl import EXTRACTIONS, RECORDS, write_jsonl
from kg.files import output_lock, recover, umask
from kg.model import Extraction


class Staging:
    """The temporary sibling folder a build writes its outputs into, swapped in whole
    by :func:`write_outputs` (made on creation, after :func:`recover`). Made before the
    graph, it lets the files that need only the records and the extractions
    (``extractions.jsonl.gz``, ``records.jsonl.gz``) be written by a forked child while this
    process resolves the graph on the other core (:meth:`start`). Used as a context
    manager, it is removed if the build fails before :func:`write_outputs` swapped it in.

    >>> import tempfile; from pathlib import Path
    >>> out = Path(tempfile.mkdtemp()) / "out"
    >>> with Staging(out) as st:
    ...     st.start([], None)
    >>> st.wait()["early:jsonl"] >= 0, sorted(p.name for p in st.tmp.iterdir())
    (True, ['extractions.jsonl.gz'])
    >>> st.abort(); st.tmp.exists()
    False
    """

    def __init__(self, outdir: str | Path):
        self.outdir = Path(outdir).resolve()
        self.outdir.parent.mkdir(parents=True, exist_ok=True)
        # held until the outputs are swapped in or the build fails (kg.files): another build's
        # recovery would take this build's folder for a killed build's leftovers
        self._lock = contextlib.ExitStack()
        self._lock.enter_context(output_lock(self.outdir))
        try:
            recover(self.outdir)
            self.tmp = Path(tempfile.mkdtemp(prefix=f".{self.outdir.name}.tmp-", dir=self.outdir.parent))
        except BaseException:
            self.release()
            raise
        os.chmod(self.tmp, 0o777 & ~umask())
        self.started: tuple[str, ...] = ()
        self._child: Forked | None = None

    def start(self, extractions: list[Extraction], records) -> None:
        """Write the JSON Lines files (:mod:`kg.pipeline.jsonl`) in a forked child, now."""
        tmp = self.tmp

        def child(send) -> float:
            t = time.perf_counter()
            for name in (EXTRACTIONS, RECORDS):
                write_jsonl(tmp, name, extractions, records)
            return time.perf_counter() - t

        self.started = (EXTRACTIONS, RECORDS)
        self._child = Forked(child)

    def wait(self) -> dict:
        """Wait for the files :meth:`start` began (raising the child's error, if any);
        returns the seconds they took, as timings."""
        if self._child is None:
            return {}
        child, self._child = self._child, None
        return {"early:jsonl": child.next()}

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
