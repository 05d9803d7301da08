// @ts-check
// The transport bar: Director commands, the playhead and pages per output (polled), the
// scrubber with deal markers, and the picker of the game's alternative lines.

import { h, clear, count, $ } from "./dom.js";
import { S, OUTPUTS, enc, settingsUrl, content, notice, hide, renderAll } from "./session.js";

export async function control(op, body = {}) {
  if (!S.ch) return;
  try {
    const ph = await S.api.post(`/api/channels/${enc(S.ch)}/control/${op}`, body);
    S.info = { ...(S.info || {}), playhead: ph };
    renderTransport();
  } catch (err) { notice(err.message); }
}

export async function poll() {
  if (!S.ch) return;
  try {
    S.info = await S.api.get(`/api/channels/${enc(S.ch)}`);
  } catch { return; }
  if (S.doc && S.info.settingsRevision !== S.doc.revision && !S.pending && $("#conflict").hidden && $("#notice").hidden) {
    notice(`Settings changed elsewhere (revision ${S.info.settingsRevision}).`,
      h("button", { onclick: async () => { S.doc = await S.api.get(settingsUrl()); S.shown = content(S.doc); hide("#notice"); renderAll(); } }, "Reload"));
  }
  // a new replay (more steps, or the same steps with lines added by an annotator)
  if (S.info.game && (S.info.game.steps !== S.timeline.length || S.info.game.digest !== S.digest)) {
    await loadTimeline(S.info.game.digest);
  }
  renderTransport();
}

/** The scrubber's steps and the alternative lines of the channel's game (one request). */
export async function loadTimeline(digest = null) {
  const tl = await S.api.get(`/studio/api/channels/${enc(S.ch)}/timeline`);
  S.timeline = tl.steps;
  S.lines = tl.lines || [];
  S.digest = digest;
  return tl;
}

export function renderTransport() {
  const info = S.info;
  const pages = clear($("#pages"));
  if (!info) return;
  for (const o of OUTPUTS) {
    const n = (info.pages || {})[o] || 0;
    const delay = ((info.playhead || {}).delays || {})[o] || 0;
    pages.append(h("span", { title: `${count(n, "page")} showing ${o}` }, h("span", { class: `dot${n ? " on" : ""}` }), `${o} ${n}`, delay ? ` · ${delay} s` : ""));
  }
  const ph = info.playhead || {};
  $("#play").textContent = ph.playing ? "❚❚" : "▶";
  $("#loop").checked = Boolean(ph.loop);
  $("#auto").checked = ph.auto !== false;
  if (document.activeElement !== $("#speed")) $("#speed").value = String(ph.speed || 1);
  const steps = S.timeline.length;
  const scrub = $("#scrub");
  scrub.max = String(Math.max(0, steps - 1));
  if (document.activeElement !== scrub) scrub.value = String(ph.step || 0);
  // an alternative line on air (overlay.service.branching): the scrubber is the main line's, so it
  // waits; MAIN LINE returns
  const line = ph.line;
  $("#mainline").hidden = !line;
  scrub.disabled = Boolean(line);
  const st = line ? null : S.timeline[ph.step || 0];
  const games = gamesOf();
  const onAir = partAt(ph.step || 0, games);
  const inGame = onAir < 0 ? "" : `${gameName(games, onAir)} · `;
  $("#where").textContent = line
    ? `ALTERNATIVE LINE · deal ${line.deal} · line ${line.line} · step ${(ph.step || 0) - line.firstStep + 1}/${line.steps - line.firstStep}${ph.playing ? "" : " · paused"}`
    : st ? `${inGame}deal ${st.deal + 1} · step ${(ph.step || 0) + 1}/${steps} · ${st.kind.replace(/_/g, " ")}${ph.playing ? "" : " · paused"}` : "no game";
  renderLines(ph);
  const m = clear($("#markers"));
  let last = null;
  S.timeline.forEach((s, i) => {
    // a match's deals count from 1 in each game: its marker is the game's, G2, where a game starts
    const part = partAt(i, games);
    const starts = part >= 0 && games[part].firstStep === i;
    if (s.deal === last && !starts) return;
    last = s.deal;
    const here = st !== null && st !== undefined && s.deal === st.deal && part === onAir;
    const game = part < 0 ? "" : `${gameName(games, part)}${games[part].title ? ` (${games[part].title})` : ""}, `;
    // a click seeks to the deal's first step (the marker itself, not the slider under it)
    const mark = h("button", { class: `mark${starts ? " game" : ""}${here ? " here" : ""}`,
      dataset: { deal: String(s.deal + 1), step: String(i), ...(part < 0 ? {} : { game: String(part + 1) }) },
      title: `${game}deal ${s.deal + 1} (deal number ${s.dealNumber} in the file): step ${i + 1}; click to go there`,
      onclick: () => control("seek", { step: i }) }, starts ? `G${part + 1}` : `D${s.deal + 1}`);
    mark.style.left = `calc(${THUMB / 2}px + (100% - ${THUMB}px) * ${i / Math.max(1, steps - 1)})`;
    m.append(mark);
  });
}

/** @typedef {{ firstStep: number, steps: number, title?: string | null, label?: string | null }} GamePart a game of a match on the channel */

/** "game 2 of 3", or "game 2" while the match is being played (its label says which).
 * @param {GamePart[]} games @param {number} k */
function gameName(games, k) {
  return (games[k].label || `Game ${k + 1} of ${games.length}`).replace(/^Game/, "game");
}

/** The games of the match on the channel, in step order ([] for a single game).
 * @returns {GamePart[]} */
function gamesOf() {
  return (S.info && S.info.game && S.info.game.games) || [];
}

/** Which game of ``games`` holds global step ``i`` (-1 for a single game).
 * @param {number} i @param {GamePart[]} games */
function partAt(i, games) {
  let k = -1;
  games.forEach((g, j) => { if (g.firstStep <= i) k = j; });
  return games.length ? Math.max(0, k) : -1;
}

/** the slider thumb's width in px (Chromium's default range input): its track is inset by half */
const THUMB = 16;

/** The step a "go to" box names: "D5", "D5 T3", "5 3", "deal 5 trick 3" (from 1, as the
 * screen counts) -> the deal's first step, or the first card of that trick; null if the game
 * has no such deal or trick.  Counts in the game on screen (the timeline's main line); in a
 * match, "G2", "G2 D5" or "game 2 deal 5 trick 3" name another game (as seek?game=2&deal=5).
 * @param {string} text @param {{ deal: number, kind: string }[]} [timeline]
 * @param {GamePart[]} [games] @param {number} [onScreen] the step on screen
 * @returns {number | null} */
export function stepOf(text, timeline = S.timeline, games = gamesOf(), onScreen = (S.info && S.info.playhead && S.info.playhead.step) || 0) {
  let rest = String(text);
  let part = partAt(onScreen, games);
  const named = rest.match(/\bg(?:ame)?\s*(\d+)/i);
  if (named) {
    part = Number(named[1]) - 1;
    if (part < 0 || part >= games.length) return null;
    rest = rest.replace(named[0], " ");
  }
  const lo = part < 0 ? 0 : games[part].firstStep;
  const hi = part < 0 ? timeline.length : Math.min(timeline.length, lo + games[part].steps);
  const nums = (rest.match(/\d+/g) || []).map(Number);
  if (nums.length > 2 || (!nums.length && !named)) return null;
  if (!nums.length) return lo < hi ? lo : null;
  const [deal, trick] = nums;
  let first = -1;
  for (let i = lo; i < hi; i++) if (timeline[i].deal === deal - 1) { first = i; break; }
  if (first < 0) return null;
  if (!trick) return first;
  let taken = 0;
  for (let i = first; i < hi && timeline[i].deal === deal - 1; i++) {
    const s = timeline[i];
    if (s.kind === "card" && taken === trick - 1) return i;
    if (s.kind === "trick_taken") taken++;
  }
  return null;
}

/** The "go to" box: Enter seeks; a deal or trick the game does not have says so. */
export function seekBox(input) {
  input.addEventListener("keydown", (/** @type {KeyboardEvent} */ e) => {
    if (e.key !== "Enter") return;
    e.preventDefault();
    const step = stepOf(input.value);
    if (step === null) {
      const match = gamesOf().length > 0;
      notice(`No ${input.value.trim() || "deal"} in this ${match ? "match" : "game"}: type a deal (D5) or a deal and a trick (D5 T3)${match ? " of the game on screen, or a game first (G2, G2 D5)" : ""}.`);
      return;
    }
    control("seek", { step });
  });
}

// ------------------------------------------------------------------ alternative lines

const SUITS = { s: "\u2660", h: "\u2665", d: "\u2666", c: "\u2663" };
const CALLS = { Pass: "pass", Order: "order up", n: "no trump", s: "spades", h: "hearts", d: "diamonds", c: "clubs" };

/** The key naming a line in the picker: game (empty for one game), deal, line. */
export const lineKey = (l) => `${l.game ?? ""}:${l.deal}:${l.line}`;

function played(l, text) {
  if (!text) return "";
  if (l.at === "call") {
    const [call, alone] = text.split(" ");
    return (CALLS[call] || call) + (alone ? " alone" : "");
  }
  const rank = text.slice(0, -1);
  return `${rank === "T" ? "10" : rank}${SUITS[text.slice(-1)] || text.slice(-1)}`;
}

/** "deal 3 · line 1 · from call 2: order up (was pass)" (a match adds "game N · "). */
export function lineLabel(l) {
  const where = l.at === "call" ? `from call ${l.call}` : l.at === "card" ? `from trick ${l.trick}, card ${l.card}`
    : l.at === "discard" ? "from the discard" : "cannot be played (see the game's problems)";
  const change = l.play ? `: ${played(l, l.play)}${l.instead ? ` (was ${played(l, l.instead)})` : ""}` : "";
  return `${l.game ? `game ${l.game} · ` : ""}deal ${l.deal} · line ${l.line} · ${where}${change}`;
}

let listed = "";
let aired = null;

/** The picker lists the lines of the game on screen (in a match, its game); the line on air
 * is marked and chosen when it goes on air; the user's choice is kept between polls. */
function renderLines(ph) {
  const on = ph.line ? lineKey(ph.line) : null;
  const game = ph.line ? ph.line.game : ph.game;
  const part = game == null ? 0 : ph.line ? game - 1 : game;
  const mine = S.lines.filter((l) => (l.game == null ? 0 : l.game - 1) === part);
  const pick = $("#line-pick");
  const sig = JSON.stringify([mine, on]);
  if (sig !== listed) {
    listed = sig;
    const keep = pick.value;
    clear(pick);
    for (const l of mine) {
      const end = l.points ? ` · ends ${l.points.join("-")}` : "";
      pick.append(h("option", { value: lineKey(l), disabled: !l.steps, title: `${l.player || `seat ${l.seat}`} · ${l.steps} steps${end}` },
        `${lineKey(l) === on ? "\u25cf ON AIR · " : ""}${lineLabel(l)}`));
    }
    if (!mine.length) pick.append(h("option", { value: "" }, "no alternative lines in this game"));
    const usable = (k) => mine.some((l) => lineKey(l) === k && l.steps);
    pick.value = on && on !== aired ? on : usable(keep) ? keep : (mine.find((l) => l.steps) ? lineKey(mine.find((l) => l.steps)) : "");
  }
  aired = on;
  pick.disabled = !mine.length;
  const chosenOnAir = Boolean(on) && pick.value === on;
  $("#line-air").disabled = !mine.some((l) => l.steps) || chosenOnAir;
  $("#line-air").textContent = chosenOnAir ? "ON AIR" : "PUT ON AIR";
}

/** Put the line chosen in the picker on air (the control API's ``branch``). */
export function airLine() {
  const l = S.lines.find((x) => lineKey(x) === $("#line-pick").value);
  if (!l) return;
  control("branch", l.game ? { deal: l.deal, line: l.line, game: l.game } : { deal: l.deal, line: l.line });
}
