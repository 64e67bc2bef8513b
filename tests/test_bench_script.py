"""scripts/bench.py replaces only its own results in the benchmarks file."""
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _bench():
    spec = importlib.util.spec_from_file_location("bench_script", ROOT / "scripts" / "bench.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_run_replaces_its_results_and_keeps_the_notes():
    bench = _bench()
    text = f"# title\n\n{bench.BEGIN}\n| N | old table |\n{bench.END}\n\n## notes\nkept\n"
    start, end = text.index(bench.BEGIN), text.index(bench.END)
    merged = bench.merge_results(text, "| N | new table |\n")
    assert merged.count("| N | new table |") == 1 and "old table" not in merged and merged.count(bench.BEGIN) == 1
    assert merged.startswith(text[:start]) and merged.endswith(text[end + len(bench.END) + 1:])
    assert bench.merge_results(merged, text[start + len(bench.BEGIN) + 1:end]) == text  # and back


def test_a_file_without_results_part_keeps_all_of_it():
    bench = _bench()
    merged = bench.merge_results("# notes\n", "T\n")
    assert merged == f"{bench.BEGIN}\nT\n{bench.END}\n\n# notes\n"
