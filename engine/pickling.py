"""Frozen dataclasses of the compiled modules pickled and copied by their constructor.

A class that mypyc compiles (:mod:`engine.native`) keeps its fields in C slots, not an
instance dict; pickle's default for it sets each field back with ``setattr``, which a frozen
dataclass refuses (``FrozenInstanceError``), and ``copy.copy`` and ``copy.deepcopy`` go the
same way.  So each frozen dataclass of a compiled module defines ``__reduce__`` as::

    def __reduce__(self) -> tuple[type[Table], tuple[object, ...]]:
        return (Table, init_values(self))

and is made again by its constructor, in both modes: what a process pool's states, Ray's
arguments and a deep copy need.  (``Card``, pickled the most, spells its five values out.)
``tests/engine/test_pickling.py`` holds every dataclass of the compiled modules to it.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

__all__ = ["init_values"]


def init_values(value: Any) -> tuple[object, ...]:
    """A dataclass instance's values of the fields its constructor takes, in their order
    (a field with ``init=False`` is made again by the constructor)."""
    return tuple(getattr(value, f.name) for f in fields(value) if f.init)
