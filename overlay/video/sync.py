"""Sync a render to a match video: a timing file's stamps placed on the step start times."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.errors import Place, SchemaError
from engine.state import GameState, StepKind

__all__ = ["SyncStamps", "parse_sync", "sync_starts"]




@dataclass(frozen=True)
class SyncStamps:
    """Known step times (seconds into the match video), from a timing file."""

    stamps: dict[int, float]
    video_url: str | None = None


def _stamp(value: Any, where: Place) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SchemaError(f"timestamp {value!r} is not a number of seconds", where)
    return float(value)


def parse_sync(data: str | bytes, steps: Sequence[GameState], *, source: str) -> SyncStamps:
    """Read a timing file into step stamps.

    Accepted (JSON): ``{"steps": {"12": 35.2}, "deals": {"2": 80.0}, "tricks": {"2.3": 95.5},
    "offset": 0.0, "videoUrl": "..."}``: ``deals`` keys are the 1-based position of a deal
    in the file (as ``inspect`` lists them) and stamp its deal-start step; ``tricks`` keys
    are ``"deal.trick"`` (both 1-based) and stamp the trick's lead card; ``offset`` is added
    to every stamp.  An old EGN file's ``timings`` (step index -> seconds, as the EGN
    Renderer wrote it, with ``videoUrl``) is read the same way as ``steps``; there a 0 for
    any step but the first means "no cue" (the Renderer's default) and is skipped.

    Raises:
        SchemaError: not JSON, an unknown deal/trick/step, or a stamp that is not a number.
    """
    place = Place(source=source)
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise SchemaError(f"not a JSON timing file ({exc})", place) from None
    if not isinstance(doc, dict):
        raise SchemaError("a timing file is a JSON object", place)
    n = len(steps)
    stamps: dict[int, float] = {}
    legacy = "timings" in doc and "steps" not in doc
    table = doc.get("timings") if legacy else doc.get("steps", {})
    if isinstance(table, list):
        table = {str(i): v for i, v in enumerate(table) if v is not None}
    if not isinstance(table, dict):
        raise SchemaError("'steps' (or 'timings') maps step numbers to seconds", place)
    for key, value in table.items():
        try:
            i = int(key)
        except ValueError:
            raise SchemaError(f"step {key!r} is not a step number", place) from None
        where = place.with_(extra=(("step", i),))
        if not 0 <= i < n:
            raise SchemaError(f"no such step: the game has steps 0..{n - 1}", where)
        t = _stamp(value, where)
        if legacy and t == 0.0 and i > 0:
            continue
        stamps[i] = t
    deal_starts: dict[int, int] = {}
    lead_cards: dict[tuple[int, int], int] = {}
    for s in steps:
        if s.branch is not None:
            continue
        deal_starts.setdefault(s.deal, s.step)
        if s.kind is StepKind.CARD and s.trick is not None and len(s.trick.cards) == 1:
            lead_cards.setdefault((s.deal, s.trick.number), s.step)
    # an EGN file's own "deals" is the game, not stamps
    deal_table = {} if legacy else doc.get("deals") or {}
    trick_table = {} if legacy else doc.get("tricks") or {}
    if not isinstance(deal_table, dict) or not isinstance(trick_table, dict):
        raise SchemaError("'deals' and 'tricks' map numbers to seconds", place)
    for key, value in deal_table.items():
        try:
            d = int(key) - 1
        except ValueError:
            raise SchemaError(f"deal {key!r} is not a deal number", place) from None
        where = place.with_(deal=d + 1)
        if d not in deal_starts:
            raise SchemaError(f"no such deal: the game has deals 1..{len(deal_starts)}", where)
        stamps[deal_starts[d]] = _stamp(value, where)
    for key, value in trick_table.items():
        try:
            d_text, t_text = str(key).split(".")
            d, t = int(d_text) - 1, int(t_text) - 1
        except ValueError:
            raise SchemaError(f"trick {key!r}: expected 'deal.trick' such as '2.3'", place) from None
        where = place.with_(deal=d + 1, trick=t + 1)
        if (d, t) not in lead_cards:
            raise SchemaError("no such trick (or its lead card is not recorded)", where)
        stamps[lead_cards[(d, t)]] = _stamp(value, where)
    offset = _stamp(doc.get("offset", 0.0), place.with_(extra=(("offset", ""),)))
    stamps = {k: v + offset for k, v in stamps.items()}
    last = -math.inf
    for i in sorted(stamps):
        if stamps[i] < last:
            raise SchemaError(f"stamps go backwards: {stamps[i]} s is before an earlier step's {last} s", place.with_(extra=(("step", i),)))
        last = stamps[i]
    url = doc.get("videoUrl")
    return SyncStamps(stamps, url if isinstance(url, str) and url else None)


def sync_starts(model_starts: Sequence[float], stamps: Mapping[int, float]) -> list[float]:
    """Step start times with the stamped steps at their stamps.

    ``model_starts`` are the Timing model's start times (step ``i`` at ``model_starts[i]``).
    Between two stamped steps the model's spacing is stretched or squeezed to fit; before
    the first stamp and after the last one the model's spacing continues unchanged.  With
    no stamps the model's times are returned.
    """
    n = len(model_starts)
    known = sorted((i, float(t)) for i, t in stamps.items() if 0 <= i < n)
    if not known:
        return [float(s) for s in model_starts[:n]]
    out = [0.0] * n
    k0, s0 = known[0]
    for i in range(0, k0 + 1):
        out[i] = s0 - (model_starts[k0] - model_starts[i])
    for (a, sa), (b, sb) in zip(known, known[1:]):
        span = model_starts[b] - model_starts[a]
        for i in range(a, b + 1):
            f = (model_starts[i] - model_starts[a]) / span if span > 0 else (i - a) / (b - a)
            out[i] = sa + f * (sb - sa)
    kl, sl = known[-1]
    for i in range(kl, n):
        out[i] = sl + (model_starts[i] - model_starts[kl])
    return out
