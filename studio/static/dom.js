// @ts-check
// Small DOM helpers.  Every user-supplied string goes in as a text node or a property, never
// as markup: h() has no innerHTML path at all.

/** Build an element: h("button", {class: "x", onclick: f}, "text", child, ...). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k in el && typeof v !== "string") el[k] = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** Remove every child of el. */
export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

export const $ = (sel, root = document) => root.querySelector(sel);

/** "1 deal", "3 deals": a count and its noun. @param {number} n @param {string} one @param {string} [many] */
export const count = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** Deep copy of JSON data. */
export const clone = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

export function isObj(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

export function equal(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** RFC 7396 merge patch that turns a into b (undefined when equal).  Arrays are replaced whole. */
export function diff(a, b) {
  if (isObj(a) && isObj(b)) {
    const p = {};
    let any = false;
    for (const k of Object.keys(a)) if (!(k in b)) { p[k] = null; any = true; }
    for (const k of Object.keys(b)) {
      const d = diff(a[k], b[k]);
      if (d !== undefined) { p[k] = d; any = true; }
    }
    return any ? p : undefined;
  }
  return equal(a, b) ? undefined : clone(b);
}

/** Apply an RFC 7396 merge patch (the same rule the server applies). */
export function mergePatch(target, patch) {
  if (!isObj(patch)) return clone(patch);
  const out = isObj(target) ? clone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** True while the user types in a field inside `box`. */
export function typingIn(box) {
  const el = document.activeElement;
  return !!el && box.contains(el) && /^(INPUT|SELECT|TEXTAREA)$/.test(el.tagName);
}

/** Run `render` (which may rebuild `box`), keeping what the user is typing in a field of it:
 * the field found again by its id gets back its text, caret and focus.  An answer to one
 * action can arrive after the user has started on the next (a path typed just after Follow);
 * without this the rebuilt field would show its stored value over what they typed. */
export function keepingTyping(box, render) {
  const el = typingIn(box) ? /** @type {HTMLInputElement} */ (document.activeElement) : null;
  const kept = el && el.id ? { id: el.id, value: el.value, start: el.selectionStart, end: el.selectionEnd } : null;
  render();
  if (!kept) return;
  const again = /** @type {HTMLInputElement | null} */ (document.getElementById(kept.id));
  if (!again || again === el) return;
  again.value = kept.value;
  again.focus();
  if (again.tagName === "INPUT" && kept.start !== null && kept.end !== null) {
    try { again.setSelectionRange(kept.start, kept.end); } catch { /* a field without a caret */ }
  }
}

// A press on a button that a redraw replaces between its pointerdown and its pointerup is lost:
// the click goes to neither the old button (gone) nor the new one (never pressed).  The studio
// redraws its lists and panel on timers (a poll, the tables' refresh) and after every answer, so
// a producer's click could vanish now and then; those redraws wait for the press to end.
let pressed = /** @type {Element | null} */ (null);
/** @type {Map<string, () => void>} */
const waiting = new Map();
/** @type {ReturnType<typeof setTimeout> | null} */
let stuck = null;
/** a press longer than this (a lost pointerup) no longer holds the redraws back */
const HOLD_MS = 2000;

function release() {
  pressed = null;
  if (stuck !== null) { clearTimeout(stuck); stuck = null; }
  if (!waiting.size) return;
  const due = [...waiting.values()];
  waiting.clear();
  setTimeout(() => { for (const redraw of due) redraw(); }); // after the click the release brings
}

addEventListener("pointerdown", (e) => { pressed = e.target instanceof Element ? e.target : null; }, true);
addEventListener("pointerup", release, true);
addEventListener("pointercancel", release, true);
addEventListener("blur", (e) => { if (e.target === window) release(); });

/** Run `redraw` now or, while a press that began inside one of `boxes` is held, once it ends
 * (after its click).  Only the last redraw waiting under a `key` runs. */
export function afterPress(key, boxes, redraw) {
  if (!pressed || !boxes.some((b) => b && b.contains(pressed))) { redraw(); return; }
  waiting.set(key, redraw);
  if (stuck === null) stuck = setTimeout(release, HOLD_MS);
}
