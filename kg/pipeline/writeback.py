"""Write and copy big files without growing the page cache.

A large build writes gigabytes of files (``graph.nt.gz``, the Turtle and JSON-LD
when asked, ``graph.json``, the JSON Lines files). Written the plain way, each page stays in
the page cache, dirty, until the kernel writes it back, and the page cache grows
by all of it. On a virtual machine whose host takes freed memory back, growing
it was the build's largest kernel cost.

:class:`Writeback` keeps a file's dirty pages to two windows: as the file grows
it asks the kernel to start writing the newest window back
(``sync_file_range``), waits for the window before it and drops those pages from
the cache (``posix_fadvise(DONTNEED)``), so the same pages are used over and
over: several times less system time (figures in ``docs/benchmarks.md``). The bytes
written are the same; only where they wait changes. A reader of a dropped range
(the store loader, the next build copying blocks) reads it from disk: a
rebuild's copies of the last build's blocks go through :class:`Source`, which
reads a window at a time and drops each window once read.

``sync_file_range`` is Linux's; elsewhere (or if the call fails) nothing is done.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from kg.gzipped import member

#: Bytes a window: the dirty pages of one file stay under two of them.
WINDOW = 64 << 20

_WAIT_BEFORE, _WRITE, _WAIT_AFTER = 1, 2, 4  # SYNC_FILE_RANGE_* (linux/fs.h)


def _load_sync_file_range():
    """libc's ``sync_file_range``, or None (not Linux, or not found)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.sync_file_range
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_SYNC_FILE_RANGE = _load_sync_file_range()


class Writeback:
    """Bounds the dirty pages of one file written front to back through ``fd``:
    call :meth:`advance` with the file's size after each write.

    >>> import tempfile
    >>> with tempfile.TemporaryFile() as f:
    ...     wb = Writeback(f.fileno(), window=4096)
    ...     for _ in range(4):
    ...         _ = os.write(f.fileno(), b"x" * 4096)
    ...         wb.advance(f.tell())
    ...     f.seek(0); len(f.read())
    0
    16384
    """

    def __init__(self, fd: int, window: int = WINDOW):
        self.fd, self.window = fd, window
        self.started = 0  # writeback asked for the bytes before this
        self.dropped = 0  # the bytes before this are written and out of the cache
        self.enabled = _SYNC_FILE_RANGE is not None

    def advance(self, size: int) -> None:
        """The file now holds ``size`` bytes: once a window is new, start its writeback;
        wait for the windows started before it and drop their pages."""
        if not self.enabled or size - self.started < self.window:
            return
        before = self.started
        if not self._sync(before, size - before, _WRITE):
            return
        self.started = size
        if before > self.dropped:
            if self._sync(self.dropped, before - self.dropped, _WAIT_BEFORE | _WRITE | _WAIT_AFTER):
                _advise(self.fd, self.dropped, before - self.dropped, "POSIX_FADV_DONTNEED")
                self.dropped = before

    def _sync(self, start: int, length: int, flags: int) -> bool:
        if _SYNC_FILE_RANGE(self.fd, start, length, flags) != 0:
            self.enabled = False  # not on this file system: write as usual
            return False
        return True


class Source:
    """A file whose byte ranges are copied into others (an old output file), read a
    ``window`` at a time into one buffer, front to back as the copies ask, each window
    dropped from the page cache once read (it is not read again): the cache does not
    grow, and the kernel's read-ahead keeps the disk busy.

    A rebuild copies most of the last build's RDF files, which :class:`Writeback`
    left out of the page cache. Read this way the copies take less time than by
    ``copy_file_range`` in blocks (as adjacent unchanged units come) or with
    ``O_DIRECT`` (figures in ``docs/benchmarks.md``).

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile() as a, tempfile.TemporaryFile() as b:
    ...     _ = a.write(b"0123456789" * 1000); a.flush()
    ...     src = Source(a.name, window=8192)
    ...     src.copy(b.fileno(), 8188, 8198); src.copy(b.fileno(), 3, 5); src.close()
    ...     _ = b.seek(0); b.read()
    b'890123456734'
    """

    def __init__(self, path, window: int = 16 << 20):
        self.path = path
        self.window = window
        self.fd = os.open(path, os.O_RDONLY)
        _advise(self.fd, 0, 0, "POSIX_FADV_SEQUENTIAL")
        self._buf: bytearray | None = None  # made at the first copy (a build opens old files it may not copy from)
        self._lo = self._hi = 0  # the file's bytes [lo, hi) are in the buffer

    def copy(self, out_fd: int, start: int, end: int, written=None) -> None:
        """Append bytes ``start``-``end`` of this file to ``out_fd``; ``written(n)`` hears each part."""
        while start < end:
            if not self._lo <= start < self._hi:
                self._fill(start)
            n = min(end, self._hi) - start
            view = memoryview(self._buf)[start - self._lo:start - self._lo + n]
            while view:
                view = view[os.write(out_fd, view):]
            start += n
            if written is not None:
                written(n)

    def _fill(self, start: int) -> None:
        if self._buf is None:
            self._buf = bytearray(self.window)
        n = os.preadv(self.fd, [self._buf], start)
        if n <= 0:
            raise OSError(f"{self.path} ends before byte {start}, which was to be copied from it")
        _advise(self.fd, start, n, "POSIX_FADV_DONTNEED")
        self._lo, self._hi = start, start + n

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        self._buf = None


def _advise(fd: int, start: int, length: int, advice: str) -> None:
    """``posix_fadvise``, where there is one (only a hint: not on macOS or Windows)."""
    try:
        os.posix_fadvise(fd, start, length, getattr(os, advice))
    except (AttributeError, OSError):
        pass


class Sink:
    """A binary output file written as text (UTF-8) or by copying byte ranges of
    other files; ``pos`` is the number of bytes written so far. Adjacent copies from
    one file (a :class:`kg.pipeline.writeback.Source`) become one copy. The file's dirty pages
    are kept to two windows (:class:`kg.pipeline.writeback.Writeback`).
    ``on_flush(pos)`` is told each time the bytes up to ``pos`` are in the file
    (whole blocks: the store loader reads them). With ``compress``, each text written is
    a gzip member of its own (:func:`kg.gzipped.member`): a block can be copied alone."""

    def __init__(self, path: str | Path, every: int = 8 << 20, on_flush=None, window: int = WINDOW,
                 compress: bool = False):
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        self.every, self.on_flush, self.compress = every, on_flush, compress
        self.parts: list[bytes] = []
        self.pending = 0
        self.pos = 0
        self.copying: list | None = None  # [Source, start, end] not yet copied
        self.written = 0  # bytes in the file (pos counts those still pending too)
        self.writeback = Writeback(self.fd, window)  # its dirty pages kept to two windows

    def write(self, text: str) -> None:
        if not text:
            return
        if self.copying is not None:
            self._copy_now()
        data = member(text.encode("utf-8")) if self.compress else text.encode("utf-8")
        self.parts.append(data)
        self.pending += len(data)
        self.pos += len(data)
        if self.pending >= self.every:
            self.flush()

    def copy(self, src: Source, start: int, end: int) -> None:
        if end <= start:
            return
        c = self.copying
        if c is not None and c[0] is src and c[2] == start:
            c[2] = end
        else:
            if c is not None:
                self._copy_now()
            self._write_parts()
            self.copying = [src, start, end]
        self.pos += end - start

    def _copy_now(self) -> None:
        src, start, end = self.copying
        self.copying = None
        self._write_parts()
        src.copy(self.fd, start, end, self._written)
        if self.on_flush is not None:
            self.on_flush(self.pos)

    def _written(self, n: int) -> None:
        self.written += n
        self.writeback.advance(self.written)

    def _write_parts(self) -> None:
        if self.parts:
            data = b"".join(self.parts)
            self.parts, self.pending = [], 0
            view = memoryview(data)
            while view:
                view = view[os.write(self.fd, view):]
            self._written(len(data))

    def flush(self) -> None:
        if self.copying is not None:
            self._copy_now()
        self._write_parts()
        if self.on_flush is not None:
            self.on_flush(self.pos)

    def close(self) -> None:
        if self.fd >= 0:
            try:
                self.flush()
            finally:
                os.close(self.fd)
                self.fd = -1

    def abort(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
