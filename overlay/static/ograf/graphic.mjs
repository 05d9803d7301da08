// @ts-check
/* euchre-overlay as an EBU OGraf graphic: a Web Component that runs the page's player.
 *
 * The host imports this module, defines the element and calls the OGraf Graphics API:
 *   load({renderType, data, renderCharacteristics}), updateAction({data}), playAction({delta,
 *   goto}), stopAction(), customAction({id, payload}), dispose(), and for non-real-time
 *   rendering goToTime({timestamp}) (milliseconds) and setActionsSchedule({schedule}).
 *
 * Real time: the element follows a channel over the same WebSocket as the OBS page
 * (/ws/overlay/{channel}: scene messages with the scene, its age and rate) and draws with
 * requestAnimationFrame until the scene is still.  The first playAction shows it; given the
 * API token, a later one steps the channel (NEXT x delta) and one with goto seeks to that
 * step; stopAction hides it.
 * Both draw what is on air (renderer/onair.py): in real time the scene messages and the
 * analysis messages' layers (over their own step's scene, on their own clock, as the OBS
 * page draws them), and the uploaded images from the server's /media/.
 * Non-real time: data.timeline gives step start times and a URL template of each step's
 * on-air JSON (scene and analysis layer; a bare scene too); goToTime(ms) applies the
 * scheduled actions up to that time, loads the step's once and draws it with
 * player.renderAt(t): the picture depends on the time only, which is what the
 * deterministic capture (overlay/browser/capture.py) relies on.
 * It imports the player (../player.js) as an ES module.  Plain ES2020 (OBS's Chrome 127,
 * CasparCG's and SPX's Chromium), type-checked by tsc (// @ts-check).
 */

import { EuchrePlayer } from "../player.js";

/** @import { Scene } from "../scene.js" */
/**
 * The analysis message of one step (overlay/service/analysis.py): its layer is a scene.
 * @typedef {{ type: "analysis", step: number | null, layer?: Scene | null }} AnalysisMessage
 */
/** @import { PageDrawn, PageHello, SceneMessage } from "../protocol.js" */
/** @import { ControlActionPayload, GraphicData } from "./data.js" */

/**
 * The graphic's data: the manifest's fields (data.d.ts, generated from it) and those a host
 * may add: the canvas size without renderCharacteristics, and font URLs by key.
 * @typedef {GraphicData & { width?: number, height?: number, fontUrls?: Record<string, string> }} Data
 */
/** @typedef {NonNullable<GraphicData["timeline"]>} Timeline */
/**
 * What an OGraf method returns (the Graphics API's return value).
 * @typedef {{ statusCode: number, statusMessage?: string, currentStep?: number }} Result
 */
/**
 * An action of setActionsSchedule at a time (milliseconds).
 * @typedef {{ timestamp: number, action?: { type?: string, params?: { data?: Data } } }} ScheduledAction
 */

/* Font URLs by key, resolved on demand: the player loads a face the first time a scene names
 * it, so the list of keys stays in one place (the server's renderer.fonts). */
/** @param {URL} serverBase @param {Record<string, string>} [given] @returns {Record<string, string>} */
function fontUrls(serverBase, given) {
  if (given) return given;
  const base = new URL("fonts/", serverBase);
  return new Proxy({}, {
    get: (_, key) => (typeof key === "string" ? new URL(key + ".ttf", base).href : undefined),
    ownKeys: () => [],
  });
}

/** @param {{ currentStep?: number }} [extra] @returns {Result} */
const ok = (extra) => Object.assign({ statusCode: 200 }, extra || {});

export default class EuchreOverlayGraphic extends HTMLElement {
  constructor() {
    super();
    /** @type {Data} */
    this.data = {};
    /** @type {Data | undefined} the data load() was given (goToTime applies actions to it) */
    this.initialData = undefined;
    this.renderType = "realtime";
    this.visible = false;
    /** @type {ScheduledAction[]} */
    this.schedule = [];
    /** @type {Map<number, Promise<string>>} step -> its scene's text (non-real time) */
    this.scenes = new Map();
    /** @type {number | null} */
    this.shownStep = null;
    /** @type {WebSocket | null} */
    this.ws = null;
    /** @type {{ age: number, rate: number, t0: number, has: boolean, step: number | null } | null} real time: the step shown */
    this.current = null;
    /** @type {AnalysisMessage | null} real time: an analysis whose step's scene has not come yet */
    this.waiting = null;
    /** @type {number | null} real time: when the analysis layer was shown (seconds, performance.now) */
    this.layerAt = null;
    this.raf = 0;
    this.currentStep = 0;
    /** @type {HTMLCanvasElement | null} */
    this.canvas = null;
    /** @type {EuchrePlayer | null} */
    this.player = null;
  }

  get serverBase() {
    const s = this.data.server;
    return new URL(s ? (s.endsWith("/") ? s : s + "/") : "../../", s ? undefined : import.meta.url);
  }

  /** @param {{ renderType?: string, data?: Data, renderCharacteristics?: { resolution?: { width?: number, height?: number } } }} [params] */
  async load(params) {
    params = params || {};
    this.renderType = params.renderType || "realtime";
    this.data = Object.assign({}, params.data || {});
    const res = (params.renderCharacteristics && params.renderCharacteristics.resolution) || {};
    const root = this.shadowRoot || this.attachShadow({ mode: "open" });
    root.innerHTML = "<style>:host{display:block;position:absolute;inset:0;background:transparent}" +
      "canvas{display:block;width:100%;height:100%;background:transparent}</style><canvas></canvas>";
    const canvas = root.querySelector("canvas");
    if (!canvas) throw new Error("euchre-overlay graphic: no canvas"); // (just written above)
    this.canvas = canvas;
    canvas.width = res.width || this.data.width || 1920;
    canvas.height = res.height || this.data.height || 1080;
    // uploaded images from the server the graphic follows (the page's /media/ route)
    this.player = new EuchrePlayer(canvas, { fontUrls: fontUrls(this.serverBase, this.data.fontUrls), imageBase: new URL("media/", this.serverBase).href });
    await this.player.ready;
    this.initialData = this.data;
    if (this.renderType === "realtime" && this.data.channel) this._connect(this.data.channel);
    this._clear();
    return ok();
  }

  async dispose() {
    this._disconnect();
    if (this.raf) cancelAnimationFrame(this.raf);
    this.raf = 0;
    this.scenes.clear();
    if (this.shadowRoot) this.shadowRoot.innerHTML = "";
    return ok();
  }

  /** @param {{ data?: Data }} [params] */
  async updateAction(params) {
    const before = this.data;
    this.data = Object.assign({}, this.data, (params && params.data) || {});
    if (this.renderType === "realtime" &&
        (before.channel !== this.data.channel || before.output !== this.data.output || before.server !== this.data.server)) {
      this._disconnect();
      if (this.data.channel) this._connect(this.data.channel);
    }
    if (before.timeline !== this.data.timeline) { this.scenes.clear(); this.shownStep = null; }
    return ok();
  }

  /** @param {{ delta?: number, goto?: number }} [params] */
  async playAction(params) {
    params = params || {};
    const shown = this.visible;
    this.visible = true;
    if (this.renderType === "realtime") {
      // the first play shows the graphic; later ones (or a goto) step the channel
      if (this.data.token && this.data.channel && (shown || typeof params.goto === "number")) {
        if (typeof params.goto === "number") await this._control("seek?step=" + params.goto);
        else for (let i = 0; i < (params.delta || 1); i++) await this._control("next");
      }
      this._kick();
    }
    return ok({ currentStep: this.currentStep });
  }

  async stopAction() {
    this.visible = false;
    if (this.renderType === "realtime") this._clear();
    return ok();
  }

  /** @param {{ id?: string, payload?: ControlActionPayload }} [params] @returns {Promise<Result>} */
  async customAction(params) {
    if (!params || params.id !== "control") return { statusCode: 404, statusMessage: "unknown action " + (params && params.id) };
    const op = params.payload && params.payload.op;
    if (!op) return { statusCode: 400, statusMessage: "payload.op is required" };
    if (!this.data.token) return { statusCode: 401, statusMessage: "no API token in the data" };
    const r = await this._control(op);
    return { statusCode: r ? r.status : 502 };
  }

  /** @param {{ schedule?: ScheduledAction[] }} [params] */
  async setActionsSchedule(params) {
    this.schedule = ((params && params.schedule) || []).slice().sort((a, b) => a.timestamp - b.timestamp);
    return {};
  }

  /** @param {{ timestamp?: number }} [params] */
  async goToTime(params) {
    const ms = (params && params.timestamp) || 0;
    // the state at this time: the load data with every scheduled action up to it applied
    let data = this.initialData || this.data;
    let visible = false;
    for (const entry of this.schedule) {
      if (entry.timestamp > ms) break;
      const a = entry.action || {};
      if (a.type === "playAction") visible = true;
      else if (a.type === "stopAction") visible = false;
      else if (a.type === "updateAction") data = Object.assign({}, data, (a.params && a.params.data) || {});
    }
    if (data.timeline !== this.data.timeline) { this.scenes.clear(); this.shownStep = null; }
    this.data = data;
    this.visible = visible;
    const tl = data.timeline;
    if (!visible || !tl) { this._clear(); return ok(); }
    const player = this._player();
    const t = ms / 1000;
    const starts = tl.starts, first = tl.first || 0, last = tl.last == null ? starts.length - 1 : tl.last;
    if (t < starts[first] - 1e-9) { this._clear(); return ok(); }
    let step = first;
    while (step < last && starts[step + 1] <= t + 1e-9) step += 1;
    if (step !== this.shownStep) {
      // what is on air over the step: its scene and its analysis layer (renderer/onair.py)
      player.setOnAir(await this._scene(tl, step), 0);
      this.shownStep = step;
    }
    await player.sceneReady;
    this.currentStep = step;
    this._show();
    player.renderAt(Math.max(0, t - starts[step]));
    return ok({ currentStep: step });
  }

  // ---- non-real time: scenes by step, fetched once
  /** @param {Timeline} tl @param {number} step @returns {Promise<string>} */
  _scene(tl, step) {
    let p = this.scenes.get(step);
    if (!p) {
      p = fetch(tl.sceneUrl.replace("{step}", String(step))).then((r) => {
        if (!r.ok) throw new Error("scene " + step + ": HTTP " + r.status);
        return r.text();
      });
      this.scenes.set(step, p);
      if (this.scenes.size > 8) {
        const oldest = this.scenes.keys().next();
        if (!oldest.done) this.scenes.delete(oldest.value);
      }
    }
    return p;
  }

  // ---- real time: the channel's scene stream (the OBS page's protocol)
  /** The player (load() makes it). */
  _player() {
    if (!this.player) throw new Error("euchre-overlay graphic: load() first");
    return this.player;
  }

  /** @param {string} channel */
  _connect(channel) {
    const base = this.serverBase;
    const url = (base.protocol === "https:" ? "wss://" : "ws://") + base.host + base.pathname + "ws/overlay/" + encodeURIComponent(channel);
    const ws = new WebSocket(url);
    this.ws = ws;
    ws.onopen = () => {
      const canvas = /** @type {HTMLCanvasElement} */ (this.canvas); // load() made it first
      /** @type {PageHello} */
      const hello = { type: "hello", output: this.data.output || "program", width: canvas.width, height: canvas.height, visible: true };
      ws.send(JSON.stringify(hello));
    };
    ws.onmessage = (ev) => {
      /** @type {SceneMessage | { type: "analysis" | "error" | "bye" } | null} */
      let msg;
      try { msg = JSON.parse(ev.data); } catch (e) { return; }
      if (msg && msg.type === "analysis") { this._onAnalysis(/** @type {AnalysisMessage} */ (msg)); return; }
      if (!msg || msg.type !== "scene") return;
      // a layer belongs to its step's scene (as on the OBS page): another step, or a jump, drops it
      if (!this.current || this.current.step !== msg.step || msg.step == null || msg.jump) this._dropLayer();
      this.currentStep = msg.step == null ? 0 : msg.step;
      this.current = { age: msg.age || 0, rate: msg.rate || 0, t0: performance.now() / 1000, has: !!msg.scene, step: msg.step };
      if (msg.scene) this._player().setScene(/** @type {Scene} */ (msg.scene), 0);
      const waiting = this.waiting;
      this.waiting = null;
      if (waiting && waiting.step === msg.step) this._showLayer(waiting);
      /** @type {PageDrawn} */
      const drawn = { type: "drawn", seq: msg.seq, step: msg.step };
      ws.send(JSON.stringify(drawn));
      this._kick();
    };
    ws.onclose = () => {
      if (this.ws === ws) { this.ws = null; setTimeout(() => { if (!this.ws && this.data.channel && this.shadowRoot && this.shadowRoot.firstChild) this._connect(this.data.channel); }, 500); }
    };
  }

  /* The analysis layer of a step (overlay/service/analysis.py), drawn as the OBS page draws it:
   * over its own step's scene only, on its own clock from when it is shown. */
  /** @param {AnalysisMessage} msg */
  _onAnalysis(msg) {
    if (!msg.layer) return;
    if (!this.current || this.current.step !== msg.step) { this.waiting = msg; return; }
    this._showLayer(msg);
  }

  /** @param {AnalysisMessage} msg */
  _showLayer(msg) {
    const c = this.current;
    if (!c || !msg.layer) return;
    this.layerAt = performance.now() / 1000;
    this._player().setLayer(msg.layer, c.age + (this.layerAt - c.t0) * c.rate);
    this._kick();
  }

  _dropLayer() {
    if (this.player) this.player.setLayer(null);
    this.layerAt = null;
  }

  _disconnect() {
    const ws = this.ws;
    this.ws = null;
    if (ws) ws.close();
  }

  _kick() {
    if (!this.raf) this.raf = requestAnimationFrame(() => this._frame());
  }

  _frame() {
    this.raf = 0;
    const c = this.current;
    if (!this.visible || !c || !c.has) { this._clear(); return; }
    this._show();
    const player = this._player();
    const now = performance.now() / 1000;
    const t = c.age + (now - c.t0) * c.rate;
    const lt = this.layerAt === null ? undefined : now - this.layerAt;
    player.renderAt(t, lt);
    if ((c.rate > 0 && !player.isStill(t)) || (lt !== undefined && !player.layerIsStill(lt))) this._kick();
  }

  /* Shown between play and stop: hidden by CSS, since the player may redraw by itself when
   * a font arrives. */
  _show() {
    if (this.canvas) this.canvas.style.visibility = this.visible ? "visible" : "hidden";
  }

  _clear() {
    this._show();
    if (!this.canvas) return;
    const ctx = this.canvas.getContext("2d");
    if (!ctx) return;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
  }

  /** POST a control op to the channel (with the token); null when the request failed.
   * @param {string} op @returns {Promise<Response | null>} */
  async _control(op) {
    const url = new URL("api/channels/" + encodeURIComponent(String(this.data.channel)) + "/control/" + op, this.serverBase);
    try {
      return await fetch(url.href, { method: "POST", headers: { Authorization: "Bearer " + this.data.token } });
    } catch (e) {
      return null;
    }
  }
}
