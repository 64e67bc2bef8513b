"""A hash of the package's own files: what decides whether a cached result is still
the result the code would give."""
from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


def tree_digest(root: Path) -> str:
    """A hash of every Python module and resource file under ``root`` (the rules,
    lexicons, templates and the trained model), with their paths."""
    h = hashlib.sha256()
    paths = sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                   and (p.suffix == ".py" or {"resources", "templates"} & set(p.relative_to(root).parts)))
    for path in paths:
        h.update(path.relative_to(root).as_posix().encode() + b"\x00" + path.read_bytes())
    return h.hexdigest()


@lru_cache(maxsize=1)
def _package_digest() -> str:
    return tree_digest(PACKAGE)


def source_hash(salt: str, root: Path | None = None) -> str:
    """A hash of ``salt`` and of the whole package (or the tree at ``root``): an edit
    anywhere in it gives a new hash. Hashing less would save a re-extraction or a
    rewrite now and then, and serve stale results the day a module left out changes."""
    digest = _package_digest() if root is None else tree_digest(root)
    return hashlib.sha256(f"{salt}\x00{digest}".encode()).hexdigest()[:16]
