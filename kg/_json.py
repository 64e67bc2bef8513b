r"""Compact JSON text for the outputs written by the million (graph.json's nodes and links,
JSON-LD nodes, the JSON Lines files, the build state): orjson, with json where orjson
refuses a value; and :func:`loads` for what this project wrote (cached results, the build state).

orjson writes the compact form (``","`` and ``":"``, no spaces), keeps non-ASCII text as
it is and escapes what JSON must; it is several times faster than json's encoder. It refuses some values json
takes: a lone surrogate (text from an untrusted record can hold one), an integer beyond
64 bits, a dict key that is not a string. Those lines are written by json in the same
compact form, so that a file reads the same either way. (The two spell some floats
differently, ``1e-07`` and ``1e-7``; each line is always written the same way for the same
value, so outputs stay deterministic.)

>>> dumps({"b": 1, "a": ["é", 0.5, None]}, sort_keys=True)
'{"a":["é",0.5,null],"b":1}'
>>> print(dumps({"x": chr(0xD800)}))  # a lone surrogate: by json, escaped
{"x":"\ud800"}
"""
from __future__ import annotations

import json

import orjson

_SORTED = orjson.OPT_SORT_KEYS
_JSON_SORTED = json.JSONEncoder(ensure_ascii=True, sort_keys=True, check_circular=False,
                                separators=(",", ":")).encode
_JSON = json.JSONEncoder(ensure_ascii=True, check_circular=False, separators=(",", ":")).encode


def dumps(obj, sort_keys: bool = False) -> str:
    """``obj`` as compact JSON text (keys sorted if ``sort_keys``)."""
    try:
        return orjson.dumps(obj, option=_SORTED if sort_keys else 0).decode("utf-8")
    except (orjson.JSONEncodeError, TypeError):
        # what orjson will not write; ASCII escapes, so that a lone surrogate can be encoded as UTF-8
        return (_JSON_SORTED if sort_keys else _JSON)(obj)


def loads(text: str | bytes):
    """``json.loads(text)`` for JSON this project wrote, by orjson (half the time of json's
    parser), or by json where orjson refuses the text (a lone surrogate or a NaN, which json
    writes and reads). Not for input records: orjson reads an integer beyond 64 bits as a float.

    >>> loads('{"a": [1, "\\ud800"]}') == {"a": [1, chr(0xD800)]}
    True
    """
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)
