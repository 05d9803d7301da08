"""Files named by a client (issue 9 item 2): a FIFO, a device or a huge file never blocks
the server (at a request or at a restart with a saved follow); ``--allow-dir`` confines
``load`` and ``follow`` and answers the same whether a path outside exists or not."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest

from engine.load import MAX_INPUT
from overlay.service.app import create_app
from overlay.service.config import ServerSettings
from tests.support import AUTH, TOKEN, Server, game, make_channel


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "live.fifo"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("route", ["load", "follow"])
async def test_a_fifo_is_refused_and_blocks_nothing(client: Any, fifo: Path, route: str) -> None:
    await make_channel(client, doc=game(7, 1))
    request = client.post(f"/api/channels/t1/{route}", json={"path": str(fifo)}, headers=AUTH)
    r = await asyncio.wait_for(request, 5)
    assert r.status == 400 and "FIFO" in (await r.json())["error"]
    # the server still answers (it never opened the pipe for a blocking read)
    r = await asyncio.wait_for(client.get("/api/channels/t1", headers=AUTH), 5)
    assert r.status == 200 and (await r.json())["follow"] is None


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/urandom", "/proc/self/status"])
async def test_devices_and_proc_files_are_refused(client: Any, path: str) -> None:
    """``st_size`` is 0 for these; /dev/zero used to be read until MemoryError."""
    await make_channel(client, doc=game(7, 1))
    r = await asyncio.wait_for(client.post("/api/channels/t1/load", json={"path": path}, headers=AUTH), 10)
    assert 400 <= r.status < 500, await r.text()


async def test_the_cap_is_enforced_on_the_bytes_read(client: Any, tmp_path: Path) -> None:
    await make_channel(client, doc=game(7, 1))
    big = tmp_path / "big.egn"
    with big.open("wb") as f:
        f.truncate(MAX_INPUT + 1)
    r = await client.post("/api/channels/t1/load", json={"path": str(big)}, headers=AUTH)
    assert r.status == 413 and "cap" in (await r.json())["error"]


async def test_a_saved_follow_of_a_fifo_does_not_stop_a_restart(tmp_path: Path) -> None:
    """The follow is saved; the file is replaced by a named pipe while the server is down.
    Before the fix the restarted server hung on the pipe and never bound its port."""
    data = tmp_path / "data"
    logger = tmp_path / "logger.egn"
    logger.write_text(json.dumps(game(7, 1)))
    srv = Server(data)
    await srv.start()
    try:
        await srv.api("POST", "/api/channels", json={"id": "t1"})
        await srv.api("POST", "/api/channels/t1/follow", json={"path": str(logger)})
    finally:
        await srv.stop()
    logger.unlink()
    os.mkfifo(logger)
    await asyncio.wait_for(srv.start(), 10)
    try:
        info: dict[str, Any] = {}
        for _ in range(50):
            info = await srv.api("GET", "/api/channels/t1")
            if info["followError"]:
                break
            await asyncio.sleep(0.1)
        assert info["follow"] == str(logger) and "FIFO" in info["followError"]
        assert info["game"]["steps"] > 0  # the last good game is kept
    finally:
        await srv.stop()


async def test_allow_dir_confines_load_and_follow(aiohttp_client: Any, tmp_path: Path) -> None:
    allowed = tmp_path / "games"
    allowed.mkdir()
    (allowed / "g.egn").write_text(json.dumps(game(7, 1)))
    outside = tmp_path / "elsewhere.egn"
    outside.write_text(json.dumps(game(8, 1)))
    settings = ServerSettings(data_dir=tmp_path / "data", token=TOKEN, demo=False, allow_dirs=(allowed,))
    client = await aiohttp_client(create_app(settings))
    await make_channel(client)
    r = await client.post("/api/channels/t1/load", json={"path": str(allowed / "g.egn")}, headers=AUTH)
    assert r.status == 200
    answers = []
    for path in (outside, tmp_path / "missing.egn", allowed / ".." / "elsewhere.egn", Path("/etc/passwd")):
        for route in ("load", "follow"):
            r = await client.post(f"/api/channels/t1/{route}", json={"path": str(path)}, headers=AUTH)
            body = await r.json()
            answers.append((r.status, body["kind"]))
    # the same answer whether the file exists or not: no probing of the file system
    assert set(answers) == {(403, "forbidden")}


async def test_a_followed_file_is_read_off_the_event_loop(client: Any, tmp_path: Path) -> None:
    """A large followed file is read in a worker thread: a read-only route answers while
    the file is being read and parsed."""
    await make_channel(client, doc=game(7, 1))
    path = tmp_path / "big.egn"
    path.write_text(json.dumps(game(9, 12)))
    follow = asyncio.ensure_future(client.post("/api/channels/t1/follow", json={"path": str(path)}, headers=AUTH))
    r = await asyncio.wait_for(client.get("/api/channels/t1/state?output=clean"), 5)
    assert r.status == 200
    assert (await follow).status == 200


def _swap_for_link(path: Path, target: Path) -> None:
    """Replace ``path`` by a symbolic link to ``target`` in one rename (as a logger's tool might)."""
    tmp = path.with_name(path.name + ".swap")
    tmp.symlink_to(target)
    os.replace(tmp, path)


async def _follow_error(srv: Server, cid: str = "t1") -> dict[str, Any]:
    info: dict[str, Any] = {}
    for _ in range(100):
        info = await srv.api("GET", f"/api/channels/{cid}")
        if info["followError"]:
            break
        await asyncio.sleep(0.05)
    return info


async def test_a_saved_follow_swapped_for_a_link_outside_is_refused_at_restart(tmp_path: Path) -> None:
    """Issue 22 item 6: the followed file inside ``--allow-dir`` is replaced by a link to a file
    outside while the server is down.  Before the fix the restarted server read the outside
    file and put it on the public state; now the resolved path is checked as for a new
    follow, the channel keeps its last good game and says why in ``followError``."""
    allowed = tmp_path / "games"
    allowed.mkdir()
    followed = allowed / "live.egn"
    followed.write_text(json.dumps(game(7, 1)))
    secret = tmp_path / "secret.egn"
    outside = game(8, 1)
    outside["metadata"]["players"] = ["Outside1", "Outside2", "Outside3", "Outside4"]
    secret.write_text(json.dumps(outside))
    srv = Server(tmp_path / "data")
    srv.settings = dataclasses.replace(srv.settings, allow_dirs=(allowed,))
    await srv.start()
    try:
        await srv.api("POST", "/api/channels", json={"id": "t1"})
        await srv.api("POST", "/api/channels/t1/follow", json={"path": str(followed)})
        before = await srv.api("GET", "/api/channels/t1/state?output=clean")
    finally:
        await srv.stop()
    _swap_for_link(followed, secret)
    await srv.start()
    try:
        info = await _follow_error(srv)
        assert info["follow"] == str(followed) and "allow-dir" in info["followError"], info
        state = await srv.api("GET", "/api/channels/t1/state?output=clean")
        assert "Outside1" not in json.dumps(state) and state["state"]["players"] == before["state"]["players"]
    finally:
        await srv.stop()


async def test_a_followed_file_swapped_for_a_link_outside_while_running_is_not_read(tmp_path: Path) -> None:
    """The same swap while the server runs: the change is seen, the link refused, not read."""
    allowed = tmp_path / "games"
    allowed.mkdir()
    followed = allowed / "live.egn"
    followed.write_text(json.dumps(game(7, 1)))
    secret = tmp_path / "secret.egn"
    outside = game(8, 2)
    outside["metadata"]["players"] = ["Outside1", "Outside2", "Outside3", "Outside4"]
    secret.write_text(json.dumps(outside))
    srv = Server(tmp_path / "data")
    srv.settings = dataclasses.replace(srv.settings, allow_dirs=(allowed,))
    await srv.start()
    try:
        await srv.api("POST", "/api/channels", json={"id": "t1"})
        await srv.api("POST", "/api/channels/t1/follow", json={"path": str(followed)})
        _swap_for_link(followed, secret)
        info = await _follow_error(srv)
        assert "allow-dir" in (info["followError"] or ""), info
        state = await srv.api("GET", "/api/channels/t1/state?output=clean")
        assert "Outside1" not in json.dumps(state)
    finally:
        await srv.stop()


@pytest.mark.parametrize("route", ["load", "follow"])
@pytest.mark.parametrize("path", ["/proc/self/environ", "/proc/self/status", "/sys/devices/system/cpu/online", "/proc/version"])
async def test_system_files_are_refused_unread(client: Any, route: str, path: str) -> None:
    """Issue 22 item 8: ``/proc`` and ``/sys`` files are refused as system files before any
    byte is read (they were read and parsed: a parse error could quote the environment)."""
    if not Path(path).exists():
        pytest.skip(f"{path} is not on this machine")
    await make_channel(client, doc=game(7, 1))
    r = await client.post(f"/api/channels/t1/{route}", json={"path": path}, headers=AUTH)
    body = await r.json()
    assert r.status == 400 and "system file" in body["error"], body


async def test_a_link_to_a_system_file_is_refused(client: Any, tmp_path: Path) -> None:
    link = tmp_path / "game.egn"
    link.symlink_to("/proc/self/environ")
    await make_channel(client, doc=game(7, 1))
    r = await client.post("/api/channels/t1/load", json={"path": str(link)}, headers=AUTH)
    body = await r.json()
    assert r.status == 400 and "system file" in body["error"], body
