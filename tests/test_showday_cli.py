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
    code = await asyncio.to_thread(main, ["control", "t1", "seek", "--deal", "9", "--url", server.base, "--token", TOKEN])
    assert code == 2 and "no deal 9" in capsys.readouterr().err


def test_control_help_says_next_and_step_apart(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["control", "--help"])
    text = capsys.readouterr().out
    assert "next          start the NEXT step's animation now" in text and "step          CUT to the next step" in text


def test_token_is_printed_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from overlay.auth import ensure_token
    from overlay.store import Store

    assert main(["token", "--data", str(tmp_path)]) == 2
    assert "no server data here" in capsys.readouterr().err
    store = Store(tmp_path / "overlay.sqlite3")
    token, created = ensure_token(store, None)
    store.close()
    assert created
    assert main(["token", "--data", str(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == token
