import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```bash\n(.+?)\n```", text)[:2]


def test_readme_opens_with_build_and_test_commands():
    build, test = readme_commands()
    assert build.endswith("kg build")
    assert "pytest" in test and ".[test]" in test


def test_ci_runs_exactly_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert readme_commands()[1] in ci


def readme_query_examples() -> list[tuple[list[str], str]]:
    """(argv, printed output) of every `$ kg query ...` example in the README and in
    docs/queries.md."""
    text = "".join((ROOT / f).read_text(encoding="utf-8") for f in ("README.md", "docs/queries.md"))
    out = []
    for block in re.findall(r"```\n(\$ kg query .+?)```", text, re.S):
        first, _, printed = block.partition("\n")
        out.append((shlex.split(first[2:])[1:], printed))
    return out


def test_readme_query_outputs_are_real(built, capsys):
    from kg.cli import main

    examples = readme_query_examples()
    assert len(examples) >= 3
    for argv, printed in examples:
        assert main([*argv, "--store", str(built)]) == 0
        assert capsys.readouterr().out == printed, argv


def test_readme_shows_every_named_query():
    from kg.rdf.named import list_named

    shown = {argv[argv.index("--name") + 1] for argv, _ in readme_query_examples() if "--name" in argv}
    assert shown == {q.name for q in list_named()}
