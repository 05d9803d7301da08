// @ts-check
// The properties panel: one tab per settings model, each form generated from the model's
// JSON schema (form.js), plus outputs, looks and control links.

import { h, clear, $, clone } from "./dom.js";
import { renderForm } from "./form.js";
import { S, OUTPUTS, enc, edit, ensureView, previewView, notice, ask } from "./session.js";
import { renderGame, renderLogger } from "./tables.js";
import { deviceOrigin, ensureReach } from "./logger.js";
import { renderRender } from "./render.js";
import { renderRundown } from "./rundown.js";

/** @import { TeamData } from "./settings.js" */

const TABS = [
  ["element", "Element"], ["view", "View"], ["theme", "Theme"], ["timing", "Timing"],
  ["match", "Match"], ["rundown", "Rundown"], ["outputs", "Outputs"], ["look", "Look"], ["links", "Links"],
  ["game", "Game"], ["logger", "Logger"], ["render", "Render"],
];

function setIn(obj, path, v) {
  let o = obj;
  for (let i = 0; i < path.length - 1; i++) o = o[path[i]];
  o[path[path.length - 1]] = v;
}

function onField(path, value) {
  edit(`set ${path[path.length - 1]}`, (c) => {
    if (path[0] === "outputs" && path[2] === "view") ensureView(c, path[1]);
    setIn(c, path, value);
  });
}

async function upload(file) {
  const r = await S.api.req("POST", `/studio/api/uploads?name=${enc(file.name)}`, file, { raw: true, type: file.type || "application/octet-stream" });
  return r.id;
}

/** A thumbnail URL of an uploaded image (a blob: the studio's own requests carry the token). */
const image = (id) => S.api.blobUrl(`/studio/api/uploads/${enc(id)}`);

export function renderTabs() {
  const nav = clear($("#tabs"));
  for (const [id, label] of TABS)
    nav.append(h("button", { role: "tab", "aria-selected": String(S.tab === id), onclick: () => { S.tab = id; renderTabs(); renderPanel(); } }, label));
}

export function renderPanel() {
  const p = clear($("#panel"));
  if (!S.shown) { p.append(h("p", {}, "No channel yet: make one with New.")); return; }
  const sch = S.schema;
  const opts = (path, extra = {}) => ({ path, onChange: onField, ...extra });
  if (S.tab === "element") {
    const v = previewView();
    const ids = S.selection;
    if (ids.length !== 1) {
      p.append(h("p", {}, ids.length ? `${ids.length} elements selected: drag or nudge them together.` : "Select an element on the preview or in the list."));
      return;
    }
    let list = "elements";
    let i = v.elements.findIndex((e) => e.id === ids[0]);
    if (i < 0) { list = "extras"; i = (v.extras || []).findIndex((e) => e.id === ids[0]); }
    if (i < 0) return;
    const el = v[list][i];
    p.append(h("h2", {}, `${el.id} (${el.type})`));
    const f = h("div");
    p.append(f);
    const schema = list === "elements" ? sch.element : { ...sch.view.$defs.Extra, $defs: sch.view.$defs };
    renderForm(f, schema, schema, el, opts(["outputs", "preview", "view", list, i], { omit: ["id", "type"], upload, image }));
    if (el.type === "player-intro") p.append(h("p", { class: "help" }, "Fire the intro from the Match tab."));
    if (el.type === "stats-lower-third") p.append(h("p", { class: "help" }, "Pick whose statistics it shows from the Match tab."));
    if (el.type === "logo") p.append(h("p", { class: "help" }, "Upload the logo or sponsor image under Image; it is fitted inside the slot's box, keeping its aspect ratio."));
    if (["win-bar", "win-graph", "best-play", "play-quality", "bidding-table"].includes(el.type)) p.append(h("p", { class: "help" }, "Drawn when analysis is on for this channel (Outputs tab). The clean output shows only the win-probability bar and graph, as estimates."));
  } else if (S.tab === "view") {
    const f = h("div");
    p.append(h("h2", {}, "Preview view"), f);
    renderForm(f, sch.view, sch.view, previewView(), opts(["outputs", "preview", "view"], { omit: ["elements", "extras"] }));
  } else if (S.tab === "theme") {
    const f = h("div");
    p.append(f);
    renderForm(f, sch.theme, sch.theme, S.shown.theme, opts(["theme"]));
  } else if (S.tab === "timing") {
    const f = h("div");
    p.append(f);
    renderForm(f, sch.timing, sch.timing, S.shown.timing, opts(["timing"], { easings: sch.easings, upload, image }));
  } else if (S.tab === "match") {
    const f = h("div");
    const fire = h("div", { class: "row" }, h("strong", {}, "Player intro:"));
    const names = S.info && S.info.game ? S.info.game.players : [];
    (S.shown.match.players || []).forEach((pl, seat) => {
      if (seat >= Math.max(names.length, 4)) return;
      const label = pl.name || names[seat] || `Seat ${seat + 1}`;
      fire.append(h("button", { class: S.shown.match.intro === seat ? "on" : "", title: "show this player's lower third", onclick: () => edit("intro", (c) => { c.match.intro = seat; }) }, label));
    });
    fire.append(h("button", { onclick: () => edit("intro off", (c) => { c.match.intro = null; }) }, "Hide"));
    // the statistics lower third: a team's or a player's line
    const stats = h("div", { class: "row" }, h("strong", {}, "Statistics:"));
    const pick = (value, label) => stats.append(h("button", { class: S.shown.match.stats === value ? "on" : "", title: "show these statistics in the statistics lower third", onclick: () => edit("statistics", (c) => { c.match.stats = value; }) }, label));
    (S.shown.match.teams || /** @type {TeamData[]} */ ([])).forEach((t, team) => pick(`team-${team}`, t.name || (team === 0 ? "N/S team" : "E/W team")));
    (S.shown.match.players || []).forEach((pl, seat) => {
      if (seat < Math.max(names.length, 4)) pick(`seat-${seat}`, pl.name || names[seat] || `Seat ${seat + 1}`);
    });
    stats.append(h("button", { onclick: () => edit("statistics off", (c) => { c.match.stats = null; }) }, "Hide"));
    p.append(fire, stats, f);
    renderForm(f, sch.match, sch.match, S.shown.match, opts(["match"], { upload, image, omit: ["intro", "stats"] }));
  } else if (S.tab === "outputs") {
    renderOutputs(p);
  } else if (S.tab === "look") {
    renderLook(p);
  } else if (S.tab === "rundown") {
    renderRundown(p);
  } else if (S.tab === "links") {
    renderLinks(p);
  } else if (S.tab === "game") {
    renderGame(p);
  } else if (S.tab === "logger") {
    renderLogger(p);
  } else if (S.tab === "render") {
    renderRender(p);
  }
}

function renderOutputs(p) {
  const root = S.schema.settings;
  const outSchema = root.$defs.OutputSettings;
  ensureReach();
  const there = deviceOrigin(); // OBS on another computer: the studio's 127.0.0.1 is not its
  for (const o of OUTPUTS) {
    const out = S.shown.outputs[o];
    const path = `/overlay/${enc(S.ch)}?output=${o}`;
    const url = `${location.origin}${path}`;
    // preview shows live hole cards: its page needs the token, read from the URL's fragment
    // (never sent to a server); the copy carries it, the text on screen hides it
    const withToken = (u) => (o === "preview" ? `${u}#token=${encodeURIComponent(S.api.token)}` : u);
    const shown = (u) => (o === "preview" ? `${u}#token=•••` : u);
    const f = h("div");
    p.append(h("fieldset", {}, h("legend", {}, o),
      h("div", { class: "urls row" }, h("code", { dataset: { output: o } }, shown(url)),
        h("button", { dataset: { copy: o }, onclick: () => copy(withToken(url)) }, "Copy")),
      there !== location.origin ? thereRow("OBS on another computer:", shown(there + path), withToken(there + path), { outputThere: o }, { copyThere: o }) : null,
      h("div", { class: "help" }, `OBS Browser Source: width ${out.width}, height ${out.height}.`),
      h("div", { class: "row" }, "view ",
        h("select", { onchange: (e) => { const i = Number(e.target.value); if (i >= 0) edit(`view on ${o}`, (c) => { c.outputs[o].view = clone(c.views[i]); }); } },
          h("option", { value: "-1" }, out.view ? out.view.name : "(default)"),
          (S.shown.views || []).map((v, i) => h("option", { value: String(i) }, v.name)))),
      f));
    renderForm(f, outSchema, root, out, { path: ["outputs", o], onChange: onField, omit: ["view"] });
  }
  const title = h("div");
  p.append(title);
  renderForm(title, { properties: { title: root.properties.title } }, root, S.shown, { path: [], onChange: onField });
  // analysis on air: on/off and the clean output's policy (the elements are extras of the view)
  const analysis = h("div", { class: "analysis-settings" });
  p.append(h("fieldset", {}, h("legend", {}, "analysis"), analysis));
  renderForm(analysis, { properties: { analysis: root.properties.analysis } }, root, S.shown, { path: [], onChange: onField });
}

export async function copy(text) {
  try { await navigator.clipboard.writeText(text); notice("Copied."); }
  catch { notice(`Copy this: ${text}`); }
}

function renderLook(p) {
  const looks = S.shown.looks || {};
  const list = h("ul", { class: "list" });
  for (const name of Object.keys(looks).sort()) {
    list.append(h("li", {}, h("span", { class: "name" }, name),
      h("button", { title: "apply: replaces the views, theme and timing", onclick: () => edit(`apply look ${name}`, (c) => { Object.assign(c, clone(c.looks[name])); dropDeadSwitches(c); }) }, "Apply"),
      h("button", { title: "delete", onclick: () => edit("delete look", (c) => { delete c.looks[name]; }) }, "✕")));
  }
  p.append(
    h("p", { class: "help" }, "A look is the named views, the theme and the timing together: saved here by name, or as one JSON file."),
    list,
    h("div", { class: "row" },
      h("button", { onclick: async () => { const n = await ask("Save the current views, theme and timing as look:"); if (n) edit("save look", (c) => { c.looks = { ...(c.looks || {}), [n]: currentLook(c) }; }); } }, "Save look as…"),
      h("button", { onclick: exportLook }, "Export look…"),
      h("label", { class: "file" }, "Import look…", h("input", { type: "file", accept: ".json,application/json", onchange: (e) => e.target.files[0] && importLook(e.target.files[0]) }))));
}

export function dropDeadSwitches(c) {
  const ids = new Set((c.views || []).map((v) => v.id));
  c.viewSwitches = (c.viewSwitches || []).filter((sw) => ids.has(sw.view));
}

function currentLook(c) {
  return clone({ views: c.views || [], theme: c.theme, timing: c.timing });
}

function exportLook() {
  const look = { kind: "euchre-overlay look", ...currentLook(S.shown),
    outputs: Object.fromEntries(OUTPUTS.map((o) => [o, { view: S.shown.outputs[o].view }])) };
  const a = h("a", { href: URL.createObjectURL(new Blob([JSON.stringify(look, null, 1)], { type: "application/json" })), download: `${S.ch}-look.json` });
  document.body.append(a);
  a.click();
  a.remove();
}

async function importLook(file) {
  let look;
  try { look = JSON.parse(await file.text()); } catch (err) { notice(`${file.name}: not JSON (${err.message})`); return; }
  edit("import look", (c) => {
    for (const k of ["views", "theme", "timing"]) if (look[k] !== undefined) c[k] = look[k];
    for (const o of OUTPUTS) if (look.outputs && look.outputs[o] && "view" in look.outputs[o]) c.outputs[o].view = look.outputs[o].view;
    dropDeadSwitches(c);
  });
}

/** The row of an address for another computer (the studio was opened at 127.0.0.1): `shown`
 * on screen, `copied` by its button. @param {string} label @param {string} shown @param {string} copied
 * @param {Record<string, string>} data the code's dataset @param {Record<string, string>} [buttonData] */
function thereRow(label, shown, copied, data, buttonData = {}) {
  return h("div", { class: "urls row" }, h("span", { class: "help" }, label), h("code", { dataset: data }, shown),
    h("button", { dataset: buttonData, onclick: () => copy(copied) }, "Copy"));
}

async function renderLinks(p) {
  ensureReach(); // (no redraw when it answers: that would lose a key shown once)
  const box = h("div");
  p.append(h("p", { class: "help" }, "Stream Deck / Companion: plain GET links with this channel's control key. The key allows transport, view switching, TAKE and the rundown's cues only; revoke it to stop every link."), box);
  const show = (r) => {
    clear(box);
    if (!r.key && !r.set) { box.append(h("button", { onclick: async () => show(await S.api.post(keyUrl())) }, "Make a control key")); return; }
    if (!r.key) box.append(h("p", { class: "help" }, "This channel has a control key. It is shown once, when made: make a new key to see links again (the old links then stop)."));
    box.append(h("div", { class: "row" },
      h("button", { onclick: async () => show(await S.api.post(keyUrl())) }, "New key"),
      h("button", { class: "danger", onclick: async () => { await S.api.del(keyUrl()); show({ key: null }); } }, "Revoke")));
    const there = deviceOrigin(); // a Stream Deck on another computer
    for (const [name, path] of Object.entries(r.links)) {
      const url = location.origin + path;
      box.append(h("div", { class: "urls row" }, h("strong", {}, name), h("code", {}, url), h("button", { onclick: () => copy(url) }, "Copy")));
      if (there !== location.origin) box.append(thereRow("from another computer:", there + path, there + path, { linkThere: name }));
    }
  };
  try { show(await S.api.get(keyUrl())); } catch (err) { box.append(h("span", { class: "error" }, err.message)); }
}

export const keyUrl = () => `/studio/api/channels/${enc(S.ch)}/control-key`;
