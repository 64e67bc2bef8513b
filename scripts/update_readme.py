#!/usr/bin/env python3
"""Re-run every `$ kg query '...'` example of README.md and docs/queries.md on the
sample build and write its real output back under it (tests/test_readme.py checks
they agree).

    kg build && python scripts/update_readme.py [--store outputs]
"""
from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kg.cli import main as kg_main  # noqa: E402

#: The files whose query examples show real output.
EXAMPLE_FILES = (ROOT / "README.md", ROOT / "docs" / "queries.md")


def run(argv: list[str], store: str) -> str:
    """Output of one `kg query ...` command line (argv without "kg")."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = kg_main([*argv, "--store", store])
    if code != 0:
        raise SystemExit(f"query failed ({code}): {argv}")
    return buf.getvalue()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", default=str(ROOT / "outputs"))
    args = ap.parse_args()
    def replace(m: re.Match) -> str:
        first = m.group(1)
        out = run(shlex.split(first[2:])[1:], args.store)
        return f"```\n{first}\n{out}```"

    for path in EXAMPLE_FILES:
        text = path.read_text(encoding="utf-8")
        new = re.sub(r"```\n(\$ kg query [^\n]+)\n.*?```", replace, text, flags=re.S)
        path.write_text(new, encoding="utf-8")
        name = path.relative_to(ROOT)
        print(f"{name} updated" if new != text else f"{name} unchanged")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
