// @ts-check
// The logger page: a person beside the table taps the up-card, each call and each card; the
// page offers only what the engine says is legal (GET /api/channels/{id}/choices), queues each
// action with its seq (outbox.js: kept through a reload, sent in order when the network is
// back) and shows the table as the engine sees it.  Every choice button carries data-action:
// the exact JSON it posts (seq aside), for automation and tests.
//
// Signed in like the studio: the channel's feed key or the API token, typed once and kept in
// sessionStorage (never in a URL; a link may carry it in the fragment, #key=…, which the page
// takes and removes).  One logger holds a channel at a time (X-Logger: this tab's id).

import { Outbox, epochMs } from "./outbox.js";
import { h, cardText, callText, isRed, renderTable } from "./table.js";

/** @typedef {import("./outbox.js").Action} Action */
/** @typedef {import("./outbox.js").Entry} Entry */
/** @typedef {import("./outbox.js").Sent} Sent */
/** @typedef {import("./table.js").TableState} TableState */
/**
 * One choice: the action's JSON, a label, the key a keyboard types, its group, the seat.
 * @typedef {{ action: Action, label: string, key: string, group: string, seat: number | null, warning: string | null, follows: boolean }} Choice
 */
/**
 * The engine's choices (engine/choices.py Choices.to_json).
 * @typedef {{ phase: string, seat: number | null, deal: number, dealer: number | null, dealerOpen: boolean, choices: Choice[], free: string[], deck: string[], note: string | null, hands: string[][] }} Choices
 */
/** @typedef {{ index: number, action: Action, seat: number | null, label: string }} DealAction */
/** @typedef {{ name: string, via: string, since: number, lastSeen: number }} HolderInfo */
/**
 * What GET …/choices answers (overlay/service/routes/logger.py).
 * @typedef {object} View
 * @property {string} channel
 * @property {string | null} title
 * @property {number} seq
 * @property {number} expected
 * @property {number} revision the channel's revision (every accepted change bumps it)
 * @property {HolderInfo | null} holder
 * @property {boolean} you
 * @property {{ step: number, deal: number, dealNumber: number, kind: string, game: number } | null} programAt where the program output is (in a match, game from 0)
 * @property {{ number: number, label: string | null } | null} game the game being logged, when the channel plays a match
 * @property {number[] | null} matchScore games won at this table by each team (seats 0 and 2 first), this game counted once over
 * @property {string[]} players
 * @property {number} deals
 * @property {TableState | null} state
 * @property {Choices} choices
 * @property {DealAction[]} dealActions
 * @property {Choice[]} pad
 * @property {number[]} nextDealers
 * @property {number | null} at
 */

const CH = decodeURIComponent(location.pathname.split("/").filter(Boolean)[1] || "");
const enc = encodeURIComponent;
const KEY_STORE = `euchre-logger.key.${CH}`;
const STUDIO_TOKEN = "euchre-overlay.token";
const ID_STORE = "euchre-logger.id";
const NAME_STORE = "euchre-logger.name";
/** a tap's answer later than this shows the unchecked pad, so logging goes on */
const SLOW_MS = 800;

/**
 * The page's state.
 * @type {{ cred: string, id: string, name: string, view: View | null, dealer: number | null, hands: string[][] | null,
 *   handSeat: number, editing: boolean, editAt: number | null, editView: View | null, typed: string, numpad: string,
 *   warnings: string[], error: string | null, lastTap: number, program: boolean, fetching: boolean, nextAsked: boolean }}
 */
const P = {
  cred: "", id: "", name: "", view: null, dealer: null, hands: null, handSeat: 0, editing: false, editAt: null,
  editView: null, typed: "", numpad: "", warnings: [], error: null, lastTap: 0,
  program: !/[?&]program=0(&|$)/.test(location.search), fetching: false, nextAsked: false,
};

/** @param {string} sel @returns {HTMLElement} */
function $(sel) {
  const el = document.querySelector(sel);
  if (!(el instanceof HTMLElement)) throw new Error(`no ${sel} on the page`);
  return el;
}

function randomId() {
  const a = new Uint8Array(8);
  crypto.getRandomValues(a);
  return Array.from(a, (b) => b.toString(16).padStart(2, "0")).join("");
}

// ------------------------------------------------------------------ requests

function headers() {
  return {
    Authorization: `Bearer ${P.cred}`,
    "X-Logger": P.id,
    "X-Logger-Name": enc(P.name),
    "Content-Type": "application/json",
  };
}

/**
 * One request: the answer as ``Sent`` (a network failure or a 5xx is ``network``: nothing
 * was changed, send again later).
 * @param {string} method @param {string} path @param {unknown} [body] @param {number} [timeout]
 * @returns {Promise<Sent>}
 */
async function call(method, path, body, timeout = 5000) {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), timeout);
  try {
    const r = await fetch(path, { method, headers: headers(), body: body === undefined ? undefined : JSON.stringify(body), cache: "no-store", signal: ctl.signal });
    const text = await r.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch { data = { error: text.slice(0, 300) }; }
    if (r.ok) return { kind: "ok", body: data };
    if (r.status >= 500) return { kind: "network", error: (data && data.error) || `HTTP ${r.status}` };
    return { kind: "refused", status: r.status, body: data };
  } catch (err) {
    return { kind: "network", error: String(err) };
  } finally {
    clearTimeout(timer);
  }
}

const api = (/** @type {string} */ tail) => `/api/channels/${enc(CH)}${tail}`;

// ------------------------------------------------------------------ the outbox

const outbox = new Outbox(`euchre-logger.queue.${CH}`, (e) => call("POST", api("/logger/actions"), { seq: e.seq, ...e.action }));

/** @param {Entry} e @param {any} body */
outbox.onAck = (e, body) => {
  if (body && body.view) adopt(body.view);
  const w = body && body.ack && body.ack.warnings;
  if (Array.isArray(w) && w.length) P.warnings = w.map(String);
  else if (e.action.kind !== "undo") P.warnings = [];
  if (e.action.kind === "new_deal") { P.dealer = null; P.hands = null; }
};

/** @param {Entry} e @param {number} status @param {any} body */
outbox.onRefused = (e, status, body) => {
  const kind = body && body.kind;
  if (kind === "sequence_gap" && typeof body.expected === "number") {
    // the server's game starts its numbers afresh (a new game was loaded): nothing waiting
    // reached it, so the queue is numbered from the server's next seq and sent again
    renumber(body.expected);
    return;
  }
  if (kind === "logger_held") P.error = `${body.error}`;
  else P.error = `Action ${e.seq} (${e.label}) was refused: ${(body && body.error) || `HTTP ${status}`}`;
  void refresh();
};

/** @param {number} from */
function renumber(from) {
  outbox.setExpected(from);
  let seq = from;
  for (const e of outbox.entries) if (e.state !== "acked") { e.seq = seq++; e.state = "queued"; e.error = null; }
  outbox.stopped = false;
  outbox.save();
  void outbox.pump();
}

outbox.subscribe(() => render());
window.addEventListener("online", () => { void outbox.pump(); });

/** Take the server's view (it says which seq the server has).  An action's answer leaves
 * out the pad (the same for the whole game) and the deal's actions (asked for when the edit
 * list opens). @param {View} v */
function adopt(v) {
  if (!v.pad) v.pad = P.view ? P.view.pad : [];
  if (!v.dealActions) v.dealActions = [];
  P.view = v;
  outbox.setExpected(v.expected);
}

// ------------------------------------------------------------------ sign-in

async function start() {
  let id = sessionStorage.getItem(ID_STORE);
  if (!id) { id = randomId(); sessionStorage.setItem(ID_STORE, id); }
  P.id = id;
  P.name = localStorage.getItem(NAME_STORE) || `Logger ${id.slice(0, 4)}`;
  $("#channel").textContent = CH;
  $("#signin-channel").textContent = CH;
  const fromLink = /[#&]key=([^&]+)/.exec(location.hash);
  if (fromLink) history.replaceState(null, "", location.pathname + location.search);
  const stored = fromLink ? decodeURIComponent(fromLink[1]) : sessionStorage.getItem(KEY_STORE) || sessionStorage.getItem(STUDIO_TOKEN);
  if (stored && (await signIn(stored))) return;
  const form = $("#signin");
  form.hidden = false;
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const input = /** @type {HTMLInputElement} */ ($("#key"));
    if (await signIn(input.value.trim())) form.hidden = true;
  });
}

/** @param {string} cred @returns {Promise<boolean>} */
async function signIn(cred) {
  P.cred = cred;
  const r = await call("GET", api("/choices"));
  if (r.kind === "refused" && (r.status === 401 || r.status === 403)) {
    sessionStorage.removeItem(KEY_STORE);
    $("#signin-error").textContent = r.status === 403 ? "That key is not one of this channel's." : "That key or token was refused.";
    return false;
  }
  if (r.kind === "refused" && r.status === 404) {
    // a channel that is not there (a mistyped address): said here, not a logger for nothing
    /** @type {HTMLInputElement} */ ($("#key")).value = cred; // (Sign in tries again, once it is made)
    $("#signin-error").textContent = await missingChannel();
    return false;
  }
  sessionStorage.setItem(KEY_STORE, cred);
  $("#signin").hidden = true;
  $("#app").hidden = false;
  setup();
  if (r.kind === "ok") adopt(r.body);
  else P.error = r.kind === "refused" ? String((r.body && r.body.error) || `HTTP ${r.status}`) : `No answer from the server: ${r.error}`;
  if (P.view && !P.view.holder) await claim(false);
  render();
  void outbox.pump();
  setInterval(() => { void heartbeat(); }, 4000);
  setInterval(() => renderStatus(), 1000);
  return true;
}

/** Why the channel of the address cannot be logged: it does not exist; with the API token,
 * the channel meant (ids are case-sensitive) or the ones there are. @returns {Promise<string>} */
async function missingChannel() {
  let hint = " Check the address, or make the channel in the studio.";
  const r = await call("GET", "/api/channels");
  if (r.kind === "ok" && r.body && Array.isArray(r.body.channels)) {
    /** @type {string[]} */
    const ids = r.body.channels.map((/** @type {{ id: string }} */ c) => String(c.id));
    const near = ids.find((id) => id.toLowerCase() === CH.toLowerCase());
    if (near) hint = ` Did you mean "${near}"? (channel ids are case-sensitive)`;
    else if (ids.length) hint = ` The channels here: ${ids.slice(0, 8).join(", ")}${ids.length > 8 ? ", \u2026" : ""}.`;
    else hint = " The server has no channel yet: make one in the studio.";
  }
  return `There is no channel "${CH}" on this server.${hint}`;
}

/** @param {boolean} force */
async function claim(force) {
  const r = await call("POST", api("/logger"), { force });
  if (r.kind === "ok") {
    P.error = null;
    if (outbox.stopped) outbox.retryRefused();
  }
  await refresh();
}

/** Ask the server for the view (with the dealer and hands chosen at a deal start). */
async function refresh() {
  const q = new URLSearchParams();
  if (P.dealer !== null) q.set("dealer", String(P.dealer));
  if (P.hands) q.set("hands", P.hands.map((hand) => hand.join(",")).join("|"));
  const r = await call("GET", api(`/choices${q.toString() ? "?" + q : ""}`));
  if (r.kind === "ok") {
    adopt(r.body); // with actions queued the pad is shown; their numbers stand (outbox.nextSeq)
    if (P.error && P.error.startsWith("No answer")) P.error = null;
  } else if (r.kind === "refused") {
    P.error = String((r.body && r.body.error) || `HTTP ${r.status}`);
  }
  render();
}

async function heartbeat() {
  if (P.fetching || P.editing) return;
  if (outbox.pending().length) { void outbox.pump(); return; }
  P.fetching = true;
  try { await refresh(); } finally { P.fetching = false; }
}

// ------------------------------------------------------------------ taking an action

/** @param {Choice} c @param {number} [tappedAt] */
function take(c, tappedAt = epochMs()) {
  if (P.editing && P.editAt !== null) { void sendEdit(c); return; }
  P.lastTap = tappedAt;
  P.error = null;
  const what = { new_deal: "Deal, up-card", call: "Call", discard: "Discard", card: "Card" }[String(c.action.kind)] || "";
  outbox.add(c.action, `${what} ${c.label}`.trim(), tappedAt);
  setTimeout(() => render(), SLOW_MS + 20); // the pad, if the answer is late
}

function undo() {
  P.typed = "";
  const back = outbox.takeBackLast();
  if (back) return;
  if (!undoable()) return; // a game with no deal yet (a new game, a match's next game): the engine would refuse it and stop the queue
  outbox.add({ kind: "undo" }, "Undo");
}

/** Whether Undo has something to take back: an action queued, or a deal on the server. */
function undoable() {
  return outbox.pending().length > 0 || !P.view || P.view.deals > 0;
}

// ------------------------------------------------------------------ edit

/** @param {number} at the action's position in the deal */
async function openEdit(at) {
  P.editAt = at;
  const r = await call("GET", api(`/choices?at=${at}`));
  if (r.kind === "ok") P.editView = r.body;
  else P.error = r.kind === "refused" ? String(r.body && r.body.error) : "No answer: edits need the connection";
  render();
}

/** @param {Choice} c */
async function sendEdit(c) {
  if (!P.view || P.editAt === null) return;
  const r = await call("POST", api("/logger/edit"), { seq: P.view.seq, at: P.editAt, action: c.action });
  if (r.kind === "ok") {
    adopt(r.body.view);
    P.warnings = (r.body.ack && r.body.ack.warnings) || [];
    closeEdit();
  } else {
    P.error = r.kind === "refused" ? `Edit refused: ${r.body && r.body.error}` : "No answer: the edit was not made";
    render();
  }
}

function closeEdit() {
  P.editing = false;
  P.editAt = null;
  P.editView = null;
  render();
}

// ------------------------------------------------------------------ what is offered

/** True when the page's view is the server's game with every action taken in it. */
function synced() {
  return !outbox.pending().length;
}

/** The cards of the deal on the table that are out of play, as the page knows them
 * (the server's last view and the actions queued after it): what the unchecked pad leaves out. */
function seen() {
  const out = new Set();
  const pend = outbox.pending().map((e) => e.action);
  const lastDeal = pend.map((a) => a.kind).lastIndexOf("new_deal");
  const s = P.view && P.view.state;
  if (lastDeal < 0 && s && s.kind !== "deal_scored" && s.kind !== "game_over") {
    for (const t of [...s.tricks, ...(s.trick ? [s.trick] : [])]) for (const c of t.cards) out.add(c);
    if (s.discard) out.add(s.discard);
  }
  for (const a of pend.slice(lastDeal + 1)) if ((a.kind === "card" || a.kind === "discard") && typeof a.card === "string") out.add(a.card);
  return out;
}

/** The choices shown now: the engine's when the page is in step with the server, else the
 * unchecked pad (offline, or a late answer) the engine judges when the queue arrives. */
function offered() {
  const v = P.editing && P.editView ? P.editView : P.view;
  if (!v) return { mode: "none", list: /** @type {Choice[]} */ ([]) };
  if (P.editing) return { mode: P.editView ? "edit" : "none", list: P.editView ? P.editView.choices.choices : [] };
  if (synced()) return { mode: "engine", list: v.choices.choices };
  const late = outbox.online && !outbox.stopped && epochMs() - P.lastTap < SLOW_MS;
  if (late) return { mode: "wait", list: v.choices.choices };
  const gone = seen();
  const deals = outbox.pending().filter((e) => e.action.kind === "new_deal").length;
  const dealer = v.nextDealers.length ? v.nextDealers[deals % v.nextDealers.length] : 0;
  const list = v.pad
    .filter((c) => !((c.group === "card" || c.group === "discard") && gone.has(String(c.action.card))))
    .map((c) => (c.group === "upcard" ? { ...c, action: { ...c.action, dealer: deals === 0 && P.dealer !== null ? P.dealer : dealer }, seat: dealer } : c));
  return { mode: "pad", list };
}

// ------------------------------------------------------------------ drawing

function setup() {
  $("#undo").addEventListener("click", () => undo());
  $("#edit").addEventListener("click", () => {
    P.editing = !P.editing;
    P.editAt = null;
    P.editView = null;
    if (P.editing) void refresh(); // the deal's actions, as the server has them
    render();
  });
  $("#takeover").addEventListener("click", () => { void claim(true); });
  $("#drop").addEventListener("click", () => { outbox.dropRefused(); P.error = null; void refresh(); });
  $("#retry").addEventListener("click", () => { P.error = null; outbox.retryRefused(); });
  $("#name").addEventListener("change", (ev) => {
    const input = /** @type {HTMLInputElement} */ (ev.target);
    P.name = input.value.trim().slice(0, 60) || P.name;
    localStorage.setItem(NAME_STORE, P.name);
  });
  $("#signout").addEventListener("click", async () => {
    await call("DELETE", api("/logger"));
    sessionStorage.removeItem(KEY_STORE);
    location.reload();
  });
  $("#show-program").addEventListener("click", () => { P.program = !P.program; renderProgram(); });
  $("#download").addEventListener("click", () => { void download(); });
  /** @type {HTMLInputElement} */ ($("#name")).value = P.name;
  document.addEventListener("keydown", onKey);
  renderProgram();
}

/** The game as the server keeps it, saved as a file (the request carries the key, so it is
 * fetched here and handed to the browser as a blob). */
async function download() {
  try {
    const r = await fetch(api("/logger/game"), { headers: headers(), cache: "no-store" });
    if (!r.ok) throw new Error(`HTTP ${r.status}`);
    const kind = r.headers.get("Content-Type") || "";
    const named = /filename="([^"]+)"/.exec(r.headers.get("Content-Disposition") || "");
    const a = /** @type {HTMLAnchorElement} */ (h("a", { download: named ? named[1] : `${CH}.${kind.includes("json") ? "egn" : "egnb"}` }));
    a.href = URL.createObjectURL(await r.blob());
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 5000);
  } catch (err) {
    P.error = `The game could not be downloaded: ${err}`;
    render();
  }
}

function render() {
  renderStatus();
  const v = P.view;
  // a match: which game, on a line of its own under the bar's (which keeps its room for the connection)
  const game = $("#game-label");
  game.hidden = !(v && v.game);
  game.textContent = v && v.game ? v.game.label || `Game ${v.game.number}` : "";
  $("#download").textContent = v && v.game ? "Download the match (EMN)" : "Download the game (EGN)";
  const held = $("#held");
  held.hidden = !(v && v.holder && !v.you);
  if (v && v.holder && !v.you) $("#held-text").textContent = `This channel's logger is held by ${v.holder.name} (last heard ${Math.round(v.holder.lastSeen)} s ago). Taking over stops theirs.`;
  renderTable($("#table"), v ? v.state : null, v ? v.players : []);
  renderChoices();
  renderEdit();
  renderQueue();
  const err = $("#error");
  err.hidden = !P.error;
  $("#error-text").textContent = P.error || "";
  $("#drop").hidden = !outbox.stopped;
  $("#retry").hidden = !outbox.stopped;
  const warn = $("#warnings");
  warn.replaceChildren(...P.warnings.map((w) => h("div", { class: "warning" }, w)));
  /** @type {HTMLButtonElement} */ ($("#edit")).disabled = !synced() || !outbox.online;
  /** @type {HTMLButtonElement} */ ($("#undo")).disabled = !undoable();
  $("#edit").textContent = P.editing ? "Done editing" : "Edit deal";
}

function renderStatus() {
  const v = P.view;
  const pend = outbox.pending();
  const net = $("#net");
  const server = v ? `server has action ${v.seq}` : "server not reached yet";
  let text;
  let cls;
  if (outbox.stopped) {
    const bad = pend.find((e) => e.state === "refused");
    text = `Stopped: action ${bad ? bad.seq : "?"} was refused \u00b7 ${pend.length} not sent \u00b7 ${server}`;
    cls = "stopped";
  } else if (!outbox.online) {
    const secs = outbox.offlineSince ? Math.round((epochMs() - outbox.offlineSince) / 1000) : 0;
    text = `OFFLINE ${secs} s \u00b7 ${pend.length} queued${pend.length ? ` (${pend[0].seq}\u2013${pend[pend.length - 1].seq})` : ""}, sent when the network is back \u00b7 ${server}`;
    cls = "offline";
  } else if (pend.length) {
    text = `Sending ${pend.length} (${pend[0].seq}\u2013${pend[pend.length - 1].seq}) \u00b7 ${server}`;
    cls = "sending";
  } else {
    text = `Live \u00b7 all sent \u00b7 ${server}`;
    cls = "live";
  }
  net.textContent = text;
  net.className = cls;
  net.dataset.pending = String(pend.length);
  const prog = v && v.programAt ? `Program: ${v.game ? `game ${v.programAt.game + 1}, ` : ""}deal ${v.programAt.dealNumber + 1}, ${v.programAt.kind.replace("_", " ")}` : "Program: nothing yet";
  $("#program-at").textContent = prog;
}

/** What the choices were last drawn from: they are drawn again only when it changes (a
 * button is not replaced under a finger between the tap and its answer). */
let drawn = "";

function renderChoices() {
  const root = $("#choices");
  const v = P.view;
  const { mode, list } = offered();
  const blocked = Boolean(v && v.holder && !v.you) || outbox.stopped;
  const sig = JSON.stringify([v && v.seq, v && v.revision, mode, blocked, P.editing, P.editAt, P.editView && P.editView.at, P.dealer, P.hands, P.handSeat, P.nextAsked, synced(), outbox.online, list.map((c) => [c.action, c.warning])]);
  if (sig === drawn) return;
  drawn = sig;
  root.replaceChildren();
  root.dataset.mode = mode;
  if (!v) return;
  const prompt = $("#prompt");
  const ch = (P.editing && P.editView ? P.editView : v).choices;
  const who = (/** @type {number | null} */ seat) => (seat === null ? "" : v.players[seat] || `Seat ${seat}`);
  if (mode === "pad") {
    prompt.textContent = outbox.online ? "Waiting for the server: these are not checked yet" : "Offline: these are not checked; the engine judges them when they arrive";
  } else if (mode === "edit" && P.editAt !== null) {
    const was = v.dealActions[P.editAt];
    prompt.textContent = `Replace: ${was ? was.label : "?"}`;
  } else {
    prompt.textContent = {
      deal: `Deal ${ch.deal + 1}: ${who(ch.dealer)} deals \u2014 tap the up-card`,
      bidding: `${who(ch.seat)} to call`,
      discard: `${who(ch.seat)} discards (if you saw it), or ${who(ch.choices.find((c) => c.group === "card")?.seat ?? null)} leads`,
      play: `${who(ch.seat)} to play`,
      over: "The game is over",
    }[ch.phase] || ch.phase;
  }
  $("#note").textContent = mode === "pad" ? "" : ch.note || "";
  if (mode === "engine" && ch.phase === "deal") root.append(dealTools(ch, v));
  if (!P.editing && ch.phase === "over") root.append(nextGameTools(v, blocked));
  const groups = [
    ["upcard", "Up-card"], ["call", "Call"], ["alone", "Alone"], ["defend", "Defend alone"],
    ["discard", "Dealer's discard"], ["card", "Card"],
  ];
  if (mode === "pad") groups.sort((a, b) => (a[0] === "card" ? -1 : b[0] === "card" ? 1 : 0));
  let n = 0;
  for (const [group, title] of groups) {
    const items = list.filter((c) => c.group === group);
    if (!items.length) continue;
    const titled = mode === "pad" || group === "discard" || group === "defend" || (group === "upcard" && P.hands !== null);
    const box = h("div", { class: `group g-${group}` }, titled ? h("h3", {}, title) : null);
    for (const c of items) {
      n += 1;
      const current = mode === "edit" && P.editAt !== null && JSON.stringify(v.dealActions[P.editAt]?.action) === JSON.stringify(c.action);
      const b = h("button", {
        class: `choice ${group}${c.follows ? "" : " off"}${c.warning ? " warn" : ""}${current ? " current" : ""}${isRed(String(c.action.card || c.action.upCard || "")) ? " red" : ""}`,
        "data-action": JSON.stringify(c.action),
        "data-key": c.key,
        "data-n": n,
        title: c.warning || null,
        disabled: blocked || mode === "wait" || mode === "none",
      }, h("span", { class: "n" }, String(n)), label(c), c.warning ? h("span", { class: "bang" }, "!") : null);
      b.addEventListener("click", (ev) => take(c, performance.timeOrigin + ev.timeStamp));
      box.append(b);
    }
    root.append(box);
  }
}

/** @param {Choice} c */
function label(c) {
  if (c.group === "card" || c.group === "discard" || c.group === "upcard") {
    const name = String(c.action.card || c.action.upCard || "");
    return h("span", { class: "face" }, cardText(name));
  }
  if (c.action.kind === "call") return h("span", { class: "face" }, c.action.aloneDefender !== undefined ? c.label : callText(String(c.action.call), Boolean(c.action.alone)));
  return h("span", { class: "face" }, c.label);
}

/** The dealer (rotating by itself; the first deal's is chosen here) and the hands a
 * hole-card camera shows, at a deal start. @param {Choices} ch @param {View} v */
function dealTools(ch, v) {
  const seats = v.players.map((name, seat) => {
    const b = h("button", { class: `seat-pick${seat === ch.dealer ? " on" : ""}`, "data-dealer": seat }, name.split(" ")[0] || `Seat ${seat}`);
    b.addEventListener("click", () => { P.dealer = seat; void refresh(); });
    return b;
  });
  const box = h("div", { class: "deal-tools" }, h("div", { class: "row" }, h("span", { class: "what" }, "Dealer"), ...seats));
  const toggle = h("button", { class: "hands-toggle" }, P.hands ? "No hands" : "Enter hands");
  toggle.addEventListener("click", () => { P.hands = P.hands ? null : v.players.map(() => []); P.handSeat = 0; void refresh(); });
  box.append(toggle);
  if (P.hands) {
    const hands = P.hands;
    const tabs = v.players.map((name, seat) => {
      const b = h("button", { class: `seat-pick${seat === P.handSeat ? " on" : ""}` }, `${name.split(" ")[0]} ${hands[seat].length}/5`);
      b.addEventListener("click", () => { P.handSeat = seat; render(); });
      return b;
    });
    const mine = hands[P.handSeat].map((c) => {
      const b = h("button", { class: `choice small${isRed(c) ? " red" : ""}`, "data-held": c }, cardText(c));
      b.addEventListener("click", () => { hands[P.handSeat] = hands[P.handSeat].filter((x) => x !== c); void refresh(); });
      return b;
    });
    const free = ch.free.map((c) => {
      const b = h("button", { class: `choice small${isRed(c) ? " red" : ""}`, "data-card": c }, cardText(c));
      b.addEventListener("click", () => {
        if (hands[P.handSeat].length >= 5) return;
        hands[P.handSeat].push(c);
        if (hands[P.handSeat].length === 5) P.handSeat = (P.handSeat + 1) % hands.length;
        void refresh();
      });
      return b;
    });
    const first = (v.players[P.handSeat] || `Seat ${P.handSeat}`).split(" ")[0];
    box.append(h("div", { class: "row" }, ...tabs),
      h("div", { class: "row hand-now" }, h("span", { class: "what" }, `${first}'s hand${mine.length ? " (tap a card to take it back)" : ": tap cards below"}`), ...mine),
      h("h3", {}, `Cards not in a hand (tap to give to ${first})`), h("div", { class: "grid" }, ...free));
  }
  return box;
}

/** At the end of a game: the next game at this table (the same players and rules), after
 * two taps (a game cannot be taken back by Undo). @param {View} v @param {boolean} blocked */
function nextGameTools(v, blocked) {
  const number = (v.game ? v.game.number : 1) + 1;
  const box = h("div", { class: "next-game" });
  if (v.matchScore) {
    const side = (/** @type {number} */ t) => [t, t + 2].map((s) => (v.players[s] || `Seat ${s}`).split(" ")[0]).join(" & ");
    box.append(h("p", { class: "match-score" }, `Games won: ${side(0)} ${v.matchScore[0]} \u2013 ${v.matchScore[1]} ${side(1)}`));
  }
  box.append(h("p", {}, `Next: game ${number} at this table, with the same players and rules. The game just played stays on the channel as game ${number - 1} of the match.`));
  const off = blocked || !synced() || !outbox.online;
  if (!P.nextAsked) {
    const b = h("button", { class: "choice next", id: "next-game", disabled: off }, `Start game ${number}`);
    b.addEventListener("click", () => { P.nextAsked = true; render(); });
    box.append(b);
  } else {
    const yes = h("button", { class: "choice next", id: "next-game-yes", disabled: off }, `Yes, start game ${number} now`);
    yes.addEventListener("click", () => { void startNextGame(); });
    const no = h("button", { class: "choice", id: "next-game-no" }, "Not yet");
    no.addEventListener("click", () => { P.nextAsked = false; render(); });
    box.append(yes, no);
  }
  return box;
}

async function startNextGame() {
  if (!P.view) return;
  const r = await call("POST", api("/logger/next-game"), { seq: P.view.seq });
  P.nextAsked = false;
  if (r.kind === "ok") {
    P.dealer = null;
    P.hands = null;
    P.warnings = [];
    adopt(r.body.view);
  } else {
    P.error = r.kind === "refused" ? `The next game was not started: ${r.body && r.body.error}` : "No answer: the next game was not started";
  }
  render();
}

/** What the edit list was last drawn from (its buttons too stay under a finger). */
let drawnEdit = "";

function renderEdit() {
  const box = $("#edit-list");
  box.hidden = !P.editing;
  if (!P.editing || !P.view) { drawnEdit = ""; return; }
  const sig = JSON.stringify([P.editAt, P.view.dealActions.map((a) => [a.index, a.label])]);
  if (sig === drawnEdit) return;
  drawnEdit = sig;
  box.replaceChildren(
    h("h3", {}, "Tap the action to correct; the engine checks every action after it again"),
    ...P.view.dealActions.map((a) => {
      const b = h("button", { class: `deal-action${a.index === P.editAt ? " on" : ""}`, "data-index": a.index }, `${a.index + 1}. ${a.label}`);
      b.addEventListener("click", () => { void openEdit(a.index); });
      return b;
    }),
  );
}

function renderQueue() {
  const list = $("#queue");
  const items = outbox.entries.slice(-12).reverse();
  list.replaceChildren(...items.map((e) => h("li", { class: e.state, "data-seq": e.seq },
    h("span", { class: "seq" }, `#${e.seq}`), ` ${e.label} `, h("span", { class: "st" }, e.duplicate ? "had it already" : { queued: "queued", sending: "sending", acked: "on the server", refused: "refused" }[e.state]))));
}

function renderProgram() {
  const box = $("#program");
  const frame = box.querySelector("iframe");
  if (P.program && !frame) box.prepend(h("iframe", { src: `/overlay/${enc(CH)}?output=program&monitor=1&width=1280&height=720`, title: "program output", tabindex: -1 }));
  if (!P.program && frame) frame.remove();
  $("#show-program").textContent = P.program ? "Hide program" : "Show program";
}

// ------------------------------------------------------------------ keyboard and keypad

/** @param {KeyboardEvent} ev */
function onKey(ev) {
  const t = ev.target;
  if (t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement) return;
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const list = offered().list;
  if (ev.code.startsWith("Numpad")) { keypad(ev, list); return; }
  if (ev.key === "Backspace") {
    ev.preventDefault();
    if (P.typed) P.typed = P.typed.slice(0, -1);
    else undo();
    showTyped();
    return;
  }
  if (ev.key === "Escape") { P.typed = ""; showTyped(); return; }
  if (ev.key === "Enter") { fire(list, true); return; }
  if (ev.key.length !== 1 || !/[0-9A-Za-z]/.test(ev.key)) return;
  ev.preventDefault();
  P.typed = (P.typed + ev.key).replace(/10/g, "T");
  fire(list, false);
}

let typedTimer = /** @type {ReturnType<typeof setTimeout> | null} */ (null);

/** Fire the choice the typed keys name once they name one and no longer key starts with
 * them (else after a short pause, or on Enter). @param {Choice[]} list @param {boolean} now */
function fire(list, now) {
  if (typedTimer !== null) { clearTimeout(typedTimer); typedTimer = null; }
  const typed = P.typed;
  if (!typed) return;
  const low = typed.toLowerCase();
  // a "1" at the end may be the start of "10" (typed for a ten, T)
  const ahead = low.endsWith("1") ? low.slice(0, -1) + "t" : low;
  const exact = list.filter((c) => c.key === typed);
  const loose = exact.length ? exact : list.filter((c) => c.key.toLowerCase() === low);
  const longer = list.filter((c) => (c.key.length > typed.length && c.key.toLowerCase().startsWith(low)) || (ahead !== low && c.key.toLowerCase().startsWith(ahead)));
  const hit = loose.length === 1 ? loose[0] : null;
  if (hit && (now || !longer.length)) {
    P.typed = "";
    showTyped();
    if (!blockedNow()) take(hit);
    return;
  }
  if (hit) typedTimer = setTimeout(() => fire(list, true), 700);
  else if (!longer.length) { P.typed = ""; $("#typed").textContent = `no choice "${typed}"`; return; }
  showTyped();
}

function blockedNow() {
  const v = P.view;
  const mode = offered().mode;
  return !v || Boolean(v.holder && !v.you) || outbox.stopped || mode === "wait" || mode === "none";
}

function showTyped() { $("#typed").textContent = P.typed ? `typed: ${P.typed}` : ""; }

/** A USB keypad: digits and Enter pick the numbered button, - (or Backspace) undoes, + passes.
 * @param {KeyboardEvent} ev @param {Choice[]} list */
function keypad(ev, list) {
  ev.preventDefault();
  const code = ev.code;
  if (/^Numpad[0-9]$/.test(code)) { P.numpad += code.slice(6); $("#typed").textContent = `#${P.numpad}`; return; }
  if (code === "NumpadEnter") {
    const n = Number(P.numpad);
    P.numpad = "";
    $("#typed").textContent = "";
    const button = document.querySelector(`#choices button.choice[data-n="${n}"]`);
    if (button instanceof HTMLButtonElement && !button.disabled) button.click();
    return;
  }
  if (code === "NumpadSubtract") { P.numpad = ""; undo(); return; }
  if (code === "NumpadAdd") {
    const pass = list.find((c) => c.key === "p");
    if (pass && !blockedNow()) take(pass);
    return;
  }
  if (code === "NumpadDecimal") { P.numpad = ""; $("#typed").textContent = ""; }
}

// ------------------------------------------------------------------ for tests and the bench

/** @type {any} */ (window).euchreLogger = {
  outbox,
  view: () => P.view,
  log: () => outbox.log.map((e) => ({ seq: e.seq, action: e.action, tappedAt: e.tappedAt, sentAt: e.sentAt, ackAt: e.ackAt, tries: e.tries, duplicate: e.duplicate, steps: e.steps })),
  pending: () => outbox.pending().length,
  mode: () => offered().mode,
};

void start();
