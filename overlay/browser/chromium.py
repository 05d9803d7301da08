"""The system Chromium, as every part of the project that drives a browser launches it.

Headless capture, ``bench live`` and the browser tests all use Debian's ``chromium`` through
playwright-python (``executable_path``; ``playwright install`` cannot download here).  The
flags keep a headless Chromium quiet on a machine without a network: without the
background-networking flags it opens connections at start-up that a closed network refuses.
"""

from __future__ import annotations

import os
import shutil

__all__ = ["CHROMIUM_ARGS", "ChromiumMissing", "chromium_path"]

#: flags for every launch (root in a container: no sandbox; software raster)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


class ChromiumMissing(OSError):
    """No system Chromium was found (``scripts/bootstrap setup`` installs Debian's)."""


def chromium_path() -> str:
    """The Chromium binary: ``$EUCHRE_OVERLAY_CHROMIUM``, else ``chromium`` on the PATH.

    Raises:
        ChromiumMissing: neither names an existing file.
    """
    env = os.environ.get("EUCHRE_OVERLAY_CHROMIUM")
    if env and os.path.exists(env):
        return env
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    if os.path.exists("/usr/bin/chromium"):
        return "/usr/bin/chromium"
    raise ChromiumMissing("no Chromium found: install Debian's 'chromium' (scripts/bootstrap setup) or set EUCHRE_OVERLAY_CHROMIUM")
