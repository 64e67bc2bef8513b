import json
import subprocess
import sys

import pytest

from kg.cli import main


def run(*args, **kw):
    return subprocess.run([sys.executable, "-m", "kg.cli", *args], capture_output=True, text=True, **kw)


def test_missing_file_is_a_one_line_error_without_traceback(tmp_path):
    r = run("build", str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "o"))
    assert r.returncode == 2
    assert "nope.jsonl: no such file" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "o").exists()


def test_bad_record_names_file_and_line_and_keeps_previous_outputs(tmp_path, built):
    good = tmp_path / "good.jsonl"
    good.write_text('{"id": "a", "abstract": "We propose ZetaNet for image classification."}\n')
    out = tmp_path / "out"
    assert main(["build", str(good), "--out", str(out), "-q"]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "abstract": "fine"}\n{"id": "b", "abstract": broken}\n')
    r = run("build", str(bad), "--out", str(out))
    assert r.returncode == 2 and "bad.jsonl:2: bad JSON" in r.stderr and "Traceback" not in r.stderr
    after = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert after == before
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name or ".old-" in p.name]


def test_extract_writes_the_contract(tmp_path):
    out = tmp_path / "pred.jsonl"
    assert main(["extract", "-o", str(out), "-q"]) == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(lines) == 76
    assert lines[1]["doc"] == "000_f72e9bc991a965d2.txt#1"
    assert lines[1]["github"] == ["https://github.com/AI-sandbox/FSL-Net"]
    assert any(m["name"] == "FSL-Net" for m in lines[1]["methods_proposed"])


@pytest.mark.slow
def test_stats_and_validate_commands(built, capsys):
    assert main(["stats", "-s", str(built), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["nodes"]["Paper"] == 68
    assert main(["validate", "-s", str(built)]) == 0
    assert main(["validate", "--store", str(built / "missing")]) == 2
    assert main(["validate", str(built)]) == 0  # the old spelling, with a warning
    assert "`kg validate FOLDER` is deprecated" in capsys.readouterr().err


@pytest.mark.slow
def test_build_can_skip_turtle_and_jsonld(tmp_path, built, capsys):
    out = tmp_path / "out"
    assert main(["build", "--no-cache", "-q", "--out", str(out)]) == 0  # the default: N-Triples alone
    assert not (out / "graph.ttl.gz").exists() and not (out / "graph.jsonld.gz").exists()
    assert (out / "graph.nt.gz").read_bytes() == (built / "graph.nt.gz").read_bytes()
    index = (out / "index.html").read_text(encoding="utf-8")
    assert 'href="graph.nt.gz"' in index and "graph.ttl" not in index
    assert main(["validate", "-s", str(out)]) == 0
    capsys.readouterr()
    assert main(["build", "--rdf", "nt,rdfxml", "--no-cache", "-q", "--out", str(tmp_path / "o2")]) == 2
    assert "unknown RDF format(s) rdfxml" in capsys.readouterr().err and not (tmp_path / "o2").exists()


def test_outputs_that_cannot_be_written_are_a_clear_error(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    assert main(["build", "--no-cache", "-q", "--out", str(blocker / "outputs")]) == 3
    err = capsys.readouterr().err
    assert err.startswith("kg build: error: ") and str(blocker) in err and "Traceback" not in err
    assert blocker.read_text() == "not a folder"


def test_build_freezes_what_its_stages_made_and_undoes_it_after(tmp_path):
    import gc

    from kg import _gc

    with _gc.gc_paused():
        kept = [[i] for i in range(1000)]
    assert gc.get_freeze_count() == 0  # the library alone never freezes
    seen = []
    _gc.freeze_after_pauses()
    try:
        with _gc.gc_paused():
            kept = [[i] for i in range(1000)]
        seen.append(gc.get_freeze_count())
    finally:
        _gc.freeze_after_pauses(False)
        gc.unfreeze()
    assert seen[0] >= len(kept)
    good = tmp_path / "good.jsonl"
    good.write_text('{"id": "a", "abstract": "We propose ZetaNet for image classification."}\n')
    assert main(["build", str(good), "--out", str(tmp_path / "out"), "--no-cache", "-q"]) == 0
    assert gc.get_freeze_count() == 0 and not _gc._FREEZE  # a caller that goes on gets its collector back


@pytest.mark.slow
def test_the_kg_program_leaves_a_build_to_the_os_and_a_caller_gets_it_freed(tmp_path, monkeypatch):
    """``kg build`` as a program (kg.cli.run, which ends with os._exit) keeps the graph
    from being freed object by object as the build returns; called from Python, nothing
    is kept."""
    import kg.cli

    good = tmp_path / "good.jsonl"
    good.write_text('{"id": "a", "abstract": "We propose ZetaNet for image classification."}\n')
    monkeypatch.setattr(kg.cli, "_LEFT_TO_THE_OS", [])
    assert main(["build", str(good), "--out", str(tmp_path / "a"), "--no-cache", "-q"]) == 0
    assert kg.cli._LEFT_TO_THE_OS == []
    monkeypatch.setattr(kg.cli, "_ENDING", True)
    assert main(["build", str(good), "--out", str(tmp_path / "b"), "--no-cache", "-q"]) == 0
    (left,) = kg.cli._LEFT_TO_THE_OS
    assert [r.doc for r in left.records] == ["a"] and "paper/" in next(iter(left.graph.nodes))
    # the program itself: a build that exits 0 and writes its outputs
    r = subprocess.run([sys.executable, "-c", "import sys; sys.argv = ['kg'] + sys.argv[1:]; "
                        "from kg.cli import run; run()", "build", str(good), "--out", str(tmp_path / "c"),
                        "--no-cache", "-q"], capture_output=True, text=True)
    assert r.returncode == 0 and (tmp_path / "c" / "graph.nt.gz").stat().st_size > 0, r.stderr
