"""The SPARQL endpoint over real HTTP on 127.0.0.1 (real worker processes, real store)."""
import gzip
import json
import socket
import threading
import urllib.error
import urllib.parse
import urllib.request

import pytest
from SPARQLWrapper import CSV, JSON, TURTLE, XML, SPARQLWrapper
from SPARQLWrapper.SPARQLExceptions import QueryBadFormed, SPARQLWrapperException

from kg.web.serve import make_server

CARTESIAN = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
COUNT = "SELECT (COUNT(DISTINCT ?p) AS ?n) WHERE { ?p a kg:Paper }"


@pytest.fixture(scope="module")
def endpoint(built):
    server, pool = make_server(built, host="127.0.0.1", port=0, timeout=2.0, workers=2, max_rows=500)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    yield f"http://{host}:{port}"
    server.shutdown()
    server.server_close()
    pool.close()


def get(url, headers=None, data=None, method=None):
    """(status, headers, body): the body as text, or as bytes for a gzip file."""
    req = urllib.request.Request(url, data=data, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers, _text(r.headers, r.read())
    except urllib.error.HTTPError as e:
        return e.code, e.headers, _text(e.headers, e.read())


def _text(headers, body: bytes):
    return body if headers.get("Content-Type", "").startswith("application/gzip") else body.decode("utf-8")


def test_binds_loopback_only(endpoint):
    assert endpoint.startswith("http://127.0.0.1:")


def test_sparqlwrapper_select_in_every_format(endpoint):
    sw = SPARQLWrapper(endpoint + "/sparql")
    sw.setQuery("PREFIX kg: <https://w3id.org/abstract-kg/ontology#> " + COUNT)
    sw.setReturnFormat(JSON)
    res = sw.query().convert()
    assert res["results"]["bindings"][0]["n"]["value"] == "68"
    sw.setReturnFormat(XML)
    assert "68" in sw.query().convert().toxml()
    sw.setReturnFormat(CSV)
    assert sw.query().convert().decode().splitlines()[-1] == "68"
    sw.setMethod("POST")
    sw.setReturnFormat(JSON)
    assert sw.query().convert()["results"]["bindings"][0]["n"]["value"] == "68"


def test_construct_as_turtle(endpoint):
    sw = SPARQLWrapper(endpoint + "/sparql")
    sw.setQuery("CONSTRUCT { ?v a kg:Venue } WHERE { ?v a kg:Venue }")
    sw.setReturnFormat(TURTLE)
    g = sw.query().convert()
    assert b"venue/icml-2025" in g


def test_sparqlwrapper_construct_gives_a_graph_in_rdfxml_and_jsonld(endpoint):
    from rdflib import Graph, URIRef
    from SPARQLWrapper import JSONLD, RDFXML

    venue = URIRef("https://w3id.org/abstract-kg/resource/venue/icml-2025")
    for fmt, media in ((RDFXML, "application/rdf+xml"), (JSONLD, "application/ld+json")):
        sw = SPARQLWrapper(endpoint + "/sparql")
        sw.setQuery("CONSTRUCT { ?v a kg:Venue } WHERE { ?v a kg:Venue }")
        sw.setReturnFormat(fmt)
        res = sw.query()
        assert res.response.headers["Content-Type"].startswith(media)
        g = res.convert()
        assert isinstance(g, Graph) and (venue, None, None) in g


def test_a_graph_asked_for_as_json_or_xml_is_jsonld_or_rdfxml(endpoint):
    q = urllib.parse.quote("DESCRIBE <https://w3id.org/abstract-kg/resource/venue/icml-2025>")
    for fmt, media in (("json", "application/ld+json"), ("xml", "application/rdf+xml")):
        status, headers, _ = get(f"{endpoint}/sparql?query={q}&format={fmt}")
        assert status == 200 and headers["Content-Type"].startswith(media)
    # a SELECT cannot come as Turtle, nor a graph as CSV
    select = urllib.parse.quote("SELECT ?v WHERE { ?v a kg:Venue }")
    assert get(f"{endpoint}/sparql?query={select}", {"Accept": "text/turtle"})[0] == 406
    status, _, body = get(f"{endpoint}/sparql?query={q}", {"Accept": "text/csv"})
    assert status == 406 and "text/turtle" in body


def test_plain_http_get_post_and_formats(endpoint):
    q = urllib.parse.quote(COUNT)
    status, headers, body = get(f"{endpoint}/sparql?query={q}", {"Accept": "text/tab-separated-values"})
    assert status == 200 and headers["Content-Type"].startswith("text/tab-separated-values")
    assert body.splitlines() == ["?n", '"68"^^<http://www.w3.org/2001/XMLSchema#integer>']
    status, _, body = get(f"{endpoint}/sparql", {"Content-Type": "application/sparql-query",
                                                  "Accept": "application/sparql-results+json"}, COUNT.encode())
    assert status == 200 and json.loads(body)["results"]["bindings"][0]["n"]["value"] == "68"
    form = urllib.parse.urlencode({"query": "ASK { ?p a kg:Paper }"}).encode()
    status, _, body = get(f"{endpoint}/sparql", {"Content-Type": "application/x-www-form-urlencoded"}, form)
    assert status == 200 and json.loads(body)["boolean"] is True


def test_updates_are_refused_and_change_nothing(endpoint):
    status, _, _ = get(f"{endpoint}/sparql", {"Content-Type": "application/sparql-update"}, b"DROP ALL")
    assert status == 403
    form = urllib.parse.urlencode({"update": "INSERT DATA { <urn:a> <urn:b> <urn:c> }"}).encode()
    assert get(f"{endpoint}/sparql", {"Content-Type": "application/x-www-form-urlencoded"}, form)[0] == 403
    # An update sent as a query is not a query: refused as malformed.
    assert get(f"{endpoint}/sparql?query=" + urllib.parse.quote("DELETE WHERE { ?s ?p ?o }"))[0] == 400
    sw = SPARQLWrapper(endpoint + "/sparql")
    sw.setQuery(COUNT)
    sw.setReturnFormat(JSON)
    assert sw.query().convert()["results"]["bindings"][0]["n"]["value"] == "68"


def test_malformed_query_is_400(endpoint):
    sw = SPARQLWrapper(endpoint + "/sparql")
    sw.setQuery("SELECT ?x WHERE { ?x ")
    with pytest.raises(QueryBadFormed):
        sw.query()


def test_federated_queries_are_refused(endpoint):
    q = "SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }"
    assert get(f"{endpoint}/sparql?query=" + urllib.parse.quote(q))[0] == 403
    # the word in a string, an IRI, a comment or a variable is no SERVICE
    q = 'SELECT ?service WHERE { ?service a kg:Venue FILTER(?service != <http://x.org/SERVICE>) ' \
        'FILTER(STR(?service) != "SERVICE <x>") } # SERVICE <y>'
    status, _, body = get(f"{endpoint}/sparql?query=" + urllib.parse.quote(q))
    assert status == 200 and len(json.loads(body)["results"]["bindings"]) == 2


def test_a_dataset_in_the_query_is_refused_not_answered_empty(endpoint):
    for q in ("SELECT * FROM <https://example.org/g> WHERE { ?s ?p ?o } LIMIT 1",
              "SELECT * FROM NAMED <https://example.org/g> WHERE { ?s ?p ?o } LIMIT 1"):
        status, _, body = get(f"{endpoint}/sparql?query=" + urllib.parse.quote(q))
        assert status == 400 and "one default graph" in body
    status, _, _ = get(f"{endpoint}/sparql?query=" + urllib.parse.quote(COUNT) + "&default-graph-uri=urn:g")
    assert status == 400


def test_timeout_stops_the_query_and_the_server_keeps_answering(endpoint):
    status, _, body = get(f"{endpoint}/sparql?query=" + urllib.parse.quote(CARTESIAN))
    assert status == 503 and "timeout" in body
    for _ in range(3):
        status, _, body = get(f"{endpoint}/sparql?query=" + urllib.parse.quote(COUNT))
        assert status == 200 and '"68"' in body


def test_result_cap(endpoint):
    status, _, body = get(f"{endpoint}/sparql?query=" + urllib.parse.quote("SELECT * WHERE { ?s ?p ?o }"))
    assert status == 413 and "LIMIT" in body


def test_query_page_views_and_no_path_traversal(endpoint):
    status, headers, body = get(endpoint + "/query")
    assert status == 200 and "Content-Security-Policy" in headers and "/sparql" in body
    assert get(endpoint + "/graph.html")[0] == 200
    status, headers, dump = get(endpoint + "/graph.nt.gz")  # the dump, as the bytes of its file
    assert status == 200 and headers["Content-Type"] == "application/gzip"
    assert b"ontology#Paper> .\n" in gzip.decompress(dump)
    host, port = endpoint.split("//")[1].split(":")
    for path in ("/../stats.json", "/%2e%2e/%2e%2e/etc/passwd", "/store/CURRENT", "/..%2fsecret"):
        with socket.create_connection((host, int(port)), timeout=5) as s:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
            reply = s.recv(200).decode("latin-1")
        assert reply.startswith("HTTP/1.1 404"), (path, reply)


def test_twenty_concurrent_clients_get_answers(endpoint):
    from concurrent.futures import ThreadPoolExecutor

    q = urllib.parse.quote(COUNT)

    def client(i):
        return [get(f"{endpoint}/sparql?query={q}")[0] for _ in range(5)]

    with ThreadPoolExecutor(20) as ex:
        statuses = [s for batch in ex.map(client, range(20)) for s in batch]
    assert statuses == [200] * 100


def test_a_rebuild_of_the_folder_is_served_without_a_restart(tmp_path):
    # `kg build` replaces the output folder while `kg serve` runs: the workers' next queries
    # answer from the new store (before, they kept the removed one open and served the
    # old build next to the new build's pages).
    from kg.api import KnowledgeGraph

    def records(n):
        return [{"id": f"r{i}", "title": f"Paper {i}",
                 "abstract": f"We propose Net{i} for image classification and evaluate it on CIFAR-10."}
                for i in range(n)]

    out = tmp_path / "out"
    KnowledgeGraph.from_records(records(3)).save(out, rdf=("nt",))
    server, pool = make_server(out, host="127.0.0.1", port=0, timeout=10.0, workers=2, max_rows=500)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]
    q = urllib.parse.quote(COUNT)
    try:
        def papers():
            status, _, body = get(f"http://{host}:{port}/sparql?query={q}", {"Accept": "text/csv"})
            assert status == 200, body
            return int(body.splitlines()[-1])

        assert [papers() for _ in range(4)] == [3] * 4  # both workers
        KnowledgeGraph.from_records(records(5)).save(out, rdf=("nt",))
        assert [papers() for _ in range(4)] == [5] * 4
        status, _, body = get(f"http://{host}:{port}/stats.json")
        assert status == 200 and json.loads(body)["nodes"]["Paper"] == 5
    finally:
        server.shutdown()
        server.server_close()
        pool.close()


def test_accept_quality_values_406_and_vary(endpoint):
    q = urllib.parse.quote("SELECT ?s WHERE { ?s a <https://w3id.org/abstract-kg/ontology#Venue> }")
    status, headers, body = get(f"{endpoint}/sparql?query={q}", {
        "Accept": "application/sparql-results+json;q=0.5, application/sparql-results+xml;q=0.9"})
    assert status == 200 and headers["Content-Type"].startswith("application/sparql-results+xml")
    assert "Accept" in headers.get("Vary", "")
    status, _, _ = get(f"{endpoint}/sparql?query={q}", {"Accept": "image/png"})
    assert status == 406
    status, headers, _ = get(f"{endpoint}/sparql?query={q}&format=" + urllib.parse.quote("application/sparql-results+xml"))
    assert status == 200 and headers["Content-Type"].startswith("application/sparql-results+xml")


def test_cors_preflight_lets_a_browser_on_another_origin_post_a_query(endpoint):
    status, headers, _ = get(f"{endpoint}/sparql", {"Origin": "https://example.org",
                                                     "Access-Control-Request-Method": "POST",
                                                     "Access-Control-Request-Headers": "content-type"},
                             method="OPTIONS")
    assert status == 204 and headers["Access-Control-Allow-Origin"] == "*"
    assert "POST" in headers["Access-Control-Allow-Methods"] and "content-type" in headers["Access-Control-Allow-Headers"].lower()


def test_get_sparql_without_a_query_describes_the_service(endpoint):
    from rdflib import Graph, Namespace, URIRef

    status, headers, body = get(f"{endpoint}/sparql")
    assert status == 200 and headers["Content-Type"].startswith("text/turtle")
    g = Graph().parse(data=body, format="turtle")
    SD = Namespace("http://www.w3.org/ns/sparql-service-description#")
    svc = URIRef(f"{endpoint}/sparql")
    assert (svc, SD.endpoint, svc) in g and (svc, SD.supportedLanguage, SD.SPARQL11Query) in g


def test_a_hostile_host_header_goes_into_no_iri(endpoint):
    status, _, body = get(f"{endpoint}/sparql", {"Host": "evil> <x"})
    assert status == 200 and "evil" not in body


def test_rdflib_sparqlstore_selects_asks_and_constructs(endpoint):
    from rdflib import Graph, Literal, URIRef
    from rdflib.plugins.stores.sparqlstore import SPARQLStore

    store = SPARQLStore(endpoint + "/sparql")
    rows = list(store.query(COUNT, initNs={"kg": "https://w3id.org/abstract-kg/ontology#"}))
    assert rows[0][0] == Literal(68)
    assert store.query("ASK { ?p a <https://w3id.org/abstract-kg/ontology#Paper> }").askAnswer is True
    g = store.query("CONSTRUCT { ?v a ?t } WHERE { ?v a ?t FILTER(?t = <https://w3id.org/abstract-kg/ontology#Venue>) }").graph
    assert isinstance(g, Graph) and (URIRef("https://w3id.org/abstract-kg/resource/venue/icml-2025"), None, None) in g
    # as a read-only Graph over the endpoint
    remote = Graph(store=store)
    venue = URIRef("https://w3id.org/abstract-kg/ontology#Venue")
    assert len(list(remote.triples((None, URIRef("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"), venue)))) == 2


@pytest.fixture
def other_origin():
    """A page on another origin (another port) than the endpoint."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Page(BaseHTTPRequestHandler):
        def do_GET(self):
            body = b"<!DOCTYPE html><title>client</title><p>a SPARQL client</p>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_chromium_on_another_origin_posts_a_query(endpoint, other_origin, browser):
    page = browser.new_page()
    seen = []
    page.on("request", lambda r: seen.append((r.method, r.url)))
    try:
        page.goto(other_origin)
        # application/sparql-query is not a CORS-safelisted type: the browser sends a preflight first
        result = page.evaluate("""url => fetch(url, {method: "POST", headers: {"Content-Type": "application/sparql-query",
            "Accept": "application/sparql-results+json"}, body: "SELECT (COUNT(*) AS ?n) WHERE { ?v a <https://w3id.org/abstract-kg/ontology#Venue> }"})
            .then(r => r.json()).then(d => d.results.bindings[0].n.value)""", endpoint + "/sparql")
        assert result == "2"
        assert ("POST", endpoint + "/sparql") in seen
    finally:
        page.close()


def test_queries_in_schema_org_and_lpwc_terms_find_our_papers(endpoint):
    """The outputs carry the alignment's entailments and the store holds the ontology."""
    q = """PREFIX schema: <https://schema.org/> PREFIX lpwcp: <https://linkedpaperswithcode.com/property/>
           SELECT (COUNT(DISTINCT ?p) AS ?papers) (COUNT(DISTINCT ?t) AS ?tasks)
           WHERE { ?p a schema:ScholarlyArticle . OPTIONAL { ?p lpwcp:hasTask ?t } }"""
    status, _, body = get(f"{endpoint}/sparql?query=" + urllib.parse.quote(q))
    row = json.loads(body)["results"]["bindings"][0]
    assert status == 200 and row["papers"]["value"] == "68" and int(row["tasks"]["value"]) > 50
    ask = "ASK { kg:proposes rdfs:subPropertyOf kg:hasMethod . kg:Paper rdfs:subClassOf schema:ScholarlyArticle }"
    status, _, body = get(f"{endpoint}/sparql?query=" + urllib.parse.quote(ask))
    assert status == 200 and json.loads(body)["boolean"] is True


def test_a_resource_iri_resolves_to_its_description_in_every_rdf_format(endpoint):
    from rdflib import Graph, Literal, URIRef
    from rdflib.namespace import RDF, RDFS, SKOS

    tarot = URIRef("https://w3id.org/abstract-kg/resource/method/tarot")
    kg = "https://w3id.org/abstract-kg/ontology#"
    for accept, fmt in (("text/turtle", "turtle"), ("application/n-triples", "nt"),
                        ("application/ld+json", "json-ld"), ("application/rdf+xml", "xml")):
        status, headers, body = get(endpoint + "/resource/method/tarot", {"Accept": accept})
        assert status == 200 and headers["Content-Type"].startswith(accept) and "Accept" in headers["Vary"]
        g = Graph().parse(data=body, format=fmt)
        assert (tarot, RDF.type, URIRef(kg + "Method")) in g and (tarot, SKOS.prefLabel, Literal("TAROT")) in g
        # the paper that proposes it links in, and comes with its label
        papers = set(g.subjects(URIRef(kg + "proposes"), tarot))
        assert len(papers) == 1 and g.value(papers.pop(), RDFS.label) is not None
    status, _, body = get(endpoint + "/resource/task/data-attribution?format=nt")
    assert status == 200 and len({line.split()[0] for line in body.splitlines()
                                  if "#addressesTask>" in line}) == 3


def test_a_resource_path_that_names_nothing_is_not_found(endpoint):
    for path in ("/resource/method/no-such-method", "/resource/", "/resource/x%3E%20%3Cy",
                 "/resource/method/tarot>%20?p%20?o.%7B"):
        assert get(endpoint + path, {"Accept": "text/turtle"})[0] == 404, path
    assert get(endpoint + "/resource/method/tarot", {"Accept": "image/png"})[0] == 406


def test_the_ontology_resolves_in_every_rdf_format(endpoint):
    from rdflib import Graph, URIRef
    from rdflib.namespace import OWL, RDF

    for accept, fmt in (("text/turtle", "turtle"), ("application/n-triples", "nt"),
                        ("application/ld+json", "json-ld"), ("application/rdf+xml", "xml")):
        status, headers, body = get(endpoint + "/ontology", {"Accept": accept})
        assert status == 200 and headers["Content-Type"].startswith(accept)
        g = Graph().parse(data=body, format=fmt)
        assert (URIRef("https://w3id.org/abstract-kg/ontology#Method"), RDF.type, OWL.Class) in g
