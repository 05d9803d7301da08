"""A channel's whole look as one file (the studio's *Export*, and what a render from the
studio draws with): the settings document (layout, views, theme, timing, match data with
names, teams and photos) plus the uploaded images it names, under ``images`` (file name ->
base64).  ``euchre-overlay render --channel-settings FILE`` takes it as it is
(:func:`overlay.video.job.read_channel_settings`), with no data folder."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path
from typing import Any

from renderer.settings import ChannelSettings

__all__ = ["export_look"]


def export_look(settings: ChannelSettings, uploads: Path, *, channel: str) -> dict[str, Any]:
    """The export of ``settings``, with every image of ``uploads`` the document names."""
    doc: dict[str, Any] = settings.model_dump(mode="json", by_alias=True)
    text = json.dumps(doc)
    images: dict[str, str] = {}
    if uploads.is_dir():
        for f in sorted(uploads.iterdir()):
            if f.is_file() and not f.name.startswith(".") and f.name in text:
                images[f.name] = base64.b64encode(f.read_bytes()).decode()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return {**doc, "export": {"channel": channel, "by": "euchre-overlay", "at": stamp}, "images": images}
