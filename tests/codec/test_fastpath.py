"""The fast acceptance check (engine.fastcheck) never accepts what full validation refuses.

``accepts_document(doc)`` lets the codecs skip the pydantic models and the annotation-key
walk; it must imply that both pass.  Checked on every fixture game, on targeted edge cases
and on many mutated documents.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from engine.codec.common import annotation_keys_numeric
from engine.errors import EgnError
from engine.validate import accepts_document, check_document, validate_document
from overlay.bench.fuzz import mutate_json
from tests.support import SHARED_EGN as SHARED, shared_egn as shared


def _full_verdict(doc: Any, reference: bool = True) -> str | None:
    """The error the slow path raises (None when it accepts)."""
    try:
        annotation_keys_numeric(doc, source="x")
        validate_document(doc, source="x", reference=reference)
    except EgnError as exc:
        return str(exc)
    return None


def _games() -> list[Any]:
    if not SHARED.is_dir():
        return []
    out = []
    for path in sorted(SHARED.rglob("*.egn")):
        try:
            out.append(json.loads(path.read_text(encoding="utf-8")))
        except ValueError:
            continue
    return out


def _assert_sound(doc: Any) -> None:
    for reference in (True, False):
        if accepts_document(doc, reference=reference):
            assert _full_verdict(doc, reference) is None, json.dumps(doc)[:300]


def test_fixture_games_take_the_fast_path_when_valid() -> None:
    shared()
    games = _games()
    assert games
    fast = 0
    for doc in games:
        _assert_sound(doc)
        if _full_verdict(doc) is None:
            # every valid fixture game is plain JSON: the fast path must take it
            assert accepts_document(doc), doc.get("metadata", {}).get("title")
            fast += 1
    assert fast > 250


def _base() -> dict[str, Any]:
    return {
        "fileType": "Euchre Game Notation",
        "version": "1.4",
        "metadata": {"players": ["a", "b", "c", "d"], "initialScore": [0, 0], "ruleset": {"min_rank": 9}},
        "deals": [
            {
                "dealNumber": 0,
                "initialState": {"dealer": 0, "upCard": "9s", "playerCards": [["Ts"], []]},
                "phases": [
                    {"phaseNumber": 0, "type": "EUCHRE_BIDDING", "calls": ["Pass", "Order"], "isAlone": False,
                     "callAnnotations": {"1": ["ok"]}},
                    {"phaseNumber": 1, "type": "TRICK_PLAY", "tricks": [["Js", "Qs", "Ks", "As"]]},
                ],
                "alternativeLines": [{"branchIndex": 1, "phases": [
                    {"phaseNumber": 1, "type": "EUCHRE_BIDDING", "calls": ["Pass"]}]}],
            },
            "AQID",
        ],
    }


EDITS: list[tuple[str, Any]] = [
    ("deals/0/dealNumber", 2**70),
    ("deals/0/dealNumber", 3.0),
    ("deals/0/dealNumber", True),
    ("deals/0/dealNumber", -1),
    ("deals/0/initialState/upCard", "9s\n"),
    ("deals/0/initialState/upCard", "Zz"),
    ("deals/0/initialState/dealer", 10),
    ("deals/0/initialState/playerCards", None),
    ("deals/0/initialState/playerCards", (["Ts"],)),
    ("deals/0/phases/0/isAlone", None),
    ("deals/0/phases/0/isAlone", 1),
    ("deals/0/phases/0/calls", ["Pass"] * 17),
    ("deals/0/phases/0/callAnnotations", {"1": ["\ud800"]}),
    ("deals/0/phases/0/callAnnotations", {"1": ["é" * 1025]}),
    ("deals/0/phases/0/callAnnotations", {"x1": ["ok"]}),
    ("deals/0/phases/0/callAnnotations", {"١": ["ok"]}),
    ("deals/0/phases/0/callAnnotations", None),
    ("deals/0/phases/0/type", "TRICK_PLAY"),
    ("deals/0/phases/1/playAnnotations", {"0": []}),
    ("deals/0/phases/1/callAnnotations", {"0": []}),
    ("deals/0/phases/1/tricks", [["Js"]] * 11),
    ("deals/0/alternativeLines/0/phases", []),
    ("deals/0/alternativeLines", None),
    ("deals/0/extra", 1),
    ("deals/1", "not base64!"),
    ("metadata/players/0", "\ud800"),
    ("metadata/players/0", {"name": "a", "playerIds": [{"id": "1", "source": "x"}], "id": "z"}),
    ("metadata/players/0", {"name": "a", "playerIds": [{"id": "1"}]}),
    ("metadata/date", "2026-05-30T03:51"),
    ("metadata/date", "2026-02-30T03:51:00Z"),
    ("metadata/ruleset", {"winning_score": 0}),
    ("metadata/ruleset", {"winning_score": 5, "num_deals": 3}),
    ("metadata/ruleset", {"num_deals": -1}),
    ("metadata/ruleset", {"loner_lead": "LEFT_OF_LONER", "std": False}),
    ("metadata/ruleset", {"std": 1}),
    ("metadata/ruleset", {"min_rank": None}),
    ("metadata/ruleset", {"callAnnotations": {"x": []}}),
    ("metadata/ruleset", None),
    ("metadata/initialScore", [1, 2, 3]),
    ("metadata/finalScore", [1, True]),
    ("version", "1.5"),
    ("fileType", "Euchre Match Notation"),
]


def _set(doc: Any, path: str, value: Any) -> None:
    parts = [int(p) if p.isdigit() else p for p in path.split("/")]
    node = doc
    for part in parts[:-1]:
        node = node[part]
    node[parts[-1]] = value


def test_base_document_is_fast() -> None:
    doc = _base()
    assert accepts_document(doc) and _full_verdict(doc) is None


@pytest.mark.parametrize("path,value", EDITS, ids=[f"{p}={v!r}"[:60] for p, v in EDITS])
def test_edge_cases_are_sound(path: str, value: Any) -> None:
    doc = _base()
    _set(doc, path, value)
    _assert_sound(doc)


def test_check_document_raises_what_validate_document_raises() -> None:
    doc = _base()
    doc["deals"][0]["phases"][0]["calls"] = ["Nope"]
    with pytest.raises(EgnError) as slow:
        validate_document(doc, source="f.egn")
    with pytest.raises(EgnError) as fast:
        check_document(doc, source="f.egn")
    assert str(fast.value) == str(slow.value)
    assert check_document(_base()) is None


def test_mutated_documents_are_sound() -> None:
    rng = random.Random(20261130)
    seeds = [json.dumps(d).encode() for d in _games()[:80]] or [json.dumps(_base()).encode()]
    for _ in range(1500):
        data = rng.choice(seeds)
        for _ in range(rng.randint(1, 3)):
            data = mutate_json(data, rng)
        try:
            doc = json.loads(data)
        except ValueError:
            continue
        _assert_sound(copy.deepcopy(doc))


# --- codec fast paths: same bytes, documents and errors as the general code -------------


def _outcome(fn: Any, *args: Any) -> str:
    try:
        result = fn(*args)
    except EgnError as exc:
        return f"{type(exc).__name__}: {exc}"
    return repr(result)


def _general_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Turn every codec fast path off (the general readers/writers do all the work)."""
    from engine.codec import bitstream, condensed, deal_unpack, expanded, protobuf

    monkeypatch.setattr(expanded, "read_file_fast", lambda data, condensed: None)
    monkeypatch.setattr(condensed, "read_file_fast", lambda data, condensed: None)
    monkeypatch.setattr(expanded, "_CARD_FIELDS", {})
    monkeypatch.setattr(deal_unpack, "read_tricks", lambda *args: None)
    monkeypatch.setattr(bitstream, "SMALL_STREAM", -1)
    monkeypatch.setattr(protobuf, "_SHORT_LEN", -1)
    monkeypatch.setattr(protobuf, "SHORT_STRINGS", {})
    monkeypatch.setattr(expanded, "SHORT_STRINGS", {})


def _mutated_binaries(seed: int, count: int, rounds: int) -> list[bytes]:
    """The fixture binaries, then ``count`` of them mutated 1 to ``rounds`` times."""
    from overlay.bench.fuzz import mutate

    rng = random.Random(seed)
    blobs = [p.read_bytes() for p in sorted(shared().rglob("*.egnb"))]
    inputs = list(blobs)
    for _ in range(count):
        data = rng.choice(blobs)
        for _ in range(rng.randint(1, rounds)):
            data = mutate(data, rng, blobs)
        inputs.append(data)
    return inputs


def test_fast_paths_match_general_code(monkeypatch: pytest.MonkeyPatch) -> None:
    from engine import codec

    inputs = _mutated_binaries(7, 1200, 3)
    docs = _games()[:120]

    def run_all() -> list[str]:
        out = [_outcome(codec.decode_bytes, b) for b in inputs]
        out += [_outcome(lambda d: codec.decode_bytes(d, validate=False), b) for b in inputs]
        out += [_outcome(codec.encode_condensed, d) for d in docs]
        out += [_outcome(codec.encode_expanded, d) for d in docs]
        return out

    fast = run_all()
    _general_only(monkeypatch)
    general = run_all()
    assert fast == general
    assert sum(o.startswith("{") for o in fast) > 300  # plenty of inputs decode


def test_parts_the_decoders_vouch_for_pass_the_fast_check() -> None:
    """Both decoders' "deals certainly valid" and "metadata certainly valid" flags let
    validation skip those parts: on the fixtures and on mutated binaries, a document must
    pass the full fast check whenever it passes the check that trusts a flag."""
    from engine.codec.condensed import decode_condensed_body
    from engine.codec.expanded import read_expanded

    inputs = _mutated_binaries(11, 3000, 2)
    vouched = {(form, part): 0 for form in (0, 1) for part in ("deals", "metadata")}
    for data in inputs:
        if len(data) < 2 or data[0] not in (0, 1):
            continue
        reader = read_expanded if data[0] == 0 else decode_condensed_body
        try:
            doc, deals_flag, meta_flag = reader(data[1:], 1)
        except EgnError:
            continue
        if deals_flag and accepts_document(doc, deals_checked=True):
            vouched[data[0], "deals"] += 1
            assert accepts_document(doc), data[:80]
        if meta_flag and _accepts_trusting_metadata(doc):
            vouched[data[0], "metadata"] += 1
            assert accepts_document(doc), data[:80]
    assert min(vouched.values()) > 100, vouched


def _accepts_trusting_metadata(doc: Any) -> bool:
    """The fast check as the codecs call it when a decoder vouches for the metadata."""
    from engine.fastcheck import accepts
    from engine.model import DEAL_STRING_RE, REFERENCE_VERSION_RE, date_ok

    return accepts(doc, REFERENCE_VERSION_RE, date_ok, DEAL_STRING_RE, metadata_checked=True)


def _has_player_object(doc: Any) -> bool:
    return any(isinstance(p, dict) for p in doc.get("metadata", {}).get("players", ()))


def _has_alone_defender_minus_one(doc: Any) -> bool:
    return any(
        phase.get("aloneDefender") == -1 for deal in doc.get("deals", ()) if isinstance(deal, dict) for phase in deal["phases"]
    )


def _has_card_exchange(doc: Any) -> bool:
    return any(phase.get("cardExchanges") for deal in doc.get("deals", ()) if isinstance(deal, dict) for phase in deal["phases"])


@pytest.mark.parametrize("shape", [_has_player_object, _has_alone_defender_minus_one, _has_card_exchange])
def test_rarer_shapes_take_the_one_pass_reader(shape: Any) -> None:
    """Fixture games with players as objects, an ``aloneDefender`` of -1 (ten bytes on the
    wire) or card exchanges are read in one pass, to the general reader's document, and the reader's
    flags agree with the fast check."""
    from engine import codec
    from engine.codec.expanded import read_deal, read_file
    from engine.codec.fastread import read_file_fast

    read = 0
    for doc in filter(shape, _games()):
        try:
            body = codec.encode_expanded(doc)[1:]
        except EgnError:
            continue
        fast = read_file_fast(body, condensed=False)
        assert fast is not None, doc["metadata"].get("title")
        general = read_file(body, 1, lambda _i, payload, offset: read_deal(payload, offset))
        assert json.dumps(fast[0]) == json.dumps(general)
        assert fast[1] and fast[2] and accepts_document(general)
        read += 1
    assert read >= 2
