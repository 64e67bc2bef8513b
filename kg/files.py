"""Files and folders written safely, shared by every stage: a file replaced in one
rename (:func:`atomic_write`), a folder swapped in whole (:func:`swap`, and
:func:`recover` after a kill), and the lock of an output folder (:func:`output_lock`).

One build at a time into an output folder: a build stages its outputs in a
sibling folder and swaps it in; a second build into the same folder would first
remove what it takes for a killed build's leftovers (the first build's staging
folder) and then race it to the swap. So a build holds an advisory lock,
``.<folder>.lock`` next to the folder (``flock``: released by the kernel when the
process ends, however it ends), and a second build fails at once with
:class:`OutputsBusy` naming the folder and the process that holds it. Where there
is no ``fcntl`` (Windows) nothing is locked. Nested holds in one process are
counted, not refused. Forked children inherit the descriptor; a build's children
close it (:func:`drop_inherited`, where they die with the build: :mod:`kg._fork`),
so that the lock ends with the build process itself.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None


class OutputsBusy(RuntimeError):
    """Another build is writing the output folder."""


_held: dict[str, int] = {}  # lock path -> depth of this process's holds
_fds: dict[str, int] = {}  # lock path -> the descriptor holding it
_guard = threading.Lock()


def lock_path(outdir: str | Path) -> Path:
    """The lock file of an output folder.

    >>> lock_path("/data/outputs").name
    '.outputs.lock'
    """
    outdir = Path(outdir).resolve()
    return outdir.parent / f".{outdir.name}.lock"


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
    except OSError:
        text = ""
    return f"pid {text}" if text.isdigit() else "another process"


@contextlib.contextmanager
def output_lock(outdir: str | Path):
    """Hold the lock of ``outdir`` (its parent folder is made if need be) for the block;
    raises :class:`OutputsBusy` at once if another process holds it."""
    path = lock_path(outdir)
    key = str(path)
    with _guard:
        nested = key in _held
        if nested:
            _held[key] += 1
    if nested:
        try:
            yield path
        finally:
            with _guard:
                _held[key] -= 1
        return
    if fcntl is None:  # pragma: no cover - Windows
        yield path
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            who = _holder(fd)
            os.close(fd)
            raise OutputsBusy(f"{Path(outdir)}: another kg build ({who}) is writing this folder; "
                              f"wait for it to end") from None
        try:  # the holder before may have removed the file as this one opened it: lock the one in place
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    with _guard:
        _held[key] = 1
        _fds[key] = fd
    try:
        yield path
    finally:
        with _guard:
            del _held[key]
            _fds.pop(key, None)
        with contextlib.suppress(OSError):
            os.unlink(path)  # while still locked: a build that opened it then retries on a new file
        os.close(fd)


def drop_inherited() -> None:
    """In a forked child: close the descriptors of the locks its parent holds, and
    forget them (the child never leaves their blocks: it ends with ``os._exit``).
    The parent keeps its locks; they end when it does. Takes no lock (another
    thread of the parent may have held ``_guard`` as it forked)."""
    for fd in list(_fds.values()):
        try:
            os.close(fd)
        except OSError:
            pass
    _fds.clear()
    _held.clear()


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename. The file gets the
    mode a plain ``open`` would give it (0666 less the umask), not the temporary file's 0600:
    a web server or a database import run as another user reads it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~umask())
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def recover(outdir: Path) -> None:
    """Undo what a killed build left next to ``outdir``: put back the previous
    outputs if the kill fell between the two renames of the swap, and remove
    half-written temporary folders. Called under the folder's lock
    (:func:`output_lock`): no other build is writing next to it."""
    parent = outdir.parent
    for old in sorted(parent.glob(f".{outdir.name}.old-*")):
        prev = old / "prev"
        if prev.is_dir() and not outdir.exists():
            os.rename(prev, outdir)
        shutil.rmtree(old, ignore_errors=True)
    for tmp in parent.glob(f".{outdir.name}.tmp-*"):
        shutil.rmtree(tmp, ignore_errors=True)


def swap(new: Path, outdir: Path) -> None:
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
