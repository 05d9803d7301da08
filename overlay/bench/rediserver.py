"""A real ``redis-server`` for the scale-out benchmark and tests: the Debian package's binary,
on a free loopback port, with its data (the append-only file) in a folder of the caller's.

Persistence as the README recommends for ``serve --redis``: the append-only file on, fsynced
before each write is answered (``appendfsync always``), so a write the service acknowledged
survives a killed Redis as well as a restarted one; no RDB snapshots.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

__all__ = ["RedisServer", "redis_binary", "free_port", "PERSISTENCE"]

#: the persistence settings the service expects (README, "Scale-out")
PERSISTENCE = ("--appendonly", "yes", "--appendfsync", "always", "--save", "")


def redis_binary() -> str | None:
    """The ``redis-server`` binary (Debian package ``redis-server``), or None."""
    return shutil.which("redis-server") or next((p for p in ("/usr/bin/redis-server", "/usr/sbin/redis-server") if Path(p).exists()), None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """One ``redis-server`` process; :meth:`kill` and :meth:`start` again keep its data."""

    def __init__(self, folder: Path, *, port: int | None = None, fsync: str = "always") -> None:
        self.folder = Path(folder)
        self.port = port or free_port()
        self.fsync = fsync
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, *, timeout: float = 10.0) -> RedisServer:
        """Start it and wait until it answers PING (after loading its append-only file).

        Raises:
            RuntimeError: no ``redis-server`` binary, or it did not come up.
        """
        binary = redis_binary()
        if binary is None:
            raise RuntimeError("redis-server is not installed (Debian package redis-server; scripts/bootstrap installs it)")
        self.folder.mkdir(parents=True, exist_ok=True)
        args = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder), *PERSISTENCE]
        args[args.index("always")] = self.fsync
        self.proc = subprocess.Popen(
            [*args, "--daemonize", "no", "--logfile", str(self.folder / "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.proc.returncode} (log: {self.folder / 'redis.log'})")
            if self.ping():
                return self
            time.sleep(0.02)
        raise RuntimeError(f"redis-server did not answer within {timeout} s")

    def ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def kill(self) -> None:
        """SIGKILL: no shutdown save; what survives is what the append-only file has."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
