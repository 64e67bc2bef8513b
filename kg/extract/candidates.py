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
from dataclasses import dataclass, field
from functools import lru_cache

from spacy.tokens import Doc

from kg.text import compact_key, singular
from kg.extract.components import sentences
from kg.extract.lexicon import lookup
from kg.extract.tokens import token_texts

MAX_LEN = 6
#: The longest phrase the corpus statistics count (:mod:`kg.extract.termstats`).
MAX_TERM_WORDS = 4

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
_DATA_WORDS = frozenset("dataset datasets benchmark benchmarks corpus corpora suite testbed environment "
                        "environments collection annotations".split())
_SENT_CUES = frozenset("propose proposes introduce introduces present presents develop develops "
                       "design designs devise call called term termed dub dubbed name named".split())


_NO_GROUPS = frozenset()  # the rule groups of a token no rule covers

#: No word of a name is longer (the long runs a text can carry are cut into pieces of 100).
MAX_WORD = 60


def _breaks(text: str, lower: str) -> bool:
    return lower in BREAK or len(text) > MAX_WORD or bool(_PUNCT.match(text)) or text.isspace() or not text


def _edge_ok(text: str, lower: str) -> bool:
    return not _breaks(text, lower) and lower not in INNER


@lru_cache(maxsize=1 << 16)  # words recur across a corpus
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


def abstract_start(doc: Doc) -> int:
    """The index of the abstract's first token (0 without a title)."""
    title_len = doc._.kg_title_len or 0
    return next((t.i for t in doc if t.idx >= title_len), len(doc)) if title_len else 0


def candidate_spans(doc: Doc, max_len: int = MAX_LEN) -> list[tuple[int, int]]:
    """Every (start, end) token range that may name something, sentence by sentence."""
    texts, lowers = token_texts(doc)
    kinds: dict[str, tuple[bool, bool]] = {}  # per distinct text: (may stand at an edge, ends a run)
    for t, lw in zip(texts, lowers):
        if t not in kinds:
            kinds[t] = (_edge_ok(t, lw), _breaks(t, lw) and lw not in INNER)
    edge = [kinds[t][0] for t in texts]
    stop = [kinds[t][1] for t in texts]
    out = []
    for sent in sentences(doc):
        s, e = sent.start, sent.end
        for i in range(s, e):
            if not edge[i]:
                continue
            opened = 0  # "(" not closed yet inside the run ("SurvSHAP(t)", "Adam(W)")
            for j in range(i + 1, min(e, i + max_len) + 1):
                t = texts[j - 1]
                if j - 1 > i and t == ")" and opened > 0:
                    out.append((i, j))
                    opened -= 1
                    continue
                if j - 1 > i and stop[j - 1]:
                    break
                if "(" in t or ")" in t:
                    opened += t.count("(") - t.count(")")
                if edge[j - 1]:
                    out.append((i, j))
    return out


def phrase_key(lowers: list[str], lasts: list[str], i: int, j: int) -> str:
    """The key of tokens ``[i, j)`` in the corpus statistics (:mod:`kg.extract.termstats`):
    their lower case, the last word singular."""
    return " ".join(lowers[i:j - 1] + [lasts[j - 1]])


def _bin(n: int) -> str:
    return "0" if n <= 0 else "1" if n == 1 else "2" if n == 2 else "3-5" if n <= 5 else "6+"


@dataclass
class DocContext:
    """What the features of one document's candidates share, computed once."""
    texts: list[str]
    lowers: list[str]
    shapes: list[str]  # per token: :func:`token_shape`
    lasts: list[str]  # per token: its lower case, singular
    title_end: int  # token index where the abstract starts (0 without a title)
    title_colon: int  # token index of the title's colon, or -1
    title_caps: bool  # the title capitalizes its words ("Learning to Rank with Deep Nets")
    sent_of: list[int]
    cue_sents: frozenset
    data_sents: frozenset  # sentences that speak of a dataset or benchmark
    rule_spans: dict  # (start, end) -> list of "group|label"
    rule_tokens: list  # per token: set of groups covering it
    abbr_long: dict  # (start, end) -> defined type or ""
    abbr_short: dict
    counts: dict  # compact key -> occurrences of the candidate text in the document
    keywords: frozenset
    key_flags: dict = None  # compact key -> what its occurrences share (in the title, in a cue sentence...)
    classes: list = None  # per token: its word classes (two granularities) or None
    terms: object = None  # a :class:`~kg.extract.termstats.TermStats`: what the corpus says of a phrase
    left: dict = field(default_factory=dict)  # token index -> its left-edge features
    right: dict = field(default_factory=dict)  # token index -> right-edge features of a span ending there


def doc_context(doc: Doc, rule_groups: tuple[str, ...], keywords: frozenset = frozenset(),
                word_classes: dict | None = None, terms=None) -> DocContext:
    from kg.extract.components import defined_type

    texts, lowers = token_texts(doc)
    title_end = abstract_start(doc)
    title_colon = next((i for i in range(title_end) if texts[i] == ":"), -1)
    long_words = [t for t in texts[:title_end] if len(t) > 3 and t.isalpha()]
    title_caps = len(long_words) >= 2 and sum(t[0].isupper() for t in long_words) >= 0.7 * len(long_words)
    sent_of = [0] * len(doc)
    cue_sents = set()
    data_sents = set()
    for k, sent in enumerate(sentences(doc)):
        has_we = False
        for i in range(sent.start, sent.end):
            sent_of[i] = k
            if lowers[i] in ("we", "our", "this", "paper"):
                has_we = True
            if has_we and lowers[i] in _SENT_CUES:
                cue_sents.add(k)
            if lowers[i] in _DATA_WORDS:
                data_sents.add(k)
    rule_spans: dict = {}
    rule_tokens: list = [_NO_GROUPS] * len(doc)  # a set of its own for each token a rule covers
    for group in rule_groups:
        for span in doc.spans.get(group, []):
            rule_spans.setdefault((span.start, span.end), []).append(f"{group}|{span.label_}")
            for i in range(span.start, span.end):
                if rule_tokens[i] is _NO_GROUPS:
                    rule_tokens[i] = set()
                rule_tokens[i].add(group)
    abbr_long, abbr_short = {}, {}
    for long, short in doc._.kg_abbreviations or []:
        typ = defined_type(long, short) or ""
        abbr_long[(long.start, long.end)] = typ
        abbr_short[(short.start, short.end)] = typ
    shapes = list(map(token_shape, texts))
    lasts = list(map(singular, lowers))
    return DocContext(texts, lowers, shapes, lasts, title_end, title_colon, title_caps, sent_of,
                      frozenset(cue_sents), frozenset(data_sents), rule_spans, rule_tokens,
                      abbr_long, abbr_short, {}, keywords, {},
                      [word_classes.get(w) for w in lowers] if word_classes else [None] * len(lowers), terms)


_APPOS_OPEN = frozenset("a an the our this which".split())
_APPOS_END = frozenset(", . ; : ( ) that which for of to with on in by from is are was were using".split())


def apposition_head(lowers: list[str], j: int) -> int:
    """The index of the last word of an apposition right after ``j`` ("X, a novel
    generative model, ..." -> "model"), or -1."""
    if j + 2 >= len(lowers) or lowers[j] != "," or lowers[j + 1] not in _APPOS_OPEN:
        return -1
    last = -1
    for k in range(j + 2, min(len(lowers), j + 9)):
        if lowers[k] in _APPOS_END:
            break
        last = k
    return last


def left_features(ctx: DocContext, i: int) -> list[str]:
    """The features of a candidate's left edge: its first word and what stands before it
    (a function of ``i`` alone, computed once per index of a document)."""
    left = ctx.left.get(i)
    if left is not None:
        return left
    lowers, cls = ctx.lowers, ctx.classes
    prev = lowers[i - 1] if i > 0 else "<s>"
    prev2 = lowers[i - 2] if i > 1 else "<s>"
    sh0 = ctx.shapes[i]
    left = ["f=" + lowers[i], "p=" + prev, f"p2={prev2} {prev}", f"p|sh={prev}|{sh0}", "sh0=" + sh0]
    if i >= 2 and lowers[i - 1] == ",":
        left.append("bp=" + ctx.lasts[i - 2])
    _class_features(left, cls, (("cf", i), ("cp", i - 1)))
    left.extend("L=" + w for w in lowers[max(0, i - 4):i])
    k = ctx.sent_of[i]
    if k in ctx.data_sents:
        left.append("data_sent")
        if k in ctx.cue_sents:
            left.append("data_cue_sent")
    if i >= ctx.title_end and k in ctx.cue_sents:
        left.extend(("cue_sent", "cue_sent|sh=" + sh0))
    rules = ctx.rule_tokens
    if i > 0 and rules[i] and rules[i - 1]:
        left.extend("rcross=" + g for g in sorted(rules[i] & rules[i - 1]))
    ctx.left[i] = left
    return left


def right_features(ctx: DocContext, j: int) -> list[str]:
    """The features of the right edge of a candidate ending at ``j``: its last word and
    what follows (computed once per index of a document)."""
    right = ctx.right.get(j)
    if right is not None:
        return right
    lowers, cls = ctx.lowers, ctx.classes
    last, shl = ctx.lasts[j - 1], ctx.shapes[j - 1]
    nxt = lowers[j] if j < len(lowers) else "</s>"
    nxt2 = lowers[j + 1] if j + 1 < len(lowers) else "</s>"
    right = ["l=" + last, "x=" + nxt, f"x2={nxt} {nxt2}", f"x|sh={nxt}|{shl}", f"l|x={last}|{nxt}",
             "shl=" + shl]
    # word endings say what an unseen name is ("...Bench", "...Net", "...ization")
    lw = lowers[j - 1]
    if len(lw) > 4:
        right.extend(("s3=" + lw[-3:], "s4=" + lw[-4:]))
    head = apposition_head(lowers, j)
    if head >= 0:
        right.append("ap=" + ctx.lasts[head])
        if cls[head] is not None:
            right.append(f"apc={cls[head][1]}")
    _class_features(right, cls, (("cl", j - 1), ("cx", j)))
    right.extend("R=" + w for w in lowers[j:j + 4])
    ctx.right[j] = right
    return right


def _class_features(f: list[str], cls: list, where) -> None:
    for tag, k in where:
        c = cls[k] if 0 <= k < len(cls) else None
        if c is not None:
            f.append(f"{tag}={c[0]}")
            f.append(f"{tag}2={c[1]}")


def span_features(ctx: DocContext, i: int, j: int, text: str, lexicon) -> list[str]:
    """The features of the candidate ``[i, j)`` whose text is ``text``; ``lexicon(key)``
    gives learned-lexicon features of its compact key (a list of strings): its text's,
    its edges' (computed once per token index), its place's and its key's in the document."""
    return [*text_features(ctx, i, j, text, lexicon), *left_features(ctx, i), *right_features(ctx, j),
            *place_features(ctx, i, j),
            *key_features(ctx, compact_key(text))]


def _shape(shapes: list[str]) -> str:
    n = len(shapes)
    return "_".join(shapes) if n <= 3 else f"{shapes[0]}_{shapes[1]}_.._{shapes[-1]}"


def text_features(ctx: DocContext, i: int, j: int, text: str, lexicon) -> list[str]:
    """The features of the candidate that depend on its text and tokens alone: the same
    wherever the same span stands, in any document."""
    lowers = ctx.lowers
    n = j - i
    last = ctx.lasts[j - 1]
    f = ["b", "w=" + " ".join(lowers[i:j]), f"n={min(n, 5)}", "sh=" + _shape(ctx.shapes[i:j]),
         f"l2={lowers[j - 2] if n > 1 else ''} {last}"]
    if n <= 3:
        cls = ctx.classes
        f.append("cs=" + "_".join(str(c[0]) if c is not None else "-" for c in cls[i:j]))
    if text.count("(") != text.count(")"):
        f.append("unbalanced")
    gaz = lookup(text)
    if gaz:
        f.append("gaz=" + gaz)
        f.append(f"gaz|n={gaz}|{min(n, 3)}")
    if ctx.terms is not None and n <= MAX_TERM_WORDS:
        f.extend(ctx.terms.features(phrase_key(lowers, ctx.lasts, i, j)))
    f.extend(lexicon(compact_key(text)))
    return f


def place_features(ctx: DocContext, i: int, j: int) -> list[str]:
    """The features of where the candidate stands: the words just outside it with its
    last word, the title, parentheses, the rules' spans and the defined abbreviations."""
    lowers = ctx.lowers
    prev = lowers[i - 1] if i > 0 else "<s>"
    nxt = lowers[j] if j < len(lowers) else "</s>"
    f = [f"p|l={prev}|{ctx.lasts[j - 1]}"]
    if i < ctx.title_end:
        tag = "tcaps" if ctx.title_caps else "title"
        f.append(tag)
        f.append(f"{tag}|sh={_shape(ctx.shapes[i:j])}")
        if ctx.title_colon >= 0 and j <= ctx.title_colon:
            f.append("title_head" + ("_all" if i == 0 and j == ctx.title_colon else ""))
        end = ctx.title_end - (ctx.title_end > 0 and lowers[ctx.title_end - 1] == ".")
        if j == end and i == 0:
            f.append("title_whole")
        elif j == end and ctx.title_colon >= 0 and i == ctx.title_colon + 1:
            f.append("title_tail_all")
    if prev == "(" and nxt == ")":
        f.append("paren")
    rule_tokens = ctx.rule_tokens
    exact = ctx.rule_spans.get((i, j))
    if exact:
        for r in exact:
            f.append("r=" + r)
    elif rule_tokens[i]:
        inside = rule_tokens[i].intersection(*rule_tokens[i + 1:j]) if j - i > 1 else rule_tokens[i]
        for g in sorted(inside):
            f.append("rin=" + g)
    if (i, j) in ctx.abbr_long:
        f.append("abl=" + ctx.abbr_long[(i, j)])
    if (i, j) in ctx.abbr_short:
        f.append("abs=" + ctx.abbr_short[(i, j)])
    return f


def key_features(ctx: DocContext, key: str) -> list[str]:
    """The features of the candidate's compact key in this document: how often it
    recurs, where its occurrences stand, whether the authors gave it as a keyword."""
    f = ["cnt=" + _bin(ctx.counts.get(key, 0))]
    kf = ctx.key_flags.get(key)
    if kf:
        for flag in sorted(kf):
            f.append("K=" + flag)
        if "in_title" in kf and "in_abs" in kf:
            f.append("K=title+abs")
    if key in ctx.keywords:
        f.append("kw")
    return f
