"""Which form an EGN file is in, told by its content: the one sniffer the loader and codecs share.

A binary EGN file's first byte is ``0x00`` (expanded), ``0x01``
(condensed) or ``0x02`` (an EMN match); any other first byte is a legacy condensed file
without a magic byte (the reference's decoder reads "anything else" as condensed).

JSON text is told apart as RFC 4627 defines JSON text: an object or an array, so after an
optional UTF-8 byte-order mark and white space it starts with ``{`` or ``[``.  Text that starts
with a UTF-16 byte-order mark (what Windows PowerShell writes) is JSON text too.  A JSON
scalar is never an EGN or EMN document (an ``.egn`` file is a UTF-8 JSON object),
while its first byte can open a protobuf field (``1`` is 0x31, ``"`` is 0x22:
field 4, length-delimited); so ``b"123"`` is a legacy condensed file, and the condensed
decoder refuses it with a codec error.  An array is read as JSON so that the loader can
say "an EGN document is a JSON object, not an array".
"""

from __future__ import annotations

__all__ = ["FORMS", "TEXT_BOMS", "detect_form", "is_binary", "text_encoding"]

#: Every answer of :func:`detect_form`.
FORMS = ("json", "expanded", "condensed", "emn", "legacy-condensed")

_MAGIC = {0x00: "expanded", 0x01: "condensed", 0x02: "emn"}
_BOM = b"\xef\xbb\xbf"
#: the byte-order marks of UTF-16 (and of little-endian UTF-32, which begins as UTF-16's): text
#: a Windows tool wrote (Windows PowerShell's ``Out-File`` and ``>`` write UTF-16); neither
#: can begin a protobuf message (wire types 7 and 6 do not exist)
TEXT_BOMS = (b"\xff\xfe", b"\xfe\xff")


def detect_form(data: bytes) -> str:
    """``"json"``, ``"expanded"``, ``"condensed"``, ``"emn"`` or ``"legacy-condensed"``.

    Empty input is ``"json"`` (the JSON reader words the error).
    """
    if not data:
        return "json"
    magic = _MAGIC.get(data[0])
    if magic is not None:
        return magic
    if data.startswith(TEXT_BOMS):
        return "json"  # UTF-16 or UTF-32 text: the JSON reader decodes it, or words why not
    head = data[len(_BOM) :] if data.startswith(_BOM) else data
    head = head.lstrip(b" \t\r\n")
    return "json" if head[:1] in (b"{", b"[") else "legacy-condensed"


def text_encoding(data: bytes) -> str:
    """The encoding of JSON text by its byte-order mark: UTF-8 (with or without one), or
    UTF-16 / UTF-32 with theirs."""
    if data.startswith(b"\xff\xfe\x00\x00"):
        return "utf-32"
    if data.startswith(TEXT_BOMS):
        return "utf-16"
    return "utf-8-sig"


def is_binary(data: bytes) -> bool:
    """True when ``data`` is a binary EGN/EMN file rather than JSON text."""
    return detect_form(data) != "json"
