"""What a SPARQL query's text says, read token by token: its keywords (``SERVICE``,
``FROM``) and where its WHERE pattern opens.

Strings, IRIs, comments, variables and prefixed names are read as whole tokens, so a
word inside them is never taken for a keyword: ``FILTER(?o = "SERVICE <x>")``,
``<http://x.org/FROM>``, ``?service`` or ``ex:SERVICE`` hold no keyword.
"""
from __future__ import annotations

import re

_TOKEN = re.compile(r'''
    (?P<string>"""(?:[^"\\]|\\.|"(?!""))*"""|\'\'\'(?:[^'\\]|\\.|'(?!''))*\'\'\'
              |"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<iri><[^<>"{}|^`\\\s]*>)
  | (?P<comment>\#[^\n]*)
  | (?P<var>[?$]\w+)
  | (?P<pname>[A-Za-z_][\w.-]*:[\w.:%-]*|:[\w.:%-]*)
  | (?P<word>[A-Za-z]\w*)
  | (?P<open>\{)
  | (?P<close>\})
''', re.VERBOSE | re.UNICODE)


def tokens(query: str) -> list[tuple[str, str, int]]:
    """(kind, text, offset) of the tokens that matter here; other characters are skipped.

    >>> [t[:2] for t in tokens('SELECT ?s { ?s ?p "SERVICE" } # FROM')]
    [('word', 'SELECT'), ('var', '?s'), ('open', '{'), ('var', '?s'), ('var', '?p'), ('string', '"SERVICE"'), ('close', '}'), ('comment', '# FROM')]
    """
    return [(m.lastgroup, m.group(), m.start()) for m in _TOKEN.finditer(query)]


def keywords(query: str) -> set[str]:
    """The words of a query that are keywords, in upper case.

    >>> sorted(keywords('SELECT * WHERE { ?s ?p ?o FILTER(?o = "SERVICE <x>") } # service'))
    ['FILTER', 'SELECT', 'WHERE']
    >>> "SERVICE" in keywords("SELECT * { SERVICE <http://x.org/sparql> { ?s ?p ?o } }")
    True
    """
    return {text.upper() for kind, text, _ in tokens(query) if kind == "word"}


def where_open(query: str) -> int | None:
    """The offset of the ``{`` that opens the query's (outermost) WHERE pattern: after
    the first WHERE keyword, else the first ``{`` (the second of a CONSTRUCT, whose
    first opens its template). None if there is none.

    >>> q = 'CONSTRUCT { ?s a ?t } WHERE { ?s a ?t }'
    >>> q[where_open(q):]
    '{ ?s a ?t }'
    >>> q = 'SELECT ?s { ?s ?p "{" }'
    >>> q[where_open(q):]
    '{ ?s ?p "{" }'
    """
    toks = tokens(query)
    top: list[tuple[str, str, int]] = []  # the tokens outside any braces, and the braces that open there
    depth = 0
    for kind, text, at in toks:
        if kind == "open":
            if depth == 0:
                top.append((kind, text, at))
            depth += 1
        elif kind == "close":
            depth = max(0, depth - 1)
        elif depth == 0 and kind == "word":
            top.append((kind, text.upper(), at))
    where = next((k for k, (kind, text, _) in enumerate(top) if kind == "word" and text == "WHERE"), None)
    if where is not None:
        return next((at for kind, _, at in top[where:] if kind == "open"), None)
    opens = [at for kind, _, at in top if kind == "open"]
    skip = 1 if any(kind == "word" and text == "CONSTRUCT" for kind, text, _ in top) else 0
    return opens[skip] if len(opens) > skip else None


#: What a query may not ask, and why (the store answers offline, from one default graph).
REFUSED = {
    "SERVICE": "Federated queries (SERVICE) are refused: the graph answers alone, offline.",
    "FROM": "FROM and FROM NAMED are not supported: the store has one default graph, which holds "
            "every triple; leave them out.",
}


def refused(query: str) -> str | None:
    """The keyword of :data:`REFUSED` the query uses, if any.

    >>> refused("SELECT * FROM <http://x.org/g> { ?s ?p ?o }"), refused('SELECT * { ?s ?p "FROM" }')
    ('FROM', None)
    """
    kw = keywords(query)
    return next((k for k in REFUSED if k in kw), None)
