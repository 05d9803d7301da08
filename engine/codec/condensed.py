"""The condensed binary form (magic ``0x01``): protobuf envelope with one bitstream per deal.

Metadata is the common protobuf ``Metadata``; each deal is a protobuf *string* holding the
base64url text of its bitstream (spec 5.4, section 7).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import CodecError, Place
from .deal_bits import pack_deal, unpack_deal_checked
from .expanded import read_file, write_file
from .fastread import Decoded, read_file_fast
from .protobuf import Field, decode_str

__all__ = ["encode_condensed_body", "decode_condensed_body", "condensed_deals"]


def _ruleset(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = doc.get("metadata")
    rules = meta.get("ruleset") if isinstance(meta, dict) else None
    return rules if isinstance(rules, dict) else {}


def condensed_deals(doc: Mapping[str, Any], *, source: str | None = None) -> list[str]:
    """Every deal as its condensed text (string deals pass through untouched).

    Raises:
        CodecError: a deal the bit packer cannot write (names deal, phase, trick, card).
    """
    rules = _ruleset(doc)
    out = []
    for i, deal in enumerate(doc.get("deals") or ()):
        if isinstance(deal, str):
            out.append(deal)
        elif isinstance(deal, dict):
            out.append(pack_deal(deal, rules, place=Place(source=source, deal=i)))
        else:
            raise CodecError(f"deal {deal!r} is neither an object nor a string", Place(source=source, deal=i))
    return out


def encode_condensed_body(doc: Mapping[str, Any], *, source: str | None = None) -> bytes:
    """The condensed ``EgnFile`` message without its magic byte.

    Raises:
        CodecError: see :func:`condensed_deals`.
    """
    texts = condensed_deals(doc, source=source)
    return write_file(doc, lambda i, _d: texts[i])


def decode_condensed_body(data: bytes, base: int) -> Decoded:
    """Decode a condensed ``EgnFile`` message (``base`` = offset of ``data`` in the file),
    whether every deal certainly passes the schema (see :func:`unpack_deal_checked`) and
    whether the metadata does (see :func:`~engine.codec.fastread.read_file_fast`).

    Deals are unpacked after the metadata is known, because the legacy-stream plausibility
    check needs the ruleset; ``dealNumber`` is each deal's index.

    Raises:
        CodecError: malformed protobuf or a deal stream that no version reads.
    """
    fast = read_file_fast(data, condensed=True)
    if fast is not None:
        doc, _, meta_certain = fast
        raw = list(enumerate(doc["deals"]))
    else:
        meta_certain = False
        raw = []

        def keep(index: int, payload: bytes, offset: int) -> int:
            raw.append((index, decode_str(Field(4, 2, payload, offset), "deal string")))
            return index

        doc = read_file(data, base, keep)
    rules = _ruleset(doc)
    deals = [unpack_deal_checked(text, index, ruleset=rules) for index, text in raw]  # errors name the deal
    doc["deals"] = [deal for deal, _ in deals]
    return doc, all(certain for _, certain in deals), meta_certain

