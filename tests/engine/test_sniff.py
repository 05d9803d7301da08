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
