"""What the extraction shares with the corpus-name pass and needs no spaCy for: the shape
of a method name, and the character ranges a text's spans have claimed.

Kept apart from the spaCy components so that a build whose texts are all cached (and
whose new texts go to worker processes) never imports spaCy in the build process (the
workers import it, beside the decoding of the cached results).
"""
from __future__ import annotations

from functools import lru_cache

from kg.text import compact_key

#: Acronyms of fields and generic families: never a paper's own method name.
GENERIC_ACRONYMS = frozenset(
    "ai ml dl nlp cv rl llm llms lm lms vlm vlms mllm mllms dnn dnns cnn cnns rnn rnns gnn gnns "
    "gpu gpus cpu cpus api apis sota iid ood pde pdes ode odes mlp mlps nn nns sgd".split()
)


@lru_cache(maxsize=1 << 16)  # asked for every token, by several components
def is_name_like(text: str) -> bool:
    """A token that looks like a proper method name: inner capitals or letters with digits.

    >>> [is_name_like(t) for t in ["LoRanPAC", "TAROT", "difFOCI", "DistiLLM-2", "network", "Adam", "LLMs"]]
    [True, True, True, True, False, False, False]
    """
    if len(text) < 2 or not any(c.isalpha() for c in text) or text.lower() in GENERIC_ACRONYMS:
        return False
    return any(c.isupper() for c in text[1:]) or (
        any(c.isdigit() for c in text) and any(c.isalpha() for c in text) and text[0].isalpha()
    )


class Taken:
    """Character ranges already claimed by a span: O(length) checks, not O(spans)."""

    def __init__(self, n: int):
        self.mask = bytearray(n)

    def overlaps(self, start: int, end: int) -> bool:
        return any(self.mask[start:end])

    def add(self, start: int, end: int) -> None:
        self.mask[start:end] = b"\x01" * (end - start)


#: Broad fields name no method, task or dataset (GUIDELINES.md: never tasks, at most
#: optional methods), by :func:`~kg.text.compact_key`.
BROAD_FIELDS = frozenset(compact_key(f) for f in (
    "machine learning", "deep learning", "artificial intelligence", "computer vision", "natural language processing",
    "data mining", "data science", "statistics", "pattern recognition", "signal processing", "robotics",
    "ML", "AI", "NLP"))
