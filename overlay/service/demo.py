"""The demo channel: a fresh install shows the bundled game, looping."""

from __future__ import annotations

import json

from renderer.settings import ChannelSettings

from .director import Playhead
from .hub import Hub
from .protocol import ControlRequest

__all__ = ["demo_game_bytes", "install_demo"]


def demo_game_bytes() -> tuple[bytes, str]:
    """The bundled demo game (``assets/demo/demo.egn``); generated if the asset is absent."""
    from assets import DEMO_GAME

    if DEMO_GAME.is_file():
        return DEMO_GAME.read_bytes(), DEMO_GAME.name
    from engine.generate import demo_game

    return json.dumps(demo_game()).encode(), "demo.egn"


def install_demo(hub: Hub) -> None:
    """Create the ``demo`` channel playing the bundled game in a loop."""
    data, source = demo_game_bytes()
    ch = hub.create("demo", ChannelSettings(title="Demo"), playhead=Playhead(loop=True))
    ch.ingest.load_game(data, source=source)
    ch.playback.control(ControlRequest(op="loop", value=True))
