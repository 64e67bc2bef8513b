"""One record from a mapping (a JSON object, a CSV row, front matter, a BibTeX entry)."""
from __future__ import annotations

import os
import re
from functools import lru_cache
from importlib import resources
from pathlib import Path

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


#: The types a record's fields may have (JSON's null is always allowed: the field is absent).
FIELD_TYPES = {"abstract": str, "title": str, "venue": str, "url": str, "id": (str, int), "year": (str, int),
               "keywords": (str, list), "code": (str, list), "software": (str, list)}
_KIND_WORDS = {str: "text", (str, int): "text or a whole number", (str, list): "text or a list of text"}


def _kind_of(value) -> str:
    """How a JSON value is named in an error.

    >>> _kind_of(123), _kind_of([1]), _kind_of({"a": 1}), _kind_of(True)
    ('a number (123)', 'a list', 'an object', 'true or false')
    """
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return f"a number ({value!r})"
    return {list: "a list", dict: "an object"}.get(type(value), type(value).__name__)


def record_from_mapping(obj, path: Path, index: int, line: int, source: str | None = None) -> Record:
    """A :class:`Record` from a JSON / CSV mapping, or an :class:`InputError`. ``source``:
    ``source_name(path)``, which a reader of many records passes once worked out."""
    if not isinstance(obj, dict):
        raise InputError(path, f"record {index} is not an object", line)
    for name, kinds in FIELD_TYPES.items():
        value = obj.get(name)
        if value is not None and (not isinstance(value, kinds) or isinstance(value, bool)):
            raise InputError(path, f"record {index}: field {name!r} must be {_KIND_WORDS[kinds]}, "
                                   f"not {_kind_of(value)}", line)
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
