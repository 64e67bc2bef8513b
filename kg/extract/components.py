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
- ``doc.spans["kg_proposed"]``: method names the paper introduces, label
  ``Method`` (component ``kg_proposals``).
- ``doc.spans["kg_defined"]``: abbreviation definitions typed by their head
  noun ("... Network (X)" is a Method, "... Dataset (X)" a Dataset) (component
  ``kg_defined_terms``).
- ``doc.spans["kg_gazetteer"]``: known task, dataset and method names, label
  ``Task`` / ``Dataset`` / ``Method`` (component ``kg_gazetteer``).
"""
from __future__ import annotations

from importlib import resources

from spacy.language import Language
from spacy.matcher import PhraseMatcher
from spacy.tokens import Doc, Span
from spacy.util import filter_spans

from ..text import find_github, singular
from .abbreviations import find_abbreviations

for _name, _default in (("kg_github", None), ("kg_abbreviations", None), ("kg_title_len", 0)):
    if not Doc.has_extension(_name):
        Doc.set_extension(_name, default=_default)


# --------------------------------------------------------------------------- tokens

@Language.component("kg_token_norm")
def token_norm(doc: Doc) -> Doc:
    """Set ``Token.norm_`` to the lower-cased singular form, for phrase matching."""
    for tok in doc:
        tok.norm_ = singular(tok.lower_)
    return doc


# --------------------------------------------------------------------------- github

class GithubFinder:
    """Find GitHub repository URLs, also inside ``\\url{...}``; normalize them."""

    def __init__(self, nlp: Language, name: str):
        self.name = name

    def __call__(self, doc: Doc) -> Doc:
        self.set_annotations(doc, self.match(doc))
        return doc

    def match(self, doc: Doc) -> list[tuple[int, int, str]]:
        return find_github(doc.text)

    def set_annotations(self, doc: Doc, found: list[tuple[int, int, str]]) -> None:
        doc._.kg_github = found


@Language.factory("kg_github", default_config={})
def make_github(nlp: Language, name: str) -> GithubFinder:
    return GithubFinder(nlp, name)


# --------------------------------------------------------------------------- abbreviations

class AbbreviationDetector:
    """Mark "long form (SHORT)" definitions (Schwartz & Hearst)."""

    def __init__(self, nlp: Language, name: str):
        self.name = name

    def __call__(self, doc: Doc) -> Doc:
        self.set_annotations(doc, self.match(doc))
        return doc

    def match(self, doc: Doc) -> list[tuple[Span, Span]]:
        return find_abbreviations(doc)

    def set_annotations(self, doc: Doc, pairs: list[tuple[Span, Span]]) -> None:
        doc._.kg_abbreviations = pairs


@Language.factory("kg_abbreviations", default_config={})
def make_abbreviations(nlp: Language, name: str) -> AbbreviationDetector:
    return AbbreviationDetector(nlp, name)


# --------------------------------------------------------------------------- proposals

#: Acronyms of fields and generic families: never a paper's own method name.
GENERIC_ACRONYMS = frozenset(
    "ai ml dl nlp cv rl llm llms lm lms vlm vlms mllm mllms dnn dnns cnn cnns rnn rnns gnn gnns "
    "gpu gpus cpu cpus api apis sota iid ood pde pdes ode odes mlp mlps nn nns".split()
)
PROPOSE_VERBS = frozenset(
    "propose proposes proposed introduce introduces introduced present presents presented "
    "develop develops developed design designs designed devise devises devised "
    "contribute contributes formulate formulates unveil unveils release releases".split()
)
NAMING_WORDS = frozenset("called termed dubbed named coined".split())
SUBJECTS = frozenset("we paper work study article".split())
#: Words that end the noun phrase right after a proposal verb.
BOUNDARY = frozenset(
    "that which who to for by with in on of where whose when while because via using based "
    "than as and or but to".split()
)
SKIPPABLE = frozenset(
    "a an the our this its their new novel simple general principled unified efficient effective "
    "first scalable lightweight practical generic versatile powerful flexible".split()
)


def is_name_like(text: str) -> bool:
    """A token that looks like a proper method name: inner capitals or letters with digits.

    >>> [is_name_like(t) for t in ["LoRanPAC", "TAROT", "difFOCI", "DistiLLM-2", "network", "Adam", "LLMs"]]
    [True, True, True, True, False, False, False]
    """
    if len(text) < 2 or not any(c.isalpha() for c in text) or text.lower() in GENERIC_ACRONYMS:
        return False
    return any(c.isupper() for c in text[1:]) or (
        any(c.isdigit() for c in text) and any(c.isalpha() for c in text) and text[0].isalpha()
    )


def _is_title_word(text: str) -> bool:
    return text[:1].isupper() and text[1:].replace("-", "").isalpha() and len(text) > 1


def _name_run(doc: Doc, i: int, end: int) -> Span | None:
    """The longest run of name words starting at ``i`` (name-like or Title-case)."""
    j = i
    while j < end and (is_name_like(doc[j].text) or _is_title_word(doc[j].text)):
        j += 1
    if j == i:
        return None
    # Trim Title-case words at the edges that are ordinary sentence words.
    span = doc[i:j]
    names = [t for t in span if is_name_like(t.text)]
    if not names and len(span) == 1:
        # A lone Title-case word is a name only when set off: "Salvage," / "Salvage (".
        nxt = doc[j].text if j < len(doc) else ""
        if nxt not in {",", "(", ":", ";", "."} and not (nxt == "-" or nxt == "—"):
            return None
    return span


class ProposalFinder:
    """Find the names a paper gives its own contribution.

    Cues: "we propose / introduce / present X", "called / termed / dubbed X",
    "X, a novel ...", "our method, X, ...", abbreviation definitions right
    after a proposal verb, and a name before the colon of the title.
    """

    def __init__(self, nlp: Language, name: str, window: int):
        self.name = name
        self.window = window

    def __call__(self, doc: Doc) -> Doc:
        self.set_annotations(doc, self.match(doc))
        return doc

    def match(self, doc: Doc) -> list[Span]:
        found: list[Span] = []
        abbrevs = doc._.kg_abbreviations or []
        title_len = doc._.kg_title_len or 0
        for sent in doc.sents:
            if title_len and sent.start_char < title_len:
                found.extend(self._title_name(doc, sent, title_len))
                continue
            found.extend(self._after_verb(doc, sent, abbrevs))
            found.extend(self._naming(doc, sent))
            found.extend(self._appositive(doc, sent))
        return found

    def _title_name(self, doc: Doc, sent: Span, title_len: int) -> list[Span]:
        colon = next((t.i for t in sent if t.text == ":" and t.idx < title_len), None)
        if colon is None or colon - sent.start > 4 or colon == sent.start:
            return []
        span = doc[sent.start:colon]
        if any(is_name_like(t.text) for t in span) or (len(span) == 1 and _is_title_word(span.text)):
            return [Span(doc, span.start, span.end, label="Method")]
        return []

    def _after_verb(self, doc: Doc, sent: Span, abbrevs) -> list[Span]:
        out = []
        for tok in sent:
            if tok.lower_ not in PROPOSE_VERBS:
                continue
            before = {t.lower_ for t in doc[max(sent.start, tok.i - 4):tok.i]}
            passive = tok.i > sent.start and doc[tok.i - 1].lower_ in {"is", "are", "was"}
            if not (before & SUBJECTS) and not passive:
                continue
            end = min(sent.end, tok.i + 1 + self.window)
            # Abbreviation definitions in the object: "we introduce the X Network (XN)".
            for long, short in abbrevs:
                if tok.i < long.start and short.end <= end:
                    out.append(Span(doc, long.start, long.end, label="Method"))
                    out.append(Span(doc, short.start, short.end, label="Method"))
            if passive:
                continue
            # The first name in the noun phrase right after the verb.
            i = tok.i + 1
            while i < end and (doc[i].lower_ in SKIPPABLE or doc[i].text in {",", "-"}):
                i += 1
            while i < end and doc[i].lower_ not in BOUNDARY and doc[i].text not in {".", ";", ":"}:
                run = _name_run(doc, i, end)
                if run is not None:
                    out.append(Span(doc, run.start, run.end, label="Method"))
                    break
                if doc[i].text == ",":
                    # "a new framework, X, ..." : look past one comma only.
                    i += 1
                    continue
                i += 1
            break
        return out

    def _naming(self, doc: Doc, sent: Span) -> list[Span]:
        out = []
        for tok in sent:
            if tok.lower_ not in NAMING_WORDS or tok.i + 1 >= sent.end:
                continue
            if tok.i > sent.start and doc[tok.i - 1].lower_ in {"so", "-", "so-"}:
                continue
            i = tok.i + 1
            while i < sent.end and doc[i].text in {'"', "“", "'", "`", "``", "as", "it"}:
                i += 1
            run = _name_run(doc, i, sent.end)
            if run is not None:
                out.append(Span(doc, run.start, run.end, label="Method"))
        return out

    def _appositive(self, doc: Doc, sent: Span) -> list[Span]:
        """ "X, a novel ..." at sentence start, and "Our method, X, ..." """
        out = []
        run = _name_run(doc, sent.start, sent.end)
        if run is not None and run.end + 2 < sent.end and doc[run.end].text == ",":
            nxt = [t.lower_ for t in doc[run.end + 1:min(sent.end, run.end + 4)]]
            if nxt[:1] in (["a"], ["an"]) and {"novel", "new"} & set(nxt):
                out.append(Span(doc, run.start, run.end, label="Method"))
        for tok in sent:
            if tok.lower_ == "our" and tok.i + 3 < sent.end and doc[tok.i + 2].text == ",":
                run = _name_run(doc, tok.i + 3, sent.end)
                if run is not None and run.end < sent.end and doc[run.end].text == ",":
                    out.append(Span(doc, run.start, run.end, label="Method"))
        return out

    def set_annotations(self, doc: Doc, spans: list[Span]) -> None:
        doc.spans["kg_proposed"] = filter_spans(spans)


@Language.factory("kg_proposals", default_config={"window": 20})
def make_proposals(nlp: Language, name: str, window: int) -> ProposalFinder:
    return ProposalFinder(nlp, name, window)


# --------------------------------------------------------------------------- defined terms

METHOD_HEADS = frozenset(
    "network networks net nets model models algorithm algorithms method methods optimizer "
    "estimator estimators transformer transformers framework architecture attention "
    "encoder decoder autoencoder regression descent machine machines kernel policy "
    "procedure technique techniques strategy scheme prompting tuning function metric "
    "distance sampler sampling".split()
)
DATASET_HEADS = frozenset("dataset datasets corpus corpora benchmark benchmarks atlas database suite".split())


class DefinedTerms:
    """Type abbreviation definitions by the head noun of their long form."""

    def __init__(self, nlp: Language, name: str):
        self.name = name

    def __call__(self, doc: Doc) -> Doc:
        self.set_annotations(doc, self.match(doc))
        return doc

    def match(self, doc: Doc) -> list[Span]:
        out = []
        for long, short in doc._.kg_abbreviations or []:
            head = long[-1].lower_
            nxt = doc[short.end + 1].lower_ if short.end + 1 < len(doc) else ""
            label = None
            if head in DATASET_HEADS or nxt in DATASET_HEADS:
                label = "Dataset"
            elif head in METHOD_HEADS:
                label = "Method"
            if label:
                out.append(Span(doc, long.start, long.end, label=label))
                out.append(Span(doc, short.start, short.end, label=label))
        return out

    def set_annotations(self, doc: Doc, spans: list[Span]) -> None:
        doc.spans["kg_defined"] = spans


@Language.factory("kg_defined_terms", default_config={})
def make_defined_terms(nlp: Language, name: str) -> DefinedTerms:
    return DefinedTerms(nlp, name)


# --------------------------------------------------------------------------- gazetteer

def load_names(kind: str) -> list[str]:
    """Names of one cleaned gazetteer shipped in ``kg/resources`` (tasks, datasets, methods)."""
    text = (resources.files("kg") / "resources" / f"{kind}.txt").read_text(encoding="utf-8")
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]


class Gazetteer:
    """Match known task (case-insensitive, singular), dataset and method names."""

    def __init__(self, nlp: Language, name: str, tasks: bool, datasets: bool, methods: bool):
        self.name = name
        self.task_matcher = PhraseMatcher(nlp.vocab, attr="NORM")
        self.name_matcher = PhraseMatcher(nlp.vocab, attr="ORTH")
        if tasks:
            patterns = []
            for n in load_names("tasks"):
                for variant in {n, n.replace("-", " ")}:
                    doc = nlp.make_doc(variant)
                    token_norm(doc)
                    patterns.append(doc)
            self.task_matcher.add("Task", patterns)
        if datasets:
            self.name_matcher.add("Dataset", [nlp.make_doc(n) for n in load_names("datasets")])
        if methods:
            self.name_matcher.add("Method", [nlp.make_doc(n) for n in load_names("methods")])

    def __call__(self, doc: Doc) -> Doc:
        self.set_annotations(doc, self.match(doc))
        return doc

    def match(self, doc: Doc) -> list[Span]:
        spans = self.task_matcher(doc, as_spans=True) + self.name_matcher(doc, as_spans=True)
        return filter_spans(spans)

    def set_annotations(self, doc: Doc, spans: list[Span]) -> None:
        doc.spans["kg_gazetteer"] = spans


@Language.factory("kg_gazetteer", default_config={"tasks": True, "datasets": True, "methods": True})
def make_gazetteer(nlp: Language, name: str, tasks: bool, datasets: bool, methods: bool) -> Gazetteer:
    return Gazetteer(nlp, name, tasks, datasets, methods)

