"""Per-document text of the tokens, computed once and shared by the components.

Iterating a ``Doc`` makes a ``Token`` object for every token, and every
``.text`` / ``.lower_`` looks its string up again; the components scan each
document several times. They scan these plain lists instead and make a
``Token`` only where a word can start a match.

>>> import spacy
>>> doc = spacy.blank("en")("We propose LoRanPAC.\\nIt works")
>>> token_texts(doc)
(['We', 'propose', 'LoRanPAC', '.', '\\n', 'It', 'works'], ['we', 'propose', 'loranpac', '.', '\\n', 'it', 'works'])
"""
from __future__ import annotations

from spacy.attrs import IDX, LENGTH
from spacy.tokens import Doc


def doc_text(doc: Doc) -> str:
    """``doc.text``, computed once (spaCy joins every token on each access)."""
    cached = doc.user_data.get("kg_text")
    if cached is None:
        cached = doc.user_data["kg_text"] = doc.text
    return cached


def token_texts(doc: Doc) -> tuple[list[str], list[str]]:
    """Each token's ``text`` and ``lower_`` (``str.lower`` of the text, as spaCy's
    English lexeme attribute), sliced from :func:`doc_text` by offset and length."""
    cached = doc.user_data.get("kg_token_texts")
    if cached is None or len(cached[0]) != len(doc):
        text = doc_text(doc)
        texts = [text[i:i + n] for i, n in doc.to_array([IDX, LENGTH]).tolist()] if len(doc) else []
        cached = doc.user_data["kg_token_texts"] = (texts, [t.lower() for t in texts])
    return cached
