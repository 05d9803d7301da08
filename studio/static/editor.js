// @ts-check
// The layout editor drawn over the preview: element boxes, selection, drag to move, a handle
// to scale, snapping (grid, safe-area edges, other elements' edges and centres) with the
// guide drawn, and the overlap / title-safe checks.  Positions are view pixels, as in View.

import { h, clear } from "./dom.js";

export const TITLE_SAFE = 0.9;
export const ACTION_SAFE = 0.93;
const SNAP_PX = 8; // screen pixels
const GRID = 10; // view pixels

/** Every placed thing of a view: its elements, then its broadcast extras (one id space). */
export function placed(v) {
  return v ? [...v.elements, ...(v.extras || [])] : [];
}

export class Editor {
  /**
   * host: { sizes, onFelt(), view(), outputSize(), commit(label, mutate(view)), selected(ids) }
   */
  constructor(el, host) {
    this.el = el;
    this.host = host;
    this.selection = new Set();
    this.guides = true;
    this.grid = false;
    this.drag = null;
    this.local = null; // element positions shown while dragging: id -> {x, y, scale}
    el.addEventListener("pointerdown", (e) => this.down(e));
    el.addEventListener("pointermove", (e) => this.move(e));
    el.addEventListener("pointerup", (e) => this.up(e));
    el.addEventListener("pointercancel", () => { this.drag = null; this.local = null; this.render(); });
    new ResizeObserver(() => this.render()).observe(el);
  }

  /** view px -> overlay px: scale k and offsets (the page fits the view into the output, centred). */
  geometry() {
    const v = this.host.view();
    const [W, H] = this.host.outputSize();
    const s = Math.min(W / v.width, H / v.height);
    const f = this.el.clientWidth / W;
    return { v, k: s * f, ox: ((W - v.width * s) / 2) * f, oy: ((H - v.height * s) / 2) * f };
  }

  size(type) {
    return this.host.sizes[type] || [200, 60];
  }

  rect(e) {
    const p = (this.local && this.local[e.id]) || e;
    const [w, hh] = this.size(e.type);
    return { id: e.id, type: e.type, x: p.x, y: p.y, w: w * p.scale, h: hh * p.scale };
  }

  /** Problems a producer should see: overlaps between visible elements, and leaving title-safe. */
  warnings() {
    const v = this.host.view();
    const out = [];
    const rs = placed(v).filter((e) => e.visible).map((e) => this.rect(e));
    const m = (1 - TITLE_SAFE) / 2;
    const safe = { x0: v.width * m, y0: v.height * m, x1: v.width * (1 - m), y1: v.height * (1 - m) };
    for (const r of rs) {
      if (r.x < safe.x0 - 0.5 || r.y < safe.y0 - 0.5 || r.x + r.w > safe.x1 + 0.5 || r.y + r.h > safe.y1 + 0.5)
        out.push({ ids: [r.id], text: `${r.id} leaves the title-safe area` });
    }
    // what is drawn on the felt by design (the banner, the trick callout) does not warn
    const felt = this.host.onFelt ? this.host.onFelt() : {};
    const byDesign = (a, b) => (felt[a.type] || []).includes(b.type) || (felt[b.type] || []).includes(a.type);
    for (let i = 0; i < rs.length; i++)
      for (let j = i + 1; j < rs.length; j++) {
        const a = rs[i], b = rs[j];
        if (byDesign(a, b)) continue;
        if (a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h)
          out.push({ ids: [a.id, b.id], text: `${a.id} overlaps ${b.id}` });
      }
    return out;
  }

  render(snaps = []) {
    const el = clear(this.el);
    const v = this.host.view();
    if (!v) return;
    const { k, ox, oy } = this.geometry();
    if (this.guides) {
      /** @type {[number, string][]} */
      const guides = [[TITLE_SAFE, "guide-safe"], [ACTION_SAFE, "guide-action"]];
      for (const [frac, cls] of guides) {
        const m = (1 - frac) / 2;
        const g = h("div", { class: cls });
        el.append(g);
        Object.assign(g.style, { left: `${ox + v.width * m * k}px`, top: `${oy + v.height * m * k}px`, width: `${v.width * frac * k}px`, height: `${v.height * frac * k}px` });
      }
    }
    const warned = new Set(this.warnings().flatMap((w) => w.ids));
    for (const e of placed(v)) {
      const r = this.rect(e);
      const box = h("div", {
        class: `box${this.selection.has(e.id) ? " selected" : ""}${e.visible ? "" : " hidden-el"}${warned.has(e.id) && !this.selection.has(e.id) ? " warn" : ""}`,
        title: e.id, dataset: { id: e.id },
      });
      Object.assign(box.style, { left: `${ox + r.x * k}px`, top: `${oy + r.y * k}px`, width: `${r.w * k}px`, height: `${r.h * k}px` });
      if (this.selection.size === 1 && this.selection.has(e.id)) box.append(h("div", { class: "handle", dataset: { handle: e.id } }));
      el.append(box);
    }
    for (const s of snaps) {
      const line = h("div", { class: `snap ${s.axis}` });
      if (s.axis === "v") line.style.left = `${ox + s.at * k}px`;
      else line.style.top = `${oy + s.at * k}px`;
      el.append(line);
    }
  }

  select(ids, { toggle = false } = {}) {
    if (!toggle) this.selection = new Set(ids);
    else for (const id of ids) this.selection.has(id) ? this.selection.delete(id) : this.selection.add(id);
    this.host.selected([...this.selection]);
    this.render();
  }

  toView(e) {
    const b = this.el.getBoundingClientRect();
    const { k, ox, oy } = this.geometry();
    return { x: (e.clientX - b.left - ox) / k, y: (e.clientY - b.top - oy) / k };
  }

  down(e) {
    if (e.button !== 0) return;
    this.el.focus();
    const handle = e.target.dataset && e.target.dataset.handle;
    const boxEl = e.target.closest && e.target.closest(".box");
    const p = this.toView(e);
    const v = this.host.view();
    if (handle) {
      const el = placed(v).find((x) => x.id === handle);
      this.drag = { mode: "scale", id: handle, start: p, el: { ...el }, moved: false };
    } else if (boxEl) {
      const id = boxEl.dataset.id;
      if (e.shiftKey || e.ctrlKey || e.metaKey) this.select([id], { toggle: true });
      else if (!this.selection.has(id)) this.select([id]);
      const start = {};
      for (const x of placed(v)) if (this.selection.has(x.id)) start[x.id] = { x: x.x, y: x.y, scale: x.scale };
      this.drag = { mode: "move", start: p, items: start, moved: false };
    } else {
      this.select([]);
      return;
    }
    this.el.setPointerCapture(e.pointerId);
    e.preventDefault();
  }

  move(e) {
    if (!this.drag) return;
    const p = this.toView(e);
    const d = this.drag;
    const dx = p.x - d.start.x, dy = p.y - d.start.y;
    if (!d.moved && Math.hypot(dx, dy) * this.geometry().k < 2) return;
    d.moved = true;
    if (d.mode === "scale") {
      const [w] = this.size(d.el.type);
      const width = Math.max(10, d.el.scale * w + dx);
      const scale = Math.min(10, Math.max(0.1, Math.round((width / w) * 100) / 100));
      this.local = { [d.id]: { x: d.el.x, y: d.el.y, scale } };
      this.render();
      return;
    }
    const snaps = [];
    const [cx, cy] = this.snap(d.items, dx, dy, snaps);
    this.local = {};
    for (const [id, s] of Object.entries(d.items)) this.local[id] = { x: Math.round(s.x + cx), y: Math.round(s.y + cy), scale: s.scale };
    this.render(snaps);
  }

  /** The move (dx, dy) corrected to snap the group's edges or centre to a target. */
  snap(items, dx, dy, snaps) {
    const v = this.host.view();
    const T = SNAP_PX / this.geometry().k;
    const ids = Object.keys(items);
    const rects = placed(v).filter((e) => ids.includes(e.id)).map((e) => {
      const [w, hh] = this.size(e.type);
      const s = items[e.id];
      return { x: s.x + dx, y: s.y + dy, w: w * s.scale, h: hh * s.scale };
    });
    if (!rects.length) return [dx, dy];
    const x0 = Math.min(...rects.map((r) => r.x)), x1 = Math.max(...rects.map((r) => r.x + r.w));
    const y0 = Math.min(...rects.map((r) => r.y)), y1 = Math.max(...rects.map((r) => r.y + r.h));
    const tx = [v.width / 2], ty = [v.height / 2];
    for (const frac of [TITLE_SAFE, ACTION_SAFE]) {
      const m = (1 - frac) / 2;
      tx.push(v.width * m, v.width * (1 - m));
      ty.push(v.height * m, v.height * (1 - m));
    }
    for (const e of placed(v)) {
      if (ids.includes(e.id) || !e.visible) continue;
      const r = this.rect(e);
      tx.push(r.x, r.x + r.w / 2, r.x + r.w);
      ty.push(r.y, r.y + r.h / 2, r.y + r.h);
    }
    const best = (cands, targets) => {
      let b = null;
      for (const c of cands) for (const t of targets) {
        const d = t - c;
        if (Math.abs(d) <= T && (!b || Math.abs(d) < Math.abs(b.d))) b = { d, at: t };
      }
      return b;
    };
    const bx = best([x0, (x0 + x1) / 2, x1], tx);
    const by = best([y0, (y0 + y1) / 2, y1], ty);
    if (bx) { dx += bx.d; snaps.push({ axis: "v", at: bx.at }); }
    else if (this.grid) dx += Math.round(x0 / GRID) * GRID - x0;
    if (by) { dy += by.d; snaps.push({ axis: "h", at: by.at }); }
    else if (this.grid) dy += Math.round(y0 / GRID) * GRID - y0;
    return [dx, dy];
  }

  up(e) {
    const d = this.drag;
    this.drag = null;
    if (!d || !d.moved || !this.local) { this.local = null; this.render(); return; }
    const local = this.local;
    this.host.commit(d.mode === "scale" ? "scale" : "move", (view) => {
      for (const el of placed(view)) if (local[el.id]) Object.assign(el, local[el.id]);
    }).finally(() => { this.local = null; this.render(); });
    this.render();
  }

  /** Arrow keys: move the selection by (dx, dy) view pixels as one edit. */
  nudge(dx, dy) {
    if (!this.selection.size) return;
    const sel = new Set(this.selection);
    this.host.commit("nudge", (view) => {
      for (const el of placed(view)) if (sel.has(el.id)) { el.x += dx; el.y += dy; }
    });
  }
}
