"""The kept resolution state on disk (see :mod:`kg.build.kept`).

The state is a pickle in the extraction cache's folder, one per output folder,
signed with a key kept in the user's own cache folder (unpickling a file runs
code: a file this user's builds did not write is never loaded). A build writes it
in full, or, while the papers that changed since the last full state are at most
:data:`DELTA_MAX_SHARE` of them, only what changed (a signed delta file bound to
the full state by its signature). It is tied to the code that resolves: another
version of it, or of networkx or Python, starts from a full resolution.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import pickle
import sys
import tempfile
import time
from functools import lru_cache
from pathlib import Path

import networkx as nx

from kg._source import source_hash
from kg._gc import without_gc
from kg.build.kept import Kept, Previous, mention_space

#: The first bytes of a state file; then the signature (32 bytes), then the pickle.
MAGIC = b"abstract-kg kept resolution 1\n"
#: State files kept in a cache folder (one an output folder, most recently written first).
KEEP_FILES = 4
#: A build writes only what changed since the last full state while the papers that changed
#: are at most this share of all (a +1% rebuild writes a small delta, not the whole state).
DELTA_MAX_SHARE = 0.25


@lru_cache(maxsize=1)
def code_version() -> str:
    """A hash of the code a kept graph was made by (the whole package, see
    :func:`kg._source.source_hash`) and of the networkx and Python versions (the pickle's classes)."""
    return source_hash(f"kept\x00{nx.__version__}\x00{sys.version_info[:2]}")


def signing_key(folder: str | Path) -> bytes:
    """The signing key in ``folder``, made on first use (readable by this user only);
    OSError if it can be neither read nor made."""
    folder = Path(folder)
    path = folder / "kept.key"
    try:
        return path.read_bytes()
    except FileNotFoundError:
        pass
    folder.mkdir(parents=True, exist_ok=True)
    key = os.urandom(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # made meanwhile by another build
        return path.read_bytes()
    with os.fdopen(fd, "wb") as fh:
        fh.write(key)
    return key


def state_path(cache_folder: str | Path, outdir: str | Path) -> Path:
    """Where the kept state of the builds into ``outdir`` is (in the cache folder)."""
    name = hashlib.sha256(str(Path(outdir).resolve()).encode()).hexdigest()[:24]
    return Path(cache_folder) / "kept" / f"{name}.pickle"


def _sign(key: bytes, data) -> bytes:
    return hmac.new(key, data, hashlib.sha256).digest()


def _lite(kept: Kept, u: str):
    """A node's links as a state file holds them: a paper's mentions as positions in its
    extraction's mentions (None when one is not there: the paper is then resolved again
    next time), a method's derived relations as they are."""
    nbrs = kept.G._succ[u]
    ex = kept.paper_ex.get(u)
    if ex is None:
        return None if kept.G._node[u].get("type") == "Paper" else nbrs
    pos: dict[int, int] = {}
    for i, m in enumerate(mention_space(ex)):
        pos.setdefault(id(m), i)
    try:
        return {v: {k: {**d, "mentions": [pos[id(m)] for m in d["mentions"]]} for k, d in keys.items()}
                for v, keys in nbrs.items()}
    except KeyError:
        return None


def _full(kept: Kept, digests: dict[str, str]) -> dict:
    """What a full state file holds: the version, the papers' nodes, the papers' and
    methods' links (:func:`_lite`), papers, sigs and the papers' and entities' ``digests``."""
    nodes, succ = kept.G._node, kept.G._succ
    papers = {n: d for n, d in nodes.items() if d.get("type") == "Paper"}
    links = {}
    for u, nbrs in succ.items():
        if nbrs or u in papers:
            lite = _lite(kept, u)
            if lite is not None:
                links[u] = lite
    return {"version": code_version(), "nodes": papers, "links": links, "papers": kept.papers, "sigs": kept.sigs,
            "digests": {n: d for n, d in digests.items() if n in nodes}}


def _delta(kept: Kept, digests: dict[str, str]) -> dict:
    """What a delta file holds: the full state's signature and, for each paper, method and
    entity spelling that changed since it, its value now (None: there is none now), and the
    digests of the papers and entities that changed since it."""
    nodes, ch = kept.G._node, kept.changed
    links = {u: (_lite(kept, u) if u in nodes else None) for u in ch["papers"] | ch["methods"]}
    return {"version": code_version(), "base": kept.base,
            "nodes": {p: nodes.get(p) for p in ch["papers"]}, "links": links,
            "papers": {p: kept.papers.get(p) for p in ch["papers"]},
            "sigs": {s: kept.sigs.get(s) for s in ch["sigs"]},
            "digests": {u: digests.get(u) for u in ch["papers"] | ch["entities"]}}


def delta_path(path: Path) -> Path:
    return path.with_suffix(".delta")


def _write_signed(path: Path, state: dict, key: bytes) -> bytes:
    """``state`` pickled into ``path`` (through a temporary file), signed; returns the signature."""
    mac = hmac.new(key, digestmod=hashlib.sha256)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(MAGIC + bytes(mac.digest_size))  # the signature's place, filled in below

            class Signed:  # the pickle streamed to the file as it is made (not held twice in memory)
                @staticmethod
                def write(data) -> int:
                    mac.update(data)
                    return fh.write(data)

            pickle.dump(state, Signed, protocol=pickle.HIGHEST_PROTOCOL)
            fh.seek(len(MAGIC))
            fh.write(mac.digest())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return mac.digest()


def _signature(path: Path) -> bytes | None:
    """The signature a state file says it has (not checked)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(MAGIC) + 32)
    except OSError:
        return None
    return head[len(MAGIC):] if head[:len(MAGIC)] == MAGIC and len(head) == len(MAGIC) + 32 else None


def save_kept(path: str | Path, kept: Kept, key_folder: str | Path, digests: dict[str, str] | None = None) -> str:
    """Write ``kept`` at ``path``: only what changed since the full state there (a delta
    file next to it) when it started from that state and few papers changed since; else
    in full. ``digests`` are the write stage's digests of ``kept.G``'s units
    (:func:`kg.build.reuse.unit_digests`; the papers' and entities' are kept, none without). Keeps the
    :data:`KEEP_FILES` most recent states of the folder. Returns "delta" or "full"."""
    digests = digests or {}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    key = signing_key(key_folder)
    papers = sum(1 for d in kept.G._node.values() if d.get("type") == "Paper")
    if (kept.base is not None and kept.changed is not None and _signature(path) == kept.base
            and len(kept.changed["papers"]) <= DELTA_MAX_SHARE * max(papers, 1)):
        _write_signed(delta_path(path), _delta(kept, digests), key)
        written = "delta"
    else:
        delta_path(path).unlink(missing_ok=True)  # first: a delta never outlives its full state
        _write_signed(path, _full(kept, digests), key)
        written = "full"
    others = sorted((p for p in path.parent.glob("*.pickle") if p != path), key=lambda p: -p.stat().st_mtime)
    for old in others[KEEP_FILES - 1:]:
        delta_path(old).unlink(missing_ok=True)
        old.unlink(missing_ok=True)
    for tmp in path.parent.glob(".*"):  # the temporary files of builds killed while writing
        try:
            if time.time() - tmp.stat().st_mtime > 3600:
                tmp.unlink()
        except OSError:
            pass
    return written


def _read_signed(path: Path, key: bytes) -> tuple[dict | None, bytes, str]:
    """(state, its signature, "") or (None, b"", why not)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None, b"", "none kept for this output folder"
    except OSError as exc:
        return None, b"", f"unreadable ({exc.strerror})"
    head = len(MAGIC)
    if data[:head] != MAGIC or len(data) < head + 32:
        return None, b"", "not a state file of this version"
    body = memoryview(data)[head + 32:]
    if not hmac.compare_digest(data[head:head + 32], _sign(key, body)):
        return None, b"", "not signed by this user's builds"
    try:
        state = pickle.loads(body)
    except Exception as exc:  # signed by this user's builds, yet not a whole pickle (a damaged disk)
        return None, b"", f"unreadable ({type(exc).__name__})"
    if not isinstance(state, dict) or state.get("version") != code_version():
        return None, b"", "made by another version of the resolution code"
    return state, data[head:head + 32], ""


@without_gc
def load_kept(path: str | Path, key_folder: str | Path) -> tuple[Previous | None, str]:
    """The state at ``path`` (the full state, and its delta if there is a valid one):
    (Previous, "") or (None, why it is not used)."""
    path = Path(path)
    key_path = Path(key_folder) / "kept.key"
    if not path.is_file():
        return None, "no state kept for this output folder"
    if not key_path.is_file():
        return None, "no signing key"
    key = key_path.read_bytes()
    state, signature, why = _read_signed(path, key)
    if state is None:
        return None, why
    previous = Previous(state["nodes"], state["links"], state["papers"], state["sigs"], signature,
                        digests=state["digests"])
    delta, _, why = _read_signed(delta_path(path), key)
    if delta is not None and delta.get("base") == signature:  # else the full state alone (valid too)
        for name in ("nodes", "links", "papers", "sigs", "digests"):
            mine = getattr(previous, name)
            for k, v in delta[name].items():
                if v is None:
                    mine.pop(k, None)
                else:
                    mine[k] = v
        previous.changed = {"papers": set(delta["nodes"]), "methods": set(delta["links"]) - set(delta["nodes"]),
                            "sigs": set(delta["sigs"]), "entities": set(delta["digests"]) - set(delta["nodes"])}
    return previous, ""
