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

import csv
import io
import json
import os
import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from importlib import resources
from pathlib import Path

from kg._gc import without_gc
from kg.model import Record
from kg.text import squash_spaces


class InputError(ValueError):
    """Bad input: names the file and, when known, the line."""

    def __init__(self, path: str | Path, message: str, line: int | None = None):
        self.path = str(path)
        self.line = line
        where = f"{self.path}:{line}" if line else self.path
        super().__init__(f"{where}: {message}")


_VENUE_RE = re.compile(r"\b([A-Z][A-Za-z&\-]*(?:\s+[A-Z][A-Za-z&\-]*)?)\s*'?\s*((?:19|20)\d{2})\b")
_HEADER_MAX = 120


def sample_paths() -> list[Path]:
    """The four bundled sample abstract files, sorted by name."""
    root = resources.files("kg") / "samples"
    return sorted(Path(str(p)) for p in root.iterdir() if p.name.endswith(".txt"))


def source_name(path: Path) -> str:
    """How a record names its file: as given, but the bundled samples as
    ``kg:samples/<name>`` so that outputs do not depend on where kg is installed."""
    return _source_name(str(path), os.getcwd())


@lru_cache(maxsize=256)
def _source_name(path: str, cwd: str) -> str:  # memoized: resolving paths for every record was 70% of ingest
    try:
        samples = Path(str(resources.files("kg") / "samples")).resolve()
        if (Path(cwd) / path).resolve().parent == samples:
            return f"kg:samples/{Path(path).name}"
    except (OSError, TypeError):
        pass
    return path


def parse_venue(text: str) -> tuple[str | None, int | None]:
    """Venue name and year from a header such as "ICML 2025 Papers".

    >>> parse_venue("ICLR 2025 论文列表")
    ('ICLR 2025', 2025)
    >>> parse_venue("Some abstracts")
    (None, None)
    """
    m = _VENUE_RE.search(text)
    if not m:
        return None, None
    return f"{m.group(1)} {m.group(2)}", int(m.group(2))


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


def _paragraphs(text: str) -> Iterator[tuple[int, str]]:
    """Blank-line separated paragraphs with their 1-based first line."""
    start_line, buf = 0, []
    for i, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            if not buf:
                start_line = i
            buf.append(line.strip())
        elif buf:
            yield start_line, " ".join(buf)
            buf = []
    if buf:
        yield start_line, " ".join(buf)


def _is_header(par: str) -> bool:
    return len(par) <= _HEADER_MAX and not re.search(r"[.!?]\s+\S", par)


def read_seed_text(path: Path, text: str, on_error=None) -> list[Record]:
    pars = list(_paragraphs(text))
    venue = year = None
    if pars and _is_header(pars[0][1]):
        venue, year = parse_venue(pars[0][1])
        pars = pars[1:]
    return [
        Record(doc=f"{path.name}#{i}", abstract=par, source=source_name(path), index=i, line=line,
               venue=venue, year=year)
        for i, (line, par) in enumerate(pars)
    ]


def _str(value) -> str | None:
    if type(value) is str:  # most fields of most records
        return value.strip() or None
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        value = " ".join(str(v) for v in value)
    value = str(value).strip()
    return value or None


def _year(value, venue: str | None) -> int | None:
    if value not in (None, ""):
        try:
            return int(str(value).strip()[:4])
        except ValueError:
            pass
    if venue:
        return parse_venue(venue)[1]
    return None


def _keywords(value) -> tuple[str, ...]:
    """Author keywords: a list, or one string separated by ``;`` (or ``,`` when it has no
    ``;``); spaces squashed, duplicates dropped.

    >>> _keywords("geometric consistency;relative pose; RGB-D")
    ('geometric consistency', 'relative pose', 'RGB-D')
    >>> _keywords(["GANs", "GANs", " "])
    ('GANs',)
    """
    if not value:
        return ()
    if isinstance(value, str):
        value = value.split(";") if ";" in value else value.split(",")
    elif not isinstance(value, (list, tuple)):
        return ()
    out = [squash_spaces(str(v)) for v in value if v is not None]
    return tuple(dict.fromkeys(v for v in out if v))


def record_from_mapping(obj, path: Path, index: int, line: int, source: str | None = None) -> Record:
    """A :class:`Record` from a JSON / CSV mapping, or an :class:`InputError`. ``source``:
    ``source_name(path)``, which a reader of many records passes once worked out."""
    if not isinstance(obj, dict):
        raise InputError(path, f"record {index} is not an object", line)
    abstract = _str(obj.get("abstract"))
    if not abstract:
        raise InputError(path, f"record {index} has no abstract", line)
    rid = _str(obj.get("id"))
    venue = _str(obj.get("venue"))
    code_field = obj.get("code") or obj.get("software") or ()
    if isinstance(code_field, str):
        code_field = re.split(r"[\s,;]+", code_field)
    code = tuple(c for c in (str(x).strip() for x in code_field) if c)
    title, url = _str(obj.get("title")), _str(obj.get("url"))
    keywords = _keywords(obj.get("keywords"))
    try:  # a lone surrogate (JSON's "\\ud800") is no text: no output file could hold it
        "\x00".join(filter(None, (abstract, rid, title, venue, url, *code, *keywords))).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(path, f"record {index} holds a lone surrogate (U+{ord(exc.object[exc.start]):04X}), "
                               "which is not Unicode text", line) from None
    return Record(
        doc=rid or f"{path.name}#{index}",
        abstract=squash_spaces(abstract),
        source=source if source is not None else source_name(path),
        index=index,
        line=line,
        title=title,
        venue=venue,
        year=_year(obj.get("year"), venue),
        url=url,
        code=code,
        keywords=keywords,
    )


def read_jsonl(path: Path, text: str, on_error=None) -> list[Record]:
    source = source_name(path)
    out = []
    index = 0
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(path, f"bad JSON: {exc.msg} (column {exc.colno})", lineno) from None
            out.append(record_from_mapping(obj, path, index, lineno, source))
        except InputError as exc:
            if on_error is None:
                raise
            on_error(f"{exc} (skipped)")
        index += 1
    return out


def read_json(path: Path, text: str, on_error=None) -> list[Record]:
    source = source_name(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"bad JSON: {exc.msg} (column {exc.colno})", exc.lineno) from None
    if isinstance(data, dict):
        for key in ("records", "papers", "data"):
            if isinstance(data.get(key), list):
                data = data[key]
                break
        else:
            data = [data]
    if not isinstance(data, list):
        raise InputError(path, "expected a JSON array of records")
    out = []
    for i, obj in enumerate(data):
        try:
            out.append(record_from_mapping(obj, path, i, 0, source))
        except InputError as exc:
            if on_error is None:
                raise
            on_error(f"{exc} (skipped)")
    return out


def read_csv(path: Path, text: str, delimiter: str = ",", on_error=None) -> list[Record]:
    source = source_name(path)
    reader = csv.DictReader(io.StringIO(text), delimiter=delimiter)
    fields = [f.strip().lower() for f in (reader.fieldnames or [])]
    if "abstract" not in fields:
        raise InputError(path, "no 'abstract' column in the header row", 1)
    reader.fieldnames = fields
    out = []
    index = 0
    try:
        for row in reader:
            try:
                out.append(record_from_mapping(row, path, index, reader.line_num, source))
            except InputError as exc:
                if on_error is None:
                    raise
                on_error(f"{exc} (skipped)")
            index += 1
    except csv.Error as exc:
        raise InputError(path, f"bad CSV: {exc}", reader.line_num) from None
    return out


def _front_matter(text: str) -> dict:
    """The YAML front matter of a Markdown page: ``key: value`` lines, quoted
    strings and folded / literal block scalars (what PMLR pages use)."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return {}
    out: dict[str, str] = {}
    i = 1
    while i < len(lines) and lines[i].strip() != "---":
        m = re.match(r"^([A-Za-z_][\w-]*):\s*(.*)$", lines[i])
        i += 1
        if not m:
            continue
        key, value = m.group(1), m.group(2).strip()
        if value in (">", ">-", "|", "|-", ">+", "|+"):
            block = []
            while i < len(lines) and (lines[i].startswith((" ", "\t")) or not lines[i].strip()) and lines[i].strip() != "---":
                block.append(lines[i].strip())
                i += 1
            value = (" " if value.startswith(">") else "\n").join(b for b in block if b)
        elif len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1].replace("\\\"", "\"") if value[0] == '"' else value[1:-1].replace("''", "'")
        out[key] = value
    return out


def read_pmlr_md(path: Path, text: str, on_error=None) -> list[Record]:
    """A PMLR proceedings page (YAML front matter with title, abstract, software, openreview)."""
    meta = _front_matter(text)
    if not meta.get("abstract"):
        err = InputError(path, "no abstract in the YAML front matter", 1)
        if on_error is None:
            raise err
        on_error(f"{err} (skipped)")
        return []
    meta.setdefault("id", meta.get("id") or path.stem)
    meta.setdefault("code", meta.get("software", ""))
    meta.setdefault("url", meta.get("openreview") or meta.get("pdf"))
    meta.setdefault("venue", meta.get("booktitle") or meta.get("container-title"))
    return [record_from_mapping(meta, path, 0, 1)]


def _bib_value(text: str, i: int) -> tuple[str, int]:
    """A BibTeX field value at ``i``: {braced, nested}, "quoted" or a bare word."""
    if text[i] == "{":
        depth, j = 0, i
        while j < len(text):
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    return text[i + 1:j], j + 1
            j += 1
        raise ValueError("unbalanced braces")
    if text[i] == '"':
        j = i + 1
        depth = 0
        while j < len(text) and not (text[j] == '"' and depth == 0):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        return text[i + 1:j], j + 1
    m = re.match(r"[^,}\s]+", text[i:])
    return (m.group(0) if m else ""), i + (m.end() if m else 0)


def read_bibtex(path: Path, text: str, on_error=None) -> list[Record]:
    """BibTeX entries with an ``abstract`` field (others are skipped silently)."""
    source = source_name(path)
    out = []
    for m in re.finditer(r"@(\w+)\s*\{\s*([^,\s]+)\s*,", text):
        kind, key = m.group(1).lower(), m.group(2)
        if kind in ("comment", "string", "preamble"):
            continue
        line = text[: m.start()].count("\n") + 1
        fields: dict[str, str] = {"id": key}
        i = m.end()
        try:
            while True:
                f = re.compile(r"\s*([A-Za-z][\w-]*)\s*=\s*").match(text, i)
                if not f:
                    break
                value, i = _bib_value(text, f.end())
                fields[f.group(1).lower()] = " ".join(value.replace("{", "").replace("}", "").split())
                c = re.compile(r"\s*,?").match(text, i)
                i = c.end()
        except (ValueError, IndexError):
            err = InputError(path, f"entry {key!r}: cannot parse its fields", line)
            if on_error is None:
                raise err from None
            on_error(f"{err} (skipped)")
            continue
        if not fields.get("abstract"):
            continue
        fields.setdefault("venue", fields.get("booktitle") or fields.get("journal"))
        fields.setdefault("code", fields.get("software", ""))
        out.append(record_from_mapping(fields, path, len(out), line, source))
    return out


READERS = {
    ".txt": read_seed_text,
    ".jsonl": read_jsonl,
    ".ndjson": read_jsonl,
    ".json": read_json,
    ".csv": read_csv,
    ".tsv": lambda p, t, on_error=None: read_csv(p, t, "\t", on_error),
    ".md": read_pmlr_md,
    ".bib": read_bibtex,
}


def read_file(path: str | Path, skip_invalid: bool = False, report=None) -> list[Record]:
    """All records of one file; raises :class:`InputError` on bad input.

    With ``skip_invalid``, a bad record is reported (``report(message)``) and
    skipped instead; a file that cannot be read at all still raises.
    """
    path = Path(path)
    reader = READERS.get(path.suffix.lower())
    if reader is None:
        raise InputError(path, f"unknown input format {path.suffix!r} (use one of {', '.join(READERS)})")
    text = _read_text(path, encoding_fallback=report or (lambda m: None))
    if not skip_invalid:
        return reader(path, text)
    return reader(path, text, on_error=report or (lambda m: None))


@without_gc
def read_records(sources: Iterable[str | Path | dict], skip_invalid: bool = False, report=None) -> list[Record]:
    """Records from paths and/or mappings (dicts given directly, e.g. from Python).

    Records whose id was already used for a different abstract are reported
    and kept under a suffixed id (``id~2``), so nothing is lost silently.

    The cyclic collector is paused meanwhile (:mod:`kg._gc`): records hold no cycles,
    and at 100k records its passes over the growing list took a third of the time.
    """
    out: list[Record] = []
    n_dicts = 0
    for src in sources:
        if isinstance(src, dict):
            try:
                out.append(record_from_mapping(src, Path("<records>"), n_dicts, 0))
            except InputError as exc:
                if not skip_invalid:
                    raise
                (report or (lambda m: None))(str(exc))
            n_dicts += 1
        else:
            out.extend(read_file(src, skip_invalid=skip_invalid, report=report))
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
