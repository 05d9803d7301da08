"""Frozen dataclass values built without their constructor: :func:`build`.

A module of its own so that it can be compiled (:mod:`engine.native`): the replay's
compiled modules and the pure ones (:mod:`engine.state`, :mod:`engine.steps`) call it
about 100,000 times in a replay of the fixture corpus, and compiled it costs them no
Python frame.
"""

from __future__ import annotations

from typing import Any, Final, TypeVar

__all__ = ["build"]

_T = TypeVar("_T")


def build(cls: type[_T], fields: dict[str, Any]) -> _T:
    """An instance of a plain frozen dataclass (no ``__post_init__``, no slots: the values of
    :mod:`engine.state` and :mod:`engine.outcome`) from a fresh mapping of *every* field.

    The replay builds about 130 states a game, each with its trick and action; the
    generated ``__init__`` (a frozen ``object.__setattr__`` per field) cost more than the
    rules themselves.  The result is an ordinary frozen value, equal to one built by the
    constructor from the same values; a missing field would only show when read, so
    callers pass complete mappings (``tests/engine/test_replay.py`` compares with
    constructor-built values).
    """
    value = _new(cls)
    _set(value, "__dict__", fields)  # the mapping becomes the value's own: callers pass a fresh one
    return value


# bound once: ``build`` runs about 100,000 times in a replay of the fixture corpus
_new: Final = object.__new__
_set: Final = object.__setattr__
