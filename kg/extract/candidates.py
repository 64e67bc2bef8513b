"""Candidate spans of a document and their features, for the learned span classifier.

A candidate is a run of one to :data:`MAX_LEN` word tokens inside one sentence that neither
starts nor ends with a function word or punctuation: "image classification", "ResNet-50",
"Tanks and Temples", "learning with noisy labels". Every one the rules marked is a
candidate too. Each gets a list of string features: its words and shape, the words around
it, which rules marked it, which lexicons know it, where it stands (title, parentheses,
a proposal sentence) and how often the document repeats it. The classifier
(:mod:`kg.extract.classifier`) weighs them; this module only describes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from spacy.tokens import Doc

from ..text import compact_key, singular
from .components import sentences
from .lexicon import lookup
from .tokens import token_texts

MAX_LEN = 6

#: Words that may stand inside a name but never at its edge ("Tanks and Temples",
#: "learning with noisy labels", "sequence-to-sequence").
INNER = frozenset("of for and to in on with under from over via by as at 's '".split())
#: Words that end a candidate: a name never runs across them.
BREAK = frozenset("""
a an the this that these those it its we our us they their them he she his her you your i my
is are was were be been being am has have had do does did done can could will would shall should
may might must not no nor but or if then than so such also thus hence therefore however while
which who whom whose where when what why how there here both each every all any some many much
more most less least few several other another same very only just even still yet already
into onto upon about above below between among through during before after against without within
toward towards across around along behind beyond despite since until unlike like e.g. i.e. et al
""".split()) | INNER
_PUNCT = re.compile(r"^[^\w$\\*+]+$")
_SENT_CUES = frozenset("propose proposes introduce introduces present presents develop develops "
                       "design designs devise call called term termed dub dubbed name named".split())


@dataclass(frozen=True)
class Candidate:
    start: int  # token indices, half-open
    end: int
    text: str


def _breaks(text: str, lower: str) -> bool:
    return lower in BREAK or bool(_PUNCT.match(text)) or text.isspace() or not text


def _edge_ok(text: str, lower: str) -> bool:
    return not _breaks(text, lower) and lower not in INNER


def token_shape(text: str) -> str:
    """A coarse shape: ``X`` all caps, ``Xx`` title case, ``x`` lower, ``d`` digits,
    ``M`` mixed (inner capitals or letters with digits), ``p`` other.

    >>> [token_shape(t) for t in ["BERT", "Adam", "image", "2017", "ResNet-50", "-"]]
    ['X', 'Xx', 'x', 'd', 'M', 'p']
    """
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return "d" if any(c.isdigit() for c in text) else "p"
    if any(c.isdigit() for c in text):
        return "M"
    if all(c.isupper() for c in letters):
        return "X" if len(letters) > 1 else "Xx"
    if letters[0].isupper() and all(c.islower() for c in letters[1:]):
        return "Xx"
    if any(c.isupper() for c in letters[1:]):
        return "M"
    return "x"


@lru_cache(maxsize=1 << 16)
def _word_class(lower: str) -> str:
    return singular(lower)


def candidate_spans(doc: Doc, max_len: int = MAX_LEN) -> list[tuple[int, int]]:
    """Every (start, end) token range that may name something, sentence by sentence."""
    texts, lowers = token_texts(doc)
    out = []
    for sent in sentences(doc):
        s, e = sent.start, sent.end
        for i in range(s, e):
            if not _edge_ok(texts[i], lowers[i]):
                continue
            for j in range(i + 1, min(e, i + max_len) + 1):
                t, lw = texts[j - 1], lowers[j - 1]
                if j - 1 > i and _breaks(t, lw) and lw not in INNER:
                    break
                if _edge_ok(t, lw):
                    out.append((i, j))
    return out


def _bin(n: int) -> str:
    return "0" if n <= 0 else "1" if n == 1 else "2" if n == 2 else "3-5" if n <= 5 else "6+"


def _ratio_bin(a: int, b: int) -> str:
    if b <= 0:
        return "na"
    r = a / b
    return "0" if r == 0 else "<.2" if r < .2 else "<.5" if r < .5 else "<.8" if r < .8 else "hi"


@dataclass
class DocContext:
    """What the features of one document's candidates share, computed once."""
    texts: list[str]
    lowers: list[str]
    title_end: int  # token index where the abstract starts (0 without a title)
    title_colon: int  # token index of the title's colon, or -1
    sent_of: list[int]
    cue_sents: frozenset
    rule_spans: dict  # (start, end) -> list of "group|label"
    rule_tokens: list  # per token: set of groups covering it
    abbr_long: dict  # (start, end) -> defined type or ""
    abbr_short: dict
    counts: dict  # compact key -> occurrences of the candidate text in the document
    keywords: frozenset


def doc_context(doc: Doc, rule_groups: tuple[str, ...], keywords: frozenset = frozenset()) -> DocContext:
    from .components import defined_type

    texts, lowers = token_texts(doc)
    title_len = doc._.kg_title_len or 0
    title_end = 0
    if title_len:
        title_end = next((t.i for t in doc if t.idx >= title_len), len(doc))
    title_colon = next((i for i in range(title_end) if texts[i] == ":"), -1)
    sent_of = [0] * len(doc)
    cue_sents = set()
    for k, sent in enumerate(sentences(doc)):
        has_we = False
        for i in range(sent.start, sent.end):
            sent_of[i] = k
            if lowers[i] in ("we", "our", "this", "paper"):
                has_we = True
            if has_we and lowers[i] in _SENT_CUES:
                cue_sents.add(k)
    rule_spans: dict = {}
    rule_tokens: list = [set() for _ in range(len(doc))]
    for group in rule_groups:
        for span in doc.spans.get(group, []):
            rule_spans.setdefault((span.start, span.end), []).append(f"{group}|{span.label_}")
            for i in range(span.start, span.end):
                rule_tokens[i].add(group)
    abbr_long, abbr_short = {}, {}
    for long, short in doc._.kg_abbreviations or []:
        typ = defined_type(long, short) or ""
        abbr_long[(long.start, long.end)] = typ
        abbr_short[(short.start, short.end)] = typ
    return DocContext(texts, lowers, title_end, title_colon, sent_of, frozenset(cue_sents), rule_spans, rule_tokens,
                      abbr_long, abbr_short, {}, keywords)


def span_features(ctx: DocContext, i: int, j: int, lexicon) -> list[str]:
    """The features of the candidate ``[i, j)``; ``lexicon(key)`` gives learned-lexicon
    features of its compact key (a list of strings)."""
    texts, lowers = ctx.texts, ctx.lowers
    words = lowers[i:j]
    text = " ".join(texts[i:j])
    shapes = [token_shape(t) for t in texts[i:j]]
    shape = "_".join(shapes) if len(shapes) <= 3 else "_".join(shapes[:2]) + "_.._" + shapes[-1]
    first, last = words[0], _word_class(words[-1])
    n = j - i
    prev = lowers[i - 1] if i > 0 else "<s>"
    prev2 = lowers[i - 2] if i > 1 else "<s>"
    nxt = lowers[j] if j < len(lowers) else "</s>"
    nxt2 = lowers[j + 1] if j + 1 < len(lowers) else "</s>"
    key = compact_key(text)
    f = [
        "b", f"w={' '.join(words)}", f"n={min(n, 5)}", f"sh={shape}", f"f={first}", f"l={last}",
        f"l2={' '.join(words[-2:-1])} {last}", f"p={prev}", f"p2={prev2} {prev}", f"x={nxt}", f"x2={nxt} {nxt2}",
        f"p|sh={prev}|{shapes[0]}", f"x|sh={nxt}|{shapes[-1]}", f"p|l={prev}|{last}", f"l|x={last}|{nxt}",
        f"sh0={shapes[0]}", f"shl={shapes[-1]}",
    ]
    if i < ctx.title_end:
        f.append("title")
        f.append(f"title|sh={shape}")
        if ctx.title_colon >= 0 and j <= ctx.title_colon:
            f.append("title_head" + ("_all" if i == 0 and j == ctx.title_colon else ""))
    elif ctx.sent_of[i] in ctx.cue_sents:
        f.append("cue_sent")
        f.append(f"cue_sent|sh={shapes[0]}")
    if prev == "(" and nxt == ")":
        f.append("paren")
    for r in ctx.rule_spans.get((i, j), ()):
        f.append("r=" + r)
    inside = set.intersection(*(ctx.rule_tokens[k] for k in range(i, j)))
    for g in sorted(inside):
        if (i, j) not in ctx.rule_spans:
            f.append("rin=" + g)
    if i > 0:
        for g in sorted(ctx.rule_tokens[i] & ctx.rule_tokens[i - 1]):
            f.append("rcross=" + g)
    if (i, j) in ctx.abbr_long:
        f.append("abl=" + ctx.abbr_long[(i, j)])
    if (i, j) in ctx.abbr_short:
        f.append("abs=" + ctx.abbr_short[(i, j)])
    gaz = lookup(text)
    if gaz:
        f.append("gaz=" + gaz)
        f.append(f"gaz|n={gaz}|{min(n, 3)}")
    f.append("cnt=" + _bin(ctx.counts.get(key, 0)))
    if key in ctx.keywords:
        f.append("kw")
    f.extend(lexicon(key))
    return f
