import re
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


def readme_query_examples() -> list[tuple[str, str]]:
    """(query, printed output) of every `$ kg query '...'` example in the README."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```\n(\$ kg query .+?)```", text, re.S):
        first, _, printed = block.partition("\n")
        query = re.match(r"\$ kg query '(.+)'$", first).group(1)
        out.append((query, printed))
    return out


def test_readme_query_outputs_are_real(built, capsys):
    from kg.cli import main

    examples = readme_query_examples()
    assert len(examples) >= 3
    for query, printed in examples:
        assert main(["query", query, "--store", str(built)]) == 0
        assert capsys.readouterr().out == printed, query
