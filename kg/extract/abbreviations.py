"""Abbreviation definitions: "Feature Shift Localization Network (FSL-Net)".

A pure function over a spaCy ``Doc`` (works on ``spacy.blank("en")``), after
Schwartz & Hearst (2003), "A simple algorithm for identifying abbreviation
definitions in biomedical text", as scispacy's ``abbreviation.py`` does it:
a short form in parentheses, and the shortest run of words before it whose
letters cover the short form's letters in order, the first letter starting a
word.

>>> import spacy
>>> nlp = spacy.blank("en")
>>> doc = nlp("We use the Human Protein Atlas (HPA) for training.")
>>> [(l.text, s.text) for l, s in find_abbreviations(doc)]
[('Human Protein Atlas', 'HPA')]
"""
from __future__ import annotations

from spacy.tokens import Doc, Span

from kg.extract.tokens import token_texts

MAX_SHORT_TOKENS = 5
MAX_SHORT_CHARS = 12
_STOP_PUNCT = {",", ";", ":", ".", "(", ")", "[", "]", "?", "!"}


def is_short_form(text: str) -> bool:
    """Whether a parenthesized string can be an abbreviation.

    >>> [is_short_form(t) for t in ["FSL-Net", "s-OTDD", "e.g.", "2019", "ours", "A"]]
    [True, True, False, False, False, False]
    """
    if not (2 <= len(text) <= MAX_SHORT_CHARS) or " " in text.strip():
        return False
    if not text[0].isalnum() or not any(c.isupper() for c in text):
        return False
    return sum(c.isalpha() for c in text) >= 2 and "." not in text


def best_long_form(short: str, long: str) -> int | None:
    """Char index in ``long`` where the long form of ``short`` starts, or None.

    Walks the short form's letters and digits from the right, matching each in
    ``long`` from the right; the short form's first character must start a word.

    >>> best_long_form("FSL-Net", "we introduce the Feature Shift Localization Network")
    17
    >>> best_long_form("XYZ", "nothing here") is None
    True
    """
    s_idx, l_idx = len(short) - 1, len(long) - 1
    while s_idx >= 0:
        c = short[s_idx].lower()
        if not c.isalnum():
            s_idx -= 1
            continue
        while l_idx >= 0 and (
            long[l_idx].lower() != c or (s_idx == 0 and l_idx > 0 and long[l_idx - 1].isalnum())
        ):
            l_idx -= 1
        if l_idx < 0:
            return None
        l_idx -= 1
        s_idx -= 1
    return long.rfind(" ", 0, l_idx + 1) + 1


_FUNCTION_WORDS = frozenset("of for and the a an in on to with via by from".split())


def initials_start(short: str, words: list[str]) -> int | None:
    """Index in ``words`` where a long form whose word initials spell ``short`` starts.

    Tried before Schwartz & Hearst, which prefers the shortest match and so
    cuts "sufficient subset training (SST)" to "subset training". The letters
    of ``short`` (or its capitals only, for "FSL-Net") are matched from the
    right to the initials of the words and of the parts of hyphenated words;
    function words may be skipped.

    >>> initials_start("SST", "we propose sufficient subset training".split())
    2
    >>> initials_start("SOP", "the Sum-of-Parts".split())
    1
    >>> initials_start("FSL-Net", "the Feature Shift Localization Network".split())
    1
    >>> initials_start("XYZ", "no match here".split()) is None
    True
    """
    letters = [c.lower() for c in short if c.isalnum()]
    caps = [c.lower() for c in short if c.isupper() or c.isdigit()]
    for target in (letters, caps if caps != letters else None):
        if not target or len(target) < 2:
            continue
        k = len(target) - 1
        for w in range(len(words) - 1, -1, -1):
            parts = [p for p in words[w].split("-") if p]
            for pi in range(len(parts) - 1, -1, -1):
                if k < 0:
                    break
                part = parts[pi]
                if part[0].lower() == target[k]:
                    k -= 1
                elif part.lower() in _FUNCTION_WORDS or pi > 0:
                    continue
                else:
                    k = -2
                    break
            if k == -1:
                first = parts[0]
                if first[0].lower() != target[0] and len(parts) == 1:
                    return None
                return w
            if k < -1:
                break
    return None


def _closing(doc: Doc, i: int, limit: int) -> int | None:
    for j in range(i + 1, min(i + 2 + MAX_SHORT_TOKENS, limit)):
        if doc[j].text == ")":
            return j
        if doc[j].text == "(":
            return None
    return None


def find_abbreviations(doc: Doc) -> list[tuple[Span, Span]]:
    """(long form, short form) span pairs defined in ``doc``, in text order."""
    pairs: list[tuple[Span, Span]] = []
    bounds = {}
    texts = token_texts(doc)[0]
    if doc.has_annotation("SENT_START"):
        for sent in doc.sents:
            bounds.update({i: sent for i in range(sent.start, sent.end) if texts[i] == "("})
    for i, text in enumerate(texts):
        if text != "(" or i == 0:
            continue
        tok = doc[i]
        sent = bounds.get(tok.i, doc[:])
        j = _closing(doc, tok.i, sent.end)
        if j is None or j == tok.i + 1:
            continue
        short = doc[tok.i + 1 : j]
        if not is_short_form(short.text):
            continue
        n_chars = sum(c.isalnum() for c in short.text)
        max_words = min(n_chars + 5, n_chars * 2)
        # Candidate window: up to max_words tokens back, not past the sentence
        # start nor past punctuation that closes a clause.
        start = tok.i
        words = 0
        while start > sent.start and words < max_words:
            prev = doc[start - 1]
            if prev.text in _STOP_PUNCT:
                break
            start -= 1
            if not prev.is_punct:
                words += 1
        if start == tok.i:
            continue
        window = doc[start : tok.i]
        w0 = initials_start(short.text, [t.text for t in window])
        if w0 is not None:
            first = window.start + w0
        else:
            offset = best_long_form(short.text, window.text)
            if offset is None:
                continue
            char = window.start_char + offset
            first = next((t.i for t in window if t.idx <= char < t.idx + len(t.text) + 1), None)
            if first is None:
                continue
        long = doc[first : tok.i]
        if len(long.text) <= len(short.text) or long.text.lower() == short.text.lower():
            continue
        pairs.append((long, short))
    return pairs
