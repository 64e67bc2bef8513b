"""Forking with Ctrl-C held back.

``os.fork`` runs at-fork handlers (logging's, for one) in the parent; a Ctrl-C that
arrives meanwhile is raised inside one of them, where Python ignores errors: the
program goes on as if it had never been interrupted (a build ran to its end).
Blocked while the processes are forked, the signal waits, and is raised once the
caller can still stop what it started.

A forked child also dies with the process that forked it (:func:`child_started`):
a build killed with ``kill -9`` leaves no child writing into its staging folder,
and none holding the output folder's lock (see :mod:`kg.files`) after it.
"""
from __future__ import annotations

import os
import signal
import sys

_PR_SET_PDEATHSIG = 1
_prctl = None  # libc's prctl, looked up in the parent (a child need not load ctypes)


def _lookup_prctl():
    global _prctl
    if _prctl is None and sys.platform.startswith("linux"):
        try:
            import ctypes

            _prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):  # pragma: no cover - a libc without prctl
            _prctl = False
    return _prctl or None


def die_with_parent(parent: int) -> bool:
    """In a child just forked by process ``parent``: have the kernel SIGKILL this
    process when the parent ends (Linux's ``PR_SET_PDEATHSIG``; the parent's thread
    that forked, in fact, so fork from a thread that lives as long as the child).
    True if so; a child whose parent already ended leaves at once. Elsewhere, False:
    the child runs to its end."""
    prctl = _lookup_prctl()
    if prctl is None or prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        return False
    if os.getppid() != parent:  # the parent ended before the call: no signal will come
        os._exit(1)
    return True


def child_started(parent: int) -> None:
    """What each forked child of a build does first: die with ``parent`` (see
    :func:`die_with_parent`) and, where it will, close the output locks it inherited
    (:func:`kg.files.drop_inherited`): the lock then ends with the build process,
    not with the last of its children to be reaped."""
    from kg.files import drop_inherited

    if die_with_parent(parent):
        drop_inherited()


def prepare() -> int:
    """In the parent, before forking: the pid to pass to :func:`child_started`."""
    _lookup_prctl()
    return os.getpid()


def fork_held(start, stop):
    """``start(mask)`` with SIGINT blocked (``mask``: the signal mask before it, for a
    forked child to restore), then SIGINT let in again: a Ctrl-C that came meanwhile
    is raised here, after ``stop(what start returned)``. Returns what ``start`` returned.

    Blocking covers this thread only: the kernel may hand the signal to another one
    (a native thread of a library), and Python then runs its handler in this thread at
    the next chance, which can be inside an at-fork handler. So the handler is also
    replaced meanwhile by one that only takes note.

    >>> fork_held(lambda mask: signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []), stop=print)
    True
    >>> signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    False
    """
    came: list[int] = []
    handler = signal.signal(signal.SIGINT, lambda signum, frame: came.append(signum))
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        started = start(mask)
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        signal.signal(signal.SIGINT, handler)
        raise
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a Ctrl-C held back is noted now
        signal.signal(signal.SIGINT, handler)
        if came:
            raise KeyboardInterrupt
    except BaseException:
        stop(started)
        raise
    return started


def child_signals(mask) -> None:
    """In a child forked by :func:`fork_held`: Ctrl-C handled as Python does by default,
    and the signal mask of before the fork."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
