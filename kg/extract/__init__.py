"""Extraction: records in, :class:`~kg.model.Extraction` objects out (spaCy only here)."""
from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..model import Extraction, Record
from .assemble import assemble
from .pipeline import PIPELINE_VERSION, get_nlp, make_nlp

__all__ = ["extract_records", "extract_text", "PIPELINE_VERSION", "make_nlp", "get_nlp"]

_TITLE_SEP = ".\n"


def _text_of(rec: Record) -> tuple[str, int]:
    """The text the pipeline reads and the length of its title prefix."""
    if rec.title:
        title = rec.title.rstrip(". ")
        return title + _TITLE_SEP + rec.abstract, len(title) + len(_TITLE_SEP)
    return rec.abstract, 0


def extract_records(records: Iterable[Record], batch_size: int = 64, nlp=None) -> Iterator[Extraction]:
    """One :class:`Extraction` per record, in input order.

    Records with the same title and abstract are processed once.
    """
    nlp = nlp or get_nlp()
    records = list(records)
    texts: dict[str, int] = {}
    for rec in records:
        text, tlen = _text_of(rec)
        texts.setdefault(text, tlen)
    docs = {}

    def gen():
        for text, tlen in texts.items():
            doc = nlp.make_doc(text)
            doc._.kg_title_len = tlen
            yield doc

    for doc in nlp.pipe(gen(), batch_size=batch_size):
        docs[doc.text] = doc
    for rec in records:
        text, tlen = _text_of(rec)
        yield assemble(docs[text], rec.doc, offset=tlen, title_len=tlen)


def extract_text(text: str, doc_id: str = "text#0", title: str | None = None) -> Extraction:
    """Extract from one abstract given as a string."""
    rec = Record(doc=doc_id, abstract=text, source="<text>", index=0, title=title)
    return next(extract_records([rec]))
