"""The package's shape: data flows one way, ingest -> extract -> resolve -> rdf / io ->
web -> pipeline -> api / cli. Every import is read from the source (at module level and
inside functions alike), and what a module reaches through the modules it imports counts
as well."""
from __future__ import annotations

import ast
from pathlib import Path

import kg

ROOT = Path(kg.__file__).parent
LOWER = ("kg.ingest", "kg.extract", "kg.resolve", "kg.rdf", "kg.io")
LATER = ("kg.pipeline", "kg.web", "kg.api", "kg.cli")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The package's modules that ``path`` imports anywhere in its code."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        out.update(n for n in names if n in modules and n != "kg")
    return out


def package_graph() -> dict[str, set[str]]:
    paths = {module_name(p): p for p in ROOT.rglob("*.py")}
    return {name: imports_of(path, set(paths)) for name, path in paths.items()}


def reached(graph: dict[str, set[str]], start: str) -> dict[str, str]:
    """Every module ``start`` reaches through imports -> the module that imports it."""
    seen, todo = {}, [start]
    while todo:
        for dep in sorted(graph[todo.pop()]):
            if dep not in seen and dep != start:
                seen[dep] = todo and todo[-1] or start
                todo.append(dep)
    return seen


def in_package(module: str, packages) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def test_the_graph_reads_imports_inside_functions(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("import kg.text\n\ndef f():\n    from kg.pipeline import stages\n", encoding="utf-8")
    assert imports_of(src, {"kg.text", "kg.pipeline", "kg.pipeline.stages"}) == {
        "kg.text", "kg.pipeline", "kg.pipeline.stages"}


def test_no_lower_stage_reaches_a_later_one():
    graph = package_graph()
    assert len(graph) > 50 and any(graph.values())
    bad = []
    for module in sorted(graph):
        if in_package(module, LOWER):
            bad += [f"{module} -> {dep}" for dep in reached(graph, module) if in_package(dep, LATER)]
    assert not bad, bad


def test_views_and_pages_do_not_reach_the_pipeline():
    graph = package_graph()
    bad = [f"{m} -> {dep}" for m in sorted(graph) if in_package(m, ("kg.web",))
           for dep in reached(graph, m) if in_package(dep, ("kg.pipeline", "kg.api", "kg.cli"))]
    assert not bad, bad
