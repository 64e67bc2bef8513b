"""SHACL validation compiled to SPARQL and run on an Oxigraph store.

pyshacl checks a graph node by node in Python: 363 s for a 2,000-record build, 37 times
the build. Here each constraint of ``ontology/shapes.ttl`` becomes one SPARQL query
that returns its violations (focus node, value) for every focus node at once, and
Oxigraph answers it from its indexes. The SHACL Core constraints the shapes use are
compiled (``sh:targetClass``; a predicate or ``sh:inversePath`` path; ``sh:minCount``,
``sh:maxCount``, ``sh:datatype``, ``sh:class``, ``sh:nodeKind``, ``sh:minLength``,
``sh:pattern``, ``sh:in``, ``sh:minInclusive`` / ``sh:maxInclusive`` /
``sh:minExclusive`` / ``sh:maxExclusive``), and SHACL-SPARQL ``sh:select`` constraints
run for every focus node at once: the target pattern put at the head of the query's
WHERE clause, ``$this`` otherwise unbound (the same rows as pre-binding ``$this`` one
focus node at a time, for constraints whose patterns join on it, as ours do). A shape
with any other constraint is refused, not skipped: :func:`compile_shapes` raises.

The report lists the same results as pyshacl's (a test compares them on every hostile
fixture), one per focus node for a count, one per value for a value constraint.
"""
from __future__ import annotations

from dataclasses import dataclass

import pyoxigraph as ox
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.collection import Collection
from rdflib.namespace import RDF, SH, XSD

from kg.rdf.sparqltext import where_open
from kg.rdf.store import to_term

#: What the compiler knows of a property shape (anything else there is refused).
_KNOWN = {SH.path, SH.minCount, SH.maxCount, SH.datatype, SH["class"], SH.nodeKind, SH.minLength, SH.pattern,
          SH.flags, SH["in"], SH.minInclusive, SH.maxInclusive, SH.minExclusive, SH.maxExclusive, SH.message,
          SH.name, SH.description, RDF.type}
#: Lexical forms of the datatypes a literal must match to be well formed (others: any).
_LEXICAL = {str(XSD.integer): r"^[+-]?[0-9]+$", str(XSD.boolean): r"^(true|false|1|0)$",
            str(XSD.decimal): r"^[+-]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)$"}
_RANGE = {SH.minInclusive: (">=", "MinInclusive"), SH.maxInclusive: ("<=", "MaxInclusive"),
          SH.minExclusive: (">", "MinExclusive"), SH.maxExclusive: ("<", "MaxExclusive")}
_NODE_KIND = {SH.IRI: "isIRI(?v)", SH.BlankNode: "isBlank(?v)", SH.Literal: "isLiteral(?v)",
              SH.BlankNodeOrIRI: "(isBlank(?v) || isIRI(?v))", SH.BlankNodeOrLiteral: "(isBlank(?v) || isLiteral(?v))",
              SH.IRIOrLiteral: "(isIRI(?v) || isLiteral(?v))"}


@dataclass(frozen=True)
class Check:
    """One constraint as a query: its rows are violations (``?this``, and ``?v`` for a
    value constraint)."""
    shape: str  # the source shape (an IRI, or the node shape's IRI + "/" + the path for a property shape)
    component: str  # the SHACL constraint component's local name
    path: str  # the result path, in SPARQL syntax ("" for a node-level constraint)
    message: str
    query: str  # the focus nodes (the target classes' instances) are its first pattern
    sparql: bool = False


@dataclass(frozen=True)
class Result:
    focus: str  # N-Triples form of each term
    path: str
    component: str
    value: str
    shape: str
    message: str


def _sparql_string(text: str) -> str:
    return str(ox.Literal(text))  # quoted and escaped by Oxigraph


def _term(t) -> str:
    """A term of the shapes graph (ours, trusted) in SPARQL syntax."""
    if not isinstance(t, (URIRef, Literal)):
        raise ValueError(f"the SPARQL validator takes no blank node here: {t!r}")
    return str(to_term(t))


def _focus(targets: tuple[str, ...]) -> str:
    """The pattern that binds ``?this`` to each instance of the target classes."""
    return "VALUES ?target { " + " ".join(f"<{c}>" for c in targets) + " } ?this a ?target ."


def _path(shapes: Graph, path) -> tuple[str, str]:
    """(the triple pattern from ?this to ?v, the result path as written)."""
    if isinstance(path, URIRef):
        return f"?this <{path}> ?v .", f"<{path}>"
    inverse = shapes.value(path, SH.inversePath)
    if isinstance(path, BNode) and isinstance(inverse, URIRef) and len(list(shapes.predicate_objects(path))) == 1:
        return f"?v <{inverse}> ?this .", f"^<{inverse}>"
    raise NotImplementedError(f"the SPARQL validator knows predicate and sh:inversePath paths, not {path!r}")


def _value_filters(shapes: Graph, ps) -> list[tuple[str, str, str]]:
    """(component, the FILTER that is true for a bad ?v, default message) of a property shape."""
    out = []
    for dt in shapes.objects(ps, SH.datatype):
        ok = f"isLiteral(?v) && DATATYPE(?v) = <{dt}>"
        if str(dt) in _LEXICAL:
            ok += f" && REGEX(STR(?v), {_sparql_string(_LEXICAL[str(dt)])})"
        out.append(("DatatypeConstraintComponent", f"!({ok})", f"Value is not a literal of datatype <{dt}>"))
    for cls in shapes.objects(ps, SH["class"]):
        out.append(("ClassConstraintComponent", f"NOT EXISTS {{ ?v <{RDF.type}>/<http://www.w3.org/2000/01/rdf-"
                    f"schema#subClassOf>* <{cls}> }}", f"Value is not an instance of <{cls}>"))
    for kind in shapes.objects(ps, SH.nodeKind):
        out.append(("NodeKindConstraintComponent", f"!{_NODE_KIND[kind]}", f"Value is not of node kind <{kind}>"))
    for n in shapes.objects(ps, SH.minLength):
        out.append(("MinLengthConstraintComponent", f"isBlank(?v) || STRLEN(STR(?v)) < {int(n)}",
                    f"Value has fewer than {int(n)} characters"))
    for pat in shapes.objects(ps, SH.pattern):
        flags = shapes.value(ps, SH.flags)
        args = _sparql_string(str(pat)) + (", " + _sparql_string(str(flags)) if flags else "")
        out.append(("PatternConstraintComponent", f"isBlank(?v) || !REGEX(STR(?v), {args})",
                    f"Value does not match pattern {str(pat)!r}"))
    for lst in shapes.objects(ps, SH["in"]):
        members = list(Collection(shapes, lst))
        same = " || ".join(f"sameTerm(?v, {_term(m)})" for m in members) or "false"
        out.append(("InConstraintComponent", f"!({same})", "Value is not in the allowed list"))
    for prop, (op, name) in _RANGE.items():
        for bound in shapes.objects(ps, prop):
            out.append((f"{name}ConstraintComponent", f"!COALESCE(?v {op} {_term(bound)}, false)",
                        f"Value is not {op} {bound}"))
    return out


def compile_shapes(shapes: Graph) -> list[Check]:
    """The checks of every node shape with ``sh:targetClass`` in ``shapes``."""
    checks = []
    for shape in sorted(set(shapes.subjects(RDF.type, SH.NodeShape)), key=str):
        targets = tuple(sorted(str(c) for c in shapes.objects(shape, SH.targetClass)))
        if not targets:
            raise NotImplementedError(f"the SPARQL validator knows sh:targetClass targets only ({shape})")
        focus = _focus(targets)
        for ps in shapes.objects(shape, SH.property):
            unknown = {p for p, _ in shapes.predicate_objects(ps)} - _KNOWN
            if unknown:
                raise NotImplementedError(f"the SPARQL validator does not know {sorted(map(str, unknown))} ({shape})")
            pattern, path = _path(shapes, shapes.value(ps, SH.path))
            message = shapes.value(ps, SH.message)
            sid = f"{shape}/{path}"

            def add(component, query, default):
                checks.append(Check(sid, component, path, str(message) if message else default, query))
            for n in shapes.objects(ps, SH.minCount):
                add("MinCountConstraintComponent",
                    f"SELECT ?this WHERE {{ {focus} OPTIONAL {{ {pattern} }} }} GROUP BY ?this "
                    f"HAVING (COUNT(DISTINCT ?v) < {int(n)})", f"Less than {int(n)} values on {path}")
            for n in shapes.objects(ps, SH.maxCount):
                add("MaxCountConstraintComponent",
                    f"SELECT ?this WHERE {{ {focus} {pattern} }} GROUP BY ?this "
                    f"HAVING (COUNT(DISTINCT ?v) > {int(n)})", f"More than {int(n)} values on {path}")
            for component, bad, default in _value_filters(shapes, ps):
                add(component, f"SELECT DISTINCT ?this ?v WHERE {{ {focus} {pattern} FILTER ({bad}) }}", default)
        for c in shapes.objects(shape, SH.sparql):
            select, message = shapes.value(c, SH.select), shapes.value(c, SH.message)
            checks.append(Check(str(shape), "SPARQLConstraintComponent", "", str(message or "SPARQL constraint"),
                                _with_targets(str(select), targets), sparql=True))
    return checks


def _with_targets(select: str, targets: tuple[str, ...]) -> str:
    """A SPARQL constraint's query with its focus nodes (the instances of ``targets``) as
    the first pattern of its WHERE clause: the rows of focus nodes only, found from them."""
    at = where_open(select)
    if at is None:
        raise NotImplementedError("a SPARQL constraint without a WHERE pattern")
    return f"{select[:at + 1]} {_focus(targets)} {select[at + 1:]}"


def run_checks(store: ox.Store, checks: list[Check], progress=None) -> list[Result]:
    """The violations of ``checks`` in ``store``, sorted; ``progress(done, total)`` is
    called after each check."""
    out = []
    for k, check in enumerate(checks):
        if progress is not None and k:
            progress(k, len(checks))
        solutions = store.query(check.query)
        has_value = "value" in {v.value for v in solutions.variables}  # a SPARQL constraint's ?value
        for sol in solutions:
            this = sol["this"]
            if this is None:
                continue
            if check.sparql:  # ?value if the query binds it, else the focus node (SHACL-SPARQL 5.3.2)
                value = str(sol["value"]) if has_value and sol["value"] is not None else str(this)
            else:
                value = "" if "Count" in check.component else str(sol["v"])
            out.append(Result(str(this), check.path, check.component, value, check.shape, check.message))
    if progress is not None and checks:
        progress(len(checks), len(checks))
    return sorted(set(out), key=lambda r: (r.focus, r.path, r.component, r.value))


def report_text(results: list[Result]) -> str:
    """The report as pyshacl words it."""
    lines = ["Validation Report", f"Conforms: {not results}"]
    if results:
        lines.append(f"Results ({len(results)}):")
    for r in results:
        lines += [f"Constraint Violation in {r.component} ({SH[r.component]}):", "\tSeverity: sh:Violation",
                  f"\tSource Shape: {r.shape}", f"\tFocus Node: {r.focus}"]
        if r.value:
            lines.append(f"\tValue Node: {r.value}")
        if r.path:
            lines.append(f"\tResult Path: {r.path}")
        lines.append(f"\tMessage: {r.message}")
    return "\n".join(lines) + "\n"
