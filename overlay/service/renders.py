"""Render from the studio: a channel's game (or a deal range) rendered with the channel's
settings, match data and images to a video file, as a job with progress, cancel and a
download link.

A job runs ``euchre-overlay render`` itself, as a child process (the same code as the
command; the service's event loop never draws a frame), on copies taken when it starts: the
game the channel holds (in a match, the game on air), and the studio's full export of the
settings (``GET /studio/api/channels/{id}/export``: the settings document with the images it
names), so later edits do not change a render under way.  It draws in that one process
(``--workers 0``) beside the live show, one render at a time per server (a second waits), at
a lower CPU priority (``RENDER_NICE``, as ``nice -n 10``: the encoder's threads take one and a
half cores, and on a producer's two-core laptop the live page and OBS came second);
progress comes from the command's ``--progress-file``; cancel is a SIGINT, which removes the
partial file.  Files live under ``DATA/renders/{channel}/{id}/`` until deleted (``DELETE`` of
a finished job) or the channel is.  Each job's record sits beside its file (``job.json``,
written at every change of status), so a restarted server lists the channel's renders as
they were: finished ones with their files, one the stop interrupted as failed, with why.

Routes (the API token, as the studio's): ``POST /studio/api/channels/{channel}/renders``
(JSON: ``codec``, ``deals``, ``fps``, ``size``, ``from``, ``to``: a piece of that video, as
``render --from/--to``), ``GET …/renders`` (the channel's jobs),
``GET …/renders/{id}``, ``DELETE …/renders/{id}`` (cancel, or delete a finished one's file),
``GET …/renders/{id}/file`` (the file, as a download).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from .errors import BadRequest, NotFound
from .hub import Hub

__all__ = ["RenderJob", "Renders", "mount_renders", "CODECS", "MAX_JOBS", "RENDER_NICE", "render_niceness"]

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

#: codecs a studio render may use (``euchre-overlay render --codec``), and the file each writes
CODECS: dict[str, str] = {"qtrle": ".mov", "prores": ".mov", "vp9": ".webm", "h264": ".mp4"}
#: jobs kept per channel (the oldest finished ones go first)
MAX_JOBS = 20
#: the niceness of a render job's process (the live show's processes keep 0): under load the
#: show gets about ten times the render's share of a core (Linux's weights, 1024 against 110)
RENDER_NICE = 10


def render_niceness() -> int:
    """A render job's niceness: the service's own plus ``RENDER_NICE`` (``nice -n 10``)."""
    return min(19, os.getpriority(os.PRIO_PROCESS, 0) + RENDER_NICE)


_DEALS = re.compile(r"^\d{1,4}(-\d{1,4})?(,\d{1,4}(-\d{1,4})?)*$")
_SIZE = re.compile(r"^\d{3,4}x\d{3,4}$")


@dataclass
class RenderJob:
    """One render: what it draws, where it is, and its file."""

    id: str
    channel: str
    codec: str
    deals: str | None
    fps: str
    size: str | None
    folder: Path
    source: str
    start: str | None = None  # render --from: a time of the video (seconds or [h:]mm:ss[.fff])
    end: str | None = None  # render --to
    match_game: int | None = None  # render --match-game: the game of a match on air, from 1
    status: str = "waiting"  # waiting, running, done, failed, cancelled
    done: int = 0
    total: int = 0
    created: float = field(default_factory=time.time)
    ended: float | None = None
    error: str | None = None
    proc: asyncio.subprocess.Process | None = None

    @property
    def file(self) -> Path:
        return self.folder / f"{self.channel}-{self.id}{CODECS[self.codec]}"

    def save(self) -> None:
        """Write the job's record beside its file (what a restarted server lists)."""
        record = {k: v for k, v in self.to_json().items() if k not in ("bytes", "url", "progress")}
        with contextlib.suppress(OSError):
            tmp = self.folder / "job.json.tmp"
            tmp.write_text(json.dumps(record), encoding="utf-8")
            tmp.replace(self.folder / "job.json")

    @classmethod
    def load(cls, folder: Path) -> RenderJob | None:
        """The job recorded in ``folder`` (None: no readable record).  One the server's stop
        interrupted (waiting or running) is failed, its partial file removed."""
        try:
            r = json.loads((folder / "job.json").read_text(encoding="utf-8"))
            job = cls(str(r["id"]), str(r["channel"]), str(r["codec"]), r.get("deals"), str(r["fps"]), r.get("size"), folder, str(r.get("source") or ""),
                      start=r.get("from"), end=r.get("to"), match_game=r.get("matchGame"))
            if job.codec not in CODECS or job.id != folder.name:
                return None
            job.status, job.done, job.total = str(r["status"]), int(r.get("done") or 0), int(r.get("total") or 0)
            job.created, job.ended, job.error = float(r["created"]), r.get("ended"), r.get("error")
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if job.status in ("waiting", "running"):
            job.file.unlink(missing_ok=True)
            job.status, job.error = "failed", "the server stopped during this render; start it again"
            job.ended = job.ended or job.created
            job.save()
        elif job.status == "done" and not job.file.exists():
            job.status, job.error = "failed", "its file is gone"
        return job

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "channel": self.channel,
            "codec": self.codec,
            "deals": self.deals,
            "fps": self.fps,
            "size": self.size,
            "from": self.start,
            "to": self.end,
            "matchGame": self.match_game,
            "source": self.source,
            "status": self.status,
            "done": self.done,
            "total": self.total,
            "progress": round(self.done / self.total, 4) if self.total else 0.0,
            "created": self.created,
            "ended": self.ended,
            "error": self.error,
            "bytes": self.file.stat().st_size if self.status == "done" and self.file.exists() else None,
            "url": f"/studio/api/channels/{self.channel}/renders/{self.id}/file" if self.status == "done" else None,
        }


def _clock(form: dict[str, Any], key: str) -> tuple[str, float] | None:
    """``from``/``to`` of a render form: the text and its seconds (None: not given).

    Raises:
        BadRequest: not a time (names the field).
    """
    from renderer.timing import parse_clock

    text = form.get(key)
    if text is None or text == "":
        return None
    if not isinstance(text, str) or len(text) > 20:
        raise BadRequest(f"render: {key} as seconds (75.5) or [h:]mm:ss (1:15.5)")
    try:
        return text.strip(), parse_clock(text)
    except ValueError as exc:
        raise BadRequest(f"render: {key} {text!r}: {exc}") from None


class Renders:
    """The render jobs of one service (one running at a time)."""

    def __init__(self, hub: Hub, data_dir: Path, export: Callable[[str], dict[str, Any]]) -> None:
        self.hub = hub
        self.root = Path(data_dir) / "renders"
        self.export = export  # the studio's full export of a channel's settings
        self.jobs: dict[str, list[RenderJob]] = {}
        self.turn = asyncio.Lock()
        self.tasks: set[asyncio.Task[None]] = set()
        self._reload()

    def _reload(self) -> None:
        """The jobs recorded under the data folder (a restarted server), oldest first."""
        if not self.root.is_dir():
            return
        for channel_dir in sorted(p for p in self.root.iterdir() if p.is_dir()):
            found = [j for j in (RenderJob.load(d) for d in channel_dir.iterdir() if d.is_dir()) if j is not None and j.channel == channel_dir.name]
            if found:
                self.jobs[channel_dir.name] = sorted(found, key=lambda j: j.created)[-MAX_JOBS:]

    def of(self, channel: str) -> list[RenderJob]:
        return self.jobs.get(channel, [])

    def get(self, channel: str, job_id: str) -> RenderJob:
        for j in self.of(channel):
            if j.id == job_id:
                return j
        raise NotFound(f"channel {channel!r} has no render {job_id[:40]!r}", channel=channel)

    def start(self, channel: str, form: Any) -> RenderJob:
        """A new job for ``channel`` (queued behind a running one).

        Raises:
            BadRequest: a bad field (named), or a channel with no game.
            NotFound: no such channel.
        """
        ch = self.hub.get(channel)
        if not isinstance(form, dict):
            raise BadRequest("render: expected a JSON object")
        codec = form.get("codec", "qtrle")
        if codec not in CODECS:
            raise BadRequest(f"render: codec {str(codec)[:20]!r} is not one of {', '.join(CODECS)}")
        deals = form.get("deals") or None
        if deals is not None and (not isinstance(deals, str) or not _DEALS.match(deals.replace(" ", ""))):
            raise BadRequest("render: deals as the screen counts them: 3, 2-4 or 1,3-5")
        fps = str(form.get("fps", "30"))
        if fps not in ("24", "25", "30", "50", "60", "30000/1001", "60000/1001"):
            raise BadRequest("render: fps one of 24, 25, 30, 50, 60, 30000/1001, 60000/1001")
        size = form.get("size") or None
        if size is not None and (not isinstance(size, str) or not _SIZE.match(size)):
            raise BadRequest("render: size as WIDTHxHEIGHT, e.g. 1920x1080")
        start, end = _clock(form, "from"), _clock(form, "to")
        if start is not None and end is not None and end[1] <= start[1]:
            raise BadRequest(f"render: to ({end[0]}) is not after from ({start[0]})")
        game = ch.game
        if game is None:
            raise BadRequest(f"render: channel {channel!r} has no game to render")
        document: dict[str, Any] = game.document
        match_game: int | None = None
        if game.match:
            # the game on air, drawn from the whole match so that it is titled as the pages title it
            on_air = (ch.program_at(self.hub.clock()) or {}).get("game", 0) or 0
            games = document.get("games") or []
            if not 0 <= on_air < len(games):
                raise BadRequest(f"render: channel {channel!r}'s match has no game {on_air + 1}")
            match_game = on_air + 1
        jobs = self.jobs.setdefault(channel, [])
        finished = [j for j in jobs if j.status not in ("waiting", "running")]
        while len(jobs) >= MAX_JOBS and finished:
            old = finished.pop(0)
            jobs.remove(old)
            shutil.rmtree(old.folder, ignore_errors=True)
        if len(jobs) >= MAX_JOBS:
            raise BadRequest(f"render: channel {channel!r} has {MAX_JOBS} renders under way")
        job_id = secrets.token_hex(4)
        folder = self.root / channel / job_id
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "game.egn").write_text(json.dumps(document), encoding="utf-8")
        (folder / "look.json").write_text(json.dumps(self.export(channel)), encoding="utf-8")
        job = RenderJob(job_id, channel, codec, deals.replace(" ", "") if deals else None, fps, size, folder, source=game.source,
                        start=None if start is None else start[0], end=None if end is None else end[0], match_game=match_game)
        jobs.append(job)
        job.save()
        task = asyncio.get_running_loop().create_task(self._run(job), name=f"render-{channel}-{job_id}")
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return job

    async def _run(self, job: RenderJob) -> None:
        async with self.turn:
            if job.status == "cancelled":
                return
            job.status = "running"
            job.save()
            args = [
                sys.executable, "-m", "overlay.cli", "render", str(job.folder / "game.egn"), "-o", str(job.file),
                "--codec", job.codec, "--channel-settings", str(job.folder / "look.json"), "--fps", job.fps,
                "--workers", "0", "--on-interrupt", "remove", "--progress-file", str(job.folder / "progress"),
            ]
            if job.match_game is not None:
                args += ["--match-game", str(job.match_game)]
            if job.deals:
                args += ["--deals", job.deals]
            if job.size:
                args += ["--size", job.size]
            if job.start:
                args += ["--from", job.start]
            if job.end:
                args += ["--to", job.end]
            err = (job.folder / "stderr.txt").open("wb")
            try:
                job.proc = await asyncio.create_subprocess_exec(*args, stdout=asyncio.subprocess.DEVNULL, stderr=err, stdin=asyncio.subprocess.DEVNULL)
                # set at once, while the child is still starting Python: the encoder's threads,
                # made later, inherit it (a preexec_fn is unsafe in a server with threads)
                with contextlib.suppress(OSError):
                    os.setpriority(os.PRIO_PROCESS, job.proc.pid, render_niceness())
                while True:
                    try:
                        rc = await asyncio.wait_for(job.proc.wait(), 0.25)
                        break
                    except asyncio.TimeoutError:
                        self._progress(job)
            finally:
                err.close()
            self._progress(job)
            job.ended = time.time()
            if job.status == "cancelled":
                job.save()
                return
            if rc == 0 and job.file.exists():
                job.status = "done"
                job.done = job.total = max(job.done, job.total)
            else:
                job.status = "failed"
                tail = (job.folder / "stderr.txt").read_text(encoding="utf-8", errors="replace").strip().splitlines()
                lines = [ln for ln in tail if ln.strip() and "\r" not in ln and "frame/s" not in ln]
                error = lines[-1] if lines else f"render exited with {rc}"
                # as the producer knows them: the channel's game, not the job's copy of it
                error = error.removeprefix("euchre-overlay: ").replace(str(job.folder / "game.egn"), job.source or "the game")
                job.error = error[:600]
            job.save()

    @staticmethod
    def _progress(job: RenderJob) -> None:
        with contextlib.suppress(OSError, ValueError):
            done, total = (job.folder / "progress").read_text(encoding="utf-8").split()
            job.done, job.total = int(done), int(total)

    async def cancel(self, job: RenderJob) -> None:
        """Stop a waiting or running job (its partial file is removed), or delete a finished
        one's folder."""
        if job.status in ("waiting", "running"):
            was = job.status
            job.status = "cancelled"
            job.ended = time.time()
            if was == "running" and job.proc is not None and job.proc.returncode is None:
                job.proc.send_signal(signal.SIGINT)  # the command removes what it wrote (--on-interrupt remove)
                try:
                    await asyncio.wait_for(job.proc.wait(), 10)
                except asyncio.TimeoutError:
                    job.proc.kill()
                    await job.proc.wait()
            # interrupted before its first frame, the command had no file to remove yet: no
            # partial file is left either way
            job.file.unlink(missing_ok=True)
            job.save()
            return
        self.jobs[job.channel].remove(job)
        shutil.rmtree(job.folder, ignore_errors=True)

    async def close(self) -> None:
        for jobs in self.jobs.values():
            for j in jobs:
                if j.proc is not None and j.proc.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        j.proc.kill()
        for t in list(self.tasks):
            t.cancel()


def mount_renders(app: web.Application, hub: Hub, data_dir: Path, guard: Callable[[Handler], Handler], export: Callable[[str], dict[str, Any]]) -> Renders:
    """The render routes on ``app``, behind ``guard`` (the token); returns the jobs."""
    renders = Renders(hub, data_dir, export)

    async def start(request: web.Request) -> web.Response:
        try:
            form = await request.json()
        except ValueError:
            raise BadRequest("render: the body is not JSON") from None
        job = renders.start(request.match_info["channel"], form)
        return web.json_response(job.to_json(), status=202)

    async def listing(request: web.Request) -> web.Response:
        channel = request.match_info["channel"]
        hub.get(channel)
        return web.json_response({"renders": [j.to_json() for j in reversed(renders.of(channel))]})

    async def one(request: web.Request) -> web.Response:
        return web.json_response(renders.get(request.match_info["channel"], request.match_info["id"]).to_json())

    async def cancel(request: web.Request) -> web.Response:
        job = renders.get(request.match_info["channel"], request.match_info["id"])
        await renders.cancel(job)
        return web.json_response(job.to_json())

    async def download(request: web.Request) -> web.StreamResponse:
        job = renders.get(request.match_info["channel"], request.match_info["id"])
        if job.status != "done" or not job.file.exists():
            raise NotFound(f"render {job.id} has no file ({job.status})", channel=job.channel)
        return web.FileResponse(job.file, headers={"Content-Disposition": f'attachment; filename="{job.file.name}"', "Cache-Control": "no-store"})

    async def stop(app: web.Application) -> None:
        await renders.close()

    app.on_shutdown.append(stop)
    r = app.router
    r.add_post("/studio/api/channels/{channel}/renders", guard(start))
    r.add_get("/studio/api/channels/{channel}/renders", guard(listing))
    r.add_get("/studio/api/channels/{channel}/renders/{id}", guard(one))
    r.add_delete("/studio/api/channels/{channel}/renders/{id}", guard(cancel))
    r.add_get("/studio/api/channels/{channel}/renders/{id}/file", guard(download))
    return renders
