"""Wire primitives of the one-pass readers (:mod:`engine.codec.fastread`,
:mod:`engine.codec.fastmeta`): absolute offsets into the whole buffer, one-byte varints,
lengths under 16 KiB, and :class:`Off` for anything else.

Nothing here raises an error a user sees: :class:`Off` only tells the one-pass reader to
give up, and the general reader then decodes the file and words any error.  A one-byte
value may be read past a submessage's end (or past the buffer: ``IndexError``, caught with
:class:`Off` at the top), so every loop ends by checking that it stopped exactly at ``end``.
"""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ["Off", "span", "fields", "byte", "utf8", "ascii_text", "text_field"]


class Off(Exception):
    """Not the common shape (the general reader takes over)."""


def span(data: bytes, pos: int, end: int) -> tuple[int, int]:
    """(start, stop) of the length-delimited value whose length varint is at ``pos``."""
    size = data[pos]
    if size < 0x80:
        stop = pos + 1 + size
        if stop > end:
            raise Off
        return pos + 1, stop
    low = data[pos + 1]
    if low >= 0x80:
        raise Off
    stop = pos + 2 + ((size & 0x7F) | (low << 7))
    if stop > end:
        raise Off
    return pos + 2, stop


def fields(data: bytes, pos: int, end: int) -> Iterator[tuple[int, int, int]]:
    """The fields of the message at ``[pos, end)`` as ``(tag, start, stop)`` for
    length-delimited fields and ``(tag, value, -1)`` for one-byte varints."""
    while pos < end:
        key = data[pos]
        if key & 7 == 2:
            start, pos = span(data, pos + 1, end)
            yield key, start, pos
        elif key & 7 == 0:
            yield key, byte(data, pos + 1), -1
            pos += 2
        else:
            raise Off
    if pos != end:
        raise Off


def byte(data: bytes, pos: int) -> int:
    """A one-byte varint value (anything longer is not the common shape)."""
    value = data[pos]
    if value >= 0x80:
        raise Off
    return value


def utf8(data: bytes, start: int, stop: int) -> str:
    try:
        return data[start:stop].decode("utf-8")
    except UnicodeDecodeError:
        raise Off from None


def ascii_text(text: str, start: int, stop: int) -> str:
    value = text[start:stop]
    if not value.isascii():
        raise Off
    return value


def text_field(data: bytes, text: str, start: int, stop: int) -> str:
    """A string field: the Latin-1 text's slice when it is ASCII (one copy), else UTF-8."""
    value = text[start:stop]
    return value if value.isascii() else utf8(data, start, stop)
