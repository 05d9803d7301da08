// @ts-check
// The studio's session: the signed-in API, the channel's settings as stored and as shown,
// and the edits.  Edits are RFC 7396 merge patches sent with the revision read; a stale one
// comes back 409 with the current document and is shown as a conflict.

import { h, clear, $, clone, diff, mergePatch } from "./dom.js";

/** @import { ChannelSettings, View } from "./settings.js" */
/** @import { Api } from "./api.js" */

/** @typedef {"program" | "preview" | "clean"} OutputName */
/** @type {OutputName[]} */
export const OUTPUTS = ["program", "preview", "clean"];

/**
 * A channel's settings as the studio shows them: the stored document without its revision.
 * @typedef {Omit<ChannelSettings, "revision">} Shown
 */
/**
 * The studio's schema (GET /studio/api/schema, studio/app.py): the models' JSON schemas the
 * forms are made from, the default views by output, element sizes and easing curves.
 * @typedef {object} StudioSchema
 * @property {JsonSchema} settings
 * @property {JsonSchema} view
 * @property {JsonSchema} element
 * @property {JsonSchema} theme
 * @property {JsonSchema} timing
 * @property {JsonSchema} match
 * @property {{ views: Record<string, View> }} defaults
 * @property {Record<string, number[]>} sizes each element type's box in view pixels
 * @property {Record<string, number[]>} easings each easing's curve, sampled
 * @property {string[]} transportOps
 * @property {Record<string, string[]>} onFelt element types drawn on another's box by design (no overlap warning)
 * @property {string[]} analysisTypes the analysis extras' types
 * @property {any[]} analysisDefaults the analysis extras a view draws while it places none (on 1920x1080)
 */
/** @typedef {Record<string, any>} JsonSchema a JSON schema (the forms walk it by its keywords) */
/** @typedef {{ patch: object, inverse: object, label: string }} UndoEntry one undoable edit */
/** @typedef {{ loc: (string | number)[], msg: string }} FieldError a model's message about a field */
/**
 * The session: the signed-in API, the open channel's settings as stored (doc) and as shown
 * (edits applied at once), the undo stacks.  info and timeline are the service's channel
 * status and step list (GET /api/channels/{id}, .../timeline), which have no model.
 * @typedef {object} Session
 * @property {Api | null} api
 * @property {StudioSchema | null} schema
 * @property {string | null} ch the open channel
 * @property {ChannelSettings | null} doc
 * @property {Shown | null} shown
 * @property {any} info
 * @property {any[]} timeline
 * @property {any[]} lines
 * @property {string | null} digest
 * @property {UndoEntry[]} undo
 * @property {UndoEntry[]} redo
 * @property {string} tab
 * @property {Promise<unknown>} chain edits are sent one after another
 * @property {number} pending
 * @property {string[]} selection element ids
 * @property {FieldError[]} errors
 * @property {(opts?: { keepForm?: boolean }) => void} render
 * @property {boolean} [renderQueued]
 * @property {() => void} [fit] fit the preview to its frame (set by the page)
 * @property {number} [openedAt] performance.now() when the open channel was opened
 */
/** @type {Session} */
export const S = {
  api: null, schema: null, ch: null, doc: null, shown: null, info: null, timeline: [], lines: [], digest: null,
  undo: [], redo: [], tab: "element", chain: Promise.resolve(), pending: 0, selection: [], errors: [],
  render: () => {},
};

export const enc = encodeURIComponent;
export const settingsUrl = () => `/api/channels/${enc(S.ch)}/settings`;
export const content = (doc) => { const c = clone(doc); delete c.revision; return c; };

/** Redraw everything (set by the page once its parts exist). */
export function renderAll(opts) { S.render(opts); }

export function defaultView(output) {
  return clone(S.schema.defaults.views[output] || S.schema.defaults.views.preview);
}

/** The preview output's view as shown (the default one when the output has none). */
export function previewView() {
  if (!S.shown) return null;
  return S.shown.outputs.preview.view || defaultView("preview");
}

export function ensureView(c, output = "preview") {
  if (!c.outputs[output].view) c.outputs[output].view = defaultView(output);
  return c.outputs[output].view;
}

/** One undoable edit: mutate a copy of the shown settings, show it at once, send the patch. */
export function edit(label, mutate) {
  if (!S.shown) return Promise.resolve();
  const before = clone(S.shown);
  const after = clone(S.shown);
  mutate(after);
  const patch = diff(before, after);
  if (!patch) return Promise.resolve();
  S.shown = after;
  // on the undo stack at once (a quick Ctrl+Z undoes it even before the answer); taken off
  // again if the server refuses the edit
  const entry = { patch, inverse: diff(after, before), label };
  S.undo.push(entry);
  S.redo = [];
  const sent = send(patch, { entry, stack: S.undo, label, mutate, before, after });
  // draw after the request is on its way: the preview page is what the producer watches
  queueRender();
  return sent;
}

export function queueRender() {
  if (S.renderQueued) return;
  S.renderQueued = true;
  requestAnimationFrame(() => { S.renderQueued = false; renderAll({ keepForm: true }); });
}

/** Send one patch after those before it; ``entry`` leaves ``stack`` if the patch is refused. */
export function send(patch, again) {
  const { entry, stack } = again;
  S.pending++;
  S.chain = S.chain.then(async () => {
    /** @type {any} an edit to replay on a document someone else changed in other fields */
    let merged = null;
    try {
      const doc = await S.api.patch(settingsUrl(), { ...patch, revision: S.doc.revision });
      adopt(doc);
      S.errors = [];
      if ($("#live-edits").checked && patch.outputs && patch.outputs.preview) await takeNow();
    } catch (err) {
      const i = entry && stack ? stack.indexOf(entry) : -1;
      if (i >= 0) stack.splice(i, 1);
      if (err.status === 409 && err.body.current && again.mutate && again.before && again.after
          && !touchesSame(changes(again.before, again.after), changes(content(S.doc), content(err.body.current)))) {
        // someone else (a Stream Deck key, another studio) saved other fields meanwhile: the
        // edit is merged field by field, replayed on their document, and nothing is asked
        S.doc = err.body.current;
        S.shown = content(err.body.current);
        merged = again;
      } else if (err.status === 409 && err.body.current) {
        showConflict(patch, err.body.current, again);
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
    if (merged) edit(merged.label, merged.mutate); // queued after this link of the chain, never awaited in it
  });
  return S.chain;
}

/** Whether two lists of changed fields (``changes`` paths) share a field: the same path, or
 * one inside the other. */
export function touchesSame(mine, theirs) {
  const inside = (a, b) => a.length <= b.length && a.every((k, i) => String(k) === String(b[i]));
  return mine.some(([p]) => theirs.some(([q]) => inside(p, q) || inside(q, p)));
}

export function adopt(doc) {
  S.doc = doc;
  if (!S.pending || S.pending === 1) S.shown = content(doc);
  hide("#notice");
}

export function undo() {
  const u = S.undo.pop();
  if (!u) return;
  S.redo.push(u);
  S.shown = mergePatch(S.shown, u.inverse);
  renderAll({ keepForm: false });
  send(u.inverse, { entry: u, stack: S.redo, label: `undo ${u.label}` });
}

export function redo() {
  const u = S.redo.pop();
  if (!u) return;
  S.undo.push(u);
  S.shown = mergePatch(S.shown, u.patch);
  renderAll({ keepForm: false });
  send(u.patch, { entry: u, stack: S.undo, label: u.label });
}

/** TAKE: the preview's layout goes on program and clean, after every edit sent before it,
 * by the transition chosen beside the button (cut, mix or wipe, and its seconds). */
export function take() {
  if (!S.ch) return S.chain;
  const style = /** @type {HTMLSelectElement} */ ($("#take-style")).value;
  const time = Number(/** @type {HTMLInputElement} */ ($("#take-time")).value);
  const q = style === "cut" || !(time > 0) ? `transition=${style}` : `transition=${style}&duration=${time}`;
  S.chain = S.chain.then(() => takeNow(q));
  return S.chain;
}

/** The transition TAKE offers first: the channel's own (its Timing settings). */
export function takeDefaults() {
  const t = S.doc && S.doc.timing && S.doc.timing.take;
  /** @type {HTMLSelectElement} */ ($("#take-style")).value = t ? t.style : "cut";
  /** @type {HTMLInputElement} */ ($("#take-time")).value = String(t ? t.run_time : 0.5);
}

/** @param {string} query the transition (a live edit always cuts) */
async function takeNow(query = "transition=cut") {
  try {
    adopt(await S.api.post(`/studio/api/channels/${enc(S.ch)}/take?${query}`));
  } catch (err) { notice(err.message); }
  renderAll();
}

/** Leaf-level changes from a to b (arrays compared item by item): [[path, old, new], ...]. */
export function changes(a, b, path = [], out = []) {
  const both = (x, y) => x !== null && y !== null && typeof x === "object" && typeof y === "object" && Array.isArray(x) === Array.isArray(y);
  if (both(a, b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) changes(a[k], b[k], [...path, k], out);
  } else if (JSON.stringify(a) !== JSON.stringify(b)) {
    out.push([path, a, b]);
  }
  return out;
}

export function valueAt(obj, path) {
  let o = obj;
  for (const k of path) { if (o === null || typeof o !== "object") return undefined; o = o[k]; }
  return o;
}

export function showConflict(patch, current, again) {
  hide("#notice");
  const box = clear($("#conflict"));
  box.hidden = false;
  const show = (v) => (v === undefined ? "(none)" : JSON.stringify(v));
  const mine = again.before && again.after ? changes(again.before, again.after) : changes({}, patch);
  // a field by the names a producer knows: "outputs.preview.view.elements.ew-score.y"
  const named = (path) => path.map((k, i) => {
    const at = /^\d+$/.test(String(k)) ? valueAt(current, path.slice(0, i + 1)) : null;
    return at && typeof at === "object" && typeof at.id === "string" ? at.id : k;
  }).join(".");
  const rows = mine.slice(0, 12).map(([path, , value]) =>
    h("tr", {}, h("td", {}, named(path)), h("td", {}, show(value)), h("td", {}, show(valueAt(current, path)))));
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
        else {
          if (again.entry && again.stack) again.stack.push(again.entry);
          S.shown = mergePatch(S.shown, patch);
          send(patch, again);
        }
      } }, "Keep mine"),
      h("button", { onclick: () => { S.doc = current; S.shown = content(current); hide("#conflict"); renderAll(); } }, "Take theirs")),
  );
}

export function hide(sel) { const el = $(sel); el.hidden = true; clear(el); }

export function notice(text, button) {
  const n = clear($("#notice"));
  n.hidden = false;
  n.append(h("span", {}, text));
  if (button) n.append(" ", button); // (append(null) would write "null")
}

export async function ask(text, value = "", { input = true } = {}) {
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
