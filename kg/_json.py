r"""Compact JSON text for the outputs written by the million (graph.json's nodes and links,
JSON-LD nodes, the JSON Lines files): orjson, with json where orjson refuses a value.

orjson writes the compact form (``","`` and ``":"``, no spaces), keeps non-ASCII text as
it is and escapes what JSON must; it is several times faster than json's encoder (100k
abstracts: ``extractions.jsonl`` 1.2 s against 7.0 s). It refuses some values json
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
