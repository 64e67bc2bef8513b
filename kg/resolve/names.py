"""Names of resolved things: the keys spellings of one concept share, which
spelling names an entity, a paper's label, and the ids of entities, venues and
repositories (stable: the same name gives the same id)."""
from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

from kg.text import GENERIC_TAIL, SMALL_WORDS, compact_key, iri_slug, label_slug, narrows, norm_words

TYPE_PATH = {"Method": "method", "Task": "task", "Dataset": "dataset", "CodeRepository": "repository"}


@lru_cache(maxsize=1 << 18)
def is_acronym(form: str) -> bool:
    """An acronym or a short name in capitals ("MDPs", "ImageNet"), or one with a
    generic word after it ("CIFAR-10 dataset", "GPT-4 model"): no expansion."""
    form = without_tail(form)
    return " " not in form and len(form) <= 12 and sum(c.isupper() for c in form) >= 2


#: Words after a name that do not change what it names: after a name with a capital or
#: digit ("ImageNet dataset", "Atari 2600 games"), and after one word with a digit or in
#: capitals ("GPT-4 model", "BERT model", not "Sum-Product Networks").
_DATA_TAILS = frozenset("dataset datasets data benchmark benchmarks corpus games suite database".split())


_NAME_TAILS = frozenset("model models algorithm algorithms method methods network networks framework "
                        "architecture activation activations".split())


def without_tail(form: str) -> str:
    """``form`` without a generic word after a short name ("CIFAR-10 dataset" -> "CIFAR-10")."""
    head, _, tail = form.rpartition(" ")
    tail = tail.lower()
    if head and tail in _DATA_TAILS and any(c.isupper() or c.isdigit() for c in head):
        return head
    if head and tail in _NAME_TAILS and " " not in head and (any(c.isdigit() for c in head)
                                                              or not re.search(r"[a-z]{2}", head)):
        return head
    return form


@lru_cache(maxsize=1 << 18)
def cluster_key(form: str) -> str:
    """The key spellings of one concept share: :func:`compact_key` of the form without a
    generic word after a short name ("CIFAR-10 dataset" is "CIFAR-10")."""
    return compact_key(without_tail(form))


@lru_cache(maxsize=1 << 18)
def head_words(form: str) -> tuple[str, ...]:
    words = norm_words(form)
    return tuple(w for w in words if w not in GENERIC_TAIL) or tuple(words)


def link_forms(forms: list[str]) -> list[str]:
    """The forms of one paper's entity that join it to other papers' entities: not one
    that merely ends another of its forms. A paper says "classification" for its "image
    classification" and "Transformer" for its "Vision Transformer"; in other papers
    the short form names other concepts, and a link through it would make one entity
    of all image, text and graph classification.

    >>> link_forms(["classification", "image classification", "image classification task"])
    ['image classification', 'image classification task']
    >>> link_forms(["anomaly detection", "anomaly detection problems"])
    ['anomaly detection', 'anomaly detection problems']

    Nor one that leaves out words of another ("online matching" beside "online
    stochastic matching"): elsewhere it may stand for "online bipartite matching".

    >>> link_forms(["online matching", "online stochastic matching"])
    ['online stochastic matching']

    Nor one that says another and more words after it (other than generic ones): a
    kind of it, the paper's own ("Reinforcement Learning with Human Feedback" beside
    "reinforcement learning", "GP prior" beside "GP").

    >>> link_forms(["reinforcement learning", "RL", "Reinforcement Learning with Human Feedback"])
    ['reinforcement learning', 'RL']
    >>> link_forms(["Gaussian process", "GP", "GP prior", "GP models"])
    ['Gaussian process', 'GP', 'GP models']
    """
    words = [head_words(f) for f in forms]
    return [f for f, w in zip(forms, words)
            if not any(len(v) > len(w) and (v[-len(w):] == w or narrows(w, v)) for v in words)
            and not any(len(w) > len(v) and w[:len(v)] == v for v in words)]


def initials_of(short: str, long: str) -> bool:
    """Whether acronym ``short`` is the initials of ``long``'s words ("RL", "reinforcement learning")."""
    letters = "".join(c for c in short if c.isalnum())
    if len(letters) > 2 and letters[-1] == "s" and letters[-2].isupper():
        letters = letters[:-1]
    return letters.lower() == "".join(w[0] for w in norm_words(long) if w not in SMALL_WORDS)


def paper_label(title: str | None, abstract: str, proposed: list[str]) -> str:
    """A readable label: the title, else the proposed method and the first words.

    >>> paper_label(None, "We study how models learn features in deep nets today.", ["FooNet"])
    'FooNet: We study how models learn features in deep nets…'
    """
    if title:
        return title
    words = abstract.split()
    head = " ".join(words[:9]) + ("…" if len(words) > 9 else "")
    return f"{proposed[0]}: {head}" if proposed else head


@lru_cache(maxsize=1024)  # a few venues, each named by many papers
def venue_id(name: str) -> str:
    return "venue/" + iri_slug(label_slug(name))


def caps_copy(form: str) -> bool:
    """Whether ``form`` is words in capitals, as titles print them: two words of four
    letters or more at least, every letter a capital (not an acronym or a name such as
    "MS COCO", "MIR-FLICKR", "PASCAL VOC 2007").

    >>> [caps_copy(f) for f in ["CONVOLUTIONAL NEURAL NETWORKS", "BATCH NORMALIZED", "MS COCO", "MIR-FLICKR",
    ...                         "CNN", "Neural Nets"]]
    [True, True, False, False, False, False]
    """
    letters = [c for c in form if c.isalpha()]
    if not letters or not all(c.isupper() for c in letters):
        return False
    return sum(1 for w in form.split() if sum(c.isalpha() for c in w) >= 4) >= 2


def entity_id(type_: str, label: str) -> str:
    """The node id (and IRI path) of an entity: a readable slug of its label."""
    return f"{TYPE_PATH[type_]}/{iri_slug(label_slug(label))}"


#: An abbreviation in capitals ("GPs", "SGD"), not a coined name ("FSL-Net", "ResNet").
_ABBREVIATION = re.compile(r"[A-Z]{2,}s?")


def entity_name(type_: str, names: Counter, expanded: Counter) -> str:
    """The label of a cluster: the name most of its papers use; for a method or task
    named so by an abbreviation, its expansion unless papers name it by the bare
    abbreviation three times as often as they expand it ("Gaussian process", not "GPs";
    "BERT", not "Bidirectional Encoder Representations from Transformers"). A name
    fewer than three papers give keeps their spelling ("RATE", a paper's own method)."""
    def top(counts):
        return sorted(counts.items(), key=lambda kv: (-kv[1], len(kv[0]), kv[0]))[0][0]

    if type_ in ("Method", "Task") and _ABBREVIATION.fullmatch(top(names)) and sum(names.values()) >= 3:
        longs = Counter({n: c for n, c in names.items() if not is_acronym(n)}) + expanded
        bare = sum(names.values()) - sum(longs.values())  # named by the acronym alone
        if longs and bare < 3 * sum(longs.values()):
            return top(longs)
    return top(names)


def repo_id(url: str) -> str:
    """The node id of a normalized GitHub URL.

    >>> repo_id("https://github.com/Lab/Net")
    'repository/github/lab/net'
    """
    owner, name = url.split("/")[3:5]
    return f"repository/github/{iri_slug(owner.lower())}/{iri_slug(name.lower())}"
