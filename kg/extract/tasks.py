"""The ``kg_tasks`` component: research tasks named by their shape and context.

A candidate is a run of 1-3 modifier words before a task head noun (the
nominalizations that end task names: "... localization", "... attribution",
"... learning"; see ``kg/resources/task_heads.txt``). It is kept when its
context says the paper works on it:

- a task noun follows ("complex reasoning tasks", "the X problem", "X methods",
  "X benchmarks");
- a cue precedes ("for X", "in X", "performance on X", "the goal / problem of
  X", "address X", "a tool for investigating X", "tasks such as X, Y and Z",
  "applications: X and Y");
- it opens a sentence as its subject ("Dataset distillation has emerged ...");
- it is in the title;
- it occurs twice or more in the abstract;
- or it is coordinated with a kept candidate ("X, Y, and Z").

Verb phrases name tasks too: "localizing feature shifts" is a form of
"feature shift localization"; such a phrase joins a task of the same key, or
stands on its own when it opens a sentence or recurs.

Sets ``doc.spans["kg_tasks"]`` (label ``Task``, ``kb_id_`` = canonical name).
"""
from __future__ import annotations

from functools import lru_cache

from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.util import filter_spans

from kg.text import compact_key, singular
from kg.extract.components import MatchComponent, sent_end, sent_start
from kg.extract.lexicon import DESCRIPTIVE_SUFFIXES, STOP, lookup, task_heads
from kg.extract.tokens import token_texts

FOLLOWERS = frozenset("task tasks problem problems benchmark benchmarks setting settings method methods "
                      "approaches algorithms applications application domain domains literature community "
                      "pipelines systems".split())
CUE_BEFORE = frozenset("for in address addresses addressing tackle tackles tackling solve solves solving "
                       "study studies studying toward towards improves improve enhance enhances".split())
OF_NOUNS = frozenset("problem task goal field area challenge setting context study domain".split())
LIST_NOUNS = frozenset("tasks applications problems domains settings areas scenarios".split())
SUBJECT_VERBS = frozenset("is are has have aims aim seeks seek refers explains remains involves enables plays was "
                          "were can ( — --- – offers poses allows".split())
BROAD = frozenset("machine learning|deep learning|statistical learning|learning|artificial intelligence|"
                  "representation|model training|neural network training".split("|"))
MAX_MODIFIERS = 3


def _modifier(tok, sentence_start: bool, title: bool = False) -> bool:
    """Whether ``tok`` can modify a task head; ``title``: the head is Title-Case ("Active Feature Acquisition")."""
    text = tok.text
    if tok.lower_ in STOP or not text.replace("-", "").isalpha() or len(text) < 2:
        return False
    if text.isupper() or any(c.isupper() for c in text[1:]):
        return False  # acronyms and names are not task words
    if text[0].isupper() and not (sentence_start or title):
        return False
    low = tok.lower_
    if low.endswith(DESCRIPTIVE_SUFFIXES) or (low.endswith("ly") and len(low) > 4):
        return False  # "memory-efficient optimization", "successfully training"
    if low.endswith("s") and not low.endswith(("ss", "us", "is", "ics")):
        return False  # modifiers are singular; a plural or a verb in -s ends the phrase
    return lookup(text) in (None, "Task")


def _object_head(tok) -> bool:
    """A plural noun ending a verb's object ("shifts", "images")."""
    low = tok.lower_
    return (tok.is_alpha and tok.is_lower and low.endswith("s") and not low.endswith(("ss", "us", "is"))
            and low not in STOP and len(low) > 3)


@lru_cache(maxsize=1 << 16)  # asked for every lower-case word
def _nominal(verb: str) -> str | None:
    """The task head of a verb form: "localizing" -> "localization", "detect" -> "detection"."""
    heads = task_heads()
    v = verb.lower()
    stems = []
    if v.endswith("ing") and len(v) > 5:
        stems.append(v[:-3])
        stems.append(v[:-3] + "e")
    else:
        stems.append(v)
    for stem in stems:
        for cand in (stem + "ion", stem + "ation", stem[:-1] + "ation" if stem.endswith("e") else "",
                     stem[:-1] + "ication" if stem.endswith("y") else "", stem + "al"):
            if cand and cand in heads and cand not in {"learning"}:
                return cand
    return None


@lru_cache(maxsize=1 << 16)
def _head_kind(low: str) -> str | None:
    """How a token (its lower case) can end a task name: "compound" for a hyphenated word
    ending in a task head ("rule-learning"), "head" for a task head, else None."""
    heads = task_heads()
    parts = low.split("-")
    if len(parts) > 1 and parts[-1] in heads and all(p.isalpha() for p in parts) and parts[0] not in STOP:
        return "compound"
    return "head" if singular(low) in heads or low in heads else None


class TaskFinder(MatchComponent):
    """Find task names by their head noun and the words around them (and the known
    ones in the gazetteer's span group, ``gazetteer_key``)."""

    def __init__(self, nlp: Language, name: str, spans_key: str = "kg_tasks", gazetteer_key: str = "kg_gazetteer"):
        super().__init__(nlp, name, spans_key)
        self.gazetteer_key = gazetteer_key

    def candidates(self, doc: Doc) -> list[tuple[Span, str]]:
        """(span, canonical name) of every noun-phrase and verb-phrase candidate."""
        out = []
        texts, lowers = token_texts(doc)
        for i, low in enumerate(lowers):
            kind = _head_kind(low)
            if kind is None:
                continue
            tok = doc[i]
            if kind == "compound":
                # "rule-learning", "feature-learning": a task written as one hyphenated word
                parts = low.split("-")
                j = tok.i
                while j > sent_start(tok) and tok.i - j < MAX_MODIFIERS - 1 and _modifier(doc[j - 1], j - 1 == sent_start(tok)):
                    j -= 1
                out.append((doc[j:tok.i + 1], " ".join([t.lower_ for t in doc[j:tok.i]] + parts)))
                continue
            if not tok.is_alpha or (tok.text[0].isupper() and tok.i != sent_start(tok) and not tok.text.istitle()):
                continue
            j = tok.i
            title = tok.text.istitle() and tok.i != sent_start(tok)
            while j > sent_start(tok) and tok.i - j < MAX_MODIFIERS and _modifier(doc[j - 1], j - 1 == sent_start(tok), title):
                j -= 1
            if j == tok.i:
                continue
            while j < tok.i and doc[j].lower_.endswith("ing") and not (j == sent_start(tok) and doc[j].text[0].isupper()):
                j += 1  # a leading verb form is not part of the name ("including X", "preventing X")
            if j == tok.i:
                continue
            span = doc[j:tok.i + 1]
            mixed = any(t.text[0].isupper() for t in span[1:]) and not all(t.text[0].isupper() for t in span)
            if mixed:
                continue
            canonical = " ".join(t.lower_ for t in span[:-1]) + " " + singular(tok.lower_)
            if canonical in BROAD:
                continue
            out.append((span, canonical))
        # verb phrases: "localizing feature shifts", "to localize feature shifts"
        for i, text in enumerate(texts):
            # spaCy's is_alpha / is_lower of English are str.isalpha / str.islower of the text
            nominal = _nominal(text) if text.isalpha() and text.islower() else None
            if nominal is None:
                continue
            tok = doc[i]
            if tok.i + 1 >= sent_end(tok):
                continue
            k = tok.i + 1
            while k < sent_end(tok) and k - tok.i <= MAX_MODIFIERS and _modifier(doc[k], False):
                k += 1
            if k < sent_end(tok) and k - tok.i <= MAX_MODIFIERS and _object_head(doc[k]):
                k += 1  # the object's head may be plural: "localize feature shifts"
            if k == tok.i + 1 or k - tok.i > MAX_MODIFIERS:
                continue
            obj = [singular(t.lower_) for t in doc[tok.i + 1:k]]
            out.append((doc[tok.i:k], " ".join(obj) + " " + nominal))
        return out

    def match(self, doc: Doc) -> list[Span]:
        gaz = list(doc.spans.get(self.gazetteer_key, []))
        other = bytearray(len(doc))  # tokens inside a known method or dataset name
        known: dict[int, int] = {}  # start -> end of known task names
        for g in gaz:
            if g.label_ == "Task":
                known[g.start] = max(known.get(g.start, 0), g.end)
            else:
                other[g.start:g.end] = b"\x01" * (g.end - g.start)
        self._known_tasks = known
        cands = [(s, c) for s, c in self.candidates(doc) if not any(other[s.start:s.end])]
        counts: dict[str, int] = {}
        for _span, canonical in cands:
            counts[compact_key(canonical)] = counts.get(compact_key(canonical), 0) + 1
        noun_keys = {compact_key(c) for s, c in cands if singular(s[-1].lower_) in task_heads() or s[-1].lower_ in task_heads()}
        kept: list[tuple[Span, str]] = []
        for span, canonical in cands:
            verbal = _nominal(span[0].text) is not None and not (singular(span[-1].lower_) in task_heads())
            key = compact_key(canonical)
            if verbal:
                ok = key in noun_keys or counts[key] >= 2 or self._subject(doc, span)
            else:
                ok = counts[key] >= 2 or self._cued(doc, span)
            if ok:
                kept.append((span, canonical))
        kept += self._coordinated(doc, cands, kept)
        spans = [Span(doc, s.start, s.end, label="Task", kb_id=c) for s, c in kept]
        return filter_spans(spans)

    @staticmethod
    def _subject(doc: Doc, span: Span) -> bool:
        start = sent_start(span[0])
        first = start + 1 if doc[start].lower_ in {"the", "in"} else start
        nxt = doc[span.end].lower_ if span.end < len(doc) else ""
        return span.start == first and nxt in SUBJECT_VERBS

    def _cued(self, doc: Doc, span: Span) -> bool:
        nxt = doc[span.end].lower_ if span.end < len(doc) else ""
        if nxt in FOLLOWERS:
            return True
        known = getattr(self, "_known_tasks", {})
        if any(known.get(k, span.end + 1) <= span.end for k in range(span.start, span.end)):
            return True  # a known task, refined by modifiers ("temporal knowledge graph completion")
        if self._subject(doc, span):
            return True
        if span.start_char < (doc._.kg_title_len or 0):
            return True  # a task named in the title is what the paper is about
        k = span.start - 1
        while k > sent_start(span[0]) and doc[k].text.isupper() and len(doc[k].text) > 1:
            k -= 1  # "the task of LLM activation probing": look past a name
        prev = doc[k].lower_ if k >= sent_start(span[0]) else ""
        prev2 = doc[k - 1].lower_ if k - 1 >= sent_start(span[0]) else ""
        if prev in {"on", "at"} and prev2 not in {"based", "depend", "depends", "relies", "rely", "focus", "focuses"}:
            return True  # "performance on X", "excel at X"
        if prev.endswith("ing") and prev2 in {"for", "in", "to", "of"}:
            return True  # "a tool for investigating X"
        if prev in CUE_BEFORE and not (prev == "for" and prev2 in {"", ",", "example", "instance"}):
            return True
        if prev == "of" and prev2 in OF_NOUNS:
            return True
        if prev in {"as", "including", "like"} and prev2 in {"such"} | LIST_NOUNS:
            return True
        if prev == ":" and prev2 in LIST_NOUNS:
            return True
        return False

    @staticmethod
    def _coordinated(doc: Doc, cands, kept) -> list[tuple[Span, str]]:
        """Candidates in a list with a kept one: "X, Y, and Z"."""
        kept_starts = {s.start for s, _ in kept}
        by_start = {s.start: (s, c) for s, c in cands}
        by_end = {s.end: (s, c) for s, c in cands}
        extra = []
        for span, _ in list(kept):
            # forward: span , [and|or] next
            k = span.end
            while k < len(doc) and doc[k].text in {",", "and", "or"}:
                k += 1
                nxt = by_start.get(k)
                if nxt and nxt[0].start not in kept_starts:
                    extra.append(nxt)
                    kept_starts.add(nxt[0].start)
                    k = nxt[0].end
            # backward: prev , [and|or] span
            k = span.start
            while k > 0 and doc[k - 1].text in {",", "and", "or"}:
                k -= 1
                while k > 0 and doc[k - 1].text in {",", "and", "or"}:
                    k -= 1
                prv = by_end.get(k)
                if prv and prv[0].start not in kept_starts:
                    extra.append(prv)
                    kept_starts.add(prv[0].start)
                    k = prv[0].start
                else:
                    break
        return extra

    def set_annotations(self, doc: Doc, spans: list[Span]) -> None:
        doc.spans[self.spans_key] = spans


@Language.factory("kg_tasks", default_config={"spans_key": "kg_tasks", "gazetteer_key": "kg_gazetteer"},
                  assigns=["doc.spans"], requires=["doc.sents", "doc.spans"])
def make_tasks(nlp: Language, name: str, spans_key: str, gazetteer_key: str) -> TaskFinder:
    return TaskFinder(nlp, name, spans_key, gazetteer_key)
