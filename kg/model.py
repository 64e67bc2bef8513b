"""The data model shared by every stage: plain, immutable records.

Only the extraction stage touches spaCy objects and only the rdf stage touches
rdflib terms; everything that flows between stages is one of these records.

Most are frozen dataclasses. The three made by the million (:class:`Mention`,
:class:`DocEntity` and :class:`Relation`: over a million each on a large
corpus) are named tuples: a frozen dataclass sets each field through
``object.__setattr__``, several times slower to make. They read the same (``m.start``) and compare and hash by
their fields, as the dataclasses did.
"""
from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from typing import NamedTuple

#: Entity types the extractor finds, in the order they appear in outputs.
ENTITY_TYPES = ("Method", "Task", "Dataset", "CodeRepository")
#: All node types of the graph.
NODE_TYPES = ("Paper", "Venue") + ENTITY_TYPES


@dataclass(frozen=True, slots=True)
class Record:
    """One input record: an abstract as it came from one file.

    ``doc`` is the record's id: the record's own ``id`` field when it has one,
    else ``<file name>#<0-based index>``. ``line`` is the 1-based line of the
    file where the record starts (for error messages).
    """

    doc: str
    abstract: str
    source: str
    index: int
    line: int = 0
    title: str | None = None
    venue: str | None = None
    year: int | None = None
    url: str | None = None
    code: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()


class Mention(NamedTuple):
    """One evidence span in one record's abstract.

    ``start``/``end`` are half-open character offsets into the abstract.
    ``role`` is ``"proposed"`` or ``"used"`` for methods, ``""`` otherwise.
    ``source`` names the component (and rule) that found the span.
    ``sentence`` is the text of the sentence holding the span (in a sentence longer than
    :data:`kg.text.CONTEXT_MAX`, that many characters of it around the span).
    """

    text: str
    type: str
    start: int
    end: int
    role: str = ""
    source: str = ""
    sentence: str = ""
    score: float = 1.0

    def to_dict(self) -> dict:
        """Every field (``dataclasses.asdict`` without its deep copy, which made it slow).

        >>> Mention("GAN", "Method", 0, 3).to_dict()["end"]
        3
        """
        return {"text": self.text, "type": self.type, "start": self.start, "end": self.end, "role": self.role,
                "source": self.source, "sentence": self.sentence, "score": self.score}


#: A mention's fields in declaration order, as a tuple (read in C): what the extraction cache
#: stores of a mention and what an output unit's digest is taken of.
mention_fields = attrgetter("text", "type", "start", "end", "role", "source", "sentence", "score")


class DocEntity(NamedTuple):
    """An entity as one abstract names it: a name, its aliases, its mentions."""

    type: str
    name: str
    aliases: tuple[str, ...] = ()
    role: str = ""
    mentions: tuple[Mention, ...] = ()


@dataclass(frozen=True, slots=True)
class Extraction:
    """What extraction found in one record (the ``kg extract`` JSON object)."""

    doc: str
    entities: tuple[DocEntity, ...] = ()
    github: tuple[str, ...] = ()
    mentions: tuple[Mention, ...] = ()

    def of(self, type_: str, role: str | None = None) -> list[DocEntity]:
        return [e for e in self.entities if e.type == type_ and (role is None or e.role == role)]

    def to_json(self) -> dict:
        def ent(e: DocEntity) -> dict:
            return {"name": e.name, "aliases": list(e.aliases)}

        return {
            "doc": self.doc,
            "methods_proposed": [ent(e) for e in self.of("Method", "proposed")],
            "methods_used": [ent(e) for e in self.of("Method", "used")],
            "tasks": [ent(e) for e in self.of("Task")],
            "datasets": [ent(e) for e in self.of("Dataset")],
            "github": list(self.github),
            "mentions": [
                {"text": m.text, "type": m.type, "start": m.start, "end": m.end,
                 "role": m.role, "source": m.source, "sentence": m.sentence}
                for m in self.mentions
            ],
        }


@dataclass(frozen=True, slots=True)
class Paper:
    """One distinct abstract; every record that carried it is kept in ``docs``."""

    id: str
    abstract: str
    docs: tuple[str, ...]
    title: str | None = None
    venue: str | None = None
    year: int | None = None
    url: str | None = None
    label: str = ""


@dataclass(frozen=True, slots=True)
class Entity:
    """A resolved entity: one concept across all papers."""

    id: str
    type: str
    name: str
    aliases: tuple[str, ...] = ()
    url: str | None = None


class Relation(NamedTuple):
    """A typed statement between two graph nodes, with its evidence."""

    subject: str
    predicate: str
    object: str
    mentions: tuple[Mention, ...] = ()
    derived_from: tuple[str, ...] = ()
