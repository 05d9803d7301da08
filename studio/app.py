"""The studio's aiohttp routes, mounted on the overlay's app by :func:`mount`.

Served without the token: the page shell ``GET /studio`` and its static modules (the page
signs in with the token and keeps it in ``sessionStorage``), and Stream Deck control links
``GET /studio/link/{channel}/{op}?key=`` (the channel's revocable control key: transport and
view switching only).  Everything under ``/studio/api`` (uploads and their images too) is
behind the host's token check.  Settings themselves are read and written
through the service's ``/api/channels/{id}/settings`` (GET, PATCH, PUT): one API.
"""

from __future__ import annotations

import asyncio
import functools
import json
from importlib.resources import files
from pathlib import Path
from typing import Any

from aiohttp import web
from pydantic import ValidationError

from engine.codec import parse_json_text
from engine.errors import CodecError
from renderer.easing import EASINGS, ease
from renderer.legacy import views_from_legacy
from renderer.matchdata import MatchData
from renderer.settings import ChannelSettings, default_views
from renderer.theme import Theme
from renderer.timing import TakeTransition, Timing
from renderer.analysis import default_extras
from renderer.placement import ON_FELT, place_extras
from renderer.reading import ANALYSIS_TYPES
from renderer.view import Element, ElementType, ExtraType, View

from .host import TRANSPORT_OPS, StudioHost
from .looks import export_look
from .tables import mount_tables
from .uploads import MAX_UPLOAD, UploadNotStored, UploadRefused, store_image, upload_path

__all__ = ["mount", "STATIC", "CSP", "Studio"]

STATIC = Path(str(files("studio") / "static"))

#: no inline script, no eval, nothing from elsewhere; the preview frames are same-origin pages
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "font-src 'self'; connect-src 'self'; frame-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
_HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}
_LEGACY_CAP = 16 * 1024 * 1024


#: the longest error text an answer carries (as the service's refusals)
MAX_ERROR = 600


def _settings_json(settings: ChannelSettings) -> dict[str, Any]:
    """A settings document as the service's settings API answers it (camelCase keys)."""
    return settings.model_dump(mode="json", by_alias=True)


def _refuse(status: int, message: str, kind: str = "studio") -> web.Response:
    """A refusal; its text cut to :data:`MAX_ERROR` characters (a legacy file's views could
    hold thousands of errors)."""
    if len(message) > MAX_ERROR:
        message = f"{message[:MAX_ERROR]}... ({len(message) - MAX_ERROR} more characters)"
    return web.json_response({"error": message, "kind": kind}, status=status)


async def page(request: web.Request) -> web.Response:
    """The studio page shell; everything else is loaded as ES modules from /studio/static."""
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    return web.Response(text=html, content_type="text/html", headers=_HEADERS)


def _element_sizes() -> dict[str, list[float]]:
    from renderer.build import element_size

    from renderer.extras import EXTRA_SIZES

    out: dict[str, list[float]] = {t.value: [w, h] for t, (w, h) in EXTRA_SIZES.items()}
    for t in ElementType:
        try:
            w, h = element_size(t)
        except KeyError:  # a type the renderer has no box for yet draws nothing
            continue
        out[t.value] = [w, h]
    return out


def _easing_curves(samples: int = 48) -> dict[str, list[float]]:
    """Each easing sampled on 0..1, so the studio draws the real curve (no second copy in JS)."""
    return {name: [round(ease(name, i / samples), 4) for i in range(samples + 1)] for name in EASINGS}


@functools.cache
def _schema_body() -> bytes:
    """The studio's schema answer (see :meth:`Studio.schema`), made once: the models, the
    default views and the curves do not change while the process runs (about 30 ms a time)."""
    body = {
        "settings": ChannelSettings.model_json_schema(by_alias=True),
        "view": View.model_json_schema(),
        "element": Element.model_json_schema(),
        "theme": Theme.model_json_schema(),
        "timing": Timing.model_json_schema(),
        "match": MatchData.model_json_schema(),
        "defaults": {"views": {o: v.model_dump(mode="json") for o, v in default_views().items()}},
        "sizes": _element_sizes(),
        "easings": _easing_curves(),
        "transportOps": list(TRANSPORT_OPS),
        # what covers what (renderer.placement): the overlap warnings leave out what is
        # drawn on the felt by design; the analysis extras drawn while a view places none
        "onFelt": {k: sorted(v) for k, v in ON_FELT.items()},
        "analysisTypes": sorted(t.value for t in ANALYSIS_TYPES),
        "analysisDefaults": [e.model_dump(mode="json") for e in default_extras()],
    }
    return json.dumps(body).encode()


class Studio:
    """The studio's handlers over one host (bound methods: no state on the app)."""

    def __init__(self, host: StudioHost) -> None:
        self.host = host

    async def schema(self, request: web.Request) -> web.Response:
        """JSON schemas of every settings model (the only field list the studio has), the element
        boxes in view pixels, and the easing curves: the same for the life of the process."""
        return web.Response(body=_schema_body(), content_type="application/json", headers={"Cache-Control": "no-store"})

    async def channels(self, request: web.Request) -> web.Response:
        return web.json_response({"channels": self.host.channel_ids()})

    async def place(self, request: web.Request) -> web.Response:
        """Where new extras go on a view (``{"view": View, "types": [kind, ...]}``, placed one
        after another): free space inside title-safe, or, where there is none, the spot
        covering least with what it covers (renderer.placement)."""
        try:
            body = await request.json()
            kinds = [ExtraType(t) for t in body["types"]][:16]
            view = View.model_validate(body["view"])
            scale = float(body.get("scale", 1.0))
        except (ValueError, KeyError, TypeError) as exc:
            return _refuse(400, f"place: {exc}", "bad_request")
        if not 0.1 <= scale <= 4 or not kinds:
            return _refuse(400, "place: one to 16 types, a scale from 0.1 to 4", "bad_request")
        places = place_extras(view, kinds, scale=scale)
        return web.json_response({"places": [{"type": k.value, "x": p.x, "y": p.y, "fits": p.fits, "covers": list(p.covers)} for k, p in zip(kinds, places)]})

    async def export(self, request: web.Request) -> web.Response:
        """The channel's whole look as one file (:func:`studio.looks.export_look`): ``render
        --channel-settings FILE`` takes it as it is, with no data folder."""
        channel = request.match_info["channel"]
        body = export_look(self.host.settings_of(channel), self.host.uploads, channel=channel)
        return web.json_response(body, headers={"Content-Disposition": f'attachment; filename="{channel}-look.json"', "Cache-Control": "no-store"})

    async def legacy(self, request: web.Request) -> web.Response:
        """Read an old EGN file's ``views``/``timings``/``viewSwitches`` (the file is not kept)."""
        data = await request.read()
        if len(data) > _LEGACY_CAP:
            return _refuse(413, f"EGN file over the {_LEGACY_CAP} byte cap", "too_large")
        try:
            doc = parse_json_text(data, source="the file")  # UTF-8, or UTF-16/32 with a BOM, as the engine reads games
        except CodecError as exc:
            return _refuse(400, f"not an EGN JSON file: {exc}", "json")
        if not isinstance(doc, dict):
            return _refuse(400, "not an EGN JSON file: the top level is not an object", "json")
        try:
            views = views_from_legacy(doc.get("views", []))
        except (ValueError, ValidationError) as exc:
            return _refuse(400, f"legacy views: {exc}", "legacy")
        switches = doc.get("viewSwitches")
        timings = doc.get("timings")
        return web.json_response(
            {
                "views": [v.model_dump(mode="json") for v in views],
                "viewSwitches": switches if isinstance(switches, (dict, list)) else None,
                "timings": timings if isinstance(timings, (dict, list)) else None,
            }
        )

    async def upload(self, request: web.Request) -> web.Response:
        """Store an image (raw body, or the first file of a multipart form); returns its id and URL."""
        name = request.query.get("name", "upload")[:120]
        if request.content_length is not None and request.content_length > MAX_UPLOAD + 64 * 1024:
            return _refuse(413, f"upload over the {MAX_UPLOAD} byte cap", "too_large")
        if request.content_type.startswith("multipart/"):
            reader = await request.multipart()
            data = b""
            async for part in reader:
                if getattr(part, "filename", None):
                    name = (part.filename or name)[:120]  # type: ignore[union-attr]
                    data = await part.read()  # type: ignore[union-attr]
                    break
        else:
            data = await request.read()
        try:  # decoding the image takes up to a few hundred ms: off the event loop
            upload_id = await asyncio.to_thread(store_image, self.host.uploads, data, filename=name)
        except UploadRefused as exc:
            return _refuse(exc.status, str(exc), "too_large" if exc.status == 413 else "upload")
        except UploadNotStored as exc:
            return _refuse(exc.status, str(exc), "store_full" if exc.status == 507 else "store")
        return web.json_response({"id": upload_id, "url": f"/studio/api/uploads/{upload_id}", "name": name}, status=201)

    async def uploaded(self, request: web.Request) -> web.StreamResponse:
        found = upload_path(self.host.uploads, request.match_info["name"])
        if found is None:
            return _refuse(404, "no such upload", "not_found")
        path, ctype = found
        return web.FileResponse(path, headers={"Content-Type": ctype, "X-Content-Type-Options": "nosniff", "Cache-Control": "max-age=86400"})

    async def timeline(self, request: web.Request) -> web.Response:
        """The scrubber's data (deal and kind per step), the game's alternative lines (the
        picker's), and why stored settings were refused."""
        channel = request.match_info["channel"]
        host = self.host
        steps = [{"deal": s.deal, "dealNumber": s.deal_number, "kind": s.kind.value} for s in host.timeline(channel)]
        lines = [line.to_json() for line in host.lines(channel)]
        return web.json_response({"steps": steps, "lines": lines, "settingsProblem": host.settings_problem(channel)})

    async def take(self, request: web.Request) -> web.Response:
        channel = request.match_info["channel"]
        transition = self._transition(channel, request.query)
        if isinstance(transition, web.Response):
            return transition
        return web.json_response(_settings_json(self.host.take(channel, transition)))

    async def cue(self, request: web.Request) -> web.Response:
        """Fire a rundown cue by its id, or ``next`` (GO)."""
        return web.json_response(self.host.fire_cue(request.match_info["channel"], request.match_info["cue"]))

    def _transition(self, channel: str, query: Any) -> TakeTransition | None | web.Response:
        """The TAKE transition a query names (``transition`` cut/mix/wipe, ``duration``
        seconds; what it leaves out from the channel's ``timing.take``), None when it names
        none, or a 400 that says what is wrong."""
        if "transition" not in query and "duration" not in query:
            return None
        base = self.host.settings_of(channel).timing.take
        update: dict[str, Any] = base.model_dump()
        if "transition" in query:
            update["style"] = query["transition"]
        if "duration" in query:
            update["run_time"] = query["duration"]
        try:
            return TakeTransition.model_validate(update)
        except ValidationError as exc:
            problems = "; ".join(f"{'transition' if e['loc'] == ('style',) else 'duration'}: {e['msg']}" for e in exc.errors())
            return _refuse(400, f"TAKE transition refused: {problems} (transition is cut, mix, wipe or stinger; duration is seconds, above 0 and at most 5)")

    @staticmethod
    def _index(raw: str) -> int | None:
        try:
            n = int(raw)
        except ValueError:
            return None
        return n - 1 if 1 <= n <= 99 else None

    async def switch_view(self, request: web.Request) -> web.Response:
        n = self._index(request.match_info["n"])
        if n is None:
            return _refuse(400, f"view number {request.match_info['n']!r} is not 1..99")
        output = request.query.get("output", "preview")
        channel = request.match_info["channel"]
        transition = self._transition(channel, request.query)
        if isinstance(transition, web.Response):
            return transition
        return web.json_response(_settings_json(self.host.switch_view(channel, n, output, transition)))

    async def control_key(self, request: web.Request) -> web.Response:
        host = self.host
        channel = request.match_info["channel"]
        if request.method == "DELETE":
            host.revoke_control_key(channel)
            return web.json_response({"key": None, "set": False})
        # the key is shown once, when made (only its hash is kept); GET says whether one is set
        key = host.control_key(channel, renew=request.method == "POST")
        return web.json_response({"key": key, "set": key is not None or host.has_control_key(channel), "links": {} if key is None else self._links(channel, key)})

    def _links(self, channel: str, key: str) -> dict[str, str]:
        """A link for each thing the key may do on this channel now: transport, TAKE (by the
        channel's transition and by each one), each rundown cue and GO (the next cue), each named view (on program, and on preview), each deal (seek), each alternative line and the
        way back (mainline), and the state a button shows (``state``)."""
        base = f"/studio/link/{channel}"
        q = f"key={key}"
        out = {op: f"{base}/{op}?{q}" for op in ("toggle", "play", "pause", "next", "back", "step", "live")}
        out["state"] = f"{base}/state?{q}"
        out["take"] = f"{base}/take?{q}"
        for style in ("cut", "mix", "wipe", "stinger"):
            out[f"take ({style})"] = f"{base}/take?transition={style}&{q}"
        can = self.host.link_targets(channel)
        for n, cue in enumerate(can.get("cues", []), 1):
            out[f"cue {n} {cue['name'] or cue['id']}"] = f"{base}/cue?id={cue['id']}&{q}"
        if can.get("cues"):
            out["cue next (GO)"] = f"{base}/cue?id=next&{q}"
        for n, name in enumerate(can["views"], 1):
            out[f"view{n} {name}"] = f"{base}/view?n={n}&{q}"
            out[f"view{n} {name} (preview)"] = f"{base}/view?n={n}&output=preview&{q}"
        for g in can["games"]:
            for d in range(1, g["deals"] + 1):
                if can["match"]:
                    out[f"seek {g['label']} deal {d}"] = f"{base}/seek?game={g['index'] + 1}&deal={d}&{q}"
                else:
                    out[f"seek deal {d}"] = f"{base}/seek?deal={d}&{q}"
        for line in can["lines"]:
            where = f"game={line['game']}&" if line.get("game") else ""
            label = f"line {line['line']} of deal {line['deal']}" + (f" of game {line['game']}" if line.get("game") else "") + f": {line.get('player') or ''} {line.get('play') or ''}".rstrip()
            out[label] = f"{base}/branch?{where}deal={line['deal']}&line={line['line']}&{q}"
        if can["lines"]:
            out["mainline"] = f"{base}/mainline?{q}"
        return out

    async def link(self, request: web.Request) -> web.Response:
        """A Stream Deck link: plain GET, the control key instead of the token.

        Transport ops, ``view`` (``n``, optional ``output``), ``take`` (each with an optional
        ``transition`` and ``duration``) and ``cue`` (``id``, or ``next``) only; nothing else is
        reachable with the key.
        """
        host = self.host
        channel = request.match_info["channel"]
        op = request.match_info["op"]
        if not host.check_control_key(channel, request.query.get("key", "")):
            return _refuse(401, "missing or wrong control key", "unauthorized")
        if op == "state":  # a button's feedback: what is on air, playing or paused, which view, the deal
            return web.json_response(host.link_state(channel), headers={"Cache-Control": "no-store"})
        if op == "view":
            n = self._index(request.query.get("n", ""))
            if n is None:
                return _refuse(400, "view link needs n=1..99")
            transition = self._transition(channel, request.query)
            if isinstance(transition, web.Response):
                return transition
            host.switch_view(channel, n, request.query.get("output", "program"), transition)
            return web.json_response({"ok": True, "view": n + 1})
        if op == "cue":  # a rundown cue by its id, or next (GO)
            cue = request.query.get("id", "")
            if not cue:
                return _refuse(400, "cue link needs id=<cue id> or id=next")
            return web.json_response(host.fire_cue(channel, cue))
        if op == "take":  # the preview's layout on air, by the channel's TAKE transition or the one named
            transition = self._transition(channel, request.query)
            if isinstance(transition, web.Response):
                return transition
            host.take(channel, transition)
            return web.json_response({"ok": True})
        if op not in TRANSPORT_OPS:
            return _refuse(403, f"a control key allows {', '.join(TRANSPORT_OPS)}, view, take and cue only, not {op!r}", "forbidden")
        params = {k: v for k, v in request.query.items() if k in ("step", "deal", "game", "line", "speed", "value")}
        return web.json_response(host.control(channel, op, params))


async def _to_studio(request: web.Request) -> web.StreamResponse:
    """``/studio/`` (a browser's completion, a bookmark): the studio."""
    raise web.HTTPMovedPermanently("/studio" + (f"?{request.query_string}" if request.query_string else ""))


def mount(app: web.Application, host: StudioHost) -> None:
    """Add the studio's routes to ``app``; ``host`` provides auth, channels, control and storage."""
    st = Studio(host)
    g = host.guard
    r = app.router
    r.add_get("/studio", page)
    r.add_get("/studio/", _to_studio)  # as a browser may complete the address
    r.add_static("/studio/static", STATIC)
    r.add_get("/studio/link/{channel}/{op}", st.link)
    r.add_get("/studio/api/schema", g(st.schema))
    r.add_get("/studio/api/channels", g(st.channels), name="studio_channels")
    r.add_post("/studio/api/legacy", g(st.legacy))
    r.add_post("/studio/api/place", g(st.place))
    r.add_get("/studio/api/channels/{channel}/export", g(st.export))
    r.add_post("/studio/api/uploads", g(st.upload))
    r.add_get("/studio/api/uploads/{name}", g(st.uploaded))
    r.add_get("/studio/api/channels/{channel}/timeline", g(st.timeline))
    r.add_post("/studio/api/channels/{channel}/take", g(st.take))
    r.add_post("/studio/api/channels/{channel}/cue/{cue}", g(st.cue))
    r.add_post("/studio/api/channels/{channel}/view/{n}", g(st.switch_view))
    r.add_get("/studio/api/channels/{channel}/control-key", g(st.control_key))
    r.add_post("/studio/api/channels/{channel}/control-key", g(st.control_key))
    r.add_delete("/studio/api/channels/{channel}/control-key", g(st.control_key))
    mount_tables(app, host)  # games in, waiting pages (studio.tables)
