"""Per-output rendering of a channel: live catch-up bounds, score marks, cached scenes.

The renderer owns :func:`renderer.scene.build_scene`, the settings models
(:mod:`renderer.settings`, with :class:`~renderer.settings.RenderSettings`) and the step
durations (:func:`renderer.timing.durations_of`); this module caches the compact scene text
per (step, settings) so M pages of one output share one build.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from dataclasses import dataclass
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from engine.state import GameState, StepKind, Timeline
from renderer.gametitle import MatchGame
from renderer.matchdata import MatchData
from renderer.scene import Scene, sample
from renderer.settings import RenderSettings
from renderer.theme import Theme
from renderer.timing import TakeTransition, Timing
from renderer.view import View

from renderer.settings import ChannelSettings, OutputName

if TYPE_CHECKING:
    from engine.stats import MatchStats
    from renderer.altline import AltLine

#: the statistics of the game up to the step being drawn, computed only when a view shows them
StatsOf = Callable[[], "MatchStats | None"]

__all__ = ["marks_of", "lags_of", "SceneCache", "TakeFx", "frozen_scene"]


def marks_of(steps: Sequence[GameState] | None) -> list[int]:
    """Steps live catch-up never cuts over: every deal-scored banner (the score matters)."""
    return [i for i, s in enumerate(steps or ()) if s.kind is StepKind.DEAL_SCORED]


def lags_of(timing: Timing) -> dict[str, float]:
    """The Director's live catch-up bounds from the Timing settings."""
    return {"max_lag": float(timing.live_lag), "skip_lag": float(timing.live_skip)}


@dataclass(frozen=True)
class TakeFx:
    """A TAKE transition under way on one output: the settings it leaves (``before``), when
    it began on the hub's clock (``at``) and how it goes (:mod:`renderer.take`)."""

    before: RenderSettings
    at: float
    transition: TakeTransition

    def over(self, now: float) -> bool:
        return now - self.at >= self.transition.run_time


def _constant(value: Any, tracks: list[list[Any]], t: float) -> Any:
    if isinstance(value, dict):
        return round(sample(tracks[value["k"]], t), 4) + 0.0 if set(value) == {"k"} else value
    if isinstance(value, list):
        return [_constant(v, tracks, t) for v in value]
    return value


def frozen_scene(scene: Scene, t: float) -> Scene:
    """``scene`` as it stands at its time ``t``, every track replaced by its value then: what a
    paused output shows, so a TAKE over it can run on a clock of its own."""
    if not scene.tracks:
        return scene
    defs = {sid: _constant(ops, scene.tracks, t) for sid, ops in scene.defs.items()}
    ops = _constant(scene.ops, scene.tracks, t)
    return Scene(scene.width, scene.height, scene.background, 0.0, scene.fonts, [], defs, ops, scene.elements, scene.images)


def render(
    state: GameState,
    *,
    view: View,
    theme: Theme,
    timing: Timing,
    title: str | None,
    size: tuple[int, int],
    match: MatchData | None = None,
    line: AltLine | None = None,
    stats_of: StatsOf | None = None,
    game: MatchGame | None = None,
) -> str:
    """Compact scene JSON for one state, drawn at ``size`` (the view is scaled to fit), with the
    channel's match data and the view's broadcast extras; ``line``: the alternative line on
    air; ``stats_of`` gives the statistics extras their numbers (called only when the view
    shows one); ``game``: which game of a match ("Game 2 of 3")."""
    from renderer.onair import step_scene
    from renderer.statboard import needs_stats

    stats = stats_of() if stats_of is not None and needs_stats(view.extras) else None
    # the scene part of what is on air (renderer.onair): the one builder every output uses
    scene = step_scene(state, view, theme, timing, match, title=title, size=size, line=line, stats=stats, game=game)
    text: str = scene.dumps()
    return text


class SceneCache:
    """Scene text per (timeline revision, settings revision, output, size, step); LRU-bounded.

    :meth:`get` draws the state as ``shown`` makes it: what the output may show of it
    (:mod:`overlay.service.masking`), so a scene cannot hold a card its output hides.

    A live feed makes a new timeline revision per action, and the step on screen then is
    usually one the action did not change: :meth:`same_as` records that the first steps of
    a revision are the states of the revision before, so their scenes are found again
    instead of drawn again (measured: 1.76 builds per action under ``bench scale``'s feed
    without it, about one per step shown with it).
    """

    #: revisions whose kinship is remembered (a lookup walks back at most this many)
    KIN = 16

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._items: OrderedDict[tuple[Any, ...], str] = OrderedDict()
        self.builds = 0
        #: revision -> (the revision before it, how many leading steps the two share)
        self._kin: OrderedDict[int, tuple[int, int]] = OrderedDict()

    def clear(self) -> None:
        self._items.clear()
        self._kin.clear()

    def same_as(self, version: int, earlier: int, shared: int) -> None:
        """Steps ``0 .. shared-1`` of timeline ``version`` are equal states to those of
        ``earlier`` (same title, same settings), so they draw the same scenes."""
        self._kin[version] = (earlier, shared)
        while len(self._kin) > self.KIN:
            self._kin.popitem(last=False)

    def _kin_hit(self, key: tuple[Any, ...]) -> str | None:
        """The scene of an earlier revision that shares ``key``'s step, if still cached."""
        version, revision, output, size, step = key
        for _ in range(self.KIN):
            kin = self._kin.get(version)
            if kin is None or step >= kin[1]:
                return None
            version = kin[0]
            hit = self._hit((version, revision, output, size, step))
            if hit is not None:
                self._items[key] = hit
                if len(self._items) > self.size:
                    self._items.popitem(last=False)
                return hit
        return None

    def get(
        self,
        key: tuple[Any, ...],
        steps: Sequence[GameState],
        render_settings: RenderSettings,
        *,
        title: str | None,
        game: MatchGame | None = None,
        line: AltLine | None = None,
        stats_of: StatsOf | None = None,
        shown: Callable[[GameState], GameState] | None = None,
    ) -> str:
        hit = self._hit(key) or self._kin_hit(key)
        if hit is not None:
            return hit
        _, _, output, size, step = key
        return self._build(
            key, steps[step] if shown is None else shown(steps[step]), render_settings.view(output, step), render_settings, title=title, game=game, size=size, line=line,
            stats_of=stats_of,
        )

    def preshow(self, key: tuple[Any, ...], timeline: Timeline, render_settings: RenderSettings, *, title: str | None) -> str:
        """The pre-show scene of a game with players and no deal yet (title, teams, name
        plates, the score bug at the game's starting score); ``key`` as for :meth:`get`."""
        hit = self._hit(key)
        if hit is not None:
            return hit
        from renderer.preshow import preshow_state

        _, _, output, size, _ = key
        players = timeline.players
        state = preshow_state(
            players, score=timeline.final_score, num_players=len(players) if 2 <= len(players) <= 10 else 4, lowest_rank=timeline.lowest_rank, joker=timeline.joker
        )
        return self._build(key, state, render_settings.view(output), render_settings, title=title, size=size)

    def _hit(self, key: tuple[Any, ...]) -> str | None:
        hit = self._items.get(key)
        if hit is not None:
            self._items.move_to_end(key)
        return hit

    def _build(
        self,
        key: tuple[Any, ...],
        state: GameState,
        view: View,
        rs: RenderSettings,
        *,
        title: str | None,
        size: tuple[int, int],
        game: MatchGame | None = None,
        line: AltLine | None = None,
        stats_of: StatsOf | None = None,
    ) -> str:
        text = render(state, view=view, theme=rs.theme, timing=rs.timing, title=title, size=size, match=rs.match, line=line, stats_of=stats_of, game=game)
        return self._keep(key, text)

    def _keep(self, key: tuple[Any, ...], text: str) -> str:
        self.builds += 1
        self._items[key] = text
        if len(self._items) > self.size:
            self._items.popitem(last=False)
        return text
