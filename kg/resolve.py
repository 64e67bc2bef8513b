"""Resolve: records + extractions in, papers, entities and relations out.

- One :class:`Paper` per distinct abstract (whitespace-normalized text hash);
  every record that carried it is kept in ``Paper.docs``.
- One :class:`Entity` per concept and type across papers: case / hyphen /
  plural variants share a key; an acronym joins its expansion unless the
  corpus expands it in more than one way (then each paper's acronym stays
  with its own expansion).
- Relations from each paper to its entities, with their mentions as evidence,
  plus ``appliedTo`` / ``evaluatedOn`` derived from the papers that propose a
  method. Ids are stable: the same input gives the same ids.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from operator import attrgetter

from ._gc import without_gc
from ._unionfind import UnionFind
from .model import Entity, Extraction, Mention, Paper, Record, Relation
from .text import compact_key, iri_slug, label_slug, normalize_github, text_hash

ROLE_PREDICATE = {"proposed": "proposes", "used": "usesMethod"}
TYPE_PREDICATE = {"Task": "addressesTask", "Dataset": "usesDataset", "CodeRepository": "hasCode"}
TYPE_PATH = {"Method": "method", "Task": "task", "Dataset": "dataset", "CodeRepository": "repository"}


@dataclass
class Resolved:
    papers: list[Paper] = field(default_factory=list)
    venues: list[Entity] = field(default_factory=list)
    entities: list[Entity] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)


@lru_cache(maxsize=1 << 18)
def _is_acronym(form: str) -> bool:
    return " " not in form and len(form) <= 12 and sum(c.isupper() for c in form) >= 2


def paper_label(title: str | None, abstract: str, proposed: list[str]) -> str:
    """A readable label: the title, else the proposed method and the first words.

    >>> paper_label(None, "We study how models learn features in deep nets today.", ["FooNet"])
    'FooNet: We study how models learn features in deep nets…'
    """
    if title:
        return title
    words = abstract.split()
    head = " ".join(words[:9]) + ("…" if len(words) > 9 else "")
    return f"{proposed[0]}: {head}" if proposed else head


#: A mention's fields, position first: its place among a relation's evidence (a total order).
_MENTION_ORDER = attrgetter("start", "end", "type", "text", "role", "source", "sentence", "score")


def _evidence(mentions: list[Mention]) -> tuple[Mention, ...]:
    """The distinct mentions, by position (then by their other fields: ties are rare, but
    their order must not depend on hashing).

    >>> a, b = Mention("GAN", "Method", 9, 12), Mention("CNN", "Method", 0, 3)
    >>> [m.start for m in _evidence([a, b, a])]
    [0, 9]
    """
    by_fields = {_MENTION_ORDER(m): m for m in mentions}
    return tuple(by_fields[k] for k in sorted(by_fields))


@lru_cache(maxsize=1024)  # a few venues, named by 100k papers
def venue_id(name: str) -> str:
    return "venue/" + iri_slug(label_slug(name))


#: An entity's spelling as a paper's extraction gives it: (type, name, aliases).
Sig = tuple


def paper_groups(records: list[Record]) -> dict[str, list[Record]]:
    """The records of each paper (one per distinct abstract), papers in order of first record."""
    groups: dict[str, list[Record]] = {}
    for rec in records:
        groups.setdefault("paper/" + text_hash(rec.abstract), []).append(rec)
    return groups


def paper_extractions(groups: dict[str, list[Record]], extractions: Iterable[Extraction]) -> dict[str, Extraction]:
    """The extraction of each paper: that of its first record (same abstract text)."""
    by_doc = {ex.doc: ex for ex in extractions}
    return {pid: by_doc[recs[0].doc] for pid, recs in groups.items() if recs[0].doc in by_doc}


def clusters(paper_ex: dict[str, Extraction]) -> tuple[dict[Sig, tuple], dict[tuple, Entity]]:
    """Entities across papers: ({spelling: its cluster's root}, {root: Entity}).

    Union-find over (type, key): case / hyphen / plural variants share a key; an
    acronym joins its expansion unless the corpus expands it in more than one way.
    A root is its cluster's smallest key, so it depends on the cluster only. Each
    entity is named by the spelling most papers use.
    """
    uf = UnionFind()
    acronym_links: dict[tuple, set] = defaultdict(set)
    key = lru_cache(maxsize=None)(compact_key)  # the same forms recur across papers
    seen: dict[Sig, tuple] = {}  # (type, name, aliases) -> anchor: the same unions again change nothing
    uses: dict[Sig, int] = {}  # (type, name, aliases) -> how many of the papers' entities are spelled so
    for ex in paper_ex.values():
        for ent in ex.entities:
            sig = (ent.type, ent.name, ent.aliases)
            if sig in uses:
                uses[sig] += 1
                continue
            uses[sig] = 1
            forms = [ent.name, *ent.aliases]
            longs = [f for f in forms if not _is_acronym(f)]
            shorts = [f for f in forms if _is_acronym(f)]
            anchor = seen[sig] = (ent.type, key(longs[0] if longs else shorts[0]))
            uf.find(anchor)
            for f in longs:
                uf.union(anchor, (ent.type, key(f)))
            if longs:
                for f in shorts:
                    acronym_links[(ent.type, key(f))].add(anchor)
            elif shorts:
                for f in shorts:
                    uf.union(anchor, (ent.type, key(f)))
    for short, anchors in sorted(acronym_links.items()):
        roots = {uf.find(a) for a in anchors}
        if len(roots) == 1:
            uf.union(short, next(iter(roots)))
    roots = {anchor: uf.find(anchor) for anchor in set(seen.values())}
    sig_root = {sig: roots[anchor] for sig, anchor in seen.items()}

    # each cluster's spellings, counted once a paper's entity (clusters in order of first use)
    spellings: dict[tuple, list[tuple[Sig, int]]] = defaultdict(list)
    for sig, n in uses.items():
        spellings[sig_root[sig]].append((sig, n))

    entities: dict[tuple, Entity] = {}
    for root, sigs in spellings.items():
        type_ = root[0]
        names: Counter = Counter()
        named_by: Counter = Counter()  # form -> the papers' entities naming it
        for (_, e_name, e_aliases), n in sigs:
            names[e_name] += n
            for f in {e_name, *e_aliases}:
                named_by[f] += n
        name = sorted(names.items(), key=lambda kv: (-kv[1], len(kv[0]), kv[0]))[0][0]
        forms = []
        lower = {name.lower()}
        for f in sorted(named_by):
            if f.lower() not in lower:  # one form per case-insensitive spelling, the name's own left out
                forms.append(f)
                lower.add(f.lower())
        longs = [f for f in [name, *forms] if not _is_acronym(f)] or [name]
        key_form = sorted(longs, key=lambda f: (-named_by[f], f))[0]
        eid = f"{TYPE_PATH[type_]}/{iri_slug(label_slug(key_form))}"
        entities[root] = Entity(id=eid, type=type_, name=name, aliases=tuple(forms))
    return sig_root, entities


def repo_id(url: str) -> str:
    """The node id of a normalized GitHub URL.

    >>> repo_id("https://github.com/Lab/Net")
    'repository/github/lab/net'
    """
    owner, name = url.split("/")[3:5]
    return f"repository/github/{iri_slug(owner.lower())}/{iri_slug(name.lower())}"


def registry(groups: dict[str, list[Record]], paper_ex: dict[str, Extraction]) -> tuple[dict, dict]:
    """The code repositories and venues the papers name: ({id: Entity}, {id: Entity}),
    each made from its first mention (papers in order; the text's links, then the records' code fields)."""
    repos: dict[str, Entity] = {}
    venues: dict[str, Entity] = {}

    def repo(url: str) -> None:
        rid = repo_id(url)
        if rid not in repos:
            owner, name = url.split("/")[3:5]
            repos[rid] = Entity(id=rid, type="CodeRepository", name=f"{owner}/{name}", url=url)

    for pid, recs in groups.items():
        ex = paper_ex.get(pid)
        for url in ex.github if ex else ():
            repo(url)
        for rec in recs:
            for c in rec.code:
                url = normalize_github(c)
                if url:
                    repo(url)
        venue = next((r.venue for r in recs if r.venue), None)
        if venue:
            vid = venue_id(venue)
            if vid not in venues:
                venues[vid] = Entity(id=vid, type="Venue", name=venue)
    return repos, venues


def resolve_paper(pid: str, recs: list[Record], ex: Extraction | None, sig_root: dict[Sig, tuple],
                  entities: dict[tuple, Entity]) -> tuple[Paper, dict[tuple[str, str], list[Mention]]]:
    """One paper and its relations, (predicate, object) -> mentions (in order of first use).

    What it gives depends only on the paper's records, its extraction and, for each
    spelling of an entity in that extraction, the cluster's root and :class:`Entity`.
    """
    mine: dict[tuple[str, str], list[Mention]] = {}
    ents = ex.entities if ex else ()
    roots = [sig_root[(e.type, e.name, e.aliases)] for e in ents]
    proposed_here = {root for e, root in zip(ents, roots) if e.role == "proposed"}
    for ent, root in zip(ents, roots):
        obj = entities[root].id
        if ent.type == "Method":
            pred = "proposes" if root in proposed_here else "usesMethod"
        else:
            pred = TYPE_PREDICATE[ent.type]
        mine.setdefault((pred, obj), []).extend(ent.mentions)
    gh_mentions = [m for m in ex.mentions if m.type == "CodeRepository"] if ex and ex.github else []
    for url in ex.github if ex else ():
        ms = [m for m in gh_mentions if normalize_github(m.text) == url]
        mine.setdefault(("hasCode", repo_id(url)), []).extend(ms)
    for rec in recs:
        for c in rec.code:
            url = normalize_github(c)
            if url:
                mine.setdefault(("hasCode", repo_id(url)), [])
    venue = next((r.venue for r in recs if r.venue), None)
    year = next((r.year for r in recs if r.year), None)
    if venue:
        mine.setdefault(("publishedIn", venue_id(venue)), [])
    title = next((r.title for r in recs if r.title), None)
    proposed_names = [entities[r].name for r in sorted(proposed_here, key=lambda r: entities[r].id)]
    first = recs[0]
    paper = Paper(id=pid, abstract=first.abstract, docs=tuple(r.doc for r in recs), title=title,
                  venue=venue, year=year, url=next((r.url for r in recs if r.url), None),
                  label=paper_label(title, first.abstract, proposed_names))
    return paper, mine


def derived_of(links: Iterable[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """The derived relations of one paper, from its (predicate, object) links: each method
    it proposes is applied to its tasks and evaluated on its datasets.

    >>> derived_of([("proposes", "method/m"), ("addressesTask", "task/t"), ("usesDataset", "dataset/d")])
    [('method/m', 'appliedTo', 'task/t'), ('method/m', 'evaluatedOn', 'dataset/d')]
    """
    ms, ts, ds = [], [], []
    for p, o in links:
        if p == "proposes":
            ms.append(o)
        elif p == "addressesTask":
            ts.append(o)
        elif p == "usesDataset":
            ds.append(o)
    return [(m, "appliedTo", t) for m in ms for t in ts] + [(m, "evaluatedOn", d) for m in ms for d in ds]


def derive(paper_links: Iterable[tuple[str, Iterable[tuple[str, str]]]]) -> list[tuple[tuple[str, str, str], list[str]]]:
    """The derived relations of all papers (:func:`derived_of`). ``paper_links``: (paper id,
    its (predicate, object) pairs), papers in order; a paper names a pair once. Returns
    ((method, relation, object), papers) sorted, each list of papers in their order.

    >>> derive([("paper/a", [("proposes", "method/m"), ("addressesTask", "task/t")])])
    [(('method/m', 'appliedTo', 'task/t'), ['paper/a'])]
    """
    derived: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for pid, links in paper_links:
        for t in derived_of(links):
            derived[t].append(pid)
    return sorted(derived.items())


def evidence(ms: list[Mention]) -> tuple[Mention, ...]:
    """A relation's evidence: its distinct mentions, by position."""
    return tuple(ms) if len(ms) < 2 else _evidence(ms)


@without_gc
def resolve(records: Iterable[Record], extractions: Iterable[Extraction]) -> Resolved:
    records = list(records)
    groups = paper_groups(records)
    paper_ex = paper_extractions(groups, extractions)
    return resolve_parts(groups, paper_ex, *clusters(paper_ex), *registry(groups, paper_ex))


def resolve_parts(groups: dict[str, list[Record]], paper_ex: dict[str, Extraction], sig_root: dict[Sig, tuple],
                  entities: dict[tuple, Entity], repos: dict[str, Entity], venues: dict[str, Entity]) -> Resolved:
    """:func:`resolve` from its phases' results (see :func:`paper_groups`, :func:`clusters`, :func:`registry`)."""
    rels: dict[str, dict[tuple[str, str], list[Mention]]] = {}
    paper_objs: list[Paper] = []
    for pid, recs in groups.items():
        paper, rels[pid] = resolve_paper(pid, recs, paper_ex.get(pid), sig_root, entities)
        paper_objs.append(paper)

    # sorted by (subject, predicate, object): papers in order, each one's few relations sorted
    pids = sorted(rels)
    relations = [Relation(pid, p, o, evidence(ms)) for pid in pids for (p, o), ms in sorted(rels[pid].items())]
    relations += [Relation(s, p, o, (), tuple(src)) for (s, p, o), src in derive((pid, rels[pid]) for pid in pids)]
    all_entities = sorted(list(entities.values()) + list(repos.values()), key=lambda e: e.id)
    return Resolved(papers=sorted(paper_objs, key=lambda p: p.id), venues=sorted(venues.values(), key=lambda v: v.id),
                    entities=all_entities, relations=relations)
