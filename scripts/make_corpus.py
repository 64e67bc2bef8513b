#!/usr/bin/env python3
"""A deterministic synthetic corpus of N distinct, realistic abstracts (JSON Lines).

    python scripts/make_corpus.py 10000 [-o bench-data/corpus-10000.jsonl] [--seed 0]

Each abstract recombines real sentences (SciREX train abstracts, SciERC train
and dev, the bundled samples; never SciERC test) with a contribution sentence
that names a new method, the task it addresses (from the cleaned task
gazetteer), the datasets it is evaluated on, the baselines it beats and,
for about one paper in four, a GitHub repository. New names keep coming as N
grows (one proposed method a paper, datasets and baselines drawn from pools
that grow like real literature: a Zipf-distributed reuse of earlier names
plus a steady trickle of new ones), so the entity count grows with N as it
does in a real year of papers. Records carry id, title, abstract, venue, year.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SYLLABLES = ("ra", "to", "vi", "ne", "lo", "qu", "ix", "mo", "ze", "ka", "pe", "sy", "dr", "fu", "ga", "ho",
             "li", "ny", "or", "pa", "sen", "tri", "vol", "xer", "ae", "bro", "cal", "dex")
SUFFIXES = ("Net", "Former", "GAN", "Flow", "Diff", "RL", "GPT", "Mix", "Prompt", "Tune", "Sparse", "Graph")
ADJ = ("simple", "scalable", "principled", "lightweight", "general", "efficient", "robust", "unified")
KIND = ("method", "framework", "algorithm", "architecture", "training scheme", "estimator")
VENUES = (("ICML 2025", 2025), ("ICLR 2025", 2025), ("NeurIPS 2024", 2024))


def sentence_bank(shared: Path) -> list[str]:
    from kg.ingest import read_records, sample_paths

    texts = [r.abstract for r in read_records(sample_paths())]
    scirex = shared / "data" / "scirex" / "abstracts.jsonl"
    if scirex.is_file():
        for line in scirex.read_text(encoding="utf-8").splitlines():
            t = json.loads(line)["abstract"]
            # SciREX text is tokenized ("state - of - the - art"): join it back into prose.
            t = re.sub(r" ([,.;:)\]%])", r"\1", t)
            t = re.sub(r"([(\[]) ", r"\1", t)
            texts.append(re.sub(r" - ", "-", t))
    for split in ("train", "dev"):
        p = shared / "data" / "scierc" / f"{split}.jsonl"
        if p.is_file():
            texts += [" ".join(json.loads(x)["sentence_texts"]) if "sentence_texts" in json.loads(x)
                      else json.loads(x)["text"] for x in p.read_text(encoding="utf-8").splitlines()]
    bank = []
    for t in texts:
        for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", t):
            s = s.strip()
            if 40 <= len(s) <= 320 and "github" not in s.lower() and not re.search(r"\b[Ww]e (propose|introduce|present)\b", s):
                bank.append(s)
    return sorted(set(bank))


def new_name(rng: random.Random, i: int) -> str:
    core = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 2))).capitalize()
    name = core + rng.choice(SUFFIXES)
    return name if rng.random() < 0.6 else f"{name}-{i % 97 + 1}"


def zipf_pick(rng: random.Random, pool: list[str], s: float = 1.1) -> str:
    # rank r picked with probability ~ 1 / r^s (popular names reused, a long tail)
    n = len(pool)
    u = rng.random()
    r = int(n ** u) if s <= 1 else int((1 - u * (1 - (n + 1) ** (1 - s))) ** (1 / (1 - s))) - 1
    return pool[max(0, min(n - 1, r))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("n", type=int)
    ap.add_argument("-o", "--out", type=Path)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    args = ap.parse_args()
    out = args.out or ROOT / "bench-data" / f"corpus-{args.n}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    from kg.extract.lexicon import _lines

    bank = sentence_bank(args.shared)
    tasks = [t for t in _lines("tasks.txt") if 2 <= len(t.split()) <= 4]
    base_datasets = [d.split("|")[0].strip() for d in _lines("datasets_curated.txt")]
    base_methods = [m.split("|")[0].strip() for m in _lines("methods_curated.txt")]
    rng = random.Random(args.seed)
    rng.shuffle(tasks)
    methods: list[str] = list(base_methods)
    datasets: list[str] = list(base_datasets)
    with out.open("w", encoding="utf-8") as fh:
        for i in range(args.n):
            r = random.Random(f"{args.seed}:{i}")
            name = new_name(r, i)
            task = zipf_pick(r, tasks, 1.05)
            if r.random() < 0.02:  # a new benchmark now and then
                datasets.append(f"{new_name(r, i + 7)}Bench")
            used = sorted({zipf_pick(r, methods) for _ in range(r.randint(1, 3))})
            ds = sorted({zipf_pick(r, datasets) for _ in range(r.randint(1, 2))})
            body = r.sample(bank, r.randint(3, 6))
            contribution = (f"We propose {name}, a {r.choice(ADJ)} {r.choice(KIND)} for {task}. "
                            f"{name} outperforms {', '.join(used[:-1]) + ' and ' if len(used) > 1 else ''}{used[-1]} "
                            f"on the {' and '.join(ds)} {'datasets' if len(ds) > 1 else 'dataset'}.")
            pos = r.randint(1, len(body))
            sentences = body[:pos] + [contribution] + body[pos:]
            if r.random() < 0.25:
                sentences.append(f"Code is available at https://github.com/lab{i % 500}/{name}.")
            venue, year = VENUES[i % len(VENUES)]
            rec = {"id": f"syn-{i}", "title": f"{name}: {task.title()} at Scale", "abstract": " ".join(sentences),
                   "venue": venue, "year": year}
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
            methods.append(name)  # later papers may build on this one
    print(f"wrote {args.n} abstracts to {out} ({out.stat().st_size / 1e6:.1f} MB; sentence bank {len(bank)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
