// @ts-check
/* EuchrePlayer: draws a euchre-overlay scene (renderer/scene.py) on a <canvas> with Canvas2D.
 *
 * An ES module: the OBS page (overlay.js), the studio's previews (the OBS page in frames) and
 * the OGraf graphic (ograf/graphic.mjs) import it; it sets no globals.
 *
 * The op set, paints and easing names are data: renderer/ops.py's table, which the page loads
 * as ops.json (beside this file; {opsUrl} or {ops: table} to override).  The player builds its
 * dispatch from that table and refuses it (ready rejects, install throws) when it names an op,
 * paint or easing this file has no handler for, or this file handles one it does not name;
 * the skia executor (renderer/raster.py) does the same in Python.  The types (scene.d.ts beside
 * this file) are generated from the same table by scripts/gen_jstypes and checked by tsc in
 * tests/project/test_jstypes.py.  Plain ES2020, no build step, Chrome 127 (OBS).  Deterministic:
 * renderAt(t) depends only on the scene and t.
 *
 *   import { EuchrePlayer } from "/static/player.js";
 *   const player = new EuchrePlayer(canvas, {fontUrls: {bold: "/fonts/bold.ttf", ...}});
 *   await player.ready;                       // op table and fonts loaded (FontFace, family =
 *                                             // font key), but "cjk"
 *   await player.sceneReady;                  // after setScene: every font and image the scene
 *                                             // uses is loaded (images: {imageBase: "/media/"})
 *   player.setScene(sceneJsonOrText, startTimeSeconds);
 *   player.renderAt(t);                       // t = seconds since the scene's start
 *   player.renderNow(nowSeconds);             // = renderAt(now - startTime)
 *   player.isStill(t);                        // nothing moves from t on (no track changes)
 *   player.setLayer(layerScene, start);       // a scene drawn over the current one on a clock
 *   player.renderAt(t, layerT);               // of its own (the analysis layer): at layerT,
 *   player.layerIsStill(layerT);              // or at t - start when layerT is left out;
 *   player.setLayer(null);                    // setScene keeps it, setLayer(null) drops it
 *   player.setOnAir({scene, layer, layerStart}); // both at once (renderer/onair.py's OnAir)
 *
 * The module also exports the table's functions: install(table), loadTable(source), table(),
 * handled(), and the pure ones the tests compare with Python: sample, plan, ease.
 *
 * Static layers (renderer/layers.py's plan() for skia, same rules): top-level ["s"] ... ["r"]
 * groups that reference no track, are not moved or faded by a track before them and start
 * with global alpha 1, no shadow and no clip are drawn once into a "plane" and blitted from
 * it (one drawImage of the group's device bounds, shadow blur included) on later frames.
 * Planes are transparent canvases of the page's size, so a group is rasterised at its own
 * device position under the very same matrix: pixels equal drawing op by op but for one
 * 8-bit rounding of the group's composite (a group-sized canvas shifts coordinates and float
 * rounding then flips anti-aliased edges and glyph sub-pixel positions: up to 68/255).
 * Layers are keyed by content (the group's ops, the sprites it uses) and device matrix, so
 * the next step's scene reuses the panels that did not change.  The first draw of a new
 * scene blits what is cached and draws the rest op by op; the next draw caches the rest,
 * before blitting anything (Chromium copies a whole canvas written after it was drawn from).
 * new EuchrePlayer(canvas, {layers: false}) draws everything op by op.
 */

/** @import { Anim, Colour, DrawOpName, EasingName, Fit, FontKey, ImageId, MoveOpName, Op, OpName, OpTable, Ops, Paint, PaintArray, PaintName, Paints, Scene, SpriteId, Track } from "./scene.js" */

/**
 * What is on air over one step (renderer/onair.py's OnAir.to_json): the step's scene and its
 * analysis layer, whose clock starts at scene time layerStart.
 * @typedef {{ scene: Scene, layer?: Scene | null, layerStart?: number }} OnAirJson
 */
/**
 * A 2D affine matrix [a, b, c, d, e, f], as DOMMatrix and setTransform have it.
 * @typedef {[a: number, b: number, c: number, d: number, e: number, f: number]} Matrix
 */
/**
 * Bounds [x0, y0, x1, y1].
 * @typedef {[x0: number, y0: number, x1: number, y1: number]} Bounds
 */
/**
 * A device-pixel rect [x, y, w, h].
 * @typedef {[x: number, y: number, w: number, h: number]} Rect
 */
/** @typedef {CanvasRenderingContext2D | OffscreenCanvasRenderingContext2D} Context2D */
/** @typedef {HTMLCanvasElement | OffscreenCanvas} AnyCanvas */
/**
 * A shadow under fills: colour, blur, dx, dy (the sh op's fields).
 * @typedef {[colour: Colour, blur: number, dx: number, dy: number]} Shadow
 */
/**
 * What a save saves besides the context's own state: global alpha, shadow, clipped.
 * @typedef {[alpha: number, shadow: Shadow | null, clipped: boolean, layer?: OpenGroup]} Saved
 */
/**
 * A layer being drawn (the "ly" op): the context it composites onto at its restore, at alpha.
 * @typedef {{ parent: Context2D, ctx: Context2D, alpha: number, plus: boolean }} OpenGroup
 */
/**
 * Grow the bounds being computed by a box in user space (under `matrix`, default the
 * current one); withShadow: the current shadow widens it.
 * @callback AddBox
 * @param {number} x0
 * @param {number} y0
 * @param {number} x1
 * @param {number} y1
 * @param {boolean} withShadow
 * @param {Matrix} [matrix]
 * @returns {void}
 */
/**
 * The handlers of one op (N): run draws it; a move op gives its matrix, a draw op its box.
 * Written as methods, so a handler of one op stands for the dispatch of any op (the table
 * dispatches by the op's name: the op a handler gets is always its own).
 * @template {Op} O
 * @typedef {{
 *   run(pl: EuchrePlayer, op: O, inSprite: boolean): void;
 *   matrix?(pl: EuchrePlayer, m: Matrix, op: O): Matrix;
 *   box?(pl: EuchrePlayer, op: O, add: AddBox, m: Matrix): void;
 * }} Handler
 */
/** @typedef {Handler<Op>} AnyHandler */
/**
 * Every op's handlers: a move op must give matrix(), a draw op box() (install checks the
 * table's categories at run time too).
 * @typedef {{ [N in OpName]: N extends MoveOpName ? Handler<Ops[N]> & Required<Pick<Handler<Ops[N]>, "matrix">>
 *   : N extends DrawOpName ? Handler<Ops[N]> & Required<Pick<Handler<Ops[N]>, "box">> : Handler<Ops[N]> }} OpHandlers
 */
/**
 * Cacheable groups of an op list: the index of a group's ["s"] -> [index after its ["r"],
 * content key]; defText: the JSON of the sprites the groups use.
 * @typedef {Map<number, [end: number, key: string]> & { defText: Map<SpriteId, string> }} Plan
 */
/**
 * A plan with each content key replaced by a small id (EuchrePlayer's cache keys).
 * @typedef {Map<number, [end: number, id: number]> & { defText: Map<SpriteId, string> }} IdPlan
 */
/**
 * A page-sized canvas holding cached groups.
 * @typedef {{ canvas: AnyCanvas, ctx: Context2D, entries: Set<PlaneEntry> }} Plane
 */
/** @typedef {{ id: number, mk: string, plane: Plane, box: Rect }} PlaneEntry a group drawn in a plane */
/** @typedef {{ id: number, plane: null, box: null }} EmptyEntry a group that draws nothing on the page */
/** @typedef {{ id: number, mk: string, direct: true }} DirectEntry a group no plane had room for */
/** @typedef {PlaneEntry | EmptyEntry | DirectEntry} LayerEntry */
/**
 * @typedef {object} PlayerOptions
 * @property {Record<FontKey, string>} [fontUrls] font file URLs by key
 * @property {string} [imageBase] where images are loaded from: imageBase + id (default "/media/")
 * @property {boolean} [layers] false: no static-layer cache, everything op by op
 * @property {number} [maxLayerPlanes] at most this many page-sized planes (default 4)
 * @property {number} [maxLayerBytes] and at most this many bytes of them (default 96 MiB)
 * @property {OpTable} [ops] the op table itself (instead of loading ops.json)
 * @property {string} [opsUrl] where to load the op table from (default: ops.json beside this file)
 * @property {number} [scale] canvas pixels per scene pixel (default 1; see setScale)
 */

/** The 2d context of a page or offscreen canvas (each one's getContext("2d") gives its own
 * kind; TypeScript cannot pick the overload on the union).
 * @param {AnyCanvas} canvas @returns {Context2D | null} */
const context2d = (canvas) => /** @type {Context2D | null} */ (canvas.getContext("2d"));

/** @param {Matrix} m @returns {Matrix} */
const copyMatrix = (m) => [m[0], m[1], m[2], m[3], m[4], m[5]];

// Easing formulas by name (renderer/easing.py has the same ones; a browser test compares
// them on a grid of progress values).  The names in use are those of ops.json.
/** @type {{ [N in EasingName]: (p: number) => number }} */
const EASE = {
  linear: (p) => p,
  step: (p) => (p >= 1 ? 1 : 0),
  in: (p) => p * p * p,
  out: (p) => { const q = 1 - p; return 1 - q * q * q; },
  inout: (p) => {
    if (p < 0.5) return 4 * p * p * p;
    const q = -2 * p + 2;
    return 1 - q * q * q / 2;
  },
  back: (p) => {
    const c1 = 1.70158, c3 = c1 + 1, q = p - 1;
    return 1 + c3 * q * q * q + c1 * q * q;
  },
};

/**
 * Makes the canvas paint of a paint array.
 * @callback PaintMaker
 * @param {Context2D} c
 * @param {PaintArray} spec
 * @returns {CanvasGradient}
 */

// Paints other than a colour, by name: [name, ...fields] -> a CanvasGradient/pattern.
/** @type {{ [N in PaintName]: (c: Context2D, spec: Paints[N]) => CanvasGradient }} */
const PAINT = {
  lin: (c, spec) => {
    const g = c.createLinearGradient(spec[1], spec[2], spec[3], spec[4]);
    for (const [stop, colour] of spec[5]) g.addColorStop(stop, colour);
    return g;
  },
};

/* One entry per op of ops.json.  run(player, op, inSprite) draws it; move ops also give
 * matrix(player, m, op) -> m and draw ops box(player, op, add) (the device bounds the layer
 * cache needs: add(x0, y0, x1, y1, withShadow[, matrix])). */
/** @type {OpHandlers} */
const OPS = {
  s: {
    run(pl) { pl.ctx.save(); pl.stack.push([pl.alpha, pl.shadow, pl.clipped]); },
  },
  r: {
    run(pl) {
      const saved = pl.stack.pop();
      if (saved === undefined) throw new Error("restore without a save");
      const layer = saved[3];
      if (layer) pl._endGroup(layer);
      else pl.ctx.restore();
      [pl.alpha, pl.shadow, pl.clipped] = saved;
      pl.ctx.globalAlpha = pl.alpha;
    },
  },
  ly: {
    run(pl, op) {
      if (pl.preparing) { // only the state matters while the cache is filled
        pl.ctx.save();
        pl.stack.push([pl.alpha, pl.shadow, pl.clipped]);
        return;
      }
      const a = Math.min(1, Math.max(0, pl._num(op[1])));
      pl.stack.push([pl.alpha, pl.shadow, pl.clipped, pl._beginGroup(a * pl.alpha, op[2] === "plus")]);
      pl.alpha = 1;
      pl.shadow = null;
      pl.clipped = false; // the layer's own canvas has no clip (the parent's applies when it lands)
      pl.ctx.globalAlpha = 1;
    },
  },
  tr: {
    run(pl, op) { pl.ctx.translate(pl._num(op[1]), pl._num(op[2])); },
    matrix(pl, m, op) {
      const x = pl._num(op[1]), y = pl._num(op[2]);
      m[4] += m[0] * x + m[2] * y;
      m[5] += m[1] * x + m[3] * y;
      return m;
    },
  },
  sc: {
    run(pl, op) { pl.ctx.scale(pl._num(op[1]), pl._num(op[2])); },
    matrix(pl, m, op) {
      const sx = pl._num(op[1]), sy = pl._num(op[2]);
      m[0] *= sx; m[1] *= sx; m[2] *= sy; m[3] *= sy;
      return m;
    },
  },
  ro: {
    run(pl, op) { pl.ctx.rotate(pl._num(op[1])); },
    matrix(pl, m, op) {
      const a = pl._num(op[1]), cs = Math.cos(a), sn = Math.sin(a);
      return [m[0] * cs + m[2] * sn, m[1] * cs + m[3] * sn, m[2] * cs - m[0] * sn, m[3] * cs - m[1] * sn, m[4], m[5]];
    },
  },
  a: {
    run(pl, op) { pl.alpha *= Math.min(1, Math.max(0, pl._num(op[1]))); pl.ctx.globalAlpha = pl.alpha; },
    matrix(pl, m) { return m; },
  },
  sh: {
    run(pl, op, inSprite) { pl.shadow = inSprite ? null : [op[1], op[2], op[3], op[4]]; },
  },
  cl: {
    run(pl, op) {
      const c = pl.ctx;
      const [, x, y, w, h, r0] = op;
      c.beginPath();
      c.roundRect(x, y, w, h, Math.min(r0, w / 2, h / 2));
      c.clip();
      pl.clipped = true;
    },
  },
  rr: {
    run(pl, op) {
      if (pl.alpha <= 0) return;
      const c = pl.ctx;
      const [, x, y, w, h, r0, fill, stroke, lw] = op;
      const r = Math.min(r0, w / 2, h / 2);
      c.beginPath();
      c.roundRect(x, y, w, h, r);
      pl._fill(fill, () => c.fill());
      if (stroke !== null && lw) { c.strokeStyle = pl._paint(stroke); c.lineWidth = lw; c.stroke(); }
    },
    box(pl, op, add) {
      const [, x, y, w, h, , fill, , lw] = op;
      const o = (lw || 0) / 2;
      add(x - o, y - o, x + w + o, y + h + o, fill !== null);
    },
  },
  p: {
    run(pl, op) {
      if (pl.alpha <= 0) return;
      const c = pl.ctx;
      const path = pl._path(op[1]);
      pl._fill(op[2], () => c.fill(path));
      const stroke = op[3];
      if (stroke !== null && op[4]) { c.strokeStyle = pl._paint(stroke); c.lineWidth = op[4]; c.stroke(path); }
    },
    box(pl, op, add) {
      const b = pathBox(op[1]), o = (op[4] || 0) / 2;
      if (b[2] >= b[0]) add(b[0] - o, b[1] - o, b[2] + o, b[3] + o, op[2] !== null);
    },
  },
  t: {
    run(pl, op) {
      if (pl.alpha <= 0) return;
      const c = pl.ctx;
      const [, font, size, x, y, text, fill, ls] = op;
      // characters the font lacks come from the pinned fallback (renderer/fonts.py)
      c.font = size + 'px "' + font + '", "cjk"';
      c.letterSpacing = (ls || 0) + "px";
      c.fillStyle = pl._paint(fill);
      c.fillText(text, x, y);
    },
    box(pl, op, add) {
      const [, font, size, x, y, text, , ls] = op;
      const tk = font + "|" + size + "|" + ls + "|" + text;
      let tb = textBoxes.get(tk);
      if (!tb) {
        const c = pl.ctx;
        c.font = size + 'px "' + font + '", "cjk"';
        c.letterSpacing = (ls || 0) + "px";
        const mt = c.measureText(text);
        const pad = size * 0.25 + 2;
        tb = [
          -Math.max(mt.actualBoundingBoxLeft || 0, 0) - pad,
          -Math.max(mt.actualBoundingBoxAscent || 0, size) - pad,
          Math.max(mt.actualBoundingBoxRight || 0, mt.width) + Math.abs(ls || 0) + pad,
          Math.max(mt.actualBoundingBoxDescent || 0, size * 0.3) + pad,
        ];
        if (textBoxes.size > 4096) textBoxes.clear();
        textBoxes.set(tk, tb);
      }
      add(x + tb[0], y + tb[1], x + tb[2], y + tb[3], false);
    },
  },
  sp: {
    run(pl, op) {
      if (pl.alpha <= 0) return;
      const c = pl.ctx;
      const [, id, x, y, sc] = op;
      /** @type {Saved} */
      const saved = [pl.alpha, pl.shadow, pl.clipped];
      c.save();
      c.translate(x, y);
      if (sc !== 1) c.scale(sc, sc);
      pl.shadow = null;
      pl.stack.push(saved);
      pl._run(pl._sprite(id), true, null, 0);
      pl.stack.pop();
      c.restore();
      [pl.alpha, pl.shadow, pl.clipped] = saved;
      c.globalAlpha = pl.alpha;
    },
    box(pl, op, add, m) {
      const [, id, x, y, sc] = op;
      const def = pl._sprite(id);
      const dk = pl.plan && pl.plan.defText.get(id);
      let sb = dk ? spriteBoxes.get(dk) : undefined;
      if (!sb) {
        sb = [Infinity, Infinity, -Infinity, -Infinity];
        pl._bounds(def, 0, def.length, [1, 0, 0, 1, 0, 0], sb, true);
        if (dk) {
          if (spriteBoxes.size > 1024) spriteBoxes.clear();
          spriteBoxes.set(dk, sb);
        }
      }
      if (sb[2] >= sb[0]) {
        const sm = copyMatrix(m);
        sm[4] += sm[0] * x + sm[2] * y;
        sm[5] += sm[1] * x + sm[3] * y;
        sm[0] *= sc; sm[1] *= sc; sm[2] *= sc; sm[3] *= sc;
        add(sb[0], sb[1], sb[2], sb[3], false, sm);
      }
    },
  },
  im: {
    run(pl, op) {
      if (pl.alpha <= 0) return;
      const img = pl.images.get(op[1]);
      if (!img) return; // not loaded (yet): nothing; the page redraws when it arrives
      const [, , x, y, w, h, fit] = op;
      const r = fitRect(img.naturalWidth, img.naturalHeight, x, y, w, h, fit);
      if (r[6] <= 0 || r[7] <= 0) return;
      pl.ctx.drawImage(img, r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]);
    },
    box(pl, op, add) {
      const [, , x, y, w, h] = op;
      add(x, y, x + w, y + h, false);
    },
  },
};

/* Source and destination rects [sx, sy, sw, sh, dx, dy, dw, dh] of an iw x ih image fitted
 * into the box x, y, w, h: renderer/ops.py fit_rect, the same arithmetic. */
/**
 * @param {number} iw @param {number} ih @param {number} x @param {number} y
 * @param {number} w @param {number} h @param {Fit} fit
 * @returns {[sx: number, sy: number, sw: number, sh: number, dx: number, dy: number, dw: number, dh: number]}
 */
function fitRect(iw, ih, x, y, w, h, fit) {
  if (iw <= 0 || ih <= 0 || w <= 0 || h <= 0) return [0, 0, 0, 0, x, y, 0, 0];
  if (fit === "cover") {
    const k = Math.max(w / iw, h / ih);
    const sw = w / k, sh = h / k;
    return [(iw - sw) / 2, (ih - sh) / 2, sw, sh, x, y, w, h];
  }
  const k = Math.min(w / iw, h / ih);
  const dw = iw * k, dh = ih * k;
  return [0, 0, iw, ih, x + (w - dw) / 2, y + (h - dh) / 2, dw, dh];
}

// ---- the table (ops.json), installed once per page ----
/** @type {OpTable | null} */
let TABLE = null;
/** @type {Record<string, AnyHandler["run"]>} op name -> run handler */
let RUN = {};
/** @type {Record<string, NonNullable<AnyHandler["box"]>>} op names of category "draw" -> box handler */
let DRAW = {};
/** @type {Record<string, NonNullable<AnyHandler["matrix"]>>} op names of category "move" (a track here makes what follows animated) */
let MOVE = {};
/** @type {Record<string, number[]>} op name -> positions of its "anim" fields */
let ANIM = {};
/** @type {Record<string, (p: number) => number>} easing name -> formula */
let EASE_RUN = {};
/** @type {Record<string, PaintMaker>} paint name -> maker */
let PAINT_RUN = {};
/** @type {Promise<OpTable> | null} */
let tableLoad = null;
/** The handlers by any name (the table's names are checked against them at run time). */
/** @type {Record<string, AnyHandler | undefined>} */
const HANDLERS = OPS;
/** @type {Record<string, (p: number) => number>} */
const EASES = EASE;
/** @type {Record<string, PaintMaker>} */
const PAINTS = PAINT;

/** @param {string} kind @param {string[]} listed @param {string[]} handled */
function differ(kind, listed, handled) {
  const lacks = listed.filter((n) => !handled.includes(n));
  const extra = handled.filter((n) => !listed.includes(n));
  if (lacks.length || extra.length) {
    return "player.js does not follow the " + kind + " table of ops.json: lacks [" + lacks.join(", ") + "], has unlisted [" + extra.join(", ") + "]";
  }
  return null;
}

/** Build the dispatch from a table (ops.json's data).  Throws, changing nothing, when the
 * table and this file's handlers differ.
 * @param {OpTable} table
 * @returns {OpTable}
 */
export function install(table) {
  const names = table.ops.map((o) => o.name);
  const problems = [
    differ("op", names, Object.keys(OPS)),
    differ("paint", table.paints.map((p) => p.name), Object.keys(PAINT)),
    differ("easing", table.easings.map((e) => e.name), Object.keys(EASE)),
  ].filter((p) => p !== null);
  for (const o of table.ops) {
    const h = HANDLERS[o.name];
    if (!h) continue;
    if (o.category === "draw" && !h.box) problems.push("player.js: draw op " + o.name + " has no box()");
    if (o.category === "move" && !h.matrix) problems.push("player.js: move op " + o.name + " has no matrix()");
  }
  if (problems.length) throw new Error(problems.join("; "));
  /** @type {typeof RUN} */ const run = {};
  /** @type {typeof DRAW} */ const draw = {};
  /** @type {typeof MOVE} */ const move = {};
  /** @type {typeof ANIM} */ const anim = {};
  /** @type {typeof EASE_RUN} */ const ease = {};
  /** @type {typeof PAINT_RUN} */ const paint = {};
  for (const o of table.ops) {
    const h = /** @type {AnyHandler} */ (HANDLERS[o.name]); // every name has one (checked above)
    run[o.name] = h.run;
    if (o.category === "draw" && h.box) draw[o.name] = h.box;
    if (o.category === "move" && h.matrix) move[o.name] = h.matrix;
    /** @type {number[]} */
    const at = [];
    anim[o.name] = at;
    o.fields.forEach((f, k) => { if (f[1] === "anim") at.push(k + 1); });
  }
  for (const e of table.easings) ease[e.name] = EASES[e.name];
  for (const p of table.paints) paint[p.name] = PAINTS[p.name];
  [TABLE, RUN, DRAW, MOVE, ANIM, EASE_RUN, PAINT_RUN] = [table, run, draw, move, anim, ease, paint];
  return table;
}

/** The table from `source`: an object (installed at once) or a URL (default: ops.json beside
 * this module).  Loaded once per page.
 * @param {OpTable | string} [source]
 * @returns {Promise<OpTable>}
 */
export function loadTable(source) {
  if (source && typeof source === "object") return Promise.resolve(install(source));
  if (TABLE) return Promise.resolve(TABLE);
  if (!tableLoad) {
    const url = source || new URL("ops.json", import.meta.url).href;
    const load = fetch(url)
      .then((r) => {
        if (!r.ok) throw new Error("cannot load the op table " + url + ": HTTP " + r.status);
        return r.json();
      })
      .then(install);
    load.catch(() => { tableLoad = null; }); // a later player may try again
    tableLoad = load;
  }
  return tableLoad;
}

/** The installed table (null until it is loaded). */
export function table() { return TABLE; }

/** Names this file has handlers for (tests compare them with ops.json). */
export function handled() {
  return { ops: Object.keys(OPS), paints: Object.keys(PAINT), easings: Object.keys(EASE) };
}

function needTable() {
  if (!TABLE) throw new Error("EuchrePlayer: the op table (ops.json) is not loaded yet; await player.ready");
}

/** The easing `name` at progress p (clamped to 0..1).
 * @param {string} name @param {number} p @returns {number} */
export function ease(name, p) {
  if (p <= 0) return 0;
  if (p >= 1) return 1;
  return EASE_RUN[name](p);
}

/** @param {Op} op @returns {boolean} whether one of its "anim" fields is a track */
function animated(op) {
  const at = ANIM[op[0]];
  if (at === undefined) throw new Error("unknown scene op " + op[0]);
  for (let i = 0; i < at.length; i++) {
    const v = op[at[i]];
    if (v !== null && typeof v === "object") return true;
  }
  return false;
}

/* Cacheable groups of an op list (renderer/layers.py plan(), same rules): Map from the
 * index of a group's ["s"] to [index after its ["r"], content key].  Only outermost. */
/**
 * @param {Op[]} ops @param {Record<SpriteId, Op[]>} defs @param {number} minDraws
 * @returns {Plan}
 */
export function plan(ops, defs, minDraws) {
  needTable();
  /** @type {Map<number, [end: number, key: string]>} */
  const groups = new Map();
  /** @type {[start: number, entryStatic: boolean, anim: boolean, draws: number, sprites: Set<SpriteId>, shadow: boolean][]} */
  const stack = [];
  /** @type {boolean[]} */
  const dynStack = [];
  let levelDyn = false;
  /** @type {Map<SpriteId, string>} */
  const defText = new Map();
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i], name = op[0];
    if (name === "s" || name === "ly") {
      // a layer is never cached, nor is a group holding one (its opacity is drawn at run time)
      if (name === "ly" && stack.length) stack[stack.length - 1][2] = true;
      stack.push([i, !levelDyn && name === "s", name === "ly", 0, new Set(), false]);
      dynStack.push(levelDyn);
      continue;
    }
    if (name === "r") {
      const top = stack.pop();
      if (top === undefined) continue;
      const [start, entryStatic, anim, draws, sprites, shadow] = top;
      levelDyn = /** @type {boolean} */ (dynStack.pop());
      if (stack.length) {
        const parent = stack[stack.length - 1];
        parent[2] = parent[2] || anim;
        parent[3] += draws;
        for (const sid of sprites) parent[4].add(sid);
        parent[5] = parent[5] || shadow;
      }
      if (entryStatic && !anim && (draws >= minDraws || (shadow && draws))) {
        for (const k of Array.from(groups.keys())) if (k > start && k < i) groups.delete(k);
        let key = JSON.stringify(ops.slice(start, i + 1));
        for (const sid of Array.from(sprites).sort()) {
          if (!defText.has(sid)) defText.set(sid, JSON.stringify(defs[sid]));
          key += "|" + sid + "=" + defText.get(sid);
        }
        groups.set(start, [i + 1, key]);
      }
      continue;
    }
    const anim = animated(op);
    if (MOVE[name] && anim) levelDyn = true;
    if (stack.length) {
      const top = stack[stack.length - 1];
      top[2] = top[2] || anim;
      if (DRAW[name]) top[3] += 1;
      if (op[0] === "sp") top[4].add(op[1]);
      else if (name === "sh") top[5] = true;
    }
  }
  // with the JSON of the sprites the groups use (keys of sprite bounds)
  return Object.assign(groups, { defText: defText });
}

const PATH_NUM = /-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?/g;
/** @type {Map<string, Bounds>} */
const pathBoxes = new Map();
/** @type {Map<string, Bounds>} font|size|ls|text -> [left, top, right, bottom] around (x, y) */
const textBoxes = new Map();
/** @type {Map<string, Bounds>} sprite JSON -> [x0, y0, x1, y1] in sprite space */
const spriteBoxes = new Map();

/** [x0, y0, x1, y1] of a path's points (control points bound the curves).
 * @param {string} d @returns {Bounds} */
function pathBox(d) {
  let b = pathBoxes.get(d);
  if (!b) {
    const n = (d.match(PATH_NUM) || []).map(Number);
    b = [Infinity, Infinity, -Infinity, -Infinity];
    for (let i = 0; i + 1 < n.length; i += 2) {
      if (n[i] < b[0]) b[0] = n[i];
      if (n[i] > b[2]) b[2] = n[i];
      if (n[i + 1] < b[1]) b[1] = n[i + 1];
      if (n[i + 1] > b[3]) b[3] = n[i + 1];
    }
    if (pathBoxes.size > 4096) pathBoxes.clear();
    pathBoxes.set(d, b);
  }
  return b;
}

/** The value of `track` at scene time t (renderer/scene.py sample, the same arithmetic).
 * @param {Track} track @param {number} t @returns {number} */
export function sample(track, t) {
  let prev = track[0];
  if (t <= prev[0]) return prev[1];
  for (let i = 1; i < track.length; i++) {
    const key = track[i];
    if (t < key[0]) {
      const span = key[0] - prev[0];
      const p = span > 0 ? (t - prev[0]) / span : 1;
      const a = prev[1];
      return a + (key[1] - a) * ease(key.length > 2 ? /** @type {EasingName} */ (key[2]) : "linear", p);
    }
    prev = key;
  }
  return prev[1];
}

export class EuchrePlayer {
  /**
   * @param {AnyCanvas} canvas
   * @param {PlayerOptions} [options]
   */
  constructor(canvas, options) {
    const opts = options || {};
    this.canvas = canvas;
    const ctx = context2d(canvas);
    if (!ctx) throw new Error("EuchrePlayer: the canvas has no 2d context");
    /** @type {Context2D} the context drawn on (a plane's while a group is cached, a layer's inside "ly") */
    this.ctx = ctx;
    /** @type {Context2D} the page canvas's own context */
    this.pageCtx = ctx;
    /** @type {Context2D[]} page-sized contexts of "ly" layers, one per nesting depth */
    this.groupCtxs = [];
    this.groupDepth = 0;
    this.preparing = false; // _prepare walks the ops: layers are plain saves then
    /** @type {Scene | null} */
    this.scene = null;
    this.startTime = 0;
    /** @type {Map<string, Path2D>} */
    this.paths = new Map();
    this.urls = opts.fontUrls || {};
    // images by content id (the scene's "images"), loaded from imageBase + id
    this.imageBase = opts.imageBase || "/media/";
    /** @type {Map<ImageId, HTMLImageElement>} id -> decoded image */
    this.images = new Map();
    /** @type {Map<ImageId, Promise<boolean>>} id -> settles when loaded (true) or failed */
    this.imageLoads = new Map();
    /** @type {Record<FontKey, Promise<FontFace>>} */
    this.faces = {};
    this.lastT = 0;
    /** @type {number | undefined} */
    this.lastLayerT = undefined;
    /** @type {IdPlan | null} */
    this.plan = null;
    this.layersOn = opts.layers !== false;
    /** @type {Map<string, LayerEntry>} "content id|device matrix" -> entry */
    this.layers = new Map();
    /** @type {Plane[]} page-sized canvases holding cached groups */
    this.planes = [];
    /** @type {Set<number>} content ids of the current scene's groups */
    this.planIds = new Set();
    /** @type {DirectEntry[]} groups no plane had room for: drawn op by op in this scene */
    this.directs = [];
    this.prepared = false; // every static group of the scene is in the cache
    this.fresh = false; // no frame of the current scene drawn yet
    this.layerStats = { hits: 0, misses: 0 }; // layer draws from / into the cache
    // planes are page-sized: at most 4, and at most maxLayerBytes of them (4 at 1080p, 2 at 4K)
    this.maxLayerPlanes = opts.maxLayerPlanes || 4;
    this.maxLayerBytes = opts.maxLayerBytes || 96 * (1 << 20);
    /** canvas pixels per scene pixel: 1 draws the scene at its own size (every output); a
     * frame shown smaller (the studio's monitors) draws at the size it is shown (setScale) */
    this.k = opts.scale && opts.scale > 0 ? opts.scale : 1;
    /** @type {Map<string, number>} group content key -> small id (never reused) */
    this.contentIds = new Map();
    this.nextContentId = 1;
    // the drawing state besides the context's: global alpha, shadow, clip, saves
    this.alpha = 1;
    /** @type {Shadow | null} */
    this.shadow = null;
    this.clipped = false;
    /** @type {Saved[]} */
    this.stack = [];
    this.t = 0; // the time being drawn
    this.stillAt = 0; // the scene is still from this time on
    /** @type {Scene | null} the analysis layer: a scene drawn over this.scene (setLayer) */
    this.layer = null;
    this.layerStart = 0;
    this.layerStill = 0;
    // The op table first (nothing draws without it), then the fonts.  The pinned fallback
    // for scripts Barlow lacks ("cjk") is large: it loads only when a scene uses it; every
    // other font loads at once.
    const table = loadTable(opts.ops || opts.opsUrl).then(() => {
      if (this.scene) this.renderAt(this.lastT, this.lastLayerT); // a frame asked for before the table came
    });
    /** @type {Promise<unknown>[]} */
    const loads = [table];
    /** @type {Promise<unknown>} the op table and the fonts (but "cjk") are loaded */
    this.ready = Promise.all(loads.concat(Object.keys(this.urls).filter((k) => k !== "cjk").map((k) => this._load(k))));
    /** @type {Promise<unknown>} the table and every font and image of the current scene are loaded */
    this.sceneReady = this.ready;
  }

  /** Draw at `k` canvas pixels per scene pixel from the next frame on (the canvas is
   * resized, the layer cache dropped); the scene's coordinates, text and shadows scale with it.
   * @param {number} k */
  setScale(k) {
    if (!(k > 0) || k === this.k) return;
    this.k = k;
    if (this.scene) this._size();
  }

  /* The canvas at the scene's size times the scale; the cached planes go with the old size. */
  _size() {
    const s = this.scene;
    if (!s) return;
    const w = Math.max(1, Math.round(s.w * this.k)), h = Math.max(1, Math.round(s.h * this.k));
    if (this.canvas.width !== w) this.canvas.width = w;
    if (this.canvas.height !== h) this.canvas.height = h;
    const planes = this.planes;
    if (planes.length && (planes[0].canvas.width !== w || planes[0].canvas.height !== h)) this.clearLayers();
  }

  /** @param {FontKey} key @returns {Promise<FontFace>} */
  _load(key) {
    if (!this.faces[key]) {
      const face = new FontFace(key, "url(" + JSON.stringify(this.urls[key]) + ")");
      this.faces[key] = face.load().then((f) => {
        document.fonts.add(f);
        this.clearLayers(); // layers drawn before the font arrived show the fallback
        return f;
      });
    }
    return this.faces[key];
  }

  /** @param {ImageId} id @returns {Promise<boolean>} */
  _loadImage(id) {
    let p = this.imageLoads.get(id);
    if (!p) {
      const img = new Image();
      img.src = this.imageBase + encodeURIComponent(id);
      p = img.decode().then(
        () => {
          this.images.set(id, img);
          this.clearLayers(); // layers drawn before it arrived lack it
          return true;
        },
        () => {
          this.imageLoads.delete(id); // a later scene may try again
          return false;
        },
      );
      this.imageLoads.set(id, p);
    }
    return p;
  }

  /** Show `scene` (its JSON data or text) from now on; sceneStartTime: for renderNow.
   * @param {Scene | string} scene @param {number} [sceneStartTime] */
  setScene(scene, sceneStartTime) {
    /** @type {Scene} */
    const s = typeof scene === "string" ? JSON.parse(scene) : scene;
    this.scene = s;
    this.startTime = sceneStartTime || 0;
    this._size();
    this.plan = null; // made on the first draw
    this.prepared = false;
    this.fresh = true;
    for (const d of this.directs) this.layers.delete(d.mk);
    this.directs = [];
    let still = 0;
    for (const track of s.tracks || []) still = Math.max(still, track[track.length - 1][0]);
    this.stillAt = Math.min(still, s.dur || 0);
    const keys = (s.fonts || []).filter((k) => this.urls[k]);
    const fresh = keys.filter((k) => !this.faces[k]);
    // the scene's "images", and any im op's image (a scene written by hand may omit the list)
    const wanted = new Set(s.images || []);
    for (const op of s.ops) if (op[0] === "im") wanted.add(op[1]);
    const imgs = Array.from(wanted).filter((id) => !this.images.has(id));
    /** Resolves once the op table, every font and every image of the current scene are
     * loaded (or an image failed: it then draws nothing), for deterministic capture. */
    this.sceneReady = Promise.all([this.ready].concat(keys.map((k) => this._load(k)), imgs.map((id) => this._loadImage(id))));
    if (fresh.length || imgs.length) {
      const shown = this.scene;
      // the last frame again, the layer at its own time (not restarted: its fades would vanish)
      this.sceneReady.then(() => { if (this.scene === shown) this.renderAt(this.lastT, this.lastLayerT); });
    }
  }

  /** True once the scene has stopped moving at time t: every track is at its last value.
   * @param {number} t */
  isStill(t) { return !this.scene || t >= this.stillAt; }

  /** Draw `layer` (a scene of the same size, or null: none) over the current scene from now
   * on, on its own clock: renderAt(t, layerT) draws it at layerT, renderAt(t) at
   * t - start.  Its ops run after the scene's, op by op (it is small and short-lived).
   * @param {Scene | string | null} [layer] @param {number} [start] */
  setLayer(layer, start) {
    /** @type {Scene | null} */
    const l = layer ? (typeof layer === "string" ? JSON.parse(layer) : layer) : null;
    this.layer = l;
    this.layerStart = start || 0;
    this.layerStill = 0;
    if (!l) return;
    for (const track of l.tracks || []) this.layerStill = Math.max(this.layerStill, track[track.length - 1][0]);
    const keys = (l.fonts || []).filter((k) => this.urls[k]);
    // its images too (the scene's are loading already): the same parts on air as skia draws
    const wanted = new Set(l.images || []);
    for (const op of l.ops) if (op[0] === "im") wanted.add(op[1]);
    const imgs = Array.from(wanted).filter((id) => !this.images.has(id));
    if (keys.some((k) => !this.faces[k]) || imgs.length) {
      const shown = this.layer;
      const loaded = Promise.all(/** @type {Promise<unknown>[]} */ (keys.map((k) => this._load(k))).concat(imgs.map((id) => this._loadImage(id))));
      this.sceneReady = Promise.all([this.sceneReady, loaded]);
      loaded.then(() => { if (this.layer === shown) this.renderAt(this.lastT, this.lastLayerT); });
    }
  }

  /** Show what is on air over a step (renderer/onair.py's OnAir.to_json: its scene, and its
   * analysis layer from scene time layerStart on), as the page gets them in two messages;
   * a bare scene is a scene without a layer.  sceneReady then covers both.
   * @param {OnAirJson | Scene | string} onAir @param {number} [sceneStartTime] */
  setOnAir(onAir, sceneStartTime) {
    /** @type {OnAirJson | Scene} */
    const d = typeof onAir === "string" ? JSON.parse(onAir) : onAir;
    if (!("scene" in d)) { this.setScene(d, sceneStartTime); this.setLayer(null); return; }
    this.setScene(d.scene, sceneStartTime);
    this.setLayer(d.layer || null, d.layerStart || 0);
  }

  /** True once the layer (if any) has stopped moving at its time layerT.
   * @param {number} layerT */
  layerIsStill(layerT) { return !this.layer || layerT >= this.layerStill; }

  /** @param {Scene} layer @param {number} lt */
  _drawLayer(layer, lt) {
    const c = this.ctx, main = this.scene, mainT = this.t, k = this.k;
    c.setTransform(k, 0, 0, k, 0, 0);
    c.globalAlpha = 1;
    c.shadowColor = "rgba(0,0,0,0)";
    this.scene = layer; // _num and sprites read the layer's tracks and defs
    this.t = Math.max(0, lt);
    this._reset();
    try {
      this._run(layer.ops, false, null, 0, layer.ops.length);
    } finally {
      while (this.stack.length) { this.stack.pop(); c.restore(); }
      this.scene = main;
      this.t = mainT;
    }
  }

  /** Forget every cached layer (they are redrawn on the next frame). */
  clearLayers() {
    this.layers.clear();
    this.planes = [];
    this.directs = [];
    this.prepared = false;
  }

  /** The scene's plan, each group's content key replaced by its small id (made once).
   * @param {Scene} s @returns {IdPlan} */
  _planOf(s) {
    if (!this.plan) {
      const groups = plan(s.ops, s.defs || {}, 2);
      /** @type {Map<number, [end: number, id: number]>} */
      const ids = new Map();
      for (const [start, [end, key]] of groups) {
        let id = this.contentIds.get(key);
        if (id === undefined) {
          if (this.contentIds.size >= 4096) this.contentIds.clear(); // ids stay unique
          id = this.nextContentId++;
          this.contentIds.set(key, id);
        }
        ids.set(start, [end, id]);
      }
      this.plan = Object.assign(ids, { defText: groups.defText });
      this.planIds = new Set(Array.from(ids.values(), (g) => g[1]));
    }
    return this.plan;
  }

  /** @param {number} now seconds on the clock setScene's start time is on */
  renderNow(now) { this.renderAt(now - this.startTime); }

  /** Draw the scene at its time t, and the layer (if any) at layerT (default t - its start).
   * @param {number} t @param {number} [layerT] */
  renderAt(t, layerT) {
    this.ctx = this.pageCtx; // (a layer a failed frame left open is dropped)
    this.groupDepth = 0;
    const s = this.scene, c = this.ctx;
    this.lastT = t;
    this.lastLayerT = layerT;
    if (!s) return;
    c.setTransform(1, 0, 0, 1, 0, 0);
    c.globalAlpha = 1;
    c.shadowColor = "rgba(0,0,0,0)";
    const W = this.canvas.width, H = this.canvas.height;
    c.clearRect(0, 0, W, H);
    if (!TABLE) return; // drawn again once the table arrives (see the constructor)
    if (s.bg) { c.fillStyle = s.bg; c.fillRect(0, 0, W, H); }
    c.setTransform(this.k, 0, 0, this.k, 0, 0);
    c.textAlign = "left";
    c.textBaseline = "alphabetic";
    this.t = t;
    let groups = null;
    if (this.layersOn) {
      groups = this._planOf(s);
      // The first draw of a new scene blits what the cache has and draws the rest op by op
      // (the quickest way to its pixels); later draws cache what it lacked.
      if (!this.prepared && !this.fresh) {
        this.prepared = true;
        if (groups.size) this._prepare(s.ops, groups);
      }
    }
    this.fresh = false;
    this._reset();
    this._run(s.ops, false, groups, 0, s.ops.length);
    if (this.layer) this._drawLayer(this.layer, layerT === undefined ? t - this.layerStart : layerT);
  }

  _reset() {
    this.alpha = 1;
    this.shadow = null;
    this.clipped = false;
    this.stack = [];
  }

  /** An anim field's value: the number, or its track's value at the time being drawn.
   * @param {Anim} v @returns {number} */
  _num(v) {
    if (typeof v !== "object") return v;
    const tracks = this.scene && this.scene.tracks;
    if (!tracks) throw new Error("the scene has no track " + v.k);
    return sample(tracks[v.k], this.t);
  }

  /** The sprite `id` of the scene being drawn.
   * @param {SpriteId} id @returns {Op[]} */
  _sprite(id) {
    const defs = this.scene && this.scene.defs;
    if (!defs) throw new Error("the scene has no sprite " + id);
    return defs[id];
  }

  /** @param {Colour | PaintArray} spec @returns {string | CanvasGradient} */
  _paint(spec) {
    if (typeof spec === "string") return spec;
    const make = PAINT_RUN[spec[0]];
    if (make === undefined) throw new Error("unknown paint " + spec[0]);
    return make(this.ctx, spec);
  }

  /** @param {string} d @returns {Path2D} */
  _path(d) {
    let p = this.paths.get(d);
    if (!p) { p = new Path2D(d); this.paths.set(d, p); }
    return p;
  }

  /** Fill with `fill` (nothing when null) by calling draw, under the current shadow.
   * @param {Paint} fill @param {() => void} draw */
  _fill(fill, draw) {
    const c = this.ctx;
    if (fill === null) return;
    c.fillStyle = this._paint(fill);
    if (this.shadow) {
      c.shadowColor = this.shadow[0];
      // a canvas shadow is in canvas pixels, whatever the transform: scaled with the picture
      c.shadowBlur = this.shadow[1] * this.k;
      c.shadowOffsetX = this.shadow[2] * this.k;
      c.shadowOffsetY = this.shadow[3] * this.k;
    }
    draw();
    if (this.shadow) c.shadowColor = "rgba(0,0,0,0)";
  }

  /* Begin an "ly" layer: a cleared page-sized canvas under the current transform (no clip:
   * the parent's applies when the layer is composited), drawn on until its restore. */
  /** @param {number} alpha @param {boolean} plus @returns {OpenGroup} */
  _beginGroup(alpha, plus) {
    const W = this.canvas.width, H = this.canvas.height;
    let lc = this.groupCtxs[this.groupDepth];
    if (!lc || lc.canvas.width !== W || lc.canvas.height !== H) {
      /** @type {Context2D | null} */
      let made;
      if (typeof document !== "undefined") {
        const cv = document.createElement("canvas");
        cv.width = W;
        cv.height = H;
        made = cv.getContext("2d");
      } else {
        made = new OffscreenCanvas(W, H).getContext("2d");
      }
      if (!made) throw new Error("EuchrePlayer: a layer canvas has no 2d context");
      lc = made;
      this.groupCtxs[this.groupDepth] = lc;
    }
    this.groupDepth++;
    const parent = this.ctx;
    lc.save();
    lc.setTransform(1, 0, 0, 1, 0, 0);
    lc.clearRect(0, 0, W, H);
    lc.setTransform(parent.getTransform());
    lc.globalAlpha = 1;
    lc.shadowColor = "rgba(0,0,0,0)";
    lc.textAlign = "left";
    lc.textBaseline = "alphabetic";
    this.ctx = lc;
    return { parent: parent, ctx: lc, alpha: alpha, plus: plus };
  }

  /* End an "ly" layer: composite it onto the context it began on, at its alpha. */
  /** @param {OpenGroup} g */
  _endGroup(g) {
    g.ctx.restore();
    this.groupDepth--;
    const p = g.parent;
    p.save();
    p.setTransform(1, 0, 0, 1, 0, 0);
    p.globalAlpha = g.alpha;
    if (g.plus) p.globalCompositeOperation = "lighter";
    if (g.alpha > 0) p.drawImage(g.ctx.canvas, 0, 0);
    p.restore();
    this.ctx = p;
  }

  /* Blit the static group ops[start:end] (content id `id`) from the layer cache.  False on a
   * miss (the caller draws it op by op; the next frame's _prepare caches it). */
  /** @param {Op[]} ops @param {number} start @param {number} end @param {number} id @returns {boolean} */
  _layer(ops, start, end, id) {
    const c = this.ctx;
    const m = c.getTransform();
    const entry = this.layers.get(id + "|" + m.a + "," + m.b + "," + m.c + "," + m.d + "," + m.e + "," + m.f);
    if (entry === undefined) {
      this.prepared = false;
      return false;
    }
    if ("direct" in entry) return false;
    this.layerStats.hits++;
    if (entry.plane !== null) {
      const box = entry.box;
      c.save();
      c.setTransform(1, 0, 0, 1, 0, 0);
      c.drawImage(entry.plane.canvas, box[0], box[1], box[2], box[3], box[0], box[1], box[2], box[3]);
      c.restore();
    }
    return true;
  }

  /* Before a frame blits anything: walk the ops' state and move ops on the page context
   * (draw ops skipped) and draw every static group the cache lacks into a plane.  Writing
   * a plane that the page already blitted this frame would make Chromium copy the whole
   * plane (copy on write, ~2.5 ms at 1280x720), so all writes come first. */
  /** @param {Op[]} ops @param {IdPlan} groups */
  _prepare(ops, groups) {
    const c = this.ctx;
    this._reset();
    c.save();
    this.preparing = true;
    try {
      this._run(ops, false, groups, 0, ops.length, true);
    } finally {
      this.preparing = false;
      while (this.stack.length) { this.stack.pop(); c.restore(); }
      c.restore();
    }
  }

  /* Draw a static group into a plane: a transparent canvas of the page canvas's size, at the
   * group's own device position under the same matrix, so its edges are rasterised exactly
   * as on the page (a group-sized canvas shifts coordinates, and float rounding then flips
   * anti-aliased edge and glyph sub-pixel positions: measured up to 68/255 on single
   * pixels).  Groups of one plane never overlap (bounding boxes); a group takes the first
   * plane where it overlaps only groups the current scene does not use (those are
   * cleared); where none is free it is drawn op by op. */
  /**
   * @param {Op[]} ops @param {number} start @param {number} end @param {Matrix} m
   * @param {number} id @param {string} mk
   * @returns {LayerEntry}
   */
  _makeLayer(ops, start, end, m, id, mk) {
    const W = this.canvas.width, H = this.canvas.height;
    /** @type {Bounds} */
    const bb = [Infinity, Infinity, -Infinity, -Infinity];
    this._bounds(ops, start, end, m, bb, false);
    const x0 = Math.max(0, Math.floor(bb[0]) - 1), y0 = Math.max(0, Math.floor(bb[1]) - 1);
    const x1 = Math.min(W, Math.ceil(bb[2]) + 1), y1 = Math.min(H, Math.ceil(bb[3]) + 1);
    if (!(x1 > x0 && y1 > y0)) {
      /** @type {EmptyEntry} */
      const empty = { id: id, plane: null, box: null };
      this.layers.set(mk, empty);
      return empty;
    }
    /** @type {Rect} */
    const box = [x0, y0, x1 - x0, y1 - y0];
    /** @param {PlaneEntry} e */
    const hits = (e) => e.box[0] < x1 && e.box[0] + e.box[2] > x0 && e.box[1] < y1 && e.box[1] + e.box[3] > y0;
    let plane = null;
    for (const p of this.planes) {
      const over = [];
      let busy = false;
      for (const e of p.entries) {
        if (hits(e)) {
          if (this.planIds.has(e.id)) { busy = true; break; }
          over.push(e);
        }
      }
      if (busy) continue;
      for (const e of over) {
        p.ctx.clearRect(e.box[0], e.box[1], e.box[2], e.box[3]);
        p.entries.delete(e);
        this.layers.delete(e.mk);
      }
      plane = p;
      break;
    }
    if (!plane) {
      const limit = Math.min(this.maxLayerPlanes, Math.floor(this.maxLayerBytes / (W * H * 4)));
      if (this.planes.length >= limit) {
        /** @type {DirectEntry} */
        const direct = { id: id, mk: mk, direct: true }; // until the next scene
        this.layers.set(mk, direct);
        this.directs.push(direct);
        return direct;
      }
      /** @type {HTMLCanvasElement | OffscreenCanvas} */
      let canvas;
      /** @type {Context2D | null} */
      let ctx;
      if (typeof document !== "undefined") {
        const page = document.createElement("canvas");
        page.width = W;
        page.height = H;
        canvas = page;
        ctx = page.getContext("2d");
      } else {
        const off = new OffscreenCanvas(W, H);
        canvas = off;
        ctx = off.getContext("2d");
      }
      if (!ctx) throw new Error("EuchrePlayer: a layer canvas has no 2d context");
      plane = { canvas: canvas, ctx: ctx, entries: new Set() };
      this.planes.push(plane);
    }
    const lc = plane.ctx;
    lc.save();
    lc.setTransform(1, 0, 0, 1, 0, 0);
    lc.clearRect(box[0], box[1], box[2], box[3]);
    lc.beginPath();
    lc.rect(box[0], box[1], box[2], box[3]);
    lc.clip();
    lc.setTransform(m[0], m[1], m[2], m[3], m[4], m[5]);
    lc.globalAlpha = 1;
    lc.textAlign = "left";
    lc.textBaseline = "alphabetic";
    /** @type {[Context2D, number, Shadow | null, boolean, Saved[]]} */
    const saved = [this.ctx, this.alpha, this.shadow, this.clipped, this.stack];
    this.ctx = lc;
    this.alpha = 1;
    this.shadow = null;
    this.clipped = false;
    this.stack = [];
    try {
      this._run(ops, false, null, start, end);
    } finally {
      [this.ctx, this.alpha, this.shadow, this.clipped, this.stack] = saved;
      lc.restore();
    }
    /** @type {PlaneEntry} */
    const entry = { id: id, mk: mk, plane: plane, box: box };
    plane.entries.add(entry);
    this.layers.set(mk, entry);
    return entry;
  }

  /* Grow box (device pixels, [x0, y0, x1, y1]) by what ops[from:to] draw under matrix m
   * ([a, b, c, d, e, f]): generous (anti-aliasing, stroke, glyph overhang, shadow blur). */
  /**
   * @param {Op[]} ops @param {number} from @param {number} to @param {Matrix} m0
   * @param {Bounds} box @param {boolean} inSprite
   */
  _bounds(ops, from, to, m0, box, inSprite) {
    let m = copyMatrix(m0);
    /** @typedef {[blur: number, dx: number, dy: number]} BoundsShadow */
    /** @type {BoundsShadow | null} */
    let sh = null;
    /** @type {[Matrix, BoundsShadow | null][]} */
    const st = [];
    /** @type {AddBox} */
    const add = (x0, y0, x1, y1, withShadow, mm) => {
      const q = mm || m;
      let bx0 = Infinity, by0 = Infinity, bx1 = -Infinity, by1 = -Infinity;
      for (let k = 0; k < 4; k++) {
        const x = k & 1 ? x1 : x0, y = k & 2 ? y1 : y0;
        const dx = q[0] * x + q[2] * y + q[4], dy = q[1] * x + q[3] * y + q[5];
        if (dx < bx0) bx0 = dx;
        if (dx > bx1) bx1 = dx;
        if (dy < by0) by0 = dy;
        if (dy > by1) by1 = dy;
      }
      /** @param {number} a0 @param {number} b0 @param {number} a1 @param {number} b1 @param {number} o */
      const grow = (a0, b0, a1, b1, o) => {
        if (a0 - o < box[0]) box[0] = a0 - o;
        if (b0 - o < box[1]) box[1] = b0 - o;
        if (a1 + o > box[2]) box[2] = a1 + o;
        if (b1 + o > box[3]) box[3] = b1 + o;
      };
      grow(bx0, by0, bx1, by1, 2);
      // Canvas2D shadow: device-space offset, blur = 2 sigma (3 sigma covers it)
      if (withShadow && sh) grow(bx0 + sh[1], by0 + sh[2], bx1 + sh[1], by1 + sh[2], 1.5 * sh[0] + 4);
    };
    for (let i = from; i < to; i++) {
      const op = ops[i], name = op[0];
      if (name === "s" || name === "ly") st.push([copyMatrix(m), sh]);
      else if (name === "r") { const top = st.pop(); if (top) [m, sh] = top; }
      else if (op[0] === "sh") sh = inSprite ? null : [op[2] * this.k, op[3] * this.k, op[4] * this.k];
      else if (MOVE[name]) m = MOVE[name](this, m, op);
      else if (DRAW[name]) DRAW[name](this, op, add, m);
    }
  }

  /* Draw ops[from:to], each op through its handler (the table's dispatch); static groups
   * come from the layer cache.  With `prepare`, draw ops are skipped and static groups the
   * cache lacks are drawn into it instead (see _prepare). */
  /**
   * @param {Op[]} ops @param {boolean} inSprite @param {IdPlan | null} groups
   * @param {number} from @param {number} [to] @param {boolean} [prepare]
   */
  _run(ops, inSprite, groups, from, to, prepare) {
    const end = to === undefined ? ops.length : to;
    for (let i = from || 0; i < end; i++) {
      const op = ops[i], name = op[0];
      if (groups && name === "s") {
        const hit = groups.get(i);
        if (hit && this.alpha === 1 && !this.shadow && !this.clipped) {
          if (prepare) {
            const m = this.ctx.getTransform();
            const mk = hit[1] + "|" + m.a + "," + m.b + "," + m.c + "," + m.d + "," + m.e + "," + m.f;
            if (!this.layers.has(mk)) {
              this.layerStats.misses++;
              this._makeLayer(ops, i, hit[0], [m.a, m.b, m.c, m.d, m.e, m.f], hit[1], mk);
            }
            i = hit[0] - 1;
            continue;
          }
          if (this._layer(ops, i, hit[0], hit[1])) {
            i = hit[0] - 1;
            continue;
          }
        }
      }
      if (prepare && DRAW[name]) continue;
      const run = RUN[name];
      if (run === undefined) throw new Error("unknown scene op " + name);
      run(this, op, inSprite);
    }
  }
}
