"""The spaCy pipeline: ``spacy.blank("en")``, a sentencizer and our components."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import spacy
from spacy.attrs import ORTH
from spacy.lang.char_classes import HYPHENS
from spacy.language import Language
from spacy.util import compile_infix_regex, compile_prefix_regex, compile_suffix_regex

from kg.extract import components, cues, gazetteer, learned, proposals, tasks  # noqa: F401  (registers the factories)

#: The rule components, whose marks are features of the span classifier after them.
RULES = ("kg_token_norm", "kg_github", "kg_abbreviations", "kg_defined_terms", "kg_proposals", "kg_gazetteer",
         "kg_cues", "kg_tasks")
COMPONENTS = RULES + ("kg_span_classifier",)


#: Load the shipped span classifier (:func:`make_nlp`'s default).
SHIPPED = "shipped"


def make_nlp(model: str | Path | None = SHIPPED) -> Language:
    """A fresh extraction pipeline, offline: its span classifier loaded from ``model``
    (a folder its ``to_disk`` wrote; :data:`SHIPPED`, the model in the package), or
    left empty for training with ``None``.

    The tokenizer keeps hyphenated words whole ("FSL-Net", "layer-wise"), since
    names are the unit of extraction.
    """
    nlp = spacy.blank("en")
    nlp.max_length = 50_000_000  # no parser or NER: memory stays linear in the text
    # Keep hyphenated names whole: "FSL-Net", "layer-wise", "Llama-3-8B".
    infixes = [p.replace("[+\\-\\*^]", "[+\\*^]") for p in nlp.Defaults.infixes if HYPHENS not in p]
    infixes.append("§")  # a formula (:mod:`kg.extract.normalize`) is never part of a word: "RL§" is "RL", "§"
    nlp.tokenizer.infix_finditer = compile_infix_regex(infixes).finditer
    # LaTeX markup stays outside names: "\textit{Generalized Method of Moments}", "$\texttt{UNI}$".
    # Markdown emphasis too: "*sufficient subset training*".
    prefixes = [r"\$?\\[A-Za-z]+\{", r"\*+", r"_(?=[A-Za-z])", "§", *nlp.Defaults.prefixes]
    # Sizes stay in names: spaCy splits a unit after a digit ("ADE20" "K", "LAION-400" "M",
    # "Human3.6" "M"), which here only ever cuts a name; "%" still goes. A full stop after a
    # name that ends in a capital ("Mistral 7B.", "ImageNet-1K.", "XLM-R.", "MoS.") is not part
    # of it (spaCy splits one only after a lower-case letter or two capitals); "U.S." keeps its.
    units = [p for p in nlp.Defaults.suffixes if p.startswith("(?<=[0-9])(?:km|")]
    suffixes = [r"\}\$?[.,;:]?", r"\*+", r"(?<=[A-Za-z])_", "§", r"(?<=[^\s.][A-Z])\.", r"(?<=[0-9])%",
                *(p for p in nlp.Defaults.suffixes if p not in units)]
    nlp.tokenizer.prefix_search = compile_prefix_regex(prefixes).search
    nlp.tokenizer.suffix_search = compile_suffix_regex(suffixes).search
    nlp.add_pipe("sentencizer")
    for name in COMPONENTS:
        nlp.add_pipe(name)
    # spaCy stops caching a text's chunks once a special case occurs in it (a per-doc
    # flag), and "\n" is one: behind a text with a line break no chunk was ever
    # cached (tokenizing took 2.6x as long when titles were joined by one). The whitespace rules that only repeat
    # their text change no token, so they go. Setting the rules also empties the
    # tokenizer's cache (10,000 entries, no eviction), which the gazetteer's patterns
    # had filled while the pipeline was built: the corpus's own words get it.
    nlp.tokenizer.rules = {k: v for k, v in nlp.tokenizer.rules.items()
                           if not (k.isspace() and v == [{ORTH: k}])}
    if model is not None:
        nlp.get_pipe("kg_span_classifier").initialize(nlp=nlp, model=None if model == SHIPPED else model)
    return nlp


@lru_cache(maxsize=1)
def get_nlp() -> Language:
    """The shared pipeline of this process (built once)."""
    return make_nlp()
