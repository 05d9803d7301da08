"""Which form an EGN file is in, told by its content: the one sniffer the loader and codecs share.

A binary EGN file's first byte is ``0x00`` (expanded), ``0x01``
(condensed) or ``0x02`` (an EMN match); any other first byte is a legacy condensed file
without a magic byte (the reference's decoder reads "anything else" as condensed).

JSON text is told apart as RFC 4627 defines JSON text: an object or an array, so after an
optional UTF-8 byte-order mark and white space it starts with ``{`` or ``[``.  A JSON
scalar is never an EGN or EMN document (an ``.egn`` file is a UTF-8 JSON object),
while its first byte can open a protobuf field (``1`` is 0x31, ``"`` is 0x22:
field 4, length-delimited); so ``b"123"`` is a legacy condensed file, and the condensed
decoder refuses it with a codec error.  An array is read as JSON so that the loader can
say "an EGN document is a JSON object, not an array".
"""

from __future__ import annotations

__all__ = ["FORMS", "detect_form", "is_binary"]

#: Every answer of :func:`detect_form`.
FORMS = ("json", "expanded", "condensed", "emn", "legacy-condensed")

_MAGIC = {0x00: "expanded", 0x01: "condensed", 0x02: "emn"}
_BOM = b"\xef\xbb\xbf"


def detect_form(data: bytes) -> str:
    """``"json"``, ``"expanded"``, ``"condensed"``, ``"emn"`` or ``"legacy-condensed"``.

    Empty input is ``"json"`` (the JSON reader words the error).
    """
    if not data:
        return "json"
    magic = _MAGIC.get(data[0])
    if magic is not None:
        return magic
    head = data[len(_BOM) :] if data.startswith(_BOM) else data
    head = head.lstrip(b" \t\r\n")
    return "json" if head[:1] in (b"{", b"[") else "legacy-condensed"


def is_binary(data: bytes) -> bool:
    """True when ``data`` is a binary EGN/EMN file rather than JSON text."""
    return detect_form(data) != "json"
