"""The one content sniffer (engine.sniff): what each first byte means, for the loader and the codecs alike."""

from __future__ import annotations

import pytest

from engine import codec, load, sniff
from engine.errors import CodecError, SchemaError
from engine.load import load_game


@pytest.mark.parametrize(
    ("data", "form"),
    [
        (b"\x00\x0a", "expanded"),
        (b"\x01", "condensed"),
        (b"\x02", "emn"),
        (b"\x0a\x14Euchre", "legacy-condensed"),
        (b'\xef\xbb\xbf  {"a": 1}', "json"),
        (b"\n{}", "json"),
        (b"[1, 2]", "json"),
        (b"", "json"),
        # JSON scalars are never EGN documents (RFC 4627 JSON text is an object or an array):
        # their first byte is read as a protobuf tag, as the reference's decoder reads it
        (b"123", "legacy-condensed"),
        (b'"x"', "legacy-condensed"),
        (b"true", "legacy-condensed"),
        (b"-1", "legacy-condensed"),
        (b"\xbb{}", "legacy-condensed"),  # a broken BOM is not a BOM
        # UTF-16 text (Windows PowerShell's Out-File and >) and UTF-32 LE: text, not a protobuf
        # message (0xFF and 0xFE would be wire types 7 and 6, which do not exist)
        (b"\xff\xfe{\x00}\x00", "json"),
        (b"\xfe\xff\x00{\x00}", "json"),
        (b"\xff\xfe\x00\x00{\x00\x00\x00", "json"),
    ],
)
def test_each_form_is_told_by_its_first_bytes(data: bytes, form: str) -> None:
    assert sniff.detect_form(data) == form
    assert codec.detect(data) == form
    assert codec.is_binary(data) == (form != "json")


def test_loader_and_codecs_share_one_sniffer() -> None:
    assert codec.detect is sniff.detect_form
    assert codec.is_binary is sniff.is_binary
    assert load.detect_form is sniff.detect_form


@pytest.mark.parametrize(
    ("data", "error", "words"),
    [
        (b"123", CodecError, "field 6"),  # read as legacy condensed, refused by the protobuf reader
        (b"[1, 2]", SchemaError, "not an array"),  # read as JSON, refused as a document
    ],
)
def test_the_loader_refuses_what_the_sniffer_sends_it(data: bytes, error: type[Exception], words: str) -> None:
    with pytest.raises(error) as exc:
        load_game(data, source="x.egn")
    assert words in str(exc.value)
    assert str(exc.value).startswith("x.egn")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be-bom", "utf-32", "utf-8-sig"])
def test_a_game_saved_as_utf16_or_utf32_text_loads_as_the_utf8_file(encoding: str) -> None:
    """A logger on Windows saved the game with PowerShell (UTF-16 with its byte-order mark):
    it was read as a binary file ("unsupported wire type 7 (field 253935) at byte 0"); it
    is the same game as the UTF-8 file."""
    import json

    from engine.generate import generate_game

    text = json.dumps(generate_game(4, deals=2), ensure_ascii=False)
    data = b"\xfe\xff" + text.encode("utf-16-be") if encoding == "utf-16-be-bom" else text.encode(encoding)
    want = load_game(text.encode(), source="g.egn")
    got = load_game(data, source="g.egn")
    assert got.document == want.document and got.timeline.steps == want.timeline.steps
    if encoding.startswith("utf-16"):
        with pytest.raises(CodecError, match=r"^g\.egn: byte \d+ is not UTF-16$"):
            load_game(data[:101], source="g.egn")  # cut in the middle of a character
