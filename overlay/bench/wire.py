"""Lean clients for a service benchmark that shares the machine with the service: a logger
that posts on one keep-alive HTTP/1.1 connection, and a page that reads WebSocket frames
without decoding them.

``bench scale`` runs its loggers and pages in the same two cores as the processes it
measures, so what the clients spend is taken from the service.  With aiohttp's client the
bench process cost about 0.3 ms of CPU per action (a request object, header parsing and a
JSON body per post; each 25 kB scene decoded from UTF-8 into a string for a page that looks
at its first 400 bytes).  These speak the two protocols directly: each request is
pre-encoded bytes written to an open connection and its answer is read by its
``Content-Length``; a page frame's payload is read as bytes and only its head is searched.
"""

from __future__ import annotations

import asyncio
import base64
import os
import re
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

__all__ = ["KeepAlive", "FrameReader", "STEPS"]

#: the step count in a scene message's head (the header precedes the scene's ops)
STEPS = re.compile(rb'"steps": ?(\d+)')
#: bytes of a frame's payload the reader keeps (the scene message's header fits in them)
HEAD = 400


def _host_port(base: str) -> tuple[str, int]:
    parts = urlsplit(base)
    return parts.hostname or "127.0.0.1", parts.port or 80


class KeepAlive:
    """One HTTP/1.1 connection to ``base`` that sends requests one after the other."""

    def __init__(self, base: str, *, headers: dict[str, str]) -> None:
        self.host, self.port = _host_port(base)
        extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        self.head = f"Host: {self.host}:{self.port}\r\n{extra}Content-Type: application/json\r\n"
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        """Send one request (connecting first if needed); returns the status and the body.

        Raises:
            ConnectionError: the server closed the connection, or answered without a
                ``Content-Length`` (this client reads no other framing).
        """
        if self.writer is None or self.writer.is_closing():
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        self.writer.write(f"{method} {path} HTTP/1.1\r\n{self.head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
        try:
            head = await self.reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            await self.close()
            raise ConnectionError("the server closed the connection") from None
        status = int(head[9:12])
        m = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
        if m is None:
            await self.close()
            raise ConnectionError(f"an answer without Content-Length: {head[:200]!r}")
        answer = await self.reader.readexactly(int(m.group(1)))
        if re.search(rb"(?i)\r\nconnection: *close", head):
            await self.close()
        return status, answer

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            try:
                await self.writer.wait_closed()
            except (ConnectionError, OSError):
                pass
            self.writer = None


class FrameReader:
    """A WebSocket client that reads the server's frames as bytes and keeps each one's head.

    Pings are answered (the service's heartbeat would otherwise drop the page); nothing else
    is sent.  Server frames are never masked or fragmented by aiohttp's server.
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def connect(cls, base: str, path: str, *, headers: dict[str, str]) -> FrameReader:
        """Open ``path`` on ``base`` as a WebSocket.

        Raises:
            ConnectionError: the server did not switch protocols (its answer is quoted).
        """
        host, port = _host_port(base)
        reader, writer = await asyncio.open_connection(host, port)
        key = base64.b64encode(os.urandom(16)).decode()
        extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        writer.write(
            (
                f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n"
            ).encode()
        )
        head = await reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 101"):
            writer.close()
            raise ConnectionError(f"{path}: not a WebSocket: {head[:200]!r}")
        return cls(reader, writer)

    async def heads(self) -> AsyncIterator[bytes]:
        """The first :data:`HEAD` bytes of every text frame, until the server closes."""
        read = self.reader.readexactly
        try:
            while True:
                b0, b1 = await read(2)
                n = b1 & 0x7F
                if n == 126:
                    n = int.from_bytes(await read(2), "big")
                elif n == 127:
                    n = int.from_bytes(await read(8), "big")
                payload = await read(n) if n else b""
                opcode = b0 & 0x0F
                if opcode == 0x1:
                    yield payload[:HEAD]
                elif opcode == 0x9:  # ping: a pong with the same payload, masked as clients must
                    mask = os.urandom(4)
                    body = bytes(c ^ mask[i % 4] for i, c in enumerate(payload))
                    self.writer.write(bytes((0x8A, 0x80 | len(payload))) + mask + body)
                elif opcode == 0x8:
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            return

    async def close(self) -> None:
        self.writer.close()
        try:
            await self.writer.wait_closed()
        except (ConnectionError, OSError):
            pass
