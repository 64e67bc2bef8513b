"""What a build tells its user: a few lines in a user's words, the seconds of each
internal step for ``--verbose``, warnings about records, and progress bars on a
terminal (tqdm: a rate and an estimated time left; hidden when stderr is not a
terminal)."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Callable


def _nothing(message: str) -> None:
    pass


class _NoBar:
    n = 0

    def update(self, n: int = 1) -> None:
        self.n += n

    def close(self) -> None:
        pass


@dataclass
class Talk:
    say: Callable[[str], None] = _nothing  # what happened, in a user's words
    detail: Callable[[str], None] = _nothing  # internal steps and their seconds (--verbose)
    warn: Callable[[str], None] | None = None  # a record skipped or cut
    bars: bool = False  # progress bars on stderr, when it is a terminal

    def bar(self, what: str, total: int | None, unit: str):
        """A progress bar (``update(n)``, ``close()``), or one that draws nothing."""
        if not self.bars:
            return _NoBar()
        from tqdm import tqdm

        return tqdm(total=total, desc=what, unit=f" {unit}", file=sys.stderr, disable=None, leave=False,
                    dynamic_ncols=True, mininterval=0.5)

    def counter(self, what: str, unit: str):
        """A ``progress(done, total)`` callback drawing a bar (made at the first call)."""
        state: dict = {}

        def progress(done: int, total: int) -> None:
            bar = state.get("bar")
            if bar is None:
                bar = state["bar"] = self.bar(what, total, unit)
            bar.update(done - bar.n)
            if done >= total:
                bar.close()

        return progress
