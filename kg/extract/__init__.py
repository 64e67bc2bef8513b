"""Extraction: records in, :class:`~kg.model.Extraction` objects out (spaCy only here)."""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator

from ..model import Extraction, Record
from .assemble import assemble
from .components import sentences
from .pipeline import PIPELINE_VERSION, get_nlp, make_nlp
from .propagate import _pattern, build_lexicon, propagate

__all__ = ["extract_records", "extract_text", "PIPELINE_VERSION", "make_nlp", "get_nlp"]

_TITLE_SEP = ".\n"


def _text_of(rec: Record) -> tuple[str, int]:
    """The text the pipeline reads and the length of its title prefix."""
    if rec.title:
        title = rec.title.rstrip(". ")
        return title + _TITLE_SEP + rec.abstract, len(title) + len(_TITLE_SEP)
    return rec.abstract, 0


def extract_records(records: Iterable[Record], batch_size: int = 64, nlp=None,
                    corpus_names: bool = True) -> Iterator[Extraction]:
    """One :class:`Extraction` per record, in input order.

    Records with the same title and abstract are processed once. With
    ``corpus_names``, names that one record defines are also found in the
    others (see :mod:`kg.extract.propagate`).
    """
    nlp = nlp or get_nlp()
    records = list(records)
    texts: dict[str, tuple[int, str]] = {}
    for rec in records:
        text, tlen = _text_of(rec)
        texts.setdefault(text, (tlen, rec.abstract))

    def gen():
        for text, (tlen, _) in texts.items():
            doc = nlp.make_doc(text)
            doc._.kg_title_len = tlen
            yield doc

    done: dict[str, tuple[Extraction, list[tuple[int, int]]]] = {}
    for doc in nlp.pipe(gen(), batch_size=batch_size):
        tlen = texts[doc.text][0]
        sents = [(s.start_char - tlen, s.end_char - tlen) for s in sentences(doc) if s.start_char >= tlen]
        done[doc.text] = (assemble(doc, "", offset=tlen, title_len=tlen), sents)
    if corpus_names:
        lexicon = build_lexicon(ex for ex, _ in done.values())
        pattern = _pattern(lexicon)
        done = {text: (propagate(ex, texts[text][1], lexicon, pattern, sents), sents)
                for text, (ex, sents) in done.items()}
    for rec in records:
        yield dataclasses.replace(done[_text_of(rec)[0]][0], doc=rec.doc)


def extract_text(text: str, doc_id: str = "text#0", title: str | None = None) -> Extraction:
    """Extract from one abstract given as a string."""
    rec = Record(doc=doc_id, abstract=text, source="<text>", index=0, title=title)
    return next(extract_records([rec]))
