"""Channels: a table each (a game, a playhead, settings), its pages and its scene pump.

A :class:`Channel` owns a :class:`~overlay.director.Director`, the last good game, and the
sockets of the pages showing it.  One pump task per channel sleeps until the next moment a
step changes on some output (the Director says when), or until something wakes it (a feed
update, a control command, a page joining), then sends each output's pages the scene of
their step.  Pages read their own sockets (in the handler task); only the pump and the
handlers' one-off snapshots write to them.

Broadcast delay: every accepted game gets a new revision, kept in :attr:`Channel.versions`
while some Director anchor inside the largest output delay still shows it.  An output with
delay ``d`` asks the Director for the position at ``now - d``, which names the version (and
the step durations) in force then, so a delayed output shows exactly what preview showed
``d`` seconds earlier, corrections included.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import WSCloseCode, web

from engine.errors import EgnError

from . import feed
from .director import Director, Playhead
from .errors import BadRequest, NotFound, SequenceGap, TooLarge
from .protocol import (
    OUTPUTS,
    ActionIn,
    ChannelSettings,
    ControlRequest,
    FeedAck,
    OutputName,
    SceneMessage,
    StateMessage,
    dump,
)
from .scenes import RenderSettings, SceneCache, durations_of
from .store import Store

__all__ = ["Page", "StateSub", "Channel", "Hub", "Clock"]

log = logging.getLogger("overlay.channels")

Clock = Callable[[], float]


@dataclass(eq=False)
class Page:
    """One connected overlay page (an OBS browser source, a preview, a capture)."""

    ws: web.WebSocketResponse
    output: OutputName
    remote: str
    connected_at: float
    width: int = 1920
    height: int = 1080
    visible: bool = True
    sent_seq: int = 0
    sent_step: int | None = None
    sent_at: dict[int, float] = field(default_factory=dict)
    drawn_seq: int = 0
    drawn_step: int | None = None
    lag: float | None = None  # seconds from sending a scene to the page's "drawn" report
    trace: bool = False  # bench pages get the server's stage times (wall clock ms) per scene

    @property
    def size(self) -> tuple[int, int]:
        return (self.width, self.height)

    @property
    def group(self) -> tuple[Any, ...]:
        return (self.output, self.width, self.height)

    def note_sent(self, seq: int, step: int | None, clock: float) -> None:
        self.sent_seq, self.sent_step = seq, step
        self.sent_at[seq] = clock
        if len(self.sent_at) > 32:
            for old in sorted(self.sent_at)[:-16]:
                del self.sent_at[old]

    def note_drawn(self, seq: int, step: int | None, clock: float) -> None:
        if seq < self.drawn_seq:
            return
        self.drawn_seq, self.drawn_step = seq, step
        sent = self.sent_at.get(seq)
        if sent is not None:
            self.lag = clock - sent

    def status(self, now: float) -> dict[str, Any]:
        return {
            "remote": self.remote,
            "width": self.width,
            "height": self.height,
            "visible": self.visible,
            "connectedFor": round(now - self.connected_at, 3),
            "sentStep": self.sent_step,
            "lastDrawnStep": self.drawn_step,
            "drawnSeq": self.drawn_seq,
            "sentSeq": self.sent_seq,
            "lagMs": None if self.lag is None else round(self.lag * 1000, 2),
        }


@dataclass(eq=False)
class StateSub:
    """A third-party graphics client on the state stream."""

    ws: web.WebSocketResponse
    output: OutputName


async def _send(ws: web.WebSocketResponse, text: str) -> bool:
    if ws.closed:
        return False
    try:
        await ws.send_str(text)
    except (ConnectionError, RuntimeError):
        return False
    return True


class Channel:
    """One table: settings, the last good game, the Director, connected pages."""

    def __init__(
        self,
        hub: Hub,
        channel_id: str,
        settings: ChannelSettings,
        *,
        game: feed.Loaded | None = None,
        seq: int = 0,
        playhead: Playhead | None = None,
        follow: str | None = None,
        load_error: str | None = None,
    ) -> None:
        self.hub = hub
        self.id = channel_id
        self.settings = settings
        self.render = RenderSettings(settings)
        self.game = game
        self.seq = seq
        self.revision = 0  # bumped on every new timeline
        # every version of the game a delayed output may still show, by revision
        self.versions: dict[int, feed.Loaded | None] = {0: None if game is None else game.slim()}
        now = hub.clock()
        self.director = Director(
            durations_of(self.game_steps, self.render.timing),
            now=now,
            playhead=playhead,
            max_delay=self.window,
            version=0,
        )
        self.pages: set[Page] = set()
        self.subs: set[StateSub] = set()
        self.wake = asyncio.Event()
        self.cache = SceneCache(size=8)
        self.last_key: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self.out_seq = 0
        self.follow_path = follow
        self.follow_error: str | None = None
        self.follow_task: asyncio.Task[None] | None = None
        self.stopped_follows: set[asyncio.Task[None]] = set()  # cancelled, not yet finished
        self.pump_task: asyncio.Task[None] | None = None
        self.feeds: set[web.WebSocketResponse] = set()  # logger feed sockets
        self.closed = False
        # wall-clock ms of the last feed update's stages, for bench pages ("trace")
        self.feed_trace: dict[str, float] = {}
        self.load_error = load_error
        self.updated = now

    # ------------------------------------------------------------------ views

    @property
    def timeline(self) -> Any:
        return None if self.game is None else self.game.timeline

    @property
    def game_steps(self) -> tuple[Any, ...]:
        return () if self.game is None else self.game.steps

    @property
    def steps(self) -> int:
        return 0 if self.game is None else len(self.game.steps)

    @property
    def window(self) -> float:
        """How far back delayed outputs look: the largest delay of this channel's outputs."""
        return min(self.hub.max_delay, max((self.settings.output(o).delay for o in OUTPUTS), default=0.0))

    def shown(self, version: int) -> feed.Loaded | None:
        """The game as it was in ``version`` (what a delayed output still shows)."""
        return self.versions.get(version, self.game)

    @staticmethod
    def where(game: feed.Loaded | None, step: int | None) -> dict[str, Any]:
        """Which game of a match ``step`` is in (JSON fields of the scene and state messages)."""
        if game is None or step is None:
            return {"game": None, "games": 0 if game is None else game.games_in_file, "game_title": None}
        part = game.part_of(step)
        return {"game": part.index, "games": game.games_in_file, "game_title": part.title}

    def playhead_json(self, now: float) -> dict[str, Any]:
        ph = self.director.playhead(now).to_json()
        ph["steps"] = self.steps
        ph["delays"] = {o: self.settings.output(o).delay for o in OUTPUTS}
        w = self.where(self.game, self.director.position(now).step)
        ph["game"], ph["games"], ph["gameTitle"] = w["game"], w["games"], w["game_title"]
        return ph

    def info(self, now: float) -> dict[str, Any]:
        tl = self.timeline
        g = self.game
        return {
            "id": self.id,
            "title": self.settings.title,
            "settingsRevision": self.settings.revision,
            "game": None
            if g is None
            else {
                "source": g.source,
                "title": tl.title,
                "players": list(tl.players),
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
            "follow": self.follow_path,
            "followError": self.follow_error,
            "loadError": self.load_error,
            "pages": {o: sum(1 for p in self.pages if p.output == o) for o in OUTPUTS},
        }

    def status(self, now: float) -> dict[str, Any]:
        outputs: dict[str, Any] = {}
        for o in OUTPUTS:
            delay = self.settings.output(o).delay
            pos = self.director.position(now - delay)
            pages = [p.status(now) for p in self.pages if p.output == o]
            for p in pages:
                drawn = p["lastDrawnStep"]
                p["stepsBehind"] = None if drawn is None or pos.step is None else pos.step - drawn
            outputs[o] = {"delay": delay, "step": pos.step, "progress": round(pos.progress, 4), "pages": pages}
        return {"id": self.id, "steps": self.steps, "seq": self.seq, "outputs": outputs, "stateClients": len(self.subs)}

    # ------------------------------------------------------------------ messages

    def _scene_key(self, output: OutputName, size: tuple[int, int], now: float) -> tuple[Any, ...]:
        pos = self.director.position(now - self.settings.output(output).delay)
        return (pos.key, pos.version, self.render.revision, size)

    def scene_text(
        self, output: OutputName, size: tuple[int, int], now: float, *, snapshot: bool
    ) -> tuple[str, int, int | None]:
        """The scene message for ``output`` at ``now`` (its delay applied) drawn at ``size``;
        returns the text, its seq and its step."""
        out = self.settings.output(output)
        pos = self.director.position(now - out.delay)
        self.out_seq += 1
        step = pos.step
        game = self.shown(pos.version)  # a delayed output shows the game as it was then
        steps = () if game is None else game.steps
        if step is not None and step >= len(steps):
            step = None
        w = self.where(game, step)
        head = SceneMessage(
            seq=self.out_seq,
            channel=self.id,
            output=output,
            step=step,
            steps=len(steps),
            deal=None if step is None else steps[step].deal,
            game=w["game"],
            games=w["games"],
            game_title=w["game_title"],
            age=round(pos.offset, 4),
            rate=pos.rate,
            playing=pos.playing,
            snapshot=snapshot,
            jump=pos.jump,
            width=size[0],
            height=size[1],
        )
        data = dump(head)
        del data["scene"]
        text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
        if step is None or game is None:
            scene = "null"
        else:
            scene = self.cache.get(
                (pos.version, self.render.revision, output, size, step),
                steps,
                self.render,
                title=game.part_of(step).title,
            )
        return text[:-1] + ',"scene":' + scene + "}", self.out_seq, step

    def state_text(self, output: OutputName, now: float) -> str:
        pos = self.director.position(now - self.settings.output(output).delay)
        game = self.shown(pos.version)
        steps = () if game is None else game.steps
        step = pos.step if pos.step is not None and pos.step < len(steps) else None
        w = self.where(game, step)
        msg = StateMessage(
            channel=self.id,
            output=output,
            step=step,
            steps=len(steps),
            playing=pos.playing,
            game=w["game"],
            games=w["games"],
            game_title=w["game_title"],
            state=None if step is None else steps[step].to_json(),
        )
        return json.dumps(dump(msg), separators=(",", ":"), ensure_ascii=False)

    async def send_snapshot(self, page: Page) -> None:
        now = self.hub.clock()
        text, seq, step = self.scene_text(page.output, page.size, now, snapshot=True)
        # the pump need not send this picture again to a first page of its group
        self.last_key.setdefault(page.group, self._scene_key(page.output, page.size, now))
        if await _send(page.ws, text):
            page.note_sent(seq, step, now)

    async def send_state(self, sub: StateSub) -> None:
        now = self.hub.clock()
        self.last_key.setdefault(("state", sub.output), self._scene_key(sub.output, (0, 0), now))
        await _send(sub.ws, self.state_text(sub.output, now))

    # ------------------------------------------------------------------ pump

    async def pump(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            self.wake.clear()
            try:
                deadline = await self._broadcast(self.hub.clock())
            except Exception:  # a bad scene must not kill the channel's pump
                log.exception("channel %s: broadcast failed", self.id)
                deadline = self.hub.clock() + 1.0
            handle = None
            if deadline is not None:
                delay = max(0.0, deadline - self.hub.clock()) + 0.0005
                handle = loop.call_later(delay, self.wake.set)
            await self.wake.wait()
            if handle is not None:
                handle.cancel()

    async def _broadcast(self, now: float) -> float | None:
        deadline: float | None = None
        groups: dict[tuple[Any, ...], list[Page]] = {}
        for page in self.pages:
            groups.setdefault(page.group, []).append(page)
        for group in [g for g in self.last_key if g not in groups and g[0] != "state"]:
            del self.last_key[group]
        outputs = {g[0] for g in groups} | {s.output for s in self.subs}
        for (output, width, height), pages in groups.items():
            size = (width, height)
            key = self._scene_key(output, size, now)
            if key != self.last_key.get((output, width, height)):
                self.last_key[(output, width, height)] = key
                woke = time.time() * 1000 if any(p.trace for p in pages) else 0.0
                text, seq, step = self.scene_text(output, size, now, snapshot=False)
                for page in pages:
                    out = text
                    if page.trace:
                        trace = {**self.feed_trace, "woke": woke, "built": time.time() * 1000}
                        out = text[:-1] + ',"trace":' + json.dumps(trace) + "}"
                    if await _send(page.ws, out):
                        page.note_sent(seq, step, now)
        for output in OUTPUTS:
            if output not in outputs:
                continue
            subs = [s for s in self.subs if s.output == output]
            if subs:
                skey = ("state", output)
                key = self._scene_key(output, (0, 0), now)
                if key != self.last_key.get(skey):
                    self.last_key[skey] = key
                    state = self.state_text(output, now)
                    for sub in subs:
                        await _send(sub.ws, state)
            delay = self.settings.output(output).delay
            pos = self.director.position(now - delay)
            if pos.next_change is not None:
                at = pos.next_change + delay
                deadline = at if deadline is None else min(deadline, at)
        return deadline

    def poke(self) -> None:
        self.wake.set()

    # ------------------------------------------------------------------ feed

    def _commit(self, loaded: feed.Loaded, *, seq: int, reset: bool = False) -> FeedAck:
        now = self.hub.clock()
        first = None if reset else feed.first_difference(self.game, loaded)
        old_steps = self.steps
        correction = first is not None and first < old_steps
        self.hub.store.save_game(self.id, loaded.data, source=loaded.source, seq=seq)
        self.game = loaded
        self.seq = seq
        self.load_error = None
        self.revision += 1
        self.versions[self.revision] = loaded.slim()
        if reset or first is None:
            durations = durations_of(loaded.steps, self.render.timing)
        else:
            # steps before the first change are the same steps: keep their durations
            keep = list(self.director.durations[:first])
            durations = keep + durations_of(loaded.steps[first:], self.render.timing)
        if reset:
            self.director.reset(now, durations, version=self.revision)
        else:
            self.director.timeline_changed(
                now, durations, first_changed=first if first is not None else len(durations), version=self.revision
            )
        self._prune_versions()
        self._save_playhead(now)
        self.updated = now
        self.poke()
        return FeedAck(seq=None, changed=True, correction=correction, steps=self.steps, expected=self.seq + 1)

    def _alive(self) -> None:
        """Raises NotFound once the channel is deleted (a request that was reading its body
        when the channel went must not write to the store)."""
        if self.closed:
            raise NotFound(f"no channel {self.id!r} (deleted)", channel=self.id)

    def _prune_versions(self) -> None:
        """Forget versions no kept anchor shows (older than the largest delay)."""
        oldest = min(self.director.oldest_version, self.revision)
        for rev in [r for r in self.versions if r < oldest]:
            del self.versions[rev]

    def _unchanged(self, seq: int | None = None, *, duplicate: bool = False) -> FeedAck:
        return FeedAck(seq=seq, duplicate=duplicate, changed=False, steps=self.steps, expected=self.seq + 1)

    def put_game(self, data: bytes, *, source: str, strict: bool = True) -> FeedAck:
        """A whole game from the logger (idempotent).

        Raises:
            EgnError: the engine refused it (the channel keeps its last good state).
        """
        self._alive()
        if self.game is not None and feed.digest(data) == self.game.digest:
            return self._unchanged()
        loaded = feed.load_bytes(data, source=source, strict=strict, previous=self.game)
        if self.game is not None and loaded.document == self.game.document:
            # same game in another encoding: keep the new bytes, nothing to show
            self.hub.store.save_game(self.id, loaded.data, source=loaded.source, seq=self.seq)
            self.game = loaded
            self.versions[self.revision] = loaded.slim()
            return self._unchanged()
        return self._commit(loaded, seq=self.seq)

    def load_game(self, data: bytes, *, source: str) -> FeedAck:
        """Load a (different) game: lenient, starts from its first step."""
        self._alive()
        loaded = feed.load_bytes(data, source=source, strict=False)
        return self._commit(loaded, seq=0, reset=True)

    def apply_action(self, action: ActionIn) -> FeedAck:
        """One logger action with its sequence number.

        Raises:
            SequenceGap: ``seq`` skips numbers (``expected`` says which one is next).
            EgnError: the engine found the action illegal or malformed.
            BadRequest: the action does not fit the document (no deal yet...).
        """
        self._alive()
        received = time.time() * 1000
        expected = self.seq + 1
        if action.seq < expected:
            return self._unchanged(action.seq, duplicate=True)
        if action.seq > expected:
            raise SequenceGap(
                f"channel {self.id!r}: action {action.seq} skips ahead; expected {expected}", expected=expected
            )
        source = self.game.source if self.game else f"{self.id}.egn"
        document = feed.apply_action(self.game, action, source=source)
        loaded = feed.load_bytes(feed.document_bytes(document), source=source, strict=True, previous=self.game)
        feed.refuse_new_problems(self.game, loaded)
        replayed = time.time() * 1000
        ack = self._commit(loaded, seq=action.seq)
        self.feed_trace = {"received": received, "replayed": replayed, "committed": time.time() * 1000}
        return ack.model_copy(update={"seq": action.seq})

    # ------------------------------------------------------------------ follow

    def start_follow(self, path: str) -> None:
        self._alive()
        self.stop_follow()
        self.follow_path = path
        self.follow_error = None
        self.hub.store.set_follow(self.id, path)
        self.follow_task = asyncio.get_running_loop().create_task(self._follow(Path(path)), name=f"follow:{self.id}")

    def stop_follow(self, *, forget: bool = False) -> None:
        if self.follow_task is not None:
            self.follow_task.cancel()
            # the watcher thread stops shortly after; close() awaits it
            self.stopped_follows.add(self.follow_task)
            self.follow_task.add_done_callback(self.stopped_follows.discard)
            self.follow_task = None
        if forget:
            self.follow_path = None
            self.hub.store.set_follow(self.id, None)

    def _read_followed(self, path: Path) -> None:
        try:
            data = path.read_bytes()
        except OSError as exc:
            self.follow_error = f"{path}: {exc.strerror or exc}"
            return
        try:
            self.put_game(data, source=path.name, strict=False)
            self.follow_error = None
        except (EgnError, BadRequest, TooLarge) as exc:
            # a half-written file: keep the last good state until it parses
            self.follow_error = str(exc)

    async def _follow(self, path: Path) -> None:
        import watchfiles

        target = path.resolve()
        self._read_followed(target)
        parent = target.parent

        def only_target(change: watchfiles.Change, name: str) -> bool:
            return Path(name).resolve() == target and change != watchfiles.Change.deleted

        async for _ in watchfiles.awatch(parent, watch_filter=only_target, debounce=50, step=10, recursive=False):
            self._read_followed(target)

    # ------------------------------------------------------------------ control and settings

    def control(self, req: ControlRequest) -> dict[str, Any]:
        """Apply a Director command; returns the new playhead.

        Raises:
            BadRequest: a command without its argument, or a deal/step that does not exist.
        """
        self._alive()
        now = self.hub.clock()
        d = self.director
        op = req.op
        if op == "play":
            d.play(now)
        elif op == "pause":
            d.pause(now)
        elif op == "toggle":
            d.toggle(now)
        elif op == "next":
            d.next(now)
        elif op == "step":
            d.step_forward(now)
        elif op == "back":
            d.step_back(now)
        elif op == "live":
            d.live(now)
        elif op == "seek":
            d.seek(now, self._seek_target(req, now))
        elif op == "speed":
            if req.speed is None:
                raise BadRequest("speed needs 'speed'")
            d.set_speed(now, req.speed)
        elif op in ("loop", "auto"):
            if req.value is None:
                raise BadRequest(f"{op} needs 'value' (true or false)")
            (d.set_loop if op == "loop" else d.set_auto)(now, req.value)
        self._save_playhead(now)
        self.poke()
        return self.playhead_json(now)

    def _seek_target(self, req: ControlRequest, now: float) -> int:
        """The global step a seek names.  With ``game`` (a match), ``deal`` and ``step`` count
        inside that game; without it, ``step`` is global and ``deal`` is in the game on screen.

        Raises:
            BadRequest: no such game, deal or step, or nothing to seek to.
        """
        g = self.game
        if req.game is not None:
            if g is None or not any(p.index == req.game for p in g.parts):
                have = "no game" if g is None else ", ".join(str(p.index) for p in g.parts)
                raise BadRequest(f"channel {self.id!r}: no game {req.game} in the match (games: {have})")
            part = next(p for p in g.parts if p.index == req.game)
        elif req.deal is not None and g is not None:
            part = g.part_of(self.director.position(now).step or 0)
        else:
            part = None
        if req.deal is not None:
            if part is None:
                raise BadRequest(f"channel {self.id!r}: no deal {req.deal} (no game loaded)")
            tl = part.timeline
            if req.deal >= len(tl.deals):
                where = f"game {part.index} of the match" if g is not None and g.match else "the game"
                raise BadRequest(f"channel {self.id!r}: no deal {req.deal} ({where} has {len(tl.deals)})")
            return part.first_step + tl.deal_start(req.deal)
        if req.step is not None:
            if part is not None:
                n = len(part.timeline.steps)
                if req.step >= n:
                    raise BadRequest(f"channel {self.id!r}: no step {req.step} in game {part.index} (it has {n})")
                return part.first_step + req.step
            if req.step >= max(self.steps, 1):
                raise BadRequest(f"channel {self.id!r}: no step {req.step} (the game has {self.steps})")
            return req.step
        if part is not None:
            return part.first_step
        raise BadRequest("seek needs 'step', 'deal' or 'game'")

    def _save_playhead(self, now: float) -> None:
        self.hub.store.save_playhead(self.id, self.director.playhead(now).to_json())

    def put_settings(self, doc: ChannelSettings) -> ChannelSettings:
        """Validate with the renderer's models, store (revision-checked), apply.

        Raises:
            pydantic.ValidationError: a view/theme/timing the renderer refuses.
            StaleRevision: ``doc.revision`` is not the current one.
        """
        self._alive()
        RenderSettings(doc)  # validate before storing
        stored = self.hub.store.put_settings(self.id, doc)
        old_timing = self.render.timing
        self.settings = stored
        self.render = RenderSettings(stored)
        self.director.max_delay = self.window
        if self.render.timing != old_timing:
            now = self.hub.clock()
            self.director.retime(now, durations_of(self.game_steps, self.render.timing))
        self.poke()
        return stored

    # ------------------------------------------------------------------ lifetime

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.pump_task = loop.create_task(self.pump(), name=f"pump:{self.id}")
        if self.follow_path:
            self.start_follow(self.follow_path)

    async def close(self, *, reason: str) -> None:
        """Stop the pump and the file watcher (awaited: no task outlives the channel) and
        close every socket of the channel (pages, state clients, logger feeds)."""
        self.closed = True
        self.stop_follow()
        tasks = [t for t in (self.pump_task, *self.stopped_follows) if t is not None]
        self.pump_task = None
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        bye = json.dumps({"type": "bye", "reason": reason})
        for ws in [p.ws for p in self.pages] + [s.ws for s in self.subs] + list(self.feeds):
            await _send(ws, bye)
            await ws.close(code=WSCloseCode.GOING_AWAY, message=reason.encode()[:120])


class Hub:
    """Every channel of the process, restored from and written to the store."""

    def __init__(self, store: Store, *, clock: Clock = time.monotonic, max_delay: float = 600.0) -> None:
        self.store = store
        self.clock = clock
        self.max_delay = max_delay
        self.channels: dict[str, Channel] = {}
        self.started = False

    def get(self, channel_id: str) -> Channel:
        try:
            return self.channels[channel_id]
        except KeyError:
            raise NotFound(f"no channel {channel_id!r}", channel=channel_id) from None

    def restore(self) -> None:
        """Rebuild every stored channel (games are re-replayed leniently: nothing is dropped)."""
        for rec in self.store.channels():
            game = None
            error = None
            if rec.game is not None:
                try:
                    game = feed.load_bytes(rec.game.data, source=rec.game.source, strict=False)
                except (EgnError, BadRequest, TooLarge) as exc:
                    error = str(exc)
            playhead = Playhead.from_json(rec.playhead) if rec.playhead else None
            self.channels[rec.id] = Channel(
                self,
                rec.id,
                rec.settings,
                game=game,
                seq=rec.game.seq if rec.game else 0,
                playhead=playhead,
                follow=rec.follow,
                load_error=error,
            )

    def create(self, channel_id: str, settings: ChannelSettings | None = None, *, playhead: Playhead | None = None) -> Channel:
        if settings is not None:
            RenderSettings(settings)
        stored = self.store.create_channel(channel_id, settings)
        ch = Channel(self, channel_id, stored, playhead=playhead)
        self.channels[channel_id] = ch
        if playhead is not None:
            self.store.save_playhead(channel_id, playhead.to_json())
        if self.started:
            ch.start()
        return ch

    async def delete(self, channel_id: str) -> None:
        ch = self.get(channel_id)
        self.store.delete_channel(channel_id)
        del self.channels[channel_id]
        await ch.close(reason="channel deleted")

    def start(self) -> None:
        self.started = True
        for ch in self.channels.values():
            ch.start()

    async def stop(self) -> None:
        """Save where every playhead is (a restart resumes there) and close the channels."""
        self.started = False
        now = self.clock()
        for ch in list(self.channels.values()):
            ch._save_playhead(now)
            await ch.close(reason="server shutting down")
