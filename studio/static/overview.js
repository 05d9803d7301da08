// @ts-check
// The overview: every table at a glance.  A card per channel with a live thumbnail of its
// program output (the real page player, marked as the studio's frame so it is not counted as
// an OBS page), its game and deal, whether its logger is sending, OBS pages per output and
// its faults; the pages waiting on a channel that does not exist; every notice.  A click on a
// card opens that channel.

import { h, clear, count, $, afterPress } from "./dom.js";
import { G, label, setStallAfter } from "./glance.js";
import { notices, meant, openChannel } from "./notices.js";
import { OUTPUTS, enc } from "./session.js";

/** @import { ChannelInfo } from "./glance.js" */

/** the live thumbnails, kept between refreshes (a new frame would reconnect and flicker) */
const frames = new Map();

export function overviewOpen() {
  return !$("#overview").hidden;
}

export function showOverview(open = true) {
  $("#overview").hidden = !open;
  $("#overview-open").setAttribute("aria-pressed", String(open));
  if (!open) { frames.clear(); clear($("#ov-tables")); }
  else renderOverview();
}

const ago = (s) => (s < 90 ? `${Math.round(s)} s ago` : `${Math.round(s / 60)} min ago`);

/** "sending · last message 2 s ago", "quiet for 45 s during deal 3", ... */
function loggerLine(c) {
  const f = c.feed;
  if (c.follow) return { cls: c.followError ? "bad" : "good", text: `following ${c.follow.split("/").pop()}${f && f.lastAge !== null ? ` · read ${ago(f.lastAge)}` : ""}` };
  if (!f || f.lastAge === null) return { cls: "idle", text: "no logger message since the server started" };
  const quiet = c.midDeal && f.lastAge > G.stallAfter;
  if (quiet) return { cls: "bad", text: `logger quiet for ${ago(f.lastAge).replace(" ago", "")} during deal ${c.game ? c.game.deals : "?"}` };
  return { cls: c.midDeal ? "good" : "idle", text: `${c.midDeal ? "sending" : "between deals"} · last message ${ago(f.lastAge)}` };
}

function gameLine(c) {
  const g = c.game;
  if (!g) return "no game";
  const at = c.programAt;
  const where = at ? `deal ${at.deal + 1}${at.dealNumber !== at.deal ? ` (no. ${at.dealNumber})` : ""} · ${at.kind.replace(/_/g, " ")}` : "";
  const shown = g.match && at && at.game !== null ? g.games.find((/** @type {any} */ x) => x.index === at.game) : null;
  const part = shown ? `${(shown.label || `Game ${at.game + 1} of ${g.games.length}`).replace(/^Game/, "game")} · ` : "";
  return `${g.title || g.source} · ${part}${where}`;
}

function faults(c) {
  const out = [];
  if (c.loadError) out.push(`load: ${c.loadError}`);
  if (c.followError) out.push(`follow: ${c.followError}`);
  if (c.settingsError) out.push(`settings refused, on defaults: ${c.settingsError}`);
  for (const r of (c.feed ? c.feed.refusals : []).slice(0, 3))
    out.push(`refused${r.seq !== null ? ` action ${r.seq}` : ""} (${r.status}, ${ago(r.age)}): ${r.error}`);
  return out;
}

/** One channel's card: the frame is made once, the text redrawn. */
function card(c) {
  let f = frames.get(c.id);
  if (!f) {
    const frame = h("iframe", { title: `${c.id} program`, tabindex: "-1",
      src: `/overlay/${enc(c.id)}?output=program&width=1280&height=720&monitor=1` });
    const text = h("div", { class: "ov-text" });
    const el = h("button", { class: "ov-card", dataset: { channel: c.id }, title: `open ${c.id}`, onclick: () => { openChannel(c.id); showOverview(false); } },
      h("div", { class: "ov-thumb checker" }, frame), text);
    f = { el, text };
    frames.set(c.id, f);
  }
  const log = loggerLine(c);
  const pages = OUTPUTS.map((o) => `${o} ${(c.pages || {})[o] || 0}`).join(" · ");
  clear(f.text).append(
    h("strong", { class: "ov-name" }, label(c)),
    h("div", { class: "ov-game" }, gameLine(c)),
    h("div", { class: `ov-logger ${log.cls}` }, h("span", { class: "dot" }), log.text),
    h("div", { class: "ov-pages", title: "OBS pages connected per output (the studio's own frames not counted)" }, pages),
    ...faults(c).map((t) => h("div", { class: "ov-fault" }, t)));
  return f.el;
}

/** Draw the overview (called on every refresh while it is open). */
export function renderOverview() {
  if (overviewOpen()) afterPress("overview", [$("#overview")], drawOverview);
}

function drawOverview() {
  if (!overviewOpen()) return;
  const box = $("#ov-tables");
  const ids = new Set(G.channels.map((c) => c.id));
  for (const id of [...frames.keys()]) if (!ids.has(id)) frames.delete(id);
  const cards = G.channels.map(card);
  // keep the frames in the document (moving an iframe reloads it): append only what is new
  [...box.children].forEach((el) => { if (!cards.includes(/** @type {HTMLElement} */ (el))) el.remove(); });
  cards.forEach((el, i) => { if (box.children[i] !== el) box.insertBefore(el, box.children[i] || null); });
  if (!G.channels.length) box.append(h("p", { class: "help" }, "No channel yet: make one with New."));
  const waiting = clear($("#ov-waiting"));
  for (const w of G.waiting) {
    const guess = meant(w.channel);
    waiting.append(h("li", {}, `/overlay/${w.channel}: ${count(w.requests, "request")}, last ${w.age === null ? "?" : ago(w.age)}${guess ? ` · did you mean ${guess}?` : ""}`));
  }
  if (!G.waiting.length) waiting.append(h("li", { class: "help" }, "none"));
  const list = clear($("#ov-notices"));
  for (const n of notices()) list.append(h("li", { class: n.level }, n.text));
  if (!list.children.length) list.append(h("li", { class: "help" }, "none"));
  $("#ov-error").textContent = G.error ? `Could not refresh: ${G.error}` : "";
}

/** Wire the overview's own controls (once). */
export function setupOverview() {
  const stall = /** @type {HTMLInputElement} */ ($("#ov-stall"));
  stall.value = String(G.stallAfter);
  stall.addEventListener("change", () => { setStallAfter(Number(stall.value)); stall.value = String(G.stallAfter); renderOverview(); });
  $("#ov-close").addEventListener("click", () => showOverview(false));
  $("#overview-open").addEventListener("click", () => showOverview(!overviewOpen()));
}
