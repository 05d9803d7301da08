"""Codec building blocks against the spec's worked examples and edge rules (no shared fixtures)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from engine import codec
from engine.codec.bitstream import BitReader, BitWriter, b64url_decode, b64url_encode, width
from engine.codec.deal_bits import pack_deal, unpack_deal
from engine.codec.jsjson import js_number
from engine.codec.protobuf import Writer, read_fields
from engine.errors import CodecError, EgnError, SchemaError, SizeLimitError
from engine.upgrade import split_production, upgrade_document


def worked_example() -> dict[str, Any]:
    """The document of spec 5.5."""
    return {
        "fileType": "Euchre Game Notation",
        "version": "1.4",
        "metadata": {"players": ["A", "B", "C", "D"], "initialScore": [0, 0], "ruleset": {"loner_lead": "LEFT_OF_DEALER"}},
        "deals": [
            {
                "dealNumber": 0,
                "initialState": {"dealer": 1, "upCard": "Jd"},
                "phases": [
                    {"phaseNumber": 0, "type": "EUCHRE_BIDDING", "calls": ["Pass", "Pass", "Order"], "isAlone": False,
                     "callAnnotations": {"2": ["ok"]}},
                    {"phaseNumber": 1, "type": "TRICK_PLAY", "tricks": [["Ac", "Kc", "Qc", "Jc"]]},
                ],
            }
        ],
    }


def s(text: str) -> bytes:
    return bytes([len(text)]) + text.encode()


HEAD = b"\x0a" + s("Euchre Game Notation") + b"\x12" + s("1.4")
META = b"\x1a\x1c" + b"".join(b"\x22\x03\x0a" + s(p) for p in "ABCD") + b"\x28\x00\x28\x00" + b"\x3a\x02\x28\x00"


def test_worked_example_expanded_bytes() -> None:
    bidding = (b"\x08\x00" + b"\x12" + s("Pass") + b"\x12" + s("Pass") + b"\x12" + s("Order") + b"\x18\x00"
               + b"\x3a\x08\x08\x02\x12\x04\x0a" + s("ok"))
    play = b"\x08\x01\x1a\x10" + b"".join(b"\x0a" + s(c) for c in ("Ac", "Kc", "Qc", "Jc"))
    deal = (b"\x08\x00" + b"\x12\x06\x08\x01\x12" + s("Jd")
            + b"\x1a\x23\x0a\x21" + bidding + b"\x1a\x16\x12\x14" + play)
    assert len(deal) == 0x47
    assert codec.encode_expanded(worked_example()) == b"\x00" + HEAD + META + b"\x22\x47" + deal


def test_worked_example_condensed_bytes_and_hash() -> None:
    doc = worked_example()
    assert codec.encode_condensed(doc) == b"\x01" + HEAD + META + b"\x22" + s("FWhQECAQACb2ubScooA")
    assert codec.baseline_hash(doc) == "c543b38d87f357b54dd1d54936a98ab553abe78871c3a20cc2aa759b7edb1678"
    assert codec.canonical(codec.baseline(doc)).startswith('{"deals":[{"dealNumber":0,"initialState":{"dealer":1')


def test_worked_bitstream_v1_layout() -> None:
    """Spec 7.10, bit by bit: 106 bits, 14 bytes."""
    bits = ("0001" "01" "01011" "010" "0" "001" "0" "1" "00000001" "00000010" "00000001" "0000000000000010"
            "01101111" "01101011" "1" "001" "10110" "10010" "01110" "01010" "0" "0" "1010")
    assert len(bits) == 106
    raw = int(bits + "0" * 6, 2).to_bytes(14, "big")
    deal = worked_example()["deals"][0]
    assert pack_deal(deal, {}) == b64url_encode(raw) == "FWhQECAQACb2ubScooA"
    back = unpack_deal("FWhQECAQACb2ubScooA", 0)
    assert back["phases"][0]["callAnnotations"] == {"2": ["ok"]}
    assert back["phases"][1]["tricks"] == [["Ac", "Kc", "Qc", "Jc"]]


def test_v3_starts_as_the_spec_says() -> None:
    deal = copy.deepcopy(worked_example()["deals"][0])
    deal["phases"][0]["discard"] = "9s"
    raw = b64url_decode(pack_deal(deal, {}))
    bits = format(int.from_bytes(raw, "big"), f"0{8 * len(raw)}b")
    assert bits.startswith("0011" "001" "011" "00" "01011" "0" "010")
    assert unpack_deal(b64url_encode(raw), 0)["phases"][0]["discard"] == "9s"


@pytest.mark.parametrize(("maximum", "bits"), [(0, 1), (1, 1), (3, 2), (7, 3), (15, 4), (23, 5), (35, 6), (255, 8), (65535, 16)])
def test_width_rule(maximum: int, bits: int) -> None:
    assert width(maximum) == bits


def test_oversized_values_are_not_truncated() -> None:
    """The reference writes all binary digits of a value too wide for its field (spec 7.1)."""
    w = BitWriter()
    w.write(8, 3)
    w.write(1, 1)
    assert w.to_bytes() == bytes([0b10001000])
    with pytest.raises(CodecError):
        w.write(-1, 3)


def test_bit_reader_unaligned_and_short() -> None:
    r = BitReader(bytes([0b10110011, 0b01000000]))
    assert r.read(3) == 0b101
    assert r.read_bytes(1) == bytes([0b10011010])
    assert r.rest_is_padding()
    with pytest.raises(Exception):
        r.read(6)


@pytest.mark.parametrize("text", ["FWhQECAQACb2ubScooA", "FWhQECAQACb2ubScooA=", "FWhQECAQACb2ubScooA=="])
def test_base64_padding_optional(text: str) -> None:
    assert b64url_decode(text) == b64url_decode("FWhQECAQACb2ubScooA")


@pytest.mark.parametrize("text", ["not base64!", "A", "AAAA="[:1] + "*"])
def test_base64_garbage_refused(text: str) -> None:
    with pytest.raises(CodecError):
        b64url_decode(text)


def test_negative_int32_is_ten_bytes() -> None:
    w = Writer()
    w.int32(4, -1)
    assert w.getvalue() == bytes.fromhex("20ffffffffffffffffff01")
    field = next(read_fields(w.getvalue()))
    assert field.value == (1 << 64) - 1


def test_annotation_map_order_and_empty_lists() -> None:
    w = Writer()
    from engine.codec.common import write_annotations

    write_annotations(w, 7, {"10": ["b"], "2": [], "3": "wrapped"})
    keys = []
    for f in read_fields(w.getvalue()):
        entry = list(read_fields(f.value))  # type: ignore[arg-type]
        keys.append(entry[0].value)
        if entry[0].value == 2:
            assert entry[1].value == b""  # "12 00": an empty list is still written
    assert keys == [2, 3, 10]


@pytest.mark.parametrize(
    ("value", "text"),
    [(0, "0"), (-0.0, "0"), (1.0, "1"), (1e21, "1e+21"), (1e20, "100000000000000000000"), (1.5e-7, "1.5e-7"),
     (0.000001, "0.000001"), (123.456, "123.456"), (2**53 + 1, "9007199254740992"), (-2.5, "-2.5"), (float("nan"), "null")],
)
def test_js_number(value: float, text: str) -> None:
    assert js_number(value) == text


def test_stringify_orders_integer_keys_first_and_escapes_like_js() -> None:
    assert codec.stringify({"b": 1, "10": 2, "2": 3, "01": 4}) == '{"2":3,"10":2,"b":1,"01":4}'
    assert codec.stringify(["\ud800", "\x7f", "\u2028", "é\n"]) == '["\\ud800","\x7f","\u2028","é\\n"]'
    assert codec.stringify({"a": [], "b": {}}, 2) == '{\n  "a": [],\n  "b": {}\n}'


def test_integral_floats_hash_as_integers() -> None:
    doc = worked_example()
    doc["metadata"]["initialScore"] = [0.0, 0]
    assert codec.baseline_hash(doc) == codec.baseline_hash(worked_example())


@pytest.mark.parametrize(
    ("data", "form"),
    [(b"\x00\x0a", "expanded"), (b"\x01", "condensed"), (b"\x02", "emn"), (b"\x0a\x14Euchre", "legacy-condensed"),
     (b'\xef\xbb\xbf  {"a": 1}', "json"), (b"\n{}", "json"), (b"", "json")],
)
def test_detect(data: bytes, form: str) -> None:
    assert codec.detect(data) == form


def test_legacy_file_without_magic_byte() -> None:
    body = codec.encode_condensed(worked_example())[1:]
    assert codec.decode_bytes(body)["deals"][0]["phases"][1]["tricks"] == [["Ac", "Kc", "Qc", "Jc"]]


@pytest.mark.parametrize("data", [b"", b"\x00", b"\x01", b"\x01\xff", b"\x00\x0a\x05ab", b"\x02", b"\x01\x22\x03###"])
def test_malformed_binaries_give_one_typed_error(data: bytes) -> None:
    with pytest.raises(EgnError) as info:
        if data[:1] == b"\x02":
            codec.decode_emn(data, source="bad.emnb")
        else:
            codec.decode_bytes(data, source="bad.egnb")
    assert str(info.value).startswith("bad.")


def test_emn_bytes_are_not_a_game() -> None:
    with pytest.raises(CodecError, match="EMN"):
        codec.decode_bytes(b"\x02\x0a\x00", source="m.emnb")


def test_size_limit_is_eight_mib_inclusive() -> None:
    limit = 8 * 1024 * 1024
    with pytest.raises(SizeLimitError):
        codec.decode_bytes(b"\x01" + bytes(limit), source="big.egnb")
    # Exactly 8 MiB passes the size check (and then fails as a malformed message, not on size).
    with pytest.raises(EgnError) as info:
        codec.decode_bytes(b"\x01" + b"\x00" * (limit - 1), source="edge.egnb")
    assert not isinstance(info.value, SizeLimitError)


def test_encoded_output_over_cap_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("engine.codec.MAX_BINARY", 64)
    with pytest.raises(SizeLimitError, match="output"):
        codec.encode_expanded(worked_example(), source="w.egn")


def test_card_not_found_names_the_place() -> None:
    doc = worked_example()
    doc["deals"][0]["phases"][1]["tricks"][0][2] = "Kc"
    with pytest.raises(CodecError) as info:
        codec.encode_condensed(doc, source="dup.egn")
    message = str(info.value)
    assert message.startswith("dup.egn: deal 0, phase 1 (TRICK_PLAY), trick 0, card 2")
    assert "Card Kc not found in remaining cards" in message


def test_generic_cards_only_in_expanded() -> None:
    doc = worked_example()
    doc["deals"][0]["phases"][1]["tricks"][0] = ["Xx", "R", "Jx", "B"]
    with pytest.raises(CodecError, match="Card Xx not found"):
        codec.encode_condensed(doc)
    back = codec.decode_bytes(codec.encode_expanded(doc))
    assert back["deals"][0]["phases"][1]["tricks"] == [["Xx", "R", "Jx", "B"]]


def test_non_numeric_annotation_key_is_refused_before_schema() -> None:
    doc = worked_example()
    doc["deals"][0]["phases"][0]["callAnnotations"] = {"__proto__": ["x"]}
    with pytest.raises(EgnError, match="__proto__"):
        codec.encode_expanded(doc)


def test_invalid_document_is_refused_on_encode() -> None:
    doc = worked_example()
    doc["version"] = "1.5"
    with pytest.raises(SchemaError):
        codec.encode_condensed(doc)


def test_round_trip_alternative_lines_mid_trick_and_mid_bidding() -> None:
    doc = worked_example()
    deal = doc["deals"][0]
    deal["phases"][1]["tricks"].append(["Ad", "Ts", "Th", "9h"])
    deal["alternativeLines"] = [
        {"branchIndex": 1, "phases": [
            {"phaseNumber": 1, "type": "EUCHRE_BIDDING", "calls": ["Order"], "isAlone": True},
            {"phaseNumber": 2, "type": "TRICK_PLAY", "tricks": [["Ac", "Kc", "Qc"]]}]},
        {"branchIndex": 5, "phases": [{"phaseNumber": 5, "type": "TRICK_PLAY", "tricks": [["9c", "Tc"], ["Ad", "Ts", "Th", "9h"]]}]},
    ]
    back = codec.decode_bytes(codec.encode_condensed(doc))
    assert back["deals"][0]["alternativeLines"] == deal["alternativeLines"]


def test_upgrade_keeps_production_fields_aside() -> None:
    old = {"fileType": "Euchre Game Notation", "version": "1.0.0", "timings": {"0": 0}, "videoUrl": "",
           "metadata": {"matchId": "x", "players": []},
           "deals": [{"initialState": {"dealer": 0, "upCard": "9s", "kitty": ["Ts"], "player_cards": []}}]}
    rest, production = split_production(old)
    assert production == {"timings": {"0": 0}, "videoUrl": ""}
    assert "timings" not in rest and "timings" in old
    up = upgrade_document(rest)
    assert up["version"] == "1.4"
    assert up["metadata"] == {"players": [], "gameId": "x"}
    assert up["deals"][0]["initialState"] == {"dealer": 0, "upCard": "9s", "playerCards": []}
    assert upgrade_document("text") == "text"
    assert json.dumps(old)  # the input is untouched and still JSON


def _proto_fields(name: str) -> dict[str, dict[str, int]]:
    """message -> field name -> number, from one of the .proto sources in engine/proto."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "engine" / "proto" / name).read_text()
    out: dict[str, dict[str, int]] = {}
    current: list[str] = []
    for line in text.splitlines():
        line = line.split("//")[0].strip()
        if m := re.match(r"(message|enum) (\w+) \{", line):
            current.append(m.group(2))
            out[m.group(2)] = {}
        elif line == "}" and current:
            current.pop()
        elif current and (m := re.search(r"(\w+) = (\d+)", line)):
            out[current[-1]][m.group(1)] = int(m.group(2))
    return out


def test_proto_sources_match_the_hand_written_codec() -> None:
    from engine.codec.common import LONER_LEAD, _RULESET
    from engine.codec.emn import FORMATS, STATUSES

    common = _proto_fields("egn-common.proto")
    assert common["Ruleset"] == {name: number for name, number, _ in _RULESET}
    assert list(common["LonerLead"]) == list(LONER_LEAD)
    emn = _proto_fields("emn.proto")
    assert list(emn["MatchFormatType"]) == list(FORMATS)
    assert list(emn["MatchStatus"]) == list(STATUSES)
    assert common["Metadata"] == {"game_id": 1, "title": 2, "description": 3, "players": 4, "initial_score": 5,
                                  "date": 6, "ruleset": 7, "final_score": 8}
    expanded = _proto_fields("egn-expanded.proto")
    assert expanded["BiddingPhase"]["callAnnotations"] == 7 and expanded["TrickPlayPhase"]["tricks"] == 3
