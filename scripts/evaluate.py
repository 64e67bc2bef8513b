#!/usr/bin/env python3
"""Score extraction, honestly:

1. 5-fold cross-validation over the annotated records (dev + dev2 + train): each record
   is scored by a span classifier trained on the other folds (``scripts/train.py``'s
   procedure, the shipped word classes), with figures per set and pooled;
2. the shipped model on dev, dev2 and train: training-set figures (it was trained on
   them), shown to check the shipped code path, not its quality;
3. SciERC test (Task, Method) and SciREX train abstracts (Method, Task, Dataset) at the
   mention level, text other annotators marked.

    python scripts/evaluate.py [--shared ../shared] [--scierc-split test] [--no-cv]

SciERC and SciREX annotate by their own guidelines (SciERC marks generic
phrases such as "method" or "approach"; neither knows our proposed / used
split), so their figures are a second opinion, not a target. Never train or
tune on SciERC test: it is only scored here.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "scripts"))

from train import report  # noqa: E402
from kg.extract import extract_records  # noqa: E402
from kg.extract.pipeline import make_nlp  # noqa: E402
from kg.extract.training import cross_validate, load_annotated, parse  # noqa: E402
from kg.ingest import read_records, sample_paths  # noqa: E402
from kg.model import Record  # noqa: E402


def shipped_table(shared: Path) -> None:
    """The shipped model on the records it was trained on, as ``kg extract`` runs it."""
    sets = {"dev": read_records(sample_paths()),
            "dev2": read_records([shared / "eval" / "dev2" / "input.jsonl"]),
            "train": read_records([shared / "eval" / "train" / "input.jsonl"])}
    preds = {}
    for name, records in sets.items():
        for ex in extract_records(records):
            preds[(name, ex.doc)] = ex.to_json()
    report(shared, preds, None)


def cv_table(shared: Path) -> None:
    nlp = make_nlp()
    classifier = nlp.get_pipe("kg_span_classifier")
    data = parse(nlp, load_annotated(shared), classifier.word_classes, classifier.terms)
    report(shared, cross_validate(classifier, data).preds, None)


def prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def mention_scores(docs: list[tuple[str, list[tuple[int, int, str]]]], types: dict[str, str]) -> dict:
    """Exact and overlap mention F1 per type; ``types`` maps gold type -> our type."""
    records = [Record(doc=f"d{i}", abstract=text, source="eval", index=i) for i, (text, _) in enumerate(docs)]
    exs = list(extract_records(records, corpus_names=False))
    ours = sorted(set(types.values()))
    out = {}
    for t in ours:
        tp = fp = fn = otp = ofp = ofn = 0
        for (text, gold), ex in zip(docs, exs):
            g = {(s, e) for s, e, gt in gold if types.get(gt) == t}
            p = {(m.start, m.end) for m in ex.mentions if m.type == t and not m.source.endswith("@title")}
            tp += len(g & p)
            fp += len(p - g)
            fn += len(g - p)
            # overlap: a prediction that overlaps a gold span counts (each side at most once)
            ohit_p = {x for x in p if any(x[0] < y[1] and y[0] < x[1] for y in g)}
            ohit_g = {y for y in g if any(x[0] < y[1] and y[0] < x[1] for x in p)}
            otp += len(ohit_g)
            ofp += len(p - ohit_p)
            ofn += len(g - ohit_g)
        out[t] = {"exact": prf(tp, fp, fn), "overlap": prf(otp, ofp, ofn), "gold": tp + fn, "pred": tp + fp}
    return out


def load_scierc(path: Path) -> list[tuple[str, list[tuple[int, int, str]]]]:
    docs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        docs.append((d["text"], [(s, e, t) for s, e, t, _ in d["ner_char"]]))
    return docs


def load_scirex(path: Path) -> list[tuple[str, list[tuple[int, int, str]]]]:
    docs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        docs.append((d["abstract"], [(m["start"], m["end"], m["type"]) for m in d["mentions"]]))
    return docs


def table(title: str, scores: dict) -> str:
    lines = [title, f"{'type':<10}{'P':>7}{'R':>7}{'F1':>7}   {'P~':>6}{'R~':>6}{'F1~':>6}{'gold':>7}{'pred':>7}"]
    for t, s in scores.items():
        (p, r, f), (op, orr, of) = s["exact"], s["overlap"]
        lines.append(f"{t:<10}{p:>7.3f}{r:>7.3f}{f:>7.3f}   {op:>6.3f}{orr:>6.3f}{of:>6.3f}{s['gold']:>7}{s['pred']:>7}")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--scierc-split", default="test", choices=["train", "dev", "test"])
    ap.add_argument("--no-cv", action="store_true", help="skip the cross-validation (about 6 minutes)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    if not args.no_cv:
        print("5-fold cross-validation over dev + dev2 + train (entity level, shared/eval/score.py):")
        cv_table(args.shared)
        print()
    print("The shipped model on dev, dev2 and train: TRAINING-SET figures (it was trained on these records):")
    shipped_table(args.shared)
    print()
    scierc = load_scierc(args.shared / "data" / "scierc" / f"{args.scierc_split}.jsonl")
    print(table(f"SciERC {args.scierc_split} ({len(scierc)} abstracts), mention level; ~ = overlap match",
                mention_scores(scierc, {"Task": "Task", "Method": "Method"})))
    print()
    scirex = load_scirex(args.shared / "data" / "scirex" / "abstracts.jsonl")
    print(table(f"SciREX train abstracts ({len(scirex)}), mention level; ~ = overlap match",
                mention_scores(scirex, {"Method": "Method", "Task": "Task", "Dataset": "Dataset"})))
    print(f"\n({time.perf_counter() - t0:.1f}s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
