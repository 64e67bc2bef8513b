"""From scored spans to the names of one record, and the class of each name.

The span classifier scores every candidate span on its own. Here the best-scoring spans
that do not overlap are kept, the kept spans that name one thing are joined into a name
(case and plural variants, an acronym and its expansion), and each name gets one class:
proposed or used method, task or dataset.

A name takes the class its spans' summed probabilities favour; a method is proposed
when one of its spans says so more than any says used, unless the name-level model of
:mod:`kg.extract.roles` decides (the shipped model has one).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from spacy.tokens import Doc

from kg._unionfind import UnionFind
from kg.extract.candidates import abstract_start
from kg.extract.roles import PROPOSED, USED
from kg.text import GENERIC_TAIL, SMALL_WORDS, narrows, norm_words, stem_bag


_DOTTED = re.compile(r"(?:[A-Za-z]\.){2,}")


def initials_match(short: str, long: str) -> bool:
    """Whether ``short`` is an acronym of ``long``: its letters, in order, start words or
    hyphen parts of ``long`` (small words and the later parts of a hyphenated word may
    be skipped, a word may give more than one letter, two words at least give letters).
    An abbreviation with dots ("U.S.") is no name's acronym.

    >>> [initials_match(a, b) for a, b in [("HBFP", "Hybrid Block Floating Point"),
    ...  ("GA-Net", "Guided Aggregation Net"), ("P2L", "Pick-To-Learn"), ("TFCD", "Training-Free Counterfactual Debiasing"),
    ...  ("DSD", "Dense-Sparse-Dense Training"), ("KBB", "Krylov–Bellman Boosting"),
    ...  ("CAMEL", "Confidence-Aware Multi-task Ensemble Learning"), ("GAN", "graph attention"),
    ...  ("REINFORCE", "reinforcement learning"), ("U.S.", "uncertainty sampling"),
    ...  ("PALs", "Projected Attention Layers")]]
    [True, True, True, True, True, True, True, False, False, False, True]
    """
    letters = [c.lower() for c in short if c.isalnum()]
    if len(letters) > 2 and short.endswith("s") and short[-2].isupper():  # a plural: "PALs", "GANs"
        letters = letters[:-1]
    parts, inner = [], []  # the parts, and whether each continues a hyphenated word
    for word in long.split():
        pieces = [p for p in re.split(r"[\-‐‑–—/]+", word) if p]
        parts += pieces
        inner += [False] + [True] * (len(pieces) - 1)
    if len(letters) < 2 or len(parts) < 2 or not any(c.isupper() for c in short) or _DOTTED.fullmatch(short):
        return False
    digits = {"2": "to", "4": "for"}

    def fit(li: int, pi: int, used: int = 0) -> bool:
        if li == len(letters):  # two words at least gave letters ("REINFORCE" is no acronym of RL)
            return used >= 2
        if pi == len(parts):
            return False
        word = parts[pi].lower()
        c = letters[li]
        if digits.get(c) == word:
            return fit(li + 1, pi + 1, used + 1)
        if word[:1] == c:
            # this word gives one letter or more (a prefix of the word: "Ne" of "Net")
            k = 1
            while True:
                if fit(li + k, pi + 1, used + 1):
                    return True
                if li + k < len(letters) and k < len(word) and word[k] == letters[li + k]:
                    k += 1
                    continue
                break
        return (word in SMALL_WORDS or inner[pi]) and fit(li, pi + 1, used)
    return fit(0, 0)


_HAS_ACRONYM = re.compile(r"[A-Z]{2}")


def group_key(text: str) -> str:
    """The key spans of one name share in a record: the compact key without a generic
    tail word and without an acronym's plural ("GPs" -> "gp")."""
    words = norm_words(text)
    while len(words) > 1 and words[-1] in GENERIC_TAIL:
        words = words[:-1]
    if len(words) == 1 and re.fullmatch(r"[A-Z][A-Z0-9\-]+s", text.strip()):
        words = [words[0][:-1]]
    return "".join(words)


def best_spans(n_tokens: int, spans, probs, threshold: float, length_bonus: float, texts=None) -> list[int]:
    """The spans kept: those scoring at least ``threshold`` as a name, the best first,
    none overlapping one kept before; a longer span gains ``length_bonus`` a token over
    a shorter one inside it, unless it joins two by "and" ("TreeQN and ATreeC")."""
    def bonus(k):
        if texts is not None and " and " in texts[k]:
            return 0.0
        return length_bonus * (spans[k][1] - spans[k][0] - 1)
    order = sorted((k for k in range(len(spans)) if 1.0 - probs[k][0] >= threshold),
                   key=lambda k: (probs[k][0] - bonus(k), spans[k]))
    taken = bytearray(n_tokens)
    kept = []
    for k in order:
        i, j = spans[k]
        if any(taken[i:j]):
            continue
        taken[i:j] = b"\x01" * (j - i)
        kept.append(k)
    return kept


@dataclass
class Names:
    """The names of one record: each kept span's name (``root``), a text of each name,
    and its class."""
    root: dict[int, str]
    surface: dict[str, str]
    label: dict[str, int] = field(default_factory=dict)


def join_names(doc: Doc, texts, probs, kept: list[int]) -> Names:
    """The kept spans joined into names: one :func:`group_key`, or an acronym and its
    expansion (defined in parentheses or not: "TFCD: Training-Free ..."). A name's class
    is the one its spans' summed probabilities favour; a method is proposed when one of
    its spans says so more than any says used."""
    key = {k: group_key(texts[k]) for k in kept}
    uf = UnionFind()
    surface: dict[str, str] = {}
    for k in kept:
        uf.find(key[k])
        surface.setdefault(key[k], texts[k])
    for long, short in doc._.kg_abbreviations or []:
        lk, sk = group_key(long.text), group_key(short.text)
        if lk in surface and sk in surface:
            uf.union(lk, sk)
    keys = sorted(surface)
    shorts = [a for a in keys if any(c.isupper() for c in surface[a])]
    longs = [b for b in keys if sum(1 for p in re.split(r"[\s\-/]+", surface[b]) if p) >= 2]
    for a in shorts:
        fits = [b for b in longs if a != b and initials_match(surface[a], surface[b])]
        # an acronym two names spell out ("RL": reinforcement and representation learning)
        # joins neither; a name with an acronym in it ("OOD detection", "multimodal NER")
        # is no spelling out
        spelled = {uf.find(b) for b in fits if not _HAS_ACRONYM.search(surface[b])}
        if len(spelled) <= 1:
            for b in fits:
                uf.union(b, a)
    names = Names({k: uf.find(key[k]) for k in kept}, surface)
    sums: dict[str, list[float]] = {}
    peak: dict[str, list[float]] = {}
    for k in kept:
        g = names.root[k]
        row = sums.setdefault(g, [0.0] * 5)
        top = peak.setdefault(g, [0.0] * 5)
        for c in range(5):
            row[c] += float(probs[k][c])
            top[c] = max(top[c], float(probs[k][c]))
    for g, row in sums.items():
        c = max(range(1, 5), key=lambda c: (row[c] + (row[1] if c == 2 else 0.0), -c))
        if c in (1, 2):
            c = 1 if peak[g][1] > peak[g][2] else 2
        names.label[g] = c
    return names


def merge_tasks(names: Names) -> dict[str, str]:
    """{name: the task name it joins} for tasks that name one task: one ending another
    ("graph anomaly detection", "anomaly detection") or with the same word stems
    ("classifying images", "image classification")."""
    uf = UnionFind()
    words = {}
    for g, c in names.label.items():
        if c == 3:
            uf.find(g)
            ws = norm_words(names.surface[g])
            words[g] = [w for w in ws if w not in GENERIC_TAIL] or ws
    tasks = sorted(words, key=lambda g: (len(words[g]), g))
    for a in tasks:
        wa = words[a]
        for b in tasks:
            wb = words[b]
            if a != b and uf.find(a) != uf.find(b) and len(wb) > len(wa) and (wb[-len(wa):] == wa
                                                                              or narrows(wa, wb)):
                uf.union(a, b)
    by_stems: dict[frozenset, str] = {}
    for g in tasks:
        stems = stem_bag(words[g])
        if len(stems) >= 2:
            if stems in by_stems:
                uf.union(by_stems[stems], g)
            else:
                by_stems[stems] = g
    return {g: uf.find(g) for g in tasks}


def join_title_proposal(doc: Doc, spans, kept: list[int], names: Names, before: dict[str, int]) -> None:
    """A method name said only in the title ("Detection Failure Resistant Tracker: ...",
    "... with Hypergradient Descent") names the record's proposal when the abstract
    proposes exactly one method ("DFR-FastMOT"): the two are one name. (A method the
    paper only uses is named in its abstract too.)"""
    first = abstract_start(doc)
    if not first:
        return
    where: dict[str, list[int]] = {}
    for k in kept:
        where.setdefault(names.root[k], []).append(spans[k][0])
    proposed = [g for g, c in names.label.items() if c == PROPOSED and any(i >= first for i in where.get(g, ()))]
    if len(proposed) != 1:
        return
    for g, starts in where.items():
        if g != proposed[0] and before.get(g) in (PROPOSED, USED) and all(i < first for i in starts):
            for k in kept:
                if names.root[k] == g:
                    names.root[k] = proposed[0]


def choose(doc: Doc, spans, texts, probs, threshold: float, length_bonus: float = 0.0, relabel=None
           ) -> list[tuple[int, int, int, str]]:
    """(start, end, class, name) of the spans kept as names; ``relabel(kept, names)``,
    if given, may change the names' classes before tasks are merged."""
    kept = best_spans(len(doc), spans, probs, threshold, length_bonus, texts)
    names = join_names(doc, texts, probs, kept)
    if relabel is not None:
        before = dict(names.label)
        relabel(kept, names)
        join_title_proposal(doc, spans, kept, names, before)
    task_of = merge_tasks(names)
    out = []
    for k in kept:
        g = names.root[k]
        out.append((spans[k][0], spans[k][1], names.label[g], task_of.get(g, g)))
    return sorted(out)
