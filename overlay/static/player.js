/* EuchrePlayer: draws a euchre-overlay scene (renderer/scene.py) on a <canvas> with Canvas2D.
 *
 * Mirrors the skia executor (renderer/raster.py) op for op; change both together.
 * Plain ES2020, no build step, Chrome 127 (OBS).  Deterministic: renderAt(t) depends only on
 * the scene and t.
 *
 *   const player = new EuchrePlayer(canvas, {fontUrls: {bold: "/fonts/bold.ttf", ...}});
 *   await player.ready;                       // fonts loaded (FontFace, family = font key), but "cjk"
 *   await player.sceneReady;                  // after setScene: every font the scene uses is loaded
 *   player.setScene(sceneJsonOrText, startTimeSeconds);
 *   player.renderAt(t);                       // t = seconds since the scene's start
 *   player.renderNow(nowSeconds);             // = renderAt(now - startTime)
 */
(function (global) {
  "use strict";

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

  function ease(name, p) {
    if (p <= 0) return 0;
    if (p >= 1) return 1;
    return EASE[name](p);
  }

  function sample(track, t) {
    let prev = track[0];
    if (t <= prev[0]) return prev[1];
    for (let i = 1; i < track.length; i++) {
      const key = track[i];
      if (t < key[0]) {
        const span = key[0] - prev[0];
        const p = span > 0 ? (t - prev[0]) / span : 1;
        const a = prev[1];
        return a + (key[1] - a) * ease(key.length > 2 ? key[2] : "linear", p);
      }
      prev = key;
    }
    return prev[1];
  }

  class EuchrePlayer {
    constructor(canvas, options) {
      const opts = options || {};
      this.canvas = canvas;
      this.ctx = canvas.getContext("2d");
      this.scene = null;
      this.startTime = 0;
      this.paths = new Map();
      this.urls = opts.fontUrls || {};
      this.faces = {};
      this.lastT = 0;
      // The pinned fallback for scripts Barlow lacks ("cjk") is large: it loads only when
      // a scene uses it; every other font loads at once.
      this.ready = Promise.all(Object.keys(this.urls).filter((k) => k !== "cjk").map((k) => this._load(k)));
      this.sceneReady = this.ready;
    }

    _load(key) {
      if (!this.faces[key]) {
        const face = new FontFace(key, "url(" + JSON.stringify(this.urls[key]) + ")");
        this.faces[key] = face.load().then((f) => { document.fonts.add(f); return f; });
      }
      return this.faces[key];
    }

    setScene(scene, sceneStartTime) {
      this.scene = typeof scene === "string" ? JSON.parse(scene) : scene;
      this.startTime = sceneStartTime || 0;
      if (this.canvas.width !== this.scene.w) this.canvas.width = this.scene.w;
      if (this.canvas.height !== this.scene.h) this.canvas.height = this.scene.h;
      const keys = (this.scene.fonts || []).filter((k) => this.urls[k]);
      const fresh = keys.filter((k) => !this.faces[k]);
      /** Resolves once every font of the current scene is loaded (for deterministic capture). */
      this.sceneReady = Promise.all(keys.map((k) => this._load(k)));
      if (fresh.length) {
        const shown = this.scene;
        this.sceneReady.then(() => { if (this.scene === shown) this.renderAt(this.lastT); });
      }
    }

    /** True once the scene has stopped moving at time t. */
    isStill(t) { return !this.scene || t >= this.scene.dur; }

    renderNow(now) { this.renderAt(now - this.startTime); }

    renderAt(t) {
      const s = this.scene, c = this.ctx;
      this.lastT = t;
      if (!s) return;
      c.setTransform(1, 0, 0, 1, 0, 0);
      c.globalAlpha = 1;
      c.shadowColor = "rgba(0,0,0,0)";
      c.clearRect(0, 0, s.w, s.h);
      if (s.bg) { c.fillStyle = s.bg; c.fillRect(0, 0, s.w, s.h); }
      c.textAlign = "left";
      c.textBaseline = "alphabetic";
      this.t = t;
      this.alpha = 1;
      this.shadow = null;
      this.stack = [];
      this._run(s.ops, false);
    }

    _num(v) { return typeof v === "object" ? sample(this.scene.tracks[v.k], this.t) : v; }

    _paint(spec) {
      if (typeof spec === "string") return spec;
      const g = this.ctx.createLinearGradient(spec[1], spec[2], spec[3], spec[4]);
      for (const [stop, colour] of spec[5]) g.addColorStop(stop, colour);
      return g;
    }

    _path(d) {
      let p = this.paths.get(d);
      if (!p) { p = new Path2D(d); this.paths.set(d, p); }
      return p;
    }

    _fill(fill, draw) {
      const c = this.ctx;
      if (fill === null) return;
      c.fillStyle = this._paint(fill);
      if (this.shadow) {
        c.shadowColor = this.shadow[0];
        c.shadowBlur = this.shadow[1];
        c.shadowOffsetX = this.shadow[2];
        c.shadowOffsetY = this.shadow[3];
      }
      draw();
      if (this.shadow) c.shadowColor = "rgba(0,0,0,0)";
    }

    _run(ops, inSprite) {
      const c = this.ctx;
      for (const op of ops) {
        switch (op[0]) {
          case "s": c.save(); this.stack.push([this.alpha, this.shadow]); break;
          case "r": c.restore(); [this.alpha, this.shadow] = this.stack.pop(); c.globalAlpha = this.alpha; break;
          case "tr": c.translate(this._num(op[1]), this._num(op[2])); break;
          case "sc": c.scale(this._num(op[1]), this._num(op[2])); break;
          case "ro": c.rotate(this._num(op[1])); break;
          case "a": this.alpha *= Math.min(1, Math.max(0, this._num(op[1]))); c.globalAlpha = this.alpha; break;
          case "sh": this.shadow = inSprite ? null : [op[1], op[2], op[3], op[4]]; break;
          case "rr": {
            if (this.alpha <= 0) break;
            const [, x, y, w, h, r0, fill, stroke, lw] = op;
            const r = Math.min(r0, w / 2, h / 2);
            c.beginPath();
            c.roundRect(x, y, w, h, r);
            this._fill(fill, () => c.fill());
            if (stroke !== null && lw) { c.strokeStyle = this._paint(stroke); c.lineWidth = lw; c.stroke(); }
            break;
          }
          case "p": {
            if (this.alpha <= 0) break;
            const path = this._path(op[1]);
            this._fill(op[2], () => c.fill(path));
            if (op[3] !== null && op[4]) { c.strokeStyle = this._paint(op[3]); c.lineWidth = op[4]; c.stroke(path); }
            break;
          }
          case "t": {
            if (this.alpha <= 0) break;
            const [, font, size, x, y, text, fill, ls] = op;
            // characters the font lacks come from the pinned fallback (renderer/fonts.py)
            c.font = size + 'px "' + font + '", "cjk"';
            c.letterSpacing = (ls || 0) + "px";
            c.fillStyle = this._paint(fill);
            c.fillText(text, x, y);
            break;
          }
          case "cl": {
            const [, x, y, w, h, r0] = op;
            c.beginPath();
            c.roundRect(x, y, w, h, Math.min(r0, w / 2, h / 2));
            c.clip();
            break;
          }
          case "sp": {
            if (this.alpha <= 0) break;
            const [, id, x, y, sc] = op;
            const saved = [this.alpha, this.shadow];
            c.save();
            c.translate(x, y);
            if (sc !== 1) c.scale(sc, sc);
            this.shadow = null;
            this.stack.push(saved);
            this._run(this.scene.defs[id], true);
            this.stack.pop();
            c.restore();
            [this.alpha, this.shadow] = saved;
            c.globalAlpha = this.alpha;
            break;
          }
          default:
            throw new Error("unknown scene op " + op[0]);
        }
      }
    }
  }

  EuchrePlayer.sample = sample;
  EuchrePlayer.ease = ease;
  global.EuchrePlayer = EuchrePlayer;
})(typeof window !== "undefined" ? window : globalThis);
