#!/usr/bin/env python3
"""The picture of the map of one real conference that the README shows.

    python scripts/map_picture.py [--venue "NIPS 2018"] [--corpus ../shared/data/corpus/abstracts.jsonl.gz]
                                  [--out docs/map-neurips-2018.png]

Reads the conference's records from the corpus, builds the graph with kg, writes its
map page (the overview of every build) and takes a picture of the opening view in
Debian's Chromium (through Playwright) at 1280x800.
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kg import KnowledgeGraph  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--venue", default="NIPS 2018")
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "data" / "corpus" / "abstracts.jsonl.gz")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "map-neurips-2018.png")
    args = ap.parse_args()
    with gzip.open(args.corpus, "rt", encoding="utf-8") as fh:
        records = [r for r in map(json.loads, fh) if r.get("venue") == args.venue]
    t0 = time.time()
    kg = KnowledgeGraph.from_records(records)
    print(f"{len(records)} records of {args.venue} built in {time.time() - t0:.0f} s", file=sys.stderr)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        page_path = kg.to_html(Path(tmp) / "map.html")
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(page_path.as_uri())
        page.wait_for_selector("body[data-ready='1']", timeout=60000)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(args.out))
        browser.close()
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
