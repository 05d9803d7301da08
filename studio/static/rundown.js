// @ts-check
// The rundown: the segments the producer fires, in order (settings "rundown": a view, a
// player intro, a statistics lower third, both lower thirds off, an alternative line, a
// stinger), each with its button, an F-key and a Stream Deck link (the Links tab); GO (G)
// fires the next one.  Firing is a POST the service runs (studio/app.py cue), so a Stream
// Deck press and the studio do the same thing.

import { h, clear } from "./dom.js";
import { S, enc, edit, notice, adopt } from "./session.js";
import { lineLabel } from "./transport.js";

/** @import { Cue } from "./settings.js" */

const KINDS = [
  ["view", "View on air"], ["intro", "Player intro"], ["stats", "Statistics"], ["hide", "Lower thirds off"],
  ["line", "Alternative line"], ["stinger", "Stinger"],
];
const KEYS = Array.from({ length: 12 }, (_, i) => `F${i + 1}`);

/** Per channel, the last cue fired here and the next one (the service's answer to a fire).
 * @type {Map<string, { last: string | null, next: string | null }>} */
const fired = new Map();
const stateOf = () => fired.get(S.ch || "") || { last: null, next: null };

/** Fire cue `id` (or "next": GO); the answer says what went on air.
 * @param {string} id */
export async function fireCue(id) {
  if (!S.ch) return;
  try {
    const r = await S.api.post(`/studio/api/channels/${enc(S.ch)}/cue/${enc(id)}`);
    fired.set(S.ch, { last: r.cue, next: r.next });
    adopt(await S.api.get(`/api/channels/${enc(S.ch)}/settings`));
    if (S.render) S.render();
  } catch (err) { notice(err.message); }
}

/** The cue whose hotkey is `key` (F1-F12), if any.
 * @param {string} key @returns {Cue | undefined} */
export function cueOfKey(key) {
  return ((S.shown && S.shown.rundown) || []).find((c) => c.hotkey === key);
}

/** What a cue does, in words.
 * @param {Cue} c @returns {string} */
function what(c) {
  const names = S.info && S.info.game ? S.info.game.players : [];
  const player = (/** @type {number} */ seat) => ((S.shown.match.players || [])[seat] || {}).name || names[seat] || `seat ${seat + 1}`;
  if (c.kind === "view") {
    const v = (S.shown.views || []).find((x) => x.id === c.view);
    return `view ${v ? v.name : c.view} on air` + (c.transition && c.transition !== "default" ? ` (${c.transition})` : "");
  }
  if (c.kind === "intro") return `intro: ${player(c.seat ?? 0)}`;
  if (c.kind === "stats") {
    const s = c.stats || "";
    return "statistics: " + (s.startsWith("team-") ? ((S.shown.match.teams || [])[Number(s.slice(5))] || {}).name || (s === "team-0" ? "N/S team" : "E/W team") : player(Number(s.slice(5))));
  }
  if (c.kind === "hide") return "lower thirds off";
  if (c.kind === "line") return `line ${c.line} of deal ${c.deal}` + (c.game ? ` of game ${c.game}` : "");
  return "stinger";
}

/** The extra a lower-third cue needs that the program's view lacks (its label), if any.
 * @param {Cue} c @returns {string | null} */
function missingExtra(c) {
  const type = c.kind === "intro" ? "player-intro" : c.kind === "stats" ? "stats-lower-third" : null;
  if (!type) return null;
  const v = S.shown.outputs.program.view;
  const has = (v ? v.extras || [] : []).some((/** @type {{type: string}} */ e) => e.type === type);
  return has ? null : c.kind === "intro" ? "Player intro" : "Stats lower third";
}

/** @param {HTMLElement} p */
export function renderRundown(p) {
  const cues = /** @type {Cue[]} */ (S.shown.rundown || []);
  const state = stateOf();
  const nextId = state.next ?? (state.last === null && cues.length ? cues[0].id : null);
  p.append(h("p", { class: "help" }, "The segments you fire, in order. GO (G) fires the next one; each cue has its button, an F-key and a Stream Deck link (Links tab). Player intros and statistics hide by themselves after the Match tab's auto-out seconds."));
  p.append(h("div", { class: "row" },
    h("button", { class: "take", id: "cue-go", disabled: !cues.length || (state.last !== null && state.next === null), title: "Fire the next cue (G)", onclick: () => fireCue("next") }, "GO"),
    h("span", { class: "where", id: "cue-where" }, state.last ? `fired: ${state.last} · next: ${nextId ?? "(end)"}` : nextId ? `next: ${nextId}` : "no cues yet")));
  const list = h("ol", { class: "rundown" });
  cues.forEach((c, i) => {
    const move = (/** @type {number} */ d) => edit(`move cue ${c.id}`, (doc) => {
      const r = [...doc.rundown];
      const [x] = r.splice(i, 1);
      r.splice(i + d, 0, x);
      doc.rundown = r;
    });
    const lacking = missingExtra(c);
    list.append(h("li", { class: c.id === state.last ? "on" : "", dataset: { cue: c.id } },
      h("button", { class: "fire", title: `fire ${c.name || c.id}${c.hotkey ? ` (${c.hotkey})` : ""}`, onclick: () => fireCue(c.id) }, "FIRE"),
      h("span", { class: "cue-text" }, h("strong", {}, c.name || c.id), " ", h("span", { class: "help" }, what(c)),
        lacking ? h("span", { class: "warn", title: "the program's view draws this lower third only with its extra" }, ` · program lacks ${lacking}`) : ""),
      c.hotkey ? h("kbd", {}, c.hotkey) : h("span"),
      h("button", { title: "earlier", disabled: i === 0, onclick: () => move(-1) }, "↑"),
      h("button", { title: "later", disabled: i === cues.length - 1, onclick: () => move(1) }, "↓"),
      h("button", { class: "danger", title: "remove this cue", onclick: () => edit(`remove cue ${c.id}`, (doc) => { doc.rundown = doc.rundown.filter((/** @type {Cue} */ x) => x.id !== c.id); }) }, "✕")));
  });
  p.append(list, addForm(cues));
}

/** The form that adds a cue at the end of the rundown.
 * @param {Cue[]} cues */
function addForm(cues) {
  const box = h("fieldset", { class: "add-cue" }, h("legend", {}, "Add a cue"));
  const kind = /** @type {HTMLSelectElement} */ (h("select", { id: "cue-kind", "aria-label": "what the cue does" }, ...KINDS.map(([v, l]) => h("option", { value: v }, l))));
  const name = /** @type {HTMLInputElement} */ (h("input", { id: "cue-name", type: "text", maxlength: 64, placeholder: "name on the button", "aria-label": "cue name" }));
  const used = new Set(cues.map((c) => c.hotkey));
  const key = /** @type {HTMLSelectElement} */ (h("select", { id: "cue-key", "aria-label": "hotkey" }, h("option", { value: "" }, "no key"), ...KEYS.filter((k) => !used.has(k)).map((k) => h("option", { value: k }, k))));
  const detail = h("span", { class: "row" });
  /** @type {() => Partial<Cue> | null} */
  let read = () => ({});
  const names = S.info && S.info.game ? S.info.game.players : [];
  /** @type {[number, string][]} */
  const seats = (S.shown.match.players || []).map((/** @type {{name?: string}} */ pl, /** @type {number} */ seat) => /** @type {[number, string]} */ ([seat, pl.name || names[seat] || `Seat ${seat + 1}`])).slice(0, Math.max(names.length, 4));
  const select = (/** @type {string} */ id, /** @type {[string | number, string][]} */ opts) => /** @type {HTMLSelectElement} */ (h("select", { id }, ...opts.map(([v, l]) => h("option", { value: String(v) }, l))));
  const fill = () => {
    clear(detail);
    const k = kind.value;
    if (k === "view") {
      const views = S.shown.views || [];
      if (!views.length) { detail.append(h("span", { class: "help" }, "save a named view first (View tab)")); read = () => null; return; }
      const v = select("cue-view", views.map((/** @type {{id: string, name: string}} */ x) => [x.id, x.name]));
      const tr = select("cue-transition", [["default", "channel's TAKE transition"], ["cut", "cut"], ["mix", "mix"], ["wipe", "wipe"], ["stinger", "stinger"]]);
      detail.append(v, tr);
      read = () => ({ view: v.value, transition: /** @type {Cue["transition"]} */ (tr.value) });
    } else if (k === "intro") {
      const s = select("cue-seat", seats);
      detail.append(s);
      read = () => ({ seat: Number(s.value) });
    } else if (k === "stats") {
      /** @type {[string, string][]} */
      const teams = (S.shown.match.teams || []).map((/** @type {{name?: string}} */ t, /** @type {number} */ i) => /** @type {[string, string]} */ ([`team-${i}`, t.name || (i === 0 ? "N/S team" : "E/W team")]));
      /** @type {[string, string][]} */
      const people = seats.map(([seat, l]) => [`seat-${seat}`, l]);
      const s = select("cue-stats", [...teams, ...people]);
      detail.append(s);
      read = () => ({ stats: s.value });
    } else if (k === "line") {
      if (!S.lines.length) { detail.append(h("span", { class: "help" }, "this game has no alternative lines")); read = () => null; return; }
      const s = select("cue-line", S.lines.map((/** @type {any} */ l, i) => [i, lineLabel(l)]));
      detail.append(s);
      read = () => {
        const l = S.lines[Number(s.value)];
        return { deal: l.deal, line: l.line, game: l.game ?? null };
      };
    } else {
      read = () => ({});
    }
  };
  kind.addEventListener("change", fill);
  fill();
  const add = () => {
    const more = read();
    if (more === null) return;
    let n = cues.length + 1;
    while (cues.some((c) => c.id === `cue${n}`)) n++;
    /** @type {Cue} */
    const cue = /** @type {Cue} */ ({ id: `cue${n}`, name: name.value.trim(), kind: /** @type {Cue["kind"]} */ (kind.value), hotkey: key.value || null, ...more });
    edit(`add cue ${cue.id}`, (doc) => { doc.rundown = [...(doc.rundown || []), cue]; });
  };
  box.append(h("div", { class: "row" }, kind, detail), h("div", { class: "row" }, name, key, h("button", { id: "cue-add", onclick: add }, "Add")));
  return box;
}
