"""euchre-overlay's rules engine: EGN documents in, a timeline of game states out.

Pure: text and bytes in, values out; no files, sockets or clocks.  The main entry points:

* :func:`engine.load.load_game` — any EGN form (detected by content) to a replayed game;
* :func:`engine.replay.replay` — a validated document to a :class:`engine.state.Timeline`
  (``summary_only=True``: deal summaries and problems without states);
* :func:`engine.deal.replay_deal` — one deal's state machine;
* :class:`engine.steps.Steps` — a timeline's states, each built when first read;
* :func:`engine.cards.effective_suit` — the one place that judges suit (left bower).
"""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
