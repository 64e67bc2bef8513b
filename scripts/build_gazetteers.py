#!/usr/bin/env python3
"""Clean the Papers with Code gazetteers into the lists shipped in kg/resources/.

Reads ../shared/data/gazetteer/{tasks,datasets,methods}.tsv (Papers with Code
data, CC-BY-SA 4.0; SciREX train relations, Apache-2.0) and writes one name a
line, sorted, to kg/resources/{tasks,datasets,methods}.txt. The rules are
general (shape of the name, broad fields, leaderboard decorations), never a
list of dev-set answers. Run again after changing a rule; output is stable.

    python scripts/build_gazetteers.py [--src ../shared/data/gazetteer]
"""
from __future__ import annotations

import argparse
import csv
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADER = ("# Derived from Papers with Code task/dataset/method names (CC-BY-SA 4.0)\n"
          "# and SciREX train relations (Apache-2.0) by scripts/build_gazetteers.py.\n")

#: Broad fields are never tasks (GUIDELINES.md); words too generic to be a task alone.
BROAD = {
    "machine learning", "deep learning", "artificial intelligence", "computer vision",
    "natural language processing", "data science", "statistics", "optimization",
    "classification", "regression", "segmentation", "detection", "prediction", "retrieval",
    "reconstruction", "evaluation", "benchmarking", "parsing", "translation", "clustering",
    "generation", "recognition", "estimation", "learning", "reasoning", "vision", "dialogue",
    "management", "marketing", "fairness", "multimodal", "attribute", "task", "all", "form",
    "specificity", "informativeness", "scheduling", "blocking", "ethics", "math", "negation",
    "resources", "references", "miscellaneous", "descriptive", "diagnostic", "prehistory",
    "philosophy", "sociology", "nutrition", "virology", "epidemiology", "humanitarian",
    "jurisprudence", "astronomy", "anatomy", "geophysics", "econometrics", "rhythm", "sand",
    "misconceptions", "navigate", "memorization", "transferability", "decision making",
    "large language model", "language model",
    "neural network", "video game", "deep reinforcement learning",
}
TASK_SUFFIX = re.compile(r"(?:tion|sion|ing|ity|sis|ment)$")
DECORATION = re.compile(r"\s*\((?:[^()]*)\)\s*$")


def rows(path: Path):
    with path.open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            name = " ".join((row.get("name") or "").split())
            if name:
                yield name


def clean_task(name: str) -> str | None:
    if re.search(r"[()/:+,;_\[\]{}<>=*&]", name) or re.search(r"\d", name):
        return None
    words = name.split()
    if len(words) > 6 or len(name) < 4:
        return None
    low = name.lower()
    if low in BROAD or re.search(r"\b(?:task|level|track|subtask)\b", low):
        return None
    if len(words) == 1:
        w = words[0]
        if not (w.isalpha() and len(w) >= 8 and not w.isupper() and w[1:].islower() and TASK_SUFFIX.search(low)):
            return None
        return low
    # Keep the acronym-like words (e.g. "3D", "RGB-D") as written, lower the rest.
    return " ".join(w if sum(c.isupper() for c in w) > 1 else w.lower() for w in words)


def clean_dataset(name: str) -> str | None:
    name = DECORATION.sub("", name.split(" - ")[0]).strip()
    if re.search(r"[()/:+,;_\[\]{}<>=*&]", name) or len(name) < 3:
        return None
    words = name.split()
    if len(words) > 4 or not re.search(r"[A-Z0-9]", name) or name.lower() in BROAD:
        return None
    if len(words) == 1 and name[0].isupper() and name[1:].islower() and len(name) < 6:
        return None  # a short capitalized word ("Sand", "Pets") is too often just a word
    return name


def clean_method(name: str) -> str | None:
    name = DECORATION.sub("", name).strip()
    if re.search(r"[()/:+,;_\[\]{}<>=*&]", name) or len(name) < 3 or len(name.split()) > 3:
        return None
    # A method name needs the shape of a name: an inner capital or a digit in a word.
    if not any(re.search(r"^.+[A-Z]|[A-Za-z].*\d|\d.*[A-Za-z]", w) for w in name.split()):
        return None
    if re.search(r"\b(?:single|ensemble|model|baseline|ours|our)\b", name, re.I):
        return None
    return name


#: Heads too generic to end a task name on their own.
GENERIC_HEADS = {
    "tasks", "task", "problem", "problems", "systems", "system", "applications", "application", "models",
    "model", "data", "images", "image", "benchmarks", "benchmark", "training", "processing", "process",
    "representation", "representations", "scenes", "objects", "features", "domains", "domain", "language",
    "speech", "text", "information", "networks", "phase", "questions", "relations", "structures", "boundaries",
    "community", "research", "errors", "settings", "case", "datasets", "knowledge", "programs", "flow",
    "cues", "patterns", "study", "studies", "interaction", "surfaces", "class", "similarity", "games",
    "intelligence", "security", "history", "labels", "graphs", "clouds", "videos", "imagery", "test",
    "mathematics", "physics", "embedding", "embeddings", "design", "engineering", "hand", "variation",
    "computation", "description", "challenge", "supervised", "unsupervised", "dependency", "sentiment",
    "chess", "diagrams", "predictions", "reconstructions", "translations", "communication", "fusion",
    "anomaly", "trading", "reading", "conversation", "dialog", "filling", "simulation", "image",
    "vision", "attention", "motion", "question", "science", "setting", "sampling", "decoding", "ambiguity",
    "maintenance", "integration", "expansion", "advertising", "animation", "organization", "resolution",
}
NOMINAL = re.compile(r"(?:tion|sion|ing|ment|sis|ance|ence|ity|ization|isation|al)$")


def task_heads(src: Path, data: Path) -> list[str]:
    """Head nouns of task names: PwC task names and SciERC train/dev + SciREX train Task mentions."""
    import json
    from collections import Counter

    heads: Counter = Counter()
    for name in rows(src / "tasks.tsv"):
        words = name.lower().split()
        if len(words) > 1 and words[-1].isalpha():
            heads[words[-1]] += 1
    for split in ("train", "dev"):  # never test
        path = data / "scierc" / f"{split}.jsonl"
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                for _s, _e, t, surface in json.loads(line)["ner_char"]:
                    if t == "Task" and surface.split()[-1].isalpha():
                        heads[surface.split()[-1].lower()] += 1
    path = data / "scirex" / "abstracts.jsonl"
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            for m in json.loads(line)["mentions"]:
                if m["type"] == "Task" and m["text"].split()[-1].isalpha():
                    heads[m["text"].split()[-1].lower()] += 1
    keep = {h for h, n in heads.items() if n >= 3 and NOMINAL.search(h) and h not in GENERIC_HEADS}
    # Heads that are plain nouns, not nominalizations, but name tasks all the same.
    keep |= {"transfer", "regression", "inference", "attack", "defense", "retrieval", "inpainting",
             "unlearning", "recall", "distillation", "tuning", "probing", "steering", "acquisition",
             "attribution", "imputation", "quantization", "summarization", "localization", "forecasting",
             # common heads of task names that need a modifier ("survival analysis", "image generation")
             "learning", "generation", "analysis", "modeling", "modelling", "search", "evaluation",
             "explanation", "discovery", "control", "detection", "debugging", "comparison"}
    return sorted(keep)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", type=Path, default=ROOT.parent / "shared" / "data" / "gazetteer")
    ap.add_argument("--out", type=Path, default=ROOT / "kg" / "resources")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for kind, clean in (("tasks", clean_task), ("datasets", clean_dataset), ("methods", clean_method)):
        names = {c for c in (clean(n) for n in rows(args.src / f"{kind}.tsv")) if c}
        text = HEADER + "".join(n + "\n" for n in sorted(names, key=lambda s: (s.lower(), s)))
        (args.out / f"{kind}.txt").write_text(text, encoding="utf-8")
        print(f"{kind}: {len(names)} names -> {args.out / (kind + '.txt')}")
    heads = task_heads(args.src, args.src.parent)
    (args.out / "task_heads.txt").write_text(
        "# Head nouns of task names, by scripts/build_gazetteers.py (PwC tasks, SciERC train/dev, SciREX train).\n"
        + "".join(h + "\n" for h in heads), encoding="utf-8")
    print(f"task heads: {len(heads)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
