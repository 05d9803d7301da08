"""The system Chromium, as every part of the project that drives a browser launches it.

Headless capture, ``bench live`` and the browser tests all use Debian's ``chromium`` through
playwright-python (``executable_path``; ``playwright install`` cannot download here).  The
flags keep a headless Chromium quiet on a machine without a network: without the
background-networking flags it opens connections at start-up that a closed network refuses.

They also keep each page cheap.  Chromium 156 preloads the address bar's pop-up as a WebUI page
of its own in every new browser window, and playwright opens a window for every context and
page: a renderer process that cost 0.4-0.8 s of CPU per page on the test machine, more than the
overlay page itself (measured: about:blank in a new context, 0.34 s of Chromium CPU with it,
0.18 s without; ``euchre-overlay bench pages`` measures an overlay page both ways).  Turning
off the features ``WebUIOmniboxPopup`` and ``WebUIOmniboxAimPopup`` stops it.  Chromium keeps
only the last ``--disable-features`` it is given, and playwright passes one of its own first, so
:data:`DISABLED_FEATURES` repeats playwright's list (``tests/browser/test_chromium.py`` checks that
a launch with these flags disables everything a default launch does, and the pop-up).
"""

from __future__ import annotations

import os
import shutil

__all__ = ["CHROMIUM_ARGS", "DISABLED_FEATURES", "ChromiumMissing", "chromium_path"]

#: the features every launch turns off: playwright's own list (its ``chromiumSwitches``, which
#: this flag replaces) and the address bar's pop-up pages (a renderer per window, unused headless)
DISABLED_FEATURES = (
    # playwright's (1.65)
    "AimEnabled",
    "AvoidCorsURLLoaderRestartOnRedirect",
    "AvoidUnnecessaryBeforeUnloadCheckSync",
    "DestroyProfileOnBrowserClose",
    "HttpsFirstBalancedModeAutoEnable",
    "HttpsUpgrades",
    "LensOverlay",
    "MediaRouter",
    "NetworkTimeServiceQuerying",
    "OptimizationHints",
    "PaintHolding",
    "PreconnectToSearch",
    "TcpPortRandomizationWin",
    "ThirdPartyStoragePartitioning",
    "msEdgeUpdateLaunchServicesPreferredVersion",
    "msForceBrowserSignIn",
    # ours
    "WebUIOmniboxAimPopup",
    "WebUIOmniboxPopup",
)

#: flags for every launch (root in a container: no sandbox; software raster).  Text is hinted
#: "slight", as Debian's fontconfig has Chromium do: Chromium's headless shell (Debian's
#: ``chromium-headless-shell``, which ``$EUCHRE_OVERLAY_CHROMIUM`` may name and the tests drive
#: their pages in) reads no fontconfig and hints fully otherwise, which moves glyphs off skia's
#: (the parity tests' text within 8 levels: 0.77 of the pixels fully hinted, >= 0.80 needed)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--font-render-hinting=slight",
    "--disable-features=" + ",".join(DISABLED_FEATURES),
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
