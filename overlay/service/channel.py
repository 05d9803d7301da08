"""A channel: one table (a game, a playhead, settings), its pages and its scene pump.

:class:`Channel` is the table's state (:class:`~overlay.service.core.ChannelCore`) and its
parts, each an object with state of its own that holds the core: ``fanout`` (the pages and
state clients, the scene cache, the pump: :mod:`overlay.service.fanout`), ``ingest`` (whole
games, logger actions and the logger sockets: :mod:`overlay.service.ingest`), ``follow`` (a
followed file's watcher: :mod:`overlay.service.follow`) and ``playback`` (control commands and
settings: :mod:`overlay.service.playback`).  The channel wires them (the followed file's reads
go to ``ingest``; ``ingest`` tells ``fanout``'s scene cache which scenes a new revision
shares) and owns their lifetime: the pump and the file watcher start with the hub and are
awaited on close, so no task outlives the channel.
"""

from __future__ import annotations

from typing import Any

from renderer.settings import OUTPUTS, ChannelSettings

from . import feed
from .clients import bye, bye_text
from .core import ChannelCore, Host
from .director import Playhead
from .errors import excerpt
from .fanout import FanOut
from .follow import Follow
from .ingest import Ingest
from .playback import Playback

__all__ = ["Channel"]


def _cut(text: str | None) -> str | None:
    """A fault text as the status shows it: at most :data:`~overlay.service.errors.MAX_ERROR` characters."""
    return None if text is None else excerpt(text)


class Channel(ChannelCore):
    """One table: settings, the last good game, the Director; its parts ``fanout``,
    ``ingest``, ``follow`` and ``playback``."""

    def __init__(
        self,
        hub: Host,
        channel_id: str,
        settings: ChannelSettings,
        *,
        game: feed.Loaded | None = None,
        seq: int = 0,
        playhead: Playhead | None = None,
        follow: str | None = None,
        load_error: str | None = None,
    ) -> None:
        super().__init__(hub, channel_id, settings, game=game, seq=seq, playhead=playhead, load_error=load_error)
        self.fanout = FanOut(self)
        self.ingest = Ingest(self, scenes=self.fanout.cache)
        self.follow = Follow(self, self.ingest.put_game, path=follow)
        self.playback = Playback(self)

    def start(self) -> None:
        self.fanout.start()
        self.playback.schedule_outs(None, self.settings.match)
        if self.follow.path:
            self.follow.start(self.follow.path)

    async def close(self, *, reason: str) -> None:
        """Stop the file watcher and the pump (awaited: no task outlives the channel) and
        close every socket of the channel (pages, state clients, logger feeds)."""
        self.closed = True
        self.playback.stop_outs()
        await self.follow.close()
        await self.fanout.close(reason=reason)
        text = bye_text(reason)
        for ws in list(self.ingest.feeds):
            await bye(ws, None, text, reason)

    # ------------------------------------------------------------------ status

    def info(self, now: float) -> dict[str, Any]:
        g = self.game
        return {
            "id": self.id,
            "title": self.settings.title,
            "settingsRevision": self.settings.revision,
            "game": None
            if g is None
            else {
                "source": g.source,
                "title": g.timeline.title,
                "players": list(g.timeline.players),
                "steps": len(g.steps),
                "deals": sum(len(p.timeline.deals) for p in g.parts),
                "seq": self.seq,
                "digest": g.digest,
                "problems": [str(p) for p in g.problems],
                "match": g.match,
                "games": [
                    {
                        "index": p.index,
                        "title": p.timeline.title,
                        "label": p.label,
                        "firstStep": p.first_step,
                        "steps": len(p.timeline.steps),
                        "deals": len(p.timeline.deals),
                        "players": list(p.timeline.players),
                    }
                    for p in g.parts
                ]
                if g.match
                else [],
            },
            "playhead": self.playhead_json(now),
            "follow": self.follow.path,
            "followError": _cut(self.follow.error),
            "loadError": _cut(self.load_error),
            # stored settings the models refuse: the channel runs on safe defaults meanwhile
            "settingsError": _cut(self.hub.store.settings_problems.get(self.id)),
            "pages": {o: sum(1 for p in self.fanout.pages if p.output == o and not p.monitor) for o in OUTPUTS},
            # the studio's own frames (preview, program, overview thumbnails), not counted above
            "monitors": sum(1 for p in self.fanout.pages if p.monitor),
            "feed": self.feed_log.to_json(now),
            "midDeal": self.mid_deal,
            "programAt": self.program_at(now),
        }

    @property
    def mid_deal(self) -> bool:
        """The game's last deal is being played (not scored, not over): a logger should be
        sending."""
        steps = self.game_steps
        return bool(steps) and steps[-1].kind.value not in ("deal_scored", "game_over")

    def program_at(self, now: float) -> dict[str, Any] | None:
        """Where the program output is (its delay applied): step, deal (from 0) and its
        number in the file, step kind, and in a match which game (from 0)."""
        pos = self.director.position(now - self.settings.output("program").delay)
        game = self.shown(pos.version) if pos.version is not None else self.game
        if game is None or pos.step is None or not 0 <= pos.step < len(game.steps):
            return None
        s = game.steps[pos.step]
        return {"step": pos.step, "deal": s.deal, "dealNumber": s.deal_number, "kind": s.kind.value, "game": self.where(game, pos.step)["game"]}

    def status(self, now: float) -> dict[str, Any]:
        outputs: dict[str, Any] = {}
        for o in OUTPUTS:
            delay = self.settings.output(o).delay
            pos = self.director.position(now - delay)
            pages = [p.status(now) for p in self.fanout.pages if p.output == o]
            for p in pages:
                drawn = p["lastDrawnStep"]
                p["stepsBehind"] = None if drawn is None or pos.step is None else pos.step - drawn
            outputs[o] = {"delay": delay, "step": pos.step, "progress": round(pos.progress, 4), "pages": pages}
        return {"id": self.id, "steps": self.steps, "seq": self.seq, "outputs": outputs, "stateClients": len(self.fanout.subs)}
