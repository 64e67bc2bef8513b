"""The ``kg`` command line: a thin layer over the library.

Exit codes: 0 success, 1 the graph does not conform (``kg validate``),
2 bad usage or bad input (a message names the file and line), 3 a file could
not be read or written (disk full, permissions), 130 interrupted.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_IO, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def _log(args, msg: str) -> None:
    if not getattr(args, "quiet", False):
        print(msg, file=sys.stderr, flush=True)


def _progress(args, stage: str):
    """A progress callback that prints to stderr at most every 2 s (and at the end)."""
    if getattr(args, "quiet", False):
        return None
    state = {"t": 0.0}

    def report(done: int, total: int) -> None:
        now = time.perf_counter()
        if done < total and now - state["t"] < 2.0:
            return
        state["t"] = now
        if total >= 1000 or done < total:
            print(f"  {stage}: {done:,}/{total:,} texts", file=sys.stderr, flush=True)

    return report


def _warn(message: str) -> None:
    print(f"kg: warning: {message}", file=sys.stderr, flush=True)


def _inputs(paths: list[str]):
    from kg.ingest import sample_paths

    return [Path(p) for p in paths] if paths else sample_paths()


#: Set by :func:`run` for ``kg build``: the process ends with ``os._exit`` once the command
#: returns, so a build leaves its records, extractions and graph in :data:`_LEFT_TO_THE_OS`
#: instead of freeing them as :func:`cmd_build` returns (millions of objects: 4 s at 100k
#: abstracts, for memory the operating system takes back in one go).
_ENDING = False
_LEFT_TO_THE_OS: list = []


def cmd_build(args) -> int:
    import gc

    from kg._gc import freeze_after_pauses
    from kg.build.pipeline import BuildOptions, build

    options = BuildOptions(workers=args.workers, cache=args.cache, use_cache=not args.no_cache, dask=args.dask,
                           skip_invalid=args.skip_invalid, base=args.base, formats=tuple(args.rdf.split(",")),
                           store_compaction=args.store_compaction)
    # The records, extractions and graph live until the build ends: once made, the collector
    # need not walk them again (see kg._gc). Undone for callers that go on in this process.
    freeze_after_pauses()
    try:
        built = build(args.inputs, args.out, options, log=lambda line: _log(args, line), warn=_warn,
                      progress=_progress(args, "extract"))
    finally:
        freeze_after_pauses(False)
        gc.unfreeze()
    counts = ", ".join(f"{n} {t}" for t, n in built.stats["nodes"].items())
    print(f"built {args.out}: {counts}; total {built.seconds:.2f}s")
    if _ENDING:  # the process ends next: freeing the graph object by object took 4 s at 100k
        _LEFT_TO_THE_OS.append(built)
    return EXIT_OK


def cmd_extract(args) -> int:
    from kg.build.jsonl import extractions_jsonl
    from kg.build.staging import atomic_write
    from kg.extract import extract_records
    from kg.ingest import read_records

    records = read_records(_inputs(args.inputs), skip_invalid=args.skip_invalid, report=_warn)
    text = extractions_jsonl(extract_records(records))
    if args.output in (None, "-"):
        sys.stdout.write(text)
    else:
        atomic_write(args.output, text)
        _log(args, f"wrote {len(records)} extractions to {args.output}")
    return EXIT_OK


def _parse_binding(text: str):
    from rdflib import Literal, URIRef

    if "=" not in text:
        raise ValueError(f"--bind {text!r}: expected NAME=VALUE")
    name, value = text.split("=", 1)
    if value.startswith("<") and value.endswith(">"):
        return name.strip(), URIRef(value[1:-1])
    if value.lstrip("-").isdigit():
        return name.strip(), Literal(int(value))
    return name.strip(), Literal(value)


def cmd_query(args) -> int:
    from kg.rdf.namespace import QUERY_PREFIXES
    from kg.rdf.named import get_named, list_named
    from kg.rdf.store import open_store, run_query, serialize_results

    if args.list:
        for q in list_named():
            params = " ".join(f"--bind {p}=…" for p in q.params)
            print(f"{q.name:<28} {q.title}{'  ' + params if params else ''}")
            print(f"{'':<28} {q.description}")
        return EXIT_OK
    bindings = dict(_parse_binding(b) for b in args.bind or [])
    if args.name:
        named = get_named(args.name)
        unknown = sorted(set(bindings) - set(named.params))
        if unknown:
            raise ValueError(f"query {args.name!r} has no parameter {', '.join(unknown)} "
                             f"(parameters: {', '.join(named.params) or 'none'})")
        text = named.text
    elif args.query:
        text = args.query
        if text.endswith(".rq") or (len(text) < 4096 and "\n" not in text and Path(text).is_file()):
            try:
                text = Path(text).read_text(encoding="utf-8")
            except OSError as exc:
                raise FileNotFoundError(f"{args.query}: cannot read query file ({exc.strerror})") from None
    else:
        raise ValueError("give a SPARQL query, a .rq file, --name NAME or --list")
    store = open_store(args.store)
    results = run_query(store, text, bindings, prefixes=QUERY_PREFIXES)
    sys.stdout.write(serialize_results(results, args.format, QUERY_PREFIXES))
    return EXIT_OK


def cmd_validate(args) -> int:
    from kg.rdf.validate import validate_path

    report = validate_path(args.target)
    if report.conforms:
        print(f"{args.target}: conforms to the abstract-kg shapes")
        return EXIT_OK
    print(report.text)
    print(f"{args.target}: {report.violations} violation(s)", file=sys.stderr)
    return EXIT_INVALID


def cmd_viz(args) -> int:
    from kg.build.outputs import write_html
    from kg.io.graphjson import graph_from_json
    from kg.web.viz import page_html

    path = Path(args.store) / "graph.json"
    if not path.is_file():
        raise FileNotFoundError(f"{args.store}: no graph.json here (run `kg build` first)")
    G = graph_from_json(path.read_text(encoding="utf-8"))
    focus = None
    if args.focus:
        from kg.api import resolve_name

        focus = resolve_name(G, args.focus)
    out = args.out or (f"focus-{focus.replace('/', '-')}.html" if focus else f"{args.view}.html")
    write_html(page_html(G, view=args.view, focus=focus, depth=args.depth)[0], out)
    print(f"wrote {out}")
    return EXIT_OK


def cmd_export(args) -> int:
    from kg.io.exports import export
    from kg.io.graphjson import graph_from_json

    path = Path(args.store) / "graph.json"
    if not path.is_file():
        raise FileNotFoundError(f"{args.store}: no graph.json here (run `kg build` first)")
    default = {"graphml": "graph.graphml", "gexf": "graph.gexf", "node-link": "graph.node-link.json",
               "cytoscape": "graph.cytoscape.json", "neo4j": "neo4j"}[args.format]
    files = export(graph_from_json(path.read_text(encoding="utf-8")), args.format, args.out or default)
    for f in files:
        print(f"wrote {f}")
    return EXIT_OK


def cmd_serve(args) -> int:
    from kg.web.serve import serve

    serve(args.store, host=args.host, port=args.port, timeout=args.timeout, workers=args.workers,
          max_rows=args.max_rows)
    return EXIT_OK


def cmd_stats(args) -> int:
    path = Path(args.target) / "stats.json"
    if not path.is_file():
        raise FileNotFoundError(f"{args.target}: no stats.json here (run `kg build` first)")
    print(json.dumps(json.loads(path.read_text(encoding="utf-8")), indent=1))
    return EXIT_OK


def make_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="kg", description="Build a knowledge graph of ML papers from their abstracts.")
    ap.add_argument("--version", action="version", version=f"abstract-kg {__import__('kg').__version__}")
    sub = ap.add_subparsers(dest="command", required=True)

    b = sub.add_parser("build", help="build the graph and every output (no inputs: the bundled samples)")
    b.add_argument("inputs", nargs="*", help="abstract files: seed .txt, .jsonl, .json, .csv, .tsv")
    b.add_argument("--out", "-o", default="outputs", help="output folder (default: outputs)")
    b.add_argument("--base", default=None, help="base IRI of the resources")
    b.add_argument("--workers", "-j", type=int, default=1, help="extraction processes (default: 1)")
    b.add_argument("--rdf", default="ttl,nt,jsonld", metavar="FORMATS",
                   help="RDF files to write, from ttl,nt,jsonld (default: all three; N-Triples always: "
                        "the store and kg validate read them)")
    b.add_argument("--dask", metavar="ADDRESS",
                   help="run extraction on Dask: a scheduler address (tcp://host:8786) or 'local' "
                        "(a cluster of --workers processes on this machine); needs abstract-kg[dask]")
    b.add_argument("--cache", help="extraction cache folder (default: ~/.cache/abstract-kg)")
    b.add_argument("--no-cache", action="store_true", help="neither read nor write the extraction cache, and write every output "
                   "anew (by default a build copies unchanged papers' blocks from the outputs already in --out)")
    b.add_argument("--skip-invalid", action="store_true", help="report bad records and skip them (default: stop)")
    b.add_argument("--store-compaction", choices=["auto", "always", "never"], default="auto",
                   help="when a rebuild that updates the store compacts it (default: auto, after a few updates)")
    b.add_argument("--quiet", "-q", action="store_true")
    b.set_defaults(func=cmd_build)

    e = sub.add_parser("extract", help="extract entities, one JSON object a record (JSON Lines)")
    e.add_argument("inputs", nargs="*")
    e.add_argument("-o", "--output", default=None, help="output file (default: stdout)")
    e.add_argument("--skip-invalid", action="store_true", help="report bad records and skip them (default: stop)")
    e.add_argument("--quiet", "-q", action="store_true")
    e.set_defaults(func=cmd_extract)

    q = sub.add_parser("query", help="run SPARQL on a built store")
    q.add_argument("query", nargs="?", help="SPARQL text or a .rq file")
    q.add_argument("--name", "-n", help="run a named query (see --list)")
    q.add_argument("--list", action="store_true", help="list the named queries and their parameters")
    q.add_argument("--store", default="outputs", help="output folder or store folder (default: outputs)")
    q.add_argument("--format", "-f", default="table", choices=["table", "json", "csv", "tsv", "xml", "turtle", "nt"])
    q.add_argument("--bind", action="append", metavar="NAME=VALUE",
                   help="bind a variable: a literal, or <IRI>; repeatable")
    q.set_defaults(func=cmd_query)

    v = sub.add_parser("validate", help="check a built graph against the SHACL shapes (exit 1 on violations)")
    v.add_argument("target", nargs="?", default="outputs", help="output folder or RDF file")
    v.set_defaults(func=cmd_validate)

    vz = sub.add_parser("viz", help="write an HTML view: one around a node (--focus), or a whole view")
    vz.add_argument("--focus", help="a node's name, alias or id: draw the nodes around it")
    vz.add_argument("--depth", type=int, default=2, help="hops around the focus (default: 2)")
    vz.add_argument("--view", default="overview", choices=["overview", "method-task", "dataset", "paper"])
    vz.add_argument("--store", default="outputs", help="output folder of a build (default: outputs)")
    vz.add_argument("--out", "-o", help="HTML file to write (default: focus-<id>.html or <view>.html)")
    vz.set_defaults(func=cmd_viz)

    ex = sub.add_parser("export", help="export the graph for Gephi, Cytoscape, Neo4j or networkx")
    ex.add_argument("--format", "-f", required=True, choices=["graphml", "gexf", "node-link", "cytoscape", "neo4j"])
    ex.add_argument("--store", default="outputs", help="output folder of a build (default: outputs)")
    ex.add_argument("--out", "-o", help="file to write (a folder for neo4j)")
    ex.set_defaults(func=cmd_export)

    sv = sub.add_parser("serve", help="serve a read-only SPARQL endpoint and the HTML views")
    sv.add_argument("--store", default="outputs", help="output folder (default: outputs)")
    sv.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1, this machine only)")
    sv.add_argument("--port", type=int, default=8000)
    sv.add_argument("--timeout", type=float, default=30.0, help="seconds before a query is stopped (default: 30)")
    sv.add_argument("--workers", type=int, default=2, help="query worker processes (default: 2)")
    sv.add_argument("--max-rows", type=int, default=100_000, help="largest result served (default: 100000)")
    sv.set_defaults(func=cmd_serve)

    s = sub.add_parser("stats", help="print the counts of a built graph")
    s.add_argument("target", nargs="?", default="outputs")
    s.set_defaults(func=cmd_stats)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = make_parser().parse_args(argv)
    if getattr(args, "base", "unset") is None:
        from kg.rdf.namespace import DEFAULT_BASE

        args.base = DEFAULT_BASE
    from kg.build.lock import OutputsBusy
    from kg.extract.dask_cluster import ClusterError
    from kg.ingest import InputError
    from kg.rdf.store import QueryError

    try:
        return args.func(args)
    except (InputError, QueryError, ClusterError, FileNotFoundError, ValueError, KeyError) as exc:
        print(f"kg {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OutputsBusy as exc:
        print(f"kg {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_IO
    except KeyboardInterrupt:
        print(f"kg {args.command}: interrupted; earlier outputs were left as they were", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:  # disk full, permissions: the outputs are swapped in whole or not at all
        where = f" ({exc.filename})" if exc.filename else ""
        kept = "; earlier outputs were left as they were" if args.command == "build" else ""
        print(f"kg {args.command}: error: {exc.strerror or exc}{where}{kept}", file=sys.stderr)
        return EXIT_IO


def run() -> None:
    """The ``kg`` program: :func:`main`, then exit with its code.

    After ``kg build`` the process ends at once (``os._exit``, output flushed)
    instead of freeing the graph, the extractions and the records object by
    object (the build leaves them in :data:`_LEFT_TO_THE_OS`): at 100k abstracts
    that teardown took seconds (4 s after a +1% rebuild), for memory the
    operating system takes back in one go. Every file is closed and swapped in
    before :func:`main` returns.
    """
    import os

    global _ENDING
    _ENDING = sys.argv[1:2] == ["build"]
    code = main()
    if _ENDING:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    run()
