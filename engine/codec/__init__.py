"""EGN and EMN codecs, byte-compatible with the reference ``euchre-game-notation`` package.

Forms (spec section 5): ``.egnb`` condensed (magic ``0x01``; no magic = legacy condensed),
expanded (``0x00``), EMN match binary (``0x02``).  Everything here takes and returns bytes
or JSON values; callers open files.  Every error is an :class:`~engine.errors.EgnError`
naming the source and, where it applies, the deal, phase and index.

>>> doc = decode_bytes(encode_condensed(doc_in, source="a.egn"), source="a.egnb")  # doctest: +SKIP
"""

from __future__ import annotations

import json
from typing import Any

from .. import native

native.subpackage_path("codec", __path__)

from ..errors import CodecError, EgnError, Place, SizeLimitError
from ..sniff import detect_form as detect  # the one content sniffer, shared with engine.load
from ..sniff import text_encoding
from ..sniff import is_binary
from ..fastcheck import accepts
from ..model import DEAL_STRING_RE, REFERENCE_VERSION_RE, date_ok
from ..validate import validate_document
from .baseline import canonical, sha256_hex, strip
from .common import MAX_BINARY, annotation_keys_numeric, relocate
from .condensed import decode_condensed_body, encode_condensed_body
from .deal_bits import unpack_deal
from .emn import MAX_EMN_INPUT, read_match, validate_emn, write_match
from .expanded import read_expanded, write_deal, write_file
from .jsjson import stringify

__all__ = [
    "MAGIC_EXPANDED",
    "MAGIC_CONDENSED",
    "MAGIC_EMN",
    "MAX_BINARY",
    "is_binary",
    "detect",
    "decode_bytes",
    "decode_condensed",
    "decode_expanded",
    "encode_condensed",
    "encode_expanded",
    "encode_emn",
    "decode_emn",
    "decode_emn_bytes",
    "validate_emn",
    "baseline",
    "baseline_hash",
    "canonical",
    "stringify",
    "parse_json_text",
    "json_reason",
]

MAGIC_EXPANDED = 0x00
MAGIC_CONDENSED = 0x01
MAGIC_EMN = 0x02


def _validate(doc: Any, source: str, *, deals_checked: bool = False, metadata_checked: bool = False) -> None:
    # A document the fast check accepts passes both checks below (see engine.fastcheck);
    # anything else takes the full path, which alone decides and words the error.
    # ``deals_checked``/``metadata_checked``: the decoder vouches for those parts
    # (engine.codec.fastread, fastmeta, deal_bits).  The fast check is called as
    # engine.validate.accepts_document calls it (reference version pattern), plus the
    # metadata flag that only a decoder can give.
    if accepts(
        doc, REFERENCE_VERSION_RE, date_ok, DEAL_STRING_RE, deals_checked=deals_checked, metadata_checked=metadata_checked
    ):
        return
    annotation_keys_numeric(doc, source=source)
    validate_document(doc, source=source, reference=True)


def _placed(exc: EgnError, source: str) -> EgnError:
    return relocate(exc, source=source)


def _check_size(data: bytes, source: str, limit: int | None = None, what: str = "input") -> None:
    limit = MAX_BINARY if limit is None else limit
    if len(data) > limit:
        raise SizeLimitError(
            f"{what} of {len(data)} bytes is over the {limit}-byte limit", Place(source=source)
        )


def _body(data: bytes) -> tuple[bytes, int]:
    # The reference strips 0x00/0x01 only when the file is longer than one byte.
    if len(data) > 1 and data[0] in (MAGIC_EXPANDED, MAGIC_CONDENSED):
        return data[1:], 1
    return data, 0


def decode_condensed(data: bytes, *, source: str = "<input>", validate: bool = True) -> dict[str, Any]:
    """Decode a condensed (or legacy, magic-less) ``.egnb`` file.

    Raises:
        SizeLimitError: more than 8 MiB.
        CodecError: malformed protobuf or an undecodable deal stream.
        SchemaError: the decoded document breaks the schema (``validate=True``).
    """
    _check_size(data, source)
    if not data:
        raise CodecError("empty input", Place(source=source))
    body, base = _body(data)
    try:
        doc, deals_checked, metadata_checked = decode_condensed_body(body, base)
        if validate:
            _validate(doc, source, deals_checked=deals_checked, metadata_checked=metadata_checked)
    except EgnError as exc:
        raise _placed(exc, source) from None
    return doc


def decode_expanded(data: bytes, *, source: str = "<input>", validate: bool = True) -> dict[str, Any]:
    """Decode an expanded ``.expanded.egnb`` file.

    Raises:
        SizeLimitError: more than 8 MiB.
        CodecError: malformed protobuf.
        SchemaError: the decoded document breaks the schema (``validate=True``).
    """
    _check_size(data, source)
    if not data:
        raise CodecError("empty input", Place(source=source))
    body, base = _body(data)
    try:
        doc, deals_checked, metadata_checked = read_expanded(body, base)
        if validate:
            _validate(doc, source, deals_checked=deals_checked, metadata_checked=metadata_checked)
    except EgnError as exc:
        raise _placed(exc, source) from None
    return doc


def decode_bytes(data: bytes, *, source: str = "<input>", validate: bool = True) -> dict[str, Any]:
    """Decode any binary EGN game, choosing the form by its first byte (spec 5.1).

    ``0x00`` expanded, anything else condensed (``0x01`` or legacy).  An EMN file
    (``0x02``) is refused here: use :func:`decode_emn`.

    Raises:
        SizeLimitError, CodecError, SchemaError: see :func:`decode_condensed`.
    """
    if data[:1] == bytes([MAGIC_EMN]):
        raise CodecError("this is an EMN match file (magic byte 0x02), not a game", Place(source=source))
    if data[:1] == bytes([MAGIC_EXPANDED]):
        return decode_expanded(data, source=source, validate=validate)
    return decode_condensed(data, source=source, validate=validate)


def _ruleset(doc: dict[str, Any]) -> dict[str, Any]:
    meta = doc.get("metadata")
    rules = meta.get("ruleset") if isinstance(meta, dict) else None
    return rules if isinstance(rules, dict) else {}


def encode_condensed(doc: dict[str, Any], *, source: str = "<input>") -> bytes:
    """Encode a valid EGN document as a condensed ``.egnb`` (magic ``0x01``).

    Raises:
        SchemaError: the document breaks the schema.
        CodecError: a deal the bit packer cannot write (e.g. a card not in the deck).
        SizeLimitError: the result would exceed 8 MiB.
    """
    try:
        _validate(doc, source)
        out = bytes([MAGIC_CONDENSED]) + encode_condensed_body(doc, source=source)
    except EgnError as exc:
        raise _placed(exc, source) from None
    _check_size(out, source, what="output")
    return out


def encode_expanded(doc: dict[str, Any], *, source: str = "<input>") -> bytes:
    """Encode a valid EGN document as an expanded ``.expanded.egnb`` (magic ``0x00``).

    String deals are unpacked first (``dealNumber`` = index), as the reference does.

    Raises:
        SchemaError, CodecError, SizeLimitError: as :func:`encode_condensed`.
    """
    try:
        _validate(doc, source)
        rules = _ruleset(doc)

        def deal(i: int, d: Any) -> Any:
            if isinstance(d, str):
                d = unpack_deal(d, i, ruleset=rules, place=Place(deal=i))
            if not isinstance(d, dict):
                raise CodecError(f"deal {d!r} is neither an object nor a string")
            return write_deal(d)

        out = bytes([MAGIC_EXPANDED]) + write_file(doc, deal)
    except EgnError as exc:
        raise _placed(exc, source) from None
    _check_size(out, source, what="output")
    return out


def encode_emn(doc: dict[str, Any], *, source: str = "<input>") -> bytes:
    """Encode a valid EMN document as the match binary (magic ``0x02``).

    Raises:
        SchemaError: the match (or one of its games) is invalid.
        CodecError: a value the protobuf message cannot hold.
    """
    try:
        validate_emn(doc, source=source)
        return bytes([MAGIC_EMN]) + write_match(doc)
    except EgnError as exc:
        raise _placed(exc, source) from None


def decode_emn(data: bytes, *, source: str = "<input>", validate: bool = True) -> dict[str, Any]:
    """Decode an EMN match binary (a leading ``0x02`` is stripped) and validate it.

    Raises:
        SizeLimitError: more than 16 MiB (the reference's EMN cap).
        CodecError: malformed protobuf.
        SchemaError: the decoded match is invalid (``validate=True``).
    """
    _check_size(data, source, MAX_EMN_INPUT)
    if not data:
        raise CodecError("empty input", Place(source=source))
    base = 1 if data[0] == MAGIC_EMN else 0
    try:
        doc = read_match(data[base:], base)
        if validate:
            validate_emn(doc, source=source)
    except EgnError as exc:
        raise _placed(exc, source) from None
    return doc


#: Alias named in the interface notes.
decode_emn_bytes = decode_emn


def baseline(doc: dict[str, Any], *, source: str = "<input>") -> dict[str, Any]:
    """The baseline EGN: validated, then analysis and empty containers stripped (spec 8).

    Raises:
        SchemaError: the document is invalid (invalid documents get no baseline).
    """
    try:
        _validate(doc, source)
    except EgnError as exc:
        raise _placed(exc, source) from None
    out = strip(doc)
    assert isinstance(out, dict)
    return out


def baseline_hash(doc: dict[str, Any], *, source: str = "<input>") -> str:
    """SHA-256 (lower-case hex) of the canonical baseline string (spec 8).

    Raises:
        SchemaError: the document is invalid.
    """
    return sha256_hex(canonical(baseline(doc, source=source)))


def parse_json_text(data: bytes | str, *, source: str = "<input>") -> Any:
    """Parse JSON text (UTF-8, optional BOM; UTF-16 or UTF-32 with theirs) for the CLI and tests.

    Raises:
        CodecError: not text in its encoding or not JSON, naming line and column.
    """
    if isinstance(data, bytes):
        encoding = text_encoding(data)
        try:
            data = data.decode(encoding)
        except UnicodeDecodeError as exc:
            name = "UTF-8" if encoding == "utf-8-sig" else encoding.upper()
            raise CodecError(f"byte {exc.start} is not {name}", Place(source=source)) from None
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:
        raise CodecError(f"line {exc.lineno}, column {exc.colno}: {json_reason(exc)}", Place(source=source)) from None
    except RecursionError:
        raise CodecError("JSON nested too deeply", Place(source=source)) from None



def json_reason(exc: json.JSONDecodeError) -> str:
    """The JSON parser's message made to read after its position: Python's messages for some
    errors end in a dangling "at" (it formats the position after them), e.g.
    "Unterminated string starting at" -> "unterminated string starting here"."""
    msg = exc.msg
    if msg.endswith(" at"):
        msg = msg[: -len(" at")] + " here"
    return msg[:1].lower() + msg[1:]
