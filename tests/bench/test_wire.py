"""The lean benchmark clients of :mod:`overlay.bench.wire` against real aiohttp servers: the
keep-alive logger gets the service's answers, the frame reader the heads of a page's scenes
and answers the server's pings."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import WSMsgType, web
from aiohttp.test_utils import TestServer

from overlay.bench.wire import STEPS, FrameReader, KeepAlive
from tests.support import AUTH, empty_game, game


async def test_keep_alive_logger_and_frame_reader_on_the_service(client: Any) -> None:
    """Requests one after the other on one connection get the service's answers; a page
    read as frame heads sees the scene of the action it was sent."""
    base = str(client.make_url("")).rstrip("/")
    logger = KeepAlive(base, headers=AUTH)
    status, body = await logger.request("POST", "/api/channels", json.dumps({"id": "w1"}).encode())
    assert status == 201, body
    doc = game(3, 1)
    status, body = await logger.request("PUT", "/api/channels/w1/game", json.dumps(empty_game(doc)).encode())
    assert status == 200, body
    page = await FrameReader.connect(base, "/ws/overlay/w1?output=preview", headers=AUTH)
    heads = page.heads()
    first = await asyncio.wait_for(heads.__anext__(), 5)
    assert first.startswith(b'{"type":"scene"') and STEPS.search(first) is not None
    from overlay.service.feed import actions_of

    status, body = await logger.request("POST", "/api/channels/w1/actions", json.dumps(actions_of(doc)[0]).encode())
    m = STEPS.search(body)
    assert status == 200 and m is not None, body  # the same connection, a second request
    while True:  # a scene with the action's steps reaches the page
        head = await asyncio.wait_for(heads.__anext__(), 5)
        s = STEPS.search(head)
        if s is not None and int(s.group(1)) >= int(m.group(1)):
            break
    await page.close()
    await logger.close()


async def test_frame_reader_answers_pings() -> None:
    """A ping gets its pong (a server's heartbeat would otherwise drop the page)."""
    pongs: list[bytes] = []

    async def handler(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=False)
        await ws.prepare(request)
        await ws.ping(b"are you there")
        msg = await ws.receive(timeout=5)
        if msg.type == WSMsgType.PONG:
            pongs.append(bytes(msg.data))
        await ws.send_str('{"type":"scene","steps":7}')
        await ws.close()
        return ws

    app = web.Application()
    app.router.add_get("/ws", handler)
    async with TestServer(app) as server:
        page = await FrameReader.connect(str(server.make_url("")).rstrip("/"), "/ws", headers={})
        heads = [h async for h in page.heads()]
        await page.close()
    assert pongs == [b"are you there"] and heads == [b'{"type":"scene","steps":7}']
