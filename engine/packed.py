"""Packed deals (a deal written as a base64 string of its bit-packed condensed form) read once.

A document may hold a deal as a string instead of an object.  Loading turns every such
string into a :class:`~engine.model.Deal` before the replay starts, so the replay loop
sees only deals; a string that cannot be read becomes the :class:`~engine.errors.Problem`
that says why, in the deal's place, and the replay reports it there and skips the deal.
"""

from __future__ import annotations

from .errors import EgnError, Place, Problem
from .model import Deal, EgnDocument

__all__ = ["UnpackedDeal", "unpack_deals"]

#: A deal ready to replay, or why a packed deal could not be read.
UnpackedDeal = Deal | Problem


def unpack_deals(document: EgnDocument, *, source: str) -> tuple[UnpackedDeal, ...]:
    """Every deal of the document as a model, in file order (packed ones decoded)."""
    if all(isinstance(raw, Deal) for raw in document.deals):
        return tuple(document.deals)  # type: ignore[arg-type]  # all Deal, checked above
    from .codec.deal_bits import unpack_deal

    ruleset = document.metadata.ruleset.written() if document.metadata.ruleset else {}
    out: list[UnpackedDeal] = []
    for index, raw in enumerate(document.deals):
        if isinstance(raw, Deal):
            out.append(raw)
            continue
        here = Place(source=source, deal=index)
        try:
            out.append(Deal.model_validate(unpack_deal(raw, index, ruleset=ruleset, place=here)))
        except (EgnError, ValueError) as exc:
            place = getattr(exc, "place", here)
            out.append(Problem(place, f"packed deal {raw[:24]!r} cannot be read: {getattr(exc, 'detail', exc)}", "codec"))
    return tuple(out)
