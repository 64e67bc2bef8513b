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


def _skip(err: InputError, on_error) -> None:
    if on_error is None:
        raise err
    on_error(f"{err} (skipped)")


def _front_matter(path: Path, text: str) -> dict:
    """The YAML front matter of a Markdown page (PyYAML's safe loader), as text values."""
    import yaml

    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return {}
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() in ("---", "...")), len(lines))
    try:
        meta = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(path, f"bad YAML front matter: {getattr(exc, 'problem', None) or exc}",
                         mark.line + 2 if mark is not None else 1) from None
    if not isinstance(meta, dict):
        return {}
    return {str(k): v if isinstance(v, (list, dict)) else "" if v is None else str(v) for k, v in meta.items()}


def read_pmlr_md(path: Path, text: str, on_error=None) -> list[Record]:
    """A PMLR proceedings page (YAML front matter with title, abstract, software, openreview)."""
    try:
        meta = _front_matter(path, text)
    except InputError as err:
        _skip(err, on_error)
        return []
    if not meta.get("abstract"):
        _skip(InputError(path, "no abstract in the YAML front matter", 1), on_error)
        return []
    meta.setdefault("id", meta.get("id") or path.stem)
    meta.setdefault("code", meta.get("software", ""))
    meta.setdefault("url", meta.get("openreview") or meta.get("pdf"))
    meta.setdefault("venue", meta.get("booktitle") or meta.get("container-title"))
    return [record_from_mapping(meta, path, 0, 1)]


def read_bibtex(path: Path, text: str, on_error=None) -> list[Record]:
    """BibTeX entries with an ``abstract`` field (others are skipped silently), read by
    bibtexparser: ``@string`` macros resolved, braces removed and LaTeX decoded into
    text by pylatexenc (``29\\%`` -> ``29%``, ``{\\"o}`` -> ``ö``, ``$\\times$`` -> ``×``)."""
    import bibtexparser
    from bibtexparser.middlewares import LatexDecodingMiddleware

    source = source_name(path)
    library = bibtexparser.parse_string(text, append_middleware=[LatexDecodingMiddleware(keep_math_mode=False)])
    for block in library.failed_blocks:
        head = block.raw.split(",", 1)[0].strip()[:60]
        _skip(InputError(path, f"cannot parse the entry {head!r}", block.start_line + 1), on_error)
    out = []
    for entry in library.entries:
        fields = {"id": entry.key}
        fields.update((f.key.lower(), " ".join(str(f.value).split())) for f in entry.fields)
        if not fields.get("abstract"):
            continue
        fields.setdefault("venue", fields.get("booktitle") or fields.get("journal"))
        fields.setdefault("code", fields.get("software", ""))
        out.append(record_from_mapping(fields, path, len(out), entry.start_line + 1, source))
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
