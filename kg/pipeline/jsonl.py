"""The JSON Lines outputs, gzip-compressed: ``extractions.jsonl.gz`` (the ``kg extract``
lines) and ``records.jsonl.gz``."""
from __future__ import annotations

import io
from collections.abc import Iterable
from pathlib import Path

from kg._json import dumps
from kg.pipeline.writeback import Sink
from kg.io.graphjson import RECORDS_FILE, records_to_jsonl
from kg.model import Extraction


def write_extractions(fh, extractions: Iterable[Extraction]) -> None:
    """The ``kg extract`` JSON Lines, one object a record."""
    for e in extractions:  # compact, keys in the order of the format (see kg._json)
        fh.write(dumps(e.to_json()) + "\n")


def extractions_jsonl(extractions: Iterable[Extraction]) -> str:
    buf = io.StringIO()
    write_extractions(buf, extractions)
    return buf.getvalue()


#: The JSON Lines files of a build.
EXTRACTIONS, RECORDS = "extractions.jsonl.gz", RECORDS_FILE


class _Batches:
    """Text written to a compressing :class:`Sink` in pieces of about ``size`` bytes (a
    gzip member each: a member a line would hardly compress)."""

    def __init__(self, sink: Sink, size: int = 1 << 20):
        self.sink, self.size, self.parts, self.n = sink, size, [], 0

    def write(self, text: str) -> None:
        self.parts.append(text)
        self.n += len(text)
        if self.n >= self.size:
            self.flush()

    def flush(self) -> None:
        self.sink.write("".join(self.parts))
        self.parts, self.n = [], 0


def write_jsonl(folder: Path, name: str, extractions: list[Extraction], records) -> None:
    """:data:`EXTRACTIONS` (the ``kg extract`` lines) or :data:`RECORDS` (nothing without
    ``records``) into ``folder``."""
    if name != EXTRACTIONS and not records:
        return
    sink = Sink(folder / name, compress=True)  # hundreds of MB on a large corpus: dirty pages bounded
    try:
        out = _Batches(sink)
        if name == EXTRACTIONS:
            write_extractions(out, extractions)
        else:
            out.write(records_to_jsonl(records))
        out.flush()
    except BaseException:
        sink.abort()
        raise
    sink.close()
