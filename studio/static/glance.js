// @ts-check
// Every table at a glance: the service's channel list (GET /api/channels: each channel's game,
// playhead, pages per output, logger activity, faults) and the pages waiting on a channel that
// does not exist (GET /studio/api/waiting), fetched together every two seconds.  The overview
// and the notices read this one copy.

import { S } from "./session.js";

/**
 * One channel as GET /api/channels/{id} answers it (overlay/service/core.py ChannelCore.info);
 * only the fields the overview and notices read are named.
 * @typedef {object} ChannelInfo
 * @property {string} id
 * @property {string} title
 * @property {any} game null: no game
 * @property {any} playhead
 * @property {Record<string, number>} pages OBS pages per output (the studio's own frames apart)
 * @property {number} [monitors]
 * @property {{ accepted: number, refused: number, lastAge: number | null, lastVia: string | null,
 *   refusals: { age: number, seq: number | null, status: number, kind: string, error: string, via: string | null }[] }} [feed]
 * @property {boolean} [midDeal] the last deal is being played
 * @property {{ step: number, deal: number, dealNumber: number, kind: string, game: number | null } | null} [programAt]
 * @property {string | null} follow
 * @property {string | null} followError
 * @property {string | null} loadError
 * @property {string | null} settingsError
 */
/** @typedef {{ channel: string, requests: number, error: string, age: number | null }} WaitingPage */

const STALL_KEY = "euchre-overlay.stallAfter";

/** What the studio knows of every table, and what it learnt from the preview's analysis. */
export const G = {
  /** @type {ChannelInfo[]} */ channels: [],
  /** @type {WaitingPage[]} */ waiting: [],
  /** @type {string | null} why the last refresh failed */ error: null,
  /** performance.now() when the channel list in hand was asked for */ listedAt: -1,
  /** seconds without a logger message during a deal before a notice */
  stallAfter: Number(localStorage.getItem(STALL_KEY)) || 30,
  /**
   * Deals of the open channel the preview's analysis could not value, and why (from the
   * analysis messages' analysis.hands and analysis.reason), by "channel:game:deal".
   * @type {Map<string, { channel: string, game: number | null, deal: number, reason: string }>}
   */
  noAnalysis: new Map(),
  /** @type {(() => void)[]} called after each refresh */
  listeners: [],
};

export function setStallAfter(seconds) {
  G.stallAfter = Math.max(1, Math.min(3600, Math.round(seconds) || 30));
  localStorage.setItem(STALL_KEY, String(G.stallAfter));
}

let busy = false;

/** Fetch the channel list and the waiting pages (one refresh at a time), then tell the listeners. */
export async function refresh() {
  if (!S.api || busy) return;
  busy = true;
  const asked = performance.now();
  try {
    const [list, waiting] = await Promise.all([S.api.get("/api/channels"), S.api.get("/studio/api/waiting")]);
    G.channels = list.channels || [];
    G.listedAt = asked;
    G.waiting = waiting.waiting || [];
    G.error = null;
  } catch (err) {
    G.error = err.message;
  } finally {
    busy = false;
  }
  watchAnalysis();
  for (const f of G.listeners) f();
}

/** The channel's name as the producer knows it: "Table 1 (t1)", or the id. */
export function label(c) {
  return c.title && c.title !== c.id ? `${c.title} (${c.id})` : c.id;
}

/** The analysis message the preview frame drew last (its page player keeps it), if any. */
function previewAnalysis() {
  const frame = /** @type {HTMLIFrameElement | null} */ (document.querySelector("#preview"));
  try {
    const w = /** @type {any} */ (frame && frame.contentWindow);
    return w && w.euchreOverlay && w.euchreOverlay.analysis ? w.euchreOverlay.analysis() : null;
  } catch {
    return null; // not loaded yet
  }
}

/** Note a deal whose analysis read no hands, with the reason the service gave. */
function watchAnalysis() {
  const msg = previewAnalysis();
  const a = msg && msg.analysis;
  if (!a || !S.ch || typeof a.deal !== "number") return;
  const game = S.info && S.info.playhead ? S.info.playhead.game ?? null : null;
  // a deal keeps its note once a step of it had no values (the bidding may lack them while
  // the play has hands rebuilt from it): the reason says what is missing
  if (a.hands == null && a.reason) G.noAnalysis.set(`${S.ch}:${game ?? ""}:${a.deal}`, { channel: S.ch, game, deal: a.deal, reason: a.reason });
}

/** Forget what the preview's analysis said about ``channel`` (a new game, another channel). */
export function forgetAnalysis(channel) {
  for (const [k, v] of G.noAnalysis) if (v.channel === channel) G.noAnalysis.delete(k);
}
