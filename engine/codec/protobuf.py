"""Protobuf wire primitives: a writer that serialises exactly like the reference, and a reader.

Why hand-written (spec section 5.2): the reference serialises with protobufjs, which writes
fields in ascending number order, writes every value the JSON supplied (``false``, ``0``,
``""`` included), writes repeated ``int32`` unpacked and negative ``int32`` as 10-byte
varints.  A stock protobuf library drops proto3 defaults and packs repeated scalars, so it
cannot produce the reference's bytes.  The reader is hand-written too: it must tell "absent"
from "default" for non-``optional`` proto3 fields (the decoded JSON shows only what was on
the wire), keep unknown enum numbers, and fail with a typed error naming the byte offset
instead of an exception from a generated class.  It also keeps ``engine/`` free of a
runtime dependency the project does not otherwise need.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from typing import NamedTuple

from ..errors import CodecError

__all__ = [
    "Writer",
    "Field",
    "read_fields",
    "js_utf8",
    "to_int32",
    "decode_str",
    "as_int32",
    "as_bool",
    "as_double",
    "MAX_DEPTH",
    "as_bytes",
    "packed_int32",
    "SHORT_STRINGS",
]

#: Nesting bound for the reader (EGN messages nest at most ~8 deep).
MAX_DEPTH = 32

_LONE_SURROGATE = re.compile("[" + chr(0xD800) + "-" + chr(0xDFFF) + "]")  # (chr: mypyc takes no surrogate literals)

WIRE_VARINT = 0
WIRE_I64 = 1
WIRE_LEN = 2
WIRE_I32 = 5


def js_utf8(text: str, *, protobufjs: bool = False) -> bytes:
    """UTF-8 bytes of a JavaScript string, as the reference produces them.

    Python's JSON parser keeps lone surrogates (``"\\ud800"``), which ``str.encode`` refuses.
    Node's ``Buffer``/``TextEncoder`` write them as U+FFFD; protobufjs's own short-string
    path (strings under 40 UTF-16 units) writes the raw 3-byte form instead.
    """
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        if protobufjs and _utf16_len(text) < 40:
            return text.encode("utf-8", "surrogatepass")
        return _LONE_SURROGATE.sub("\ufffd", text).encode("utf-8")


def _utf16_len(text: str) -> int:
    return sum(2 if ord(ch) > 0xFFFF else 1 for ch in text)


def to_int32(value: object) -> int:
    """The integer protobufjs writes for an ``int32`` field (JS number semantics).

    Raises:
        CodecError: the value is not an integral number.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CodecError(f"{value!r} is not an integer")
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")) or not value.is_integer():
            raise CodecError(f"{value!r} is not an integer")
        value = int(value)
    if value < 0:
        # protobufjs writes the 64-bit two's complement of a negative number (10 bytes).
        return value % (1 << 64)
    return value % (1 << 32)


#: Encoded ``tag + length + bytes`` of short strings (cards, calls, names), by (field, text).
SHORT_STRINGS: dict[tuple[int, str], bytes] = {}
_SHORT_LEN = 16
_SHORT_MAX = 4096


class Writer:
    """Appends protobuf fields to a byte buffer in the order the caller writes them."""

    __slots__ = ("buf",)

    def __init__(self) -> None:
        self.buf = bytearray()

    def _varint(self, value: int) -> None:
        buf = self.buf
        while value > 0x7F:
            buf.append((value & 0x7F) | 0x80)
            value >>= 7
        buf.append(value)

    def tag(self, number: int, wire: int) -> None:
        key = (number << 3) | wire
        if key < 0x80:
            self.buf.append(key)
        else:
            self._varint(key)

    def int32(self, number: int, value: object) -> None:
        if type(value) is int and 0 <= value < 0x80 and number < 16:
            buf = self.buf
            buf.append(number << 3)
            buf.append(value)
            return
        self.tag(number, WIRE_VARINT)
        self._varint(to_int32(value))

    def bool(self, number: int, value: object) -> None:
        self.tag(number, WIRE_VARINT)
        self.buf.append(1 if value else 0)

    def string(self, number: int, value: object) -> None:
        if type(value) is str and len(value) <= _SHORT_LEN:
            encoded = SHORT_STRINGS.get((number, value))
            if encoded is None:
                w = Writer()
                w.blob(number, js_utf8(value, protobufjs=True))
                encoded = bytes(w.buf)
                if len(SHORT_STRINGS) < _SHORT_MAX:
                    SHORT_STRINGS[(number, value)] = encoded
            self.buf += encoded
            return
        if not isinstance(value, str):
            raise CodecError(f"{value!r} is not a string")
        self.blob(number, js_utf8(value, protobufjs=True))

    def blob(self, number: int, value: bytes | bytearray) -> None:
        key = (number << 3) | WIRE_LEN
        size = len(value)
        buf = self.buf
        if key < 0x80 and size < 0x80:
            buf.append(key)
            buf.append(size)
        else:
            self.tag(number, WIRE_LEN)
            self._varint(size)
        buf += value

    def message(self, number: int, sub: Writer) -> None:
        self.blob(number, sub.buf)

    def double(self, number: int, value: float) -> None:
        self.tag(number, WIRE_I64)
        self.buf += struct.pack("<d", value)

    def getvalue(self) -> bytes:
        return bytes(self.buf)


class Field(NamedTuple):
    """One field as read from the wire: ``value`` is an int (varint/fixed) or bytes."""

    number: int
    wire: int
    value: int | bytes
    offset: int


def _read_varint(data: bytes, pos: int, end: int, base: int) -> tuple[int, int]:
    result = 0
    shift = 0
    start = pos
    while True:
        if pos >= end:
            raise CodecError(f"truncated varint at byte {base + start}")
        b = data[pos]
        pos += 1
        if shift < 64:
            result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            break
        if shift >= 70:
            raise CodecError(f"varint longer than 10 bytes at byte {base + start}")
    return result & ((1 << 64) - 1), pos


def read_fields(data: bytes, *, base: int = 0) -> Iterator[Field]:
    """Split one message into its fields, checking every length against the buffer.

    ``base`` is the message's offset inside the file, so errors name absolute offsets.

    Raises:
        CodecError: truncated data, an invalid tag or an unsupported wire type (groups).
    """
    pos = 0
    end = len(data)
    new = tuple.__new__
    while pos < end:
        at = pos
        key = data[pos]
        if key < 0x80:
            pos += 1
        else:
            key, pos = _read_varint(data, pos, end, base)
        number, wire = key >> 3, key & 7
        if number == 0 or number > 0x1FFFFFFF:
            raise CodecError(f"invalid field number {number} at byte {base + at}")
        if wire == WIRE_LEN:
            if pos < end and data[pos] < 0x80:
                length = data[pos]
                pos += 1
            else:
                length, pos = _read_varint(data, pos, end, base)
            if length > end - pos:
                raise CodecError(
                    f"field {number} at byte {base + at} claims {length} bytes, only {end - pos} left"
                )
            yield new(Field, (number, wire, data[pos : pos + length], base + pos))
            pos += length
        elif wire == WIRE_VARINT:
            if pos < end and data[pos] < 0x80:
                value = data[pos]
                pos += 1
            else:
                value, pos = _read_varint(data, pos, end, base)
            yield new(Field, (number, wire, value, base + at))
        elif wire == WIRE_I64:
            if end - pos < 8:
                raise CodecError(f"truncated 64-bit field {number} at byte {base + at}")
            yield new(Field, (number, wire, int.from_bytes(data[pos : pos + 8], "little"), base + at))
            pos += 8
        elif wire == WIRE_I32:
            if end - pos < 4:
                raise CodecError(f"truncated 32-bit field {number} at byte {base + at}")
            yield new(Field, (number, wire, int.from_bytes(data[pos : pos + 4], "little"), base + at))
            pos += 4
        else:
            raise CodecError(f"unsupported wire type {wire} (field {number}) at byte {base + at}")


def _expect(field: Field, wire: int, what: str) -> None:
    if field.wire != wire:
        raise CodecError(f"field {field.number} ({what}) at byte {field.offset} has wire type {field.wire}")


def as_int32(field: Field, what: str) -> int:
    """The signed 32-bit value of a varint field (protobufjs ``uint32() | 0``).

    Raises:
        CodecError: the field is not a varint.
    """
    _expect(field, WIRE_VARINT, what)
    assert isinstance(field.value, int)
    low = field.value & 0xFFFFFFFF
    return low - (1 << 32) if low & 0x80000000 else low


def as_bool(field: Field, what: str) -> bool:
    """Raises: CodecError: the field is not a varint."""
    _expect(field, WIRE_VARINT, what)
    return field.value != 0


def as_double(field: Field, what: str) -> float:
    """Raises: CodecError: the field is not a 64-bit fixed field."""
    _expect(field, WIRE_I64, what)
    assert isinstance(field.value, int)
    return float(struct.unpack("<d", field.value.to_bytes(8, "little"))[0])


def as_bytes(field: Field, what: str) -> bytes:
    """Raises: CodecError: the field is not length-delimited."""
    if field.wire != WIRE_LEN:
        _expect(field, WIRE_LEN, what)
    value = field.value
    assert isinstance(value, bytes)
    return value


def decode_str(field: Field, what: str) -> str:
    """A string field; invalid UTF-8 is an error rather than silent replacement characters.

    Raises:
        CodecError: not length-delimited or not valid UTF-8.
    """
    raw = as_bytes(field, what)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CodecError(f"{what} at byte {field.offset + exc.start} is not valid UTF-8") from None


def packed_int32(field: Field, what: str) -> list[int]:
    """Elements of a repeated int32 field, packed or not (readers must accept both).

    Raises:
        CodecError: malformed packed data.
    """
    if field.wire == WIRE_VARINT:
        return [as_int32(field, what)]
    raw = as_bytes(field, what)
    out: list[int] = []
    pos = 0
    while pos < len(raw):
        value, pos = _read_varint(raw, pos, len(raw), field.offset)
        low = value & 0xFFFFFFFF
        out.append(low - (1 << 32) if low & 0x80000000 else low)
    return out


