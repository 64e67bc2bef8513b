"""The ``kg`` command line: a thin layer over the library.

Exit codes: 0 success, 1 the graph does not conform (``kg validate``),
2 bad usage or bad input (a message names the file and line), 3 a file could
not be read or written (disk full, permissions), 130 interrupted.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_IO, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def _log(args, msg: str) -> None:
    if not getattr(args, "quiet", False):
        print(msg, file=sys.stderr, flush=True)


def _talk(args):
    """What a command tells its user on stderr (see :class:`kg.talk.Talk`)."""
    from kg.talk import Talk

    quiet, verbose = getattr(args, "quiet", False), getattr(args, "verbose", False)
    return Talk(say=lambda line: _log(args, line), detail=(lambda line: _log(args, "  " + line)) if verbose else
                (lambda line: None), warn=_warn, bars=not quiet)


def _warn(message: str) -> None:
    print(f"kg: warning: {message}", file=sys.stderr, flush=True)


def _inputs(paths: list[str]):
    from kg.ingest import sample_paths

    return [Path(p) for p in paths] if paths else sample_paths()


#: Set by :func:`run` for ``kg build``: the process ends with ``os._exit`` once the command
#: returns, so a build leaves its records, extractions and graph in :data:`_LEFT_TO_THE_OS`
#: instead of freeing them as :func:`cmd_build` returns (millions of objects, one at a
#: time, for memory the operating system takes back in one go).
_ENDING = False
_LEFT_TO_THE_OS: list = []


def cmd_build(args) -> int:
    import gc

    from kg._gc import freeze_after_pauses
    from kg.pipeline.stages import BuildOptions, build

    options = BuildOptions(workers=args.workers, cache=args.cache, use_cache=not args.no_cache, dask=args.dask,
                           skip_invalid=args.skip_invalid, base=args.base, formats=tuple(args.rdf.split(",")),
                           store_compaction=args.store_compaction)
    # The records, extractions and graph live until the build ends: once made, the collector
    # need not walk them again (see kg._gc). Undone for callers that go on in this process.
    freeze_after_pauses()
    try:
        built = build(args.inputs, args.out, options, _talk(args))
    finally:
        freeze_after_pauses(False)
        gc.unfreeze()
    counts = ", ".join(f"{n} {t}" for t, n in built.stats["nodes"].items())
    print(f"built {args.out}: {counts}; total {built.seconds:.2f}s")
    if _ENDING:  # the process ends next: no need to free the graph object by object
        _LEFT_TO_THE_OS.append(built)
    return EXIT_OK


def cmd_extract(args) -> int:
    from kg.pipeline.jsonl import extractions_jsonl
    from kg.files import atomic_write
    from kg.extract import extract_records
    from kg.ingest import read_records

    records = read_records(_inputs(args.inputs), skip_invalid=args.skip_invalid, report=_warn)
    text = extractions_jsonl(extract_records(records, progress=_talk(args).counter("extracting", "texts")))
    if args.out in (None, "-"):
        sys.stdout.write(text)
    else:
        atomic_write(args.out, text)
        _log(args, f"wrote {len(records)} extractions to {args.out}")
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
    from kg.rdf.named import get_named, list_named, resolve_ref, variants
    from kg.rdf.store import open_store, run_query, serialize_results

    if args.list:
        for q in list_named():
            params = " ".join(f"--bind {p}=…" for p in q.params)
            params += "".join(f" [--bind {' '.join(v.params)}=…]" for v in variants(q.name))
            print(f"{q.name:<28} {q.title}{'  ' + params if params else ''}")
            print(f"{'':<28} {q.description}")
        return EXIT_OK
    if args.limit is not None and args.limit < 0:
        raise ValueError("--limit must be 0 or more")
    bindings = dict(_parse_binding(b) for b in args.bind or [])
    if args.name:
        named = get_named(args.name, bindings)
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
    if args.name:
        for p, type_ in zip(named.params, named.param_types):
            if type_ and p in bindings:
                bindings[p] = resolve_ref(store, type_, bindings[p])
    results = run_query(store, text, bindings, prefixes=QUERY_PREFIXES)
    sys.stdout.write(serialize_results(results, args.format, QUERY_PREFIXES, limit=args.limit))
    return EXIT_OK


def cmd_validate(args) -> int:
    from kg.rdf.validate import validate_path

    report = validate_path(args.store, engine=args.engine, progress=_talk(args).counter("validating", "constraints"))
    if report.conforms:
        print(f"{args.store}: conforms to the abstract-kg shapes")
        return EXIT_OK
    print(report.text)
    print(f"{args.store}: {report.violations} violation(s)", file=sys.stderr)
    return EXIT_INVALID


def _read_graph(store: str):
    """The graph of a build folder (its ``graph.json.gz``)."""
    from kg.io.graphjson import GRAPH_FILE, in_build, read_graph_json

    path = in_build(store, GRAPH_FILE)
    if not path.is_file():
        raise FileNotFoundError(f"{store}: no {GRAPH_FILE} here (run `kg build` first)")
    return read_graph_json(path)


def cmd_viz(args) -> int:
    from kg.pipeline.outputs import write_html
    from kg.web.viz import page_html

    G = _read_graph(args.store)
    focus = None
    if args.focus:
        from kg.refs import resolve_name

        focus = resolve_name(G, args.focus)
    out = args.out or (f"focus-{focus.replace('/', '-')}.html" if focus else f"{args.view}.html")
    write_html(page_html(G, view=args.view, focus=focus, depth=args.depth)[0], out)
    print(f"wrote {out}")
    return EXIT_OK


def cmd_export(args) -> int:
    from kg.io.exports import export

    default = {"graphml": "graph.graphml", "gexf": "graph.gexf", "node-link": "graph.node-link.json",
               "cytoscape": "graph.cytoscape.json", "neo4j": "neo4j"}[args.format]
    bar = _talk(args).bar("exporting", 2, "steps")
    G = _read_graph(args.store)
    bar.update()
    files = export(G, args.format, args.out or default)
    bar.update()
    bar.close()
    for f in files:
        print(f"wrote {f}")
    return EXIT_OK


def cmd_serve(args) -> int:
    from kg.web.serve import serve

    serve(args.store, host=args.host, port=args.port, timeout=args.timeout, workers=args.workers,
          max_rows=args.max_rows)
    return EXIT_OK


def cmd_site(args) -> int:
    from kg.web.site import write_site

    files, size = write_site(args.store, args.out, _talk(args))
    _log(args, f"wrote {args.out}/: {files:,} files, {size / 1e6:,.1f} MB; open {args.out}/index.html")
    return EXIT_OK


def cmd_stats(args) -> int:
    path = Path(args.store) / "stats.json"
    if not path.is_file():
        raise FileNotFoundError(f"{args.store}: no stats.json here (run `kg build` first)")
    stats = json.loads(path.read_text(encoding="utf-8"))
    print(json.dumps(stats, indent=1, sort_keys=True) if args.json else stats_text(args.store, stats))
    return EXIT_OK


#: How node types and relations read in ``kg stats``.
_PLURALS = {"Paper": "papers", "Method": "methods", "Task": "tasks", "Dataset": "datasets",
            "CodeRepository": "code repositories", "Venue": "venues"}


def stats_text(store: str, stats: dict) -> str:
    """``kg stats`` for people: what the build holds, and its leading tasks, methods and datasets."""
    nodes = stats.get("nodes", {})
    lines = [f"{store}: {nodes.get('Paper', 0):,} papers from {stats.get('records', 0):,} records"
             + (f" ({stats['records_skipped']:,} skipped as invalid)" if stats.get("records_skipped") else "")
             + f", {stats.get('triples', 0):,} triples",
             "  nodes: " + ", ".join(f"{n:,} {_PLURALS.get(t, t)}" for t, n in sorted(nodes.items(), key=lambda kv: -kv[1])),
             "  links: " + ", ".join(f"{n:,} {rel}" for rel, n in sorted(stats.get("edges", {}).items(),
                                                                        key=lambda kv: -kv[1]))]
    for type_ in ("Task", "Method", "Dataset"):
        ranked = stats.get("top", {}).get(type_)
        if ranked:
            lines.append(f"  top {_PLURALS.get(type_, type_)} (papers): " + "; ".join(f"{name} ({n:,})" for name, n in ranked))
    return "\n".join(lines)


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Help with each option's default (where it has one and the text does not give it),
    and the examples as written."""

    def _get_help_string(self, action) -> str:
        text = action.help or ""
        if action.default not in (None, False, argparse.SUPPRESS) and "default" not in text and action.option_strings:
            text += " (default: %(default)s)"
        return text


def _command(sub, name: str, summary: str, func, examples: str) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help=summary, description=summary, formatter_class=_Formatter,
                       epilog="examples:\n" + "\n".join(f"  {line.strip()}" for line in examples.strip().splitlines()))
    p.set_defaults(func=func)
    return p


def _store(p, what: str = "the build folder to read") -> None:
    """--store/-s: the build folder a command reads (the same in every command)."""
    p.add_argument("--store", "-s", default="outputs", help=what)


def _old_positional(p, name: str) -> None:
    """The build folder as a positional argument, as before --store (deprecated, hidden)."""
    p.add_argument("old_store", nargs="?", metavar=name, help=argparse.SUPPRESS)


def _talk_options(p) -> None:
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors and the result")
    p.add_argument("--verbose", "-v", action="store_true", help="also print the seconds of each internal step")


def _build_parser(sub) -> None:
    b = _command(sub, "build", "build the graph and every output (no inputs: the bundled samples)", cmd_build, """
        kg build                                   the bundled samples into outputs/
        kg build papers.jsonl more/ -o icml2025 --workers 2
        kg build corpus.jsonl --rdf nt --no-cache""")
    b.add_argument("inputs", nargs="*", help="abstract files or folders (read recursively): seed .txt, .jsonl, "
                   ".ndjson, .json, .csv, .tsv, PMLR .md, BibTeX .bib")
    b.add_argument("--out", "-o", default="outputs", help="the build folder to write (replaced whole at the end)")
    b.add_argument("--base", default=None, help="base IRI of the resources (default: https://w3id.org/abstract-kg/resource/)")
    b.add_argument("--workers", "-j", type=int, default=1, help="processes for the extraction")
    b.add_argument("--rdf", default="nt", metavar="FORMATS",
                   help="RDF dumps to write gzip-compressed, from nt,ttl,jsonld (graph.nt.gz always: the store is "
                        "loaded and updated from it)")
    b.add_argument("--dask", metavar="ADDRESS", help="run extraction on Dask: a scheduler address (tcp://host:8786) "
                   "or 'local' (--workers processes here); needs abstract-kg[dask]")
    b.add_argument("--cache", metavar="FOLDER", help="extraction cache folder (default: ~/.cache/abstract-kg)")
    b.add_argument("--no-cache", action="store_true", help="neither read nor write the extraction cache, and write "
                   "every output anew instead of reusing the unchanged parts of the build already in --out")
    b.add_argument("--skip-invalid", action="store_true", help="warn about bad records and skip them instead of stopping")
    b.add_argument("--store-compaction", choices=["auto", "always", "never"], default="auto",
                   help="when a rebuild that updates the store compacts it (auto: after a few updates)")
    _talk_options(b)


def _extract_parser(sub) -> None:
    e = _command(sub, "extract", "extract methods, tasks, datasets and code links: one JSON object a record",
                 cmd_extract, """
        kg extract papers.jsonl -o mentions.jsonl
        kg extract abstracts.txt | head -1""")
    e.add_argument("inputs", nargs="*", help="abstract files or folders (no inputs: the bundled samples)")
    e.add_argument("--out", "-o", default=None, help="JSON Lines file to write (default: standard output)")
    e.add_argument("--output", dest="old_output", help=argparse.SUPPRESS)  # deprecated spelling of --out
    e.add_argument("--skip-invalid", action="store_true", help="warn about bad records and skip them instead of stopping")
    _talk_options(e)


def _query_parser(sub) -> None:
    q = _command(sub, "query", "run SPARQL, or a named query, on a build's store", cmd_query, """
        kg query -n top-methods --limit 10
        kg query -n methods-for-task --bind task="semantic segmentation"
        kg query 'SELECT ?m WHERE { ?m a kg:Method } LIMIT 5' -f csv
        kg query --list""")
    q.add_argument("query", nargs="?", help="SPARQL text or a .rq file")
    q.add_argument("--name", "-n", help="run a named query (see --list)")
    q.add_argument("--list", action="store_true", help="list the named queries and their parameters")
    _store(q, "the build folder (or store folder) to query")
    q.add_argument("--format", "-f", default="table", choices=["table", "json", "csv", "tsv", "xml", "turtle", "nt"],
                   help="how to print the results (turtle, nt: for CONSTRUCT and DESCRIBE)")
    q.add_argument("--bind", action="append", metavar="NAME=VALUE",
                   help="bind a variable: a literal, or <IRI>; repeatable")
    q.add_argument("--limit", type=int, metavar="N", help="print at most N rows (default: all)")


def _validate_parser(sub) -> None:
    v = _command(sub, "validate", "check a build against the SHACL shapes (exit 1 on violations)", cmd_validate, """
        kg validate
        kg validate -s icml2025
        kg validate -s outputs/graph.ttl.gz""")
    _store(v, "the build folder, or an RDF file, to check")
    v.add_argument("--engine", choices=("sparql", "pyshacl"), default="sparql",
                   help="the shapes compiled to SPARQL on the store (fast), or pyshacl (slow, to cross-check)")
    _old_positional(v, "FOLDER")
    _talk_options(v)


def _viz_parser(sub) -> None:
    vz = _command(sub, "viz", "write an HTML view: one around a node (--focus), or a whole view", cmd_viz, """
        kg viz --focus TAROT -o tarot.html
        kg viz --view method-task -s icml2025""")
    vz.add_argument("--focus", help="a node's name, alias or id: draw the nodes around it")
    vz.add_argument("--depth", type=int, default=2, help="hops around the focus")
    vz.add_argument("--view", default="overview", choices=["overview", "method-task", "dataset", "paper"],
                    help="which view to draw")
    _store(vz)
    vz.add_argument("--out", "-o", help="HTML file to write (default: focus-<id>.html or <view>.html)")


def _export_parser(sub) -> None:
    ex = _command(sub, "export", "export the graph for Gephi, Cytoscape, Neo4j or networkx", cmd_export, """
        kg export -f graphml -o graph.graphml
        kg export -f neo4j -s icml2025 -o neo4j/""")
    ex.add_argument("--format", "-f", required=True, choices=["graphml", "gexf", "node-link", "cytoscape", "neo4j"],
                    help="the file format")
    _store(ex)
    ex.add_argument("--out", "-o", help="file to write, a folder for neo4j (default: graph.<format> or neo4j/)")
    _talk_options(ex)


def _serve_parser(sub) -> None:
    sv = _command(sub, "serve", "serve a read-only SPARQL endpoint and the HTML views", cmd_serve, """
        kg serve
        kg serve -s icml2025 --port 8080 --timeout 10""")
    _store(sv)
    sv.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1: this machine only)")
    sv.add_argument("--port", type=int, default=8000, help="port to listen on")
    sv.add_argument("--timeout", type=float, default=30.0, help="seconds before a query is stopped")
    sv.add_argument("--workers", type=int, default=2, help="query worker processes")
    sv.add_argument("--max-rows", type=int, default=100_000, help="largest result served, in rows")


def _site_parser(sub) -> None:
    st = _command(sub, "site", "write a build's pages as a static site (no server needed)", cmd_site, """
        kg site -o site
        kg site -s icml2025 -o public/""")
    _store(st)
    st.add_argument("--out", "-o", default="site", help="the folder to write (replaced whole at the end)")
    _talk_options(st)


def _stats_parser(sub) -> None:
    s = _command(sub, "stats", "summarize a build: counts, the leading tasks, methods and datasets", cmd_stats, """
        kg stats
        kg stats -s icml2025 --json""")
    _store(s)
    _old_positional(s, "FOLDER")
    s.add_argument("--json", action="store_true", help="print the stats as JSON, for scripts")


def make_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="kg", description="Build a knowledge graph of ML papers from their abstracts.",
                                 formatter_class=_Formatter, epilog="kg COMMAND --help shows a command's options "
                                 "and examples.")
    ap.add_argument("--version", action="version", version=f"abstract-kg {__import__('kg').__version__}")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in (_build_parser, _extract_parser, _query_parser, _validate_parser, _viz_parser, _export_parser,
                _serve_parser, _site_parser, _stats_parser):
        add(sub)
    return ap


def _deprecated(args) -> None:
    """The spellings of before the one convention: still read, with a warning."""
    if getattr(args, "old_store", None) is not None:
        _warn(f"`kg {args.command} FOLDER` is deprecated; write `kg {args.command} --store FOLDER`")
        args.store = args.old_store
    if getattr(args, "old_output", None) is not None:
        _warn(f"`kg {args.command} --output FILE` is deprecated; write `--out FILE`")
        args.out = args.old_output


def main(argv: list[str] | None = None) -> int:
    args = make_parser().parse_args(argv)
    _deprecated(args)
    if getattr(args, "base", "unset") is None:
        from kg.rdf.namespace import DEFAULT_BASE

        args.base = DEFAULT_BASE
    from kg.files import OutputsBusy
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
    object (the build leaves them in :data:`_LEFT_TO_THE_OS`): on a large
    corpus that teardown takes seconds, for memory the operating system takes
    back in one go. Every file is closed and swapped in
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
