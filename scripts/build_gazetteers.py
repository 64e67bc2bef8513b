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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
