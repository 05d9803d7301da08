// @ts-check
// Notices where the producer looks (a strip over the preview, a count on the Overview button):
// pages waiting on a misspelt channel, a logger that stopped sending during a deal or whose
// messages are refused, deals the analysis could not value and why, settings refused at start,
// a game or followed file that could not be read.  Worked out from the glance (glance.js) on
// every refresh; a notice can be dismissed until its text changes.

import { h, clear, $, afterPress } from "./dom.js";
import { G, label } from "./glance.js";
import { S } from "./session.js";

/** @typedef {{ key: string, level: "fault" | "warn", channel: string | null, text: string }} Notice */

/** a waiting page is still open while it asks again (its socket retries every second) */
const WAITING_FRESH = 15;
/** a refusal is news for this long */
const REFUSAL_FRESH = 120;

const dismissed = new Map(); // key -> text dismissed

/** Edit distance of two short strings (for "did you mean"). */
function distance(a, b) {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++)
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
  return d[a.length][b.length];
}

/** The existing channel a misspelt id most likely meant, or null. */
export function meant(id) {
  let best = null;
  let score = Infinity;
  for (const c of G.channels) {
    const s = c.id.toLowerCase() === id.toLowerCase() ? 0 : distance(c.id.toLowerCase(), id.toLowerCase());
    if (s < score) { best = c.id; score = s; }
  }
  return score <= Math.max(2, Math.floor(id.length / 3)) ? best : null;
}

const ago = (s) => (s < 90 ? `${Math.round(s)} s` : `${Math.round(s / 60)} min`);

/** Every notice the glance gives now, faults first. */
export function notices() {
  /** @type {Notice[]} */
  const out = [];
  for (const w of G.waiting) {
    if (w.age === null || w.age > WAITING_FRESH) continue;
    const guess = meant(w.channel);
    out.push({ key: `waiting:${w.channel}`, level: "fault", channel: guess,
      text: `A page is open on channel "${w.channel}", which does not exist (${w.requests} requests, last ${ago(w.age)} ago)${guess ? `: did you mean "${guess}"? Fix the URL in OBS` : ": create it, or fix the URL in OBS"}.` });
  }
  for (const c of G.channels) {
    const name = label(c);
    if (c.settingsError) out.push({ key: `settings:${c.id}`, level: "fault", channel: c.id, text: `${name} runs on default settings: its stored settings were refused at start (${c.settingsError}). Saving any setting stores a good document.` });
    if (c.loadError) out.push({ key: `load:${c.id}`, level: "fault", channel: c.id, text: `${name}: its game could not be read: ${c.loadError}` });
    if (c.followError) out.push({ key: `follow:${c.id}`, level: "fault", channel: c.id, text: `${name}: the followed file ${c.follow || ""}: ${c.followError}` });
    const feed = c.feed;
    if (feed && c.midDeal && feed.lastAge !== null && feed.lastAge > G.stallAfter) {
      const deal = c.game ? c.game.deals : "?";
      out.push({ key: `stall:${c.id}`, level: "warn", channel: c.id, text: `${name}: no logger message for ${ago(feed.lastAge)} during deal ${deal}: is the logger still sending?` });
    }
    const refusal = feed && feed.refusals[0];
    if (refusal && refusal.age <= REFUSAL_FRESH) {
      const what = refusal.seq !== null ? `action ${refusal.seq}` : "a message";
      out.push({ key: `refused:${c.id}:${refusal.seq}:${refusal.error}`, level: "warn", channel: c.id, text: `${name}: the logger's ${what} was refused (${refusal.status}): ${refusal.error}` });
    }
  }
  for (const n of G.noAnalysis.values()) {
    const where = `${n.game !== null ? `game ${n.game + 1}, ` : ""}deal ${n.deal + 1}`;
    out.push({ key: `analysis:${n.channel}:${n.game}:${n.deal}`, level: "warn", channel: n.channel, text: `${n.channel}: ${where} has no analysis from the hands: ${n.reason}` });
  }
  return out.sort((a, b) => (a.level === b.level ? 0 : a.level === "fault" ? -1 : 1));
}

/** Open a channel as the channel picker does. */
export function openChannel(id) {
  const sel = /** @type {HTMLSelectElement} */ ($("#channel"));
  if (!id || sel.value === id) return;
  sel.value = id;
  sel.dispatchEvent(new Event("change"));
}

/** Draw the strip and the count. */
export function renderNotices() {
  afterPress("notices", [$("#notices")], drawNotices);
}

function drawNotices() {
  const all = notices();
  const shown = all.filter((n) => dismissed.get(n.key) !== n.text);
  const strip = clear($("#notices"));
  strip.hidden = !shown.length;
  for (const n of shown.slice(0, 6)) {
    strip.append(h("div", { class: `note ${n.level}`, dataset: { key: n.key } },
      h("span", { class: "text" }, n.text),
      n.channel && n.channel !== S.ch ? h("button", { title: "open this channel", onclick: () => openChannel(n.channel) }, "Open") : null,
      h("button", { title: "hide this notice until it changes", "aria-label": "dismiss", onclick: () => { dismissed.set(n.key, n.text); renderNotices(); } }, "✕")));
  }
  if (shown.length > 6) strip.append(h("div", { class: "note more" }, `… ${shown.length - 6} more in the overview`));
  const count = $("#notice-count");
  count.hidden = !all.length;
  count.textContent = String(all.length);
  count.className = `count${all.some((n) => n.level === "fault") ? " fault" : ""}`;
}
