"""``euchre-overlay inject --channel ID --input SRC --output DST``: graphics into a stream, no OBS.

The channel's live overlay (followed over the page socket of ``--server``, or of a server
started in this process with ``--serve``) is drawn over each frame of SRC (a file or a
stream URL) and written to DST (``srt://``, ``rtmp://``, ``udp://``, a file, or ``-`` for
stdout), audio copied.  Late and dropped frames are counted and shown.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["register", "run_inject"]


def register(sub: Any) -> None:
    p = sub.add_parser(
        "inject",
        help="lay a channel's live overlay over a video or stream and write a stream or file (no OBS)",
        description="Reads SRC frame by frame, draws the channel's overlay with skia, writes H.264 with the audio copied.",
    )
    p.add_argument("--channel", required=True, help="channel id")
    p.add_argument("--input", required=True, help="a video file or a stream URL (udp://, srt://, rtmp://, http://...)")
    p.add_argument("--output", required=True, help="a file, a stream URL (srt://, rtmp://, udp://) or - for stdout (MPEG-TS)")
    p.add_argument("--server", default="http://127.0.0.1:8765", help="the overlay server to follow (default http://127.0.0.1:8765)")
    p.add_argument("--serve", action="store_true", help="run the overlay server in this process (with --data, --port)")
    p.add_argument("--data", type=Path, default=None, help="data folder of the in-process server")
    p.add_argument("--port", type=int, default=0, help="port of the in-process server (default: any free port)")
    p.add_argument("--output-name", default="program", choices=("program", "preview", "clean"), help="which output of the channel (default program)")
    p.add_argument("--token", default=None, help="API token, for the preview output (default: $EUCHRE_OVERLAY_TOKEN)")
    p.add_argument("--realtime", action=argparse.BooleanOptionalAction, default=None, help="pace the input to real time (default: on for a file, off for a stream)")
    p.add_argument("--preset", default="veryfast", help="x264 preset (default veryfast)")
    p.add_argument("--page-size", default=None, help="the page size the overlay is drawn at before scaling to the video (default 1920x1080; match the video's aspect)")
    p.set_defaults(func=run_inject)


def run_inject(args: argparse.Namespace) -> int:
    """Inject until the input ends; the exit code (0, or 130 after Ctrl+C).

    Raises:
        VideoInputError: the input cannot be opened or decoded (the CLI prints one line, exit 2).
        OSError: no overlay from the server.
    """
    from ..browser.inject import LiveOverlay, inject, serve_in_thread
    from ..video.source import open_video

    if Path(args.input).is_file():
        open_video(args.input).close()  # a damaged file is told before any server is started or asked
    stopper = None
    server = args.server
    if args.serve:
        from ..service.config import ServerSettings
        from ..service.store import default_data_dir

        server, stopper = serve_in_thread(ServerSettings(port=args.port, data_dir=args.data or default_data_dir()))
        print(f"euchre-overlay: serving on {server}", file=sys.stderr)
    try:
        from ..video.job import parse_size

        page = parse_size(args.page_size) or (1920, 1080)
        overlay = LiveOverlay(server, args.channel, output=args.output_name, size=page, token=args.token or os.environ.get("EUCHRE_OVERLAY_TOKEN")).start()
        tty = sys.stderr.isatty()

        def status(st: Any) -> None:
            if tty or st.late or st.dropped:
                print("\r" + st.line(), end="" if tty else "\n", file=sys.stderr)

        try:
            stats = inject(args.input, args.output, overlay, realtime=args.realtime, preset=args.preset, status=status)
        except KeyboardInterrupt:
            print("\neuchre-overlay: interrupted: output finished", file=sys.stderr)
            return 130
        finally:
            overlay.stop()
        if tty:
            print(file=sys.stderr)
        skipped = f"; the overlay's animation skipped {stats.overlay_skipped} frames (drawing slower than the video)" if stats.overlay_skipped else ""
        print(f"euchre-overlay: {stats.frames} frames written, {stats.late} late, {stats.dropped} dropped{skipped}", file=sys.stderr)
        if stats.dropped:
            print("euchre-overlay: could not keep up in real time (frames dropped)", file=sys.stderr)
        return 0
    finally:
        if stopper is not None:
            stopper()
