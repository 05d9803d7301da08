"""Server settings: where to listen, where the data lives, the token, the clock."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from .store import default_data_dir

__all__ = ["ServerSettings", "DEFAULT_PORT", "analysis_by_env"]

DEFAULT_PORT = 8765


def analysis_by_env() -> bool:
    """``EUCHRE_OVERLAY_ANALYSIS`` set (and not 0/off) in the service's environment: live
    analysis for every channel (the default of :attr:`ServerSettings.analysis`)."""
    return os.environ.get("EUCHRE_OVERLAY_ANALYSIS", "") not in ("", "0", "off")


#: ``serve --forward-wait``'s default: a failover takes at most about 3 s
FORWARD_WAIT = 8.0


@dataclass(frozen=True)
class ServerSettings:
    """Everything ``create_app`` needs.  ``db`` = ``":memory:"`` keeps nothing on disk."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    data_dir: Path = field(default_factory=default_data_dir)
    db: str | None = None  # default: data_dir / "overlay.sqlite3"
    token: str | None = None  # None: created on first start and stored
    demo: bool = True  # a fresh install gets the looping demo channel
    clock: Callable[[], float] = time.monotonic
    max_delay: float = 600.0
    #: folders ``load`` and ``follow`` may read (empty: any path the process can read)
    allow_dirs: tuple[Path, ...] = ()
    #: origins a page or state socket may come from besides the server's own (and OBS)
    allow_origins: tuple[str, ...] = ()
    #: SQLite ``synchronous``: FULL fsyncs every acknowledged write (survives a power cut);
    #: NORMAL survives a killed process only, and costs far less per write
    synchronous: str = "FULL"
    #: ``serve --redis URL``: share the channels with other processes through Redis
    #: (:mod:`overlay.cluster.leases`); None keeps everything in this process and SQLite
    redis: str | None = None
    #: the address other processes reach this one at (default: the one it listens on)
    advertise: str | None = None
    #: with ``redis``: seconds a request for a channel another process runs may wait for an
    #: owner (while the channel moves) or for Redis (while it cannot be reached) before a 503
    forward_wait: float = FORWARD_WAIT
    #: live analysis for every channel (a channel's own settings may turn it on alone);
    #: default: ``EUCHRE_OVERLAY_ANALYSIS=1`` in the environment (overlay.service.analysis)
    analysis: bool = field(default_factory=analysis_by_env)
    #: what the clean output gets where ``analysis`` turns it on: public information only, or none
    analysis_clean: Literal["public", "none"] = "public"
    #: seconds a connection may wait before its request's headers are complete (from its
    #: opening or its previous answer), and a request's body may stop; then it is closed
    header_timeout: float = 10.0
    body_timeout: float = 10.0
    #: connections one client address may hold at once (behind a reverse proxy every client
    #: has the proxy's address: raise it there)
    per_address: int = 512

    @property
    def db_path(self) -> str:
        return self.db if self.db is not None else str(Path(self.data_dir) / "overlay.sqlite3")
