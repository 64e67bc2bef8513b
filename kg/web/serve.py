"""``kg serve``: a read-only SPARQL 1.1 Protocol endpoint plus the HTML views.

- ``/sparql``: GET ``?query=``, POST form (``query=``) or POST
  ``application/sparql-query``; GET without a query gives the SPARQL 1.1 Service
  Description. Results as SPARQL JSON (default), XML, CSV or TSV; CONSTRUCT /
  DESCRIBE as Turtle (default), N-Triples, RDF/XML or JSON-LD (expanded form), by
  ``Accept`` (with q-values; 406 when nothing listed fits the query's results) or
  ``?format=`` (a media type or ``json|xml|csv|tsv|turtle|nt|rdfxml|jsonld``; json and
  xml of a graph are JSON-LD and RDF/XML). Updates (``update=``,
  ``application/sparql-update``) get 403 and the store is opened read-only; a
  malformed query gets 400; ``SERVICE`` (federated queries) gets 403; a dataset
  (``FROM``, ``FROM NAMED``, ``default-graph-uri``, ``named-graph-uri``) gets 400: the
  store has one default graph. Keywords are read from the query's tokens, so a
  string or IRI that contains "SERVICE" is no federated query.
- Every query runs in a worker process with its own read-only Oxigraph
  store, opened again when a new build has replaced the store folder (the
  next query after the swap sees the new build); a query still running at
  the timeout (default 30 s) is stopped by ending its worker (a new one
  takes its place) and answered with 503, so the endpoint keeps serving. Results are capped (``--max-rows``).
- ``/resource/<type>/<slug>`` and ``/ontology``: the graph's IRIs resolved, as RDF by
  content negotiation (:mod:`kg.web.resources`), or, for a browser (``text/html``
  before any RDF type in ``Accept``), the resource's page (:mod:`kg.web.pages`, from
  the build's page index); ``?list=&page=&sort=newest|oldest`` pages a paper list.
- ``/``: the front page (counts, top lists, search box); ``/search?q=``: names and
  titles, as a page or JSON; ``/query``: a SPARQL query page (``/`` too, in a build
  without a page index). The output folder's HTML views and RDF files are
  served by name (``/index.html``, ``/graph.html``, ``/graph.nt.gz`` ...), never a
  path outside the folder. Pages carry a Content-Security-Policy.
- Binds 127.0.0.1 unless told otherwise.
"""
from __future__ import annotations

import json
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from kg.rdf.sparqltext import REFUSED, refused
from kg.rdf.statements import RUN_QUERY, base_of_run
from kg.web import pages
from kg.web.pageindex import PAGE_INDEX, PageIndex, PageIndexError
from kg.web.pages import PAGE_CSP, ServeLinks
from kg.web.protocol import ACCEPT, GRAPH_MEDIA, accepted, pick_format, service_description, wants_html
from kg.web.resources import (RESOURCE_PREFIX, describe_query, description_query, exists_query, ontology_document,
                              resource_iri)
from kg.web.workers import WorkerPool

DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_ROWS = 100_000
MAX_BODY = 1 << 20
STATIC_SUFFIXES = {".html": "text/html; charset=utf-8", ".ttl": "text/turtle; charset=utf-8",
                   ".nt": "application/n-triples", ".jsonld": "application/ld+json",
                   ".json": "application/json", ".jsonl": "application/x-ndjson", ".gz": "application/gzip"}
_HOST = re.compile(r"[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?|\[[0-9A-Fa-f:.]{2,45}\](:[0-9]{1,5})?")
CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; "
       "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


# ----------------------------------------------------------------------------- HTTP side

QUERY_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<title>abstract-kg SPARQL</title>
<style>body{{font-family:system-ui,sans-serif;max-width:1000px;margin:24px auto;padding:0 12px;color:#222}}
textarea{{width:100%;height:180px;font-family:monospace}} table{{border-collapse:collapse;margin-top:12px}}
td,th{{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}} #msg{{color:#a33}}</style></head>
<body><h1>abstract-kg SPARQL endpoint</h1>
<p>Read-only SPARQL 1.1 Protocol endpoint at <code>/sparql</code>. Views: {views}</p>
<textarea id="q">PREFIX kg: &lt;https://w3id.org/abstract-kg/ontology#&gt;
PREFIX skos: &lt;http://www.w3.org/2004/02/skos/core#&gt;
SELECT ?task (COUNT(?p) AS ?papers) WHERE {{ ?p kg:addressesTask ?t . ?t skos:prefLabel ?task }}
GROUP BY ?task ORDER BY DESC(?papers) LIMIT 10</textarea>
<p><button id="run">Run</button> <span id="msg"></span></p><div id="out"></div>
<script>
document.getElementById("run").addEventListener("click", function () {{
  var msg = document.getElementById("msg"), out = document.getElementById("out");
  msg.textContent = "running…"; out.replaceChildren();
  fetch("sparql", {{method: "POST", headers: {{"Content-Type": "application/sparql-query",
        "Accept": "application/sparql-results+json"}}, body: document.getElementById("q").value}})
  .then(function (r) {{ return r.text().then(function (t) {{ return [r, t]; }}); }})
  .then(function (rt) {{
    var r = rt[0], t = rt[1];
    if (!r.ok) {{ msg.textContent = r.status + ": " + t; return; }}
    var data = JSON.parse(t); msg.textContent = "";
    if (data.boolean !== undefined) {{ out.textContent = String(data.boolean); return; }}
    var table = document.createElement("table"), head = table.insertRow();
    data.head.vars.forEach(function (v) {{ var th = document.createElement("th"); th.textContent = v; head.appendChild(th); }});
    data.results.bindings.forEach(function (b) {{
      var row = table.insertRow();
      data.head.vars.forEach(function (v) {{ row.insertCell().textContent = b[v] ? b[v].value : ""; }});
    }});
    out.appendChild(table);
  }}).catch(function (e) {{ msg.textContent = String(e); }});
}});
</script></body></html>
"""


class SparqlHandler(BaseHTTPRequestHandler):
    server_version = "abstract-kg"
    protocol_version = "HTTP/1.1"

    # set on the subclass by make_server
    pool: WorkerPool
    outdir: Path
    timeout_s: float
    max_rows: int

    def log_message(self, fmt, *args):  # quiet by default; errors still go to stderr
        if getattr(self.server, "verbose", False):
            super().log_message(fmt, *args)

    def _send(self, status: int, ctype: str, body: str | bytes, extra: dict | None = None, csp: str = CSP) -> None:
        data = body.encode("utf-8") if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Access-Control-Allow-Origin", "*")
        if ctype.startswith("text/html"):
            self.send_header("Content-Security-Policy", csp)
            self.send_header("Referrer-Policy", "no-referrer")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _error(self, status: int, text: str) -> None:
        self._send(status, "text/plain; charset=utf-8", text.rstrip("\n") + "\n")

    # -- routing
    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        url = urlsplit(self.path)
        params = parse_qs(url.query, keep_blank_values=True)
        if url.path == "/sparql":
            if "update" in params:
                return self._error(403, "This endpoint is read-only: updates are refused.")
            if "query" not in params:
                return self._send(200, "text/turtle; charset=utf-8", service_description(self._endpoint_url()),
                                  {"Vary": "Accept"})
            return self._query(params["query"][0], params)
        if url.path.startswith(RESOURCE_PREFIX):
            return self._resource(url.path, params)
        if url.path == "/ontology":
            return self._ontology(params)
        if url.path == "/search":
            return self._search(params)
        if url.path in ("/", "") and (self.outdir / PAGE_INDEX).is_file():
            return self._front()
        if url.path in ("/", "", "/query"):
            views = ", ".join(f'<a href="{p.name}">{p.name}</a>' for p in sorted(self.outdir.glob("*.html")))
            return self._send(200, "text/html; charset=utf-8", QUERY_PAGE.format(csp=CSP, views=views or "none"))
        return self._static(url.path)

    # -- pages (kg.web.pages, from the build's page index)
    def _pages(self) -> PageIndex | None:
        """The build's page index, opened for this request (None without one)."""
        try:
            return PageIndex(self.outdir / PAGE_INDEX)
        except PageIndexError:
            return None

    def _html(self, page: str, status: int = 200) -> None:
        self._send(status, "text/html; charset=utf-8", page, {"Vary": "Accept"},
                   csp=PAGE_CSP + "; frame-ancestors 'none'")

    def _front(self) -> None:
        ix = self._pages()
        if ix is None:
            return self._error(404, "No pages in this build (run `kg build` again).")
        try:
            self._html(pages.front_page(ix.front(), ServeLinks()))
        finally:
            ix.close()

    def _search(self, params: dict) -> None:
        """``/search?q=``: names and titles, as a page or (``Accept: application/json``,
        ``?format=json``) as JSON."""
        q = (params.get("q") or [""])[0]
        formats = accepted(self.headers.get("Accept", ""), (params.get("format") or [None])[0])
        as_json = next((f for f in formats if f in ("json", "html", "*", "text")), "html") == "json"
        ix = self._pages()
        if ix is None:
            return self._error(404, "No pages in this build (run `kg build` again).")
        try:
            found = ix.search(q)
        finally:
            ix.close()
        if as_json:
            return self._send(200, "application/json", json.dumps({"q": q, **found}, ensure_ascii=False),
                              {"Vary": "Accept"})
        self._html(pages.search_page(q, found, ServeLinks()))

    def _resource_page(self, id_: str, iri: str, params: dict) -> bool:
        """The page of a resource, if the page index has one; False else."""
        ix = self._pages()
        if ix is None:
            return False
        try:
            node = ix.node(id_)
            if node is None:
                return False
            links = ServeLinks()
            if node["type"] == "Paper":
                self._html(pages.paper_page(node, links, iri))
                return True
            page = (params.get("page") or ["1"])[0]
            sort = (params.get("sort") or ["newest"])[0]
            self._html(pages.entity_page(ix, node, links, iri, (params.get("list") or [None])[0],
                                         int(page) if page.isdigit() else 1, sort != "oldest"))
            return True
        finally:
            ix.close()

    def do_POST(self):
        url = urlsplit(self.path)
        if url.path != "/sparql":
            return self._error(404, "Not found.")
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            return self._error(413, "Request body too large.")
        body = self.rfile.read(length).decode("utf-8", errors="replace") if length else ""
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        params = parse_qs(url.query, keep_blank_values=True)
        if ctype == "application/sparql-update":
            return self._error(403, "This endpoint is read-only: updates are refused.")
        if ctype == "application/x-www-form-urlencoded":
            form = parse_qs(body, keep_blank_values=True)
            if "update" in form:
                return self._error(403, "This endpoint is read-only: updates are refused.")
            if "query" not in form:
                return self._error(400, "Missing 'query' parameter.")
            params.update(form)
            return self._query(form["query"][0], params)
        if ctype == "application/sparql-query":
            return self._query(body, params)
        return self._error(415, "Use application/sparql-query or an application/x-www-form-urlencoded form.")

    def _query(self, text: str, params: dict) -> None:
        if params.get("default-graph-uri") or params.get("named-graph-uri"):
            return self._error(400, "Dataset parameters are not supported: the store has one default graph.")
        no = refused(text)
        if no is not None:
            return self._error(403 if no == "SERVICE" else 400, REFUSED[no])
        formats = accepted(self.headers.get("Accept", ""), (params.get("format") or [None])[0])
        if not formats:
            return self._error(406, "No acceptable format: results come as " + ", ".join(m for m, _ in ACCEPT) + ".")
        status, ctype, body = self.pool.run(text, formats, self.max_rows, self.timeout_s)
        self._send(status, ctype, body, {"Vary": "Accept"})

    def _ask(self, query: str) -> dict | None:
        """An ASK or one-row SELECT through the pool: its SPARQL JSON result, None on a failure."""
        status, _, body = self.pool.run(query, ["json"], 1, self.timeout_s)
        return json.loads(body) if status == 200 else None

    def _base(self) -> str | None:
        """The base IRI of the served build's resources (read from its store once)."""
        if self.server.base is None:
            res = self._ask(RUN_QUERY)
            rows = res["results"]["bindings"] if res else []
            self.server.base = base_of_run(rows[0]["r"]["value"]) if rows else None
        return self.server.base

    def _resource(self, path: str, params: dict) -> None:
        """A resource's description, by content negotiation (:mod:`kg.web.resources`)."""
        base = self._base()
        iri = resource_iri(base, path) if base else None
        found = self._ask(exists_query(iri)) if iri else None
        if not found or not found.get("boolean"):
            return self._error(404, "No such resource in this graph.")
        if wants_html(accepted(self.headers.get("Accept", ""), (params.get("format") or [None])[0])):
            id_ = path[len(RESOURCE_PREFIX):]
            if self._resource_page(id_, iri, params):
                return
            return self._description_page(id_, iri)
        formats = self._graph_formats(params, "a description")
        if formats:
            status, ctype, body = self.pool.run(describe_query(iri), formats, self.max_rows, self.timeout_s)
            self._send(status, ctype, body, {"Vary": "Accept"})

    def _description_page(self, id_: str, iri: str) -> None:
        """A resource without a page of its own (a mention, a usage count, the build's
        run): its triples as a table; a mention's or a sentence's page is its paper's."""
        if id_.startswith(("mention/", "sentence/")):
            paper = "paper/" + id_.split("/")[1]
            return self._send(303, "text/plain; charset=utf-8", "See the paper.\n",
                              {"Location": RESOURCE_PREFIX + paper, "Vary": "Accept"})
        status, _, body = self.pool.run(description_query(iri), ["json"], 1000, self.timeout_s)
        if status != 200:
            return self._error(status, "The description could not be read.")
        bindings = json.loads(body)["results"]["bindings"]
        rows = [(b["p"]["value"], b["o"], b.get("ol", {}).get("value")) for b in bindings]
        self._html(pages.description_page(id_, iri, rows, self._base() or "", ServeLinks()))

    def _ontology(self, params: dict) -> None:
        """The ontology document (its terms are ``/ontology#term``), by content negotiation."""
        formats = self._graph_formats(params, "the ontology")
        if formats:
            fmt = pick_format(formats, "graph")
            self._send(200, GRAPH_MEDIA[fmt], ontology_document(fmt), {"Vary": "Accept"})

    def _graph_formats(self, params: dict, what: str) -> list[str] | None:
        """The formats the request takes (:func:`accepted`) when one of them is a graph's,
        else None, the 406 sent."""
        formats = accepted(self.headers.get("Accept", ""), (params.get("format") or [None])[0])
        if pick_format(formats, "graph") is None:
            self._error(406, f"No acceptable format: {what} comes as "
                        + ", ".join(m for m, f in ACCEPT if pick_format([f], "graph")) + ".")
            return None
        return formats

    def do_OPTIONS(self):
        """A CORS preflight: any origin may query (the endpoint is read-only and public)."""
        self._send(204, "text/plain; charset=utf-8", b"", {
            "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
            "Access-Control-Allow-Headers": "Content-Type, Accept",
            "Access-Control-Max-Age": "86400"})

    def _endpoint_url(self) -> str:
        """This endpoint's URL, by the request's Host header when it is a host name (untrusted
        text goes into no IRI), else by the address the server listens on."""
        host = self.headers.get("Host") or ""
        if not _HOST.fullmatch(host):
            host = "%s:%s" % self.server.server_address[:2]
        return f"http://{host}/sparql"

    def _static(self, path: str) -> None:
        name = path.lstrip("/")
        if not name or "/" in name or "\\" in name or name.startswith("."):
            return self._error(404, "Not found.")
        target = (self.outdir / name).resolve()
        if target.parent != self.outdir or target.suffix not in STATIC_SUFFIXES or not target.is_file():
            return self._error(404, "Not found.")
        self._send(200, STATIC_SUFFIXES[target.suffix], target.read_bytes())


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    base: str | None = None  # the served build's base IRI, once read


def make_server(outdir: str | Path, host: str = "127.0.0.1", port: int = 8000, timeout: float = DEFAULT_TIMEOUT,
                workers: int = 2, max_rows: int = DEFAULT_MAX_ROWS) -> tuple[_Server, WorkerPool]:
    """A ready server (not yet serving) and its worker pool; call ``serve_forever``."""
    from kg.rdf.store import store_path

    outdir = Path(outdir).resolve()
    store = store_path(outdir)
    if not store.is_dir():
        raise FileNotFoundError(f"{outdir}: no Oxigraph store (run `kg build` first)")
    pool = WorkerPool(store, workers)
    handler = type("Handler", (SparqlHandler,), {"pool": pool, "outdir": outdir if outdir.is_dir() else store.parent,
                                                "timeout_s": timeout, "max_rows": max_rows})
    try:
        server = _Server((host, port), handler)
    except OSError:
        pool.close()
        raise
    return server, pool


def serve(outdir, host="127.0.0.1", port=8000, timeout=DEFAULT_TIMEOUT, workers=2, max_rows=DEFAULT_MAX_ROWS):
    server, pool = make_server(outdir, host, port, timeout, workers, max_rows)
    h, p = server.server_address[:2]
    print(f"Pages: http://{h}:{p}/  SPARQL endpoint: http://{h}:{p}/sparql  (query page: http://{h}:{p}/query)",
          file=sys.stderr)
    try:
        server.serve_forever()
    finally:
        server.server_close()
        pool.close()

