"""Upgrade old EGN files to schema 1.4 exactly as the reference's ``egn-upgrade`` (spec 9).

The upgrade is structural only: it sets the version, deletes v1.0 and Renderer keys and
renames snake_case keys at any depth.  It does not renumber 1-based phase numbers or shift
annotation keys.  :func:`split_production` keeps the deleted Renderer fields (``timings``,
``views``, ...) aside so that a caller can use them (the overlay syncs to ``timings``)
instead of losing them.
"""

from __future__ import annotations

from typing import Any

__all__ = ["upgrade_document", "split_production", "DELETED_KEYS", "RENAMED_KEYS", "PRODUCTION_KEYS"]

#: Keys the reference deletes at any depth.
DELETED_KEYS = frozenset(
    {"kitty", "initialLead", "timings", "views", "layouts", "videoUrl", "viewSwitches", "screens"}
)
#: The Renderer's production fields among them (kept aside by :func:`split_production`).
PRODUCTION_KEYS = ("timings", "views", "viewSwitches", "videoUrl", "layouts", "screens")
RENAMED_KEYS = {
    "calls_annotations": "callAnnotations",
    "tricks_annotations": "playAnnotations",
    "play_annotations": "playAnnotations",
    "player_cards": "playerCards",
    "card_exchanges": "cardExchanges",
    "match_id": "gameId",
    "matchId": "gameId",
    "initial_score": "initialScore",
    "initial_state": "initialState",
    "phase_number": "phaseNumber",
    "is_alone": "isAlone",
    "alone_defender": "aloneDefender",
    "alternative_lines": "alternativeLines",
    "branch_index": "branchIndex",
    "up_card": "upCard",
    "file_type": "fileType",
    "player_ids": "playerIds",
    "max_deals": "num_deals",
}


def _walk(node: Any) -> Any:
    if isinstance(node, list):
        return [_walk(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in DELETED_KEYS:
            continue
        new = RENAMED_KEYS.get(key)
        if new is None:
            out[key] = _walk(value)
        else:
            # The reference assigns the new name and deletes the old one: the renamed key
            # moves to the end of the object (visible in the upgraded files' key order).
            out.pop(new, None)
            out[new] = _walk(value)
    return out


def upgrade_document(obj: Any) -> Any:
    """A new, upgraded copy of ``obj`` (any JSON value; the input is not modified).

    Steps (spec 9): a truthy ``version`` becomes ``"1.4"``; keys in :data:`DELETED_KEYS`
    are removed at any depth; keys in :data:`RENAMED_KEYS` are renamed at any depth.
    Never raises for JSON input.
    """
    out = _walk(obj)
    if isinstance(out, dict) and out.get("version"):
        out["version"] = "1.4"
    return out


def split_production(obj: Any) -> tuple[Any, dict[str, Any]]:
    """Take the Renderer's production fields off the top of ``obj``: ``(rest, production)``.

    ``production`` holds ``timings``, ``views``, ``viewSwitches``, ``videoUrl``,
    ``layouts`` and ``screens`` when present, so that :func:`upgrade_document` (which
    deletes them) does not lose them.  ``rest`` is a shallow copy without those keys; it
    is not upgraded.  Never raises.
    """
    if not isinstance(obj, dict):
        return obj, {}
    production = {k: obj[k] for k in PRODUCTION_KEYS if k in obj}
    rest = {k: v for k, v in obj.items() if k not in production}
    return rest, production
