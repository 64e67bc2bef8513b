import csv
import io
import json

import pytest

from tests.conftest import rdf_text
from kg.cli import main
from kg.gzipped import member
from kg.rdf.store import QueryError, open_store, rows, run_query

COUNT = "PREFIX kg: <https://w3id.org/abstract-kg/ontology#> SELECT (COUNT(DISTINCT ?p) AS ?n) WHERE { ?p a kg:Paper }"


def test_cli_query_csv_prints_68_last(built, capsys):
    assert main(["query", COUNT, "--store", str(built), "--format", "csv"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "n" and lines[-1] == "68"


def test_cli_query_json_is_w3c_results(built, capsys):
    assert main(["query", COUNT, "--store", str(built), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["head"]["vars"] == ["n"]
    assert data["results"]["bindings"][0]["n"]["value"] == "68"


def test_query_file_table_and_bindings(built, tmp_path, capsys):
    rq = tmp_path / "q.rq"
    rq.write_text("SELECT ?r ?u WHERE { ?r a kg:CodeRepository ; kg:url ?u }")  # kg: predeclared
    assert main(["query", str(rq), "--store", str(built), "--bind", "u=<https://github.com/vita-epfl/TAROT>"]) == 0
    out = capsys.readouterr().out
    assert "res:repository/github/vita-epfl/tarot" in out and "(1 row)" in out


def test_bindings_are_terms_not_text(built):
    store = open_store(built)
    q = ("PREFIX skos: <http://www.w3.org/2004/02/skos/core#> "
         "SELECT ?e ?name WHERE { ?e skos:prefLabel ?name }")
    hostile = 'x" } ; DROP ALL ; SELECT * WHERE { ?s ?p ?o '
    assert rows(run_query(store, q, {"name": hostile})) == []
    found = rows(run_query(store, q, {"name": "TAROT"}))
    assert [r["e"] for r in found] == ["https://w3id.org/abstract-kg/resource/method/tarot"]
    # a bound variable the query does not select is bound too, as rdflib's initBindings does
    q2 = q.replace("?e ?name WHERE", "?e WHERE").replace("?name }", "?l FILTER(LCASE(?l) = LCASE(?name)) }")
    assert [r["e"] for r in rows(run_query(store, q2, {"name": "tarot"}))] == [found[0]["e"]]
    assert rows(run_query(store, q2, {"name": hostile})) == []


def test_federated_queries_and_datasets_are_refused(built, capsys):
    store = open_store(built)
    with pytest.raises(QueryError, match="SERVICE"):
        run_query(store, "SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }")
    with pytest.raises(QueryError, match="one default graph"):
        run_query(store, "SELECT * FROM <http://example.org/g> WHERE { ?s ?p ?o }")
    assert rows(run_query(store, 'SELECT ?s WHERE { ?s ?p "FROM <x>" }')) == []
    assert main(["query", "SELECT * FROM NAMED <urn:g> WHERE { ?s ?p ?o }", "--store", str(built)]) == 2
    assert "one default graph" in capsys.readouterr().err


def test_bad_query_is_a_clear_error(built, capsys):
    with pytest.raises(QueryError):
        run_query(open_store(built), "SELEC nothing")
    assert main(["query", "SELECT WHERE {", "--store", str(built)]) == 2
    assert "SPARQL syntax error" in capsys.readouterr().err


def test_csv_output_has_header(built, capsys):
    assert main(["query", "SELECT ?p ?l WHERE { ?p a kg:Paper ; rdfs:label ?l }", "--store", str(built), "-f", "csv"]) == 0
    table = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert table[0] == ["p", "l"] and len(table) == 69


@pytest.mark.slow
def test_store_loader_builds_the_store_while_lines_arrive(built, tmp_path):
    import pyoxigraph as ox

    from kg.rdf.store import StoreLoader

    lines = rdf_text(built / "graph.nt.gz").encode("utf-8").splitlines(keepends=True)
    nt = tmp_path / "g.nt.gz"
    with open(nt, "wb") as fh:
        loader = StoreLoader(tmp_path / "s", nt, chunk_bytes=1024)  # many small chunks, some lines longer
        for i in range(0, len(lines), 7):
            fh.write(member(b"".join(lines[i:i + 7])))
            fh.flush()
            loader.grow(fh.tell())
    loader.close(nt.stat().st_size)
    store = ox.Store.read_only(str(tmp_path / "s"))
    assert len(store) == len(lines) and max(map(len, lines)) > 1024
    bad_nt = tmp_path / "bad.nt.gz"
    bad_nt.write_bytes(member(b'<http://a> <http://b> "unterminated .\n'))
    bad = StoreLoader(tmp_path / "bad", bad_nt, chunk_bytes=10)
    with pytest.raises(SyntaxError):
        bad.close(bad_nt.stat().st_size)


def test_concatenated_gzip_members_read_back_in_any_pieces():
    import random

    from kg.gzipped import Gunzip, gunzip

    rng = random.Random(7)
    texts = [bytes(rng.choice(b"abc \n") for _ in range(rng.randrange(0, 40000))) for _ in range(60)]
    data = b"".join(member(t) for t in texts)
    assert gunzip(data) == b"".join(texts)  # given at once, read a piece at a time
    g, out, at = Gunzip(), [], 0
    while at < len(data):
        step = rng.randrange(1, 30000)
        out.append(g.feed(data[at:at + step]))
        at += step
    assert b"".join(out) == b"".join(texts) and g.whole
