"""Card indices of a play phase in the condensed deal stream, read and written in bulk.

A played card is written as its index in the pool of cards not yet played, in as many bits
as the pool's size needs (spec 7.2).  The pool shrinks by one card per card, so the widths
of all the indices of a phase follow from the pool's size alone: the packer finds the
indices and writes them with one shift, the unpacker cuts them out of one read.  The
tables here are cached by size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from operator import and_
from typing import Any

from ..pickling import init_values
from .bitstream import BitReader, width

__all__ = ["IndexFields", "index_fields", "card_position", "trick_slices", "read_tricks"]


@dataclass(frozen=True)
class IndexFields:
    """Where ``k`` card indices into a pool of ``n`` cards (one fewer per card) sit in bits."""

    total: int  # bits of all the indices
    shifts: tuple[int, ...]  # of each index, counted from the end of those bits
    masks: tuple[int, ...]
    limits: tuple[int, ...]  # pool size when each index is read (an index must be below it)

    def __reduce__(self) -> tuple[type[IndexFields], tuple[object, ...]]:
        return (IndexFields, init_values(self))


_FIELDS: dict[tuple[int, int], IndexFields] = {}


def index_fields(n: int, k: int) -> IndexFields:
    """The fields of ``k`` indices read or written from a pool of ``n`` cards."""
    found = _FIELDS.get((n, k))
    if found is None:
        limits = tuple(range(n, n - k, -1))
        widths = [width(m - 1) for m in limits]
        total, shifts, used = sum(widths), [], 0
        for w in widths:
            used += w
            shifts.append(total - used)
        found = IndexFields(total, tuple(shifts), tuple((1 << w) - 1 for w in widths), limits)
        if len(_FIELDS) < 4096:
            _FIELDS[(n, k)] = found
    return found


def card_position(tricks: Sequence[Any], flat: int) -> tuple[int, int]:
    """(trick, card) of the ``flat``-th card of the list tricks."""
    for t, trick in enumerate(tricks):
        if isinstance(trick, list):
            if flat < len(trick):
                return t, flat
            flat -= len(trick)
    raise AssertionError("no such card")


#: (pool size, tricks, cards per trick, cards in the first trick) -> each trick's slice.
_TRICK_SLICES: dict[tuple[int, int, int, int | None], tuple[slice, ...]] = {}


def trick_slices(n: int, count: int, per_trick: int, first_trick: int | None) -> tuple[slice, ...]:
    """Each trick's cards among a phase's cards; a trick stops short when the pool runs out."""
    key = (n, count, per_trick, first_trick)
    found = _TRICK_SLICES.get(key)
    if found is None:
        tricks, at = [], 0
        for t in range(count):
            size = max(0, min(first_trick if (t == 0 and first_trick is not None) else per_trick, n - at))
            tricks.append(slice(at, at + size))
            at += size
        found = tuple(tricks)
        if len(_TRICK_SLICES) < 4096:
            _TRICK_SLICES[key] = found
    return found


#: The same key -> (bits of all the indices, their shifts, their masks, each trick's slice).
_PLANS: dict[tuple[int, int, int, int | None], tuple[int, tuple[int, ...], tuple[int, ...], tuple[slice, ...]]] = {}


def _plan(
    n: int, count: int, per_trick: int, first_trick: int | None
) -> tuple[int, tuple[int, ...], tuple[int, ...], tuple[slice, ...]]:
    key = (n, count, per_trick, first_trick)
    found = _PLANS.get(key)
    if found is None:
        tricks = trick_slices(n, count, per_trick, first_trick)
        fields = index_fields(n, tricks[-1].stop if tricks else 0)
        found = (fields.total, fields.shifts, fields.masks, tricks)
        if len(_PLANS) < 4096:
            _PLANS[key] = found
    return found


def read_tricks(
    r: BitReader, pool: list[str], count: int, per_trick: int, first_trick: int | None
) -> list[list[str | None]] | None:
    """All tricks of a play phase at once, or ``None`` to read them card by card.

    Every card is an index into the pool of cards not yet played, in as many bits as the
    pool's size needs, so the widths of a whole phase are known before reading: one read
    takes all the bits, the indices are cut out of it, and the cards are popped in order
    (each step a C-level ``map``).  ``None`` when the stream is long (no single integer),
    too short, or holds an index past the pool (which the card-by-card reader turns into
    ``None`` cards); the pool is then as it was.
    """
    total, shifts, masks, tricks = _plan(len(pool), count, per_trick, first_trick)
    value, end = r.value, r.end
    stop = r.pos + total
    if value < 0 or stop > end:
        return None
    rest = pool[:]
    try:
        # An index past the pool ends the pops with IndexError (the masks keep them >= 0).
        cards: list[str | None] = list(map(rest.pop, map(and_, map((value >> (end - stop)).__rshift__, shifts), masks)))
    except IndexError:
        return None
    pool[:] = rest
    r.pos = stop
    return list(map(cards.__getitem__, tricks))
