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

from kg._json import loads
from kg._source import source_hash
from kg.model import DocEntity, Extraction, Mention, mention_fields
from kg.extract.version import PIPELINE_VERSION


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "abstract-kg"


@lru_cache(maxsize=1)
def fingerprint() -> str:
    """A hash of the whole package's code and resources (:func:`kg._source.source_hash`):
    any change to what extraction runs or reads gives new keys, even when nobody bumped
    PIPELINE_VERSION."""
    return source_hash(PIPELINE_VERSION)


def text_key(text: str, title_len: int) -> str:
    return hashlib.sha256(f"{fingerprint()}\x00{title_len}\x00{text}".encode("utf-8")).hexdigest()


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
    entities = [[e.type, e.name, list(e.aliases), e.role, [index[m] if m in index else mention_fields(m)
                                                            for m in e.mentions]] for e in ex.entities]
    return json.dumps([ex.doc, entities, list(ex.github), [mention_fields(m) for m in ex.mentions], sents],
                      ensure_ascii=False)


#: The strings of closed vocabularies that every result repeats (the types and roles of
#: mentions and entities, the rule that found a mention), one object each in this process.
_VOCAB: dict[str, str] = {}


def _mentions(rows: list, own: dict) -> tuple[Mention, ...]:
    """Mentions from their stored fields, sharing strings (see :func:`decode`). Each is
    made by ``tuple.__new__``, as ``Mention(...)`` does, without its Python-level
    ``__new__`` call (over a million mentions on a large corpus)."""
    new, mine, vocab = tuple.__new__, own.setdefault, _VOCAB.setdefault
    return tuple([new(Mention, (mine(text, text), vocab(type_, type_), start, end, vocab(role, role),
                                vocab(source, source), mine(sentence, sentence), score))
                  for text, type_, start, end, role, source, sentence, score in rows])


def _entity(t: str, name: str, aliases: list, role: str, mentions: tuple, own: dict) -> DocEntity:
    """An entity from its stored fields, sharing strings, made as :func:`_mentions` makes mentions."""
    vocab, mine = _VOCAB.setdefault, own.setdefault
    return tuple.__new__(DocEntity, (vocab(t, t), mine(name, name), tuple([mine(a, a) for a in aliases]),
                                     vocab(role, role), mentions))


def decode(value: str) -> tuple[Extraction, list]:
    """What :func:`encode` wrote.

    The JSON parser makes a new string for each occurrence. Equal strings of one result
    become one object here: the sentence that each of its mentions carries, an entity's
    name and its mentions' text. Types, roles and rule names become one object for all
    results. Equal values, about half the memory, and fewer pages for a build to fault in and for its
    forked children to copy.

    >>> m1 = Mention("GAN", "Method", 0, 3, "used", "kg_gazetteer", "GAN works.")
    >>> m2 = Mention("GAN", "Method", 4, 7, "used", "kg_gazetteer", "GAN works.")
    >>> ex, _ = decode(encode(Extraction("d", (DocEntity("Method", "GAN", (), "used", (m1, m2)),), (), (m1, m2)), []))
    >>> a, b = ex.mentions
    >>> (a, b) == (m1, m2), a.sentence is b.sentence, a.text is ex.entities[0].name
    (True, True, True)
    >>> odd = Mention("x" + chr(0xD800), "Task", 0, 2, score=0.5)  # a lone surrogate: json reads what orjson will not
    >>> decode(encode(Extraction("d", (), (), (odd,)), []))[0].mentions == (odd,)
    True
    """
    doc, entities, github, mentions, sents = loads(value)  # by orjson: 99k cached results in half the time
    own: dict[str, str] = {}
    ms = _mentions(mentions, own)
    ents = []
    for t, name, aliases, role, refs in entities:
        try:
            mine = tuple(map(ms.__getitem__, refs))  # indices into ms, as encode writes them
        except TypeError:  # a mention of the entity's own, written out
            mine = tuple(ms[i] if isinstance(i, int) else _mentions([i], own)[0] for i in refs)
        ents.append(_entity(t, name, aliases, role, mine, own))
    return Extraction(doc, tuple(ents), tuple(github), ms), list(map(tuple, sents))


def encode_added(final: Extraction, first: Extraction) -> str | None:
    """What the corpus-name pass added to ``first`` to make ``final`` (entities after
    ``first``'s own), as compact JSON; None when it added nothing.

    >>> m = Mention("GAN", "Method", 0, 3, "used", "kg_corpus", "GAN works.")
    >>> first = Extraction("d", (), (), ())
    >>> final = Extraction("d", (DocEntity("Method", "GAN", (), "used", (m,)),), (), (m,))
    >>> decode_added(encode_added(final, first))[0] == final.entities[0]
    True
    >>> encode_added(first, first) is None
    True
    """
    added = final.entities[len(first.entities):]
    if not added:
        return None
    return json.dumps([[e.type, e.name, list(e.aliases), e.role, [mention_fields(m) for m in e.mentions]]
                       for e in added], ensure_ascii=False)


def decode_added(value: str, first: Extraction | None = None) -> tuple[DocEntity, ...]:
    """The entities :func:`encode_added` wrote; their strings shared with those of
    ``first``, the result they are added to (see :func:`decode`)."""
    own: dict[str, str] = {}
    if first is not None:
        for m in first.mentions:
            own.setdefault(m.sentence, m.sentence)
            own.setdefault(m.text, m.text)
    return tuple(_entity(t, name, aliases, role, _mentions(mentions, own), own)
                 for t, name, aliases, role, mentions in json.loads(value))


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
        # The corpus-name pass: per text, the lexicon its result was computed under and what
        # it added to the first pass (encode_added; NULL: nothing); the lexicons, by digest.
        self.db.execute("CREATE TABLE IF NOT EXISTS corpus_pass (key TEXT PRIMARY KEY, lexicon TEXT NOT NULL, value TEXT)")
        self.db.execute("CREATE TABLE IF NOT EXISTS lexicon (id TEXT PRIMARY KEY, forms TEXT NOT NULL, used INTEGER NOT NULL)")
        self.hits = self.misses = 0

    def get_encoded(self, keys: list[str]) -> dict[str, str]:
        """The stored results of ``keys`` as stored (:func:`decode` them): a build reads
        them first, then decodes them while workers extract the texts not found."""
        out = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            q = f"SELECT key, value FROM extraction WHERE key IN ({','.join('?' * len(chunk))})"
            out.update(self.db.execute(q, chunk))
        self.hits += len(out)
        self.misses += len(keys) - len(out)
        return out

    def put_many(self, items: dict[str, tuple[Extraction, list] | str]) -> None:
        """Store results, given as (Extraction, sentence spans) or already encoded."""
        rows = [(k, v if isinstance(v, str) else encode(*v)) for k, v in items.items()]
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO extraction (key, value) VALUES (?, ?)", rows)

    def get_final(self, keys: list[str]) -> dict[str, tuple[str, str | None]]:
        """{text key: (lexicon id, what the pass added (:func:`encode_added`) or None)} of
        the corpus-name pass results stored for ``keys``."""
        out = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            q = f"SELECT key, lexicon, value FROM corpus_pass WHERE key IN ({','.join('?' * len(chunk))})"
            out.update((k, (lid, v)) for k, lid, v in self.db.execute(q, chunk))
        return out

    def put_final(self, lexicon_id: str, rows: dict[str, str | None], relabel: list[str] = ()) -> None:
        """Store corpus-name pass results computed under lexicon ``lexicon_id``
        ({text key: what the pass added (:func:`encode_added`), or None}),
        and mark ``relabel``'s stored results as valid under it too."""
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO corpus_pass (key, lexicon, value) VALUES (?, ?, ?)",
                                [(k, lexicon_id, v) for k, v in rows.items()])
            self.db.executemany("UPDATE corpus_pass SET lexicon = ? WHERE key = ?", [(lexicon_id, k) for k in relabel])

    def get_lexicon(self, lexicon_id: str) -> dict | None:
        row = self.db.execute("SELECT forms FROM lexicon WHERE id = ?", (lexicon_id,)).fetchone()
        return None if row is None else {f: (t, tuple(fs)) for f, t, fs in json.loads(row[0])}

    #: Lexicons kept for the corpus-name pass (one a corpus built with this cache, most recent first).
    KEEP_LEXICONS = 8

    def put_lexicon(self, lexicon_id: str, forms: str) -> None:
        """Keep a lexicon (``forms``: its :func:`~kg.extract.propagate.lexicon_json`), and the
        :data:`KEEP_LEXICONS` most recently stored ones; results stored under a dropped
        lexicon are dropped too (nothing left to compare them to)."""
        with self.db:
            last = self.db.execute("SELECT COALESCE(MAX(used), 0) FROM lexicon").fetchone()[0]
            if self.db.execute("UPDATE lexicon SET used = ? WHERE id = ?", (last + 1, lexicon_id)).rowcount == 0:
                self.db.execute("INSERT INTO lexicon (id, forms, used) VALUES (?, ?, ?)", (lexicon_id, forms, last + 1))
            old = [r[0] for r in self.db.execute("SELECT id FROM lexicon ORDER BY used DESC LIMIT -1 OFFSET ?",
                                                  (self.KEEP_LEXICONS,))]
            if old:
                marks = ",".join("?" * len(old))
                self.db.execute(f"DELETE FROM lexicon WHERE id IN ({marks})", old)
                self.db.execute(f"DELETE FROM corpus_pass WHERE lexicon IN ({marks})", old)

    def close(self) -> None:
        self.db.close()
