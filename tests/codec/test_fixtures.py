"""Every vector of the shared reference fixtures: bytes, decoded JSON, hashes, rejections.

The fixtures were written by the reference ``euchre-game-notation`` 1.4.0 (see
``../shared/fixtures/egn/README.md``).  Encoded bytes must be identical, decoded JSON equal
after key-order normalisation (and, as printed by ``convert``, identical text), hashes
equal, and every refusal refused.  Deliberate deviations are listed in ``DEVIATIONS`` with
the reason; each has its own test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine import codec
from engine.codec.bitstream import b64url_decode
from engine.codec.condensed import condensed_deals
from engine.codec.deal_bits import choose_version
from engine.errors import CodecError, EgnError
from engine.upgrade import upgrade_document
from tests.support import shared_egn as shared, shared_names as files, tsv_rows

#: Reading must never return garbage silently.  The reference decodes these files through
#: its legacy V0 fallback into a schema-valid but wrong game; we refuse them.
DEVIATIONS = {
    "synthetic/quirks/q09_num_players_9.egnb": (
        "num_players 9 overflows the 3-bit V2 field, the V2 reading fails and the legacy V0 "
        "fallback yields dealer 0 / up-card As instead of dealer 8 / Ad: garbage"
    ),
}

REJECTED = {(row[0], row[1]) for row in tsv_rows("rejected.tsv")}
HASHES = [(row[0], row[1]) for row in tsv_rows("expected-hashes.tsv")]


def norm(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False)


def outputs_for(rel: str) -> Path:
    """Stem of the reference outputs for an input ``.egn`` (same folder layout as the README)."""
    base = shared()
    stem = rel[: -len(".egn")]
    if stem.startswith("examples/"):
        return base / "examples_out" / stem[len("examples/") :]
    if stem.startswith("upgraded/"):
        return base / "upgraded_out" / stem[len("upgraded/") :]
    return base / stem


def load_json(rel: str) -> Any:
    return json.loads((shared() / rel).read_text(encoding="utf-8"))


ENCODE_STEP = {"condensed": "egn-convert condensed encode", "expanded": "egn-convert expanded encode"}


@pytest.mark.parametrize("form", ["condensed", "expanded"])
@pytest.mark.parametrize("rel", files("**/*.egn"))
def test_encode(rel: str, form: str) -> None:
    doc = load_json(rel)
    suffix = ".egnb" if form == "condensed" else ".expanded.egnb"
    expected = outputs_for(rel).with_name(outputs_for(rel).name + suffix)
    encode = codec.encode_condensed if form == "condensed" else codec.encode_expanded
    if expected.exists():
        assert encode(doc, source=rel) == expected.read_bytes()
    else:
        assert (rel, ENCODE_STEP[form]) in REJECTED, "no reference output and no recorded refusal"
        with pytest.raises(EgnError) as info:
            encode(doc, source=rel)
        assert rel in str(info.value)


FEATURES = [(row[0], row[1]) for row in tsv_rows("features.tsv") if row[1] != "-"]


@pytest.mark.parametrize(("rel", "headers"), FEATURES, ids=[f[0] for f in FEATURES])
def test_stream_versions_match_features(rel: str, headers: str) -> None:
    """Each deal's bitstream version is the one the reference chose (``features.tsv``)."""
    doc = load_json(rel)
    got = []
    for text in condensed_deals(doc, source=rel):
        nibble = b64url_decode(text)[0] >> 4 if text else -1
        got.append(f"hdr{nibble:04b}" if nibble in (1, 2, 3) else "no-header")
    assert ",".join(got) == headers
    rules = doc["metadata"].get("ruleset") or {}
    chosen = [choose_version(d, rules) for d in doc["deals"] if isinstance(d, dict)]
    assert chosen == [int(h[3:], 2) for h, d in zip(got, doc["deals"]) if isinstance(d, dict)]


def _committed_example(rel: str) -> bool:
    return rel.startswith("examples/") and rel.endswith(".egnb")


@pytest.mark.parametrize("rel", files("**/*.egnb"))
def test_decode(rel: str) -> None:
    path = shared() / rel
    data = path.read_bytes()
    expected = path.with_name(path.name + ".json")
    if rel in DEVIATIONS:
        with pytest.raises(CodecError, match="legacy V0"):
            codec.decode_bytes(data, source=rel)
        return
    if expected.exists():
        doc = codec.decode_bytes(data, source=rel)
        text = expected.read_text(encoding="utf-8")
        assert norm(doc) == norm(json.loads(text))
        # Beyond the required normalised equality: ``convert`` prints the same text.
        assert codec.stringify(doc, 2) == text
    elif _committed_example(rel):
        # Stale committed binaries: version 1.3 where a fresh encode says 1.4, else identical.
        fresh = shared() / "examples_out" / rel[len("examples/") :]
        doc = codec.decode_bytes(data, source=rel)
        assert doc["version"] == "1.3"
        assert norm({**doc, "version": "1.4"}) == norm(codec.decode_bytes(fresh.read_bytes()))
    else:
        assert (rel, "egn-convert decode") in REJECTED, "no decoded JSON and no recorded refusal"
        with pytest.raises(EgnError) as info:
            codec.decode_bytes(data, source=rel)
        assert rel in str(info.value)


@pytest.mark.parametrize(("rel", "digest"), HASHES, ids=[h[0] for h in HASHES])
def test_baseline_hash(rel: str, digest: str) -> None:
    path = shared() / rel
    if rel.endswith(".egn"):
        doc = json.loads(path.read_text(encoding="utf-8"))
    elif rel in DEVIATIONS:
        with pytest.raises(CodecError):
            codec.decode_condensed(path.read_bytes(), source=rel)
        return
    elif rel.endswith(".expanded.egnb"):
        doc = codec.decode_expanded(path.read_bytes(), source=rel)
    else:
        doc = codec.decode_condensed(path.read_bytes(), source=rel)
    assert codec.baseline_hash(doc, source=rel) == digest


REJECTED_ROWS = sorted(REJECTED)


@pytest.mark.parametrize(("rel", "step"), REJECTED_ROWS, ids=[f"{r}:{s}" for r, s in REJECTED_ROWS])
def test_rejected(rel: str, step: str) -> None:
    path = shared() / rel
    with pytest.raises(EgnError):
        if rel.endswith(".egn"):
            doc = json.loads(path.read_text(encoding="utf-8"))
            if "baseline" in step:
                codec.baseline_hash(doc, source=rel)
            elif "expanded" in step:
                codec.encode_expanded(doc, source=rel)
            else:
                codec.encode_condensed(doc, source=rel)
        elif "baseline" in step:
            # egn-baseline reads .egnb as condensed unless told --expanded.
            codec.baseline_hash(codec.decode_condensed(path.read_bytes(), source=rel), source=rel)
        else:
            codec.decode_bytes(path.read_bytes(), source=rel)


def _reference_bug_files() -> list[str]:
    """Binaries the reference writes but cannot read back (documented bugs, spec 13)."""
    return sorted(r for r, step in REJECTED if step == "egn-convert decode")


@pytest.mark.parametrize("rel", _reference_bug_files())
def test_reference_bug_bytes_are_written(rel: str) -> None:
    """We write the reference's bytes even where its stream is broken, and refuse to read them.

    Loggers and archives exchange these exact files: writing anything else would make the
    same game a different file here and there.  Reading them back can only give garbage
    (the reference's own decoder fails validation on them), so the decoder refuses.
    """
    source = shared() / (rel[: -len(".egnb")] + ".egn")
    doc = json.loads(source.read_text(encoding="utf-8"))
    written = codec.encode_condensed(doc, source=str(source))
    assert written == (shared() / rel).read_bytes()
    with pytest.raises(EgnError):
        codec.decode_bytes(written, source=rel)
    # The expanded form of the same game is sound and round-trips.
    expanded = codec.encode_expanded(doc, source=str(source))
    assert codec.decode_bytes(expanded, source=rel)["deals"]


def test_q09_reference_decode_is_garbage() -> None:
    """Why q09 is refused: the reference's decoded deal is not the deal that was written."""
    written = load_json("synthetic/quirks/q09_num_players_9.egn")["deals"][0]["initialState"]
    reference = load_json("synthetic/quirks/q09_num_players_9.egnb.json")["deals"][0]["initialState"]
    assert (written["dealer"], written["upCard"]) == (8, "Ad")
    assert (reference["dealer"], reference["upCard"]) != (8, "Ad")
    with pytest.raises(CodecError, match="num_players 9"):
        codec.decode_bytes((shared() / "synthetic/quirks/q09_num_players_9.egnb").read_bytes(), source="q09")


@pytest.mark.parametrize("rel", ["synthetic/quirks/q20_legacy_v0_streams.egnb", "synthetic/quirks/q21_legacy_v0_header_collision.egnb"])
def test_genuine_legacy_streams_still_read(rel: str) -> None:
    """The garbage rule must not refuse real V0 streams, including one whose bits start 0001."""
    doc = codec.decode_bytes((shared() / rel).read_bytes(), source=rel)
    assert norm(doc) == norm(load_json(rel + ".json"))


@pytest.mark.parametrize("rel", files("**/*.emn"))
def test_emn(rel: str) -> None:
    doc = load_json(rel)
    out = shared() / (rel.replace("examples/", "examples_out/", 1)[: -len(".emn")] + ".emnb")
    assert codec.encode_emn(doc, source=rel) == out.read_bytes()
    decoded = codec.decode_emn(out.read_bytes(), source=str(out))
    assert norm(decoded) == norm(json.loads(out.with_name(out.name + ".json").read_text(encoding="utf-8")))


@pytest.mark.parametrize("rel", files("upgraded/**/*.egn"))
def test_upgrade_matches_reference_text(rel: str) -> None:
    original = load_json("examples/" + rel[len("upgraded/") :])
    upgraded = upgrade_document(original)
    assert codec.stringify(upgraded, 2) == (shared() / rel).read_text(encoding="utf-8")
    assert original["version"] == "1.0.0", "the input must not be modified"
    codec.baseline_hash(upgraded, source=rel)  # an upgraded file validates


def test_fixture_inventory_is_complete() -> None:
    """Guard against an empty or partial parametrisation (e.g. a moved fixture folder)."""
    shared()
    assert len(files("**/*.egn")) >= 300
    assert len(files("**/*.egnb")) >= 600
    assert len(HASHES) == 902
    assert len(REJECTED) >= 58
