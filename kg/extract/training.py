"""Training the span classifier: annotated records in, a model out; cross-validation.

The gold (``GUIDELINES.md``) lists each entity as a set of surface forms, not spans. A
candidate is labelled with the type of the gold entity one of whose forms it equals under
the guideline's normalization (case, hyphens, plurals, markup); a candidate equal to an
optional entity is left out of training; every other candidate is ``none``.

Predictions for scoring go through the shipped code path: the rule components, the
classifier, :func:`~kg.extract.assemble.assemble` and the corpus-name pass over the
records scored together, as ``kg extract`` runs them. ``scripts/train.py`` is the
command line around this module.
"""
from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from kg.model import Record
from kg.text import compact_key

GREEK = dict(zip("αβγδεζηθικλμνξοπρστυφχψω",
                 "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi "
                 "omicron pi rho sigma tau upsilon phi chi psi omega".split()))
#: Passes over the training examples (chosen by cross-validated F1 among 12, 18 and 25).
EPOCHS = 18
#: Units of the classifier's hidden layer (chosen by cross-validated F1 among 0, 16 and 32).
HIDDEN = 32
#: Span classifiers trained in different orders whose mean is the shipped one.
MEMBERS = 3
GOLD_FIELDS = (("methods_proposed", 1), ("methods_used", 2), ("tasks", 3), ("datasets", 4))
#: The entity lists of a gold record's ``optional`` (it also holds ``results``: objects, not names).
OPTIONAL_FIELDS = ("methods", "tasks", "datasets")


def gold_key(text: str) -> str:
    """The guideline's normalization of a surface form (as the shared scorer's)."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"</?[a-z][^>]*>", "", text)
    text = re.sub(r"\\(?:texttt|textit|emph|mathrm|textbf|url|mathbf)\s*", "", text)
    text = text.replace("$", "")
    text = "".join(" " + GREEK[c] + " " if c in GREEK else c for c in text)
    text = text.replace("ς", "sigma").replace("ϵ", "epsilon").replace("+", " plus ").replace("*", " star ")
    out = []
    for w in re.findall(r"[a-z0-9]+", text):
        if len(w) > 4 and w.endswith("ies"):
            w = w[:-3] + "y"
        elif len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.append(w)
    return "".join(out)


@dataclass
class Gold:
    """One annotated record: gold key -> class (1-4), and the keys of optional entities."""
    doc: str
    labels: dict[str, int] = field(default_factory=dict)
    optional: set[str] = field(default_factory=set)
    raw: dict = field(default_factory=dict)

    @classmethod
    def from_json(cls, obj: dict) -> Gold:
        g = cls(obj["doc"], raw=obj)
        for name, label in GOLD_FIELDS:
            for ent in obj.get(name, []):
                for form in ent:
                    g.labels.setdefault(gold_key(form), label)
        optional = obj.get("optional", {})
        for ents in (optional.get(name, []) for name in OPTIONAL_FIELDS):
            for ent in ents:
                for form in ent:
                    k = gold_key(form)
                    if k not in g.labels:
                        g.optional.add(k)
        return g

    def label(self, text: str) -> int | None:
        """The class of a candidate's text, None when it is optional."""
        k = gold_key(text)
        if k in self.labels:
            return self.labels[k]
        return None if k in self.optional else 0


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def load_annotated(shared: Path) -> list[tuple[str, Record, Gold]]:
    """(set name, record, gold) for dev (the sample abstracts), dev2 and train."""
    from kg.ingest import read_records, sample_paths

    out = []
    dev_gold = {o["doc"]: Gold.from_json(o) for o in read_jsonl(shared / "eval" / "gold" / "dev.jsonl")}
    for rec in read_records(sample_paths()):
        if rec.doc in dev_gold:
            out.append(("dev", rec, dev_gold[rec.doc]))
    for name in ("dev2", "train"):
        gold = {o["doc"]: Gold.from_json(o) for o in read_jsonl(shared / "eval" / "gold" / f"{name}.jsonl")}
        for rec in read_records([shared / "eval" / name / "input.jsonl"]):
            if rec.doc in gold:
                out.append((name, rec, gold[rec.doc]))
    return out


def doc_keys(texts: list[str], labels: list[int | None]) -> tuple[set[str], dict[str, int]]:
    """The compact keys a record's candidates have, and those with a class."""
    seen = {compact_key(t) for t in texts}
    labelled = {}
    for t, y in zip(texts, labels):
        if y:
            labelled[compact_key(t)] = y
    return seen, labelled


@dataclass
class Parsed:
    """One annotated record after the rule components: its candidates and their labels."""
    set: str
    rec: Record
    gold: Gold
    doc: object
    spans: list
    texts: list
    ctx: object
    labels: list
    keys: tuple
    maps: tuple


def parse(nlp, items: list[tuple[str, Record, Gold]], word_classes: dict | None = None, terms=None) -> list[Parsed]:
    """Each annotated record through ``nlp``'s rule components (the classifier left out)."""
    from kg.extract import _TITLE_SEP, _text_of, tokenizer_safe
    from kg.extract.learned import doc_candidates
    from kg.extract.normalize import normalize_record

    out = []
    rules = [proc for name, proc in nlp.pipeline if name != "kg_span_classifier"]
    for name, rec, gold in items:
        text, tlen = _text_of(rec)
        clean, ctlen, tmap, amap, keywords = normalize_record(text, tlen, _TITLE_SEP)
        doc = nlp.make_doc(tokenizer_safe(clean))
        doc._.kg_title_len = ctlen
        doc._.kg_keywords = keywords
        for proc in rules:
            doc = proc(doc)
        spans, texts, ctx = doc_candidates(doc, word_classes, terms, nlp.get_pipe("kg_span_classifier").rule_keys)
        labels = [gold.label(t) for t in texts]
        out.append(Parsed(name, rec, gold, doc, spans, texts, ctx, labels, doc_keys(texts, labels),
                          (ctlen, tmap, amap)))
    return out


def train_model(train: list[Parsed], epochs: int = EPOCHS, seed: int = 0, hidden: int = HIDDEN,
                members: int = MEMBERS):
    """A model and its lexicon from labelled records (each record's lexicon features
    computed without its own labels): (model, lexicon, number of examples). The model
    is the mean of ``members`` trained in different orders (seeds ``seed * 100`` on)."""
    from kg.extract.classifier import SparseSoftmax
    from kg.extract.learned import Lexicon, kept_candidates, span_rows

    lex = Lexicon()
    for d in train:
        lex.add(*d.keys)
    rows, ys = [], []
    for d in train:
        lex.remove(*d.keys)
        keep = [k for k in kept_candidates(d.spans, d.texts, d.ctx, lex) if d.labels[k] is not None]
        rows += span_rows([d.spans[k] for k in keep], [d.texts[k] for k in keep], d.ctx, lex)
        ys += [d.labels[k] for k in keep]
        lex.add(*d.keys)
    models = [SparseSoftmax.train(rows, ys, epochs=epochs, seed=seed * 100 + k, hidden=hidden)
              for k in range(members)]
    return (models[0] if members == 1 else SparseSoftmax.ensemble(models)).quantized(), lex, len(rows)


def predict(classifier, parsed: list[Parsed]) -> list:
    """The extractions of records scored together (one input file): the classifier's
    first pass on each, then the corpus-name pass over them all."""
    from kg.extract.assemble import assemble, remap
    from kg.extract.components import sentences
    from kg.extract.propagate import _pattern, build_lexicon, propagate

    firsts = []
    for d in parsed:
        doc = classifier(d.doc)
        tlen, tmap, amap = d.maps
        sents = [(s.start_char - tlen, s.end_char - tlen) for s in sentences(doc) if s.start_char >= tlen]
        firsts.append(remap(assemble(doc, d.gold.doc, offset=tlen, title_len=tlen, groups=classifier.groups),
                            sents, tmap, amap))
    lexicon = build_lexicon(ex for ex, _ in firsts)
    pattern = _pattern(lexicon)
    if pattern is None:
        return [ex for ex, _ in firsts]
    return [propagate(ex, d.rec.abstract, lexicon, pattern, sents) for d, (ex, sents) in zip(parsed, firsts)]


def fold_of(abstract: str, k: int) -> int:
    """A record's fold, by its abstract: a text that two records carry is in one fold."""
    from kg.text import text_hash

    return int(text_hash(abstract), 16) % k


def role_examples(classifier, parsed: list[Parsed]) -> list[tuple[list[str], int]]:
    """(features, class: :func:`kg.extract.roles.role_label`) of every method name the
    classifier finds in ``parsed``, for training the name-level model of
    :mod:`kg.extract.roles`."""
    from kg.extract.names import best_spans, join_names
    from kg.extract.roles import role_label, role_rows

    out = []
    for d in parsed:
        spans, texts, probs, ctx = classifier.score(d.doc)
        kept = best_spans(len(d.doc), spans, probs, classifier.threshold, classifier.length_bonus, texts)
        names = join_names(d.doc, texts, probs, kept)
        rows = role_rows(d.doc, spans, probs, kept, names, ctx)
        for g in sorted(rows):
            gold = [d.gold.label(texts[k]) for k in kept if names.root[k] == g]
            out.append((rows[g], role_label(gold)))
    return out


def train_roles(examples: list[tuple[list[str], int]], seed: int = 0):
    from kg.extract.roles import RoleModel

    return RoleModel.train([f for f, _ in examples], [y for _, y in examples], seed=seed) if examples else None


@dataclass
class CrossValidation:
    preds: dict  # {(set, doc): extraction JSON}
    roles: list  # the name-level examples of every record, from a span classifier that never saw it


def cross_validate(classifier, data: list[Parsed], folds: int = 5, epochs: int = EPOCHS, seed: int = 0,
                   progress=None, hidden: int = HIDDEN, models: Path | None = None,
                   members: int = MEMBERS) -> CrossValidation:
    """Every record predicted by models trained on the other folds; the records of one
    set in one fold are scored together.

    First each fold's span classifier, and the name-level examples (:mod:`kg.extract.roles`)
    of the records it did not see; then each fold's records are predicted with that
    classifier and a name-level model trained on the other folds' examples.

    With ``models``, each fold's span classifier is saved in ``models/<fold>`` and, where
    one is already there, read instead of trained: a change after the classifier (grouping
    names, resolution) is then cross-validated in minutes. Only valid while the
    features, the training data and the settings are those the models were made with; the
    decision settings (``threshold``, ``length_bonus``) are the classifier's own, so that
    they can be cross-validated on the kept models."""
    fold = [fold_of(d.rec.abstract, folds) for d in data]
    trained, examples = [], []
    classifier.roles = None  # the span classifier alone, in the first step and in the saved folds
    for k in range(folds):
        saved = models / str(k) if models is not None else None
        if saved is not None and (saved / "config.json").is_file():
            classifier.from_disk(saved, exclude=("cfg",))  # this run's threshold, not the saved one
            n = 0
        else:
            classifier.model, classifier.lexicon, n = train_model(
                [d for d, f in zip(data, fold) if f != k], epochs, seed, hidden, members)
            if saved is not None:
                saved.mkdir(parents=True, exist_ok=True)
                classifier.to_disk(saved)
        trained.append((classifier.model, classifier.lexicon))
        examples.append(role_examples(classifier, [d for d, f in zip(data, fold) if f == k]))
        if progress:
            progress(k, n, len(classifier.model.features))
    preds = {}
    for k in range(folds):
        classifier.model, classifier.lexicon = trained[k]
        classifier.roles = train_roles([e for j in range(folds) if j != k for e in examples[j]], seed)
        test = [d for d, f in zip(data, fold) if f == k]
        for name in sorted({d.set for d in test}):
            part = [d for d in test if d.set == name]
            for d, ex in zip(part, predict(classifier, part)):
                preds[(name, d.gold.doc)] = ex.to_json()
    return CrossValidation(preds, [e for part in examples for e in part])
