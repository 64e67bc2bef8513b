"""Turn an annotated spaCy ``Doc`` into an :class:`~kg.model.Extraction`.

This is where the candidate spans of the components meet: overlaps are
resolved by priority (the paper's own names first, then defined terms, then
gazetteer names), spans naming one thing inside one abstract are grouped into
one entity (acronym with expansion, case / hyphen / plural variants), every
further occurrence of an entity's names becomes a mention too, and each
method gets one role: proposed or used, never both.
"""
from __future__ import annotations

import bisect

from spacy.attrs import IDX
from spacy.tokens import Doc

from kg.model import DocEntity, Extraction, Mention
from kg._unionfind import UnionFind
from kg.text import CONTEXT_MAX, compact_key, context, occurrences
from kg.extract.components import folded_text, sentences
from kg.extract.shapes import Taken
from kg.extract.tokens import doc_text, token_texts

#: Span groups in priority order, with the role they give a method.
GROUPS = (("kg_learned_proposed", "proposed"), ("kg_learned", "used"))
_TYPE_ORDER = {"Method": 0, "Dataset": 1, "Task": 2}


def assemble(doc: Doc, doc_id: str, offset: int = 0, title_len: int = 0, groups=GROUPS) -> Extraction:
    """The extraction of one record, from the span groups of ``groups`` ((key, role of its
    methods) pairs: the span classifier's :attr:`~kg.extract.learned.SpanClassifier.groups`).

    ``offset`` is subtracted from every char offset (a title was prepended to
    the abstract, separated by ``title_len`` characters): mentions in the title
    get ``source`` suffixed with ``@title`` and offsets into the title.
    """
    full = doc_text(doc)
    taken = Taken(len(full))
    uf = UnionFind()
    picked, canon = pick_spans(doc, taken, uf, groups)
    add_recurrences(doc, full, picked, taken)
    picked.sort()
    mention = _mention_maker(doc, full, offset, title_len)
    entities = group_entities(picked, uf, canon, mention, proper_words(doc, title_len))

    github: list[str] = []
    gh_mentions = []
    for s, e, url in doc._.kg_github or []:
        if url not in github:
            github.append(url)
        gh_mentions.append(mention(s, e, full[s:e], "CodeRepository", "", "kg_github"))

    all_mentions = sorted([m for ent in entities for m in ent.mentions] + gh_mentions,
                          key=lambda m: (m.source.endswith("@title") is False, m.start, m.end))
    return Extraction(doc=doc_id, entities=tuple(entities), github=tuple(github), mentions=tuple(all_mentions))


def pick_spans(doc: Doc, taken: Taken, uf: UnionFind, groups=GROUPS) -> tuple[list[tuple], dict[str, str]]:
    """The spans of ``groups`` that overlap none picked before, as (start, end,
    text, type, role, source), and the definitions' other side; ``uf`` joins the
    compact keys of the spans naming one thing (a rule's canonical name, an acronym
    and its expansion). Also {key: canonical name} of the rules' names."""
    picked: list[tuple[int, int, str, str, str, str]] = []
    canon: dict[str, str] = {}  # key -> canonical name given by a lexicon or a task rule
    for group, role in groups:
        for span in doc.spans.get(group, []):
            s, e = span.start_char, span.end_char
            if taken.overlaps(s, e):
                continue
            taken.add(s, e)
            picked.append((s, e, span.text, span.label_, role if span.label_ == "Method" else "", group))
            if span.kb_id_:
                kb = "kb:" + span.label_ + ":" + compact_key(span.kb_id_)
                uf.union(compact_key(span.text), kb)
                canon.setdefault(kb, span.kb_id_)

    types: dict[str, str] = {}
    for s, e, text, type_, role, source in picked:
        types.setdefault(compact_key(text), type_)
        uf.find(compact_key(text))
    # Acronym and expansion are one entity when either side was picked.
    for long, short in doc._.kg_abbreviations or []:
        lk, sk = compact_key(long.text), compact_key(short.text)
        if lk in types or sk in types:
            type_ = types.get(lk) or types.get(sk)
            for span, k in ((long, lk), (short, sk)):
                if k not in types and not taken.overlaps(span.start_char, span.end_char):
                    role = next((p[4] for p in picked if compact_key(p[2]) in (lk, sk)), "")
                    picked.append((span.start_char, span.end_char, span.text, type_, role, "kg_abbreviations"))
                    taken.add(span.start_char, span.end_char)
                    types[k] = type_
            uf.union(lk, sk)
    return picked, canon


def add_recurrences(doc: Doc, full: str, picked: list[tuple], taken: Taken) -> None:
    """Every further occurrence (exact, word-bounded) of a picked surface form, added to
    ``picked`` with the form's type and role."""
    forms = sorted({p[2] for p in picked}, key=lambda t: (-len(t), t))
    folded = folded_text(doc)
    for form in forms:
        if len(form) < 2:
            continue
        for start, end in occurrences(form, full, folded):
            if not taken.overlaps(start, end):
                src = next(p for p in picked if p[2] == form)
                picked.append((start, end, full[start:end], src[3], src[4], "kg_recur"))
                taken.add(start, end)


def _mention_maker(doc: Doc, full: str, offset: int, title_len: int):
    """A function making the :class:`Mention` of a picked span, with its sentence (one
    string a sentence, shared by its mentions) and offsets into the title or abstract."""
    sents = [(sent.start_char, sent.end_char) for sent in sentences(doc)]
    sent_starts = [s for s, _ in sents]
    sent_texts: dict[int, str] = {}  # a sentence's one string, shared by its mentions

    def sentence_of(start: int, end: int) -> str:
        k = bisect.bisect_right(sent_starts, start) - 1
        if k < 0 or start >= sents[k][1]:
            return ""
        s, e = sents[k]
        if e - s > CONTEXT_MAX:
            return context(full, s, e, start, end)
        if k not in sent_texts:
            sent_texts[k] = full[s:e]
        return sent_texts[k]

    def mention(s, e, text, type_, role, source) -> Mention:
        in_title = s < title_len
        base = 0 if in_title else offset
        return Mention(text=text, type=type_, start=s - base, end=e - base, role=role,
                       source=source + ("@title" if in_title else ""), sentence=sentence_of(s, e))
    return mention


def group_entities(picked: list[tuple], uf: UnionFind, canon: dict[str, str], mention, proper: frozenset
                   ) -> list[DocEntity]:
    """The record's entities: the picked spans grouped by ``uf``, each group typed (a
    method before a dataset before a task), a method proposed if one span says so,
    named (:func:`_canonical`), its other spellings its aliases."""
    grouped: dict[str, list[tuple]] = {}
    for p in picked:
        grouped.setdefault(uf.find(compact_key(p[2])), []).append(p)
    entities = []
    for root, members in grouped.items():
        type_ = min((m[3] for m in members), key=lambda t: _TYPE_ORDER.get(t, 9))
        role = ""
        if type_ == "Method":
            role = "proposed" if any(m[4] == "proposed" for m in members) else "used"
        surface: list[str] = []
        for m in members:
            if m[2].lower() not in {x.lower() for x in surface}:
                surface.append(m[2])
        names = sorted(canon[k] for k in uf.parent if k in canon and uf.find(k) == root)
        name = _canonical(surface, type_, role, names[0] if names and role != "proposed" else None, proper)
        aliases = tuple(s for s in surface if s.lower() != name.lower())
        mentions = tuple(mention(m[0], m[1], m[2], type_, role, m[5]) for m in members)
        entities.append(DocEntity(type=type_, name=name, aliases=aliases, role=role, mentions=mentions))
    entities.sort(key=lambda e: (_TYPE_ORDER.get(e.type, 9), e.mentions[0].start if e.mentions else 0))
    return entities


def task_case(name: str, proper: frozenset = frozenset()) -> str:
    """Task names in lower case, acronyms kept, and ``proper`` words (lower-cased: the
    words the text capitalizes inside its sentences, "Bayesian") capitalized.

    >>> task_case("Instruction Tuning for LLMs in 3D")
    'instruction tuning for LLMs in 3D'
    >>> task_case("bayesian Inference", frozenset({"bayesian"}))
    'Bayesian inference'
    >>> task_case("Multi-Armed Bandits on GA-Net")
    'multi-armed bandits on GA-Net'
    """
    def word(w: str) -> str:
        if any(sum(c.isupper() for c in p) > 1 for p in w.split("-")) or any(c.isdigit() for c in w):
            return w
        return "-".join(p[:1].upper() + p[1:].lower() if p.lower() in proper else p.lower() for p in w.split("-"))
    return " ".join(word(w) for w in name.split())


def proper_words(doc: Doc, title_len: int) -> frozenset:
    """Capitalized words the abstract writes inside a sentence (not at its start, not in
    the title), lower-cased: names of people and places that stay capitalized in a label."""
    texts, _ = token_texts(doc)
    starts = {s.start for s in sentences(doc)}
    first = 0
    if title_len:  # the first token of the abstract
        idx = doc.to_array([IDX]).tolist() if len(doc) else []
        first = next((i for i, x in enumerate(idx) if x >= title_len), len(texts))
    out = set()
    for i in range(first + 1, len(texts)):
        t = texts[i]
        if not t[:1].isupper() or i in starts or texts[i - 1] in (":", ".", "\n", "(", '"', "\u201c"):
            continue
        if texts[i - 1][:1].isupper() or (i + 1 < len(texts) and texts[i + 1][:1].isupper()):
            continue  # a word of a Title Case name ("Feature Shift Localization Network")
        for p in t.split("-"):
            if len(p) > 1 and p[0].isupper() and p[1:].islower():
                out.add(p.lower())
    return frozenset(out)


def _canonical(surface: list[str], type_: str, role: str, lexical: str | None = None,
               proper: frozenset = frozenset()) -> str:
    """The entity's name: the lexicon's canonical name when there is one, a
    proposed method's short name (the paper's own acronym), else the longest form.
    Task names are lower case but for the words the text capitalizes."""
    if lexical:
        name = lexical
    elif len(surface) == 1:
        name = surface[0]
    else:
        by_len = sorted(surface, key=lambda s: (len(s), s))
        name = by_len[0] if role == "proposed" else by_len[-1]
    return task_case(name, proper) if type_ == "Task" else name


def remap(ex: Extraction, sents: list, title_map, abstract_map) -> tuple[Extraction, list]:
    """``ex`` and its sentence ranges with offsets into the original title and abstract
    (:mod:`kg.extract.normalize`), where the text was cleaned before extraction."""
    if title_map is None and abstract_map is None:
        return ex, sents

    def move(m: Mention) -> Mention:
        omap = title_map if m.source.endswith("@title") else abstract_map
        if omap is None:
            return m
        s, e = omap.span(m.start, m.end)
        return m._replace(start=s, end=e)
    moved = {}
    for m in ex.mentions:
        moved[m] = move(m)
    entities = tuple(e._replace(mentions=tuple(moved.get(m) or move(m) for m in e.mentions)) for e in ex.entities)
    mentions = tuple(moved[m] for m in ex.mentions)
    if abstract_map is not None:
        sents = [abstract_map.span(s, e) for s, e in sents]
    return Extraction(doc=ex.doc, entities=entities, github=ex.github, mentions=mentions), sents
