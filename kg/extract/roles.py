"""Whether a paper proposes a method or uses it: a second, name-level model.

The span classifier scores each mention on its own; whether "LoRA" is this paper's
contribution or a tool it uses is a question about the name in the whole record: where
it stands (the title, the head before the title's colon, a "we propose" sentence, the
first sentences), how many names compete for the role, whether the acronym is defined
here, how common the phrase is in the corpus, whether the Papers with Code names know it,
and how sure the span classifier was of each mention (and how much it looked like a task
or a dataset). This model reads those facts of every method name and says proposed or
used, or a dataset after all: a benchmark the paper introduces ("CrossWordBench")
reads much like a proposed method.

It is trained on names as the span classifier sees records it was not trained on (the
cross-validation folds' predictions), so that it learns how far to trust the span
classifier's scores on new text. Saved the spaCy way, as a folder beside the span
classifier's (``roles/``: a :class:`~kg.extract.classifier.SparseSoftmax` and its
threshold).
"""
from __future__ import annotations

import json
from pathlib import Path

from spacy.tokens import Doc

from kg.extract.candidates import MAX_TERM_WORDS, phrase_key
from kg.extract.classifier import SparseSoftmax
from kg.extract.lexicon import lookup

CLASSES = ("used", "proposed", "dataset")
PROPOSED, USED, TASK, DATASET = 1, 2, 3, 4  # the span classifier's classes
THRESHOLD = 0.4  # the least share of "proposed" in proposed + used that makes a name proposed
DATASET_THRESHOLD = 0.5  # the least probability of "dataset" that makes a method name a dataset
MEMBERS = 10  # models averaged into the shipped one
_EDGES = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)


def _bin(x: float) -> str:
    return str(sum(x > e for e in _EDGES))


_CLOSES = frozenset(",.;:)")


def _apposition(lowers: list[str], j: int, most: int = 6) -> list[str]:
    """The words of an apposition right after a name (from "," or "(" to the next
    punctuation, at most ``most`` words), or none."""
    if j >= len(lowers) or lowers[j] not in (",", "("):
        return []
    out = []
    for w in lowers[j + 1:j + 1 + most]:
        if w in _CLOSES or w.isspace():
            break
        out.append(w)
    return out


def _around(lowers: list[str], spans: list[tuple[int, int]], start: int) -> list[str]:
    """The word before, the two words before and the word after each span (none from
    before ``start``, the abstract's first token)."""
    out = set()
    for i, j in spans:
        if i > start:
            out.add("aprev=" + lowers[i - 1])
        if i > start + 1:
            out.add(f"aprev2={lowers[i - 2]} {lowers[i - 1]}")
        if j < len(lowers):
            out.add("anext=" + lowers[j])
    return sorted(out)


def _methods(kept: list[int], names) -> dict[str, list[int]]:
    """{name: its kept spans} of the names the span classifier calls methods."""
    out: dict[str, list[int]] = {}
    for k in kept:
        g = names.root[k]
        if names.label[g] in (PROPOSED, USED):
            out.setdefault(g, []).append(k)
    return out


def role_rows(doc: Doc, spans, probs, kept: list[int], names, ctx) -> dict[str, list[str]]:
    """{name: features} of every method name of a record (``names`` from
    :func:`kg.extract.names.join_names`, ``ctx`` the candidates' shared context)."""
    methods = _methods(kept, names)
    if not methods:
        return {}
    peak = {g: max(float(probs[k][PROPOSED]) for k in ks) for g, ks in methods.items()}
    rank = {g: r for r, g in enumerate(sorted(methods, key=lambda g: (-peak[g], g)))}
    n_proposed = sum(1 for g in methods if names.label[g] == PROPOSED)
    defined = set()
    for long, short in doc._.kg_abbreviations or []:
        defined.update(((long.start, long.end), (short.start, short.end)))
    first_sent = ctx.sent_of[ctx.title_end] if ctx.title_end < len(ctx.sent_of) else 0
    out = {}
    for g, ks in methods.items():
        where = sorted(spans[k] for k in ks)
        p1 = [float(probs[k][PROPOSED]) for k in ks]
        p2 = [float(probs[k][USED]) for k in ks]
        ratio = _bin(max(p1) / (max(p1) + max(p2) + 1e-9))
        f = ["b", "mx1=" + _bin(max(p1)), "mx2=" + _bin(max(p2)), "r=" + ratio,
             "rs=" + _bin(sum(p1) / (sum(p1) + sum(p2) + 1e-9)), f"n={min(len(ks), 5)}",
             f"rank={min(rank[g], 3)}", f"nprop={min(n_proposed, 4)}", f"lab={names.label[g]}"]
        in_title = any(i < ctx.title_end for i, _ in where)
        in_abstract_spans = [(i, j) for i, j in where if i >= ctx.title_end]
        in_abstract = [i for i, _ in in_abstract_spans]
        # how much its mentions also look like a task or a dataset (a paper's new
        # benchmark is proposed, but not as a method)
        for c, tag in ((TASK, "t"), (DATASET, "d")):
            pc = [float(probs[k][c]) for k in ks]
            f += [f"mx{tag}=" + _bin(max(pc)), f"s{tag}=" + _bin(sum(pc) / len(pc))]
        short = next(((i, j) for i, j in where if j - i <= MAX_TERM_WORDS), None)
        f.append(f"title={in_title:d}{bool(in_abstract):d}")
        if in_title:  # the words around it in the title ("... with Hypergradient Descent", "X: ...")
            i, j = where[0]
            before = ctx.lowers[i - 1] if i > 0 else "<s>"
            f += ["tprev=" + before, "tnext=" + (ctx.lowers[j] if j < ctx.title_end else "</s>"),
                  f"tonly={not in_abstract}|tprev={before}"]
        if ctx.title_colon >= 0 and any(j <= ctx.title_colon for _, j in where):
            # the head of "X: A Dataset of ...", "X: Towards ...": the words after the colon
            f += ["thead", *("tw=" + w for w in sorted(set(ctx.lowers[ctx.title_colon + 1:ctx.title_end]))
                                 if any(c.isalnum() for c in w))]
        # the words around its mentions in the abstract ("our X", "the proposed X", "than X",
        # "X outperforms", "X achieves")
        f.extend(_around(ctx.lowers, in_abstract_spans, ctx.title_end))
        # what an apposition says the name is ("PropaGaze, a novel dataset ...", "X (a method ...")
        f.extend(sorted({"ap=" + w for _, j in in_abstract_spans for w in _apposition(ctx.lowers, j)}))
        if any(s in defined for s in where):
            f.append("abbr")
        surface = names.surface[g]
        # a new benchmark's name and sentence ("CrossWordBench", "we release a dataset ...")
        f.append("suf=" + surface.lower()[-4:])
        f.append(f"dsent={any(ctx.sent_of[i] in ctx.data_sents for i in in_abstract):d}")
        acronym = sum(c.isupper() for c in surface) >= 2 and " " not in surface
        f.append(f"caps={acronym:d}")
        f.append("fsent=" + (str(min(ctx.sent_of[in_abstract[0]] - first_sent, 6)) if in_abstract else "none"))
        if any(ctx.sent_of[i] in ctx.cue_sents for i in in_abstract):
            f.append("cue")
        known = sorted({t for t in (lookup(doc[i:j].text) for i, j in where) if t})
        f.extend(["gaz=" + t for t in known] or ["gaz=none"])
        corpus = ctx.terms.features(phrase_key(ctx.lowers, ctx.lasts, *short)) if short and ctx.terms else []
        f.extend(corpus)
        # how far to trust the span classifier's ratio depends on the rest
        df = next((x for x in corpus if x.startswith("df=")), "df=?")
        f.extend(f"{x}|r={ratio}" for x in (df, f"gz{bool(known):d}", f"caps{acronym:d}",
                                             f"rank{min(rank[g], 3)}", f"title{in_title:d}"))
        out[g] = f
    return out


def role_label(gold_labels: list[int | None]) -> int:
    """A method name's class in the annotation (an index of :data:`CLASSES`): proposed
    when one of its mentions is a proposed method, a dataset when most of its
    annotated mentions are datasets, else used."""
    if PROPOSED in gold_labels:
        return CLASSES.index("proposed")
    known = [c for c in gold_labels if c is not None]
    return CLASSES.index("dataset" if known and known.count(DATASET) * 2 > len(known) else "used")


class RoleModel:
    """Proposed or used, for each method name of a record."""

    def __init__(self, model: SparseSoftmax, threshold: float = THRESHOLD):
        self.model = model
        self.threshold = threshold

    @classmethod
    def train(cls, rows: list[list[str]], labels: list[int], seed: int = 0) -> RoleModel:
        """The weights averaged over :data:`MEMBERS` models trained in different orders
        (seeds ``seed * 100`` on): one model, steadier than any member."""
        members = [SparseSoftmax.train(rows, labels, epochs=20, lr=0.05, min_count=3, seed=seed * 100 + k,
                                       classes=CLASSES) for k in range(MEMBERS)]
        return cls(SparseSoftmax.ensemble(members))

    def relabel(self, rows: dict[str, list[str]], names) -> None:
        """Set the class of each name in ``rows`` (a method name) to proposed, used or
        dataset."""
        order = sorted(rows)
        for g, p in zip(order, self.model.predict([rows[g] for g in order])):
            if p[2] > DATASET_THRESHOLD:
                names.label[g] = DATASET
            else:
                names.label[g] = PROPOSED if p[1] / (p[0] + p[1]) > self.threshold else USED

    def to_disk(self, path: str | Path) -> None:
        path = Path(path)
        self.model.to_disk(path)
        cfg = json.loads((path / "config.json").read_text(encoding="utf-8"))
        cfg["threshold"] = self.threshold
        (path / "config.json").write_text(json.dumps(cfg, indent=1, sort_keys=True) + "\n", encoding="utf-8")

    @classmethod
    def from_disk(cls, path: str | Path) -> RoleModel:
        model = SparseSoftmax.from_disk(path)
        return cls(model, float(model.config.pop("threshold", THRESHOLD)))
