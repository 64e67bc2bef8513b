"""Text as published, made readable before extraction: markup out, offsets kept.

Abstracts come with HTML tags and entities, LaTeX (``$\\beta$-VAE``, ``\\emph{X}``,
``{\\em X}``, ``\\'{e}``), and PDF artefacts (``princi(cid:173)ples``, words hyphenated
across a line break, ligatures: ``classiﬁcation``). :func:`normalize` returns the clean
text and, when anything changed, a map from each clean character (and the end) to its
offset in the original, so that mentions found in the clean text point into the text
the user gave.

Inline math that is one symbol or word (``$k$``, ``$\\beta$``, ``$\\ell_1$``) keeps its
letters; any other formula becomes ``§``, which no name contains, so that no fragment
of a formula (``O(1/\\sqrt{T})``) becomes a name.

>>> normalize("We use $\\\\beta$-VAE on <i>MNIST</i>.")[0]
'We use β-VAE on MNIST.'
>>> clean, offsets = normalize("princi(cid:173)ples of {\\\\em Deep Nets} in $O(1/\\\\sqrt{T})$ time")
>>> clean
'principles of Deep Nets in § time'
>>> s, e = offsets.span(14, 23)
>>> "princi(cid:173)ples of {\\\\em Deep Nets} in $O(1/\\\\sqrt{T})$ time"[s:e]
'Deep Nets'
"""
from __future__ import annotations

import html
import re
import unicodedata

GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "vartheta": "θ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν",
    "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "upsilon": "υ", "phi": "φ", "varphi": "φ",
    "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ",
    "Pi": "Π", "Sigma": "Σ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω", "ell": "ℓ",
}
_ACCENTS = {"'": "\u0301", "`": "\u0300", '"': "\u0308", "^": "\u0302", "~": "\u0303", "c": "\u0327", "=": "\u0304",
            "v": "\u030c", "u": "\u0306", "H": "\u030b", ".": "\u0307"}
_LETTERS = {"L": "Ł", "l": "ł", "O": "Ø", "o": "ø", "ss": "ß", "ae": "æ", "AE": "Æ", "i": "ı"}
_SIMPLE_MATH = re.compile(r"^\s*(?:\\([A-Za-z]+)|([A-Za-z0-9]{1,12}))\s*(?:[_^]\{?([A-Za-z0-9]{1,4})\}?)?\s*$")
_TEXT_CMDS = ("emph|textit|textbf|texttt|textsc|textsf|textrm|textup|text|mathrm|mathbf|mathit|mathsf|mathtt|"
              "mathcal|mathbb|boldsymbol|bm|url|underline|textnormal")
_PATTERN = re.compile(
    r"(?P<tag></?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]{0,200})?/?>)"
    r"|(?P<entity>&(?:[A-Za-z]{2,8}|#\d{1,6}|#x[0-9A-Fa-f]{1,5});)"
    r"|(?P<cid>\(cid:(?P<cidn>\d{1,4})\))"
    # "learn-\ning", or "learn- ing" once the line break became a space; not "pre- and post-"
    r"|(?P<hyph>(?<=[a-z])-(?:[ \t]*\r?\n[ \t]*|[ \t]+)(?!(?:and|or|nor|to|as|vs)\b)(?=[a-z]))"
    r"|(?P<nl>[ \t]*\r?\n[ \t]*)"
    r"|(?P<shy>\u00ad)"
    # a PDF's typographic ligatures ("classiﬁcation")
    r"|(?P<lig>[\ufb00-\ufb06])"
    r"|(?P<math>(?<!\\)\$(?P<mathbody>[^$]{1,300}?)(?<!\\)\$)"
    r"|(?P<accent>\\(?P<acc>['`\"^~=.]|[cvuH](?=\{))\{?(?P<accch>[A-Za-z])\}?)"
    r"|(?P<href>\\href\{[^{}]{0,300}\}\{)"
    r"|(?P<cmd>\\(?:" + _TEXT_CMDS + r")\s*\{)"
    # a text command whose braces the source lost ("\emphGaussian process")
    r"|(?P<glued>\\(?:" + _TEXT_CMDS + r")(?=[A-Za-z]))"
    r"|(?P<letter>\\(?:L|l|O|o|ss|ae|AE|i)(?![A-Za-z]))"
    r"|(?P<group>\{\\(?:em|it|bf|sc|tt|sl|rm|sf)\b\s*)"
    r"|(?P<cite>~?\\(?:cite[tp]?|ref|eqref|footnote)\{[^{}]{0,200}\})"
    r"|(?P<escaped>\\[%&#_])"
    # any other command outside math: an author's macro ("\sgd"); its letters stay
    r"|(?P<macro>\\(?=[A-Za-z]{2,}))"
    r"|(?P<brace>(?<!\\)[{}])"
    r"|(?P<bold>\*\*|(?<![A-Za-z0-9])__(?=[A-Za-z])|(?<=[A-Za-z0-9])__(?![A-Za-z0-9]))"
    r"|(?P<dollar>(?<!\\)\$)"
)


def _math(body: str) -> str:
    m = _SIMPLE_MATH.match(body)
    if not m:
        return "§"
    cmd, word, sub = m.groups()
    if cmd:
        if cmd not in GREEK:
            return "§"
        word = GREEK[cmd]
    return word + (sub or "")


def _replacement(m: re.Match) -> str:
    kind = m.lastgroup
    if kind in ("mathbody", "cidn", "acc", "accch"):  # inner groups never end a match
        kind = next(k for k in ("math", "cid", "accent") if m.group(k))
    if kind == "tag":
        name = re.match(r"</?([A-Za-z0-9]+)", m.group()).group(1).lower()
        return " " if name in ("br", "p", "div", "li", "ul", "ol", "tr", "td", "hr") else ""
    if kind == "entity":
        return html.unescape(m.group())
    if kind == "cid":
        return "" if m.group("cidn") == "173" else " "
    if kind == "nl":
        return " "
    if kind == "letter":
        return _LETTERS[m.group()[1:]]
    if kind in ("hyph", "shy", "href", "cmd", "glued", "macro", "group", "brace", "dollar", "bold"):
        return ""
    if kind == "math":
        return _math(m.group("mathbody"))
    if kind == "accent":
        return unicodedata.normalize("NFC", m.group("accch") + _ACCENTS[m.group("acc")])
    if kind == "cite":
        return ""
    if kind == "escaped":
        return m.group()[1]
    if kind == "lig":
        return unicodedata.normalize("NFKC", m.group())
    return m.group()


class Offsets:
    """Where each character of a clean text came from: ``starts[k]`` and ``ends[k]`` are
    the original range of clean character ``k`` (a replacement's characters all span
    the markup they replace); ``starts`` has one more entry, for the end."""

    __slots__ = ("starts", "ends")

    def __init__(self, starts: list[int], ends: list[int]):
        self.starts, self.ends = starts, ends

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original range of the clean range ``[start, end)``."""
        n = len(self.ends)
        start, end = min(start, n), min(end, n)  # a token may run past the title into its separator
        if end <= start:
            return self.starts[start], self.starts[start]
        return self.starts[start], self.ends[end - 1]


def normalize(text: str) -> tuple[str, Offsets | None]:
    """The clean text, and where its characters came from when anything changed (else None)."""
    parts: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    pos = 0
    for m in _PATTERN.finditer(text):
        rep = _replacement(m)
        if rep == m.group():
            continue
        parts.append(text[pos:m.start()])
        starts.extend(range(pos, m.start()))
        ends.extend(range(pos + 1, m.start() + 1))
        parts.append(rep)
        starts.extend([m.start()] * len(rep))
        ends.extend([m.end()] * len(rep))
        pos = m.end()
    if not parts:
        return text, None
    parts.append(text[pos:])
    starts.extend(range(pos, len(text) + 1))
    ends.extend(range(pos + 1, len(text) + 1))
    return "".join(parts), Offsets(starts, ends)


#: What separates a record's author keywords from its abstract in the text extraction
#: reads (a NUL: no keyword or abstract holds one in practice; one that does only moves
#: its own tail into the keywords).
KEYWORDS_MARK = "\x00keywords: "


def normalize_record(text: str, title_len: int, sep: str
                     ) -> tuple[str, int, Offsets | None, Offsets | None, tuple[str, ...]]:
    """:func:`normalize` of a record's text (``title + sep + abstract``, when
    ``title_len``, then the keywords behind :data:`KEYWORDS_MARK`): the clean text, its
    title length, the maps of the title and of the abstract, and the keywords."""
    keywords: tuple[str, ...] = ()
    if KEYWORDS_MARK in text:
        text, _, tail = text.rpartition(KEYWORDS_MARK)
        keywords = tuple(k.strip() for k in tail.split(";") if k.strip())
    if not title_len:
        clean, amap = normalize(text)
        return clean, 0, None, amap, keywords
    title, tmap = normalize(text[:title_len - len(sep)])
    abstract, amap = normalize(text[title_len:])
    title = title.rstrip(". ") or title
    return title + sep + abstract, len(title) + len(sep), tmap, amap, keywords
