"""A cache of first-pass extractions, keyed by the text's content hash, the
pipeline version and a fingerprint of the extraction code and lexicons:
rebuilding after adding records re-reads only the new ones, and a changed
pipeline never sees an old result.

SQLite (stdlib), one row a text, compact JSON values (arrays, each mention
once); safe for one writer at a time. Every change to the extraction code
starts a new file; opening a cache removes the files of other pipelines left
unused for :data:`STALE_DAYS` days.
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from functools import lru_cache
from pathlib import Path

from ..model import DocEntity, Extraction, Mention
from .pipeline import PIPELINE_VERSION


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "abstract-kg"


@lru_cache(maxsize=1)
def fingerprint() -> str:
    """A hash of the extraction code and its resources: any change to a rule or a
    lexicon gives new keys, even when nobody bumped PIPELINE_VERSION."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256(PIPELINE_VERSION.encode())
    for folder, pattern in (("extract", "*.py"), ("resources", "*.txt")):
        for path in sorted((root / folder).glob(pattern)):
            h.update(path.name.encode() + b"\x00" + path.read_bytes())
    return h.hexdigest()[:16]


def text_key(text: str, title_len: int) -> str:
    return hashlib.sha256(f"{fingerprint()}\x00{title_len}\x00{text}".encode("utf-8")).hexdigest()


def _mention_row(m: Mention) -> list:
    return [m.text, m.type, m.start, m.end, m.role, m.source, m.sentence, m.score]


def encode(ex: Extraction, sents: list) -> str:
    """A first-pass result as compact JSON: arrays, not objects, and an entity's
    mentions as indices into the extraction's mentions (decoding builds each once).

    >>> m = Mention("GAN", "Method", 0, 3, "used", "kg_gazetteer", "GAN works.")
    >>> ex = Extraction("d", (DocEntity("Method", "GAN", (), "used", (m,)),), (), (m,))
    >>> decode(encode(ex, [(0, 10)])) == (ex, [(0, 10)])
    True
    >>> other = Extraction("d", (DocEntity("Task", "x", (), "", (Mention("x", "Task", 5, 6),)),))
    >>> decode(encode(other, [])) == (other, [])
    True
    """
    index = {m: i for i, m in enumerate(ex.mentions)}
    entities = [[e.type, e.name, list(e.aliases), e.role, [index[m] if m in index else _mention_row(m)
                                                            for m in e.mentions]] for e in ex.entities]
    return json.dumps([ex.doc, entities, list(ex.github), [_mention_row(m) for m in ex.mentions], sents],
                      ensure_ascii=False)


def decode(value: str) -> tuple[Extraction, list]:
    """What :func:`encode` wrote."""
    doc, entities, github, mentions, sents = json.loads(value)
    ms = tuple(Mention(*m) for m in mentions)
    ents = tuple(DocEntity(t, name, tuple(aliases), role,
                           tuple(ms[i] if isinstance(i, int) else Mention(*i) for i in refs))
                 for t, name, aliases, role, refs in entities)
    return Extraction(doc, ents, tuple(github), ms), [tuple(s) for s in sents]


#: Cache files of other pipeline versions untouched for this many days are removed.
STALE_DAYS = 30


def remove_stale(folder: Path, keep: Path, days: float = STALE_DAYS) -> list[Path]:
    """Delete the ``extractions-*.sqlite`` files in ``folder`` other than ``keep``
    not modified for ``days`` days (a cache in use is touched when opened); returns them."""
    cutoff = time.time() - days * 86400
    gone = []
    for path in sorted(folder.glob("extractions-*.sqlite")):
        try:
            if path != keep and path.stat().st_mtime < cutoff:
                path.unlink()
                gone.append(path)
        except OSError:  # removed meanwhile, or not ours to remove
            pass
    return gone


class ExtractionCache:
    """``get`` / ``put`` first-pass results ((Extraction, sentence spans)) by text."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = self.folder / f"extractions-{PIPELINE_VERSION}-{fingerprint()}.sqlite"
        self.db = sqlite3.connect(self.path)
        os.utime(self.path)  # in use: not stale for other versions' cleanup
        remove_stale(self.folder, self.path)
        self.db.execute("CREATE TABLE IF NOT EXISTS extraction (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        self.hits = self.misses = 0

    def get_many(self, keys: list[str]) -> dict[str, tuple[Extraction, list]]:
        out = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            q = f"SELECT key, value FROM extraction WHERE key IN ({','.join('?' * len(chunk))})"
            for k, v in self.db.execute(q, chunk):
                out[k] = decode(v)
        self.hits += len(out)
        self.misses += len(keys) - len(out)
        return out

    def put_many(self, items: dict[str, tuple[Extraction, list] | str]) -> None:
        """Store results, given as (Extraction, sentence spans) or already encoded."""
        rows = [(k, v if isinstance(v, str) else encode(*v)) for k, v in items.items()]
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO extraction (key, value) VALUES (?, ?)", rows)

    def close(self) -> None:
        self.db.close()
