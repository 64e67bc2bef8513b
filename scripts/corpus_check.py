#!/usr/bin/env python3
"""What the graph of a real corpus shows first: the checks of entity quality at scale.

    python scripts/corpus_check.py [--corpus ../shared/data/corpus/abstracts.jsonl.gz]
                                   [--venues ml|all] [--min-papers 5] [--top 50] [--workers 2]

Extracts and resolves the corpus's records (by default its ML-venue records: ICML, NIPS,
ICLR, AISTATS, UAI, COLT, ACML, COLM, CORL, AUTOML, ALT), then prints, among entities
with at least ``--min-papers`` papers:

- markup or math fragments in a label or alias (``$``, ``\\``, ``{``, ``}``, ``<``, ``(cid:``,
  ``=``, a subscript, a web address, brackets that do not close: ``O(1/``);
- pairs of entities of one type whose labels differ only by case, plural or hyphen;
- acronyms that stand as entities beside an entity of their own expansion;
- datasets whose label is a generic word;

and the ``--top`` entities of each type by paper count, for a reader to judge.
"""
from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kg.extract import extract_records  # noqa: E402
from kg.extract.learned import balanced  # noqa: E402
from kg.ingest import record_from_mapping  # noqa: E402
from kg.resolve.entities import resolve  # noqa: E402
from kg.text import SMALL_WORDS  # noqa: E402

ML_VENUES = frozenset("ICML NIPS ICLR AISTATS UAI COLT ACML COLM CORL AUTOML ALT".split())
MARKUP = re.compile(r"[$\\{}<>§=]|\(cid:|\^|_\{|_[A-Za-z0-9]\b|://")
#: Words that name no dataset: fields, data kinds, evaluation words.
GENERIC_DATASET_WORDS = frozenset("""
data dataset datasets benchmark benchmarks corpus corpora supervised unsupervised metrics metric
computer vision natural language processing images image text video videos speech audio graph graphs
real-world synthetic simulation experiments results training test validation gps rgb lidar
""".split())


def read_corpus(path: Path, venues: str) -> list:
    records = []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            obj = json.loads(line)
            if venues == "ml" and obj.get("venue", "").rsplit(" ", 1)[0].upper() not in ML_VENUES:
                continue
            records.append(record_from_mapping(obj, path, i, i + 1))
    return records


def loose_key(label: str) -> str:
    """A label without case, hyphens, spaces and a plural ending."""
    words = re.findall(r"[^\W_]+", label.lower())
    if words:
        w = words[-1]
        words[-1] = w[:-3] + "y" if len(w) > 4 and w.endswith("ies") else w[:-1] if len(w) > 3 and w.endswith("s") \
            and not w.endswith("ss") else w
    return "".join(words)


def is_acronym(name: str) -> bool:
    """Capitals, digits and at most single lower-case letters ("MDPs", "fMRI", "t-SNE"),
    not a name in camel case ("AdaGrad") or a hyphenated pair of names ("Plackett-Luce")."""
    core = re.sub(r"s$", "", name)
    return " " not in name and sum(c.isupper() for c in core) >= 2 and not re.search(r"[a-z]{2}", core)


def strict_initials(short: str, long: str) -> bool:
    """Whether the letters and digits of ``short`` (a plural "s" dropped) are the
    initials of the words of ``long`` ("MDPs", "Markov decision processes"), small
    words skipped, hyphen parts counted as words. A lower-case letter counts: "t-SNE"
    is t-distributed SNE, not "stochastic neighbor embedding".

    >>> [strict_initials(a, b) for a, b in [("MDPs", "Markov decision processes"),
    ...  ("ANN", "Annealed Importance Sampling"), ("GAN", "generative adversarial network"),
    ...  ("fMRI", "functional magnetic resonance imaging"), ("t-SNE", "stochastic neighbor embedding")]]
    [True, False, True, True, False]
    """
    letters = re.sub(r"s$", "", short)
    letters = "".join(c for c in letters if c.isalnum()).lower()
    words = [w for w in re.split(r"[\s\-/]+", long.lower()) if w and w not in SMALL_WORDS]
    return len(letters) >= 2 and letters == "".join(w[0] for w in words)


def checks(entities: list, counts: Counter, min_papers: int) -> dict:
    big = [e for e in entities if counts[e.id] >= min_papers]
    markup = [(e, f) for e in big for f in (e.name, *e.aliases) if MARKUP.search(f) or not balanced(f)]
    by_key = defaultdict(list)
    for e in big:
        by_key[(e.type, loose_key(e.name))].append(e)
    dup = [v for v in by_key.values() if len(v) > 1]
    longs = defaultdict(list)
    for e in big:
        if " " in e.name:
            longs[e.type].append(e)
    expanding = defaultdict(set)  # (type, acronym key) -> the entities that list it as an alias
    for e in entities:
        for a in e.aliases:
            if is_acronym(a):
                expanding[(e.type, loose_key(a))].add(e.id)
    acronyms, ambiguous = [], []
    for e in big:
        if is_acronym(e.name):
            key = loose_key(e.name)
            own = [x for x in longs[e.type] if strict_initials(e.name, x.name) or x.id in expanding[(e.type, key)]]
            if own:
                (ambiguous if len(expanding[(e.type, key)]) > 1 else acronyms).append((e, own[0]))
    generic = [e for e in big if e.type == "Dataset" and loose_key(e.name) in {loose_key(w) for w in
                                                                            GENERIC_DATASET_WORDS}]
    return {"entities": len(big), "markup": markup, "duplicates": dup, "acronyms": acronyms, "ambiguous": ambiguous,
            "generic": generic}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "data" / "corpus" / "abstracts.jsonl.gz")
    ap.add_argument("--venues", choices=("ml", "all"), default="ml")
    ap.add_argument("--min-papers", type=int, default=5)
    ap.add_argument("--top", type=int, default=50)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    t0 = time.time()
    records = read_corpus(args.corpus, args.venues)
    print(f"{len(records)} records ({args.venues} venues)", flush=True)
    extractions = list(extract_records(records, workers=args.workers))
    print(f"extracted in {time.time() - t0:.0f} s", flush=True)
    res = resolve(records, extractions)
    counts: Counter = Counter()
    for r in res.relations:
        if r.predicate in ("proposes", "usesMethod", "addressesTask", "usesDataset"):
            counts[r.object] += 1
    c = checks(res.entities, counts, args.min_papers)
    print(f"\nentities with {args.min_papers}+ papers: {c['entities']}")
    print(f"markup or math fragments: {len({e.id for e, _ in c['markup']})}",
          [f"{e.name}: {f!r}" for e, f in c["markup"]][:20])
    print(f"labels differing only by case, plural or hyphen: {len(c['duplicates'])}",
          [[e.name for e in v] for v in c["duplicates"]][:20])
    print(f"acronyms beside their own expansion: {len(c['acronyms'])}",
          [(a.name, b.name) for a, b in c["acronyms"]][:20])
    print(f"(ambiguous acronyms, expanded to two or more entities, each labelled apart: {len(c['ambiguous'])})",
          [(a.name, b.name) for a, b in c["ambiguous"]][:20])
    print(f"generic words as datasets: {len(c['generic'])}", [e.name for e in c["generic"]])
    for type_ in ("Method", "Task", "Dataset"):
        top = sorted((e for e in res.entities if e.type == type_), key=lambda e: (-counts[e.id], e.id))[:args.top]
        print(f"\ntop {args.top} {type_.lower()}s:")
        print("; ".join(f"{e.name} ({counts[e.id]})" for e in top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
