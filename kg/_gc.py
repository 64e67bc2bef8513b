"""Pause Python's cyclic garbage collector while a stage builds many objects.

Resolution, graph building and output writing allocate millions of small
containers that live to the end of the build. Each automatic collection walks
every tracked object of the older generations again, so these stages spent
about half their time in the collector. Reference counting still frees what they drop; the few
reference cycles (networkx views) wait for the next collection after the pause.

A one-shot process whose stages' results live to its end (``kg build``) can also
ask, with :func:`freeze_after_pauses`, that what a pause leaves behind be frozen
(moved where the collector never looks) as the pause ends: else the first
collection after it walks every object the stage made, as young objects.
"""
from __future__ import annotations

import contextlib
import functools
import gc


_FREEZE = False


def freeze_after_pauses(on: bool = True) -> None:
    """From now on, freeze the tracked objects when an outermost :func:`gc_paused`
    ends (``gc.freeze``): they are never walked by the collector again, nor collected
    if they become cyclic garbage. For a process that ends when its work is done."""
    global _FREEZE
    _FREEZE = on


@contextlib.contextmanager
def gc_paused():
    """Disable the cyclic collector inside the block (nested use is harmless).

    >>> with gc_paused():
    ...     gc.isenabled()
    False
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if _FREEZE:
            gc.freeze()
        gc.enable()


def without_gc(fn):
    """Decorator: run ``fn`` inside :func:`gc_paused`."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with gc_paused():
            return fn(*args, **kwargs)

    return wrapper
