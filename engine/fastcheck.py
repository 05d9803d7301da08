"""A fast acceptance test for EGN documents, for callers that only need "valid or not".

:func:`accepts` walks the plain JSON values and returns ``True`` only for a document that
the pydantic models of :mod:`engine.model` accept *and* whose annotation keys are all
decimal digits.  It is conservative: anything unusual (a float where an integer goes, a
string with a lone surrogate, an integer outside 64 bits, a tuple for a list, a card
spelled with a trailing newline ...) makes it answer ``False``, and the caller then runs
the full validation, which alone words the error.  So what is accepted or refused, and
every error message, is exactly what :func:`engine.validate.validate_document` decides;
this module only skips building a model nobody reads for the common valid document.

``tests/codec/test_fastpath.py`` checks it against the models on the fixtures and on
mutated documents (``accepts(doc)`` must imply that validation passes).
"""

from __future__ import annotations

import re
from typing import Any

import annotated_types

from .model import MAX_DEALS
from .ruleset import LonerLead, Ruleset

__all__ = ["accepts", "ruleset_ok", "CARD_TEXTS", "CALLS", "TEXT_LIMITS", "NAME_LIMIT"]

_RANKS = "78N9TJQKAX"
_SUIT_LETTERS = "SsHhCcDdxtngh"
#: Every string ``CARD_RE`` matches without a trailing newline (the newline case falls back).
CARD_TEXTS = frozenset([r + s for r in _RANKS for s in _SUIT_LETTERS] + ["L", "R", "B"])
CALLS = frozenset(("Pass", "Order", "s", "h", "d", "c", "n", "x"))
# Lists of cards and calls are checked by set inclusion (one C call per list).  Equality
# stands for "is this string": a str subclass passes, as it passes the models; an element
# that cannot be hashed raises TypeError, which accepts() turns into False.
_CARDS_OK = CARD_TEXTS.issuperset
_CALLS_OK = CALLS.issuperset
_LISTS_ONLY = frozenset((list,)).issuperset
_BIDDING = "EUCHRE_BIDDING"
_PLAY = "TRICK_PLAY"
_FILE_TYPE = "Euchre Game Notation"
_I64 = 1 << 63

_DEAL_KEYS = frozenset(("dealNumber", "initialState", "phases", "alternativeLines"))
_STATE_KEYS = frozenset(("dealer", "upCard", "playerCards"))
_BID_KEYS = frozenset(
    ("phaseNumber", "type", "calls", "isAlone", "aloneDefender", "discard", "cardExchanges", "callAnnotations")
)
_PLAY_KEYS = frozenset(("phaseNumber", "type", "tricks", "isAlone", "playAnnotations"))
_LINE_KEYS = frozenset(("branchIndex", "phases"))
_EXCHANGE_KEYS = frozenset(("sender", "receiver", "cards"))
_META_KEYS = frozenset(
    ("gameId", "title", "description", "players", "initialScore", "finalScore", "date", "ruleset")
)
#: The longest ``Metadata`` strings the schema allows, by key (characters, as pydantic counts).
TEXT_LIMITS = {"gameId": 64, "title": 128, "description": 1024, "date": 64}
#: The longest player name (and player id) the schema allows.
NAME_LIMIT = 64
_PLAYER_KEYS = frozenset(("name", "playerIds", "id"))
_ID_KEYS = frozenset(("id", "source"))


def _ruleset_kinds() -> dict[str, str]:
    """Field name -> "bool" / "int" / "int>=0" / "lead", from the model itself.

    A field this table cannot describe exactly is left out, so a ruleset that uses it
    goes to the full validation.
    """
    kinds: dict[str, str] = {}
    for name, field in Ruleset.model_fields.items():
        meta = field.metadata
        if field.annotation is bool and not meta:
            kinds[name] = "bool"
        elif field.annotation is int and not meta:
            kinds[name] = "int"
        elif field.annotation is int and len(meta) == 1 and isinstance(meta[0], annotated_types.Ge) and meta[0].ge == 0:
            kinds[name] = "int>=0"
        elif field.annotation is LonerLead and not meta:
            kinds[name] = "lead"
    return kinds


_RULESET_KINDS = _ruleset_kinds()
_LEADS = frozenset(m.value for m in LonerLead)


def _text(value: Any, limit: int) -> bool:
    """A plain string of at most ``limit`` characters that pydantic can read (no lone surrogate)."""
    if type(value) is not str or len(value) > limit:
        return False
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _int(value: Any) -> bool:
    return type(value) is int and -_I64 <= value < _I64


def _cards(value: Any) -> bool:
    return type(value) is list and len(value) <= 10 and _CARDS_OK(value)


def _annotations(value: Any) -> bool:
    if value is None:
        return True
    if type(value) is not dict:
        return False
    for key, texts in value.items():
        if type(key) is not str or not (key.isascii() and key.isdigit()):
            return False
        if type(texts) is not list or len(texts) > 50:
            return False
        for text in texts:
            if not _text(text, 1024):
                return False
    return True


def _phase(phase: Any) -> bool:
    if type(phase) is not dict:
        return False
    kind = phase.get("type")
    if kind == _BIDDING and type(kind) is str:
        if not phase.keys() <= _BID_KEYS or not _int(phase.get("phaseNumber")):
            return False
        calls = phase.get("calls")
        if type(calls) is not list or len(calls) > 16 or not _CALLS_OK(calls):
            return False
        alone = phase.get("isAlone")
        if alone is not None and type(alone) is not bool:
            return False
        defender = phase.get("aloneDefender")
        if defender is not None and not _int(defender):
            return False
        discard = phase.get("discard")
        if discard is not None and (type(discard) is not str or discard not in CARD_TEXTS):
            return False
        exchanges = phase.get("cardExchanges")
        if exchanges is not None:
            if type(exchanges) is not list or len(exchanges) > 4:
                return False
            for ex in exchanges:
                if type(ex) is not dict or not ex.keys() <= _EXCHANGE_KEYS:
                    return False
                sender = ex.get("sender")
                if sender is not None and not _seat(sender):
                    return False
                if not _seat(ex.get("receiver")) or not _cards(ex.get("cards")):
                    return False
        return _annotations(phase.get("callAnnotations"))
    if kind == _PLAY and type(kind) is str:
        if not phase.keys() <= _PLAY_KEYS or not _int(phase.get("phaseNumber")):
            return False
        tricks = phase.get("tricks")
        if type(tricks) is not list or len(tricks) > 10:
            return False
        # Every trick a list of at most ten cards, checked list by list in C.
        if tricks and not (
            _LISTS_ONLY(map(type, tricks)) and max(map(len, tricks)) <= 10 and all(map(_CARDS_OK, tricks))
        ):
            return False
        alone = phase.get("isAlone")
        if alone is not None and type(alone) is not bool:
            return False
        return _annotations(phase.get("playAnnotations"))
    return False


def _seat(value: Any) -> bool:
    return type(value) is int and 0 <= value <= 9


def _deal(deal: Any) -> bool:
    if type(deal) is not dict or not deal.keys() <= _DEAL_KEYS:
        return False
    number: Any = deal.get("dealNumber")
    if not _int(number) or number < 0:
        return False
    state = deal.get("initialState")
    if type(state) is not dict or not state.keys() <= _STATE_KEYS:
        return False
    if not _seat(state.get("dealer")):
        return False
    up = state.get("upCard")
    if type(up) is not str or up not in CARD_TEXTS:
        return False
    hands = state.get("playerCards")
    if hands is not None:
        if type(hands) is not list or len(hands) > 10:
            return False
        for hand in hands:
            if not _cards(hand):
                return False
    phases = deal.get("phases")
    if type(phases) is not list or len(phases) > 2:
        return False
    for phase in phases:
        if not _phase(phase):
            return False
    lines = deal.get("alternativeLines")
    if lines is not None:
        if type(lines) is not list or len(lines) > 50:
            return False
        for line in lines:
            if type(line) is not dict or not line.keys() <= _LINE_KEYS:
                return False
            branch: Any = line.get("branchIndex")
            if not _int(branch) or branch < 0:
                return False
            line_phases = line.get("phases")
            if type(line_phases) is not list or not line_phases:
                return False
            for phase in line_phases:
                if not _phase(phase):
                    return False
    return True


def _player(player: Any) -> bool:
    if type(player) is str:
        return _text(player, NAME_LIMIT)
    if type(player) is not dict or not player.keys() <= _PLAYER_KEYS:
        return False
    if not _text(player.get("name"), NAME_LIMIT):
        return False
    ident = player.get("id")
    if ident is not None and not _text(ident, NAME_LIMIT):
        return False
    ids = player.get("playerIds")
    if ids is None:
        return True
    if type(ids) is not list or len(ids) > 10:
        return False
    for item in ids:
        if type(item) is not dict or item.keys() != _ID_KEYS:
            return False
        if not _text(item["id"], NAME_LIMIT) or not _text(item["source"], NAME_LIMIT):
            return False
    return True


def _scores(value: Any) -> bool:
    if type(value) is not list or len(value) > 2:
        return False
    return all(_int(v) for v in value)


def ruleset_ok(rules: Any) -> bool:
    """True only if ``rules`` (a ``metadata.ruleset`` value, ``None`` for none) certainly
    passes the schema; :mod:`engine.codec.fastmeta` asks once per distinct ruleset."""
    if rules is None:
        return True
    if type(rules) is not dict:
        return False
    for key, value in rules.items():
        kind = _RULESET_KINDS.get(key)
        if kind is None:
            return False
        if kind == "bool":
            if type(value) is not bool:
                return False
        elif kind == "lead":
            if type(value) is not str or value not in _LEADS:
                return False
        elif not _int(value) or (kind == "int>=0" and value < 0):
            return False
    if "winning_score" in rules and ("num_deals" in rules or rules["winning_score"] == 0):
        return False
    return True


def _metadata(meta: Any, date_ok: Any) -> bool:
    if type(meta) is not dict or not meta.keys() <= _META_KEYS:
        return False
    for key in ("gameId", "title", "description"):
        limit = TEXT_LIMITS[key]
        value = meta.get(key)
        if value is not None and not _text(value, limit):
            return False
    players = meta.get("players")
    if type(players) is not list or len(players) > 10:
        return False
    for player in players:
        if not _player(player):
            return False
    if not _scores(meta.get("initialScore")):
        return False
    final = meta.get("finalScore")
    if final is not None and not _scores(final):
        return False
    date = meta.get("date")
    if date is not None and not (_text(date, TEXT_LIMITS["date"]) and date_ok(date)):
        return False
    return ruleset_ok(meta.get("ruleset"))


def accepts(
    doc: Any,
    version_re: re.Pattern[str],
    date_ok: Any,
    deal_string_re: re.Pattern[str],
    *,
    deals_checked: bool = False,
    metadata_checked: bool = False,
    max_deals: int | None = MAX_DEALS,
) -> bool:
    """True only if ``doc`` certainly passes validation with ``version_re`` (see module doc).

    ``date_ok(text)`` says whether a ``metadata.date`` string is accepted, and
    ``deal_string_re`` is the pattern a pre-packed deal string must match; both are passed
    in by :mod:`engine.validate`, which owns them.  ``False`` means "not sure", never "invalid".
    With ``deals_checked`` the deals are taken as valid (the caller built them so), and with
    ``metadata_checked`` the ``metadata`` value likewise (a decoder that read it only from
    values the schema allows, date included: :mod:`engine.codec.fastmeta`).  The header
    (file type, version, no other key) is checked all the same.  ``max_deals``: the most
    deals accepted (the reference's :data:`~engine.model.MAX_DEALS`; ``None``: any number,
    as this engine's own reader).
    """
    try:
        return _document(doc, version_re, date_ok, deal_string_re, deals_checked, metadata_checked, max_deals)
    except TypeError:  # an unhashable element in a list of cards or calls
        return False


def _document(
    doc: Any,
    version_re: re.Pattern[str],
    date_ok: Any,
    deal_string_re: re.Pattern[str],
    deals_checked: bool,
    metadata_checked: bool,
    max_deals: int | None,
) -> bool:
    if type(doc) is not dict or len(doc) != 4:
        return False
    file_type = doc.get("fileType")
    if type(file_type) is not str or file_type != _FILE_TYPE:
        return False
    version = doc.get("version")
    if type(version) is not str or not version_re.fullmatch(version):
        return False
    deals = doc.get("deals")
    if type(deals) is not list or (max_deals is not None and len(deals) > max_deals):
        return False
    if not (metadata_checked and "metadata" in doc) and not _metadata(doc.get("metadata"), date_ok):
        return False
    if deals_checked:
        return True
    for deal in deals:
        if type(deal) is str:
            if not deal_string_re.fullmatch(deal):
                return False
        elif not _deal(deal):
            return False
    return True
