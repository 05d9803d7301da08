"""The overlay's side of the studio: an object implementing :class:`studio.host.StudioHost`
over the Hub and the Store, handed to :func:`studio.app.mount` (the studio never imports
overlay, so this adapter lives here)."""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from aiohttp import web

from engine.state import GameState
from renderer.altline import LineInfo
from renderer.settings import OUTPUTS, ChannelSettings, OutputName, clean_view
from renderer.timing import TakeTransition
from renderer.view import View
from studio.games import Held
from studio.host import TRANSPORT_OPS, Handler

from .branching import line_list
from .errors import BadRequest, NotFound
from .hub import Hub
from .protocol import ControlRequest, dump
from .store import CONTROL_KEY, HASHED, control_key_hash

__all__ = ["StudioBridge"]


def _after(settings: ChannelSettings, last: str | None) -> int:
    """The index of the cue GO fires next: the one after ``last`` (0 when none was fired;
    ``len(rundown)`` past the end)."""
    return next((i for i, c in enumerate(settings.rundown) if c.id == last), -1) + 1


def _next_cue(settings: ChannelSettings, last: str | None) -> str | None:
    at = _after(settings, last)
    return settings.rundown[at].id if at < len(settings.rundown) else None


def _on_program(cur: ChannelSettings, view: View | None) -> ChannelSettings:
    """``cur`` with ``view`` on program and its clean form on clean (None: their defaults)."""
    outputs = dict(cur.outputs)
    outputs["program"] = cur.output("program").model_copy(update={"view": view})
    outputs["clean"] = cur.output("clean").model_copy(update={"view": None if view is None else clean_view(view)})
    return cur.model_copy(update={"outputs": outputs})


class StudioBridge:
    """What the studio may do: list channels and their steps and lines, run transport, switch
    views, take, keep control keys."""

    def __init__(self, hub: Hub, *, uploads: Path, guard: Callable[[Handler], Handler], allow_dirs: tuple[Path, ...] = (), host: str = "127.0.0.1") -> None:
        self.hub = hub
        self._uploads = uploads
        self._guard = guard
        self._allow_dirs = allow_dirs
        self._host = host  # the address the server listens on (serve --host)

    @property
    def uploads(self) -> Path:
        return self._uploads

    def guard(self, handler: Handler) -> Handler:
        """``handler`` marked for the app's token check (a plain function: bound methods take no marks)."""

        async def guarded(request: web.Request) -> web.StreamResponse:
            return await handler(request)

        wrapped: Handler = self._guard(guarded)
        return wrapped

    def channel_ids(self) -> list[str]:
        return list(self.hub.channels)

    def settings_problem(self, channel: str) -> str | None:
        self.hub.get(channel)
        return self.hub.store.settings_problems.get(channel)

    def timeline(self, channel: str) -> Sequence[GameState]:
        return self.hub.get(channel).game_steps

    def lines(self, channel: str) -> Sequence[LineInfo]:
        return line_list(self.hub.get(channel).game)

    def control(self, channel: str, op: str, params: Mapping[str, str]) -> dict[str, Any]:
        if op not in TRANSPORT_OPS:
            raise BadRequest(f"control op {op!r} is not one of {', '.join(TRANSPORT_OPS)}")
        return self.hub.get(channel).playback.control(ControlRequest.model_validate({**params, "op": op}))

    def _output(self, output: str) -> OutputName:
        for o in OUTPUTS:
            if o == output:
                return o
        raise BadRequest(f"output {output!r} is not one of {', '.join(OUTPUTS)}")

    def switch_view(self, channel: str, index: int, output: str, transition: TakeTransition | None = None) -> ChannelSettings:
        ch = self.hub.get(channel)
        out = self._output(output)
        cur = ch.settings
        if not 0 <= index < len(cur.views):
            have = len(cur.views)
            raise NotFound(f"channel {channel!r} has {have} named view{'' if have == 1 else 's'}, not a view {index + 1}", channel=channel)
        outputs = dict(cur.outputs)
        outputs[out] = cur.output(out).model_copy(update={"view": cur.views[index]})
        take = None if out == "preview" else transition or cur.timing.take
        return ch.playback.put_settings(cur.model_copy(update={"outputs": outputs}), take=take)

    def take(self, channel: str, transition: TakeTransition | None = None) -> ChannelSettings:
        ch = self.hub.get(channel)
        cur = ch.settings
        return ch.playback.put_settings(_on_program(cur, cur.output("preview").view), take=transition or cur.timing.take)

    def settings_of(self, channel: str) -> ChannelSettings:
        return self.hub.get(channel).settings

    def fire_cue(self, channel: str, cue: str) -> dict[str, Any]:
        ch = self.hub.get(channel)
        cur = ch.settings
        cues = cur.rundown
        if not cues:
            raise NotFound(f"channel {channel!r} has no rundown", channel=channel)
        if cue == "next":
            at = _after(cur, ch.last_cue)
            if at >= len(cues):
                raise BadRequest(f"the rundown of channel {channel!r} is over: its last cue ({cues[-1].id!r}) was fired; fire a cue by its id to go on")
        else:
            found = next((i for i, c in enumerate(cues) if c.id == cue), None)
            if found is None:
                raise NotFound(f"channel {channel!r} has no cue {cue!r} (its cues: {', '.join(c.id for c in cues)})", channel=channel)
            at = found
        c = cues[at]
        take = cur.timing.take if c.transition == "default" else cur.timing.take.model_copy(update={"style": c.transition})
        if c.kind == "view":
            view = next(v for v in cur.views if v.id == c.view)  # (the settings model checks it names one)
            ch.playback.put_settings(_on_program(cur, view), take=take)
        elif c.kind in ("intro", "stats", "hide"):
            update: dict[str, Any] = {"intro": c.seat} if c.kind == "intro" else {"stats": c.stats} if c.kind == "stats" else {"intro": None, "stats": None}
            ch.playback.put_settings(cur.model_copy(update={"match": cur.match.model_copy(update=update)}))
        elif c.kind == "line":
            params = {"deal": str(c.deal), "line": str(c.line)}
            if c.game is not None:
                params["game"] = str(c.game)
            self.control(channel, "branch", params)
        else:  # stinger
            ch.playback.take_over(cur.timing.take.model_copy(update={"style": "stinger"}))
        ch.last_cue = c.id
        return {"cue": c.id, "name": c.name, "index": at + 1, "cues": len(cues), "next": cues[at + 1].id if at + 1 < len(cues) else None}

    def export_look(self, channel: str) -> dict[str, Any]:
        """The channel's whole look as one file (:func:`studio.looks.export_look`)."""
        from studio.looks import export_look

        return export_look(self.settings_of(channel), self.uploads, channel=channel)

    def link_targets(self, channel: str) -> dict[str, Any]:
        ch = self.hub.get(channel)
        g = ch.game
        games = [] if g is None else [{"index": p.index, "label": p.label, "deals": len(p.timeline.deals)} for p in g.parts]
        return {
            "views": [v.name for v in ch.settings.views],
            "cues": [{"id": c.id, "name": c.name} for c in ch.settings.rundown],
            "games": games,
            "match": bool(g is not None and g.match),
            "lines": [line.to_json() for line in line_list(g)] if g is not None else [],
        }

    def link_state(self, channel: str) -> dict[str, Any]:
        ch = self.hub.get(channel)
        now = self.hub.clock()
        head = ch.playhead_json(now)
        at = ch.program_at(now)
        settings = ch.settings

        def view_of(output: OutputName) -> dict[str, Any]:
            v = settings.output(output).view
            index = next((i for i, named in enumerate(settings.views) if v is not None and named == v), None)
            return {"view": None if index is None else index + 1, "name": None if v is None else v.name}

        return {
            "channel": channel,
            "playing": bool(head.get("playing")),
            "live": bool(head.get("follow")),
            "speed": head.get("speed"),
            "loop": head.get("loop"),
            "line": head.get("line"),
            "game": None if at is None else at.get("game", 0) + 1,
            "deal": None if at is None else at.get("deal", 0) + 1,
            "step": None if at is None else at.get("step"),
            "kind": None if at is None else at.get("kind"),
            "program": view_of("program"),
            "preview": view_of("preview"),
            "views": len(settings.views),
            "cue": ch.last_cue,
            "nextCue": _next_cue(settings, ch.last_cue),
        }

    def _key_name(self, channel: str) -> str:
        return CONTROL_KEY + channel

    def control_key(self, channel: str, *, renew: bool = False) -> str | None:
        """A new key with ``renew`` (shown once: the store keeps only its hash, as for the
        API token); else None, the key being unreadable once made."""
        self.hub.get(channel)
        if not renew:
            return None
        key = secrets.token_urlsafe(18)
        self.hub.store.set_meta(self._key_name(channel), control_key_hash(key))
        return key

    def has_control_key(self, channel: str) -> bool:
        self.hub.get(channel)
        return bool(self.hub.store.meta(self._key_name(channel)))

    def revoke_control_key(self, channel: str) -> None:
        self.hub.get(channel)
        self.hub.store.set_meta(self._key_name(channel), "")

    def check_control_key(self, channel: str, key: str) -> bool:
        """``key`` is the channel's key: compared as hashes in constant time (a key stored in
        the clear by an older version, under ``serve --redis``, is compared as it is)."""
        if channel not in self.hub.channels or not key:
            return False
        stored = self.hub.store.meta(self._key_name(channel)) or ""
        if not stored:
            return False
        given = control_key_hash(key) if stored.startswith(HASHED) else key
        return hmac.compare_digest(stored.encode(), given.encode())


    # -- games in, every table at a glance

    def game_held(self, channel: str) -> Held | None:
        g = self.hub.get(channel).game
        return None if g is None else Held(document=g.document, match=g.match, source=g.source)

    def load_game(self, channel: str, data: bytes, *, source: str) -> dict[str, Any]:
        return dump(self.hub.get(channel).ingest.load_game(data, source=source))

    def put_game(self, channel: str, data: bytes, *, source: str) -> dict[str, Any]:
        return dump(self.hub.get(channel).ingest.put_game(data, source=source, strict=False))

    def game_problems(self, channel: str) -> list[dict[str, Any]]:
        g = self.hub.get(channel).game
        return [] if g is None else [p.to_json() for p in g.problems]

    def allowed_dirs(self) -> list[str]:
        return [str(d) for d in self._allow_dirs]

    def reach(self) -> dict[str, Any]:
        from .network import listens_on_network, network_addresses

        return {"network": listens_on_network(self._host), "addresses": network_addresses(self._host)}

    def waiting_pages(self) -> list[dict[str, Any]]:
        now = time.time()
        out = []
        for w in self.hub.waiting.values():
            seen = w.get("lastSeen")
            age = round(max(0.0, now - seen), 1) if isinstance(seen, float) else None
            out.append({"channel": w.get("channel"), "requests": w.get("requests"), "error": w.get("error"), "age": age})
        return out


def mount_studio(
    app: web.Application, hub: Hub, data_dir: Path, guard: Callable[[Handler], Handler], *, allow_dirs: tuple[Path, ...] = (), host: str = "127.0.0.1"
) -> StudioBridge:
    """Mount the studio on ``app`` (the one place the overlay does so); returns its bridge."""
    from studio.app import mount

    bridge = StudioBridge(hub, uploads=Path(data_dir) / "uploads", guard=guard, allow_dirs=allow_dirs, host=host)
    mount(app, bridge)
    return bridge
