"""``euchre-overlay composite MATCH GAME --sync FILE -o OUT``: the overlay burned into a match.

Each decoded video frame gets the overlay of its own timestamp (the sync file places the
steps on the match's clock), drawn over it by skia; the result keeps the video's frame rate
and size and is encoded as H.264; the audio packets are copied untouched.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..video.source import VideoInput, VideoInputError, decode_fault, open_video

__all__ = ["register", "run_composite", "composite"]


def register(sub: Any) -> None:
    from .options import add_job_arguments

    p = sub.add_parser(
        "composite",
        help="burn the overlay into a recorded match (audio copied, frame rate and size kept)",
        description="Lay the game's graphics over MATCH, synced by --sync, and write an H.264 file.",
    )
    p.add_argument("match", help="the recorded match (any format ffmpeg reads)")
    p.add_argument("game", help="a .egn/.egnb file, or a match file (.emn) with --match-game N")
    p.add_argument("-o", "--output", required=True, help="output video (.mp4, .mkv, .mov)")
    p.add_argument("--crf", type=int, default=18, help="H.264 quality (default 18)")
    p.add_argument("--preset", default="veryfast", help="x264 preset (default veryfast)")
    p.add_argument("--on-interrupt", choices=("keep", "remove"), default="keep", help="Ctrl+C keeps a playable file (default) or removes it")
    add_job_arguments(p)
    p.set_defaults(func=run_composite)


class _Muxer:
    """The output file: an H.264 stream of the match's size and rate, audio copied."""

    def __init__(self, path: Path, video: Any, audio: Any, *, rate: Fraction, crf: int, preset: str) -> None:
        import av

        self.path = path
        self.frames = 0
        self.closed = False
        self.out = av.open(str(path), "w")
        vs = self.out.add_stream("libx264", rate=rate, options={"crf": str(crf), "preset": preset})
        vs.width, vs.height = video.codec_context.width, video.codec_context.height
        vs.pix_fmt = "yuv420p"
        self.video = vs
        self.rate = rate
        self.audio = self.out.add_stream_from_template(audio) if audio is not None else None
        self._last_pts = -1

    def frame(self, rgba: Any, time: float) -> None:
        from ..video.writer import video_frame

        f = video_frame(rgba, "rgba")
        pts = max(self._last_pts + 1, round(time * self.rate))
        self._last_pts = pts
        f.pts = pts
        for p in self.video.encode(f):
            self.out.mux(p)
        self.frames += 1

    def packet(self, packet: Any) -> None:
        if self.audio is not None and packet.dts is not None:
            packet.stream = self.audio
            self.out.mux(packet)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for p in self.video.encode(None):
            self.out.mux(p)
        self.out.close()

    def abort(self, *, keep: bool) -> None:
        if keep:
            self.close()
            return
        self.closed = True
        try:
            self.out.close()
        except Exception:  # noqa: BLE001 - a half-written container may refuse to close
            pass
        self.path.unlink(missing_ok=True)


def composite(args: argparse.Namespace, match: VideoInput) -> tuple[_Muxer, Iterator[Any], int | None]:
    """Open the output for ``match`` (an opened, checked video) and the frames to write.

    The frames raise :class:`~overlay.video.source.VideoInputError` at a packet that cannot
    be decoded, or at the end when no frame could be.
    """
    import av

    from renderer.frames import composite_over

    from ..video.job import JobOptions, load_job

    video, audio = match.video, match.audio
    rate = Fraction(video.average_rate or video.guessed_rate or 30)
    job = load_job(JobOptions.of(args), size=match.size, fps=rate, from_zero=True)
    src = job.frames()
    muxer = _Muxer(Path(args.output), video, audio, rate=rate, crf=args.crf, preset=args.preset)
    start = float(video.start_time * video.time_base) if video.start_time is not None else 0.0
    total = video.frames or None

    def items() -> Iterator[Any]:
        streams = [video] + ([audio] if audio is not None else [])
        packet = None
        try:
            for packet in match.container.demux(*streams):
                if packet.stream.type == "audio":
                    yield ("a", packet)
                    continue
                for frame in packet.decode():
                    t = float(frame.pts * frame.time_base) - start if frame.pts is not None else muxer.frames / float(rate)
                    rgba = frame.to_ndarray(format="rgba")
                    yield ("v", (composite_over(rgba, src.image(t)), t))
        except av.error.FFmpegError as exc:
            raise decode_fault(match.source, exc, packet) from None
        if muxer.frames == 0:
            raise VideoInputError(match.source, "no video frame in it could be decoded")

    return muxer, items(), total


def run_composite(args: argparse.Namespace) -> int:
    """Write the composite; the exit code (0, or 130 after Ctrl+C).

    Raises:
        VideoInputError: the match cannot be opened or decoded (the CLI prints one line, exit 2).
    """
    from .options import run_frames

    if not args.sync:
        print("euchre-overlay: note: no --sync file: the first step starts at the video's time 0", file=sys.stderr)
    match = open_video(args.match)
    try:
        muxer, items, total = composite(args, match)

        def put(m: Any, item: Any) -> int:
            kind, value = item
            if kind == "a":
                m.packet(value)
                return 0
            m.frame(*value)
            return 1

        return run_frames(muxer, items, total=total, desc="composite", on_interrupt=args.on_interrupt, write=put)
    finally:
        match.close()
