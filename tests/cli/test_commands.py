"""Show day from the command line: ``control`` (with next vs step in its --help) and
``token`` (the API token again)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from overlay.cli import main
from tests.support import TOKEN, Server, game


async def test_control_drives_a_running_server(server: Server, capsys: pytest.CaptureFixture[str]) -> None:
    await server.api("POST", "/api/channels", json={"id": "t1"})
    await server.api("PUT", "/api/channels/t1/game", data=json.dumps(game(7, 3)))

    def control(*args: str) -> dict[str, Any]:
        assert main(["control", "t1", *args, "--url", server.base, "--token", TOKEN]) == 0
        out: dict[str, Any] = json.loads(capsys.readouterr().out)
        return out

    ph = await asyncio.to_thread(control, "pause")
    assert ph["playing"] is False
    ph = await asyncio.to_thread(control, "speed", "--value", "2")
    assert ph["speed"] == 2.0
    ph = await asyncio.to_thread(control, "seek", "--deal", "2")
    info = await server.api("GET", "/api/channels/t1")
    assert info["playhead"]["step"] == ph["step"]
    state = await server.api("GET", "/api/channels/t1/state?output=preview")
    assert state["state"]["deal"] == 1  # deal 2 of the file, at position 1
    ph = await asyncio.to_thread(control, "play")
    assert ph["playing"] and ph["auto"]
    code = await asyncio.to_thread(main, ["control", "t1", "seek", "--deal", "9", "--server", server.base, "--token", TOKEN])  # --server as capture and inject have it
    assert code == 2 and "no deal 9" in capsys.readouterr().err


def test_control_help_says_next_and_step_apart(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["control", "--help"])
    text = capsys.readouterr().out
    assert "next          start the NEXT step's animation now" in text and "step          CUT to the next step" in text


def test_control_without_a_token_says_where_to_get_one(capsys: pytest.CaptureFixture[str]) -> None:
    """Only the token's hash is stored, so ``control`` cannot read it back: it needs
    ``--token`` or ``$EUCHRE_OVERLAY_TOKEN`` and says so (and how to make a new one)."""
    import os

    saved = os.environ.pop("EUCHRE_OVERLAY_TOKEN", None)
    try:
        assert main(["control", "demo", "play", "--url", "http://127.0.0.1:9"]) == 2
    finally:
        if saved is not None:
            os.environ["EUCHRE_OVERLAY_TOKEN"] = saved
    err = capsys.readouterr().err
    assert "--token" in err and "token --rotate" in err
