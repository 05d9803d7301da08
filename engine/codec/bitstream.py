"""Bit-level primitives of the condensed deal stream (spec 7.1): MSB-first bits, base64url."""

from __future__ import annotations

import base64
import binascii
import re

from ..errors import CodecError

__all__ = ["BitWriter", "BitReader", "ShortStream", "width", "WIDTHS", "b64url_encode", "b64url_decode", "SMALL_STREAM"]

_B64 = re.compile(r"^[A-Za-z0-9+/_-]*={0,2}$")
_PADS = ("", "", "==", "=")  # by the unpadded length modulo 4 (1 is refused before)


#: Streams up to this many bytes are read from one integer (see :class:`BitReader`).
SMALL_STREAM = 512


def width(maximum: int) -> int:
    """Bits of a field meant to hold ``maximum``: its binary length, at least 1 (spec 7.1)."""
    return max(1, maximum.bit_length())


#: ``WIDTHS[n] == width(n - 1)``: bits of an index into a pool of ``n`` cards (n >= 1).
WIDTHS = (1,) + tuple(width(n - 1) for n in range(1, 65))


class ShortStream(Exception):
    """Internal: a read ran past the end of the stream (the version attempt fails)."""


class BitWriter:
    """Accumulates bits MSB-first in one integer."""

    __slots__ = ("acc", "nbits")

    def __init__(self) -> None:
        self.acc = 0
        self.nbits = 0

    def write(self, value: int, bits: int) -> None:
        """Write ``value`` in ``bits`` bits, or in more if it does not fit.

        The reference does not truncate an oversized value: it writes all its binary digits,
        which shifts everything after it.  We reproduce that so the bytes are the reference's
        (spec 7.1; quirks q09, q10, q12 document the consequence).

        Raises:
            CodecError: a negative value, which the format cannot represent at all.
        """
        if value < 0:
            raise CodecError(f"negative value {value} cannot be written in the bitstream")
        n = value.bit_length()
        if n < bits:
            n = bits
        self.acc = (self.acc << n) | value
        self.nbits += n

    def bit(self, flag: bool) -> None:
        self.acc = (self.acc << 1) | (1 if flag else 0)
        self.nbits += 1

    def raw(self, data: bytes) -> None:
        if data:
            self.acc = (self.acc << (8 * len(data))) | int.from_bytes(data, "big")
            self.nbits += 8 * len(data)

    def to_bytes(self) -> bytes:
        pad = -self.nbits % 8
        total = self.nbits + pad
        return (self.acc << pad).to_bytes(total // 8, "big")

    def to_text(self) -> str:
        """Base64url text without padding (what the condensed file stores per deal)."""
        return b64url_encode(self.to_bytes())


class BitReader:
    """Reads MSB-first bit fields straight from the bytes (no per-bit copy of the input).

    Running past the end raises :class:`ShortStream`.
    """

    __slots__ = ("data", "pos", "end", "value")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0
        self.end = 8 * len(data)
        #: The whole stream as one integer when it is short (a deal is ~100 bytes): a read
        #: is then one shift.  Long streams slice per read, so no read costs O(stream).
        self.value = int.from_bytes(data, "big") if len(data) <= SMALL_STREAM else -1

    @property
    def remaining(self) -> int:
        return self.end - self.pos

    def read(self, n: int) -> int:
        pos = self.pos
        stop = pos + n
        if stop > self.end:
            raise ShortStream(f"needs {n} bits at bit {pos}, only {self.end - pos} left")
        if self.value >= 0:
            self.pos = stop
            return (self.value >> (self.end - stop)) & ((1 << n) - 1)
        first, last = pos >> 3, (stop + 7) >> 3
        chunk = int.from_bytes(self.data[first:last], "big")
        self.pos = stop
        return (chunk >> ((last << 3) - stop)) & ((1 << n) - 1)

    def read_bytes(self, count: int) -> bytes:
        """``count`` whole bytes starting at the current (possibly unaligned) bit."""
        if count == 0:
            return b""
        return self.read(8 * count).to_bytes(count, "big")

    def rest_is_zero(self) -> bool:
        if self.pos >= self.end:
            return True
        first = self.pos >> 3
        head = self.data[first] & (0xFF >> (self.pos & 7))
        return head == 0 and not self.data[first + 1 :].strip(b"\0")

    def rest_is_padding(self) -> bool:
        """Fewer than 8 bits remain and all are zero (the legacy decoder's stop test)."""
        return self.remaining < 8 and self.rest_is_zero()


def b64url_encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """Decode base64 in either alphabet, padding optional (spec 7.1).

    Raises:
        CodecError: characters outside the base64 alphabets or an impossible length.
    """
    if not _B64.fullmatch(text):
        raise CodecError(f"deal string {text[:40]!r} is not base64")
    body = text.rstrip("=").replace("-", "+").replace("_", "/")
    if len(body) % 4 == 1:
        raise CodecError(f"deal string of {len(body)} characters is not valid base64")
    try:
        # The pattern above left only the standard alphabet, padded here exactly: what
        # base64.b64decode(validate=True) would check again before this same call.
        return binascii.a2b_base64(body + _PADS[len(body) % 4])
    except (binascii.Error, ValueError) as exc:
        raise CodecError(f"deal string is not valid base64: {exc}") from None
