"""Baseline EGN (the game without analysis) and its SHA-256, exactly as spec section 8."""

from __future__ import annotations

import hashlib
from typing import Any

from .jsjson import stringify

__all__ = ["strip", "canonical", "sha256_hex", "ANALYSIS_KEYS"]

#: Properties that hold analysis only; the reference finds them from schema descriptions.
ANALYSIS_KEYS = frozenset({"callAnnotations", "playAnnotations", "alternativeLines"})


def _empty(value: Any) -> bool:
    return isinstance(value, (list, dict)) and not value


def strip(value: Any) -> Any:
    """Drop analysis keys at any depth, then empty arrays/objects left behind.

    ``false``, ``0``, ``""`` and ``null`` are kept.  Returns a new value; key order is kept.
    """
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key in ANALYSIS_KEYS:
                continue
            item = strip(item)
            if not _empty(item):
                out[key] = item
        return out
    if isinstance(value, list):
        items = [strip(item) for item in value]
        return [item for item in items if not _empty(item)]
    return value


def canonical(value: Any) -> str:
    """Keys sorted, no whitespace, strings and numbers as JavaScript writes them.

    Plain code-point order equals the reference's locale collation for every key set the
    schema allows (spec 8.4), so Python's ``sorted`` is used.
    """
    return stringify(value, sort_keys=True)


def sha256_hex(text: str) -> str:
    """Lower-case hex SHA-256 of the UTF-8 text (:func:`canonical` escapes lone surrogates)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
