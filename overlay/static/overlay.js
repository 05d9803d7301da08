// @ts-check
/* euchre-overlay page: socket, resync and frame loop.  Drawing is the renderer's player
 * (player.js, imported as an ES module); this file only feeds it scenes and times.
 *
 * - Each "scene" message carries one step's scene, its age (seconds into the step) and the
 *   playback rate; the page draws scene time  age + (now - received) * rate  at once (on
 *   receipt) and then on requestAnimationFrame until player.isStill(t): no rAF loop and no
 *   redraw while nothing moves.  Nothing waits for an animation.
 * - Reconnects with backoff (250 ms .. 1 s); every (re)connect gets a full snapshot.
 * - When OBS shows the source again (obsSourceVisibleChanged / obsSourceActiveChanged) or
 *   the tab becomes visible, the page asks for a snapshot and draws the current state.
 * - window.renderAt(t) draws the current scene at scene time t and stops the live clock
 *   (deterministic capture); window.euchreOverlay.resume() restarts it.
 * - A wrong or early URL (no such channel yet) never puts text on the picture: the page stays
 *   transparent, says why on the console (once per outage, not once per retry) and keeps
 *   retrying, so it connects as soon as the channel is created.  An {"type": "error"}
 *   message from the server goes to the console too.
 * - An "analysis" message (overlay/service/analysis.py) carries the analysis layer of one step: drawn
 *   over that step's scene on its own clock (the step's animation goes on), kept while the
 *   page shows that step and dropped when it leaves it (a layer that arrives before its
 *   step's scene waits for it; one for a step already left is dropped).
 * An ES module (ES2017 syntax) for OBS's Chrome 127, type-checked by tsc (// @ts-check) against
 * the generated scene.d.ts and protocol.d.ts.  Text is only ever drawn on the canvas.
 */

import { EuchrePlayer } from "./player.js";

/** @import { Scene } from "./scene.js" */
/** @import { ByeMessage, PageHello, PageMessage, SceneMessage } from "./protocol.js" */
/**
 * The page's config, which the server writes into it (overlay/routes/pages.py _page_html).
 * @typedef {object} PageConfig
 * @property {string} channel
 * @property {"program" | "preview" | "clean"} output
 * @property {number} width
 * @property {number} height
 * @property {string | null} problem why the page cannot show the channel (yet), or null
 * @property {string} socket the socket's path and query
 * @property {Record<string, string>} fonts font file URLs by key
 */
/**
 * The analysis of one step (overlay/service/analysis.py; "layer": a scene drawn over the step's).
 * @typedef {{ type: "analysis", step: number | null, output: string, tookMs?: number, analysis: unknown,
 *   graph?: unknown[] | null, layer?: Scene | null }} AnalysisMessage
 */
/** @typedef {{ type: "error", error?: string, message?: string }} ErrorMessage */
/**
 * What the server sends a page (a bench page's scene messages carry a "trace" too).
 * @typedef {(SceneMessage & { trace?: unknown }) | AnalysisMessage | ErrorMessage | ByeMessage} ServerMessage
 */
/**
 * The step on screen: its scene's time is age + (now - t0) * rate.
 * @typedef {{ id: number, seq: number, step: number | null, t0: number, receivedAt: number, age: number,
 *   rate: number, dur: number, hasScene: boolean, done: boolean }} Current
 */
/**
 * When a scene arrived and was drawn (?bench=1), epoch milliseconds.
 * @typedef {{ seq: number, step: number | null, trace: unknown, bytes: number, receivedAt: number,
 *   parsedAt: number, setAt: number, renderedAt: number | null, rasteredAt?: number, drawnAt: number | null,
 *   changedAt: number | null, changedRenderedAt?: number, changedFrame: number | null, firstFrame?: number }} BenchRecord
 */

/** @type {PageConfig} */
var cfg = JSON.parse(/** @type {HTMLElement} */ (document.getElementById("overlay-config")).textContent || "null");
var canvas = /** @type {HTMLCanvasElement} */ (document.getElementById("stage"));
canvas.width = cfg.width;
canvas.height = cfg.height;
var bench = /[?&]bench=1(&|$)/.test(location.search);

// The studio's monitors (?monitor=1) show the output in a small frame: they draw at the size
// they are shown (in device pixels, never above the output's), not the output's full size.
var monitor = /[?&]monitor=1(&|$)/.test(location.search);
/** Canvas pixels per scene pixel: 1, or a monitor's shown size over the scene's (the
 * output's, which the page's ?width= does not change), rounded up to 1/32. */
function monitorScale() {
  if (!monitor || !window.innerWidth || !window.innerHeight) return 1;
  var s = player && player.scene, w = s ? s.w : cfg.width, h = s ? s.h : cfg.height;
  var dpr = window.devicePixelRatio || 1;
  var k = Math.max(window.innerWidth * dpr / w, window.innerHeight * dpr / h);
  return Math.min(1, Math.ceil(k * 32) / 32);
}
/** A monitor follows its frame's size and the scene's. @returns {boolean} whether it changed */
function fitMonitor() {
  var k = monitorScale();
  if (k === player.k) return false;
  player.setScale(k);
  return true;
}
// (monitorScale runs once before the player exists: then it goes by the config's size)
var player = new EuchrePlayer(canvas, { fontUrls: cfg.fonts, scale: monitorScale() });
if (monitor) {
  window.addEventListener("resize", function () {
    if (fitMonitor() && current) { current.done = false; draw(); schedule(); }
  });
}
if (cfg.problem) console.warn("euchre-overlay: " + cfg.problem);

/**
 * What the page knows, for tests and the operator's status (window.euchreOverlay.state).
 * @typedef {{ channel: string, output: string, connected: boolean, connects: number, failures: number,
 *   lastError: string | null, snapshots: number, seq: number, step: number | null, drawnSeq: number,
 *   drawnStep: number | null, manual: boolean, frames: number, analyses: number,
 *   analysisStep: number | null, analysisDrawn: number }} PageState
 */
/** @type {PageState} */
var state = {
  channel: cfg.channel,
  output: cfg.output,
  connected: false,
  connects: 0,
  failures: 0,
  lastError: null,
  snapshots: 0,
  seq: 0,
  step: null,
  drawnSeq: 0,
  drawnStep: null,
  manual: false,
  frames: 0,
  analyses: 0, // analysis messages received
  analysisStep: null, // the step whose analysis layer is drawn (null: none)
  analysisDrawn: 0 // analysis layers drawn
};
/** @type {number | null} */
var layerAt = null; // nowSec() when the current analysis layer was first drawn
/** @type {AnalysisMessage | null} */
var waiting = null; // an analysis message whose step's scene has not arrived yet
/** @type {{ step: number | null, tookMs: number | undefined, receivedAt: number | null, drawnAt: number }[]} */
var analysisLog = [];
/** @type {string[]} */
var events = []; // the last 200 of "scene:N", "layer:N", "drop:N" (for tests and the bench)
/** @type {{ step: number | null, output: string, analysis: unknown, graph: unknown[] | null } | null} */
var lastAnalysis = null; // the last analysis message, without its layer
/** @param {string} what */
function note(what) {
  events.push(what);
  if (events.length > 200) events.shift();
}
/** @type {Current | null} */
var current = null;
/** @type {WebSocket | null} */
var ws = null;
var backoff = 250;
/** @type {ReturnType<typeof setTimeout> | null} */
var retryTimer = null;
var rafPending = false;
/** @type {BenchRecord[]} */
var benchLog = [];
/** @type {number | null} */
var lastPrint = null;
var received = 0; // scenes received by this page (the server's seq restarts with the server)
var drawnId = 0;

function nowSec() { return performance.now() / 1000; }
function epochMs() { return performance.timeOrigin + performance.now(); }

/** @param {PageMessage} obj */
function send(obj) {
  if (ws && ws.readyState === 1) ws.send(JSON.stringify(obj));
}

function socketUrl() {
  var proto = location.protocol === "https:" ? "wss://" : "ws://";
  return proto + location.host + cfg.socket;
}

function connect() {
  retryTimer = null;
  /** @type {WebSocket} */
  var sock;
  try {
    sock = new WebSocket(socketUrl());
  } catch (e) {
    scheduleReconnect();
    return;
  }
  ws = sock;
  var opened = false;
  sock.onopen = function () {
    opened = true;
    if (state.failures > 0) {
      console.info("euchre-overlay: connected to channel " + JSON.stringify(cfg.channel) + " after " + state.failures + " attempt(s)");
    }
    state.failures = 0;
    backoff = 250;
    state.connected = true;
    state.connects += 1;
    /** @type {PageHello} */
    var hello = { type: "hello", output: cfg.output, width: cfg.width, height: cfg.height, visible: !document.hidden };
    // the preview output needs the API token: read from the URL's fragment (#token=...),
    // which the browser never sends to the server, so it never lands in a log
    var found = /(?:^#|&)token=([^&]*)/.exec(location.hash || "");
    if (found) { hello.token = decodeURIComponent(found[1]); }
    send(hello);
  };
  sock.onmessage = function (ev) { onMessage(ev.data); };
  sock.onclose = function (ev) {
    if (ws === sock) {
      ws = null;
      state.connected = false;
      if (!opened) {
        // refused before it opened: no such channel yet, or the server is down
        state.failures += 1;
        if (state.failures === 1) {
          console.warn("euchre-overlay: cannot reach channel " + JSON.stringify(cfg.channel) +
            " (not created yet, or the server is down); the page stays empty and retries every second");
        }
      } else if (ev && ev.code && ev.code !== 1000 && ev.code !== 1001) {
        console.warn("euchre-overlay: connection closed (" + ev.code + (ev.reason ? ": " + ev.reason : "") + "); reconnecting");
      }
      scheduleReconnect();
    }
  };
  sock.onerror = function () { /* onclose follows */ };
}

function scheduleReconnect() {
  if (retryTimer !== null) return;
  var wait = backoff * (0.75 + Math.random() * 0.5);
  backoff = Math.min(backoff * 2, 1000);
  retryTimer = setTimeout(connect, wait);
}

/** @param {string} reason */
function resync(reason) {
  if (ws && ws.readyState === 1) {
    send({ type: "resync", reason: reason });
  } else if (!ws) {
    // not connected: connect now (a connect always brings a snapshot)
    if (retryTimer !== null) { clearTimeout(retryTimer); retryTimer = null; }
    backoff = 250;
    connect();
  }
}

/** @param {string} text */
function onMessage(text) {
  var arrived = bench ? epochMs() : 0;
  /** @type {ServerMessage | null} */
  var msg;
  try { msg = JSON.parse(text); } catch (e) { return; }
  var parsed = bench ? epochMs() : 0;
  if (msg && msg.type === "error") {
    state.lastError = msg.error || msg.message || "error";
    console.error("euchre-overlay: " + state.lastError);
    return;
  }
  if (msg && msg.type === "analysis") { onAnalysis(msg, arrived); return; }
  if (!msg || msg.type !== "scene") return;
  if (!current || current.step !== msg.step || msg.step === null || msg.jump) dropLayer();
  note("scene:" + msg.step);
  state.seq = msg.seq;
  state.step = msg.step;
  if (msg.snapshot) state.snapshots += 1;
  received += 1;
  current = {
    id: received,
    seq: msg.seq,
    step: msg.step,
    t0: nowSec(),
    receivedAt: epochMs(),
    age: msg.age || 0,
    rate: msg.rate || 0,
    dur: msg.scene ? (/** @type {Scene} */ (msg.scene).dur || 0) : 0,
    hasScene: !!msg.scene,
    done: false
  };
  if (msg.scene) {
    player.setScene(/** @type {Scene} */ (msg.scene), 0);
    if (monitor) fitMonitor();
  }
  if (bench) {
    benchLog.push({
      seq: msg.seq, step: msg.step, trace: msg.trace || null, bytes: text.length,
      receivedAt: arrived, parsedAt: parsed, setAt: epochMs(),
      renderedAt: null, drawnAt: null, changedAt: null, changedFrame: null
    });
  }
  draw();
  schedule();
  if (waiting !== null) {
    var w = waiting;
    waiting = null;
    if (w.step === msg.step) showLayer(w);
  }
}

function dropLayer() {
  if (state.analysisStep !== null) note("drop:" + state.analysisStep);
  player.setLayer(null);
  layerAt = null;
  state.analysisStep = null;
}

/** @param {AnalysisMessage} msg @param {number} arrived */
function onAnalysis(msg, arrived) {
  state.analyses += 1;
  lastAnalysis = { step: msg.step, output: msg.output, analysis: msg.analysis, graph: msg.graph || null };
  if (!msg.layer) return;
  if (!current || current.step !== msg.step) {
    // its scene may still be on the way (a snapshot); any other step's is stale
    waiting = msg;
    return;
  }
  showLayer(msg, arrived);
}

/** @param {AnalysisMessage} msg @param {number} [arrived] */
function showLayer(msg, arrived) {
  if (!current) return; // (callers show a layer only over its step's scene)
  var t = current.age + (nowSec() - current.t0) * current.rate;
  player.setLayer(msg.layer, t);
  note("layer:" + msg.step);
  layerAt = nowSec();
  state.analysisStep = msg.step;
  current.done = false;
  draw();
  state.analysisDrawn += 1;
  if (bench) {
    context().getImageData(0, 0, 1, 1); // forces the raster of this draw
    analysisLog.push({ step: msg.step, tookMs: msg.tookMs, receivedAt: arrived || null, drawnAt: epochMs() });
  }
  schedule();
}

/** The page canvas's 2d context (the player's). */
function context() {
  var ctx = canvas.getContext("2d");
  if (!ctx) throw new Error("euchre-overlay: the canvas has no 2d context");
  return ctx;
}

function clearCanvas() {
  var ctx = context();
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.clearRect(0, 0, canvas.width, canvas.height);
}

function draw() {
  if (!current || state.manual) return;
  var t = current.age + (nowSec() - current.t0) * current.rate;
  var lt = layerAt === null ? undefined : nowSec() - layerAt;
  if (current.hasScene) {
    player.renderAt(t, lt);
  } else {
    clearCanvas();
  }
  var rendered = bench ? epochMs() : 0;
  state.frames += 1;
  // the loop stops once nothing moves (every track at its last value; the scene may still
  // be holding): a new scene draws at once on receipt and restarts it
  var layerStill = lt === undefined || player.layerIsStill(lt);
  if ((!current.hasScene || current.rate === 0 || t >= current.dur || player.isStill(t)) && layerStill) current.done = true;
  if (drawnId !== current.id) {
    drawnId = current.id;
    state.drawnSeq = current.seq;
    state.drawnStep = current.step;
    send({ type: "drawn", seq: current.seq, step: current.step });
  }
  if (bench) benchProbe(rendered);
}

function schedule() {
  if (rafPending || !current || current.done || state.manual) return;
  rafPending = true;
  requestAnimationFrame(frame);
}

// A monitor is watched by the producer, not broadcast: it draws its animations at most 30
// times a second (the studio's two frames at the display's 60 took a third of a core more on
// the laptop that may also run OBS).  New scenes and layers are drawn at once all the same.
var MONITOR_FRAME_MS = 1000 / 30;
var drewAt = -Infinity;

/** @param {number} now the frame's time (requestAnimationFrame's) */
function frame(now) {
  rafPending = false;
  if (monitor && now - drewAt < MONITOR_FRAME_MS - 4) { schedule(); return; }
  drewAt = now;
  draw();
  schedule();
}

// ---- bench: when did the pixels first change after each scene arrived?
/** @type {HTMLCanvasElement | null} */
var probe = null;
function fingerprint() {
  if (!probe) {
    probe = document.createElement("canvas");
    probe.width = 192;
    probe.height = 108;
  }
  var pc = probe.getContext("2d", { willReadFrequently: true });
  if (!pc) return 0;
  pc.clearRect(0, 0, probe.width, probe.height);
  pc.drawImage(canvas, 0, 0, probe.width, probe.height);
  var d = pc.getImageData(0, 0, probe.width, probe.height).data;
  var h = 0;
  for (var i = 0; i < d.length; i += 1) h = (Math.imul(h, 31) + d[i]) | 0;
  return h;
}
// renderedAt: the draw calls returned; rasteredAt: a 1-pixel readback forced the raster;
// drawnAt: the bench's own fingerprint of the whole canvas is done
var benchFrames = 0;
/** @param {number} rendered */
function benchProbe(rendered) {
  var rec = benchLog.length ? benchLog[benchLog.length - 1] : null;
  context().getImageData(0, 0, 1, 1); // forces the raster of this draw
  var rastered = epochMs();
  var print = fingerprint();
  var at = epochMs();
  benchFrames += 1;
  if (rec) {
    if (rec.drawnAt === null) { rec.drawnAt = at; rec.renderedAt = rendered; rec.rasteredAt = rastered; rec.firstFrame = benchFrames; }
    if (rec.changedAt === null && lastPrint !== null && print !== lastPrint) {
      rec.changedAt = at;
      rec.changedRenderedAt = rendered;
      rec.changedFrame = benchFrames - /** @type {number} */ (rec.firstFrame); // set on its first frame
    }
  }
  lastPrint = print;
}

// ---- OBS and tab visibility: draw the current state at once when shown again
// (OBS's browser source dispatches them as CustomEvents: detail {visible} / {active})
window.addEventListener("obsSourceVisibleChanged", function (e) {
  var detail = e && /** @type {CustomEvent<{ visible?: boolean } | null>} */ (e).detail;
  if (detail && detail.visible) resync("visible");
});
window.addEventListener("obsSourceActiveChanged", function (e) {
  var detail = e && /** @type {CustomEvent<{ active?: boolean } | null>} */ (e).detail;
  if (detail && detail.active) resync("active");
});
document.addEventListener("visibilitychange", function () {
  if (!document.hidden) resync("visible");
});

// fonts arriving after a draw: draw the current picture again with them
if (player.ready && typeof player.ready.then === "function") {
  player.ready.then(function () {
    if (current) { current.done = false; draw(); schedule(); }
  });
}

var euchreOverlay = {
  state: state,
  resync: resync,
  resume: function () {
    state.manual = false;
    if (current) { current.done = false; draw(); schedule(); }
  },
  player: player,
  bench: function () { return benchLog; },
  analysisBench: function () { return analysisLog; },
  analysisEvents: function () { return events.slice(); },
  analysis: function () { return lastAnalysis; },
  current: function () { return current; }
};
// for the deterministic capture (overlay/capture.py), tests and the bench
Object.assign(window, {
  /** Draw the current scene at its time t and stop the live clock; returns the scene's seq.
   * @param {number} t */
  renderAt: function (t) {
    state.manual = true;
    if (current && current.hasScene) player.renderAt(t);
    else clearCanvas();
    return state.seq;
  },
  euchreOverlay: euchreOverlay
});

connect();
