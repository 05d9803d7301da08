"""euchre-overlay's rules engine: EGN documents in, a timeline of game states out.

Pure: text and bytes in, values out; no files, sockets or clocks (but for the loader,
:mod:`engine.native`, which checks a compiled build's stamp at import).  The main entry points:

* :func:`engine.load.load_game` — any EGN form (detected by content) to a replayed game;
* :func:`engine.replay.replay` — a validated document to a :class:`engine.state.Timeline`
  (``summary_only=True``: deal summaries and problems without states);
* :func:`engine.deal.replay_deal` — one deal's state machine;
* :class:`engine.live.LiveGame` — a game that logger actions are pushed onto one at a time
  (each replays the last deal only; refused actions change nothing);
* :class:`engine.steps.Steps` — a timeline's states, each built when first read;
* :func:`engine.cards.effective_suit` — the one place that judges suit (left bower);
* :func:`engine.native.mode` — whether the replay's hot modules run compiled (mypyc) or pure.
"""

from __future__ import annotations

from . import native

# before any other module of the package is imported: the compiled modules, if built and
# current, are found first on the package's path (engine.native)
native.activate(__path__)

__all__ = ["__version__"]

__version__ = "0.1.0"
