"""The pages' JavaScript is type-checked against types generated from the Python definitions.

* The declarations (overlay/static/scene.d.ts from the op table, protocol.d.ts and
  studio/static/settings.d.ts from the pydantic models, ograf/data.d.ts from the OGraf
  manifest) are what scripts/gen_jstypes writes now: regenerated and compared
  (``pytest tests/project/test_jstypes.py --update-golden`` rewrites them).
* ``tsc`` (TypeScript, which scripts/bootstrap installs into .build/node where node and npm
  exist) finds no error in the player, the OBS page, the OGraf graphic (tsconfig.json,
  strict) and the studio (tsconfig.studio.json); skipped, saying so, without a checker.
* The player is an ES module the page and the graphic import: no globals, no script tags,
  served with a JavaScript MIME type and packed into the wheel with its types.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support import script_module

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "overlay" / "static"
#: where scripts/bootstrap installs TypeScript
LOCAL_TSC = ROOT / ".build" / "node" / "node_modules" / ".bin" / "tsc"


GEN = script_module("gen_jstypes")


@pytest.mark.parametrize("rel", sorted(GEN.FILES))
def test_generated_types_are_current(rel: str, request: pytest.FixtureRequest) -> None:
    text = GEN.FILES[rel]()
    path = ROOT / rel
    if request.config.getoption("--update-golden"):
        path.write_text(text, encoding="utf-8")
    assert path.exists() and path.read_text(encoding="utf-8") == text, (
        f"{rel} is stale: rewrite it with  .venv/bin/python scripts/gen_jstypes  (or pytest tests/project/test_jstypes.py --update-golden)"
    )


def test_scene_types_name_every_op_paint_and_easing() -> None:
    from renderer.easing import EASINGS
    from renderer.ops import OPS, PAINTS

    text = GEN.scene_dts()
    for spec in OPS:
        assert re.search(rf"^  {spec.name}: \[\"{spec.name}\"", text, re.M), spec.name
    for paint in PAINTS:
        assert re.search(rf"^  {paint.name}: \[\"{paint.name}\"", text, re.M), paint.name
    assert "export type EasingName = " + " | ".join(f'"{n}"' for n in EASINGS) + ";" in text


def test_settings_types_follow_the_schema() -> None:
    """Every settings model of the schema is declared, each field with its JSON name."""
    schema = GEN._protocol_models()["ChannelSettings"].model_json_schema()
    text = GEN.settings_dts()
    for name, model in {"ChannelSettings": schema, **schema["$defs"]}.items():
        assert re.search(rf"^export (interface|type) {name}\b", text, re.M), name
        for field, spec in model.get("properties", {}).items():
            opt = "" if field in model.get("required", ()) else r"\?"
            assert re.search(rf"^  {re.escape(field)}{opt}: ", text, re.M), (name, field, spec)


# --------------------------------------------------------------------------- tsc


def _tsc() -> list[str]:
    """The command that runs TypeScript's checker, or skip saying why there is none."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("no TypeScript checker: node is not installed (scripts/bootstrap installs tsc into .build/node where node and npm exist)")
    if LOCAL_TSC.exists():
        return [node, str(LOCAL_TSC.resolve())]
    found = shutil.which("tsc")
    if found is not None:
        return [found]
    pytest.skip("no TypeScript checker: run scripts/bootstrap setup (it installs tsc into .build/node where node and npm exist)")


#: each config and files it must check (besides the rest it includes)
CONFIGS = {
    "tsconfig.json": ["overlay/static/player.js", "overlay/static/overlay.js", "overlay/static/ograf/graphic.mjs", "overlay/static/logger/logger.js"],
    "tsconfig.studio.json": ["studio/static/session.js", "studio/static/studio.js", "studio/static/settings.d.ts"],
}


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_javascript_type_checks(config: str) -> None:
    """tsc --noEmit with allowJs and checkJs (the config's options) finds no error.  Its
    incremental state is kept in .build/tsc (git-ignored): a run after one where nothing
    changed takes a third of the time."""
    info = ROOT / ".build" / "tsc" / f"{config}.tsbuildinfo"
    info.parent.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [*_tsc(), "-p", config, "--pretty", "false", "--listFiles", "--incremental", "--tsBuildInfoFile", str(info)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    errors = "\n".join(line for line in done.stdout.splitlines() if "error TS" in line)
    assert done.returncode == 0, f"tsc -p {config}:\n{errors or done.stdout}{done.stderr}"
    checked = {Path(line).resolve() for line in done.stdout.splitlines() if line.strip()}
    for rel in CONFIGS[config]:
        assert (ROOT / rel).resolve() in checked, f"{config} does not check {rel}"


def test_every_page_script_opts_in_to_checking() -> None:
    """// @ts-check on each: an editor checks it without the configs too."""
    for path in [*STATIC.rglob("*.js"), *STATIC.rglob("*.mjs"), *(ROOT / "studio" / "static").glob("*.js")]:
        assert path.read_text(encoding="utf-8").startswith("// @ts-check\n"), path
    strict = (ROOT / "tsconfig.json").read_text(encoding="utf-8")
    assert '"strict": true' in strict and '"checkJs": true' in strict and '"noEmit": true' in strict


# --------------------------------------------------------------------------- the module


def test_player_is_a_module_without_globals() -> None:
    player = (STATIC / "player.js").read_text(encoding="utf-8")
    code = re.sub(r"/\*.*?\*/|//[^\n]*", "", player, flags=re.S)
    assert re.search(r"^export class EuchrePlayer\b", code, re.M)
    for name in ["install", "loadTable", "table", "handled", "sample", "plan", "ease"]:
        assert re.search(rf"^export function {name}\(", code, re.M), name
    assert not re.search(r"\b(window|globalThis|self)\s*\.\s*\w+\s*=|\bdocument\.currentScript\b", code)
    html = (STATIC / "overlay.html").read_text(encoding="utf-8")
    assert '<script type="module" src="/static/overlay.js"></script>' in html
    assert not re.search(r"<script[^>]*src=\"/static/player\.js\"", html)
    assert 'import { EuchrePlayer } from "./player.js";' in (STATIC / "overlay.js").read_text(encoding="utf-8")
    graphic = (STATIC / "ograf" / "graphic.mjs").read_text(encoding="utf-8")
    assert 'import { EuchrePlayer } from "../player.js";' in graphic
    assert 'createElement("script")' not in graphic and "globalThis" not in graphic


#: MIME types a browser runs a module script with (the WHATWG "JavaScript MIME type" essences
#: servers use; text/javascript is the standard one)
JS_MIME = {"text/javascript", "application/javascript", "application/x-javascript"}


async def test_modules_are_served_as_javascript(client: Any) -> None:
    for url in ["/static/player.js", "/static/overlay.js", "/static/ograf/graphic.mjs", "/studio/static/studio.js"]:
        r = await client.get(url)
        assert r.status == 200, url
        assert r.content_type in JS_MIME, (url, r.content_type)
    r = await client.get("/static/ops.json")
    assert r.status == 200 and r.content_type == "application/json"


def test_wheel_packs_the_modules_and_their_types() -> None:
    """pyproject's package-data globs take every static file, the .d.ts files included."""
    import tomllib

    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs: dict[str, list[str]] = data["tool"]["setuptools"].get("package-data", {})
    for package in ("overlay", "studio"):
        base, folder = ROOT / package, ROOT / package / "static"
        # patterns under the package, under its static folder as a package of its own, or any
        where = [(base, p) for p in globs.get(package, []) + globs.get("*", [])]
        where += [(folder, p) for p in globs.get(f"{package}.static", [])]
        packed = {f for root, pattern in where for f in root.glob(pattern) if f.is_file()}
        files = {f for f in folder.rglob("*") if f.is_file() and "__pycache__" not in f.parts}
        assert files <= packed, sorted(str(f.relative_to(ROOT)) for f in files - packed)
        assert {".ts", ".js"} <= {f.suffix for f in packed}, package
