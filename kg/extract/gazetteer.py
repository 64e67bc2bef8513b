"""The ``kg_gazetteer`` component: known method, dataset and task names.

Names with capitals or digits match case-sensitively ("Adam", "GPT-4",
"CIFAR-10"); lower-case names and multi-word names match on the token norm
(lower case, singular), so "Sparse autoencoders" finds "sparse autoencoder".
Each span's ``kb_id_`` is the entry's canonical name, so that spellings of one
entity in one abstract ("SGD", "stochastic gradient descent") merge.

Sets ``doc.spans["kg_gazetteer"]`` (labels ``Method`` / ``Dataset`` / ``Task``).
"""
from __future__ import annotations

import re

from spacy.language import Language
from spacy.matcher import PhraseMatcher
from spacy.tokens import Doc, Span
from spacy.util import filter_spans

from kg.extract.components import MatchComponent, token_norm
from kg.extract.lexicon import entries


_VERSION = re.compile(r"^(?:v?\d+(?:\.\d+)*[a-z]?|XL|XXL)$")


def _case_sensitive(form: str, type_: str) -> bool:
    """Single names with capitals or digits, and dataset names with capitals, match as written."""
    caps = any(c.isupper() for c in form)
    return (len(form.split()) == 1 and (caps or any(c.isdigit() for c in form))) or (type_ == "Dataset" and caps)


class Gazetteer(MatchComponent):
    """Match gazetteer names; ``types`` limits the entry types used."""

    def __init__(self, nlp: Language, name: str, types: list[str], spans_key: str = "kg_gazetteer"):
        super().__init__(nlp, name, spans_key)
        self.exact = PhraseMatcher(nlp.vocab, attr="ORTH")
        self.norm = PhraseMatcher(nlp.vocab, attr="NORM")
        exact: dict[str, list] = {}
        norm: dict[str, list] = {}
        norms: dict[int, int] = {}
        for e in entries():
            if e.type not in types:
                continue
            key = f"{e.type}|{e.canonical}"
            for form in e.forms:
                if _case_sensitive(form, e.type):
                    exact.setdefault(key, []).append(nlp.make_doc(form))
                    continue
                variants = [form, form.replace("-", " ")]
                if len(form.split()) == 2:
                    variants.append(form.replace(" ", "-"))  # "instruction following" / "instruction-following"
                for variant in dict.fromkeys(variants):
                    doc = nlp.make_doc(variant)
                    token_norm(doc, norms)
                    norm.setdefault(key, []).append(doc)
        for key, docs in exact.items():
            self.exact.add(key, docs)
        for key, docs in norm.items():
            self.norm.add(key, docs)

    def match(self, doc: Doc) -> list[Span]:
        spans = []
        for matcher in (self.exact, self.norm):
            for match_id, start, end in matcher(doc):
                type_, canonical = doc.vocab.strings[match_id].split("|", 1)
                if type_ == "Method" and end < len(doc) and _VERSION.match(doc[end].text):
                    # "Stable Diffusion 3.5", "Llama 2": a version number names the model
                    spans.append(Span(doc, start, end + 1, label=type_))
                    continue
                spans.append(Span(doc, start, end, label=type_, kb_id=canonical))
        return filter_spans(spans)

    def set_annotations(self, doc: Doc, spans: list[Span]) -> None:
        doc.spans[self.spans_key] = spans


@Language.factory("kg_gazetteer", default_config={"types": ["Method", "Dataset", "Task"], "spans_key": "kg_gazetteer"},
                  assigns=["doc.spans"], requires=["token.norm"])
def make_gazetteer(nlp: Language, name: str, types: list[str], spans_key: str) -> Gazetteer:
    return Gazetteer(nlp, name, types, spans_key)
