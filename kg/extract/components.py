"""spaCy components of the extraction pipeline.

Each component is a spaCy factory with a ``default_config``; ``__call__`` is
split into ``match`` (find candidates) and ``set_annotations`` (write them on
the ``Doc``). They run on ``spacy.blank("en")`` plus a sentencizer: no model.

Extensions and span groups set on the ``Doc``:

- ``Doc._.kg_github``: list of ``(start_char, end_char, url)``, the URL
  normalized to ``https://github.com/owner/repo`` (component ``kg_github``).
- ``Doc._.kg_abbreviations``: list of ``(long Span, short Span)`` pairs
  (component ``kg_abbreviations``).
- ``Doc._.kg_title_len``: number of characters of a title prepended to the
  abstract (set by the caller; 0 when there is none).
- ``Doc._.kg_keywords``: the record's author keywords (set by the caller).
- ``doc.spans["kg_proposed"]``: method names the paper introduces, label
  ``Method`` (component ``kg_proposals``).
- ``doc.spans["kg_defined"]``: abbreviation definitions typed by their head
  noun ("... Network (X)" is a Method, "... Dataset (X)" a Dataset) (component
  ``kg_defined_terms``).
- ``doc.spans["kg_gazetteer"]``: known task, dataset and method names, label
  ``Task`` / ``Dataset`` / ``Method`` (component ``kg_gazetteer``).
"""
from __future__ import annotations

import numpy
from spacy.attrs import LOWER, NORM
from spacy.language import Language
from spacy.tokens import Doc, Span

from kg.text import find_github, singular
from kg.extract.abbreviations import find_abbreviations
from kg.extract.tokens import doc_text
from kg.extract.lexicon import lookup, task_heads

for _name, _default in (("kg_github", None), ("kg_abbreviations", None), ("kg_title_len", 0), ("kg_keywords", ())):
    if not Doc.has_extension(_name):
        Doc.set_extension(_name, default=_default)


# --------------------------------------------------------------------------- base

class MatchComponent:
    """A component as spaCy's own: ``__call__`` is ``match`` then ``set_annotations``."""

    def __init__(self, nlp: Language, name: str, spans_key: str | None = None):
        self.name = name
        self.spans_key = spans_key  # the span group it sets, if it sets one

    def __call__(self, doc: Doc) -> Doc:
        self.set_annotations(doc, self.match(doc))
        return doc

    def match(self, doc: Doc):  # pragma: no cover - abstract
        raise NotImplementedError

    def set_annotations(self, doc: Doc, found) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


# --------------------------------------------------------------------------- tokens

def sent_bounds(doc: Doc) -> tuple[list[int], list[int]]:
    """Per token, the start and end token index of its sentence (computed once per doc;
    ``Token.sent`` walks the document on every call)."""
    cached = doc.user_data.get("kg_sent_bounds")
    if cached is None or len(cached[0]) != len(doc):
        starts, ends = [0] * len(doc), [len(doc)] * len(doc)
        for sent in sentences(doc):
            for i in range(sent.start, sent.end):
                starts[i], ends[i] = sent.start, sent.end
        cached = doc.user_data["kg_sent_bounds"] = (starts, ends)
    return cached


def folded_text(doc: Doc) -> str | None:
    """The lower case of :func:`doc_text` when it is ASCII (then offsets carry over
    and :func:`kg.text.occurrences` can search it with ``str.find``), else None;
    computed once."""
    if "kg_folded" not in doc.user_data:
        text = doc_text(doc)
        doc.user_data["kg_folded"] = text.lower() if text.isascii() else None
    return doc.user_data["kg_folded"]


def sentences(doc: Doc) -> list[Span]:
    """The sentences of ``doc`` as spans (computed once per doc)."""
    cached = doc.user_data.get("kg_sentences")
    if cached is None:
        cached = doc.user_data["kg_sentences"] = list(doc.sents) if doc.has_annotation("SENT_START") else [doc[:]]
    return cached


def sent_start(tok) -> int:
    return sent_bounds(tok.doc)[0][tok.i]


def sent_end(tok) -> int:
    return sent_bounds(tok.doc)[1][tok.i]


def token_norm(doc: Doc, cache: dict[int, int] | None = None) -> Doc:
    """Set ``Token.norm_`` to the lower-cased singular form, for phrase matching.

    ``cache`` maps lower-case string hashes to norm hashes already added to
    ``doc.vocab`` (pass the same dict for docs of one vocab). Norms are written
    as one array: no ``Token`` object is made.
    """
    if not len(doc):
        return doc
    cache = {} if cache is None else cache
    strings = doc.vocab.strings
    norms = []
    for h in doc.to_array(LOWER).tolist():
        n = cache.get(h)
        if n is None:
            n = cache[h] = strings.add(singular(strings[h]))
        norms.append(n)
    doc.from_array([NORM], numpy.array(norms, dtype="uint64").reshape(-1, 1))
    return doc


class TokenNorm:
    """The ``kg_token_norm`` component: :func:`token_norm` with a cache per pipeline."""

    def __init__(self, nlp: Language, name: str):
        self.name = name
        self.cache: dict[int, int] = {}

    def __call__(self, doc: Doc) -> Doc:
        return token_norm(doc, self.cache)


@Language.factory("kg_token_norm", default_config={}, assigns=["token.norm"])
def make_token_norm(nlp: Language, name: str) -> TokenNorm:
    return TokenNorm(nlp, name)


# --------------------------------------------------------------------------- github

class GithubFinder(MatchComponent):
    """Find GitHub repository URLs, also inside ``\\url{...}``; normalize them."""

    def match(self, doc: Doc) -> list[tuple[int, int, str]]:
        return find_github(doc_text(doc))

    def set_annotations(self, doc: Doc, found: list[tuple[int, int, str]]) -> None:
        doc._.kg_github = found


@Language.factory("kg_github", default_config={}, assigns=["doc._.kg_github"])
def make_github(nlp: Language, name: str) -> GithubFinder:
    return GithubFinder(nlp, name)


# --------------------------------------------------------------------------- abbreviations

class AbbreviationDetector(MatchComponent):
    """Mark "long form (SHORT)" definitions (Schwartz & Hearst)."""

    def match(self, doc: Doc) -> list[tuple[Span, Span]]:
        return find_abbreviations(doc)

    def set_annotations(self, doc: Doc, pairs: list[tuple[Span, Span]]) -> None:
        doc._.kg_abbreviations = pairs


@Language.factory("kg_abbreviations", default_config={}, assigns=["doc._.kg_abbreviations"],
                  requires=["doc.sents"])
def make_abbreviations(nlp: Language, name: str) -> AbbreviationDetector:
    return AbbreviationDetector(nlp, name)


# --------------------------------------------------------------------------- defined terms

METHOD_HEADS = frozenset(
    "network networks net nets model models algorithm algorithms method methods optimizer "
    "estimator estimators transformer transformers architecture encoder decoder autoencoder "
    "autoencoders regression descent machine machines kernel policy procedure technique "
    "prompting function distance sampler operator layer layers unit units module mechanism "
    "classifier classifiers embedding embeddings hypothesis principle".split()
)
DATASET_HEADS = frozenset("dataset datasets corpus corpora benchmark benchmarks atlas database suite".split())
#: A defined term that only modifies one of these nouns is not itself a name ("the AFA framework").
GENERIC_AFTER = frozenset("framework frameworks method methods approach approaches model models algorithm "
                          "algorithms system systems pipeline strategy problem problems task tasks setting "
                          "settings test tests".split())


def defined_type(long: Span, short: Span) -> str | None:
    """The type of an abbreviation definition from its head noun and what follows it."""
    doc = long.doc
    head = singular(long[-1].lower_)
    after = short.end + 1 if short.end < len(doc) and doc[short.end].text == ")" else short.end
    nxt = doc[after].lower_ if after < len(doc) else ""
    if head in DATASET_HEADS or nxt in DATASET_HEADS or singular(nxt) in DATASET_HEADS:
        return "Dataset"
    if nxt in GENERIC_AFTER:
        return None
    if lookup(long.text):  # the short form alone is ambiguous ("SST"): the definition decides
        return lookup(long.text)
    if long[-1].lower_ in METHOD_HEADS or head in METHOD_HEADS:
        return "Method"
    if head in task_heads():
        return "Task"
    return None


def defined_shorts(doc: Doc) -> dict[str, str | None]:
    """{short form: its type (or None when untyped)} of the abbreviations defined in ``doc``."""
    cached = doc.user_data.get("kg_defined_shorts")
    if cached is None:
        cached = doc.user_data["kg_defined_shorts"] = {
            short.text: defined_type(long, short) for long, short in doc._.kg_abbreviations or []}
    return cached


class DefinedTerms(MatchComponent):
    """Type abbreviation definitions ("Gated Spectral Unit (GSU)") by head noun and lexicon."""

    def match(self, doc: Doc) -> list[Span]:
        out = []
        for long, short in doc._.kg_abbreviations or []:
            label = defined_type(long, short)
            if label:
                out.append(Span(doc, long.start, long.end, label=label))
                out.append(Span(doc, short.start, short.end, label=label))
        return out

    def set_annotations(self, doc: Doc, spans: list[Span]) -> None:
        doc.spans[self.spans_key] = spans


@Language.factory("kg_defined_terms", default_config={"spans_key": "kg_defined"},
                  assigns=["doc.spans"], requires=["doc._.kg_abbreviations"])
def make_defined_terms(nlp: Language, name: str, spans_key: str) -> DefinedTerms:
    return DefinedTerms(nlp, name, spans_key)
