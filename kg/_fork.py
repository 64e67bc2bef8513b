"""Forking with Ctrl-C held back.

``os.fork`` runs at-fork handlers (logging's, for one) in the parent; a Ctrl-C that
arrives meanwhile is raised inside one of them, where Python ignores errors: the
program goes on as if it had never been interrupted (a build ran to its end).
Blocked while the processes are forked, the signal waits, and is raised once the
caller can still stop what it started.
"""
from __future__ import annotations

import signal


def fork_held(start, stop):
    """``start(mask)`` with SIGINT blocked (``mask``: the signal mask before it, for a
    forked child to restore), then SIGINT let in again: a Ctrl-C that came meanwhile
    is raised here, after ``stop(what start returned)``. Returns what ``start`` returned.

    >>> fork_held(lambda mask: signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []), stop=print)
    True
    >>> signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    False
    """
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        started = start(mask)
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        raise
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a Ctrl-C held back is raised here
    except BaseException:
        stop(started)
        raise
    return started
