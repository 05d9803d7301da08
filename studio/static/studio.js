// The studio: channels, live preview with the layout editor, properties forms from the
// models' schema, views, transport and hotkeys.  Edits are RFC 7396 merge patches sent with
// the revision read; a stale one comes back 409 with the current document and is shown.

import { h, clear, $, clone, diff, mergePatch } from "./dom.js";
import { Api } from "./api.js";
import { renderForm, showErrors } from "./form.js";
import { Editor, placed } from "./editor.js";

const OUTPUTS = ["program", "preview", "clean"];
const TABS = [
  ["element", "Element"], ["view", "View"], ["theme", "Theme"], ["timing", "Timing"],
  ["match", "Match"], ["outputs", "Outputs"], ["look", "Look"], ["links", "Links"],
];
const HOTKEYS = [
  ["Space", "play / pause"], ["→", "next"], ["←", "back"], ["L", "go live"], ["1–9", "switch the preview to view 1–9"],
  ["Ctrl+Z", "undo"], ["Ctrl+Shift+Z", "redo"], ["arrows", "nudge the selection 1 px (Shift: 10 px) while the editor has focus"],
  ["Esc", "clear the selection"], ["?", "this list"],
];
const TOKEN_KEY = "euchre-overlay.token";

const S = {
  api: null, schema: null, ch: null, doc: null, shown: null, info: null, timeline: [],
  undo: [], redo: [], tab: "element", chain: Promise.resolve(), pending: 0, selection: [], errors: [],
};

const enc = encodeURIComponent;
const settingsUrl = () => `/api/channels/${enc(S.ch)}/settings`;
const content = (doc) => { const c = clone(doc); delete c.revision; return c; };

// ------------------------------------------------------------------ sign-in

async function start() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token && (await signIn(token))) return;
  const form = $("#signin");
  form.hidden = false;
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const t = $("#token").value.trim();
    if (await signIn(t)) form.hidden = true;
    else $("#signin-error").textContent = "That token was refused.";
  });
}

async function signIn(token) {
  const api = new Api(token);
  try {
    S.schema = await api.get("/studio/api/schema");
  } catch {
    sessionStorage.removeItem(TOKEN_KEY);
    return false;
  }
  sessionStorage.setItem(TOKEN_KEY, token);
  S.api = api;
  $("#signin").hidden = true;
  $("#app").hidden = false;
  setup();
  await loadChannels();
  return true;
}

// ------------------------------------------------------------------ channels

async function loadChannels(select) {
  const { channels } = await S.api.get("/api/channels");
  const sel = clear($("#channel"));
  for (const c of channels) sel.append(h("option", { value: c.id }, c.title ? `${c.title} (${c.id})` : c.id));
  const want = select || S.ch || (channels[0] && channels[0].id);
  if (want) { sel.value = want; await openChannel(want); }
  else { S.ch = null; S.doc = null; S.shown = null; renderAll(); }
}

async function openChannel(id) {
  S.ch = id;
  S.undo = []; S.redo = []; S.selection = []; editor.selection = new Set();
  hide("#conflict"); hide("#notice");
  S.doc = await S.api.get(settingsUrl());
  S.shown = content(S.doc);
  const tl = await S.api.get(`/studio/api/channels/${enc(id)}/timeline`);
  S.timeline = tl.steps;
  if (tl.settingsProblem) notice(`The stored settings were refused and this channel runs on defaults until you save: ${tl.settingsProblem}`);
  const q = (o) => `/overlay/${enc(id)}?output=${o}`;
  $("#preview").src = q("preview");
  $("#program").src = q("program");
  await poll();
  renderAll();
}

async function ask(text, value = "", { input = true } = {}) {
  const d = $("#ask");
  $("#ask-text").textContent = text;
  const inp = $("#ask-input");
  inp.hidden = !input;
  inp.value = value;
  d.returnValue = "";
  d.showModal();
  if (input) inp.select();
  await new Promise((r) => d.addEventListener("close", r, { once: true }));
  return d.returnValue === "ok" ? (input ? inp.value.trim() : true) : null;
}

async function newChannel() {
  const id = await ask("New channel id (letters, digits, - and _):");
  if (!id) return;
  try {
    await S.api.post("/api/channels", { id, title: id });
    await loadChannels(id);
  } catch (err) { notice(err.message); }
}

async function renameChannel() {
  if (!S.ch) return;
  const title = await ask(`Title of channel ${S.ch}:`, S.shown.title);
  if (title === null) return;
  await edit("rename", (c) => { c.title = title; });
  await loadChannels(S.ch);
}

async function deleteChannel() {
  if (!S.ch) return;
  const ok = await ask(`Delete channel ${S.ch}, its game and its settings? This cannot be undone.`, "", { input: false });
  if (!ok) return;
  try {
    await S.api.del(keyUrl()); // links made for this channel must not work for a new one of the same id
    await S.api.del(`/api/channels/${enc(S.ch)}`);
    S.ch = null;
    await loadChannels();
  } catch (err) { notice(err.message); }
}

// ------------------------------------------------------------------ edits

function defaultView(output) {
  return clone(S.schema.defaults.views[output] || S.schema.defaults.views.preview);
}

/** The preview output's view as shown (the default one when the output has none). */
function previewView() {
  if (!S.shown) return null;
  return S.shown.outputs.preview.view || defaultView("preview");
}

function ensureView(c, output = "preview") {
  if (!c.outputs[output].view) c.outputs[output].view = defaultView(output);
  return c.outputs[output].view;
}

/** One undoable edit: mutate a copy of the shown settings, show it at once, send the patch. */
function edit(label, mutate) {
  if (!S.shown) return Promise.resolve();
  const before = clone(S.shown);
  const after = clone(S.shown);
  mutate(after);
  const patch = diff(before, after);
  if (!patch) return Promise.resolve();
  S.shown = after;
  const sent = send(patch, { inverse: diff(after, before), label, undoable: true, mutate, before, after });
  // draw after the request is on its way: the preview page is what the producer watches
  queueRender();
  return sent;
}

function queueRender() {
  if (S.renderQueued) return;
  S.renderQueued = true;
  requestAnimationFrame(() => { S.renderQueued = false; renderAll({ keepForm: true }); });
}

function send(patch, { inverse, label, undoable, redo = false, mutate, before, after }) {
  S.pending++;
  S.chain = S.chain.then(async () => {
    try {
      const doc = await S.api.patch(settingsUrl(), { ...patch, revision: S.doc.revision });
      adopt(doc);
      if (undoable) { S.undo.push({ patch, inverse, label }); if (!redo) S.redo = []; }
      S.errors = [];
      if ($("#live-edits").checked && patch.outputs && patch.outputs.preview) await take();
    } catch (err) {
      if (err.status === 409 && err.body.current) {
        showConflict(patch, err.body.current, { inverse, label, undoable, mutate, before, after });
      } else if (err.status === 400) {
        S.errors = err.body.errors || [{ loc: [], msg: err.message }];
      } else {
        notice(err.message);
      }
      S.shown = content(S.doc); // nothing was saved: show what is stored
    } finally {
      S.pending--;
      renderAll();
    }
  });
  return S.chain;
}

function adopt(doc) {
  S.doc = doc;
  if (!S.pending || S.pending === 1) S.shown = content(doc);
  hide("#notice");
}

function undo() {
  const u = S.undo.pop();
  if (!u) return;
  S.shown = mergePatch(S.shown, u.inverse);
  renderAll({ keepForm: false });
  send(u.inverse, { label: `undo ${u.label}`, undoable: false }).then(() => S.redo.push(u));
}

function redo() {
  const u = S.redo.pop();
  if (!u) return;
  S.shown = mergePatch(S.shown, u.patch);
  renderAll({ keepForm: false });
  send(u.patch, { inverse: u.inverse, label: u.label, undoable: true, redo: true });
}

async function take() {
  try {
    adopt(await S.api.post(`/studio/api/channels/${enc(S.ch)}/take`));
  } catch (err) { notice(err.message); }
  renderAll();
}

/** Leaf-level changes from a to b (arrays compared item by item): [[path, old, new], ...]. */
function changes(a, b, path = [], out = []) {
  const both = (x, y) => x !== null && y !== null && typeof x === "object" && typeof y === "object" && Array.isArray(x) === Array.isArray(y);
  if (both(a, b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) changes(a[k], b[k], [...path, k], out);
  } else if (JSON.stringify(a) !== JSON.stringify(b)) {
    out.push([path, a, b]);
  }
  return out;
}

function valueAt(obj, path) {
  let o = obj;
  for (const k of path) { if (o === null || typeof o !== "object") return undefined; o = o[k]; }
  return o;
}

function showConflict(patch, current, again) {
  hide("#notice");
  const box = clear($("#conflict"));
  box.hidden = false;
  const show = (v) => (v === undefined ? "(none)" : JSON.stringify(v));
  const mine = again.before && again.after ? changes(again.before, again.after) : changes({}, patch);
  const rows = mine.slice(0, 12).map(([path, , value]) =>
    h("tr", {}, h("td", {}, path.join(".")), h("td", {}, show(value)), h("td", {}, show(valueAt(current, path)))));
  box.append(
    h("strong", {}, `Not saved: someone else saved revision ${current.revision} since you read ${S.doc.revision}.`),
    h("table", { class: "diff" }, h("tr", {}, h("th", {}, "field"), h("th", {}, "yours"), h("th", {}, "theirs (stored)")), rows),
    h("div", { class: "help" }, mine.length > 12 ? `… and ${mine.length - 12} more` : ""),
    h("div", { class: "row" },
      h("button", { onclick: () => {
        S.doc = current;
        hide("#conflict");
        S.shown = content(current);
        // an edit is replayed on their document (a drag moves the element it moved, nothing
        // else); an undo or redo re-sends its patch
        if (again.mutate) edit(again.label, again.mutate);
        else { S.shown = mergePatch(S.shown, patch); send(patch, again); }
      } }, "Keep mine"),
      h("button", { onclick: () => { S.doc = current; S.shown = content(current); hide("#conflict"); renderAll(); } }, "Take theirs")),
  );
}

function hide(sel) { const el = $(sel); el.hidden = true; clear(el); }

function notice(text, button) {
  const n = clear($("#notice"));
  n.hidden = false;
  n.append(h("span", {}, text), " ", button || null);
}

// ------------------------------------------------------------------ rendering

let editor;

function renderAll({ keepForm = false } = {}) {
  if (S.fit) S.fit();
  renderElements();
  renderViews();
  renderSwitches();
  editor.render();
  renderWarnings();
  if (!keepForm || !document.activeElement || !$("#panel").contains(document.activeElement)) renderPanel();
  const left = showErrors($("#panel"), S.errors);
  if (left.length) notice(left.map((e) => `${(e.loc || []).join(" -> ")}: ${e.msg}`).join("; "));
  $("#undo").disabled = !S.undo.length;
  $("#redo").disabled = !S.redo.length;
}

function renderElements() {
  const ul = clear($("#elements"));
  const v = previewView();
  if (!v) return;
  const warned = new Set(editor.warnings().flatMap((w) => w.ids));
  const n = v.elements.length;
  placed(v).forEach((e, at) => {
    const list = at < n ? "elements" : "extras";
    const i = at < n ? at : at - n;
    const li = h("li", { class: editor.selection.has(e.id) ? "selected" : "", role: "option", "aria-selected": String(editor.selection.has(e.id)), dataset: { id: e.id },
      onclick: (ev) => { if (ev.target.closest("button,input")) return; editor.select([e.id], { toggle: ev.shiftKey || ev.ctrlKey || ev.metaKey }); } },
      h("input", { type: "checkbox", checked: e.visible, title: "show / hide", "aria-label": `show ${e.id}`,
        onchange: (ev) => edit("show/hide", (c) => { ensureView(c)[list][i].visible = ev.target.checked; }) }),
      h("span", { class: "name" }, e.id),
      warned.has(e.id) ? h("span", { class: "warn", title: "overlap or outside title-safe" }, "⚠") : null,
      h("button", { title: "draw earlier (further back)", onclick: () => zorder(list, i, -1) }, "↑"),
      h("button", { title: "draw later (in front)", onclick: () => zorder(list, i, 1) }, "↓"),
      list === "extras" ? h("button", { title: "remove this extra", onclick: () => edit("remove extra", (c) => { ensureView(c).extras.splice(i, 1); }) }, "✕") : null);
    ul.append(li);
  });
  const have = new Set((v.extras || []).map((x) => x.type));
  const add = h("div", { class: "row" });
  for (const [type, label] of [["event-title", "+ Event title"], ["player-intro", "+ Player intro"]]) {
    if (!have.has(type)) add.append(h("button", { title: "add this broadcast extra to the preview's view", onclick: () => addExtra(type) }, label));
  }
  ul.append(h("li", {}, add));
}

function addExtra(type) {
  const [w, hh] = S.schema.sizes[type];
  edit(`add ${type}`, (c) => {
    const v = ensureView(c);
    v.extras = v.extras || [];
    const ids = new Set(placed(v).map((e) => e.id));
    let id = type;
    for (let n = 2; ids.has(id); n++) id = `${type}-${n}`;
    // centred on the lower third (intro) or the upper middle (title)
    const y = type === "player-intro" ? v.height * 0.95 - hh - 40 : v.height * 0.05 + 100;
    v.extras.push({ id, type, x: Math.round((v.width - w) / 2), y: Math.round(y), scale: 1, visible: true });
  });
}

function zorder(list, i, d) {
  edit("z-order", (c) => {
    const els = ensureView(c)[list];
    const j = i + d;
    if (j < 0 || j >= els.length) return;
    [els[i], els[j]] = [els[j], els[i]];
  });
}

function renderWarnings() {
  const w = clear($("#warnings"));
  if (!S.shown) return;
  for (const x of editor.warnings()) w.append(h("div", {}, `⚠ ${x.text}`));
}

function renderViews() {
  const ol = clear($("#views"));
  if (!S.shown) return;
  (S.shown.views || []).forEach((v, i) => {
    ol.append(h("li", { dataset: { index: String(i) } },
      h("span", { class: "key" }, i < 9 ? String(i + 1) : ""),
      h("span", { class: "name", title: "put on preview", onclick: () => switchView(i) }, v.name),
      h("button", { title: "rename", onclick: async () => { const n = await ask("View name:", v.name); if (n) edit("rename view", (c) => { c.views[i].name = n; }); } }, "✎"),
      h("button", { title: "duplicate", onclick: () => edit("duplicate view", (c) => { const copy = clone(v); copy.id = uniqueId(c.views, v.id); copy.name = `${v.name} copy`; c.views.splice(i + 1, 0, copy); }) }, "⧉"),
      h("button", { title: "delete", onclick: async () => { if (await ask(`Delete view ${v.name}?`, "", { input: false })) edit("delete view", (c) => { c.views.splice(i, 1); dropDeadSwitches(c); }); } }, "✕")));
  });
}

function renderSwitches() {
  const box = clear($("#switches"));
  if (!S.shown) return;
  const views = S.shown.views || [];
  if (!views.length) { box.append(h("li", { class: "help" }, "Save a named view first.")); return; }
  const name = (id) => (views.find((v) => v.id === id) || { name: id }).name;
  (S.shown.viewSwitches || []).forEach((sw, i) => {
    box.append(h("li", {}, h("span", { class: "name" }, `step ${sw.step + 1} → ${name(sw.view)}`),
      h("button", { title: "remove", onclick: () => edit("remove switch", (c) => { c.viewSwitches.splice(i, 1); }) }, "✕")));
  });
  const pick = h("select", { "aria-label": "view to switch to" }, views.map((v) => h("option", { value: v.id }, v.name)));
  box.append(h("li", {}, h("button", { title: "switch to this view at the current step", onclick: () => {
    const step = (S.info && S.info.playhead && S.info.playhead.step) || 0;
    edit("add switch", (c) => {
      c.viewSwitches = (c.viewSwitches || []).filter((x) => x.step !== step);
      c.viewSwitches.push({ step, view: pick.value });
      c.viewSwitches.sort((a, b) => a.step - b.step);
    });
  } }, "Switch here to"), pick));
}

function uniqueId(views, base) {
  const ids = new Set(views.map((v) => v.id));
  let n = 2;
  let id = base;
  while (ids.has(id)) id = `${base}-${n++}`;
  return id;
}

async function switchView(i) {
  if (!S.shown || !(S.shown.views || [])[i]) return;
  try {
    adopt(await S.api.post(`/studio/api/channels/${enc(S.ch)}/view/${i + 1}?output=preview`));
    if ($("#live-edits").checked) await take();
  } catch (err) { notice(err.message); }
  renderAll();
}

async function saveView() {
  const name = await ask("Save the preview's layout as view:", previewView().name);
  if (!name) return;
  edit("save view", (c) => {
    c.views = c.views || [];
    const v = clone(ensureView(c));
    v.name = name;
    const at = c.views.findIndex((x) => x.name === name);
    if (at >= 0) { v.id = c.views[at].id; c.views[at] = v; }
    else { v.id = uniqueId(c.views, name.toLowerCase().replace(/[^a-z0-9]+/g, "-") || "view"); c.views.push(v); }
  });
}

async function importLegacy(file) {
  try {
    const r = await S.api.req("POST", "/studio/api/legacy", await file.arrayBuffer(), { raw: true, type: "application/json" });
    if (!r.views.length) { notice(`${file.name}: no views in this file`); return; }
    await edit("import views", (c) => {
      c.views = c.views || [];
      const ids = [];
      const byOldId = {};
      for (const v of r.views) { const old = v.id; v.id = uniqueId(c.views, v.id); ids.push(v.id); byOldId[old] = v.id; c.views.push(clone(v)); }
      c.outputs.preview.view = clone(r.views[0]);
      // the file's viewSwitches (step -> view id, or view index), kept where the view changes
      const target = (x) => (typeof x === "number" ? ids[x] : byOldId[x]);
      const switches = Object.entries(r.viewSwitches || {}).map(([step, x]) => [Number(step), target(x)])
        .filter(([step, id]) => Number.isInteger(step) && step >= 0 && id).sort((a, b) => a[0] - b[0]);
      let last = null;
      const kept = [];
      for (const [step, id] of switches) if (id !== last) { kept.push({ step, view: id }); last = id; }
      if (kept.length > 1 || (kept.length === 1 && kept[0].step > 0)) c.viewSwitches = kept;
      // the file's timings (step -> cue time) are kept as they are, to sync a render to a video
      if (r.timings && !Array.isArray(r.timings) && Object.keys(r.timings).length) c.cueTimes = r.timings;
    });
    const cues = r.timings && !Array.isArray(r.timings) ? Object.keys(r.timings).length : 0;
    if (cues && S.timeline.length && cues !== S.timeline.length)
      notice(`${file.name}: its timings name ${cues} steps; this channel's game has ${S.timeline.length} (kept as they are).`);
  } catch (err) { notice(`${file.name}: ${err.message}`); }
}

// ------------------------------------------------------------------ properties panel

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

function renderTabs() {
  const nav = clear($("#tabs"));
  for (const [id, label] of TABS)
    nav.append(h("button", { role: "tab", "aria-selected": String(S.tab === id), onclick: () => { S.tab = id; renderTabs(); renderPanel(); } }, label));
}

function renderPanel() {
  const p = clear($("#panel"));
  if (!S.shown) { p.append(h("p", {}, "No channel yet: make one with New.")); return; }
  const sch = S.schema;
  const opts = (path, extra = {}) => ({ path, onChange: onField, ...extra });
  if (S.tab === "element") {
    const v = previewView();
    const ids = [...editor.selection];
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
    renderForm(f, schema, schema, el, opts(["outputs", "preview", "view", list, i], { omit: ["id", "type"] }));
    if (el.type === "player-intro") p.append(h("p", { class: "help" }, "Fire the intro from the Match tab."));
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
    renderForm(f, sch.timing, sch.timing, S.shown.timing, opts(["timing"], { easings: sch.easings }));
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
    p.append(fire, f);
    const image = (id) => S.api.blobUrl(`/studio/api/uploads/${enc(id)}`);
    renderForm(f, sch.match, sch.match, S.shown.match, opts(["match"], { upload, image, omit: ["intro"] }));
  } else if (S.tab === "outputs") {
    renderOutputs(p);
  } else if (S.tab === "look") {
    renderLook(p);
  } else if (S.tab === "links") {
    renderLinks(p);
  }
}

function renderOutputs(p) {
  const root = S.schema.settings;
  const outSchema = root.$defs.OutputSettings;
  for (const o of OUTPUTS) {
    const out = S.shown.outputs[o];
    const url = `${location.origin}/overlay/${enc(S.ch)}?output=${o}`;
    const f = h("div");
    p.append(h("fieldset", {}, h("legend", {}, o),
      h("div", { class: "urls row" }, h("code", {}, url),
        h("button", { onclick: () => copy(url) }, "Copy")),
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
}

async function copy(text) {
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

function dropDeadSwitches(c) {
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

async function renderLinks(p) {
  const box = h("div");
  p.append(h("p", { class: "help" }, "Stream Deck / Companion: plain GET links with this channel's control key. The key allows transport and view switching only; revoke it to stop every link."), box);
  const show = (r) => {
    clear(box);
    if (!r.key) { box.append(h("button", { onclick: async () => show(await S.api.post(keyUrl())) }, "Make a control key")); return; }
    box.append(h("div", { class: "row" },
      h("button", { onclick: async () => show(await S.api.post(keyUrl())) }, "New key"),
      h("button", { class: "danger", onclick: async () => { await S.api.del(keyUrl()); show({ key: null }); } }, "Revoke")));
    for (const [name, path] of Object.entries(r.links)) {
      const url = location.origin + path;
      box.append(h("div", { class: "urls row" }, h("strong", {}, name), h("code", {}, url), h("button", { onclick: () => copy(url) }, "Copy")));
    }
  };
  try { show(await S.api.get(keyUrl())); } catch (err) { box.append(h("span", { class: "error" }, err.message)); }
}

const keyUrl = () => `/studio/api/channels/${enc(S.ch)}/control-key`;

// ------------------------------------------------------------------ transport

async function control(op, body = {}) {
  if (!S.ch) return;
  try {
    const ph = await S.api.post(`/api/channels/${enc(S.ch)}/control/${op}`, body);
    S.info = { ...(S.info || {}), playhead: ph };
    renderTransport();
  } catch (err) { notice(err.message); }
}

async function poll() {
  if (!S.ch) return;
  try {
    S.info = await S.api.get(`/api/channels/${enc(S.ch)}`);
  } catch { return; }
  if (S.doc && S.info.settingsRevision !== S.doc.revision && !S.pending && $("#conflict").hidden && $("#notice").hidden) {
    notice(`Settings changed elsewhere (revision ${S.info.settingsRevision}).`,
      h("button", { onclick: async () => { S.doc = await S.api.get(settingsUrl()); S.shown = content(S.doc); hide("#notice"); renderAll(); } }, "Reload"));
  }
  if (S.info.game && S.info.game.steps !== S.timeline.length) {
    S.timeline = (await S.api.get(`/studio/api/channels/${enc(S.ch)}/timeline`)).steps;
  }
  renderTransport();
}

function renderTransport() {
  const info = S.info;
  const pages = clear($("#pages"));
  if (!info) return;
  for (const o of OUTPUTS) {
    const n = (info.pages || {})[o] || 0;
    const delay = ((info.playhead || {}).delays || {})[o] || 0;
    pages.append(h("span", { title: `${n} page(s) showing ${o}` }, h("span", { class: `dot${n ? " on" : ""}` }), `${o} ${n}`, delay ? ` · ${delay} s` : ""));
  }
  const ph = info.playhead || {};
  $("#play").textContent = ph.playing ? "❚❚" : "▶";
  $("#loop").checked = Boolean(ph.loop);
  $("#auto").checked = ph.auto !== false;
  if (document.activeElement !== $("#speed")) $("#speed").value = String(ph.speed || 1);
  const steps = S.timeline.length;
  const scrub = $("#scrub");
  scrub.max = String(Math.max(0, steps - 1));
  if (document.activeElement !== scrub) scrub.value = String(ph.step || 0);
  const st = S.timeline[ph.step || 0];
  $("#where").textContent = st ? `deal ${st.deal + 1} · step ${(ph.step || 0) + 1}/${steps} · ${st.kind.replace(/_/g, " ")}${ph.playing ? "" : " · paused"}` : "no game";
  const m = clear($("#markers"));
  let last = null;
  S.timeline.forEach((s, i) => {
    if (s.deal === last) return;
    last = s.deal;
    const mark = h("span", { title: `deal ${s.deal + 1} (deal number ${s.dealNumber} in the file): step ${i + 1}` }, `D${s.deal + 1}`);
    mark.style.left = `${(100 * i) / Math.max(1, steps - 1)}%`;
    m.append(mark);
  });
}

// ------------------------------------------------------------------ hotkeys and wiring

function typing(e) {
  const t = e.target;
  return t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA" || t.isContentEditable);
}

function onKey(e) {
  if ($("#app").hidden || $("#ask").open) return;
  const ctrl = e.ctrlKey || e.metaKey;
  if (ctrl && (e.key === "z" || e.key === "Z")) { if (typing(e)) return; e.preventDefault(); (e.shiftKey ? redo : undo)(); return; }
  if (ctrl && e.key === "y") { if (typing(e)) return; e.preventDefault(); redo(); return; }
  if (typing(e) || ctrl || e.altKey) return;
  const inEditor = document.activeElement === $("#overlay") && editor.selection.size > 0;
  const step = e.shiftKey ? 10 : 1;
  if (inEditor && e.key.startsWith("Arrow")) {
    e.preventDefault();
    const d = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] }[e.key];
    editor.nudge(...d);
    return;
  }
  if (e.key === " ") { e.preventDefault(); control("toggle"); }
  else if (e.key === "ArrowRight") { e.preventDefault(); control("next"); }
  else if (e.key === "ArrowLeft") { e.preventDefault(); control("back"); }
  else if (e.key === "l" || e.key === "L") control("live");
  else if (/^[1-9]$/.test(e.key)) switchView(Number(e.key) - 1);
  else if (e.key === "?") $("#help").showModal();
  else if (e.key === "Escape") editor.select([]);
}

function setup() {
  editor = new Editor($("#overlay"), {
    sizes: S.schema.sizes,
    view: previewView,
    outputSize: () => { const o = S.shown ? S.shown.outputs.preview : { width: 1920, height: 1080 }; return [o.width, o.height]; },
    commit: (label, mutate) => edit(label, (c) => mutate(ensureView(c))),
    selected: (ids) => { S.selection = ids; if (S.tab !== "element" && ids.length) S.tab = "element"; renderTabs(); renderElements(); renderPanel(); showErrors($("#panel"), S.errors); },
  });
  // the preview keeps the output's aspect ratio inside whatever room the window leaves
  const fit = () => {
    const wrap = $("#stage-wrap");
    const [W, H] = S.shown ? [S.shown.outputs.preview.width, S.shown.outputs.preview.height] : [16, 9];
    const k = Math.min(wrap.clientWidth / W, wrap.clientHeight / H);
    $("#frame").style.width = `${Math.floor(W * k)}px`;
    $("#frame").style.height = `${Math.floor(H * k)}px`;
  };
  new ResizeObserver(fit).observe($("#stage-wrap"));
  S.fit = fit;
  renderTabs();
  const help = clear($("#help-keys"));
  for (const [k, what] of HOTKEYS) help.append(h("tr", {}, h("td", {}, h("kbd", {}, k)), h("td", {}, what)));
  $("#channel").addEventListener("change", (e) => openChannel(e.target.value));
  $("#ch-new").addEventListener("click", newChannel);
  $("#ch-rename").addEventListener("click", renameChannel);
  $("#ch-delete").addEventListener("click", deleteChannel);
  $("#signout").addEventListener("click", () => { sessionStorage.removeItem(TOKEN_KEY); location.reload(); });
  $("#help-open").addEventListener("click", () => $("#help").showModal());
  $("#undo").addEventListener("click", undo);
  $("#redo").addEventListener("click", redo);
  $("#take").addEventListener("click", take);
  $("#view-save").addEventListener("click", saveView);
  $("#legacy-file").addEventListener("change", (e) => { const f = e.target.files[0]; e.target.value = ""; if (f) importLegacy(f); });
  $("#guides").addEventListener("change", (e) => { editor.guides = e.target.checked; editor.render(); });
  $("#grid").addEventListener("change", (e) => { editor.grid = e.target.checked; });
  const backdrop = () => {
    const colour = $("#backdrop").value === "colour";
    for (const f of [$("#frame"), $("#program-frame")]) { f.classList.toggle("checker", !colour); f.style.backgroundColor = colour ? $("#backdrop-colour").value : ""; }
  };
  $("#backdrop").addEventListener("change", backdrop);
  $("#backdrop-colour").addEventListener("input", backdrop);
  for (const b of document.querySelectorAll("#transport [data-op]")) b.addEventListener("click", () => control(b.dataset.op));
  $("#speed").addEventListener("change", (e) => control("speed", { speed: Number(e.target.value) }));
  $("#loop").addEventListener("change", (e) => control("loop", { value: e.target.checked }));
  $("#auto").addEventListener("change", (e) => control("auto", { value: e.target.checked }));
  $("#scrub").addEventListener("change", (e) => control("seek", { step: Number(e.target.value) }));
  document.addEventListener("keydown", onKey);
  setInterval(poll, 1000);
}

start();
