"""``euchre-overlay control CHANNEL OP``: playback control of a running server from a shell,
a script or a Stream Deck "run command" button.  The API token comes from ``--token`` or
``$EUCHRE_OVERLAY_TOKEN`` (only its hash is stored with the data, so it cannot be read back;
``euchre-overlay token --rotate`` makes a new one)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from typing import Any

__all__ = ["register", "run", "OPS_HELP"]

#: what each op does, as an operator coming from SPX, NodeCG or vMix expects (also docs/running-a-show.md)
OPS_HELP = """\
ops:
  play          play from here (also after next/step/back/seek: auto-advance resumes)
  pause         hold the picture where it is
  toggle        play or pause
  next          start the NEXT step's animation now and hold at its end (operator-driven;
                'play' resumes auto-advance)
  step          CUT to the next step's finished picture, no animation, and pause
  back          cut to the previous step's finished picture and pause
  seek          go to --deal N (deals count from 1, as on screen), --step N (timeline index
                from 0), or --game N (a match's games count from 1)
  live          jump to the newest step and follow the feed (live catch-up on)
  speed         --value 2 plays twice as fast
  loop          --value true / false
  auto          --value true / false (false: only 'next' advances)
  branch        play an alternative line of the file as a "what if": --deal N --line K (both
                from 1; K counts that deal's alternative lines in file order), --game N in a
                match; play/pause/next/step/back/seek --step N (from the line's first step)
                work inside it
  mainline      leave the alternative line: back to the main line where it left
"""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "control",
        help="play, pause, next, step, seek... a channel of a running server",
        description="Send one playback command to a running euchre-overlay server (the same as "
        "POST /api/channels/CHANNEL/control/OP).",
        epilog=OPS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("channel", help="channel id, e.g. table1")
    p.add_argument("op", choices=("play", "pause", "toggle", "next", "step", "back", "seek", "live", "speed", "loop", "auto", "branch", "mainline"))
    p.add_argument("--value", default=None, help="speed: a number; loop/auto: true or false")
    p.add_argument("--deal", type=int, default=None, help="seek: deal number, from 1")
    p.add_argument("--game", type=int, default=None, help="seek in a match: game number, from 1")
    p.add_argument("--step", type=int, default=None, help="seek: timeline step, from 0 (in an alternative line: from its first step)")
    p.add_argument("--line", type=int, default=None, help="branch: the deal's alternative line, from 1")
    _server_args(p)
    p.set_defaults(func=run)


def _server_args(p: argparse.ArgumentParser) -> None:
    from ..service.config import DEFAULT_PORT

    p.add_argument("--server", "--url", dest="url", default=f"http://127.0.0.1:{DEFAULT_PORT}",
                   help="the server, as capture and inject name it (--url: the same; default: this machine, the default port)")
    p.add_argument("--token", default=None, help="API token (default: $EUCHRE_OVERLAY_TOKEN)")


def run(args: argparse.Namespace) -> int:
    token = args.token or os.environ.get("EUCHRE_OVERLAY_TOKEN")
    if not token:
        raise OSError("no API token: pass --token or set EUCHRE_OVERLAY_TOKEN (a lost token: euchre-overlay token --rotate)")
    body: dict[str, Any] = {"op": args.op}
    for key in ("value", "deal", "game", "step", "line"):
        if getattr(args, key) is not None:
            body[key] = getattr(args, key)
    req = urllib.request.Request(
        f"{args.url.rstrip('/')}/api/channels/{args.channel}/control",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            print(r.read().decode())
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read().decode()).get("error", exc.reason)
        except ValueError:
            message = exc.reason
        raise OSError(f"{args.url}: {args.op} refused ({exc.code}): {message}") from None
    except urllib.error.URLError as exc:
        raise OSError(f"{args.url}: no server there ({exc.reason})") from None
    return 0
