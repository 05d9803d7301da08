"""Render from the studio (issue 23 item 10), against the real service in process and the
real ``euchre-overlay render`` it runs as a child process: a deal range rendered with the
channel's settings to a file with alpha, its progress, a download decoded with PyAV, cancel;
and the studio's full export of a look, which ``render --channel-settings`` / ``frame`` take
as they are, images and all, with no data folder."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import av
import numpy as np
import pytest
from PIL import Image

from overlay.service.app import create_app
from overlay.service.config import ServerSettings
from overlay.service.keys import RENDERS
from overlay.service.renders import RENDER_NICE, render_niceness
from tests.support import AUTH, game

pytestmark = pytest.mark.slow  # started first: see tests/conftest.py

ROOT = Path(__file__).resolve().parents[2]
DOC = game(9, deals=3)
URL = "/studio/api/channels/t1/renders"


@pytest.fixture
async def client(aiohttp_client: Any, settings: ServerSettings) -> Any:
    c = await aiohttp_client(create_app(settings))
    assert (await c.post("/api/channels", json={"id": "t1", "title": "Table 1"}, headers=AUTH)).status == 201
    r = await c.put("/api/channels/t1/game", data=json.dumps(DOC), headers=AUTH)
    assert r.status == 200, await r.text()
    return c


async def _until(client: Any, job: str, want: set[str], timeout: float = 240.0) -> dict[str, Any]:
    t0 = time.monotonic()
    seen: list[float] = []
    while True:
        body: dict[str, Any] = await (await client.get(f"{URL}/{job}", headers=AUTH)).json()
        seen.append(body["progress"])
        if body["status"] in want:
            body["seen"] = seen
            return body
        assert time.monotonic() - t0 < timeout, body
        await asyncio.sleep(0.1)


async def test_a_deal_range_renders_to_a_file_with_alpha_and_downloads(client: Any) -> None:
    # deal 2's video from 2 s to 6.5 s: its frames 48 to 155 at 24 frames/s
    r = await client.post(URL, json={"codec": "qtrle", "deals": "2", "fps": "24", "size": "640x360", "from": "0:02", "to": "6.5"}, headers=AUTH)
    job = await r.json()
    assert r.status == 202 and job["status"] in ("waiting", "running") and (job["from"], job["to"]) == ("0:02", "6.5"), job
    done = await _until(client, job["id"], {"done", "failed"})
    assert done["status"] == "done", done
    assert done["total"] == 108 and done["done"] == done["total"] and done["progress"] == 1.0
    assert sorted(done["seen"]) == done["seen"]  # progress only goes forward
    listed = (await (await client.get(URL, headers=AUTH)).json())["renders"]
    assert [j["id"] for j in listed] == [job["id"]]
    r = await client.get(done["url"], headers=AUTH)
    assert r.status == 200 and "attachment" in r.headers["Content-Disposition"]
    data = await r.read()
    assert len(data) == done["bytes"]
    with av.open(io.BytesIO(data)) as c:
        stream = c.streams.video[0]
        count, first = 0, []  # every frame decoded; the first 48 as pixels
        for f in c.decode(video=0):
            count += 1
            if count <= 48:
                first.append(f.to_ndarray(format="rgba")[..., 3])
    assert (stream.width, stream.height) == (640, 360) and count == done["total"]
    alpha = np.stack(first)
    assert alpha.min() == 0 and alpha.max() == 255  # transparent around the graphics, opaque on them
    # a restarted server lists it as it was (its record sits beside its file); a job the stop
    # interrupted is listed as failed, with why, and leaves no partial file
    from overlay.service.renders import Renders

    renders = client.server.app[RENDERS]
    stopped = renders.root / "t1" / "0badf00d"
    stopped.mkdir()
    record = json.loads((renders.root / "t1" / job["id"] / "job.json").read_text())
    (stopped / "job.json").write_text(json.dumps({**record, "id": "0badf00d", "status": "running", "created": record["created"] + 1}))
    (stopped / f"t1-0badf00d.mov").write_bytes(b"partial")
    again = Renders(renders.hub, renders.root.parent, renders.export)
    back = {j.id: j.to_json() for j in again.of("t1")}
    assert back[job["id"]]["status"] == "done" and back[job["id"]]["bytes"] == done["bytes"] and back[job["id"]]["url"] == done["url"]
    assert (back[job["id"]]["from"], back[job["id"]]["to"]) == ("0:02", "6.5")
    assert back["0badf00d"]["status"] == "failed" and "server stopped" in back["0badf00d"]["error"]
    assert not (stopped / "t1-0badf00d.mov").exists()
    # the token guards it; a finished job's DELETE removes its file
    assert (await client.get(done["url"])).status == 401
    r = await client.delete(f"{URL}/{job['id']}", headers=AUTH)
    assert r.status == 200 and (await client.get(done["url"], headers=AUTH)).status == 404


async def test_a_render_is_cancelled_and_its_partial_file_removed(client: Any) -> None:
    """Cancel is a SIGINT the render command answers by removing its file, even when the service
    runs with SIGINT ignored (started by a script's ``&``), which its render jobs inherit."""
    ignored = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        r = await client.post(URL, json={"codec": "qtrle", "fps": "60", "size": "640x360"}, headers=AUTH)  # the whole game at 60 fps: long
        job = await r.json()
        await _until(client, job["id"], {"running"})
    finally:
        signal.signal(signal.SIGINT, ignored)
    for _ in range(100):  # until it has drawn a few frames
        body = await (await client.get(f"{URL}/{job['id']}", headers=AUTH)).json()
        if body["done"] > 0:
            break
        await asyncio.sleep(0.1)
    # the render runs below the live show: every thread of it (the encoder's too) RENDER_NICE below the service
    renders = client.server.app[RENDERS]
    (proc,) = [j.proc for j in renders.jobs["t1"] if j.id == job["id"]]
    assert proc is not None
    nices = {int(stat.read_text().rsplit(")", 1)[1].split()[16]) for stat in Path(f"/proc/{proc.pid}/task").glob("*/stat")}
    assert nices == {render_niceness()} and render_niceness() == min(19, os.getpriority(os.PRIO_PROCESS, 0) + RENDER_NICE), nices
    t0 = time.monotonic()
    r = await client.delete(f"{URL}/{job['id']}", headers=AUTH)
    body = await r.json()
    assert body["status"] == "cancelled" and body["url"] is None
    assert proc is not None and proc.returncode == 130, "interrupted, not killed after the service's 10 s"
    assert time.monotonic() - t0 < 8
    folder = renders.root / "t1" / job["id"]
    assert not any(folder.glob("*.mov"))


async def test_a_window_past_the_video_fails_saying_so(client: Any) -> None:
    r = await client.post(URL, json={"deals": "1", "from": "15:00", "size": "640x360"}, headers=AUTH)
    assert r.status == 202
    failed = await _until(client, (await r.json())["id"], {"done", "failed"})
    # named as the producer knows the game (the channel's), not by the job's copy of it
    assert failed["status"] == "failed" and failed["source"] and "renders" not in failed["error"], failed
    assert failed["error"].startswith(f"{failed['source']}: --from 15:00: the window starts at 900 s, after the video's end ("), failed


@pytest.mark.parametrize("form, word", [({"codec": "gif"}, "codec"), ({"deals": "two"}, "deals"), ({"fps": "7"}, "fps"), ({"size": "big"}, "size"),
                                        ({"from": "soon"}, "from 'soon'"), ({"to": "1:75"}, "to '1:75'"), ({"from": 5}, "from"),
                                        ({"from": "1:00", "to": "30"}, "to (30) is not after from (1:00)")])
async def test_bad_render_forms_are_refused_naming_the_field(client: Any, form: dict[str, Any], word: str) -> None:
    r = await client.post(URL, json=form, headers=AUTH)
    assert r.status == 400 and word in (await r.json())["error"]


async def test_the_exported_look_renders_the_same_frame_with_no_data_folder(client: Any, settings: ServerSettings, tmp_path: Path) -> None:
    # a logo (an uploaded image) in the program's view, team names in the match data
    png = io.BytesIO()
    Image.new("RGB", (64, 32), (230, 20, 230)).save(png, "PNG")
    up = await (await client.post("/studio/api/uploads?name=logo.png", data=png.getvalue(), headers=AUTH)).json()
    doc = await (await client.get("/api/channels/t1/settings", headers=AUTH)).json()
    schema = await (await client.get("/studio/api/schema", headers=AUTH)).json()
    view = schema["defaults"]["views"]["program"]
    view["extras"] = [{"id": "logo", "type": "logo", "x": 1504, "y": 150, "image": up["id"]}]
    r = await client.patch("/api/channels/t1/settings", json={
        "revision": doc["revision"], "outputs": {"program": {"view": view}},
        "match": {"teams": [{"name": "Harbour"}, {"name": "Lighthouse"}]}}, headers=AUTH)
    assert r.status == 200, await r.text()
    r = await client.get("/studio/api/channels/t1/export", headers=AUTH)
    look = await r.json()
    assert "attachment" in r.headers["Content-Disposition"] and list(look["images"]) == [up["id"]]
    assert look["match"]["teams"][0]["name"] == "Harbour"
    (tmp_path / "look.json").write_text(json.dumps(look))
    stored = await (await client.get("/api/channels/t1/settings", headers=AUTH)).json()
    (tmp_path / "settings.json").write_text(json.dumps(stored))
    (tmp_path / "game.egn").write_text(json.dumps(DOC))

    temp = tmp_path / "temp"  # the command's temporary folder: the export's images go there
    temp.mkdir()

    def frame(out: str, *extra: str) -> np.ndarray:
        res = subprocess.run([sys.executable, "-m", "overlay.cli", "frame", str(tmp_path / "game.egn"), "--step", "12", "-o", str(tmp_path / out), *extra],
                             capture_output=True, text=True, timeout=120, cwd=tmp_path,
                             env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TMPDIR": str(temp)})
        assert res.returncode == 0, res.stderr
        return np.asarray(Image.open(tmp_path / out).convert("RGBA"))

    exported = frame("a.png", "--channel-settings", str(tmp_path / "look.json"))
    assert list(temp.iterdir()) == []  # the images' folder went with the process
    with_data = frame("b.png", "--channel-settings", str(tmp_path / "settings.json"), "--uploads", str(Path(settings.data_dir) / "uploads"))
    assert np.array_equal(exported, with_data)
    magenta = (np.abs(exported[..., :3].astype(int) - (230, 20, 230)).max(axis=2) < 8).sum()
    assert magenta > 1000  # the logo came with the file


async def test_a_match_renders_the_game_on_air_titled_as_the_pages_title_it(client: Any, tmp_path: Path) -> None:
    """The studio renders the game of a match on air, drawn from the whole match so that it
    says which game it is, as the page does (it rendered the game's data alone): the file is
    ``render MATCH --match-game 2`` with the channel's look."""
    from overlay.cli import main
    from tests.support import match_doc

    match = match_doc((13, 14), deals=1)
    assert (await client.put("/api/channels/t1/game", data=json.dumps(match), headers=AUTH)).status == 200
    assert (await client.post("/api/channels/t1/control/seek?game=2&deal=1", headers=AUTH)).status == 200
    await client.post("/api/channels/t1/control/pause", headers=AUTH)
    r = await client.post(URL, json={"codec": "qtrle", "deals": "1", "fps": "24", "size": "320x180", "to": "0.5"}, headers=AUTH)
    job = await r.json()
    assert r.status == 202 and job["matchGame"] == 2, job
    done = await _until(client, job["id"], {"done", "failed"})
    assert done["status"] == "done", done
    folder = client.server.app[RENDERS].root / "t1" / job["id"]
    (tmp_path / "m.emn").write_text(json.dumps(match), encoding="utf-8")
    out = tmp_path / "cli.mov"
    assert main(["render", str(tmp_path / "m.emn"), "--match-game", "2", "--channel-settings", str(folder / "look.json"),
                 "--deals", "1", "--fps", "24", "--size", "320x180", "--to", "0.5", "--workers", "0", "-o", str(out)]) == 0
    got = await (await client.get(done["url"], headers=AUTH)).read()

    def frames(data: bytes) -> list[bytes]:
        with av.open(io.BytesIO(data)) as c:
            return [f.to_ndarray(format="rgba").tobytes() for f in c.decode(video=0)]

    assert frames(got) == frames(out.read_bytes()) and len(frames(got)) == 12
