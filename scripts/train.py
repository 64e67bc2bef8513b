#!/usr/bin/env python3
"""Train the span classifier and report 5-fold cross-validated scores.

    python scripts/train.py [--shared ../shared] [--folds 5] [--no-save]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kg.extract import _text_of, get_nlp, tokenizer_safe  # noqa: E402
from kg.extract.candidates import candidate_spans, doc_context, span_features  # noqa: E402
from kg.extract.classifier import CLASSES, SparseSoftmax  # noqa: E402
from kg.extract.training import Lexicon, doc_keys, gold_key, load_annotated  # noqa: E402
from kg.text import compact_key, text_hash  # noqa: E402

RULE_GROUPS = ("kg_proposed", "kg_defined", "kg_tasks", "kg_gazetteer", "kg_cues")


def parse(items):
    nlp = get_nlp()
    out = []
    for name, rec, gold in items:
        text, tlen = _text_of(rec)
        doc = nlp.make_doc(tokenizer_safe(text))
        doc._.kg_title_len = tlen
        doc = nlp(doc) if False else _run(nlp, doc)
        spans = set(candidate_spans(doc))
        for g in RULE_GROUPS:
            for s in doc.spans.get(g, []):
                spans.add((s.start, s.end))
        spans = sorted(spans)
        ctx = doc_context(doc, RULE_GROUPS)
        texts = [doc[i:j].text for i, j in spans]
        for t in texts:
            k = compact_key(t)
            ctx.counts[k] = ctx.counts.get(k, 0) + 1
        labels = [gold.label(t) for t in texts]
        out.append({"set": name, "rec": rec, "gold": gold, "doc": doc, "ctx": ctx, "spans": spans, "texts": texts,
                    "labels": labels, "keys": doc_keys(texts, labels)})
    return out


def _run(nlp, doc):
    for _, proc in nlp.pipeline:
        doc = proc(doc)
    return doc


def featurize(d, lexicon):
    return [span_features(d["ctx"], i, j, lexicon.features) for i, j in d["spans"]]


def decode(d, probs, threshold=0.5):
    """Entities of one record from its candidates' class probabilities."""
    cand = []
    for (i, j), text, p in zip(d["spans"], d["texts"], probs):
        score = 1.0 - float(p[0])
        if score >= threshold:
            cand.append((score, i, j, text, p))
    cand.sort(key=lambda c: (-c[0], c[1], c[2]))
    taken = set()
    groups: dict[str, dict] = {}
    for score, i, j, text, p in cand:
        if any(k in taken for k in range(i, j)):
            continue
        taken.update(range(i, j))
        key = gold_key(text)
        g = groups.setdefault(key, {"forms": [], "p": [0.0] * len(CLASSES)})
        if text not in g["forms"]:
            g["forms"].append(text)
        g["p"] = [a + float(b) for a, b in zip(g["p"], p)]
    # acronym and expansion: one entity
    doc = d["doc"]
    for long, short in doc._.kg_abbreviations or []:
        lk, sk = gold_key(long.text), gold_key(short.text)
        if lk in groups and sk in groups and lk != sk:
            a, b = groups[lk], groups.pop(sk)
            a["forms"] += b["forms"]
            a["p"] = [x + y for x, y in zip(a["p"], b["p"])]
    out = {"doc": d["gold"].doc, "methods_proposed": [], "methods_used": [], "tasks": [], "datasets": [], "github": []}
    fields = {1: "methods_proposed", 2: "methods_used", 3: "tasks", 4: "datasets"}
    for key, g in groups.items():
        c = max(range(1, 5), key=lambda c: g["p"][c])
        if c in (1, 2):
            c = 1 if g["p"][1] > g["p"][2] else 2
        out[fields[c]].append({"name": g["forms"][0], "aliases": g["forms"][1:]})
    out["github"] = [u for _, _, u in doc._.kg_github or []]
    return out


def score(gold_path, preds):
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as fh:
        for p in preds:
            fh.write(json.dumps(p) + "\n")
    out = subprocess.run([sys.executable, str(SHARED / "eval" / "score.py"), str(gold_path), fh.name, "--json"],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["scores"]


def fold_of(doc_id, k):
    return int(text_hash(doc_id), 16) % k


def main():
    global SHARED
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--threshold", type=float, default=0.5)
    args = ap.parse_args()
    SHARED = args.shared
    t0 = time.time()
    items = load_annotated(args.shared)
    data = parse(items)
    print(f"parsed {len(data)} records, {sum(len(d['spans']) for d in data)} candidates in {time.time() - t0:.1f}s")
    # candidate recall: gold entities with a candidate form
    hit = tot = 0
    for d in data:
        have = {gold_key(t) for t in d["texts"]}
        for name, _ in (("methods_proposed", 1), ("methods_used", 2), ("tasks", 3), ("datasets", 4)):
            for ent in d["gold"].raw.get(name, []):
                tot += 1
                hit += any(gold_key(f) in have for f in ent)
    print(f"candidate recall {hit / tot:.3f} ({hit}/{tot})")
    preds = {}
    for k in range(args.folds):
        t1 = time.time()
        train = [d for d in data if fold_of(d["gold"].doc, args.folds) != k]
        test = [d for d in data if fold_of(d["gold"].doc, args.folds) == k]
        lex = Lexicon()
        for d in train:
            lex.add(*d["keys"])
        rows, ys = [], []
        for d in train:
            lex.remove(*d["keys"])
            for f, y in zip(featurize(d, lex), d["labels"]):
                if y is not None:
                    rows.append(f)
                    ys.append(y)
            lex.add(*d["keys"])
        model = SparseSoftmax.train(rows, ys, epochs=args.epochs)
        for d in test:
            preds[(d["set"], d["gold"].doc)] = decode(d, model.predict(featurize(d, lex)), args.threshold)
        print(f"fold {k}: {len(rows)} examples, {len(model.features)} features, {time.time() - t1:.1f}s", flush=True)
    for name in ("dev", "dev2", "train"):
        ps = [p for (s, _), p in preds.items() if s == name]
        sc = score(args.shared / "eval" / "gold" / f"{name}.jsonl", ps)
        print(name, " ".join(f"{t}={sc[t]['f1']:.3f}(P{sc[t]['precision']:.2f}/R{sc[t]['recall']:.2f})"
                             for t in ("methods_proposed", "methods", "tasks", "datasets")))


if __name__ == "__main__":
    main()
