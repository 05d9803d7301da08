"""``euchre-overlay token --rotate``: a new API token for a data folder.

The store keeps only the token's SHA-256, so a lost token cannot be read back: rotating
makes a new one, prints it once and stores its hash.  A running server reads the hash at
start-up: restart it to switch to the new token.  Rotating while a server runs on the folder
is safe (the write goes through SQLite, as the server's own do); the message then names that
server's pid.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["register", "run"]


def register(sub: Any) -> None:
    from ..service.store import default_data_dir

    p = sub.add_parser(
        "token",
        help="make a new API token (the old one stops working at the next start)",
        description="Only a hash of the token is stored, so a lost token is replaced, not recovered.",
    )
    p.add_argument("--rotate", action="store_true", required=True, help="create a new token, print it once, store its hash")
    p.add_argument("--data", type=Path, default=None, help=f"data folder (default {default_data_dir()})")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..service.auth import rotate_token
    from ..service.config import ServerSettings
    from ..service.errors import StoreFailed
    from ..service.store import Store, StoreBroken, default_data_dir, folder_holder

    settings = ServerSettings(data_dir=args.data or default_data_dir())
    try:
        store = Store(settings.db_path)
        try:
            _, token = rotate_token(store)
            store.delete_meta("token")  # a plain token left by an older version
        finally:
            store.close()
    except (StoreBroken, StoreFailed) as exc:
        print(f"euchre-overlay: {exc}", file=sys.stderr)
        return 2
    print(token)
    holder = folder_holder(settings.db_path)
    running = f"the server running on it (pid {holder}) keeps the old token until it restarts" if holder else "restart the server to use it"
    print(f"new API token stored (as a hash) in {settings.db_path}; {running}", file=sys.stderr)
    return 0
