"""Robustness: killed builds lose nothing; any text makes valid, stable RDF."""
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib import Graph

from kg.files import OutputsBusy, output_lock
from kg.resolve.graph import build_graph
from kg.ingest import read_records, sample_paths
from kg.model import Record
from kg.extract import extract_records, tokenizer_safe
from kg.files import recover
from kg.rdf.serialize import to_jsonld, to_ntriples, to_turtle
from kg.resolve.entities import resolve
from kg.text import iri_slug, norm_key


def snapshot(folder: Path) -> dict:
    """Each output file's SHA-256 (hashes, not bytes: a failing comparison of
    megabytes of HTML made pytest spend minutes on the diff)."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*"))
            if p.is_file() and "store" not in p.parts}


def big_corpus(path: Path, n: int) -> Path:
    base = read_records(sample_paths())
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"r{i}", "abstract": f"{base[i % len(base)].abstract} (Variant {i}.)"}) + "\n")
    return path


def kill_build(args, when, sig=signal.SIGKILL, timeout=120):
    """Start `kg build`, wait until when() is true, send the signal."""
    # SIGINT back to its default in the child: a shell starting this run in the background
    # (`.ci/run &`) ignores SIGINT, the child inherits that, and Python then installs no
    # KeyboardInterrupt handler, so the build would run to its end.
    proc = subprocess.Popen([sys.executable, "-m", "kg.cli", "build", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    t = time.monotonic()
    while not when() and proc.poll() is None and time.monotonic() - t < timeout:
        time.sleep(0.01)
    assert proc.poll() is None, "the build ended before it could be killed"
    proc.send_signal(sig)
    return proc.wait(timeout=60)


@pytest.fixture()
def previous(tmp_path):
    out = tmp_path / "outputs"
    small = big_corpus(tmp_path / "small.jsonl", 30)
    subprocess.run([sys.executable, "-m", "kg.cli", "build", str(small), "--out", str(out), "-q", "--no-cache"],
                   check=True)
    return out, snapshot(out)


@pytest.mark.slow
def test_kill_9_during_a_30000_abstract_build_leaves_previous_outputs(tmp_path, previous):
    out, before = previous
    corpus = big_corpus(tmp_path / "big.jsonl", 30000)
    started = time.monotonic()
    kill_build([str(corpus), "--out", str(out), "--no-cache"], lambda: time.monotonic() - started > 4)
    assert snapshot(out) == before
    assert ox.Store.read_only(str(out / "store")).query("ASK { ?s ?p ?o }")


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_kill_while_writing_outputs_leaves_previous_outputs(tmp_path, previous, sig):
    out, before = previous
    corpus = big_corpus(tmp_path / "mid.jsonl", 600)
    writing = lambda: any(p.name.startswith(".outputs.tmp-") for p in tmp_path.iterdir())  # noqa: E731
    kill_build([str(corpus), "--out", str(out), "--no-cache"], writing, sig=sig)
    recover(out)  # what the next build does first
    assert snapshot(out) == before
    # the lock file a killed build leaves is not held: the kernel let go of it with the process
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".outputs.") and p.name != ".outputs.lock"]
    with output_lock(out):
        pass
    assert ox.Store.read_only(str(out / "store")).query("ASK { ?s ?p ?o }")


@pytest.mark.slow
def test_a_second_build_into_a_folder_being_built_fails_at_once_and_spoils_nothing(tmp_path, previous):
    # Before the lock, the second build's recovery removed the first one's staging folder
    # (it took it for a killed build's leftovers), and the two raced to the swap.
    out, _ = previous
    corpus = big_corpus(tmp_path / "mid.jsonl", 2000)  # long enough for the second build to start and end
    first = subprocess.Popen([sys.executable, "-m", "kg.cli", "build", str(corpus), "--out", str(out), "-q",
                              "--no-cache"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    t = time.monotonic()
    while not (tmp_path / ".outputs.lock").exists() and first.poll() is None and time.monotonic() - t < 60:
        time.sleep(0.01)
    assert first.poll() is None, "the first build ended before the second started"
    second = subprocess.run([sys.executable, "-m", "kg.cli", "build", str(tmp_path / "small.jsonl"), "--out",
                             str(out), "-q", "--no-cache"], capture_output=True, text=True, timeout=120)
    assert first.poll() is None, "the first build ended while the second ran: nothing was tested"
    assert second.returncode == 3, second.stderr
    assert f"another kg build (pid {first.pid}) is writing this folder" in second.stderr
    assert first.wait(timeout=300) == 0, first.stderr.read()
    assert json.loads((out / "stats.json").read_text())["nodes"]["Paper"] == 2000  # the first build's outputs
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".outputs.")]


_HOLDER = """
import os, sys, time
from kg.files import output_lock
from kg.extract import _pool
from kg.pipeline.forked import Forked

with output_lock(sys.argv[1]):
    pool = _pool(1)
    worker = pool.apply(os.getpid)
    writer = Forked(lambda send: time.sleep(600))
    print(worker, writer.pid, flush=True)
    time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def _open_files(pid: int) -> set[str]:
    out = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            out.add(os.readlink(fd))
        except OSError:  # closed meanwhile
            pass
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="children die with the build through prctl")
def test_a_killed_builds_children_die_with_it_and_do_not_hold_its_lock(tmp_path):
    # In CI once, a build killed with kill -9 while writing left its forked writer
    # running (and holding the output lock) until the writer had drawn its views.
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(tmp_path / "out")], stdout=subprocess.PIPE,
                              text=True)
    children = [int(pid) for pid in holder.stdout.readline().split()]
    assert len(children) == 2 and all(map(_alive, children))
    lock = str(tmp_path / ".out.lock")
    assert lock in _open_files(holder.pid)
    assert not any(lock in _open_files(pid) for pid in children)  # the children closed it
    holder.kill()
    holder.wait(timeout=60)
    with output_lock(tmp_path / "out"):  # free as soon as the build process is gone
        pass
    for _ in range(6000):  # they die by signal, which a loaded machine delivers late; else they sleep 10 minutes
        if not any(map(_alive, children)):
            break
        time.sleep(0.01)
    assert not any(map(_alive, children))


def test_one_process_may_hold_the_lock_twice(tmp_path):
    with output_lock(tmp_path / "out") as path:
        with output_lock(tmp_path / "out"):
            assert path.exists()
        assert path.exists()  # the outer hold still has it
    assert not path.exists()


def test_recover_puts_back_outputs_moved_aside(tmp_path):
    out = tmp_path / "outputs"
    aside = tmp_path / ".outputs.old-x" / "prev"
    aside.mkdir(parents=True)
    (aside / "graph.ttl").write_text("x")
    recover(out)
    assert (out / "graph.ttl").read_text() == "x" and not (tmp_path / ".outputs.old-x").exists()


# ------------------------------------------------------------------ any text gives valid RDF

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=120)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(abstract=TEXT, title=st.one_of(st.none(), TEXT), name=TEXT)
def test_any_text_gives_valid_rdf_that_round_trips(abstract, title, name):
    text = f"We propose {name} (ABC). {abstract} See https://github.com/a-b/c.d"
    recs = [Record(doc=f"d\x00{name}", abstract=text, source="h", index=0, title=title, venue=f"{name} 2025")]
    G = build_graph(resolve(recs, list(extract_records(recs))))
    nt, ttl, jl = to_ntriples(G), to_turtle(G), to_jsonld(G)
    g_nt = Graph().parse(data=nt, format="nt")
    assert set(Graph().parse(data=ttl, format="turtle")) == set(g_nt)
    assert set(Graph().parse(data=jl, format="json-ld")) == set(g_nt)
    store = ox.Store()
    store.load(nt.encode("utf-8"), format=ox.RdfFormat.N_TRIPLES)
    store.load(ttl.encode("utf-8"), format=ox.RdfFormat.TURTLE, to_graph=ox.NamedNode("urn:ttl"))
    assert len(store) == 2 * len(g_nt)
    assert to_ntriples(G) == nt  # stable


@given(TEXT)
def test_any_name_gives_a_valid_stable_iri_segment(text):
    slug = iri_slug(norm_key(text))
    assert slug == iri_slug(norm_key(text)) and slug
    assert all(c.isascii() and (c.isalnum() or c in "-%") for c in slug)


@pytest.mark.parametrize("name,text", [
    ("2 MB abstract", "We propose FooNet for image classification on CIFAR-10. " * 36000),
    ("200,000-character token", "We propose " + "A" * 200_000 + " for tasks."),
    ("5,000 nested parentheses", "We propose X " + "(" * 5000 + "Y" + ")" * 5000 + " here."),
    ("LaTeX", r"We propose \texttt{FooNet}$^{2}$ with $\mathbf{x}\in\mathbb{R}^d$, code at \url{https://github.com/a/b}. " * 200),
])
@pytest.mark.slow
def test_pathological_text_is_extracted_with_bounded_work_a_token(name, text):
    # spaCy's affix splitting is quadratic in the length of one token: no run the tokenizer
    # sees is longer than a name can be
    assert max(map(len, tokenizer_safe(text).split())) <= 200, name
    (ex,) = list(extract_records([Record(doc="p", abstract=text, source="t", index=0)]))
    assert all(text[m.start:m.end] == m.text or m.text.replace(" ", "") for m in ex.mentions)


def test_odd_characters_survive_into_the_html_data(tmp_path):
    import re as _re

    from kg import KnowledgeGraph

    abstract = "We propose Zed\u200bNet\u202e for image classification.\x00\x07 😀 中文 </script>"
    kg = KnowledgeGraph.from_records([{"id": "x", "abstract": abstract}])
    html = kg.to_html(tmp_path / "v.html", view="paper").read_text(encoding="utf-8")
    cards = json.loads(_re.search(r"var CARDS = (\{.*?\});\n", html).group(1))
    (paper,) = [c for c in cards.values() if c["type"] == "Paper"]
    assert paper["abstract"] == abstract
    assert "</script>" not in html.split("var CARDS = ")[1].split(";\n")[0]
    # the map carries the names as they are written
    html = kg.to_html(tmp_path / "map.html").read_text(encoding="utf-8")
    data = json.loads(_re.search(r"var MAP = (\{.*?\});\n", html).group(1))
    assert {n["label"] for n in data["nodes"]} >= {m.name for m in kg.methods()}
    assert any("\u200b" in n["label"] for n in data["nodes"])


def _sigint_blocked(_) -> bool:  # in an extraction worker
    return signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])


def test_extraction_workers_are_forked_with_ctrl_c_held_back():
    """A Ctrl-C during the pool's forks is raised in the build process after them (not
    lost in an at-fork handler); the workers leave it to the build process."""
    from kg.extract import _pool

    with _pool(2) as pool:
        assert pool.map(_sigint_blocked, range(4)) == [True] * 4
    assert not _sigint_blocked(None)  # this process has it back
