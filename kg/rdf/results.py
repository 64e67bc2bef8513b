"""W3C SPARQL result serializations (JSON, XML, CSV, TSV) written row by row.

Oxigraph serializes whole result sets; the endpoint needs to stop at a row
cap, so it serializes solutions itself, following the W3C specifications
(SPARQL 1.1 Query Results JSON / XML / CSV and TSV Formats).
"""
from __future__ import annotations

import csv
import io
import json
from xml.sax.saxutils import escape, quoteattr

import pyoxigraph as ox

XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
RDF_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"

MEDIA = {
    "json": "application/sparql-results+json",
    "xml": "application/sparql-results+xml",
    "csv": "text/csv",
    "tsv": "text/tab-separated-values",
}


def _json_term(term) -> dict:
    if isinstance(term, ox.NamedNode):
        return {"type": "uri", "value": term.value}
    if isinstance(term, ox.BlankNode):
        return {"type": "bnode", "value": term.value}
    out = {"type": "literal", "value": term.value}
    if term.language:
        out["xml:lang"] = term.language
    elif term.datatype and term.datatype.value not in (XSD_STRING, RDF_LANG_STRING):
        out["datatype"] = term.datatype.value
    return out


def _xml_term(term) -> str:
    if isinstance(term, ox.NamedNode):
        return f"<uri>{escape(term.value)}</uri>"
    if isinstance(term, ox.BlankNode):
        return f"<bnode>{escape(term.value)}</bnode>"
    if term.language:
        return f"<literal xml:lang={quoteattr(term.language)}>{escape(term.value)}</literal>"
    if term.datatype and term.datatype.value != XSD_STRING:
        return f"<literal datatype={quoteattr(term.datatype.value)}>{escape(term.value)}</literal>"
    return f"<literal>{escape(term.value)}</literal>"


def serialize_solutions(variables: list[str], rows: list[list], fmt: str) -> str:
    """Solutions (rows of Oxigraph terms or None) in a W3C results format."""
    if fmt == "json":
        bindings = [{v: _json_term(t) for v, t in zip(variables, row) if t is not None} for row in rows]
        return json.dumps({"head": {"vars": variables}, "results": {"bindings": bindings}}, ensure_ascii=False)
    if fmt == "xml":
        out = ['<?xml version="1.0"?>\n<sparql xmlns="http://www.w3.org/2005/sparql-results#">\n<head>']
        out += [f"<variable name={quoteattr(v)}/>" for v in variables]
        out.append("</head>\n<results>")
        for row in rows:
            out.append("<result>")
            out += [f"<binding name={quoteattr(v)}>{_xml_term(t)}</binding>"
                    for v, t in zip(variables, row) if t is not None]
            out.append("</result>")
        out.append("</results>\n</sparql>\n")
        return "\n".join(out)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\r\n")
        w.writerow(variables)
        for row in rows:
            w.writerow(["" if t is None else (f"_:{t.value}" if isinstance(t, ox.BlankNode) else t.value) for t in row])
        return buf.getvalue()
    if fmt == "tsv":
        lines = ["\t".join(f"?{v}" for v in variables)]
        lines += ["\t".join("" if t is None else str(t) for t in row) for row in rows]
        return "\n".join(lines) + "\n"
    raise ValueError(f"unknown results format {fmt!r}")


def serialize_boolean(value: bool, fmt: str) -> str:
    if fmt == "xml":
        return ('<?xml version="1.0"?>\n<sparql xmlns="http://www.w3.org/2005/sparql-results#">\n<head/>\n'
                f"<boolean>{'true' if value else 'false'}</boolean>\n</sparql>\n")
    if fmt in ("csv", "tsv"):
        return ("true" if value else "false") + "\n"
    return json.dumps({"head": {}, "boolean": bool(value)})
