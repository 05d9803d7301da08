"""Issue 22 items 8 and 9: the caps the docs promise, and merge patches that would delete a
required part of the settings.

Before the fix a theme with 100,000 unknown keys came back as a 7.09 MB error, 7 MB of view
names were stored, ``speed`` took 5e-324, and ``{"outputs": {"program": null}}`` was stored
(the program's anti-cheat delay fell from 30 s to 0 and the document then failed its own PUT).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp import WSMsgType

from renderer.settings import ChannelSettings
from tests.support import AUTH, game, make_channel

ROOT = Path(__file__).resolve().parents[2]
MANY = 100_000
#: overlay.service.limits: keys of a map and items of an array whose schema states no limit
MAX_MAP, MAX_ARRAY = 256, 4096


async def _revision(client: Any) -> int:
    doc = await (await client.get("/api/channels/t1/settings", headers=AUTH)).json()
    return int(doc["revision"])


async def _patch(client: Any, body: dict[str, Any]) -> Any:
    return await client.patch("/api/channels/t1/settings", json={"revision": await _revision(client), **body}, headers=AUTH)


def _bounded(raw: bytes) -> dict[str, Any]:
    """An error answer: its text at most 600 characters (and a note), the whole body small."""
    assert len(raw) < 8_000, f"a {len(raw)} byte error answer"
    body: dict[str, Any] = json.loads(raw)
    assert len(body["error"]) <= 700, len(body["error"])
    return body


@pytest.mark.parametrize(
    "method, path, body, place",
    [
        ("PATCH", "settings", {"theme": {f"k{i}": 1 for i in range(MANY)}}, "theme"),
        ("PATCH", "settings", {"viewSwitches": [{"step": -1, "view": ""}] * MANY}, "viewSwitches"),
        ("PATCH", "settings", {"cueTimes": {str(i): "x" for i in range(MANY)}}, "cueTimes"),
        ("PATCH", "settings", {"views": [{"id": "v", "name": "x" * 7_000_000}]}, "views -> 0 -> name"),
        ("POST", "channels", {"id": "t2", "settings": {"match": {f"k{i}": 1 for i in range(MANY)}}}, "match"),
        ("POST", "actions", {"seq": 1, "kind": "call", **{f"k{i}": 1 for i in range(MANY)}}, "body"),
        ("POST", "control", {"op": "seek", **{f"k{i}": 1 for i in range(MANY)}}, "body"),
    ],
)
async def test_errors_are_capped_and_name_the_place(client: Any, method: str, path: str, body: dict[str, Any], place: str) -> None:
    await make_channel(client, doc=game(7, 1))
    if path == "settings":
        body = {"revision": await _revision(client), **body}
    url = "/api/channels" if path == "channels" else f"/api/channels/t1/{path}"
    r = await client.request(method, url, data=json.dumps(body), headers=AUTH)
    assert r.status == 400
    answer = _bounded(await r.read())
    assert place in answer["error"], answer["error"]


async def test_a_page_socket_error_is_capped(client: Any) -> None:
    await make_channel(client, doc=game(7, 1))
    ws = await client.ws_connect("/ws/overlay/t1")
    await ws.send_str(json.dumps({"type": "hello", **{f"k{i}": 1 for i in range(5000)}}))
    while True:
        msg = await ws.receive(timeout=5)
        assert msg.type == WSMsgType.TEXT
        data = json.loads(msg.data)
        if data["type"] == "error":
            break
    assert len(data["error"]) <= 700
    await ws.close()


def _unbounded(node: dict[str, Any], defs: dict[str, Any], path: str, seen: set[str], out: list[str]) -> None:
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        if name not in seen:
            _unbounded(defs[name], defs, path, seen | {name}, out)
        return
    for branch in node.get("anyOf", []) + node.get("oneOf", []):
        _unbounded(branch, defs, path, seen, out)
    kind = node.get("type")
    if kind == "string" and not any(k in node for k in ("maxLength", "pattern", "enum", "const")):
        out.append(f"{path}: a string with no maxLength")
    if kind == "array":
        if "maxItems" not in node and "prefixItems" not in node:
            out.append(f"{path}: an array with no maxItems")
        if isinstance(node.get("items"), dict):
            _unbounded(node["items"], defs, path + "[]", seen, out)
        for i, item in enumerate(node.get("prefixItems", [])):
            _unbounded(item, defs, f"{path}[{i}]", seen, out)
    if kind == "object":
        extra = node.get("additionalProperties")
        if isinstance(extra, dict):
            if "maxProperties" not in node and "propertyNames" not in node:
                out.append(f"{path}: a map with no maxProperties")
            _unbounded(extra, defs, path + "{}", seen, out)
        for key, sub in node.get("properties", {}).items():
            _unbounded(sub, defs, f"{path}.{key}", seen, out)


def test_every_string_array_and_map_of_the_settings_has_a_limit() -> None:
    """7 MB of view names were accepted: now the settings schema leaves nothing unbounded."""
    schema = ChannelSettings.model_json_schema(by_alias=True)
    out: list[str] = []
    _unbounded(schema, schema.get("$defs", {}), "settings", set(), out)
    assert out == []


def test_the_limits_are_documented() -> None:
    api = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    for words in ("600 characters", f"{MAX_MAP} keys", f"{MAX_ARRAY} items", "0.0625", "viewSwitches", "cannot delete"):
        assert words in api, words


@pytest.mark.parametrize("value, ok", [("5e-324", False), ("0.03", False), ("16.5", False), ("nan", False), ("inf", False), ("true", False), ("0.0625", True), ("16", True), ("1", True)])
async def test_speed_is_refused_outside_a_sixteenth_to_sixteen(client: Any, value: str, ok: bool) -> None:
    await make_channel(client, doc=game(7, 1))
    r = await client.post(f"/api/channels/t1/control/speed?value={value}", headers=AUTH)
    assert (r.status == 200) is ok, await r.text()
    if not ok:
        assert r.status == 400 and ("0.0625" in (await r.json())["error"] or value == "true")
    r = await client.post("/api/channels/t1/control", json={"op": "speed", "speed": 5e-324}, headers=AUTH)
    assert r.status == 400


@pytest.mark.parametrize(
    "patch, place",
    [
        ({"outputs": {"program": None}}, "outputs -> program"),
        ({"outputs": {"clean": None, "preview": None}}, "outputs -> preview"),
        ({"outputs": None}, "outputs"),
    ],
)
async def test_a_patch_cannot_delete_a_required_part(client: Any, patch: dict[str, Any], place: str) -> None:
    await make_channel(client, doc=game(7, 1))
    r = await _patch(client, {"outputs": {"program": {"delay": 30}}})
    assert r.status == 200, await r.text()
    r = await _patch(client, patch)
    body = await r.json()
    assert r.status == 400 and place in body["error"] and body["errors"], body
    doc = await (await client.get("/api/channels/t1/settings", headers=AUTH)).json()
    assert doc["outputs"]["program"]["delay"] == 30
    # the stored document still passes its own PUT
    r = await client.put("/api/channels/t1/settings", json=doc, headers=AUTH)
    assert r.status == 200, await r.text()


async def test_a_patch_still_deletes_what_may_be_absent(client: Any) -> None:
    """Nulls that RFC 7396 allows and the model accepts keep working: a look by name, an
    output's own view (back to the default)."""
    await make_channel(client, doc=game(7, 1))
    r = await _patch(client, {"looks": {"gala": {}}, "outputs": {"program": {"view": {"id": "x", "name": "X"}}}})
    assert r.status == 200, await r.text()
    r = await _patch(client, {"looks": {"gala": None}, "outputs": {"program": {"view": None}}})
    assert r.status == 200, await r.text()
    doc = await r.json()
    assert doc["looks"] == {} and doc["outputs"]["program"]["view"] is None


async def test_a_channel_made_with_some_outputs_takes_patches(client: Any) -> None:
    r = await client.post("/api/channels", json={"id": "t1", "settings": {"outputs": {"program": {"delay": 5}}}}, headers=AUTH)
    assert r.status == 201, await r.text()
    stored = await (await client.get("/api/channels/t1/settings", headers=AUTH)).json()
    assert set(stored["outputs"]) == {"program", "preview", "clean"}  # made whole: it passes its own PUT
    r = await _patch(client, {"title": "Table 1"})
    assert r.status == 200, await r.text()
    doc = await r.json()
    assert doc["outputs"]["program"]["delay"] == 5 and set(doc["outputs"]) == {"program", "preview", "clean"}


@pytest.mark.parametrize(
    "text, depth",
    [
        ('{"a": [1, {"b": "]]]"}]}', 3),
        ('["\\"[[[", ["\\\\"], "{"]', 2),
        ('"' + "x" * 1000 + '\\"[' + '"', 0),
        ("[" * 70 + "]" * 70, 70),
        ('{"k": "\\u005b\\\\\\"{{"}', 1),
    ],
)
def test_the_nesting_check_skips_strings_with_escapes(text: str, depth: int) -> None:
    """The string pattern of the nesting check was unrolled (a 7 MB string took it 3.4 s):
    brackets inside strings, escaped quotes and backslashes are still skipped."""
    from overlay.service.routes.common import json_depth

    assert json_depth(text) == depth
