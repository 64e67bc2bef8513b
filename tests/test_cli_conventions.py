"""One convention for every subcommand, a readable log, progress on a terminal, and
inputs that are checked (issue: a command line a newcomer guesses right)."""
import argparse
import fcntl
import json
import os
import pty
import select
import struct
import subprocess
import sys
import termios

import pytest

from kg.cli import main, make_parser

#: Commands that read a build folder, and those that write a file or folder.
READS = {"query", "validate", "viz", "export", "serve", "stats"}
WRITES = {"build", "extract", "viz", "export"}


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    ap = make_parser()
    action = next(a for a in ap._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_option_of_every_command_has_help_and_the_same_spelling():
    commands = _subcommands()
    assert set(commands) >= READS | WRITES
    for name, parser in commands.items():
        shown = [a for a in parser._actions if a.help != argparse.SUPPRESS and not isinstance(a, argparse._HelpAction)]
        assert shown, name
        for action in shown:
            assert action.help and action.help.strip(), f"kg {name}: {action.option_strings or action.dest} has no help"
        options = {s: a for a in shown for s in a.option_strings}
        if name in READS:
            assert options["--store"] is options["-s"] and options["--store"].default == "outputs", name
        if name in WRITES:
            assert options["--out"] is options["-o"], name
        assert "examples:" in parser.format_help(), name


def test_help_shows_defaults_and_examples(capsys):
    with pytest.raises(SystemExit):
        main(["build", "--help"])
    text = capsys.readouterr().out
    assert "(default: outputs)" in text and "examples:" in text and "kg build papers.jsonl" in text


def test_old_spellings_still_work_with_a_warning(tmp_path, capsys):
    out = tmp_path / "x.jsonl"
    assert main(["extract", "--output", str(out), "-q"]) == 0
    assert out.stat().st_size > 0 and "--output FILE` is deprecated" in capsys.readouterr().err


def _pty_run(args: list[str], cwd) -> str:
    """The output of ``kg ARGS`` run on a pseudo-terminal (stdout and stderr)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))  # a terminal's size
    proc = subprocess.Popen([sys.executable, "-m", "kg.cli", *args], stdin=follower, stdout=follower,
                            stderr=follower, cwd=cwd, close_fds=True)
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            break
        try:
            data = os.read(leader, 65536)
        except OSError:  # the child closed its end
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=120)
    os.close(leader)
    assert proc.returncode == 0, b"".join(chunks).decode(errors="replace")
    return b"".join(chunks).decode("utf-8", errors="replace")


@pytest.mark.slow
def test_a_build_shows_progress_on_a_terminal_and_not_in_a_pipe(tmp_path):
    on_tty = _pty_run(["build", "--no-cache", "-o", str(tmp_path / "a")], tmp_path)
    assert "extracting" in on_tty and "texts/s" in on_tty and "writing" in on_tty
    piped = subprocess.run([sys.executable, "-m", "kg.cli", "build", "--no-cache", "-o", str(tmp_path / "b")],
                           capture_output=True, text=True, cwd=tmp_path)
    assert piped.returncode == 0 and "texts/s" not in piped.stderr and "\r" not in piped.stderr


@pytest.mark.slow
def test_the_log_speaks_a_users_words_and_details_come_with_verbose(tmp_path):
    cache = str(tmp_path / "cache")
    first = subprocess.run([sys.executable, "-m", "kg.cli", "build", "-o", str(tmp_path / "o"), "--cache", cache],
                           capture_output=True, text=True)
    again = subprocess.run([sys.executable, "-m", "kg.cli", "build", "-o", str(tmp_path / "o"), "--cache", cache],
                           capture_output=True, text=True)
    for r in (first, again):
        assert r.returncode == 0
        for word in ("kept", "blocks", "early", "staged", "digest"):
            assert word not in r.stderr, (word, r.stderr)
    assert "read 76 records from 4 files" in first.stderr and "wrote " in first.stderr
    assert "68 texts taken from the cache" in again.stderr and "reused the outputs of 68 of 68 papers" in again.stderr
    verbose = subprocess.run([sys.executable, "-m", "kg.cli", "build", "-o", str(tmp_path / "o"), "--cache", cache,
                              "-v"], capture_output=True, text=True)
    assert "resolve: " in verbose.stderr and "write: " in verbose.stderr


def test_a_build_removes_the_resolution_state_earlier_versions_kept(tmp_path, monkeypatch, capsys):
    """Earlier versions kept a signed resolution state beside the extraction cache, and its
    key in the user's cache folder: the first build removes both and says so, once."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    cache, home = tmp_path / "cache", tmp_path / "home-cache" / "abstract-kg"
    (cache / "kept").mkdir(parents=True)
    (cache / "kept" / "0123.pickle").write_bytes(b"state")
    home.mkdir(parents=True)
    (home / "kept.key").write_bytes(b"k" * 32)
    for said in (True, False):
        assert main(["build", "-o", str(tmp_path / "o"), "--cache", str(cache)]) == 0
        assert ("removed the resolution state" in capsys.readouterr().err) is said
        assert not (cache / "kept").exists() and not (home / "kept.key").exists()


@pytest.mark.slow
def test_stats_reads_for_people_and_for_scripts(built, capsys):
    assert main(["stats", "-s", str(built)]) == 0
    text = capsys.readouterr().out
    assert "68 papers from 76 records" in text and "top tasks (papers):" in text and "top methods" in text
    assert main(["stats", "-s", str(built), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["nodes"]["Paper"] == 68 and len(stats["top"]["Method"]) == 10


@pytest.mark.slow
def test_named_top_queries_with_a_row_limit(built, capsys):
    from kg import KnowledgeGraph

    kg = KnowledgeGraph.load(built)
    assert main(["query", "-s", str(built), "-n", "top-methods", "--limit", "10", "-f", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]["bindings"]
    assert len(rows) == 10
    expected = sorted(((r.node.name, r.score) for r in kg.top("method", n=200)), key=lambda x: (-x[1], x[0]))[:10]
    assert [(r["method"]["value"], int(r["papers"]["value"])) for r in rows] == expected
    task = kg.top("task", n=1)[0].node.name
    assert main(["query", "-s", str(built), "-n", "top-methods", "--bind", f"task={task}", "-f", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "task,method,papers" and all(line.startswith(task + ",") for line in lines[1:]) and lines[1:]
    assert main(["query", "-s", str(built), "-n", "top-tasks", "--bind", "venue=ICML 2025", "--limit", "3"]) == 0
    assert "(3 rows)" in capsys.readouterr().out


def test_a_folder_is_read_recursively(tmp_path, capsys):
    folder = tmp_path / "papers"
    (folder / "more").mkdir(parents=True)
    (folder / "a.jsonl").write_text('{"id": "a", "abstract": "We propose ZetaNet for image classification."}\n')
    (folder / "more" / "b.jsonl").write_text('{"id": "b", "abstract": "We use ZetaNet for image segmentation."}\n')
    (folder / "notes.log").write_text("not an input")
    out = tmp_path / "out.jsonl"
    assert main(["extract", str(folder), "-o", str(out), "-q"]) == 0
    assert [json.loads(line)["doc"] for line in out.read_text().splitlines()] == ["a", "b"]
    (tmp_path / "empty").mkdir()
    assert main(["extract", str(tmp_path / "empty"), "-q"]) == 2
    assert "a folder with no abstract files" in capsys.readouterr().err


def test_a_field_of_the_wrong_type_names_file_line_and_field(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "abstract": "We propose ZetaNet."}\n{"id": "b", "abstract": 123}\n')
    assert main(["extract", str(bad), "-q"]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl:2:" in err and "'abstract' must be text, not a number (123)" in err
    out = tmp_path / "o.jsonl"
    assert main(["extract", str(bad), "--skip-invalid", "-o", str(out), "-q"]) == 0
    assert len(out.read_text().splitlines()) == 1


def _peak_mb(path) -> float:
    """Peak memory (MB) of a process that extracts the records of ``path``."""
    code = ("import resource, sys; from kg.cli import main; main(['extract', sys.argv[1], '-o', sys.argv[2], '-q']); "
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    r = subprocess.run([sys.executable, "-c", code, str(path), str(path) + ".out"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return int(r.stdout.split()[-1]) / 1024


@pytest.mark.slow
def test_memory_grows_linearly_with_a_record_without_full_stops(tmp_path):
    """A record of common words with no full stop is one long sentence: its mentions carry
    a bounded context, so four times the text takes about four times the memory."""
    words = ("we study image classification with a convolutional network on imagenet and compare "
             "the transformer model for language modeling using graph neural networks ").split()

    def record(n_chars: int):
        text, i = [], 0
        while sum(map(len, text)) + len(text) < n_chars:
            text.append(words[i % len(words)])
            i += 1
        path = tmp_path / f"r{n_chars}.jsonl"
        path.write_text(json.dumps({"id": "r", "abstract": " ".join(text)}) + "\n")
        return path

    base = _peak_mb(record(200))
    small, large = _peak_mb(record(20_000)) - base, _peak_mb(record(80_000)) - base
    assert large <= 5 * max(small, 5.0), (base, small, large)
    written = [(tmp_path / f"r{n}.jsonl.out").stat().st_size for n in (20_000, 80_000)]
    assert written[1] <= 5 * written[0], written  # a mention's context does not grow with the sentence
