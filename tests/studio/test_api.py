"""The studio's server side in process (pytest-aiohttp): settings PATCH/PUT semantics, the
models refusing what cannot be drawn, uploads, control keys and links, auth and headers."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from overlay.service.app import create_app
from overlay.service.config import ServerSettings
from overlay.service.keys import HUB
from studio.uploads import MAX_UPLOAD
from tests.support import AUTH, TOKEN, game, shared_egn


@pytest.fixture
async def client(aiohttp_client: Any, settings: ServerSettings) -> Any:
    """The service in process with channel ``t1`` ("Table 1") playing a two-deal game."""
    c = await aiohttp_client(create_app(settings))
    r = await c.post("/api/channels", json={"id": "t1", "title": "Table 1"}, headers=AUTH)
    assert r.status == 201, await r.text()
    r = await c.put("/api/channels/t1/game", data=json.dumps(game(3, deals=2)), headers=AUTH)
    assert r.status == 200, await r.text()
    return c


async def get_settings(client: Any) -> dict[str, Any]:
    r = await client.get("/api/channels/t1/settings", headers=AUTH)
    assert r.status == 200
    doc: dict[str, Any] = await r.json()
    return doc


def png(size: tuple[int, int] = (8, 8)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGBA", size, (200, 30, 30, 255)).save(buf, "PNG")
    return buf.getvalue()


# --------------------------------------------------------------------------- PATCH and PUT


async def test_the_studio_address_with_a_slash_leads_to_the_studio(client: Any) -> None:
    """``/studio/`` (a browser's completion of the address) was a 404."""
    for path, where in (("/studio/", "/studio"), ("/studio/?x=1", "/studio?x=1")):
        r = await client.get(path, allow_redirects=False)
        assert (r.status, r.headers["Location"]) == (301, where)
    assert (await client.get("/studio/")).status == 200


async def test_patch_is_a_merge_patch_with_the_revision(client: Any) -> None:
    before = await get_settings(client)
    r = await client.patch("/api/channels/t1/settings", json={"revision": before["revision"], "outputs": {"program": {"delay": 10}}}, headers=AUTH)
    assert r.status == 200, await r.text()
    after = await r.json()
    assert after["revision"] == before["revision"] + 1
    assert after["outputs"]["program"]["delay"] == 10
    # what the patch left out is kept: the title and the other outputs
    assert after["title"] == "Table 1"
    assert after["outputs"]["preview"] == before["outputs"]["preview"]
    assert after["outputs"]["clean"] == before["outputs"]["clean"]
    # null removes a member (RFC 7396): the output's view goes back to its default
    r = await client.patch("/api/channels/t1/settings", json={"revision": after["revision"], "title": None}, headers=AUTH)
    assert (await r.json())["title"] == ""


async def test_stale_patch_is_refused_with_the_current_document(client: Any) -> None:
    doc = await get_settings(client)
    first = await client.patch("/api/channels/t1/settings", json={"revision": doc["revision"], "title": "A"}, headers=AUTH)
    assert first.status == 200
    stale = await client.patch("/api/channels/t1/settings", json={"revision": doc["revision"], "title": "B"}, headers=AUTH)
    assert stale.status == 409
    body = await stale.json()
    assert body["kind"] == "stale_revision" and body["current"]["title"] == "A"
    assert (await get_settings(client))["title"] == "A"


async def test_patch_needs_the_revision(client: Any) -> None:
    r = await client.patch("/api/channels/t1/settings", json={"title": "x"}, headers=AUTH)
    assert r.status == 400 and "revision" in (await r.json())["error"]


async def test_partial_put_is_refused_and_changes_nothing(client: Any) -> None:
    before = await get_settings(client)
    r = await client.put("/api/channels/t1/settings", json={"revision": before["revision"], "outputs": {"program": {"delay": 10}}}, headers=AUTH)
    assert r.status == 400
    text = (await r.json())["error"]
    assert "title" in text and "outputs.preview" in text and "PATCH" in text
    assert await get_settings(client) == before
    # the whole document is a whole replace
    whole = {**before, "title": "Final table"}
    r = await client.put("/api/channels/t1/settings", json=whole, headers=AUTH)
    assert r.status == 200 and (await r.json())["title"] == "Final table"


#: the top-level fields a settings PUT has required since it began to refuse partial documents
PUT_CONTRACT = {"revision", "title", "outputs", "theme", "timing", "match", "views", "viewSwitches", "looks"}


def test_every_settings_field_is_required_by_put_or_listed_as_added_later() -> None:
    """A new settings field must be optional in a PUT (older clients do not send it): adding
    one without listing it in LATER_FIELDS fails here."""
    from renderer.settings import ChannelSettings

    names = {f.alias or n for n, f in ChannelSettings.model_fields.items()}
    assert names == PUT_CONTRACT | ChannelSettings.LATER_FIELDS
    assert set(ChannelSettings.put_required()) == PUT_CONTRACT


@pytest.mark.parametrize("left_out", [("analysis",), ("cueTimes",), ("analysis", "cueTimes")])
async def test_a_put_from_a_client_older_than_a_field_keeps_its_stored_value(client: Any, left_out: tuple[str, ...]) -> None:
    """A client written before ``analysis`` (or ``cueTimes``) existed PUTs the document it
    knows: accepted, the fields it left out keep what was stored (it cannot mean to change
    them), the rest is what it sent."""
    doc = await get_settings(client)
    r = await client.patch(
        "/api/channels/t1/settings",
        json={"revision": doc["revision"], "analysis": {"enabled": True, "clean": "none"}, "cueTimes": {"0": 1.5}},
        headers=AUTH,
    )
    assert r.status == 200, await r.text()
    current = await r.json()
    old = {k: v for k, v in current.items() if k not in left_out}
    old["title"] = "Old client"
    r = await client.put("/api/channels/t1/settings", json=old, headers=AUTH)
    assert r.status == 200, await r.text()
    after = await r.json()
    assert after["title"] == "Old client" and after["revision"] == current["revision"] + 1
    assert after["analysis"] == {"enabled": True, "clean": "none"} and after["cueTimes"] == {"0": 1.5}
    for name in ("analysis", "cueTimes"):
        assert after[name] == current[name], name
    assert await get_settings(client) == after


@pytest.mark.parametrize(
    "change, needle",
    [
        ({"analysis": {"enabled": "maybe"}}, "analysis"),  # a later field, but wrong
        ({"analysis": {"enabled": True, "colour": "red"}}, "colour"),  # a field the model does not have
        ({"cueTimes": {"0": -1}}, "cueTimes"),
        ({"analysys": {"enabled": True}}, "analysys"),  # a misspelt field is not a missing one
    ],
)
async def test_a_put_with_a_wrong_field_is_still_refused(client: Any, change: dict[str, Any], needle: str) -> None:
    before = await get_settings(client)
    old = {k: v for k, v in before.items() if k not in ("analysis", "cueTimes")}
    r = await client.put("/api/channels/t1/settings", json={**old, **change}, headers=AUTH)
    assert r.status == 400
    body = await r.json()
    assert needle in json.dumps(body), body
    assert await get_settings(client) == before


async def test_a_put_missing_a_field_older_clients_send_is_still_refused(client: Any) -> None:
    before = await get_settings(client)
    for name in sorted(PUT_CONTRACT):
        doc = {k: v for k, v in before.items() if k != name}
        r = await client.put("/api/channels/t1/settings", json=doc, headers=AUTH)
        assert r.status == 400, name
        assert name in (await r.json())["error"]
    assert await get_settings(client) == before


@pytest.mark.parametrize(
    "patch, loc, needle",
    [
        ({"timing": {"card": {"ease": "bounce"}}}, ["timing", "card", "ease"], "bounce"),
        ({"theme": {"font_title": "comic"}}, ["theme", "font_title"], "comic"),
        (
            {"outputs": {"preview": {"view": {"elements": [{"id": "s", "type": "ns-score", "style": {"background": "red"}}]}}}},
            ["outputs", "preview", "view", "elements", 0, "style", "background"],
            "pattern",
        ),
        ({"outputs": {"preview": {"view": {"elements": [{"id": "s", "type": "ns-score", "scale": 0}]}}}}, ["outputs", "preview", "view", "elements", 0, "scale"], "greater than 0"),
        ({"theme": {"quality_colours": {"!!!": "#ffffff"}}}, ["theme", "quality_colours"], "!!!"),
        ({"match": {"players": [{"photo": "../../etc/passwd"}]}}, ["match", "players", 0, "photo"], "pattern"),
    ],
)
async def test_the_models_refuse_what_cannot_be_drawn(client: Any, patch: dict[str, Any], loc: list[Any], needle: str) -> None:
    before = await get_settings(client)
    r = await client.patch("/api/channels/t1/settings", json={"revision": before["revision"], **patch}, headers=AUTH)
    assert r.status == 400
    body = await r.json()
    assert any(e["loc"] == loc and needle in e["msg"] + json.dumps(patch) for e in body["errors"]), body
    assert needle in body["error"] or needle in json.dumps(patch)
    assert await get_settings(client) == before
    # the same document is refused by PUT and at channel creation too
    merged = json.loads(json.dumps(before))
    for k, v in patch.items():
        merged[k] = {**merged[k], **v} if isinstance(merged.get(k), dict) else v
    assert (await client.put("/api/channels/t1/settings", json=merged, headers=AUTH)).status == 400
    r = await client.post("/api/channels", json={"id": "t2", "settings": patch}, headers=AUTH)
    assert r.status == 400


async def test_a_stored_invalid_setting_loads_as_defaults(settings: ServerSettings, aiohttp_client: Any) -> None:
    """A document an older version stored (an easing that no longer exists) must not put the
    channel into a failing loop: the channel starts on default settings."""
    client = await aiohttp_client(create_app(settings))
    assert (await client.post("/api/channels", json={"id": "old", "title": "Old"}, headers=AUTH)).status == 201
    await client.close()
    db = sqlite3.connect(settings.db_path)
    raw = json.loads(db.execute("SELECT settings FROM channels WHERE id = 'old'").fetchone()[0])
    raw["timing"] = {"card": {"ease": "bounce"}}
    db.execute("UPDATE channels SET settings = ? WHERE id = 'old'", (json.dumps(raw),))
    db.commit()
    db.close()
    client = await aiohttp_client(create_app(settings))
    r = await client.get("/api/channels/old/settings", headers=AUTH)
    doc = await r.json()
    assert r.status == 200 and doc["title"] == "Old" and doc["timing"]["card"]["ease"] == "out"
    r = await client.get("/overlay/old")
    assert r.status == 200
    # the studio says why (until a save replaces the document)
    body = await (await client.get("/studio/api/channels/old/timeline", headers=AUTH)).json()
    assert "timing -> card -> ease" in body["settingsProblem"] and "bounce" in body["settingsProblem"]
    r = await client.patch("/api/channels/old/settings", json={"revision": doc["revision"], "title": "Old"}, headers=AUTH)
    assert r.status == 200
    body = await (await client.get("/studio/api/channels/old/timeline", headers=AUTH)).json()
    assert body["settingsProblem"] is None


# --------------------------------------------------------------------------- studio routes


@pytest.mark.parametrize(
    "method, path",
    [
        ("GET", "/studio/api/schema"),
        ("GET", "/studio/api/channels"),
        ("POST", "/studio/api/legacy"),
        ("POST", "/studio/api/uploads"),
        ("GET", "/studio/api/uploads/" + "0" * 32 + ".png"),
        ("POST", "/studio/api/channels/t1/take"),
        ("POST", "/studio/api/channels/t1/view/1"),
        ("GET", "/studio/api/channels/t1/timeline"),
        ("GET", "/studio/api/channels/t1/control-key"),
        ("POST", "/studio/api/channels/t1/control-key"),
        ("DELETE", "/studio/api/channels/t1/control-key"),
        ("PATCH", "/api/channels/t1/settings"),
    ],
)
async def test_the_token_guards_every_studio_api_route(client: Any, method: str, path: str) -> None:
    r = await client.request(method, path)
    assert r.status == 401
    r = await client.request(method, path, headers={"Authorization": "Bearer wrong"})
    assert r.status == 401


async def test_page_has_a_csp_without_inline_script(client: Any) -> None:
    r = await client.get("/studio")
    assert r.status == 200
    csp = r.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "unsafe-eval" not in csp
    html = await r.text()
    assert "<script>" not in html and "onclick" not in html
    assert TOKEN not in html


async def test_schema_lists_choices_from_the_renderer_tables(client: Any) -> None:
    from renderer.easing import EASINGS
    from renderer.fonts import FONT_KEYS

    body = await (await client.get("/studio/api/schema", headers=AUTH)).json()
    step = body["timing"]["$defs"]["StepTiming"]["properties"]["ease"]
    assert step["enum"] == list(EASINGS)
    assert body["theme"]["properties"]["font_title"]["enum"] == list(FONT_KEYS)
    assert body["element"]["$defs"]["ElementStyle"]["properties"]["background"]["anyOf"][0]["pattern"].startswith("^#")
    assert set(body["easings"]) == set(EASINGS) and body["easings"]["linear"][24] == 0.5
    from renderer.panels import SIZES

    assert body["sizes"]["ns-score"] == list(SIZES["ns-score"])
    assert body["defaults"]["views"]["clean"]["perspective"] == "played"


async def test_timeline_has_a_deal_per_step(client: Any) -> None:
    body = await (await client.get("/studio/api/channels/t1/timeline", headers=AUTH)).json()
    steps = body["steps"]
    assert steps and steps[0]["deal"] == 0 and steps[-1]["deal"] == 1
    assert steps[0]["kind"] == "deal_start"


async def test_uploads_are_checked_stored_under_the_data_folder_and_served(client: Any, settings: ServerSettings) -> None:
    data = png()
    r = await client.post("/studio/api/uploads?name=<b>x.png", data=data, headers=AUTH)
    assert r.status == 201, await r.text()
    body = await r.json()
    stored = Path(settings.data_dir) / "uploads" / body["id"]
    assert stored.read_bytes() == data
    assert (await client.get(body["url"])).status == 401
    got = await client.get(body["url"], headers=AUTH)
    assert got.status == 200 and got.headers["Content-Type"] == "image/png" and await got.read() == data
    # not an image, whatever it is called
    r = await client.post("/studio/api/uploads?name=evil.png", data=b"<svg onload=alert(1)>", headers=AUTH)
    assert r.status == 400 and "PNG" in (await r.json())["error"]
    r = await client.post("/studio/api/uploads", data=data + b"\0" * MAX_UPLOAD, headers=AUTH)
    assert r.status == 413
    # only stored ids are served, never another path
    for bad in ("..%2Foverlay.sqlite3", "overlay.sqlite3", "0" * 32 + ".png"):
        assert (await client.get(f"/studio/api/uploads/{bad}", headers=AUTH)).status == 404


async def test_take_puts_the_preview_view_on_program_and_clean(client: Any) -> None:
    doc = await get_settings(client)
    schema = await (await client.get("/studio/api/schema", headers=AUTH)).json()
    view = schema["defaults"]["views"]["preview"]
    view["elements"][0]["x"] += 40
    r = await client.patch("/api/channels/t1/settings", json={"revision": doc["revision"], "outputs": {"preview": {"view": view}}}, headers=AUTH)
    assert r.status == 200
    assert (await get_settings(client))["outputs"]["program"]["view"] is None
    r = await client.post("/studio/api/channels/t1/take", headers=AUTH)
    after = await r.json()
    assert after["outputs"]["program"]["view"] == view
    clean = after["outputs"]["clean"]["view"]
    assert clean["elements"][0]["x"] == view["elements"][0]["x"] and clean["perspective"] == "played"


async def test_control_links_work_without_the_token_and_only_for_transport(client: Any) -> None:
    r = await client.get("/studio/api/channels/t1/control-key", headers=AUTH)
    assert (await r.json())["key"] is None
    key = (await (await client.post("/studio/api/channels/t1/control-key", headers=AUTH)).json())["key"]
    ch = client.server.app[HUB].get("t1")
    await client.get(f"/studio/link/t1/pause?key={key}")
    step = ch.director.position(ch.hub.clock()).step
    r = await client.get(f"/studio/link/t1/step?key={key}")
    assert r.status == 200 and ch.director.position(ch.hub.clock()).step == step + 1
    # the key is no token: settings, the feed and other ops stay shut
    assert (await client.get(f"/studio/link/t1/settings?key={key}")).status == 403
    for headers in ({"Authorization": f"Bearer {key}"}, {"X-Token": key}):
        assert (await client.get("/api/channels/t1/settings", headers=headers)).status == 401
        assert (await client.patch("/api/channels/t1/settings", json={"revision": 1, "title": "x"}, headers=headers)).status == 401
    assert (await client.get(f"/api/channels/t1/settings?token={key}")).status == 401
    assert (await client.get("/studio/link/t1/next?key=wrong")).status == 401
    # view switching: the channel's named view 1 goes on program
    doc = await get_settings(client)
    schema = await (await client.get("/studio/api/schema", headers=AUTH)).json()
    close = {**schema["defaults"]["views"]["preview"], "id": "close", "name": "Close-up"}
    await client.patch("/api/channels/t1/settings", json={"revision": doc["revision"], "views": [close]}, headers=AUTH)
    r = await client.get(f"/studio/link/t1/view?n=1&key={key}")
    assert r.status == 200 and (await get_settings(client))["outputs"]["program"]["view"]["name"] == "Close-up"
    assert (await client.get(f"/studio/link/t1/view?n=2&key={key}")).status == 404
    # revoked: every link stops
    await client.delete("/studio/api/channels/t1/control-key", headers=AUTH)
    assert (await client.get(f"/studio/link/t1/next?key={key}")).status == 401


async def test_legacy_import_reads_views_of_an_old_file(client: Any) -> None:
    path = shared_egn() / "examples" / "conversion_examples" / "test_timingsLayouts.egn"
    raw = json.loads(path.read_text())
    r = await client.post("/studio/api/legacy", data=path.read_bytes(), headers=AUTH)
    assert r.status == 200
    body = await r.json()
    legacy = raw["views"][0]["layout"]["elements"]
    got = {e["id"]: e for e in body["views"][0]["elements"]}
    for e in legacy:
        assert (got[e["id"]]["x"], got[e["id"]]["y"], got[e["id"]]["scale"]) == (e["x"], e["y"], e["scale"])
    assert body["viewSwitches"] == raw["viewSwitches"]
    # the same file saved by Windows PowerShell (UTF-16 with its byte-order mark) reads the same
    r = await client.post("/studio/api/legacy", data=path.read_text().encode("utf-16"), headers=AUTH)
    assert r.status == 200 and (await r.json()) == body
    r = await client.post("/studio/api/legacy", data=b"\x01\x02", headers=AUTH)
    assert r.status == 400 and (await r.json())["error"].startswith("not an EGN JSON file: the file: line 1, column 1")


async def test_view_switches_put_a_named_view_on_air_from_their_step(client: Any) -> None:
    from overlay.service.keys import HUB as HUB_KEY

    doc = await get_settings(client)
    schema = await (await client.get("/studio/api/schema", headers=AUTH)).json()
    close = {**schema["defaults"]["views"]["preview"], "id": "close", "name": "Close-up", "focus_seat": 2}
    patch = {"revision": doc["revision"], "views": [close], "viewSwitches": [{"step": 5, "view": "close"}], "outputs": {"clean": {"followSwitches": False}}}
    r = await client.patch("/api/channels/t1/settings", json=patch, headers=AUTH)
    assert r.status == 200, await r.text()
    render = client.server.app[HUB_KEY].get("t1").render
    assert render.view("program", 4).focus_seat == 0
    assert render.view("program", 5).focus_seat == 2 and render.view("preview", 9).focus_seat == 2
    assert render.view("clean", 9).focus_seat == 0
    # a switch to a view the channel does not have is refused
    doc = await get_settings(client)
    r = await client.patch("/api/channels/t1/settings", json={"revision": doc["revision"], "viewSwitches": [{"step": 1, "view": "nope"}]}, headers=AUTH)
    assert r.status == 400 and "nope" in (await r.json())["error"]
