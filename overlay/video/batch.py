"""Batch rendering in pieces: what ``render --ray`` hands its workers, and how it joins them.

A batch is a folder of games or a match file; each game becomes one :class:`GameSpec` (all a
worker needs, with no path on the driver's disk: the game's bytes, the settings models, the
schedule and the images the settings name), cut into :class:`Segment` s of whole deals.
:func:`render_segment` draws and encodes one segment; :func:`join` puts a game's segments
together without re-encoding.  Nothing here imports Ray: the Ray driver
(:mod:`overlay.video.rayrender`) only moves these values around.

Why the pieces are exact (hash-equal to one ``render``, frame by frame):

* the frame clock is the whole game's: segment ``[first, end)`` draws frames ``first..end-1``
  of the one schedule, at the same times;
* a frame's pixels are a function of the frame alone: the skia executor's caches change
  its speed, never its pixels, whatever was drawn before (``tests/renderer/test_cache.py``),
  so a worker starts drawing at ``first`` with cold caches.  (Until the sprite cache was
  fixed, a piece drawn from a cold cache differed by up to 10/255 and every worker first
  drew all the earlier frames of its game without encoding them.)
* only codecs whose pieces decode to the same frames are split (:data:`JOINABLE`): qtrle is
  lossless and each segment starts on a key frame; ProRes is intra-only (every frame is coded
  on its own); a PNG sequence is one file per frame.  VP9 and H.264 carry rate control and
  references across the whole stream, so a piece encoded apart decodes to other pixels: their
  games are rendered whole, one task each.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from engine.errors import EgnError, Place, SchemaError
from renderer.gametitle import MatchGame, labels_of

from .job import Job, frame_source

if TYPE_CHECKING:
    from engine.load import LoadedGame
    from engine.state import GameState
    from renderer.frames import FrameSource, Schedule
    from renderer.matchdata import MatchData
    from renderer.onair import Views
    from renderer.theme import Theme
    from renderer.timing import Timing

__all__ = [
    "JOINABLE",
    "GAME_SUFFIXES",
    "GameInput",
    "GameSpec",
    "Segment",
    "SegmentOutput",
    "collect_games",
    "game_spec",
    "plan_segments",
    "render_segment",
    "spec_frames",
    "join",
]

#: codecs whose separately encoded pieces decode to the frames of one encode (see above)
JOINABLE = frozenset({"qtrle", "prores", "png"})

#: the files a folder batch picks up
GAME_SUFFIXES = (".egn", ".egnb", ".emn")


@dataclass(frozen=True)
class GameInput:
    """One game of a batch: its name (for messages), its bytes and where its video goes.

    A match file's game carries its own EGN JSON as ``data``.
    """

    name: str
    data: bytes
    output: Path
    #: a match's game: which ("Game 2 of 3 \u00b7 match 1\u20130"), drawn as the pages draw it
    game: MatchGame | None = None


@dataclass(frozen=True)
class GameSpec:
    """Everything a worker needs to draw a game, as values (picklable; no driver paths)."""

    name: str
    data: bytes
    schedule: Schedule
    view: Views
    theme: Theme | None
    timing: Timing
    match: MatchData | None
    title: str | None
    size: tuple[int, int]
    fps: Fraction
    codec: str
    background: str | None
    suffix: str  # the output's suffix: segments use the same container as the output
    images: dict[str, bytes] = field(default_factory=dict)
    analysis: str | None = None  # render --analysis: "full", "public" or None
    game: MatchGame | None = None  # which game of a match ("Game 2 of 3")

    @property
    def frames(self) -> int:
        """Frames in the whole video."""
        return self.schedule.frames(self.fps)


@dataclass(frozen=True)
class Segment:
    """Frames ``[first, end)`` of a game, covering deals ``deals`` (1-based, for messages)."""

    first: int
    end: int
    deals: tuple[int, int]

    @property
    def label(self) -> str:
        lo, hi = self.deals
        return f"deal {lo}" if lo == hi else f"deals {lo}-{hi}"


@dataclass(frozen=True)
class SegmentOutput:
    """An encoded segment: the container's bytes, or one PNG per frame for ``png``."""

    first: int
    data: bytes = b""
    pngs: tuple[bytes, ...] = ()


def collect_games(path: Path, output: Path, *, suffix: str) -> tuple[list[GameInput], list[tuple[str, str]]]:
    """The games of ``path`` (a folder, a match file or one game) and the ones refused.

    A folder gives each ``.egn``/``.egnb``/``.emn`` file in it (sorted by name), a match file
    each of its games; their videos go into the folder ``output`` as ``<stem><suffix>``
    (``<match stem>-game<N><suffix>``, N from 1).  One game file writes ``output`` itself.
    Returns ``(games, refused)``; ``refused`` lists ``(name, reason)`` for a match game that
    cannot be read (never silently dropped).

    Raises:
        OSError: ``path`` is missing, or a folder holds no game.
        EgnError: a match file cannot be read at all.
    """
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in GAME_SUFFIXES)
        if not files:
            raise OSError(f"{path}: no {'/'.join(GAME_SUFFIXES)} files in the folder")
        _folder_output(output, f"{path}: a folder of games")
        games: list[GameInput] = []
        refused: list[tuple[str, str]] = []
        for f in files:
            g, r = _games_of(f, output, suffix=suffix, folder=True)
            games += g
            refused += r
        return games, refused
    return _games_of(path, output, suffix=suffix, folder=False)


def _games_of(path: Path, output: Path, *, suffix: str, folder: bool) -> tuple[list[GameInput], list[tuple[str, str]]]:
    """The games of one file: a match gives one per game, anything else one."""
    import json

    from engine.load import load_any, LoadedMatch

    data = path.read_bytes()
    try:
        loaded = load_any(data, source=path.name, summary_only=True)
    except EgnError as exc:
        # the worker would refuse it the same way: say so now, under the game's name
        return [], [(path.name, str(exc))]
    if not isinstance(loaded, LoadedMatch):
        out = output / f"{path.stem}{suffix}" if folder else output
        return [GameInput(path.name, data, out)], []
    listed = loaded.match.get("games") or []
    if not folder:
        _folder_output(output, f"{path.name}: a match of {len(listed)} game{'' if len(listed) == 1 else 's'}")
    read = {g.source for g in loaded.games}
    labels = labels_of(loaded)  # "Game 2 of 3 · match 1–0", as the channel's pages say it
    games, refused = [], []
    for i, entry in enumerate(listed):
        name = f"{path.name} game {i}"
        if name not in read:
            refused.append((f"{path.name} game {i + 1}", "the game cannot be read (load it alone with inspect to see why)"))
            continue
        game_data = entry.get("gameData") if isinstance(entry, dict) else None
        games.append(GameInput(f"{path.name} game {i + 1}", json.dumps(game_data).encode(), output / f"{path.stem}-game{i + 1}{suffix}",
                               game=labels.get(i)))
    return games, refused


#: names that a video file has, never a folder of them
VIDEO_SUFFIXES = (".mov", ".webm", ".mp4", ".mkv", ".avi", ".mxf")


def _folder_output(output: Path, what: str) -> None:
    """Refuse a file name as the folder of a batch's videos (``render finals.emn -o
    finals.mov`` made a folder named ``finals.mov``), unless that folder is already there.

    Raises:
        OSError: ``output`` names a video file.
    """
    if output.suffix.lower() in VIDEO_SUFFIXES and not output.is_dir():
        raise OSError(f"{what} renders one video per game into a folder: -o {output} names a file; give a folder (-o {output.with_suffix('')})")


def load(spec_or_input: GameInput | GameSpec) -> LoadedGame:
    """The :class:`engine.load.LoadedGame` of a batch game.

    Raises:
        EgnError: the game cannot be read.
    """
    from engine.load import load_game

    return load_game(spec_or_input.data, source=spec_or_input.name)


def game_spec(game: GameInput, job: Job, *, codec: str, background: str | None) -> GameSpec:
    """The spec of ``game`` loaded as ``job`` (:func:`overlay.video.job.load_job`, the way
    ``render`` loads it), with the uploads its settings name read now."""
    return GameSpec(
        name=game.name,
        data=game.data,
        schedule=job.schedule,
        view=job.view,
        theme=job.theme,
        timing=job.timing,
        match=job.match,
        title=job.title,
        size=job.size,
        fps=job.fps,
        codec=codec,
        background=background,
        suffix=game.output.suffix,
        images=_named_images(job.uploads, (*job.view.all(), job.theme, job.match)),
        analysis=job.analysis,
        game=job.game,
    )


def _named_images(folder: Path | None, models: Sequence[BaseModel | None]) -> dict[str, bytes]:
    """The stored uploads the settings name: a worker on another machine cannot read them."""
    if folder is None:
        return {}
    from studio.uploads import read_images

    names: set[str] = set()
    for model in models:
        if model is not None:
            names.update(_strings(model.model_dump(mode="json")))
    return read_images(folder, sorted(names))


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def plan_segments(spec: GameSpec, steps: Sequence[GameState], *, split_frames: int) -> list[Segment]:
    """Cut the game's frames at deal starts into pieces of about ``split_frames`` frames.

    One segment when the codec is not in :data:`JOINABLE`, when ``split_frames <= 0`` or the
    video is not longer than it.  A cut falls on the first frame of a deal's first step, the
    deal start nearest each multiple of the video length / pieces.
    """
    sched, fps = spec.schedule, spec.fps
    total = spec.frames
    deal_of = _deal_numbers(steps)
    shown = [i for i in range(sched.first, sched.last + 1)]
    first_deal = deal_of.get(steps[shown[0]].deal, 1) if shown else 1
    last_deal = deal_of.get(steps[shown[-1]].deal, 1) if shown else 1
    whole = [Segment(0, total, (first_deal, last_deal))]
    if spec.codec not in JOINABLE or split_frames <= 0 or total <= split_frames:
        return whole
    # frame where each deal (after the first shown) starts
    starts: list[tuple[int, int]] = []
    seen: set[int] = set()
    for i in shown:
        s = steps[i]
        if s.branch is not None or s.deal in seen:
            continue
        seen.add(s.deal)
        k = _first_frame_at(sched, fps, float(sched.starts[i]), total)
        if 0 < k < total:
            starts.append((k, deal_of.get(s.deal, 1)))
    if not starts:
        return whole
    pieces = math.ceil(total / split_frames)
    cuts: list[tuple[int, int]] = []
    for j in range(1, pieces):
        target = total * j / pieces
        best = min(starts, key=lambda kd: abs(kd[0] - target))
        if not cuts or best[0] > cuts[-1][0]:
            cuts.append(best)
    bounds = [(0, first_deal)] + cuts
    out = []
    for n, (k, deal) in enumerate(bounds):
        end, next_deal = (bounds[n + 1][0], bounds[n + 1][1] - 1) if n + 1 < len(bounds) else (total, last_deal)
        out.append(Segment(k, end, (deal, max(deal, next_deal))))
    return out


def _deal_numbers(steps: Sequence[GameState]) -> dict[int, int]:
    """Deal (as the states number it) -> its 1-based position, as ``inspect`` lists deals."""
    order = sorted({s.deal for s in steps if s.branch is None})
    return {d: n + 1 for n, d in enumerate(order)}


def _first_frame_at(sched: Schedule, fps: Fraction, time: float, total: int) -> int:
    """The first frame whose output time is at ``time`` or later (as ``Schedule.locate`` rounds)."""
    k = max(0, math.floor((time - sched.t0 - float(sched.skip)) * fps) - 1)
    while k < total and sched.time_of(k, fps) < time - 1e-9:
        k += 1
    return k


def steps_of(spec: GameSpec, game: LoadedGame | None = None) -> Sequence[GameState]:
    """The replayed steps of a spec's game (``game``: already loaded).

    Raises:
        EgnError: the game cannot be read.
    """
    steps = (game or load(spec)).timeline.steps
    if not steps:
        raise SchemaError("the game has no steps", Place(source=spec.name))
    return steps


def spec_frames(spec: GameSpec) -> FrameSource:
    """The frames of a spec's game, as ``render`` draws them (the game loaded from its bytes;
    a Ray task's segment and a drawing process of a parallel render both start here).

    Raises:
        EgnError: the game cannot be read.
    """
    game = load(spec)
    images = spec.images
    return frame_source(
        steps_of(spec, game),
        spec.schedule,
        view=spec.view,
        theme=spec.theme,
        timing=spec.timing,
        title=spec.title,
        size=spec.size,
        match=spec.match,
        images=(lambda ids: {i: images[i] for i in ids if i in images}) if images else None,
        timeline=game.timeline,
        rules=game.document.metadata.ruleset,
        analysis=spec.analysis,
        game=spec.game,
    )


def render_segment(spec: GameSpec, segment: Segment, *, on_progress: Callable[[int], None] | None = None) -> SegmentOutput:
    """Draw and encode frames ``[segment.first, segment.end)`` of the game.

    Nothing before ``segment.first`` is drawn: a frame does not depend on what was drawn
    before it (see the module docstring).  ``on_progress(n)`` is called with the frames encoded since the last call (about every
    half second of video).

    Raises:
        EgnError: the game cannot be read.
        ValueError: the codec refuses the size.
    """
    from .writer import CODECS, VideoWriter

    src = spec_frames(spec)
    sched, fps = spec.schedule, spec.fps
    codec = CODECS[spec.codec]
    step = max(1, int(fps / 2))
    with tempfile.TemporaryDirectory(prefix="euchre-segment-") as tmp:
        path = Path(tmp) / f"segment{spec.suffix}"
        writer = VideoWriter(path, codec, fps=fps, size=spec.size, background=spec.background)
        try:
            done = 0
            for k in range(segment.first, segment.end):
                writer.write(src.image(sched.time_of(k, fps)))
                done += 1
                if on_progress is not None and done == step:
                    on_progress(done)
                    done = 0
        except BaseException:
            writer.abort(keep=False)
            raise
        writer.close()
        if on_progress is not None and done:
            on_progress(done)
        if not codec.encoder:
            names = sorted(p.name for p in path.iterdir())
            return SegmentOutput(segment.first, pngs=tuple((path / n).read_bytes() for n in names))
        return SegmentOutput(segment.first, data=path.read_bytes())


def join(spec: GameSpec, parts: Sequence[SegmentOutput], output: Path) -> None:
    """Write a game's segments (in frame order) as ``output``, never re-encoding.

    One part is written as it is; several are remuxed packet by packet into one container,
    each part's timestamps moved by its first frame (PNG frames are renumbered).  The file
    appears complete or not at all (written beside ``output``, then renamed).

    Raises:
        OSError: the output cannot be written.
    """
    parts = sorted(parts, key=lambda p: p.first)
    if spec.codec == "png":
        _join_pngs(parts, output)
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_name(f".{output.stem}.{os.getpid()}.part{output.suffix}")  # same suffix: same muxer
    try:
        if len(parts) == 1:
            tmp.write_bytes(parts[0].data)
        else:
            _remux(spec, parts, tmp)
        os.replace(tmp, output)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _remux(spec: GameSpec, parts: Sequence[SegmentOutput], target: Path) -> None:
    """Copy every packet of ``parts`` into one container at ``target`` (no decoding)."""
    import av

    with tempfile.TemporaryDirectory(prefix="euchre-join-") as tmp:
        files = []
        for n, part in enumerate(parts):
            f = Path(tmp) / f"part{n}{spec.suffix}"
            f.write_bytes(part.data)
            files.append(f)
        # the muxer is picked from the output's suffix, as the single-process writer picks it
        with av.open(str(target), "w") as dst:
            out_stream: Any = None
            for part, f in zip(parts, files):
                with av.open(str(f)) as src:
                    stream = src.streams.video[0]
                    if out_stream is None:
                        out_stream = dst.add_stream_from_template(stream)
                        # the template leaves the tag to the muxer, which takes ProRes 4444 for 422 HQ
                        out_stream.codec_tag = stream.codec_tag
                        if "alpha_mode" in stream.metadata:
                            out_stream.metadata["alpha_mode"] = stream.metadata["alpha_mode"]
                    assert stream.time_base is not None
                    shift = Fraction(part.first) / spec.fps / stream.time_base
                    if shift.denominator != 1:
                        raise OSError(f"{spec.name}: frame {part.first} falls between ticks of the container clock")
                    for packet in src.demux(stream):
                        if packet.dts is None:  # the demuxer's end-of-stream marker
                            continue
                        packet.pts = None if packet.pts is None else packet.pts + int(shift)
                        packet.dts = packet.dts + int(shift)
                        packet.stream = out_stream
                        dst.mux(packet)


def _join_pngs(parts: Sequence[SegmentOutput], output: Path) -> None:
    """Write the frames as ``frame_NNNNNN.png`` numbered over the whole game (a repeated
    picture is a hard link, as the single-process writer makes it)."""
    output.mkdir(parents=True, exist_ok=True)
    last: tuple[bytes, Path] | None = None
    for part in parts:
        for n, data in enumerate(part.pngs, start=part.first):
            path = output / f"frame_{n:06d}.png"
            path.unlink(missing_ok=True)
            if last is not None and last[0] == data:
                os.link(last[1], path)
            else:
                path.write_bytes(data)
            last = (data, path)
