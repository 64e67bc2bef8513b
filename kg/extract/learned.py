"""The ``kg_span_classifier`` component: the trained model that decides what is a name.

The rule components before it mark what they find; this one scores every candidate span
(:mod:`kg.extract.candidates`) with a trained :class:`~kg.extract.classifier.SparseSoftmax`
whose features include the rules' marks; :mod:`kg.extract.names` keeps the best-scoring
spans that do not overlap, joins the spans of one name in one record (its case and plural
variants, an acronym and its expansion) and gives each name one class; a second model
(:mod:`kg.extract.roles`) then says whether each method name is proposed or used.

Sets ``doc.spans["kg_learned_proposed"]`` (label ``Method``: the paper's own methods) and
``doc.spans["kg_learned"]`` (labels ``Method`` / ``Task`` / ``Dataset``). The model is
saved and loaded the spaCy way (``to_disk`` / ``from_disk``): the shipped one is in
``kg/resources/model``; ``scripts/train.py`` rebuilds it.
"""
from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from importlib import resources
from pathlib import Path

import numpy
from spacy.attrs import IDX, LENGTH
from spacy.language import Language
from spacy.tokens import Doc, Span

from kg.text import compact_key
from kg.extract.candidates import abstract_start, candidate_spans, doc_context, span_features
from kg.extract.classifier import CHUNK, SparseSoftmax
from kg.extract.components import MatchComponent, sentences
from kg.extract.lexicon import lookup
from kg.extract.names import choose
from kg.extract.roles import RoleModel, role_rows
from kg.extract.shapes import BROAD_FIELDS
from kg.extract.termstats import TermStats
from kg.extract.tokens import doc_text, token_texts

#: A formula is never part of a name ("§", "L^1", "d>1").
_FORMULA = re.compile(r"[§\\^<>|{}$]")
#: Nor an equation, a subscript or a web address ("n=2", "ell_1", "https://...").
_NOT_A_NAME = re.compile(r"=|_[A-Za-z0-9]\b|://|^www\.|^[\d.,]+[A-Za-z]?$")


def nameable(text: str) -> bool:
    """Whether a kept candidate may be a name at all: no equation, subscript or web
    address in it, its brackets close ("O(1/" and "TD(λ" may not), it does not end
    in a hyphen (the first half of "CNN- and RNN-based"), and it is more than a number
    with a unit or a letter ("70B", "27.7x", the citation year "2021a"). Checked when
    a record is extracted; the training examples include such spans (as no name), so
    that the shipped model is what ``scripts/train.py`` makes from the same data.

    >>> [nameable(t) for t in ["TD(λ)", "TD(λ", "n_2", "CNN/DailyMail", "https://a.org/x", "CNN-", "2021a", "T5"]]
    [True, False, False, True, False, False, False, True]
    """
    return balanced(text) and not _NOT_A_NAME.search(text) and not text.endswith("-")


def balanced(text: str) -> bool:
    """Whether every bracket of ``text`` closes, in order ("TD(λ)", not "TD(λ", "O(1/" or "ID)=(y").

    >>> [balanced(t) for t in ["TD(λ)", "TD(λ", "ID)=(y", "GPT-4V(ision)", "[CLS] token"]]
    [True, False, False, True, True]
    """
    depth = 0
    for c in text:
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0
#: The rules' span groups the classifier reads (their names are features of the model).
RULE_GROUPS = ("kg_proposed", "kg_defined", "kg_tasks", "kg_gazetteer", "kg_cues")
LABELS = {1: "Method", 2: "Method", 3: "Task", 4: "Dataset"}


class Lexicon:
    """What annotated records say of a compact key: in how many it was annotated with
    each class (1-4), and in how many it occurred as a candidate."""

    def __init__(self):
        self.annotated: dict[str, list[int]] = {}
        self.seen: Counter = Counter()

    def add(self, seen_keys, labelled: dict[str, int]) -> None:
        for k in seen_keys:
            self.seen[k] += 1
        for k, c in labelled.items():
            self.annotated.setdefault(k, [0, 0, 0, 0, 0])[c] += 1

    def remove(self, seen_keys, labelled: dict[str, int]) -> None:
        """Take one record's counts out (its own features must not see its own labels)."""
        for k in seen_keys:
            self.seen[k] -= 1
        for k, c in labelled.items():
            self.annotated[k][c] -= 1

    def features(self, key: str) -> list[str]:
        row = self.annotated.get(key)
        if row is None:
            return []
        seen = max(self.seen.get(key, 0), sum(row[1:]))
        out = []
        for c in range(1, 5):
            if row[c]:
                out.append(f"lx{c}={_bin(row[c])}")
                out.append(f"lxr{c}={_ratio(row[c], seen)}")
        if not any(row[1:]) and seen:
            out.append("lx0")
        return out

    def known(self, key: str) -> bool:
        """Whether some annotated record gave ``key`` a class."""
        row = self.annotated.get(key)
        return row is not None and any(row[1:])

    def to_json(self) -> dict:
        keep = sorted(k for k, row in self.annotated.items() if any(row[1:]))
        return {k: [self.seen.get(k, 0), *self.annotated[k][1:]] for k in keep}

    @classmethod
    def from_json(cls, obj: dict) -> Lexicon:
        lx = cls()
        for k, (seen, *row) in obj.items():
            lx.seen[k] = seen
            lx.annotated[k] = [0, *row]
        return lx


def _bin(n: int) -> str:
    return "1" if n == 1 else "2" if n == 2 else "3-5" if n <= 5 else "6+"


def _ratio(a: int, b: int) -> str:
    r = a / b if b else 1.0
    return "<.2" if r < .2 else "<.5" if r < .5 else "<.8" if r < .8 else "hi"


def doc_candidates(doc: Doc, word_classes: dict | None = None, terms: TermStats | None = None,
                   rule_keys=RULE_GROUPS) -> tuple[list[tuple[int, int]], list[str], object]:
    """The candidate spans of ``doc``, their texts, and the features' shared context
    (``rule_keys``: the rules' span groups)."""
    spans = set(candidate_spans(doc))
    for g in rule_keys:
        for s in doc.spans.get(g, []):
            spans.add((s.start, s.end))
    spans = sorted(spans)
    keywords = frozenset(compact_key(p) for k in doc._.kg_keywords or () for p in (k, *k.split(":")) if p.strip())
    ctx = doc_context(doc, rule_keys, keywords=keywords, word_classes=word_classes, terms=terms)
    full = doc_text(doc)
    bounds = doc.to_array([IDX, LENGTH]).tolist() if len(doc) else []
    texts = [full[bounds[i][0]:bounds[j - 1][0] + bounds[j - 1][1]] for i, j in spans]
    counts = ctx.counts
    flags = ctx.key_flags
    lowers, shapes = ctx.lowers, ctx.shapes
    first_sent = ctx.sent_of[ctx.title_end] if ctx.title_end < len(lowers) else -1
    last_sent = ctx.sent_of[-1] if lowers else -1
    keys: dict[str, str] = {}
    for (i, j), t in zip(spans, texts):
        k = keys.get(t)
        if k is None:
            k = keys[t] = compact_key(t)
        counts[k] = counts.get(k, 0) + 1
        f = flags.setdefault(k, set())
        f.add("in_title" if i < ctx.title_end else "in_abs")
        if ctx.sent_of[i] == first_sent:
            f.add("in_first")
        elif ctx.sent_of[i] == last_sent:
            f.add("in_last")
        if i >= ctx.title_end and ctx.sent_of[i] in ctx.cue_sents:
            f.add("in_cue")
            if ctx.sent_of[i] in ctx.data_sents:
                f.add("in_data_cue")
        if all(x == "x" for x in shapes[i:j]):
            f.add("lower")
        if (i, j) in ctx.abbr_long:
            f.add("abbr_long")
        if (i, j) in ctx.abbr_short:
            f.add("abbr_short")
        for r in ctx.rule_spans.get((i, j), ()):
            f.add("r:" + r)
    return spans, texts, ctx


def kept_candidates(spans, texts, ctx, lexicon: Lexicon) -> list[int]:
    """The candidates worth scoring: a rule's span, a span with a capital, digit or
    symbol, a lower-case run of two to four words; a lower-case single word or run of
    five or more only when the annotated records or the gazetteers know it (others are
    names one time in two hundred, and a third of all candidates). Never a span with a
    formula in it or a broad field (:data:`BROAD_FIELDS`)."""
    keep = []
    shapes, rule_spans = ctx.shapes, ctx.rule_spans
    for k, ((i, j), t) in enumerate(zip(spans, texts)):
        n = j - i
        if _FORMULA.search(t) or compact_key(t) in BROAD_FIELDS:
            continue
        if (n == 1 or n >= 5) and (i, j) not in rule_spans and all(x == "x" for x in shapes[i:j]) \
                and not lexicon.known(compact_key(t)) and not lookup(t):
            continue
        keep.append(k)
    return keep


def span_rows(spans, texts, ctx, lexicon: Lexicon) -> list[list[str]]:
    """The features of each candidate."""
    feats = lexicon.features
    return [span_features(ctx, i, j, t, feats) for (i, j), t in zip(spans, texts)]


#: Tail words a name goes without ("ImageNet-1K task", "the dynamic pricing problem").
TRIM_TAIL = frozenset("problem problems task tasks method methods model models framework frameworks approach "
                      "approaches algorithm algorithms technique techniques dataset datasets benchmark benchmarks "
                      "corpus corpora".split())


def trimmed_end(texts: list[str], i: int, j: int, c: int) -> int:
    """The end of a kept span without a generic tail word: after a word with a digit or
    inner capitals ("GPT-4 model", "ImageNet dataset"), or ending a task ("dynamic
    pricing problem"); not after words ("language model", "Large Language Models").

    >>> t = "We use Large Language Models and GPT-4 model".split()
    >>> trimmed_end(t, 2, 5, 2), trimmed_end(t, 6, 8, 2)
    (5, 7)
    """
    if j - i < 2 or texts[j - 1].lower() not in TRIM_TAIL:
        return j
    rest = texts[i:j - 1]
    if c == 3 and texts[j - 1].lower() in ("problem", "problems", "task", "tasks"):
        return j - 1
    if any(any(ch.isdigit() for ch in t) or sum(ch.isupper() for ch in t) >= 2 for t in rest):
        return j - 1
    return j


class SpanClassifier(MatchComponent):
    """Score candidate spans (and the rules' spans of ``rule_keys``) as the paper's own
    method, a method, a task, a dataset or none; the paper's own methods go to the span
    group ``proposed_key``, the others to ``spans_key``. Empty until :meth:`from_disk`
    (or :meth:`initialize`) loads a model."""

    def __init__(self, nlp: Language, name: str, threshold: float = 0.5, length_bonus: float = 0.1,
                 rule_keys=RULE_GROUPS, spans_key: str = "kg_learned", proposed_key: str = "kg_learned_proposed"):
        super().__init__(nlp, name, spans_key)
        self.threshold = threshold
        self.length_bonus = length_bonus
        self.rule_keys, self.proposed_key = list(rule_keys), proposed_key
        self.model: SparseSoftmax | None = None
        self.lexicon = Lexicon()
        self.word_classes: dict[str, list[int]] = {}
        self.terms = TermStats()
        self.roles: RoleModel | None = None  # proposed or used, name by name (else the span scores decide)

    def score(self, doc: Doc) -> tuple[list[tuple[int, int]], list[str], object, object]:
        """The candidates worth scoring, their texts, their class probabilities and the
        features' shared context."""
        if self.model is None:
            raise ValueError(f"{self.name} has no model: load one with from_disk() or initialize()")
        spans, texts, ctx = doc_candidates(doc, self.word_classes, self.terms, self.rule_keys)
        keep = [k for k in kept_candidates(spans, texts, ctx, self.lexicon) if nameable(texts[k])]
        spans, texts = [spans[k] for k in keep], [texts[k] for k in keep]
        # a bounded number of feature lists alive at once, however long the record
        probs = [self.model.predict(span_rows(spans[a:a + CHUNK], texts[a:a + CHUNK], ctx, self.lexicon))
                 for a in range(0, len(spans), CHUNK)]
        return spans, texts, numpy.concatenate(probs) if probs else self.model.predict([]), ctx

    def match(self, doc: Doc) -> list[tuple[int, int, int, str]]:
        spans, texts, probs, ctx = self.score(doc)
        roles = self.roles

        def relabel(kept, names):
            roles.relabel(role_rows(doc, spans, probs, kept, names, ctx), names)
        return choose(doc, spans, texts, probs, self.threshold, self.length_bonus,
                      relabel if roles is not None else None)

    def set_annotations(self, doc: Doc, found: list[tuple[int, int, int, str]]) -> None:
        # Every span of one name carries the name as its kb_id (so that the spans are one
        # entity downstream): a rule's canonical name for one of them ("SGD" -> "stochastic
        # gradient descent"), else the shortest of a task's forms, the longest of the others'.
        kb = {(s.start, s.end, s.label_): s.kb_id_ for g in self.rule_keys for s in doc.spans.get(g, []) if s.kb_id_}
        names: dict[str, str] = {}
        texts = token_texts(doc)[0]
        for i, j, c, g in found:
            known = kb.get((i, j, LABELS[c])) or kb.get((i, trimmed_end(texts, i, j, c), LABELS[c]))
            if known:
                names[g] = min(names.get(g, known), known)
        forms: dict[str, list[str]] = {}
        # the spelling inside the abstract's sentences before the title's or a sentence start's
        # ("neural networks", not "Neural Networks")
        said: dict[str, list[str]] = {}
        first, starts = abstract_start(doc), {sent.start for sent in sentences(doc)}
        for i, j, c, g in found:
            forms.setdefault(g, []).append(doc[i:j].text)
            if i >= first and i not in starts:
                said.setdefault(g, []).append(doc[i:j].text)
        for i, j, c, g in found:
            if g not in names:
                if g in said and c != 3:
                    forms[g] = said[g]
                if c == 3:  # a task: its shortest form that is not an acronym ("instruction tuning", not "IT")
                    words = [t for t in forms[g] if " " in t or not sum(ch.isupper() for ch in t) > 1] or forms[g]
                    names[g] = min(words, key=lambda t: (len(t), t))
                else:
                    names[g] = max(forms[g], key=lambda t: (len(t), [-ord(x) for x in t]))
                # the name without a generic tail word ("ImageNet-1K task"); the span keeps it as an alias
                span = next((i2, j2) for i2, j2, c2, g2 in found if g2 == g and doc[i2:j2].text == names[g])
                end = trimmed_end(texts, span[0], span[1], c)
                if end < span[1]:
                    names[g] = doc[span[0]:end].text
        doc.spans[self.proposed_key] = [Span(doc, i, j, label="Method", kb_id=names[g])
                                        for i, j, c, g in found if c == 1]
        doc.spans[self.spans_key] = [Span(doc, i, j, label=LABELS[c], kb_id=names[g]) for i, j, c, g in found if c != 1]

    @property
    def groups(self) -> tuple[tuple[str, str], ...]:
        """The span groups it sets, with the role of their methods."""
        return (self.proposed_key, "proposed"), (self.spans_key, "used")

    def initialize(self, get_examples=None, *, nlp: Language | None = None, model: str | Path | None = None) -> None:
        """Load ``model`` (a folder :meth:`to_disk` wrote; by default the shipped one)."""
        self.from_disk(model or default_model_path())

    def to_disk(self, path, exclude=()) -> None:
        path = Path(path)
        self.model.to_disk(path)
        cfg = json.loads((path / "config.json").read_text(encoding="utf-8"))
        cfg["threshold"] = self.threshold
        cfg["length_bonus"] = self.length_bonus
        (path / "config.json").write_text(json.dumps(cfg, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        (path / "lexicon.json").write_text(json.dumps(self.lexicon.to_json(), ensure_ascii=False, sort_keys=True,
                                                      separators=(",", ":")), encoding="utf-8")
        (path / "clusters.json").write_text(json.dumps(self.word_classes, ensure_ascii=False, sort_keys=True,
                                                       separators=(",", ":")), encoding="utf-8")
        self.terms.to_disk(path)
        if self.roles is not None:
            self.roles.to_disk(path / "roles")
        elif (path / "roles").exists():
            shutil.rmtree(path / "roles")

    def from_disk(self, path, exclude=()) -> SpanClassifier:
        """Read what :meth:`to_disk` wrote; with ``"cfg"`` in ``exclude`` (spaCy's name for
        a component's settings) the decision settings stay this component's own."""
        path = Path(path)
        self.model = SparseSoftmax.from_disk(path)
        threshold = float(self.model.config.pop("threshold", self.threshold))
        length_bonus = float(self.model.config.pop("length_bonus", self.length_bonus))
        if "cfg" not in exclude:
            self.threshold, self.length_bonus = threshold, length_bonus
        self.lexicon = Lexicon.from_json(json.loads((path / "lexicon.json").read_text(encoding="utf-8")))
        classes = path / "clusters.json"
        self.word_classes = json.loads(classes.read_text(encoding="utf-8")) if classes.exists() else {}
        self.terms = TermStats.from_disk(path)
        self.roles = RoleModel.from_disk(path / "roles") if (path / "roles" / "config.json").exists() else None
        return self


def default_model_path() -> Path:
    return Path(str(resources.files("kg") / "resources" / "model"))


@Language.factory("kg_span_classifier",
                  default_config={"threshold": 0.5, "length_bonus": 0.1, "rule_keys": list(RULE_GROUPS),
                                  "spans_key": "kg_learned", "proposed_key": "kg_learned_proposed"},
                  assigns=["doc.spans"], requires=["doc.sents", "doc.spans", "token.norm", "doc._.kg_abbreviations"])
def make_span_classifier(nlp: Language, name: str, threshold: float, length_bonus: float, rule_keys: list[str],
                         spans_key: str, proposed_key: str) -> SpanClassifier:
    return SpanClassifier(nlp, name, threshold, length_bonus, rule_keys, spans_key, proposed_key)
