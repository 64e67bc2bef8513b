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
from dataclasses import dataclass, field, replace
from operator import attrgetter

from kg._gc import without_gc
from kg._unionfind import UnionFind
from kg.model import Entity, Extraction, Mention, Paper, Record, Relation
from kg.resolve.names import (caps_copy, cluster_key, entity_id, entity_name, head_words, initials_of, is_acronym,
                              link_forms, paper_label, repo_id, venue_id)
from kg.text import compact_key, norm_words, normalize_github, stem_bag, text_hash

ROLE_PREDICATE = {"proposed": "proposes", "used": "usesMethod"}
TYPE_PREDICATE = {"Task": "addressesTask", "Dataset": "usesDataset", "CodeRepository": "hasCode"}


@dataclass
class Resolved:
    papers: list[Paper] = field(default_factory=list)
    venues: list[Entity] = field(default_factory=list)
    entities: list[Entity] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)


















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


#: The least share of the papers naming the rarer of two spellings that must name both
#: in one entity for the two to be one concept across the corpus.
PAIR_SHARE = 0.3


def paired_keys(anchors: dict, others: dict, uses: dict, siblings: frozenset = frozenset()) -> list[tuple]:
    """The pairs of keys that are one concept across the corpus: a paper's entity
    spelled two ways (its name and another form that links) makes them one when at
    least :data:`PAIR_SHARE` of the papers naming the rarer spelling name both so.
    Papers that join "batch normalization" and "batch-norm" do so wherever either
    rare spelling occurs; the few that say "segmentation" for both their "semantic
    segmentation" and their "instance segmentation" do not make the two one. Two
    kinds of one thing (``siblings``: "mobile manipulation", "robotic manipulation")
    need two papers at least.

    >>> anchors = {"a": "semantic", "b": "semantic", "c": "instance", "d": "bn"}
    >>> others = {"a": ["instance"], "b": [], "c": [], "d": ["batch-norm"]}
    >>> paired_keys(anchors, others, {"a": 1, "b": 40, "c": 30, "d": 5})
    [('bn', 'batch-norm')]
    >>> paired_keys({"a": "robotic", "b": "mobile"}, {"a": ["mobile"]}, {"a": 1, "b": 1}, frozenset({("robotic", "mobile")}))
    []
    """
    named: Counter = Counter()
    pairs: Counter = Counter()
    for sig, anchor in anchors.items():
        named[anchor] += uses[sig]
        for k in others.get(sig, ()):
            named[k] += uses[sig]
            pairs[(anchor, k)] += uses[sig]
    return [(a, k) for (a, k), n in sorted(pairs.items())
            if n >= PAIR_SHARE * min(named[a], named[k]) and (n >= 2 or (a, k) not in siblings)]


def _kinds_of_one(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Whether two names' words say two kinds of one thing: the same last word, other
    words before it ("mobile manipulation", "robotic manipulation"), and not one the
    initials of the other ("KL divergence", "Kullback-Leibler divergence").

    >>> _kinds_of_one(("mobile", "manipulation"), ("robotic", "manipulation"))
    True
    >>> _kinds_of_one(("kl", "divergence"), ("kullback", "leibler", "divergence"))
    False
    """
    if len(a) < 2 or len(b) < 2 or a[-1] != b[-1] or a[:-1] == b[:-1]:
        return False
    x, y = sorted((a[:-1], b[:-1]), key=len)
    return not (len(x) == 1 and len(y) >= 2 and x[0] == "".join(w[0] for w in y))


def clusters(paper_ex: dict[str, Extraction]) -> tuple[dict[Sig, tuple], dict[tuple, Entity]]:
    """Entities across papers: ({spelling: its cluster's root}, {root: Entity}).

    Union-find over (type, key): case / hyphen / plural variants share a key; two
    spellings a paper's entity gives join when the corpus pairs them often enough
    (:func:`paired_keys`); an acronym joins its expansion unless the corpus expands it
    in more than one way.
    A root is its cluster's smallest key, so it depends on the cluster only. Each
    entity is named by the spelling most papers use.
    """
    uf = UnionFind()
    acronym_links: dict[tuple, set] = defaultdict(set)  # (type, acronym key) -> spellings expanding it
    key = cluster_key
    seen: dict[Sig, tuple] = {}  # (type, name, aliases) -> anchor: the same unions again change nothing
    uses: dict[Sig, int] = {}  # (type, name, aliases) -> how many of the papers' entities are spelled so
    kept: dict[Sig, list[str]] = {}  # (type, name, aliases) -> its forms that join other papers' entities
    others: dict[Sig, list[tuple]] = {}  # (type, name, aliases) -> the keys of its other linking forms
    siblings: set[tuple] = set()  # (anchor, key) of two kinds of one thing (:func:`_kinds_of_one`)
    for ex in paper_ex.values():
        for ent in ex.entities:
            sig = (ent.type, ent.name, ent.aliases)
            if sig in uses:
                uses[sig] += 1
                continue
            uses[sig] = 1
            forms = [ent.name, *ent.aliases]
            linked = link_forms(forms)
            longs = [f for f in linked if not is_acronym(f)]
            # nor an acronym of a form left out ("RL" beside "offline RL" and "reinforcement learning")
            dropped = [f for f in forms if f not in linked and not is_acronym(f)]
            shorts = [f for f in linked if is_acronym(f) and not any(initials_of(f, d) for d in dropped)]
            kept[sig] = [f for f in forms if f in longs or f in shorts] or forms[:1]
            anchor = seen[sig] = (ent.type, key((longs or kept[sig])[0]))
            uf.find(anchor)
            others[sig] = sorted({(ent.type, key(f)) for f in longs} - {anchor})
            base = head_words((longs or kept[sig])[0])
            siblings.update((anchor, (ent.type, key(f))) for f in longs if _kinds_of_one(base, head_words(f)))
            if longs:
                for f in shorts:
                    acronym_links[(ent.type, key(f))].add(sig)
            else:
                for f in kept[sig]:
                    uf.union(anchor, (ent.type, key(f)))
    for a, b in paired_keys(seen, others, uses, frozenset(siblings)):
        uf.union(a, b)
    for sig, ks in others.items():  # a form its entity did not join stays out of its aliases
        left = {k[1] for k in ks if uf.find(k) != uf.find(seen[sig])}
        if left:
            kept[sig] = [f for f in kept[sig] if is_acronym(f) or key(f) not in left]
    for short, sigs in sorted(acronym_links.items()):
        # spellings of one expansion ("mean square error", "mean squared error") are one concept
        by_stems: dict[frozenset, tuple] = {}
        for sig in sorted(sigs):
            stems = stem_bag(norm_words(next(f for f in kept[sig] if not is_acronym(f))))
            if stems in by_stems:
                uf.union(by_stems[stems], seen[sig])
            else:
                by_stems[stems] = seen[sig]
        root = dominant_expansion(Counter({sig: uses[sig] for sig in sigs}), lambda sig: uf.find(seen[sig]))
        if root is not None:
            uf.union(short, root)
    roots = {anchor: uf.find(anchor) for anchor in set(seen.values())}
    sig_root = {sig: roots[anchor] for sig, anchor in seen.items()}

    # each cluster's spellings, counted once a paper's entity (clusters in order of first use)
    spellings: dict[tuple, list[tuple[Sig, int]]] = defaultdict(list)
    for sig, n in uses.items():
        spellings[sig_root[sig]].append((sig, n))

    entities: dict[tuple, Entity] = {}
    expansions: dict[tuple, str] = {}  # root -> its most used spelling that is not an acronym
    weight: dict[tuple, int] = {}  # root -> the papers' entities it gathers
    for root, sigs in spellings.items():
        entities[root], expansion = cluster_entity(root[0], [(kept[sig], n) for sig, n in sigs])
        if expansion:
            expansions[root] = expansion
        weight[root] = sum(n for _, n in sigs)
    return sig_root, distinct(entities, expansions, weight)


def cluster_entity(type_: str, spellings: list[tuple[list[str], int]]) -> tuple[Entity, str | None]:
    """The entity of one cluster, from its papers' spellings (each paper entity's
    linking forms, its name first, and how many papers' entities are spelled so), and
    its most used spelling that is not an acronym (None if all are)."""
    names: Counter = Counter()
    expanded: Counter = Counter()  # the expansion of a paper's entity named by an acronym
    named_by: Counter = Counter()  # form -> the papers' entities naming it
    for forms, n in spellings:
        names[forms[0]] += n
        if is_acronym(forms[0]):
            long = next((f for f in forms if not is_acronym(f)), None)
            if long:
                expanded[long] += n
        for f in set(forms):
            named_by[f] += n
    name = entity_name(type_, names, expanded)
    # one form per case-insensitive spelling (the most used, a title's capitals last), the
    # name's own left out, and no capitals copy of a spelling the entity has in lower case
    # ("CONVOLUTIONAL NEURAL NETWORKS" beside "convolutional neural network")
    by_lower: dict[str, str] = {}
    for f in sorted(named_by):
        best = by_lower.get(f.lower())
        if best is None or (caps_copy(f), -named_by[f]) < (caps_copy(best), -named_by[best]):
            by_lower[f.lower()] = f
    plain = {compact_key(f) for f in (name, *by_lower.values()) if not caps_copy(f)}
    aliases = sorted(f for low, f in by_lower.items()
                     if low != name.lower() and not (caps_copy(f) and compact_key(f) in plain))
    longs = sorted((f for f in [name, *aliases] if not is_acronym(f)), key=lambda f: (-named_by[f], f))
    entity = Entity(id=entity_id(type_, name), type=type_, name=name, aliases=tuple(aliases))
    return entity, (longs[0] if longs else None)










def distinct(entities: dict[tuple, Entity], expansions: dict[tuple, str], weight: dict[tuple, int]
             ) -> dict[tuple, Entity]:
    """The entities with distinct labels and ids within a type. Where two share a label
    (an acronym the corpus expands in more than one way), one keeps it: the one with
    nothing to tell it apart (the bare acronym), else the one most papers name; each
    other is labelled with its expansion or another spelling of its own ("SUN (Scene
    Understanding)"). Ids are slugs of the labels; where two share one, the later
    clusters' ids get a number."""
    by_label: dict[tuple, list[tuple]] = defaultdict(list)
    for root in sorted(entities):
        e = entities[root]
        by_label[(e.type, compact_key(e.name))].append(root)
    out = dict(entities)
    for (_, key), roots in by_label.items():
        if len(roots) < 2:
            continue
        tell = {}
        for root in roots:
            own = expansions.get(root) or next((a for a in out[root].aliases if compact_key(a) != key), None)
            if own and compact_key(own) != key:
                tell[root] = own
        bare = [r for r in roots if r not in tell]
        keeper = bare[0] if bare else min(roots, key=lambda r: (-weight.get(r, 0), r))
        for root in roots:
            if root != keeper and root in tell:
                e = out[root]
                label = f"{e.name} ({tell[root]})"
                out[root] = replace(e, name=label, id=entity_id(e.type, label))
    taken: Counter = Counter()
    for root in sorted(out):
        e = out[root]
        taken[e.id] += 1
        if taken[e.id] > 1:
            out[root] = replace(e, id=f"{e.id}-{taken[e.id]}")
    return out


#: The share of an acronym's expansions one concept must have for the bare acronym to
#: join it ("MDP" is "Markov decision process" in nearly every paper that expands it).
DOMINANT_SHARE = 0.8


def dominant_expansion(expansions: Counter, root_of) -> tuple | None:
    """The cluster an acronym's bare uses belong to: that of its expansions when they
    all are one concept, or one concept has :data:`DOMINANT_SHARE` of the papers that
    expand it; None when the acronym is ambiguous ("AMP": approximate message passing
    in some papers, adaptive mixed precision in others).

    >>> dominant_expansion(Counter({"a1": 9, "a2": 1}), {"a1": "x", "a2": "y"}.get)
    'x'
    >>> dominant_expansion(Counter({"a1": 3, "a2": 2}), {"a1": "x", "a2": "y"}.get) is None
    True
    """
    papers: Counter = Counter()
    for sig, n in expansions.items():
        papers[root_of(sig)] += n
    (root, n), *_ = sorted(papers.items(), key=lambda kv: (-kv[1], kv[0]))
    return root if n >= DOMINANT_SHARE * sum(papers.values()) else None




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
        for venue in dict.fromkeys(r.venue for r in recs if r.venue):  # every venue the paper's records give
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
    # the same abstract at two venues (a workshop and a conference, a record each) is one
    # paper published in both
    venues = list(dict.fromkeys(r.venue for r in recs if r.venue))
    venue = venues[0] if venues else None
    year = next((r.year for r in recs if r.year), None)
    for v in venues:
        mine.setdefault(("publishedIn", venue_id(v)), [])
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
