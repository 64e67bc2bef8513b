"""The ``kg_cues`` component: named methods and datasets found by their context.

- Datasets: names right before "dataset(s) / benchmark(s) / corpus"
  ("on the OpenCell dataset", "the ImageNette, MURA and Pet datasets",
  "the LongBench-Cite benchmark"), and names after "datasets such as".
- Methods: name-like tokens (inner capitals or digits: "SRe2L", "ResNet18",
  "OPT-1.3B") after comparison and use cues ("outperforms X", "compared with
  X", "than X", "using X", "based on X", "such as X, Y and Z", "extends X"),
  before "-based" or a method noun ("the X model / architecture / baseline"),
  and model-size names anywhere ("Llama-2-7B", "GPT-4").

Metric names (BLEU, FID, AUROC ...) never count. Sets
``doc.spans["kg_cues"]`` (labels ``Method`` / ``Dataset``).
"""
from __future__ import annotations

import re
from functools import lru_cache

from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.util import filter_spans

from kg.extract.components import DATASET_HEADS, MatchComponent, defined_shorts, sent_end, sent_start
from kg.extract.lexicon import lookup
from kg.extract.proposals import is_title_word
from kg.extract.shapes import GENERIC_ACRONYMS, is_name_like
from kg.extract.tokens import token_texts

METHOD_CUES = frozenset(
    "outperform outperforms outperformed outperforming surpass surpasses surpassing beat beats "
    "than using use uses via with extends extend extending like including over against "
    "versus vs vs. baselines baseline".split()
)
TWO_WORD_CUES = {("compared", "to"), ("compared", "with"), ("based", "on"), ("such", "as"), ("built", "on"),
                 ("relative", "to"), ("builds", "on"), ("applied", "to"), ("e.g.", ",")}
METHOD_NOUNS = frozenset(
    "model models architecture architectures baseline baselines backbone backbones network networks "
    "algorithm algorithms optimizer optimizers method methods encoder encoders decoder policy "
    "-based family variant variants".split()
)
METRICS = frozenset(
    "bleu rouge rouge-l rouge-1 rouge-2 meteor cider spice fid is kid psnr ssim lpips auc auroc auprc "
    "map miou iou ndcg mrr wer cer f1 em accuracy mse mae rmse nll ppl perplexity pass@1 pass@k elo "
    "top-1 top-5 hits@1 hits@10 r@1 ece".split()
)
_MODEL_SIZE = re.compile(r"^[A-Za-z][A-Za-z0-9.]*(?:-[A-Za-z0-9.]+)*-?\d+(?:\.\d+)?[BbMmKk]$|^[A-Z][A-Za-z]+-\d+(?:\.\d+)?[a-z]?$")


@lru_cache(maxsize=1 << 16)  # a pure test of a token's text, asked for every token
def _ok_name(text: str) -> bool:
    low = text.lower()
    return (is_name_like(text) and low not in METRICS and low not in GENERIC_ACRONYMS
            and sum(c.isalpha() for c in text) >= 2)


class ContextCues(MatchComponent):
    """Find method and dataset names from the words around them."""

    def match(self, doc: Doc) -> list[Span]:
        return self._datasets(doc) + self._methods(doc)

    # -- datasets
    def _datasets(self, doc: Doc) -> list[Span]:
        out = []
        lowers = token_texts(doc)[1]
        for i, low in enumerate(lowers):
            if low not in DATASET_HEADS or i == 0:
                continue
            tok = doc[i]
            plural = tok.lower_ in {"datasets", "benchmarks", "corpora"}
            # Walk back over a list of names: "the A, B, and C datasets".
            k = tok.i - 1
            while k >= sent_start(tok):
                end = k + 1
                while k >= sent_start(tok) and self._dataset_word(doc, k):
                    k -= 1
                if end - (k + 1) >= 1 and end - (k + 1) <= 4:
                    span = doc[k + 1:end]
                    if any(_ok_name(t.text) or (is_title_word(t.text) and t.i != sent_start(t)) for t in span):
                        out.append(Span(doc, span.start, span.end, label="Dataset"))
                if not plural or k < sent_start(tok) or doc[k].text not in {",", "and", "or"}:
                    break
                while k >= sent_start(tok) and doc[k].text in {",", "and", "or"}:
                    k -= 1
        # "datasets such as A, B and C" / "benchmarks including A and B"
        for i, low in enumerate(lowers):
            if low in {"datasets", "benchmarks"} and i + 2 < len(doc):
                tok = doc[i]
                k = tok.i + 1
                if doc[k].lower_ == "such" and doc[k + 1].lower_ == "as":
                    k += 2
                elif doc[k].lower_ in {"including", "like"} or doc[k].text == "(":
                    k += 1
                else:
                    continue
                out.extend(self._list_after(doc, k, "Dataset"))
        return out

    @staticmethod
    def _dataset_word(doc: Doc, k: int) -> bool:
        t = doc[k]
        if t.text in {",", "(", ")", "."} or t.lower_ in {"the", "a", "an", "and", "or", "on", "of", "our", "new", "two"}:
            return False
        return _ok_name(t.text) or is_title_word(t.text) or t.text.isupper() or (t.like_num and k > 0)

    def _list_after(self, doc: Doc, k: int, label: str) -> list[Span]:
        out = []
        stop = sent_end(doc[k]) if k < len(doc) else len(doc)
        while k < stop:
            j = k
            while j < stop and (_ok_name(doc[j].text) or is_title_word(doc[j].text)) and j - k < 4:
                j += 1
            if j == k:
                break
            out.append(Span(doc, k, j, label=label))
            k = j
            while k < stop and doc[k].text in {",", "and", "or"}:
                k += 1
        return out

    # -- methods
    def _methods(self, doc: Doc) -> list[Span]:
        out = []
        shorts = defined_shorts(doc)  # their definition types them
        for i, text in enumerate(token_texts(doc)[0]):
            if not _ok_name(text) or lookup(text) in ("Dataset", "Task") or text in shorts:
                continue
            tok = doc[i]
            if tok.i + 1 < len(doc) and doc[tok.i + 1].lower_ in DATASET_HEADS:
                continue
            prev = [doc[k].lower_ for k in range(max(sent_start(tok), tok.i - 2), tok.i)]
            nxt = doc[tok.i + 1].lower_ if tok.i + 1 < len(doc) else ""
            cue = (bool(prev) and prev[-1] in METHOD_CUES) or tuple(prev[-2:]) in TWO_WORD_CUES
            cue = cue or self._in_cued_list(doc, tok.i)
            cue = cue or nxt in METHOD_NOUNS or text.endswith("-based") or bool(_MODEL_SIZE.match(text))
            if cue:
                end = tok.i + 1
                if text.endswith("-based"):
                    continue
                out.append(Span(doc, tok.i, end, label="Method"))
        return out

    def _in_cued_list(self, doc: Doc, i: int) -> bool:
        """Whether token ``i`` is a later item of a list opened by a cue ("such as A, B and C")."""
        k = i - 1
        steps = 0
        while k >= sent_start(doc[i]) and steps < 12:
            t = doc[k]
            if t.text in {",", "and", "or"} or _ok_name(t.text):
                k -= 1
                steps += 1
                continue
            prev2 = (doc[k - 1].lower_, t.lower_) if k > 0 else ("", t.lower_)
            return t.lower_ in METHOD_CUES or prev2 in TWO_WORD_CUES
        return False

    def set_annotations(self, doc: Doc, spans: list[Span]) -> None:
        doc.spans[self.spans_key] = filter_spans(spans)


@Language.factory("kg_cues", default_config={"spans_key": "kg_cues"}, assigns=["doc.spans"], requires=["doc.sents"])
def make_cues(nlp: Language, name: str, spans_key: str) -> ContextCues:
    return ContextCues(nlp, name, spans_key)
