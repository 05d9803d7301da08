// @ts-check
// Games in without a terminal (the Game tab, and files dropped anywhere on the studio): load
// or replace the channel's game, or append the next game of the evening (the channel then holds
// a match and plays on where it was), from .egn, .egnb and .emn files; follow or load a file
// the server may read; a match's games and which is on air; the engine's errors and problems
// shown with their place (file, deal, phase, trick, card...).

import { h, clear, count, $, keepingTyping } from "./dom.js";
import { S, enc, notice, ask } from "./session.js";
import { control } from "./transport.js";

/** @typedef {{ message: string, source?: string | null, deal?: number | null, phase?: number | null, phaseType?: string | null, line?: number | null, call?: number | null, trick?: number | null, card?: number | null, path?: string | null }} Place */

export const GAME_FILES = ".egn,.egnb,.emn,.json";

/** the last report of the open channel's game (problems, folders), and the last error */
const R = {
  /** @type {string | null} */ channel: null,
  /** @type {Place[]} */ problems: [],
  problemCount: 0,
  /** @type {string[]} */ allowDirs: [],
  /** @type {string[]} the regional rulesets a new game may take */ presets: [],
  /** @type {{ text: string, place: Place | null } | null} */ error: null,
  /** @type {string | null} what the last load did */ done: null,
};

const gameUrl = () => `/studio/api/channels/${enc(S.ch)}/game`;

/** Re-read the report of the open channel's game (after a load, on opening the tab). */
export async function loadReport() {
  if (!S.ch) return;
  try {
    const r = await S.api.get(gameUrl());
    if (R.channel !== S.ch) { R.error = null; R.done = null; }
    Object.assign(R, { channel: S.ch, problems: r.problems, problemCount: r.problemCount, allowDirs: r.allowDirs, presets: r.presets || [] });
  } catch (err) { R.error = { text: err.message, place: null }; }
  if (S.tab === "game") keepingTyping($("#panel"), S.render);
}

/** Send a file: "replace" (from its first step) or "append" (as the next game); false if refused. */
export async function sendGame(file, mode) {
  if (!S.ch) { notice("Make a channel first (New)."); return false; }
  let ok = true;
  R.error = null;
  R.done = null;
  try {
    const r = await S.api.req("POST", `${gameUrl()}?mode=${mode}&name=${enc(file.name)}`, await file.arrayBuffer(), { raw: true, type: "application/octet-stream" });
    R.problems = r.problems;
    R.problemCount = r.problemCount;
    R.done = `${file.name}: ${mode === "append" ? "appended as the next game" : "loaded"} (${r.ack.steps} steps${r.problemCount ? `, ${count(r.problemCount, "problem")} listed below` : ""}).`;
  } catch (err) {
    R.error = { text: err.message, place: err.body && err.body.place ? err.body.place : null };
    ok = false;
  }
  S.tab = "game"; // the result shows in the Game tab (a drop may come from any tab)
  for (const b of document.querySelectorAll("#tabs button")) b.setAttribute("aria-selected", String(b.textContent === "Game"));
  S.render();
  document.dispatchEvent(new Event("studio:game-changed"));
  return ok;
}

async function serverFile(op, path) {
  R.error = null;
  R.done = null;
  try {
    if (op === "unfollow") await S.api.del(`/api/channels/${enc(S.ch)}/follow`);
    else {
      await S.api.post(`/api/channels/${enc(S.ch)}/${op}`, { path });
      R.done = op === "follow" ? `Following ${path}: every save of the file updates the channel.` : `${path}: loaded.`;
    }
  } catch (err) {
    R.error = { text: err.message, place: err.body && err.body.place ? err.body.place : null };
  }
  document.dispatchEvent(new Event("studio:game-changed"));
}

/** Start a new game for a logger: its players, title and ruleset, no deals yet. */
async function newGame(form) {
  if (!S.ch) { notice("Make a channel first (New)."); return; }
  if (S.info && S.info.game && S.info.game.deals > 0
      && !(await ask(`Replace ${S.info.game.title || S.info.game.source} (${count(S.info.game.deals, "deal")}) with a new game?`, "", { input: false }))) return;
  R.error = null;
  R.done = null;
  try {
    const r = await S.api.post(`${gameUrl()}/new`, form);
    R.done = `New game: ${r.game.metadata.players.join(", ")}. Open the logger page to record it (Logger tab).`;
    R.problems = [];
    R.problemCount = 0;
  } catch (err) {
    R.error = { text: err.message, place: null };
  }
  S.render();
  document.dispatchEvent(new Event("studio:game-changed"));
}

/** what the producer typed in the New live game form (kept across the panel's re-renders) */
const F = { title: "", players: ["", "", "", ""], preset: "us-canada", target: "", std: true, open: /** @type {boolean | null} */ (null) };

function newGameForm() {
  /** @param {string} id @param {string} label @param {string} value @param {(v: string) => void} keep */
  const input = (id, label, value, keep, attrs = {}) => /** @type {HTMLInputElement} */ (h("input", { type: "text", id, "aria-label": label, value, oninput: (e) => keep(e.target.value), ...attrs }));
  const title = input("new-title", "title of the new game", F.title, (v) => { F.title = v; }, { placeholder: "Final table", maxlength: "120" });
  const seats = ["Seat 0 (deals first)", "Seat 1", "Seat 2 (seat 0's partner)", "Seat 3 (seat 1's partner)"]
    .map((label, i) => input(`new-player-${i}`, label, F.players[i], (v) => { F.players[i] = v; }, { placeholder: label, maxlength: "60" }));
  const preset = /** @type {HTMLSelectElement} */ (h("select", { id: "new-preset", "aria-label": "ruleset", onchange: (e) => { F.preset = e.target.value; } },
    ...(R.presets.length ? R.presets : ["us-canada"]).map((n) => h("option", { value: n, selected: n === F.preset ? "" : null }, n))));
  const target = input("new-target", "winning score", F.target, (v) => { F.target = v; }, { type: "number", min: "1", max: "1000", placeholder: "rules'", title: "the winning score (empty: the rules' own)" });
  const std = /** @type {HTMLInputElement} */ (h("input", { type: "checkbox", id: "new-std", checked: F.std, onchange: (e) => { F.std = e.target.checked; } }));
  const go = () => {
    const players = F.players.map((n) => n.trim());
    if (players.some((n) => !n)) { R.error = { text: "New game: name all four seats.", place: null }; S.render(); return; }
    /** @type {Record<string, any>} */
    const form = { title: F.title.trim(), players, preset: F.preset, std: F.std };
    if (F.target) form.target = Number(F.target);
    newGame(form);
  };
  const open = F.open === null ? !(S.info && S.info.game) : F.open;
  return h("details", { class: "new-game", id: "new-game", open: open ? "" : null, ontoggle: (e) => { F.open = e.target.open; } },
    h("summary", {}, "New live game (for a logger)"),
    h("p", { class: "help" }, "A game with its players and no deals yet: the logger page records the deals as they are played. Seats 0 and 2 are one team, 1 and 3 the other."),
    h("div", { class: "field-wide" }, title),
    h("div", { class: "seats" }, ...seats),
    h("div", { class: "row" }, h("label", {}, "Rules ", preset), h("label", {}, "play to ", target),
      h("label", { title: "stick the dealer: the dealer must name trump when all pass in round 2" }, std, " stick the dealer")),
    h("div", { class: "row" }, h("button", { id: "new-game-make", class: "primary", onclick: go }, "Start the new game")));
}

/** The place of an engine error as a small table: file, deal, phase, call, trick, card, line, path. */
export function placeTable(place) {
  const rows = [["file", place.source], ["deal", place.deal], ["phase", place.phase !== null && place.phase !== undefined ? `${place.phase}${place.phaseType ? ` (${place.phaseType})` : ""}` : null],
    ["call", place.call], ["trick", place.trick], ["card", place.card], ["line", place.line], ["path", place.path]];
  return h("table", { class: "place" }, rows.filter(([, v]) => v !== null && v !== undefined && v !== "")
    .map(([k, v]) => h("tr", {}, h("th", {}, k), h("td", {}, String(v)))));
}

function filePicker(text, mode, id) {
  return h("label", { class: "file" }, text,
    h("input", { type: "file", id, accept: GAME_FILES, onchange: (e) => { const f = e.target.files[0]; e.target.value = ""; if (f) sendGame(f, mode); } }));
}

/** The Game tab. */
export function renderGame(p) {
  if (R.channel !== S.ch) { R.channel = S.ch; R.problems = []; R.problemCount = 0; R.error = null; R.done = null; loadReport(); }
  const info = S.info || {};
  const g = info.game;
  p.append(h("h2", {}, "Game"));
  if (!g) p.append(h("p", {}, "No game yet."));
  else {
    p.append(h("p", { class: "game-sum" }, h("strong", {}, g.title || g.source), ` · ${g.source} · ${count(g.deals, "deal")} · ${count(g.steps, "step")}`));
    if (g.match) {
      const ph = info.playhead || {};
      const prog = info.programAt ? info.programAt.game : null;
      const list = h("ol", { class: "list games" });
      for (const part of g.games) {
        const live = ph.game === part.index;
        const air = prog === part.index;
        list.append(h("li", { class: air ? "on-air" : "", dataset: { game: String(part.index) } },
          h("span", { class: "name", title: `${part.players.join(", ")} · ${count(part.deals, "deal")}` }, `${part.label}: ${part.title || "untitled"}`),
          air ? h("span", { class: "tag air", title: "the program output shows this game" }, "ON AIR") : null,
          live && !air ? h("span", { class: "tag", title: "the live playhead (preview) is in this game" }, "live") : null,
          h("button", { title: "seek the playhead to this game's first step", onclick: () => control("seek", { step: part.firstStep }) }, "Cue")));
      }
      p.append(list);
    }
  }
  p.append(h("div", { class: "row" },
    filePicker(g ? "Replace game…" : "Load game…", "replace", "game-file"),
    g ? filePicker("Append next game…", "append", "append-file") : null),
  h("p", { class: "help" }, "Or drop a .egn, .egnb or .emn file anywhere on the studio. Replacing starts the new game from its first step; appending adds it after the channel's game as a match, and the channel plays on where it is. A match's games are listed with the one on air."));
  p.append(newGameForm());
  if (R.done) p.append(h("p", { class: "done", role: "status" }, R.done));
  if (R.error) p.append(h("div", { class: "game-error", role: "alert" }, h("strong", {}, R.error.text), R.error.place ? placeTable(R.error.place) : null));

  const path = /** @type {HTMLInputElement} */ (h("input", { type: "text", id: "server-path", placeholder: "/path/on/the/server/game.egn", value: info.follow || "", "aria-label": "file path on the server" }));
  p.append(h("h2", {}, "A file on the server"),
    h("div", { class: "field-wide" }, path),
    h("div", { class: "row" },
      h("button", { title: "follow the file: every save updates the channel (a half-written save is ignored until it parses)", onclick: () => path.value.trim() && serverFile("follow", path.value.trim()) }, "Follow"),
      h("button", { title: "load the file once (from its first step)", onclick: () => path.value.trim() && serverFile("load", path.value.trim()) }, "Load once"),
      info.follow ? h("button", { onclick: () => serverFile("unfollow", "") }, "Stop following") : null),
    h("p", { class: "help" }, R.allowDirs.length ? `The server reads files under: ${R.allowDirs.join(", ")} (serve --allow-dir).` : "The server reads any path it can (serve --allow-dir limits it to chosen folders)."));
  if (info.follow) p.append(h("p", { class: info.followError ? "error" : "help" }, `Following ${info.follow}${info.followError ? `: ${info.followError}` : ""}`));
  if (info.loadError) p.append(h("p", { class: "error" }, `The stored game could not be read: ${info.loadError}`));

  if (R.problemCount) {
    const list = h("ul", { class: "problems" });
    for (const pr of R.problems.slice(0, 30)) list.append(h("li", {}, h("div", {}, pr.message), placeTable(pr)));
    p.append(h("h2", {}, `Problems the engine found (${R.problemCount})`),
      h("p", { class: "help" }, "The game loaded; these steps show what the file says. Each names its place."), list,
      R.problemCount > 30 ? h("p", { class: "help" }, `… and ${R.problemCount - 30} more`) : null);
  }
}

// ------------------------------------------------------------------ drag and drop

function hasFiles(e) {
  return e.dataTransfer && [...e.dataTransfer.types].includes("Files");
}

/** Files dragged over the studio: a full-window target with Replace and Append. */
export function setupDrop() {
  const drop = $("#drop");
  let depth = 0;
  const show = (on) => {
    drop.hidden = !on;
    $("#drop-append").hidden = !(S.info && S.info.game);
    $("#drop-channel").textContent = S.ch || "(no channel)";
  };
  document.addEventListener("dragenter", (e) => { if (!hasFiles(e)) return; depth++; show(true); });
  document.addEventListener("dragleave", () => { depth = Math.max(0, depth - 1); if (!depth) show(false); });
  document.addEventListener("dragover", (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    for (const t of drop.querySelectorAll(".drop-target")) t.classList.toggle("over", t.contains(/** @type {Node} */ (e.target)));
  });
  document.addEventListener("drop", (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    depth = 0;
    show(false);
    const target = /** @type {HTMLElement | null} */ (e.target instanceof Element ? e.target.closest(".drop-target") : null);
    const files = [...e.dataTransfer.files];
    if (!target || !files.length) return; // dropped beside the targets: nothing happens
    // several files: the first replaces (or is appended), the others follow as the next games
    (async () => {
      for (const [i, file] of files.entries()) {
        if (!(await sendGame(file, i === 0 && target.dataset.mode !== "append" ? "replace" : "append"))) break; // the error stays shown
      }
    })();
  });
}
