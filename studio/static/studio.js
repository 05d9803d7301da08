// @ts-check
// The studio page: sign-in, channels, the element and view lists, hotkeys; it puts the
// session (edits), the editor (preview), the panel (forms) and the transport together.

import { h, clear, $, clone, afterPress } from "./dom.js";
import { Api } from "./api.js";
import { showErrors } from "./form.js";
import { Editor, placed } from "./editor.js";
import { fireCue, cueOfKey } from "./rundown.js";
import { S, enc, settingsUrl, content, previewView, ensureView, edit, undo, redo, take, takeDefaults, adopt, notice, hide, ask } from "./session.js";
import { renderTabs, renderPanel, dropDeadSwitches, keyUrl } from "./panel.js";
import { control, poll, loadTimeline, airLine, renderTransport, seekBox } from "./transport.js";
import { setupTables } from "./tables.js";
import { G } from "./glance.js";

const HOTKEYS = [
  ["Space", "play / pause"], ["→", "next"], ["←", "back"], ["L", "go live"], ["T", "TAKE (by the transition beside the button)"], ["G", "GO: fire the rundown's next cue"], ["F1–F12", "fire the rundown cue of that key"], ["1–9", "switch the preview to view 1–9"],
  ["Ctrl+Z", "undo"], ["Ctrl+Shift+Z", "redo"], ["arrows", "nudge the selection 1 px (Shift: 10 px) while the editor has focus"],
  ["Esc", "clear the selection"], ["O", "every table at a glance (the overview)"], ["?", "this list"],
];
const TOKEN_KEY = "euchre-overlay.token";
/** why the studio signed itself out (shown on the sign-in form after the reload) */
const WHY_KEY = "euchre-overlay.signedOut";
// ------------------------------------------------------------------ sign-in

async function start() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token && (await signIn(token))) return;
  const form = $("#signin");
  form.hidden = false;
  $("#signin-error").textContent = sessionStorage.getItem(WHY_KEY) || "";
  sessionStorage.removeItem(WHY_KEY);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const t = $("#token").value.trim();
    if (await signIn(t)) { form.hidden = true; $("#signin-error").textContent = ""; }
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
  api.onRefused = signedOut;
  api.onReach = showReach;
  S.api = api;
  $("#signin").hidden = true;
  $("#app").hidden = false;
  setup();
  await loadChannels();
  return true;
}

/** The server refused the token the studio signed in with (rotated with `euchre-overlay token
 * --rotate` and the server restarted, or another server on this address): back to the sign-in
 * form, saying why, instead of every request failing on its own. */
function signedOut() {
  if (sessionStorage.getItem(WHY_KEY)) return; // (once: the reload is under way)
  sessionStorage.removeItem(TOKEN_KEY);
  sessionStorage.setItem(WHY_KEY, "The server no longer takes the token this studio signed in with (it was rotated, or this is another server): sign in with the current one.");
  location.reload();
}

/** The status bar says when the server stops answering, and since when (the OBS pages keep
 * their last picture and reconnect by themselves); gone at the next answer. */
function showReach(answering) {
  const el = $("#reach");
  el.hidden = answering;
  if (answering) return;
  const since = new Date(S.api && S.api.downSince !== null ? S.api.downSince : Date.now());
  el.textContent = `SERVER NOT ANSWERING since ${since.toLocaleTimeString()} · retrying`;
  el.title = "The studio asks again every second; the OBS pages keep their last picture and reconnect by themselves.";
}

// ------------------------------------------------------------------ channels

async function loadChannels(select) {
  const { channels } = await S.api.get("/api/channels");
  fillPicker(channels);
  const known = (id) => id && channels.some((c) => c.id === id);
  const want = known(select) ? select : known(S.ch) ? S.ch : (channels[0] && channels[0].id);
  if (want) { $("#channel").value = want; await openChannel(want); }
  else { S.ch = null; S.doc = null; S.shown = null; renderAll(); }
}

/** The picker's options from a channel list, rebuilt only when its ids or titles changed. */
function fillPicker(channels) {
  const sel = /** @type {HTMLSelectElement} */ ($("#channel"));
  const want = channels.map((c) => [c.id, c.title ? `${c.title} (${c.id})` : c.id]);
  if (JSON.stringify(want) === JSON.stringify([...sel.options].map((o) => [o.value, o.textContent]))) return;
  const keep = sel.value;
  clear(sel);
  for (const [id, text] of want) sel.append(h("option", { value: id }, text));
  sel.value = keep;
}

/** After each refresh of every table: channels another studio, the API or the CLI made,
 * renamed or deleted show in the picker; the channel open here, deleted elsewhere, is said
 * and another opened (its frames would otherwise wait on a channel that is gone). */
function followChannels() {
  if (G.error || !S.api) return;
  if (S.ch && G.listedAt < (S.openedAt ?? 0)) return; // a list asked for before this channel was opened
  if (document.activeElement !== $("#channel")) fillPicker(G.channels);
  if (S.ch && !G.channels.some((c) => c.id === S.ch)) {
    const gone = S.ch;
    S.ch = null;
    void loadChannels().then(() => notice(`Channel "${gone}" was deleted elsewhere (another studio, the API or the command line).`));
  }
}

async function openChannel(id) {
  S.ch = id;
  S.openedAt = performance.now();
  S.undo = []; S.redo = []; S.selection = []; editor.selection = new Set();
  hide("#conflict"); hide("#notice");
  S.doc = await S.api.get(settingsUrl());
  S.shown = content(S.doc);
  takeDefaults();
  S.lines = [];
  const tl = await loadTimeline();
  if (tl.settingsProblem) notice(`The stored settings were refused and this channel runs on defaults until you save: ${tl.settingsProblem}`);
  // monitor=1: the studio's own frames are not counted as OBS pages
  const q = (o) => `/overlay/${enc(id)}?output=${o}&monitor=1`;
  // preview shows live hole cards: the page sends the token it finds in the fragment
  $("#preview").src = `${q("preview")}#token=${encodeURIComponent(S.api.token)}`;
  $("#program").src = q("program");
  await poll();
  renderAll();
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
  renderNoChannel();
}

/** Without a channel (a server started with --no-demo, or the last channel deleted) nothing
 * that acts on one can be pressed, and the stage says what to do first. */
function renderNoChannel() {
  const none = !S.ch;
  $("#no-channel").hidden = !none;
  $("#ch-rename").disabled = none;
  $("#ch-delete").disabled = none;
  $("#transport").inert = none;
  $("#view-tools").inert = none;
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
  const kinds = [["event-title", "+ Event title"], ["player-intro", "+ Player intro"], ["logo", "+ Logo slot"],
    ["match-stats", "+ Match statistics"], ["stats-lower-third", "+ Statistics lower third"], ["deal-history", "+ Deal history"],
    ["win-bar", "+ Win bar"], ["win-graph", "+ Win graph"], ["best-play", "+ Best play"], ["play-quality", "+ Play quality"], ["bidding-table", "+ Bidding table"]];
  for (const [type, label] of kinds) {
    // logo and sponsor slots: as many as wanted
    if (!have.has(type) || type === "logo") add.append(h("button", { title: "add this broadcast extra to the preview's view", onclick: () => addExtra(type) }, label));
  }
  ul.append(h("li", {}, add));
}

/** Add a broadcast extra where the server finds free space on the preview's view (inside
 * title-safe, clear of the hands, the table, the scores and the other extras: renderer.placement);
 * where there is none, where it covers least, and the producer is told what it covers.  The
 * first analysis extra of a view brings the ones drawn by default with it, each placed the same
 * way (a view that places one draws only those it places). */
async function addExtra(type) {
  const v0 = previewView();
  if (!v0) return;
  const analysis = new Set(S.schema.analysisTypes || []);
  const first = analysis.has(type) && !(v0.extras || []).some((x) => analysis.has(x.type));
  /** @type {string[]} */
  const types = first ? [type, ...(S.schema.analysisDefaults || []).map((/** @type {any} */ d) => d.type).filter((t) => t !== type)] : [type];
  let places;
  try {
    places = (await S.api.post("/studio/api/place", { view: v0, types })).places;
  } catch (err) { notice(err.message); return; }
  await edit(`add ${type}`, (c) => {
    const v = ensureView(c);
    v.extras = v.extras || [];
    for (const at of places) {
      const ids = new Set(placed(v).map((e) => e.id));
      let id = at.type;
      for (let n = 2; ids.has(id); n++) id = `${at.type}-${n}`;
      v.extras.push({ id, type: at.type, x: at.x, y: at.y, scale: 1, visible: true });
    }
  });
  const tight = places.filter((/** @type {any} */ at) => !at.fits);
  if (tight.length) notice(tight.map((/** @type {any} */ at) => `No free space for ${at.type}: placed where it covers least (${at.covers.join(", ")}).`).join(" ") + " Move or hide something, or show it between deals.");
  else if (first && types.length > 1) notice(`Placed with the analysis extras drawn by default (${types.slice(1).join(", ")}): each can now be moved or hidden.`);
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

/** Put named view i on preview (after the edits sent before it; with live edits, on air too). */
async function switchView(i) {
  if (!S.shown || !(S.shown.views || [])[i]) return;
  S.chain = S.chain.then(async () => {
    try {
      adopt(await S.api.post(`/studio/api/channels/${enc(S.ch)}/view/${i + 1}?output=preview`));
    } catch (err) { notice(err.message); }
    renderAll();
  });
  await S.chain;
  if ($("#live-edits").checked) await take();
}

async function saveView() {
  if (!S.shown) return;
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
    if (!r.views.length) { notice(`${file.name}: no views in this file (Import EGN reads a file's layouts; to load its game, use the Game tab or drop the file on the studio)`); return; }
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
  const cue = /^F([1-9]|1[0-2])$/.test(e.key) ? cueOfKey(e.key) : undefined;
  if (cue) { e.preventDefault(); fireCue(cue.id); return; }
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
  else if (e.key === "t" || e.key === "T") take();
  else if (e.key === "g" || e.key === "G") fireCue("next");
  else if (/^[1-9]$/.test(e.key)) switchView(Number(e.key) - 1);
  else if (e.key === "?") $("#help").showModal();
  else if (e.key === "Escape") editor.select([]);
}

function setup() {
  // (a redraw waits for a press held on the side panels to end: see afterPress)
  S.render = (opts) => afterPress("render", [$("#left"), $("#right")], () => renderAll(opts));
  editor = new Editor($("#overlay"), {
    sizes: S.schema.sizes,
    onFelt: () => S.schema.onFelt || {},
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
  $("#no-channel-new").addEventListener("click", newChannel);
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
  for (const b of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll("#transport [data-op]"))) b.addEventListener("click", () => control(b.dataset.op));
  $("#speed").addEventListener("change", (e) => control("speed", { speed: Number(e.target.value) }));
  $("#loop").addEventListener("change", (e) => control("loop", { value: e.target.checked }));
  $("#auto").addEventListener("change", (e) => control("auto", { value: e.target.checked }));
  $("#scrub").addEventListener("change", (e) => control("seek", { step: Number(e.target.value) }));
  seekBox($("#seek-to"));
  $("#line-air").addEventListener("click", airLine);
  $("#line-pick").addEventListener("change", renderTransport);
  document.addEventListener("keydown", onKey);
  setInterval(poll, 1000);
  G.listeners.push(followChannels);
  setupTables(); // games in, logger setup, the overview and the notices
}

start();
