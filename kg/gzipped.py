"""Gzip files made of one member a block, shared by the stages that write and read
the RDF files.

A build writes each unit's block of ``graph.nt.gz`` (and of the Turtle and JSON-LD
files when asked) as a gzip member of its own. Concatenated members are one valid
gzip file (RFC 1952; ``gzip -d``, ``zcat``, Python's :mod:`gzip`, Jena and rdflib read
it whole), and a member is also whole bytes that the next build can copy, or read
alone to compare a unit's triples, without decompressing the file. Members carry no
time stamp, so the same text gives the same bytes. zlib works without Python's lock,
so a thread compressing or decompressing lets the others run.
"""
from __future__ import annotations

import zlib

#: zlib's level: on the RDF blocks, level 1 compresses 9.0 times at about twice
#: the speed of level 6's 9.8 times.
LEVEL = 1
_GZIP = 31  # zlib's wbits for a gzip header and trailer
_PIECE = 1 << 14  # bytes decompressed a call
#: About how many times their compressed size the blocks' texts are: a reader that
#: wants about ``n`` bytes of text at a time reads ``n // EXPANSION`` of the file.
EXPANSION = 10


def member(data: bytes, level: int = LEVEL) -> bytes:
    """``data`` as one gzip member.

    >>> gunzip(member(b"a") + member(b"bc"))
    b'abc'
    """
    c = zlib.compressobj(level, zlib.DEFLATED, _GZIP)
    return c.compress(data) + c.flush()


class Gunzip:
    """A decompressor of concatenated gzip members, fed their bytes in pieces of any
    size; :attr:`whole` is true when the bytes fed so far end at a member's end.

    >>> g, data = Gunzip(), member(b"one ") + member(b"two")
    >>> g.feed(data[:5]) + g.feed(data[5:]), g.whole
    (b'one two', True)
    """

    def __init__(self):
        self._d = zlib.decompressobj(_GZIP)
        self.whole = True

    def feed(self, data: bytes) -> bytes:
        # a piece at a time: at a member's end zlib copies the input it did not use, so
        # the whole of a file of 350,000 members given at once is copied 350,000 times
        out = []
        view = memoryview(data)
        for at in range(0, len(view), _PIECE):
            rest = view[at:at + _PIECE]
            while rest:
                self.whole = False
                out.append(self._d.decompress(rest))
                if not self._d.eof:
                    break
                rest = self._d.unused_data
                self._d = zlib.decompressobj(_GZIP)
                self.whole = True
        return b"".join(out)


class GunzipLines(Gunzip):
    r"""A :class:`Gunzip` that hands back whole lines only, keeping the rest of the text
    for the next feed; :attr:`complete` is true when nothing fed is left over.

    >>> g = GunzipLines()
    >>> g.feed(member(b"a b\nc d")), g.complete, g.feed(member(b" e\n")), g.complete
    (b'a b\n', False, b'c d e\n', True)
    """

    def __init__(self):
        super().__init__()
        self.rest = b""

    def feed(self, data: bytes) -> bytes:
        text = self.rest + super().feed(data)
        cut = text.rfind(b"\n") + 1
        self.rest = text[cut:]
        return text[:cut]

    @property
    def complete(self) -> bool:
        return self.whole and not self.rest


def gunzip(data: bytes) -> bytes:
    """The text of whole gzip members (a ValueError if ``data`` ends inside one)."""
    g = Gunzip()
    out = g.feed(data)
    if not g.whole:
        raise ValueError("the data ends inside a gzip member")
    return out
