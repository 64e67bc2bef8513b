"""The ``kg_proposals`` component: the names a paper gives its own contribution.

Cues, each general to how abstracts announce a contribution:

- a proposal verb with the paper as subject ("we propose / introduce /
  present / develop X", "by introducing X", "X is proposed") and the first
  name in its object, or an abbreviation definition in that object;
- naming: "called / termed / dubbed / named X", "which we call X", "we refer
  to (it) as X", "our key contribution is X";
- apposition: "X, a novel ...", "Our method, X, ...";
- a Title-Case abbreviation definition ("Moment Transform Projection (MTP)")
  that no lexicon knows, in a paper that proposes something;
- the name before the colon of the title ("TAROT: ...").

Sets ``doc.spans["kg_proposed"]`` (label ``Method``).
"""
from __future__ import annotations

from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.util import filter_spans

from kg.text import occurrences
from kg.extract.components import (DATASET_HEADS, MatchComponent, defined_shorts, defined_type, folded_text, sent_start,
                         sentences)
from kg.extract.lexicon import lookup
from kg.extract.shapes import GENERIC_ACRONYMS, is_name_like
from kg.extract.tokens import doc_text, token_texts

PROPOSE_VERBS = frozenset(
    "propose proposes proposed proposing introduce introduces introduced introducing present presents "
    "presented presenting develop develops developed developing design designs designed designing devise "
    "devises devised devising contribute contributes formulate formulates unveil unveils release releases "
    "build builds construct constructs".split()
)
NAMING_WORDS = frozenset("called termed dubbed named coined".split())
SUBJECTS = frozenset("we our paper work study article".split())
#: Words that end the noun phrase right after a proposal verb.
BOUNDARY = frozenset(
    "that which who to for by with in on of where whose when while because via using based than as and "
    "or but toward towards against across under over from into through at within between among".split()
)
SKIPPABLE = frozenset(
    "a an the our this its their new novel simple general principled unified efficient effective first "
    "scalable lightweight practical generic versatile powerful flexible following".split()
)
CONTRIBUTION = frozenset("innovation contribution idea component ingredient insight".split())


def is_title_word(text: str) -> bool:
    return len(text) > 1 and text[0].isupper() and text[1:].replace("-", "").isalpha()


def name_run(doc: Doc, i: int, end: int) -> Span | None:
    """The longest run of name words starting at ``i`` (name-like or Title-case)."""
    if i < end and doc[i].text in defined_shorts(doc):
        long = next(lg for lg, sh in doc._.kg_abbreviations if sh.text == doc[i].text)
        if defined_shorts(doc)[doc[i].text] in ("Task", "Dataset") or not _title_case_phrase(long):
            # "for CL" after "continual learning (CL)", "a new CI test" after "conditional
            # independence (CI)": the acronym of a common noun phrase is not a new name
            return None
    j = i
    while j < end and (is_name_like(doc[j].text) or is_title_word(doc[j].text)):
        j += 1
    if j == i:
        return None
    span = doc[i:j]
    if not any(is_name_like(t.text) for t in span) and len(span) == 1:
        # A lone Title-case word is a name only when set off: "Salvage," / "Salvage (".
        nxt = doc[j].text if j < len(doc) else ""
        if nxt not in {",", "(", ":", ";", "."}:
            return None
    if len(span) == 1 and lookup(span.text):
        return None  # a known method or dataset named in passing ("we use Adam")
    nxt = doc[j].lower_ if j < len(doc) else ""
    if span[-1].lower_ in DATASET_HEADS or nxt in DATASET_HEADS:
        return None  # "the Coral Reef Survey Dataset": a dataset the paper introduces, not a method
    return span


def _title_case_phrase(span: Span) -> bool:
    words = [t for t in span if t.is_alpha or "-" in t.text]
    caps = [t for t in words if is_title_word(t.text) or is_name_like(t.text)]
    small = [t for t in words if t.lower_ in {"of", "for", "and", "to", "in", "on", "with", "the", "a"}]
    return len(span) >= 2 and len(caps) >= 2 and len(caps) + len(small) == len(words) and span[0].text[0].isupper()


def _used_before(doc: Doc, span: Span) -> bool:
    """Whether the abstract used this term before the sentence that holds ``span``: then it is
    not the paper's new name ("Active Feature Acquisition is ..." then "we propose an AFA
    framework"). The title does not count."""
    return _first_use(doc, span.text) < doc[sent_start(span[0])].idx


def _first_use(doc: Doc, term: str) -> int:
    """Char index of the first word-bounded, case-insensitive use of ``term`` after the
    title (cached per doc), or the text length."""
    cache = doc.user_data.setdefault("kg_first_use", {})
    key = term.lower()
    if key not in cache:
        text = doc_text(doc)
        found = occurrences(key, text, folded_text(doc), doc._.kg_title_len or 0, ignore_case=True, first=True)
        cache[key] = found[0][0] if found else len(text)
    return cache[key]


class ProposalFinder(MatchComponent):
    """Find the names a paper gives its own contribution (see the module docstring)."""

    def __init__(self, nlp: Language, name: str, window: int, spans_key: str = "kg_proposed"):
        super().__init__(nlp, name, spans_key)
        self.window = window

    def match(self, doc: Doc) -> list[Span]:
        found: list[Span] = []
        abbrevs = doc._.kg_abbreviations or []
        title_len = doc._.kg_title_len or 0
        for sent in sentences(doc):
            if title_len and sent.start_char < title_len:
                found.extend(self._title_name(doc, sent, title_len))
                continue
            found.extend(self._after_verb(doc, sent, abbrevs))
            found.extend(self._naming(doc, sent, abbrevs))
            found.extend(self._appositive(doc, sent))
        first = self._first_proposal(doc)
        if first is not None:
            found.extend(self._own_definitions(doc, abbrevs, first))
        return found

    @staticmethod
    def _first_proposal(doc: Doc) -> int | None:
        """Start char of the first sentence where the paper proposes something, if any."""
        lowers = token_texts(doc)[1]
        for i, low in enumerate(lowers):
            if low not in PROPOSE_VERBS or low in {"build", "builds", "construct", "constructs"}:
                continue
            t = doc[i]
            if any(w in SUBJECTS for w in lowers[sent_start(t):i]):
                return doc[sent_start(t)].idx
        return None

    def _title_name(self, doc: Doc, sent: Span, title_len: int) -> list[Span]:
        """The name before the title's colon: "TAROT: Targeted Data Selection ..."."""
        colon = next((t.i for t in sent if t.text == ":" and t.idx < title_len), None)
        if colon is None or colon - sent.start > 4 or colon == sent.start:
            return []
        span = doc[sent.start:colon]
        names = [t for t in span if is_name_like(t.text)]
        if len(names) == 1 and len(span) > 1 and not all(is_title_word(t.text) or is_name_like(t.text) for t in span[:2]):
            span = doc[names[0].i:names[0].i + 1]
        elif len(names) == 1 and len(span) > 2:
            span = doc[names[0].i:names[0].i + 1]  # "STAMP Your Content: ..." names STAMP
        elif not names:
            # A plain word ("Position: ...", "Salvage: ...") is a name only if the abstract uses it as one.
            abstract = doc_text(doc)[title_len:]
            if len(span) != 1 or not is_title_word(span.text) or f" {span.text}" not in f" {abstract}":
                return []
        if lookup(span.text) or span.text.lower() in GENERIC_ACRONYMS:
            return []
        return [Span(doc, span.start, span.end, label="Method")]

    def _pair_spans(self, doc: Doc, long: Span, short: Span, allow_task: bool = False) -> list[Span]:
        kind = defined_type(long, short)
        if short.text.lower() in GENERIC_ACRONYMS or kind == "Dataset" or (kind == "Task" and not allow_task):
            return []
        if _used_before(doc, long) or _used_before(doc, short):
            return []
        return [Span(doc, long.start, long.end, label="Method"), Span(doc, short.start, short.end, label="Method")]

    def _after_verb(self, doc: Doc, sent: Span, abbrevs) -> list[Span]:
        out = []
        for tok in sent:
            if tok.lower_ not in PROPOSE_VERBS:
                continue
            before = {t.lower_ for t in doc[sent.start:tok.i]}
            passive = tok.i > sent.start and doc[tok.i - 1].lower_ in {"is", "are", "was", "were"}
            gerund = tok.lower_.endswith("ing") and tok.i > sent.start and doc[tok.i - 1].lower_ == "by"
            if not (before & SUBJECTS) and not passive and not gerund:
                continue
            end = min(sent.end, tok.i + 1 + self.window)
            # The object noun phrase ends at the first boundary word after the verb's object starts.
            i = tok.i + 1
            while i < end and (doc[i].lower_ in SKIPPABLE or doc[i].text in {",", "-"}):
                i += 1
            stop = next((k for k in range(i, end) if doc[k].lower_ in BOUNDARY or doc[k].text in {".", ";", ":"}), end)
            for long, short in abbrevs:
                if tok.i < long.start < stop + 1 and short.end <= end:
                    # right after the verb, even a task-shaped name is the new method:
                    # "we propose residual token pruning (RTP)"
                    out.extend(self._pair_spans(doc, long, short, allow_task=long.start == i))
            if passive or out:
                if out:
                    break
                continue
            k = i
            while k < stop:
                run = name_run(doc, k, end)
                if run is not None:
                    if not _used_before(doc, run):
                        out.append(Span(doc, run.start, run.end, label="Method"))
                    break
                k += 1
            if k >= stop and stop < end and doc[stop].text == "," and not out:
                # "a new method, X, ..." : one appositive after the comma.
                run = name_run(doc, stop + 1, end)
                if run is not None:
                    out.append(Span(doc, run.start, run.end, label="Method"))
            break
        return out

    def _naming(self, doc: Doc, sent: Span, abbrevs) -> list[Span]:
        out = []
        for tok in sent:
            low = tok.lower_
            start = None
            explicit = False
            if low in NAMING_WORDS:
                if tok.i > sent.start and doc[tok.i - 1].lower_ in {"so", "-", "so-"}:
                    continue
                start = tok.i + 1
            elif low == "call" and tok.i > sent.start and doc[tok.i - 1].lower_ == "we":
                start, explicit = tok.i + 1, True
            elif low in {"refer", "refers"} and tok.i + 2 < sent.end:
                k = tok.i + 1
                if doc[k].lower_ in {"to"}:
                    k += 1
                    if doc[k].lower_ in {"it", "this", "them"}:
                        k += 1
                    if k < sent.end and doc[k].lower_ == "as":
                        start, explicit = k + 1, True
            elif low == "is" and tok.i - 1 > sent.start and doc[tok.i - 1].lower_ in CONTRIBUTION:
                start = tok.i + 1
            if start is None:
                continue
            while start < sent.end and (doc[start].text in {'"', "“", "'", "`", "``", "*"}
                                        or doc[start].lower_ in {"as", "it", "this", "the", "a", "an", "our"}):
                start += 1
            pair = next(((lg, sh) for lg, sh in abbrevs if lg.start == start), None)
            if pair is not None:
                out.extend(self._pair_spans(doc, *pair))
                continue
            run = name_run(doc, start, sent.end)
            if run is not None:
                out.append(Span(doc, run.start, run.end, label="Method"))
            elif explicit:
                # "which we call cross-class features." : a lower-case name up to the clause end.
                k = start
                while k < sent.end and k - start < 4 and doc[k].text not in {".", ",", ";", ":", "(", ")"}:
                    k += 1
                if k > start and (k == sent.end or doc[k].text in {".", ",", ";", "("}):
                    out.append(Span(doc, start, k, label="Method"))
        return out

    def _appositive(self, doc: Doc, sent: Span) -> list[Span]:
        """ "X, a novel ..." at sentence start, and "Our method, X, ..." """
        out = []
        run = name_run(doc, sent.start, sent.end)
        if run is not None and run.end + 2 < sent.end and doc[run.end].text == ",":
            nxt = [t.lower_ for t in doc[run.end + 1:min(sent.end, run.end + 4)]]
            if nxt[:1] in (["a"], ["an"]) and {"novel", "new"} & set(nxt):
                out.append(Span(doc, run.start, run.end, label="Method"))
        for tok in sent:
            if tok.lower_ == "our" and tok.i + 3 < sent.end and doc[tok.i + 2].text == ",":
                run = name_run(doc, tok.i + 3, sent.end)
                if run is not None and run.end < sent.end and doc[run.end].text == ",":
                    out.append(Span(doc, run.start, run.end, label="Method"))
        return out

    def _own_definitions(self, doc: Doc, abbrevs, first: int) -> list[Span]:
        """Title-Case definitions nobody knows, from the paper's first proposal on."""
        out = []
        for long, short in abbrevs:
            if long.start_char < first:
                continue
            if not _title_case_phrase(long) or lookup(long.text) or lookup(short.text):
                continue
            if long.start_char < (doc._.kg_title_len or 0):
                continue
            out.extend(self._pair_spans(doc, long, short))
        return out

    def set_annotations(self, doc: Doc, spans: list[Span]) -> None:
        doc.spans[self.spans_key] = filter_spans(spans)


@Language.factory("kg_proposals", default_config={"window": 20, "spans_key": "kg_proposed"},
                  assigns=["doc.spans"], requires=["doc.sents", "doc._.kg_abbreviations"])
def make_proposals(nlp: Language, name: str, window: int, spans_key: str) -> ProposalFinder:
    return ProposalFinder(nlp, name, window, spans_key)
