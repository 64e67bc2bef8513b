"""Pure string helpers shared by extraction and resolution."""
from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from functools import lru_cache
import unicodedata
from urllib.parse import quote

_LATEX_CMD = re.compile(r"\\(?:texttt|textit|textsc|textbf|emph|mathrm|mathbf|mathsf|url|href)\s*")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_NO_STRIP = ("ss", "us", "is", "as", "ous")
#: Words a name may skip: in its initials, in the stems it is matched by.
SMALL_WORDS = frozenset("of for and the a an in on with to via by from".split())
#: Words that end a name without changing what it names ("the dynamic pricing problem").
GENERIC_TAIL = frozenset("problem problems task tasks method methods model models framework frameworks approach "
                         "approaches algorithm algorithms technique techniques strategy scheme setting settings "
                         "system systems dataset datasets benchmark benchmarks corpus corpora".split())


@lru_cache(maxsize=1 << 18)  # the words of a corpus recur
def singular(word: str) -> str:
    """A crude English singular for matching: "models" -> "model".

    >>> [singular(w) for w in ["networks", "studies", "analysis", "loss", "data", "processes", "approaches"]]
    ['network', 'study', 'analysis', 'loss', 'data', 'process', 'approach']
    """
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "ches", "shes", "xes")) and word.isalpha():
        return word[:-2]  # "processes", "patches", "meshes", "boxes"
    if len(word) > 3 and word.endswith("s") and not word.endswith(_NO_STRIP) and word.isalpha():
        return word[:-1]
    return word


def stem_bag(words: list[str]) -> frozenset:
    """The words cut to five letters, small words left out: "classifying images" and
    "image classification" share theirs.

    >>> stem_bag(["classifying", "image"]) == stem_bag(["image", "classification"])
    True
    """
    return frozenset(w[:5] for w in words if w not in SMALL_WORDS)


def narrows(short: Sequence[str], long: Sequence[str]) -> bool:
    """Whether ``long`` is ``short`` with words put in between, its first and last words
    kept ("3D detection" of "3D object detection", "online matching" of "online
    stochastic matching"): one task said in more and fewer words.

    >>> narrows(["3d", "detection"], ["3d", "object", "detection"])
    True
    >>> narrows(["image", "classification"], ["image", "classification", "task"])
    False
    """
    if len(short) < 2 or len(long) <= len(short) or short[0] != long[0] or short[-1] != long[-1]:
        return False
    rest = iter(long)
    return all(w in rest for w in short)


def norm_words(text: str) -> list[str]:
    """Lower-cased, singular words of ``text`` (LaTeX, HTML tags and punctuation dropped).

    A plural "s" goes from ordinary words and from acronyms ("LLMs"), not from
    names that end in a capital S ("TeDS").

    >>> norm_words("LLMs and TeDS on <i>graphs</i> of GPs and ReLUs")
    ['llm', 'and', 'teds', 'on', 'graph', 'of', 'gp', 'and', 'relu']
    """
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"</?[A-Za-z][^>]*>", " ", text)
    text = _LATEX_CMD.sub(" ", text).replace("$", " ")
    return [_norm_word(w) for w in _WORD.findall(text)]


@lru_cache(maxsize=1 << 18)  # the words of a corpus recur
def _norm_word(w: str) -> str:
    if w[-1:].isupper() and not w.isupper():  # "TeDS": a name, not a plural
        return w.lower()
    if len(w) >= 3 and w[-1] == "s" and w[-2].isupper() and sum(c.isupper() for c in w) >= 2:
        return w[:-1].lower()  # "GPs", "MDPs", "ReLUs": an acronym's plural
    return singular(w.lower())


@lru_cache(maxsize=1 << 18)  # names repeat across a corpus
def norm_key(text: str) -> str:
    """The matching key of a name: case, hyphens, plurals and markup ignored.

    >>> norm_key("Feature-Shift Localization Networks")
    'feature-shift-localization-network'
    >>> norm_key("Adam(W)") == norm_key("adam w")
    True
    """
    return "-".join(norm_words(text))


@lru_cache(maxsize=1 << 18)
def compact_key(text: str) -> str:
    """Like :func:`norm_key` without separators ("Rank-SHAP" == "RankSHAP")."""
    return "".join(norm_words(text))


_GREEK_NAMES = dict(zip("αβγδεζηθικλμνξοπρστυφχψωϵς",
                        "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho "
                        "sigma tau upsilon phi chi psi omega epsilon sigma".split()))


@lru_cache(maxsize=1 << 16)
def label_slug(label: str) -> str:
    """The words of a label, lower case, joined by hyphens: the readable part of an IRI.
    Words are not stemmed (plural folding belongs to matching, not to names); Greek
    letters are spelled out, markup and punctuation dropped.

    >>> [label_slug(x) for x in ["time series", "NIPS 2018", "ε-Bayes-optimal active learning", "<i>β</i>-VAE"]]
    ['time-series', 'nips-2018', 'epsilon-bayes-optimal-active-learning', 'beta-vae']
    """
    text = unicodedata.normalize("NFKC", label)
    text = re.sub(r"</?[A-Za-z][^>]*>", " ", text)
    text = _LATEX_CMD.sub(" ", text).replace("$", " ").lower()
    text = "".join(f" {_GREEK_NAMES[c]} " if c in _GREEK_NAMES else c for c in text)
    return "-".join(_WORD.findall(text))


def iri_slug(key: str, max_len: int = 80) -> str:
    """A readable, IRI-safe path segment for a key; long keys get a hash suffix.

    >>> iri_slug("feature-shift-localization-network")
    'feature-shift-localization-network'
    >>> iri_slug("")[:5]
    'x-da3'
    >>> iri_slug("0-" + "ł" * 60)[:20]
    '0-%C5%82%C5%82%C5%82'
    """
    slug = quote(key, safe="-")
    if not slug:
        return "x-" + hashlib.sha1(key.encode()).hexdigest()[:10]
    if len(slug) > max_len:  # cut between characters, never inside a percent-escape
        cut = key[: max_len - 11]
        while len(quote(cut, safe="-")) > max_len - 11:
            cut = cut[:-1]
        return quote(cut, safe="-").rstrip("-") + "-" + hashlib.sha1(key.encode()).hexdigest()[:10]
    return slug


def squash_spaces(text: str) -> str:
    """``" ".join(text.split())``: runs of whitespace made one space, none at the ends;
    text that has no whitespace but single inner spaces is returned as it is, without
    the split (every whitespace character but the space is unprintable; most abstracts
    come this way, and splitting each cost a second a build on a large corpus).

    >>> nbsp, newline = chr(0xA0), chr(10)
    >>> squash_spaces("a b"), squash_spaces(f" a{nbsp} b{newline}"), squash_spaces("a  b"), squash_spaces(" ")
    ('a b', 'a b', 'a b', '')
    """
    if text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " ":
        return text
    return " ".join(text.split())


def text_hash(text: str, n: int = 16) -> str:
    """Stable short hash of whitespace-normalized text (the paper identity)."""
    t = squash_spaces(unicodedata.normalize("NFC", text))
    return hashlib.sha256(t.encode("utf-8")).hexdigest()[:n]


_GITHUB = re.compile(
    r"(?:https?://)?(?:www\.)?github\.com/([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))/([A-Za-z0-9._-]+)",
    re.IGNORECASE,
)
_GITHUB_WORD = re.compile("github", re.IGNORECASE)


def find_github(text: str) -> list[tuple[int, int, str]]:
    """GitHub repository URLs in ``text``: (start, end, normalized URL).

    The span covers the URL as written (without trailing punctuation, ``.git``
    or a closing brace); the URL is normalized to https://github.com/owner/repo.

    >>> find_github(r"Code: \\url{https://github.com/AI-sandbox/FSL-Net}.")
    [(11, 48, 'https://github.com/AI-sandbox/FSL-Net')]
    """
    out = []
    if not _GITHUB_WORD.search(text):  # most texts: one literal search, not the pattern at every position
        return out
    for m in _GITHUB.finditer(text):
        owner, repo = m.group(1), m.group(2)
        end = m.end()
        stripped = repo.rstrip(".-_")
        if stripped.lower().endswith(".git"):
            stripped = stripped[:-4]
        end -= len(repo) - len(stripped)
        if not stripped or owner.lower() in {"orgs", "topics", "features", "about", "sponsors"}:
            continue
        out.append((m.start(), end, f"https://github.com/{owner}/{stripped}"))
    return out


def normalize_github(url: str) -> str | None:
    """Normalize one GitHub URL, or None when it is not a repository URL."""
    found = find_github(url)
    return found[0][2] if found else None


def _word(c: str) -> bool:
    return c.isalnum() or c in "_-"


def occurrences(form: str, text: str, folded: str | None = None, start: int = 0,
                ignore_case: bool | None = None, first: bool = False) -> list[tuple[int, int]]:
    """(start, end) of every word-bounded occurrence of ``form`` in ``text`` from
    ``start`` on, left to right without overlaps (only the first if ``first``);
    case-insensitive if ``ignore_case``, by default unless ``form`` has a capital.

    The same matches as ``re.finditer(r"(?<![\\w-])" + re.escape(form) + r"(?![\\w-])")``,
    which it runs for non-ASCII text; ASCII text (``folded`` = its lower case) is
    searched with ``str.find``: compiling one pattern a name cost a third of the
    extraction.

    >>> occurrences("GAN", "GAN, StyleGAN and GANs; GAN-based. GAN")
    [(0, 3), (35, 38)]
    >>> text = "Image classification and image classifications"
    >>> occurrences("image classification", text, text.lower())
    [(0, 20)]
    """
    if ignore_case is None:
        ignore_case = not any(c.isupper() for c in form)
    if folded is None or not form.isascii():
        pattern = re.compile(r"(?<![\w-])" + re.escape(form) + r"(?![\w-])", re.IGNORECASE if ignore_case else 0)
        found = pattern.finditer(text, start)
        if first:
            m = next(found, None)
            return [m.span()] if m else []
        return [m.span() for m in found]
    n = len(form)
    hay, needle = (folded, form.lower()) if ignore_case else (text, form)
    out = []
    i = hay.find(needle, start)
    while i >= 0:
        if (i == 0 or not _word(text[i - 1])) and (i + n == len(text) or not _word(text[i + n])):
            out.append((i, i + n))
            if first:
                break
            i = hay.find(needle, i + n)
        else:
            i = hay.find(needle, i + 1)
    return out


#: The longest context a mention carries: its sentence, or, in a longer one, this many
#: characters of it around the mention (a text without full stops is one long sentence,
#: and a copy of it in each of its mentions would grow with the square of its length).
CONTEXT_MAX = 1000


def context(text: str, sent_start: int, sent_end: int, start: int, end: int, cap: int = CONTEXT_MAX) -> str:
    """The sentence ``text[sent_start:sent_end]`` holding the span ``start:end``, or at most
    ``cap`` characters of it around the span, cut at spaces.

    >>> context("a b c d e f g", 0, 13, 6, 7, cap=5)
    'c d e'
    >>> context("one. two.", 5, 9, 5, 8)
    'two.'
    """
    if sent_end - sent_start <= cap:
        return text[sent_start:sent_end]
    room = max(0, cap - (end - start)) // 2
    lo, hi = max(sent_start, start - room), min(sent_end, end + room)
    if lo > sent_start and text[lo - 1] != " ":  # not mid-word
        space = text.find(" ", lo, start)
        lo = space + 1 if space >= 0 else lo
    if hi < sent_end and text[hi] != " ":
        space = text.rfind(" ", end, hi)
        hi = space if space >= 0 else hi
    return text[lo:hi]

