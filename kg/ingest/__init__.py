"""Read abstracts from files into :class:`~kg.model.Record` objects.

Formats, chosen by file extension:

- ``.txt`` (the seed format): a first paragraph naming the venue ("ICML 2025
  Papers", "ICLR 2025 论文列表"), then abstracts separated by blank lines.
  Doc id ``<file name>#<0-based index>``.
- ``.jsonl`` / ``.ndjson``: one JSON object a line with at least ``abstract``.
- ``.json``: an array of such objects (or an object holding one under
  ``records``, ``papers`` or ``data``).
- ``.csv`` / ``.tsv``: a header row with an ``abstract`` column.
- ``.md``: a PMLR proceedings page (YAML front matter: title, abstract,
  software, openreview).
- ``.bib``: BibTeX entries with an ``abstract`` field (the key is the id).

Records use ``id``, ``title``, ``venue``, ``year``, ``url`` and ``code`` /
``software`` when present; the doc id is the record's ``id``, else
``<file name>#<index>``. Errors name the file and the line or record.
"""
from __future__ import annotations

from collections.abc import Iterable
from importlib import resources
from pathlib import Path

from kg._gc import without_gc
from kg.ingest.formats import READERS
from kg.ingest.records import InputError, parse_venue, record_from_mapping  # noqa: F401  (the package's names)
from kg.model import Record


def sample_paths() -> list[Path]:
    """The four bundled sample abstract files, sorted by name."""
    root = resources.files("kg") / "samples"
    return sorted(Path(str(p)) for p in root.iterdir() if p.name.endswith(".txt"))


def _decodes(data: bytes, encoding: str) -> bool:
    try:
        data.decode(encoding)
        return True
    except UnicodeDecodeError:
        return False


def _read_text(path: Path, encoding_fallback=None) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except IsADirectoryError:
        raise InputError(path, "is a directory, not a file") from None
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError:
            raise InputError(path, "starts like UTF-16 but does not decode as UTF-16") from None
    else:
        head = data[:8192]
        controls = sum(head.count(bytes([c])) for c in (*range(0, 9), *range(14, 32)))
        if controls > len(head) // 10 or (b"\x00" in head and not _decodes(data, "utf-8")):
            raise InputError(path, "looks binary (control bytes), not a text file of abstracts")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            if encoding_fallback is None:
                line = data[: exc.start].count(b"\n") + 1
                raise InputError(path, f"not valid UTF-8 (byte {exc.start})", line) from None
            # Not UTF-8: the Windows-1252 superset of Latin-1 is what old exports use.
            fallback = "cp1252" if _decodes(data, "cp1252") else "latin-1"
            text = data.decode(fallback)
            encoding_fallback(f"{path}: not UTF-8; read as {fallback}")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise InputError(path, "is empty")
    return text


def read_file(path: str | Path, skip_invalid: bool = False, report=None, on_error=None) -> list[Record]:
    """All records of one file; raises :class:`InputError` on bad input.

    With ``skip_invalid``, a bad record is skipped instead and its message given to
    ``on_error`` (default: ``report``); a file that cannot be read at all still raises.
    """
    path = Path(path)
    reader = READERS.get(path.suffix.lower())
    if reader is None:
        what = "a folder or file that does not exist" if not path.exists() else f"unknown input format {path.suffix!r}"
        raise InputError(path, f"{what} (read are {', '.join(READERS)} files, and folders of them)")
    text = _read_text(path, encoding_fallback=report or (lambda m: None))
    if not skip_invalid:
        return reader(path, text)
    return reader(path, text, on_error=on_error or report or (lambda m: None))


def input_files(path: str | Path) -> list[Path]:
    """The files a path names: itself, or for a folder every file of a known format under
    it (recursively, in name order, hidden ones left out)."""
    path = Path(path)
    if not path.is_dir():
        return [path]
    found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in READERS
                   and not any(part.startswith(".") for part in p.relative_to(path).parts))
    if not found:
        raise InputError(path, f"a folder with no abstract files (looked for {', '.join(READERS)})")
    return found


@without_gc
def read_records(sources: Iterable[str | Path | dict], skip_invalid: bool = False, report=None,
                 skipped: list | None = None) -> list[Record]:
    """Records from files, folders (read recursively) and/or mappings (dicts given directly,
    e.g. from Python).

    With ``skip_invalid``, a bad record is reported and left out (its message also
    appended to ``skipped``, if given). Records whose id was already used for a different
    abstract are reported and kept under a suffixed id (``id~2``), so nothing is lost silently.

    The cyclic collector is paused meanwhile (:mod:`kg._gc`): records hold no cycles,
    and its passes over the growing list took a third of the time.
    """
    tell = report or (lambda m: None)

    def on_error(message: str) -> None:
        if skipped is not None:
            skipped.append(message)
        tell(message)

    out: list[Record] = []
    n_dicts = 0
    for src in sources:
        if isinstance(src, dict):
            try:
                out.append(record_from_mapping(src, Path("<records>"), n_dicts, 0))
            except InputError as exc:
                if not skip_invalid:
                    raise
                on_error(str(exc))
            n_dicts += 1
            continue
        for path in input_files(src):
            out.extend(read_file(path, skip_invalid=skip_invalid, report=tell, on_error=on_error))
    return _dedupe_ids(_capped(out, report), report)


#: The longest abstract read, in characters (a whole paper is some 50,000): a longer
#: text is cut at a word boundary before this, with a warning naming the record.
MAX_ABSTRACT = 100_000


def cut_text(text: str, cap: int = MAX_ABSTRACT) -> str:
    """``text`` cut before ``cap`` characters, at the last space if there is one in
    its last tenth (or last 20 characters).

    >>> cut_text("one two three", 9), cut_text("abcdefghijkl", 5), cut_text("short", 9)
    ('one two', 'abcde', 'short')
    """
    if len(text) <= cap:
        return text
    space = text.rfind(" ", max(0, cap - max(cap // 10, 20)), cap + 1)
    return text[:space if space > 0 else cap].rstrip()


def _capped(records: list[Record], report=None) -> list[Record]:
    import dataclasses

    out = []
    for r in records:
        if len(r.abstract) > MAX_ABSTRACT:
            if report:
                report(f"{r.source}:{r.line}: the abstract of {r.doc!r} has {len(r.abstract):,} characters; "
                       f"only the first {MAX_ABSTRACT:,} are read")
            r = dataclasses.replace(r, abstract=cut_text(r.abstract))
        out.append(r)
    return out


def _dedupe_ids(records: list[Record], report=None) -> list[Record]:
    import dataclasses

    seen: dict[str, Record] = {}
    out = []
    for r in records:
        first = seen.get(r.doc)
        if first is None:
            seen[r.doc] = r
            out.append(r)
            continue
        if " ".join(first.abstract.split()) == " ".join(r.abstract.split()):
            out.append(r)  # the same record twice: one paper, both sources kept
            continue
        k = 2
        while f"{r.doc}~{k}" in seen:
            k += 1
        new = dataclasses.replace(r, doc=f"{r.doc}~{k}")
        if report:
            report(f"{r.source}:{r.line}: id {r.doc!r} was already used for a different abstract "
                   f"({first.source}:{first.line}); kept as {new.doc!r}")
        seen[new.doc] = new
        out.append(new)
    return out
