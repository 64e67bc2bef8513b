"""Corpus-level name propagation: a name one paper defines is found in the others.

When a paper proposes "the Gated Spectral Unit (GSU)", another abstract of
the same corpus that says "we compare against GSU" uses that method. After
the first pass over every record, the names that papers define (proposed
methods, typed abbreviation definitions) form a lexicon; a second pass finds
those names, word-bounded and case-sensitive, in the abstracts that did not
already name them. Only distinctive forms travel: name-like tokens (inner
capitals or digits, at least 3 characters) and multi-word names with a capital or a
digit; never a broad field ("Deep Learning"), nor a lower-case phrase ("natural
language"), which would spread one paper's error over the corpus.
"""
from __future__ import annotations

import bisect
import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from operator import attrgetter

from kg.model import DocEntity, Extraction, Mention
from kg.text import compact_key, context
from kg.extract.shapes import BROAD_FIELDS, Taken, is_name_like

_SOURCE = "kg_corpus"


@lru_cache(maxsize=1 << 16)  # the same names recur over the corpus
def _distinctive(form: str) -> bool:
    if compact_key(form) in BROAD_FIELDS:
        return False
    if " " in form.strip():  # a multi-word name with a capital or digit ("Gated Spectral Unit")
        return len(form.split()) >= 2 and len(form) >= 8 and any(c.isupper() or c.isdigit() for c in form)
    return len(form) >= 3 and is_name_like(form)


_LEXICON_TYPES = frozenset({"Method", "Dataset"})
_DEFINING = frozenset({"kg_learned_proposed", "kg_abbreviations"})


@lru_cache(maxsize=1024)  # a few dozen sources ("component" or "component@title")
def _defines(source: str) -> bool:
    return source.split("@")[0] in _DEFINING


_SOURCE_OF = attrgetter("source")


def build_lexicon(extractions: Iterable[Extraction]) -> dict[str, tuple[str, tuple[str, ...]]]:
    """{surface form: (type, all forms of its entity)} of names defined in the corpus.

    A form defined with two different types is left out (ambiguous).
    """
    lex: dict[str, tuple[str, tuple[str, ...]]] = {}
    clash: set[str] = set()
    for ex in extractions:
        for ent in ex.entities:
            if ent.type not in _LEXICON_TYPES or not any(map(_defines, map(_SOURCE_OF, ent.mentions))):
                continue
            forms = tuple(f for f in (ent.name, *ent.aliases) if _distinctive(f))
            for f in forms:
                if f in lex and lex[f][0] != ent.type:
                    clash.add(f)
                lex.setdefault(f, (ent.type, forms))
    return {f: v for f, v in lex.items() if f not in clash}


_WORD = re.compile(r"[\w][\w-]*")


def _word_char(c: str) -> bool:  # [\w-] on ASCII
    return c.isalnum() or c in "_-"


class Finder:
    """Finds lexicon forms in text, word-bounded and case-sensitive, in one pass
    over the text's words (a dict from first word to forms; no giant regex)."""

    def __init__(self, forms: Iterable[str]):
        self.by_first: dict[str, list[str]] = {}
        for f in sorted(set(forms), key=lambda f: (-len(f), f)):
            m = _WORD.match(f)
            if m:
                self.by_first.setdefault(m.group(0), []).append(f)

    def __bool__(self) -> bool:
        return bool(self.by_first)

    def finditer(self, text: str) -> Iterator[tuple[int, int, str]]:
        pos = 0
        for start, word in self._words(text):
            if start < pos or (start > 0 and text[start - 1] in "-_"):
                continue
            for form in self.by_first.get(word, ()):
                end = start + len(form)
                if text.startswith(form, start) and (end == len(text) or not (text[end].isalnum() or text[end] in "-_")):
                    yield start, end, form
                    pos = end
                    break

    def _words(self, text: str) -> list[tuple[int, str]]:
        r"""(start, word) of the ``_WORD`` matches of ``text`` that begin a form, in order.

        ASCII text: the distinct words come from one ``findall`` and only those that
        begin a form are looked up with ``str.find`` (a word starts at p when the
        character before is not in ``[\w-]``, and ends where ``[\w-]`` ends); the
        Python loop over every word of every text was most of the corpus pass.
        """
        if not text.isascii():
            return [(m.start(), m.group(0)) for m in _WORD.finditer(text)]
        out = []
        for word in self.by_first.keys() & set(_WORD.findall(text)):
            n, at = len(text), text.find(word)
            while at >= 0:
                end = at + len(word)
                if (at == 0 or not _word_char(text[at - 1])) and (end == n or not _word_char(text[end])):
                    out.append((at, word))
                at = text.find(word, end if end > at else at + 1)
        out.sort()
        return out


def _pattern(lexicon: dict) -> Finder | None:
    return Finder(lexicon) if lexicon else None


def propagate(extraction: Extraction, text: str, lexicon: dict, pattern: "Finder | None",
              sents: list[tuple[int, int]] = ()) -> Extraction:
    """Add the lexicon names found in ``text`` (the abstract) that ``extraction`` lacks.

    ``sents`` are the (start, end) char spans of the abstract's sentences.
    """
    if pattern is None:
        return extraction
    known = {compact_key(f) for e in extraction.entities for f in (e.name, *e.aliases)}
    taken = Taken(len(text))
    for m in extraction.mentions:
        if not m.source.endswith("@title"):
            taken.add(m.start, m.end)
    found: dict[tuple, list[Mention]] = {}
    said = {m.sentence: m.sentence for m in extraction.mentions}  # a sentence's one string, as its other mentions hold it
    starts = [s for s, _ in sents]
    for start, end, form in pattern.finditer(text):
        type_, forms = lexicon[form]
        if compact_key(form) in known or taken.overlaps(start, end):
            continue
        k = bisect.bisect_right(starts, start) - 1
        sentence = context(text, *sents[k], start, end) if k >= 0 and start < sents[k][1] else ""
        sentence = said.setdefault(sentence, sentence)
        role = "used" if type_ == "Method" else ""
        found.setdefault((type_, forms), []).append(
            Mention(text=form, type=type_, start=start, end=end, role=role, source=_SOURCE, sentence=sentence))
        taken.add(start, end)
    if not found:
        return extraction
    new = []
    for (type_, _forms), mentions in found.items():
        surface = list(dict.fromkeys(mm.text for mm in mentions))
        name = sorted(surface, key=lambda s: (len(s), s))[0] if type_ == "Method" else max(surface, key=len)
        new.append(DocEntity(type=type_, name=name, aliases=tuple(s for s in surface if s != name),
                             role="used" if type_ == "Method" else "", mentions=tuple(mentions)))
    return add_entities(extraction, new)


def add_entities(extraction: Extraction, new: Iterable[DocEntity]) -> Extraction:
    """``extraction`` with the entities ``new`` (found by :func:`propagate`) after its own,
    and their mentions among its mentions (title first, then by offset)."""
    new = tuple(new)
    entities = tuple(extraction.entities) + new
    mentions = tuple(sorted(extraction.mentions + tuple(m for e in new for m in e.mentions),
                            key=lambda m: (m.source.endswith("@title") is False, m.start, m.end)))
    return Extraction(doc=extraction.doc, entities=entities, github=extraction.github, mentions=mentions)


def lexicon_json(lexicon: dict) -> str:
    """A lexicon as JSON, forms sorted: what its digest is taken of and the cache keeps.

    >>> lexicon_json({"GSU": ("Method", ("GSU", "Gated Spectral Unit"))})
    '[["GSU", "Method", ["GSU", "Gated Spectral Unit"]]]'
    """
    return json.dumps(sorted([f, t, list(fs)] for f, (t, fs) in lexicon.items()), ensure_ascii=False)


def lexicon_digest(text: str) -> str:
    """The id of a lexicon: a digest of its :func:`lexicon_json`."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def changed_forms(new: dict, old: dict) -> set[str]:
    """The forms whose lexicon entry differs between ``old`` and ``new`` (added,
    removed or with another type or other forms).

    :func:`propagate` on a text in which none of them occurs (as a substring, a
    superset of the word-bounded matches) gives the same result under both: the
    :class:`Finder` only ever yields forms that occur in the text, and tries the
    forms of a first word in one order (longest first) whatever else is there.

    >>> sorted(changed_forms({"A1": ("Method", ("A1",)), "B2": ("Dataset", ("B2",))},
    ...                      {"A1": ("Method", ("A1",)), "C3": ("Method", ("C3",))}))
    ['B2', 'C3']
    """
    return {f for f in new.keys() | old.keys() if new.get(f) != old.get(f)}


def substring_regex(forms: Iterable[str]) -> "re.Pattern | None":
    """A regex that finds any of ``forms`` as a substring, built as a trie (one
    branch a character): Python's ``re`` compiles and runs an alternation of
    hundreds of literals slowly (seconds), a trie in milliseconds.

    >>> rx = substring_regex(["GSU", "GSU-2", "GAN"])
    >>> [m.group(0) for m in rx.finditer("a GSU-2 and a GAN")]
    ['GSU-2', 'GAN']
    >>> substring_regex([]) is None
    True
    """
    trie: dict = {}
    for form in forms:
        if not form:
            continue
        node = trie
        for c in form:
            node = node.setdefault(c, {})
        node[""] = {}
    if not trie:
        return None

    def emit(node: dict) -> str:
        branches = [re.escape(c) + emit(node[c]) for c in sorted(k for k in node if k)]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return re.compile(emit(trie))
