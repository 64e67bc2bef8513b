"""The name lists shipped in ``kg/resources`` and the word lists rules share.

- ``methods_curated.txt`` / ``datasets_curated.txt``: general lexicons of
  well-known ML methods and datasets written for abstract-kg; a line lists
  the spellings of one entity (``A | B | C``, the first is canonical).
- ``tasks.txt`` / ``datasets.txt`` / ``methods.txt``: Papers with Code names
  cleaned by ``scripts/build_gazetteers.py`` (CC-BY-SA 4.0).
- ``task_heads.txt``: head nouns of task names (from the PwC task names and the
  SciERC train/dev and SciREX train Task annotations), one a line.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources


@dataclass(frozen=True)
class Entry:
    type: str
    canonical: str
    forms: tuple[str, ...]


def _lines(name: str) -> list[str]:
    text = (resources.files("kg") / "resources" / name).read_text(encoding="utf-8")
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


@lru_cache(maxsize=None)
def entries() -> tuple[Entry, ...]:
    """Every gazetteer entry. The curated lexicons decide the type of a form they
    list; a form two Papers with Code lists claim with different types is dropped."""
    curated: list[Entry] = []
    for type_, name in (("Method", "methods_curated.txt"), ("Dataset", "datasets_curated.txt")):
        for ln in _lines(name):
            forms = tuple(f.strip() for f in ln.split("|") if f.strip())
            curated.append(Entry(type_, forms[0], forms))
    claimed = {f.lower() for e in curated for f in e.forms}
    pwc: list[Entry] = []
    for type_, name in (("Task", "tasks.txt"), ("Dataset", "datasets.txt"), ("Method", "methods.txt")):
        pwc.extend(Entry(type_, n, (n,)) for n in _lines(name) if n.lower() not in claimed)
    owner: dict[str, set[str]] = {}
    for e in pwc:
        owner.setdefault(e.canonical.lower(), set()).add(e.type)
    return tuple(curated) + tuple(e for e in pwc if len(owner[e.canonical.lower()]) == 1)


@lru_cache(maxsize=None)
def task_heads() -> frozenset[str]:
    return frozenset(_lines("task_heads.txt"))


@lru_cache(maxsize=None)
def _forms() -> tuple[dict[str, str], dict[str, str]]:
    exact: dict[str, str] = {}
    lower: dict[str, str] = {}
    for e in entries():
        for f in e.forms:
            caps = any(c.isupper() for c in f)
            if (len(f.split()) == 1 and (caps or any(c.isdigit() for c in f))) or (e.type == "Dataset" and caps):
                exact.setdefault(f, e.type)
            else:
                lower.setdefault(f.lower(), e.type)
    return exact, lower


@lru_cache(maxsize=1 << 16)
def lookup(text: str) -> str | None:
    """The gazetteer type of a surface form, matched as the gazetteer matches it:
    names with capitals or digits exactly ("ComplEx" is not "complex"), others
    case-insensitively."""
    exact, lower = _forms()
    return exact.get(text) or lower.get(text.lower())


#: Words that never start or sit inside a task name (function words, verbs, evaluative adjectives).
STOP = frozenset("""
a an the this that these those our their its his her my your we they it he she you i me us them
of in on at to for from by with without via into onto over under between among across through
and or but nor so yet as than then if when while where whereas which who whom whose what how why
is are was were be been being am has have had do does did can could may might must shall should will would
not no also only just even very more most less least much many few several some any each every all both
such other another same different various new novel existing current recent previous prior standard
traditional conventional classical typical popular common general specific simple efficient effective
accurate fast scalable robust strong weak key main important challenging fundamental significant
large small high low better best state-of-the-art sota downstream real-world practical theoretical
empirical extensive comprehensive modern powerful principled generic unified first second two three
one using used use based improve improves improved improving achieve achieves achieved show shows shown
propose proposes proposed present presents presented introduce introduces introduced study studies
consider considers address addresses tackle tackles enable enables enabling provide provides allow allows
make makes made leverage leverages perform performs require requires remain remains often widely
however thus therefore moreover furthermore here there well e.g. i.e. etc et al al. ours
paper work approach approaches method methods framework frameworks models algorithm algorithms
technique techniques result results experiment experiments performance problem problems task tasks
setting settings way ways case cases number amount type types kind kinds form forms level levels
against including towards toward despite beyond upon within versus around about above below
quantitative qualitative future greedy iterative stable optimistic pessimistic multiple numerous tight
exact approximate reliable faithful successful successive subsequent additional further overall entire
whole-model final initial original underlying corresponding respective relevant appropriate suitable
possible potential desirable optimal suboptimal near-optimal provable provably improved enhanced
five four six seven eight nine ten dozens hundreds thousands millions either neither whether
""".split())

#: Endings of descriptive compound adjectives that qualify a method, not name a task ("memory-efficient").
DESCRIPTIVE_SUFFIXES = ("-based", "-efficient", "-specific", "-free", "-dimensional", "-grained", "-aware", "-driven",
                        "-agnostic", "-level", "-scale", "-wise", "-like", "-type", "-friendly", "-intensive",
                        "-dependent", "-independent", "-invariant", "-preserving", "-consistent", "-backed",
                        "-fidelity", "-quality", "-informed", "-enhanced", "-augmented", "-guaranteed")
