"""One moment, every output: the OBS page, ``render``, ``capture``, ``frame`` and ``inject``
draw the same picture (issue 24 item 1).

A real server (``euchre-overlay serve``, a subprocess) plays a generated game on a channel
with every extra on: a red logo in a logo slot, a photo badge on seat 1's name plate, the
analysis elements (win bar and graph, best play, play quality, bidding table) and a stinger
deal transition that carries an uploaded image.  Two moments are drawn by each output:

* **A**, a card of the second deal held at its end (the analysis layer settled on it): the
  page in the system Chromium (held there by the channel's own controls), the OGraf graphic
  following the channel in real time, ``inject`` (its
  live overlay laid over a lossless video and encoded losslessly), ``render`` (qtrle, decoded
  with PyAV), ``capture`` (the OGraf graphic in Chromium) and ``frame``;
* **B**, the same deal's start half-way through the stinger: the page (``renderAt``), render,
  capture and frame.

Each is held to the design's parity tolerance (``tests/parity.py``) against skia's drawing of
what is on air (:class:`renderer.onair.OnAir`), and each must show the logo's red pixels
and the photo's blue ones.  Before the one description, ``inject`` drew neither images nor
the analysis layer and ``capture`` no image.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import numpy as np
import pytest
from PIL import Image

from engine.generate import generate_game
from engine.state import StepKind
from overlay.service.protocol import dump
from renderer.settings import ChannelSettings
from renderer.onair import OnAir, draw
from renderer.raster import to_premul
from renderer.scene import Scene
from renderer.view import Extra, ExtraType, default_view
from tests.parity import assert_parity, without_text
from tests.support import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TOKEN = "0nair"
SIZE = (1920, 1080)
FPS = 5
RED = (230, 20, 20)
BLUE = (20, 40, 230)
SEED = 5


def _png(size: tuple[int, int], colour: tuple[int, int, int]) -> bytes:
    buf = io.BytesIO()
    Image.new("RGBA", size, (*colour, 255)).save(buf, "PNG")
    return buf.getvalue()


LOGO = _png((64, 32), RED)
PHOTO = _png((24, 32), BLUE)
STINGER = _png((40, 40), BLUE)
LOGO_ID, PHOTO_ID, STINGER_ID = (hashlib.md5(d).hexdigest() + ".png" for d in (LOGO, PHOTO, STINGER))


def _settings() -> ChannelSettings:
    """Every extra on: a logo slot, a photo, analysis, a stinger with an image; short steps
    (the render and the capture of a deal stay quick) and an analysis layer that settles at once."""
    view = default_view().model_copy(update={"extras": (Extra(id="logo", type=ExtraType.LOGO, x=1484, y=74, image=LOGO_ID),)})
    step = {"run_time": 0.3, "hold": 0.2, "ease": "out"}
    timing = {k: step for k in ("call", "discard", "card", "trick_taken", "deal_scored", "game_over")}
    timing["deal_start"] = {"run_time": 0.6, "hold": 0.2, "ease": "out"}
    timing["transition"] = {"style": "stinger", "run_time": 0.6, "ease": "inout", "image": STINGER_ID}
    timing["analysis"] = {"run_time": 0.0, "hold": 0.0, "ease": "inout"}
    players = [{"photo": PHOTO_ID}, {}, {}, {}]
    return ChannelSettings.model_validate(
        {
            "title": "conformance",
            "outputs": {"program": {"view": view.model_dump(mode="json")}, "preview": {}, "clean": {}},
            "timing": timing,
            "match": {"players": players},
            "analysis": {"enabled": True},
        }
    )


@dataclass
class Show:
    base: str
    data: Path
    game: Path
    settings: Path
    tmp: Path


def _api(base: str, method: str, path: str, body: Any = None) -> Any:
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    req = urllib.request.Request(base + "/api" + path, data=data, method=method, headers={"Authorization": f"Bearer {TOKEN}"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as exc:
        raise AssertionError(f"{method} {path}: HTTP {exc.code}: {exc.read()[:400]!r}") from None


@pytest.fixture(scope="module")
def show(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Show]:
    from studio.uploads import store_image

    tmp = tmp_path_factory.mktemp("onair")
    data = tmp / "data"
    for image in (LOGO, PHOTO, STINGER):
        store_image(data / "uploads", image)
    game = tmp / "game.egn"
    game.write_text(json.dumps(generate_game(SEED, deals=3)), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "overlay.cli", "serve", "--port", "0", "--data", str(data), "--token", TOKEN, "--no-demo"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        base = proc.stdout.readline().split("serving on ", 1)[1].split()[0]
        _api(base, "POST", "/channels", {"id": "c1"})
        _api(base, "PUT", "/channels/c1/game", game.read_bytes())
        doc = _settings()
        current = _api(base, "GET", "/channels/c1/settings")
        put = _api(base, "PUT", "/channels/c1/settings", {**dump(doc), "revision": current["revision"]})
        settings = tmp / "settings.json"
        settings.write_text(json.dumps(put), encoding="utf-8")
        _api(base, "POST", "/channels/c1/control/pause")
        yield Show(base, data, game, settings, tmp)
    finally:
        proc.terminate()
        proc.wait(timeout=20)


# --------------------------------------------------------------------------- the moments


def _job(show: Show) -> Any:
    from overlay.video.job import JobOptions, load_job

    return load_job(
        JobOptions(game=str(show.game), fps=str(FPS), size=f"{SIZE[0]}x{SIZE[1]}", channel_settings=str(show.settings), deals="2", uploads=show.data / "uploads")
    )


@dataclass(frozen=True)
class Moment:
    step: int
    frame: int  # frame index of render and capture (deal 2 from its start, at FPS)
    local: float  # seconds into the step


def _moments(job: Any) -> dict[str, Moment]:
    steps, sched = job.steps, job.schedule
    deal = steps[sched.first].deal
    start = sched.first
    cards = [i for i in range(sched.first, sched.last + 1) if steps[i].kind is StepKind.CARD and steps[i].deal == deal]
    card = cards[5]  # the second trick's second card
    fps = Fraction(FPS)

    def at(step: int, local: float) -> Moment:
        k = round((sched.starts[step] + local - sched.t0) * FPS)
        s, loc = sched.locate(sched.time_of(k, fps))
        assert s == step, (s, step)
        return Moment(step, k, loc)

    return {"A": at(card, 0.4), "B": at(start, 0.3)}


def _reference(job: Any, m: Moment) -> tuple[OnAir, np.ndarray, np.ndarray]:
    """skia's drawing of what is on air at ``m`` (premultiplied), and the text pixels."""
    src = job.frames()
    on_air = src.on_air(m.step)
    assert on_air.layer is not None and on_air.layer.ops, "analysis is on: the moment has a layer"
    img = draw(on_air, m.local, src.assets)
    bare = OnAir(without_text(on_air.scene), None if on_air.layer is None else without_text(on_air.layer))
    img_nt = draw(bare, m.local, src.assets)
    assert img is not None and img_nt is not None
    ref = to_premul(img).astype(np.int16)
    text = np.abs(ref - to_premul(img_nt).astype(np.int16)).max(axis=2) > 0
    dil = text.copy()
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            dil |= np.roll(np.roll(text, dy, 0), dx, 1)
    return on_air, ref, dil


def _figures(ref: np.ndarray, text: np.ndarray, got: np.ndarray) -> dict[str, float]:
    """The design's parity figures of ``got`` against ``ref`` (premultiplied, int16)."""
    d = np.abs(got.astype(np.int16) - ref).max(axis=2)
    non, txt = d[~text], d[text]
    h, w = d.shape
    blocks = d[: h // 8 * 8, : w // 8 * 8].reshape(h // 8, 8, w // 8, 8).mean(axis=(1, 3))
    return {
        "drawn": float((ref[..., 3] > 0).mean()),
        "non_text_within_4": float((non <= 4).mean()) if non.size else 1.0,
        "text_within_8": float((txt <= 8).mean()) if txt.size else 1.0,
        "text_within_32": float((txt <= 32).mean()) if txt.size else 1.0,
        "worst_block": float(blocks.max()) if blocks.size else 0.0,
    }


def _premul(rgba: np.ndarray) -> np.ndarray:
    f = rgba.astype(np.float64)
    a = f[..., 3:4] / 255.0
    return np.concatenate([np.round(f[..., :3] * a), f[..., 3:4]], axis=2).astype(np.int16)


def _count(px: np.ndarray, colour: tuple[int, int, int]) -> int:
    """Opaque pixels of ``colour`` (premultiplied or opaque RGB)."""
    near = np.ones(px.shape[:2], bool)
    for c in range(3):
        near &= np.abs(px[..., c].astype(np.int16) - colour[c]) <= 12
    if px.shape[-1] == 4:
        near &= px[..., 3] >= 250
    return int(near.sum())


# --------------------------------------------------------------------------- outputs


async def _page(browser: Any, show: Show, moments: dict[str, Moment]) -> dict[str, np.ndarray]:
    """The OBS page held at each moment by the channel's controls (A) or renderAt (B), in the
    worker's Chromium."""
    got: dict[str, np.ndarray] = {}
    page = await browser.new_page(viewport={"width": SIZE[0], "height": SIZE[1]})
    await page.goto(f"{show.base}/overlay/c1?output=program&width={SIZE[0]}&height={SIZE[1]}")
    for name in ("B", "A"):
        m = moments[name]
        # arrive from the step before (its analysis is the one the layer moves from)
        _api(show.base, "POST", f"/channels/c1/control/seek?step={m.step - 1}")
        await page.wait_for_function(f"() => window.euchreOverlay && window.euchreOverlay.state.analysisStep === {m.step - 1}", timeout=120000, polling=50)
        _api(show.base, "POST", "/channels/c1/control/step")
        await page.wait_for_function(f"() => window.euchreOverlay.state.analysisStep === {m.step}", timeout=120000, polling=50)
        await page.evaluate("() => Promise.all([document.fonts.ready, window.euchreOverlay.player.sceneReady])")
        await page.wait_for_function("() => window.euchreOverlay.current().done", timeout=30000, polling=50)
        if name == "B":
            # the page's player at the moment's scene time, its layer settled (as
            # it is on the page by then: window.renderAt would restart its clock)
            await page.evaluate("(t) => { window.euchreOverlay.state.manual = true; window.euchreOverlay.player.renderAt(t, 60); }", m.local)
        png = await page.evaluate("() => document.querySelector('canvas').toDataURL('image/png')")
        got[name] = _premul(np.asarray(Image.open(io.BytesIO(base64.b64decode(png.split(",", 1)[1]))).convert("RGBA")))
        if name == "B":
            await page.evaluate("() => window.euchreOverlay.resume()")
    got["A-ograf"] = await _ograf(browser, show, moments["A"])
    return got


async def _ograf(browser: Any, show: Show, m: Moment) -> np.ndarray:
    """The OGraf graphic in real time on the channel (held at ``m``), in a minimal host."""
    g = await browser.new_page(viewport={"width": SIZE[0], "height": SIZE[1]})
    await g.goto(f"{show.base}/static/ograf/host.html")
    await g.wait_for_function("() => !!window.ografHost", polling=50)
    load = """([b, w, h]) => ografHost.load('/static/ograf/euchre-overlay.ograf.json',
        {renderType: 'realtime', data: {channel: 'c1', server: b}, renderCharacteristics: {resolution: {width: w, height: h}}})"""
    assert (await g.evaluate(load, [show.base, SIZE[0], SIZE[1]]))["statusCode"] == 200
    await g.evaluate("() => ografHost.call('playAction', {})")
    await g.wait_for_function(f"() => {{ const e = ografHost.element; return e.player && e.player.layer && e.current && e.current.step === {m.step}; }}", timeout=60000, polling=50)
    await g.evaluate("() => Promise.all([document.fonts.ready, ografHost.element.player.sceneReady])")
    await g.wait_for_function("() => !ografHost.element.raf", timeout=30000, polling=50)
    png = await g.evaluate("() => ografHost.element.shadowRoot.querySelector('canvas').toDataURL('image/png')")
    return _premul(np.asarray(Image.open(io.BytesIO(base64.b64decode(png.split(",", 1)[1]))).convert("RGBA")))


def _lossless_input(path: Path, seconds: float) -> np.ndarray:
    """A grey gradient video, coded losslessly (qtrle): the background inject draws over."""
    w, h = SIZE
    img = np.empty((h, w, 3), np.uint8)
    img[...] = np.linspace(30, 220, w, dtype=np.float32).astype(np.uint8)[None, :, None]
    with av.open(str(path), "w") as out:
        s = out.add_stream("qtrle", rate=30)
        s.width, s.height, s.pix_fmt = w, h, "rgb24"
        for n in range(int(seconds * 30)):
            f = av.VideoFrame.from_ndarray(img, format="rgb24")
            f.pts = n
            for pk in s.encode(f):
                out.mux(pk)
        for pk in s.encode(None):
            out.mux(pk)
    return img


def _inject(show: Show) -> tuple[np.ndarray, np.ndarray]:
    """inject's last frame over the lossless input (lossless out), and that input frame."""
    from overlay.browser.inject import LiveOverlay, inject

    src = show.tmp / "in.mov"
    background = _lossless_input(src, 1.0)  # every frame waits for the first picture: the last one has it
    out = show.tmp / "out.mkv"
    overlay = LiveOverlay(show.base, "c1", size=SIZE).start()
    try:
        inject(str(src), str(out), overlay, lossless=True)
    finally:
        overlay.stop()
    last = None
    with av.open(str(out)) as c:
        for f in c.decode(video=0):
            last = f
    assert last is not None, "inject wrote no frame"
    return last.to_ndarray(format="rgb24"), background


def _cli(*args: str) -> None:
    """The command as a user runs it (a process of its own)."""
    res = subprocess.run([sys.executable, "-m", "overlay.cli", *args], capture_output=True, text=True, timeout=900, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert res.returncode == 0, res.stderr


def _cli_here(*args: str) -> None:
    """The command's own entry point in this process (its imports are this process's already)."""
    from overlay.cli import main

    assert main(list(args)) == 0


def _decoded(path: Path, frames: list[int]) -> dict[int, np.ndarray]:
    """The frames of ``path`` at these indices, premultiplied (every frame decoded, only these
    turned into pixels)."""
    out: dict[int, np.ndarray] = {}
    with av.open(str(path)) as c:
        for k, f in enumerate(c.decode(video=0)):
            if k in frames:
                out[k] = _premul(f.to_ndarray(format="rgba"))
    assert set(out) == set(frames), (sorted(out), frames)
    return out


def _save(folder: Path, name: str, ref: np.ndarray, got: np.ndarray) -> str:
    """The reference, the output and their difference (x8) as PNGs; returns where."""
    for label, px in (("want", ref), ("got", got), ("diff", np.clip(np.abs(got.astype(np.int16) - ref) * 8, 0, 255))):
        out = px.astype(np.uint8)
        if label == "diff" and out.shape[-1] == 4:
            out[..., 3] = 255
        Image.fromarray(out, "RGBA" if out.shape[-1] == 4 else "RGB").save(folder / f"{name}-{label}.png")
    return str(folder / f"{name}-*.png")


async def test_every_output_draws_the_same_moment(show: Show, browser: Any) -> None:
    job = _job(show)
    moments = _moments(job)
    refs = {name: _reference(job, m) for name, m in moments.items()}
    for name, (on_air, ref, _) in refs.items():
        assert {LOGO_ID, PHOTO_ID} <= set(on_air.images), (name, on_air.images)
    assert _count(refs["A"][1], RED) > 1000 and _count(refs["A"][1], BLUE) > 100  # the logo and the photo are drawn
    # half-way, the stinger covers the picture and carries its image
    assert STINGER_ID in refs["B"][0].images and _count(refs["B"][1], BLUE) > 1000

    common = ("--size", f"{SIZE[0]}x{SIZE[1]}", "--channel-settings", str(show.settings), "--uploads", str(show.data / "uploads"))
    outputs: dict[str, dict[str, np.ndarray]] = {name: {} for name in moments}
    for name, px in (await _page(browser, show, moments)).items():
        if name == "A-ograf":
            outputs["A"]["ograf"] = px
        else:
            outputs[name]["page"] = px
    # the deal's video up to the later moment (--to half a frame after it): its frames are the whole deal's
    wanted = [m.frame for m in moments.values()]
    clock = ("--fps", str(FPS), "--deals", "2", "--to", repr((max(wanted) + 0.5) / FPS))
    rendered = show.tmp / "render.mov"
    _cli("render", str(show.game), "-o", str(rendered), *clock, *common)
    captured = show.tmp / "capture.mov"
    _cli("capture", str(show.game), "-o", str(captured), *clock, *common)
    for label, path in (("render", rendered), ("capture", captured)):
        frames = _decoded(path, wanted)
        for name, m in moments.items():
            outputs[name][label] = frames[m.frame]
    for name, m in moments.items():
        png = show.tmp / f"frame-{name}.png"
        _cli_here("frame", str(show.game), "--step", str(m.step), "--t", repr(m.local), "-o", str(png), *common)
        outputs[name]["frame"] = _premul(np.asarray(Image.open(png).convert("RGBA")))

    failures = []
    for name, per_output in outputs.items():
        _, ref, text = refs[name]
        red, blue = _count(ref, RED), _count(ref, BLUE)
        for label, px in per_output.items():
            f = _figures(ref, text, px)
            got_red, got_blue = _count(px, RED), _count(px, BLUE)
            print(name, label, {k: round(v, 4) for k, v in f.items()}, "red", got_red, "blue", got_blue)
            try:
                assert_parity(f"{name}/{label}", f)
                assert got_red >= 0.9 * red, "the logo"
                assert got_blue >= 0.9 * blue, "the photo"
            except AssertionError as exc:
                failures.append(f"{name}/{label}: {exc} (images: {_save(show.tmp, f'{name}-{label}', ref, px)})")

    # inject: the page's live overlay (moment A, where the channel is held) over a video
    last, background = _inject(show)
    _, ref, text = refs["A"]
    a = ref[..., 3:4].astype(np.int32)
    want = (ref[..., :3].astype(np.int32) + (background.astype(np.int32) * (255 - a) + 127) // 255).astype(np.int16)
    d = np.abs(last.astype(np.int16) - want).max(axis=2)
    over = ref[..., 3] > 0
    f = _figures(np.dstack([want, np.full(want.shape[:2], 255, np.int16)]), text, np.dstack([last, np.full(last.shape[:2], 255, np.uint8)]))
    f["drawn"] = float(over.mean())
    print("A inject", {k: round(v, 4) for k, v in f.items()}, "max", int(d.max()))
    try:
        assert_parity("A/inject", f)
        assert _count(last, RED) >= 0.9 * _count(ref, RED), "the logo"
        assert _count(last, BLUE) >= 0.9 * _count(ref, BLUE), "the photo"
    except AssertionError as exc:
        failures.append(f"A/inject: {exc} (images: {_save(show.tmp, 'A-inject', want, last.astype(np.int16))})")
    assert not failures, "\n".join(failures)
