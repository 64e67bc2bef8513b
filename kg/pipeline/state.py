"""The build state (``build-state.json``): where each unit's blocks are in the
files a build wrote, read by the next build into the same folder."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from kg._json import dumps, loads
from kg.pipeline.digests import STATE_FORMAT, code_fingerprint, digest_bytes

STATE_FILE = "build-state.json"
#: Where a unit's blocks are: the RDF files and the two sections of graph.json.
SLOTS = ("nt", "ttl", "jsonld", "json.nodes", "json.links")
#: The column of a slot's start in a unit's row ([digest, triples, start, end, start, end, ...]).
COLUMN = {slot: 2 + 2 * i for i, slot in enumerate(SLOTS)}
SLOT_FILES = {"nt": "graph.nt.gz", "ttl": "graph.ttl.gz", "jsonld": "graph.jsonld.gz", "json.nodes": "graph.json.gz",
              "json.links": "graph.json.gz"}
_SAMPLE = 1 << 16


def file_check(path: Path) -> list:
    """[size, digest of samples spread over the file]: a cheap check that a file is
    the one a state describes (reading 3 GB to hash it would cost seconds)."""
    size = path.stat().st_size
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as f:
        step = max(_SAMPLE, size // 64)
        for pos in range(0, size, step):
            h.update(os.pread(f.fileno(), _SAMPLE, pos))
        if size:
            h.update(os.pread(f.fileno(), _SAMPLE, max(0, size - _SAMPLE)))
    return [size, h.hexdigest()]


def read_state(outdir: Path, base: str, slots) -> tuple[dict | None, str]:
    """The last build's state in ``outdir`` if its blocks can be reused for a build
    writing ``slots`` with ``base``: (state, "") or (None, why not)."""
    path = outdir / STATE_FILE
    if not path.is_file():
        return None, "no previous build state"
    try:
        data = path.read_bytes()
        body, _, check = data.rstrip(b"\n").rpartition(b"\n")
        if check.decode("ascii") != digest_bytes(body):
            return None, "the previous build state is damaged"
        state = loads(body)  # by orjson: half the time of json's parser
        if state.get("format") != STATE_FORMAT or state.get("code") != code_fingerprint():
            return None, "the previous build was made by other code"
        if state.get("base") != base:
            return None, "the base IRI changed"
        for slot in slots:
            name = SLOT_FILES[slot]
            if name not in state["files"]:
                return None, f"the previous build did not write {name}"
            if file_check(outdir / name) != state["files"][name]:
                return None, f"{name} is not the file the previous build wrote"
        if not isinstance(state.get("units"), dict) or not isinstance(state.get("firsts"), dict):
            return None, "the previous build state is damaged"
    except (OSError, ValueError, TypeError, KeyError, AttributeError, UnicodeDecodeError) as exc:
        return None, f"the previous build state is unreadable ({exc.__class__.__name__})"
    return state, ""


def write_state(path: Path, state: dict) -> None:
    """The state as one line of JSON, then a line with its digest (a damaged or edited
    state must not make a build copy the wrong bytes)."""
    # compact, keys sorted, by orjson (several times faster than json's encoder)
    body = dumps(state, sort_keys=True).encode("utf-8")
    path.write_bytes(body + b"\n" + digest_bytes(body).encode("ascii") + b"\n")
