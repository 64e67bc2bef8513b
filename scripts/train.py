#!/usr/bin/env python3
"""Rebuild the shipped span classifier from the shared data and report its 5-fold
cross-validated scores.

    python scripts/train.py [--shared ../shared] [--folds 5] [--epochs 18] [--hidden 32] [--members 3]
                            [--corpus-features DIR] [--no-save] [--dump DIR] [--fold-models DIR]

Steps: word classes and phrase statistics from the unlabelled corpus (``data/corpus``;
``--corpus-features`` keeps them in a folder for the next run), the annotated records
(dev, dev2, train) through the rule components, 5-fold cross-validation (folds by
abstract; each fold's records predicted by a model that never saw them, through the
shipped code path, then scored per set by ``eval/score.py``), and last the span
classifier trained on every record and the name-level proposed/used model trained on the
folds' predictions (:mod:`kg.extract.roles`), saved to ``kg/resources/model``. Fixed seeds: the same data give the
same model.
"""
from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kg.extract.learned import default_model_path  # noqa: E402
from kg.extract.normalize import normalize  # noqa: E402
from kg.extract.termstats import TermStats, count_phrases  # noqa: E402
from kg.ingest import record_from_mapping  # noqa: E402
from kg.extract.pipeline import make_nlp  # noqa: E402
from kg.extract.training import EPOCHS, HIDDEN, MEMBERS, cross_validate, gold_key, load_annotated, parse, train_model, \
    train_roles  # noqa: E402
from kg.extract.wordclusters import word_classes  # noqa: E402

TYPES = ("methods_proposed", "methods", "tasks", "datasets", "github")


def corpus_features(nlp, path: Path, cache: Path | None) -> tuple[dict, TermStats]:
    """Word classes (:mod:`kg.extract.wordclusters`) and phrase statistics
    (:mod:`kg.extract.termstats`) of the unlabelled corpus; read from ``cache`` when it
    holds them, else computed (and written there)."""
    if cache and (cache / "clusters.json").exists() and (cache / "termstats.npy").exists():
        return json.loads((cache / "clusters.json").read_text(encoding="utf-8")), TermStats.from_disk(cache)

    def tokens(text: str) -> list[str]:
        return [t.text for t in nlp.tokenizer(normalize(text)[0]) if not t.is_space]

    docs = []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            rec = record_from_mapping(json.loads(line), path, i, i + 1)
            docs.append((tokens(rec.title or ""), tokens(rec.abstract), [tokens(k) for k in rec.keywords]))
    classes = word_classes([[t.lower() for t in title + ["."] + abstract] for title, abstract, _ in docs])
    terms = TermStats(count_phrases(docs))
    if cache:
        cache.mkdir(parents=True, exist_ok=True)
        (cache / "clusters.json").write_text(json.dumps(classes, ensure_ascii=False, sort_keys=True,
                                                        separators=(",", ":")), encoding="utf-8")
        terms.to_disk(cache)
    return classes, terms


def score(shared: Path, name: str, preds: list[dict]) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as fh:
        for p in preds:
            fh.write(json.dumps(p) + "\n")
    out = subprocess.run([sys.executable, str(shared / "eval" / "score.py"),
                          str(shared / "eval" / "gold" / f"{name}.jsonl"), fh.name, "--json"],
                         capture_output=True, text=True, check=True)
    Path(fh.name).unlink()
    return json.loads(out.stdout)["scores"]


def f1(tp: int, fp: int, fn: int) -> float:
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def candidate_recall(data) -> float:
    hit = tot = 0
    for d in data:
        have = {gold_key(t) for t in d.texts}
        for field in ("methods_proposed", "methods_used", "tasks", "datasets"):
            for ent in d.gold.raw.get(field, []):
                tot += 1
                hit += any(gold_key(f) in have for f in ent)
    return hit / tot if tot else 1.0


def report(shared: Path, preds: dict, dump: Path | None) -> None:
    pooled = {t: [0, 0, 0] for t in TYPES}
    print(f"{'set':<7}{'records':>8}  " + "  ".join(f"{t:>16}" for t in TYPES))
    for name in ("dev", "dev2", "train"):
        ps = [p for (s, _), p in sorted(preds.items()) if s == name]
        if dump:
            dump.mkdir(parents=True, exist_ok=True)
            (dump / f"{name}.jsonl").write_text("".join(json.dumps(p) + "\n" for p in ps), encoding="utf-8")
        sc = score(shared, name, ps)
        for t in TYPES:
            for k, key in enumerate(("tp", "fp", "fn")):
                pooled[t][k] += sc[t][key]
        print(f"{name:<7}{len(ps):>8}  " + "  ".join(
            f"{sc[t]['f1']:>6.3f} ({sc[t]['precision']:.2f}/{sc[t]['recall']:.2f})" for t in TYPES))
    print(f"{'all':<7}{len(preds):>8}  " + "  ".join(f"{f1(*pooled[t]):>16.3f}" for t in TYPES))
    print("(F1, with precision/recall in brackets; 'all' pools the three sets' counts)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--folds", type=int, default=5, help="0: no cross-validation")
    ap.add_argument("--epochs", type=int, default=EPOCHS)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--hidden", type=int, default=HIDDEN, help="units of the hidden layer (0: a linear model)")
    ap.add_argument("--members", type=int, default=MEMBERS, help="span classifiers averaged into one")
    ap.add_argument("--threshold", type=float, default=0.5, help="the least score of a kept span")
    ap.add_argument("--length-bonus", type=float, default=0.1,
                    help="what a longer span gains a token over a shorter one inside it")
    ap.add_argument("--corpus-features", type=Path, metavar="DIR",
                    help="read the corpus's word classes and phrase statistics from DIR if there, else write them there")
    ap.add_argument("--no-save", action="store_true", help="cross-validate only")
    ap.add_argument("--dump", type=Path, help="write the cross-validated predictions here")
    ap.add_argument("--fold-models", type=Path, metavar="DIR",
                    help="keep each fold's model in DIR and read it from there when present (then only the "
                         "code after the classifier is cross-validated: same features, data and settings only)")
    args = ap.parse_args()
    t0 = time.time()
    nlp = make_nlp(model=None)
    classifier = nlp.get_pipe("kg_span_classifier")
    classifier.threshold, classifier.length_bonus = args.threshold, args.length_bonus
    classifier.word_classes, classifier.terms = corpus_features(
        nlp, args.shared / "data" / "corpus" / "abstracts.jsonl.gz", args.corpus_features)
    print(f"corpus: word classes of {len(classifier.word_classes)} words, statistics of "
          f"{len(classifier.terms.rows)} phrases ({time.time() - t0:.0f} s)", flush=True)
    data = parse(nlp, load_annotated(args.shared), classifier.word_classes, classifier.terms)
    print(f"{len(data)} annotated records, {sum(len(d.spans) for d in data)} candidates, candidate recall "
          f"{candidate_recall(data):.3f} ({time.time() - t0:.0f} s)", flush=True)
    if args.folds:
        def progress(k, n, f):
            what = f"{n} examples" if n else f"model read from {args.fold_models}"
            print(f"fold {k}: {what}, {f} features ({time.time() - t0:.0f} s)", flush=True)

        cv = cross_validate(classifier, data, args.folds, args.epochs, seed=args.seed, hidden=args.hidden,
                            members=args.members, progress=progress, models=args.fold_models)
        print(f"\n{args.folds}-fold cross-validation (each record scored by a model that never saw it):")
        report(args.shared, cv.preds, args.dump)
    if not args.no_save:
        classifier.model, classifier.lexicon, n = train_model(data, args.epochs, args.seed, args.hidden, args.members)
        # the name-level model learns from the folds' predictions: records the span classifier did not see
        classifier.roles = train_roles(cv.roles, args.seed) if args.folds else None
        if classifier.roles is None:
            print("no cross-validation, so no name-level model: the span scores say proposed or used")
        out = default_model_path()
        classifier.to_disk(out)
        size = sum(p.stat().st_size for p in out.iterdir())
        print(f"\nsaved {out}: {n} examples, {size / 1e6:.1f} MB ({time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
