"""The JSON Lines outputs: the ``kg extract`` lines and ``records.jsonl``."""
from __future__ import annotations

import io
from collections.abc import Iterable
from pathlib import Path

from kg._json import dumps
from kg.pipeline.writeback import Sink
from kg.io.graphjson import records_to_jsonl
from kg.model import Extraction


def write_extractions(fh, extractions: Iterable[Extraction]) -> None:
    """The ``kg extract`` JSON Lines, one object a record."""
    for e in extractions:  # compact, keys in the order of the format (see kg._json)
        fh.write(dumps(e.to_json()) + "\n")


def extractions_jsonl(extractions: Iterable[Extraction]) -> str:
    buf = io.StringIO()
    write_extractions(buf, extractions)
    return buf.getvalue()


def write_jsonl(folder: Path, name: str, extractions: list[Extraction], records) -> None:
    """``extractions.jsonl`` (the ``kg extract`` lines) or ``records.jsonl`` (nothing
    without ``records``) into ``folder``."""
    if name != "extractions.jsonl" and not records:
        return
    sink = Sink(folder / name)  # hundreds of MB on a large corpus: dirty pages bounded as graph.nt's
    try:
        if name == "extractions.jsonl":
            write_extractions(sink, extractions)
        else:
            sink.write(records_to_jsonl(records))
    except BaseException:
        sink.abort()
        raise
    sink.close()
