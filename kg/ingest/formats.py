"""The readers of each input format (see :mod:`kg.ingest`)."""
from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

from kg.ingest.records import InputError, parse_venue, record_from_mapping, source_name
from kg.model import Record

_HEADER_MAX = 120


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
