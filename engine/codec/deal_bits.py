"""Condensed deal bitstreams: pack V1/V2/V3, unpack V3/V2/V1 with the legacy V0 fallback.

Layouts, version choice and the alternative-line conventions are spec sections 6 and 7.
This module is the public face; the work is split by concern:

- :mod:`engine.codec.deal_layout`: decks, min-rank codes, version choice, end marker, the
  pool an alternative line starts from (what both directions share);
- :mod:`engine.codec.deal_pack`: deal object -> bits, exactly the reference's bytes;
- :mod:`engine.codec.deal_unpack`: bits -> deal object, refusing the legacy fallback's garbage;
- :mod:`engine.codec.pool`: a play phase's card indices read and written in bulk.
"""

from __future__ import annotations

from .deal_layout import MIN_RANK_CODES, choose_version, deck_for
from .deal_pack import pack_deal
from .deal_unpack import unpack_deal, unpack_deal_checked

__all__ = ["pack_deal", "unpack_deal", "unpack_deal_checked", "choose_version", "deck_for", "MIN_RANK_CODES"]
