// @ts-check
// The table as the engine sees it: seats with names, the dealer, whose turn, the up-card,
// the calls, the trick on the table, tricks and score.  Drawn from the engine's GameState
// JSON (GET …/choices: "state"); nothing here decides anything.

/**
 * The engine's GameState as JSON (engine/state.py GameState.to_json), the fields drawn here.
 * @typedef {object} TableState
 * @property {number} deal
 * @property {number} dealNumber
 * @property {string[]} players
 * @property {number} dealer
 * @property {string | null} upCard
 * @property {string} upCardState
 * @property {{ seat: number, call: string, round: number }[]} calls
 * @property {string | null} trump
 * @property {number | null} maker
 * @property {boolean} alone
 * @property {number} aloneDefender
 * @property {number[]} sitOut
 * @property {string | null} discard
 * @property {string[][]} hands
 * @property {{ leader: number, seats: number[], cards: string[], winner: number | null } | null} trick
 * @property {{ leader: number, seats: number[], cards: string[], winner: number | null }[]} tricks
 * @property {number[]} tricksPerSeat
 * @property {number[]} tricksPerTeam
 * @property {number[]} score
 * @property {number[] | null} dealPoints
 * @property {number | null} toAct
 * @property {boolean} thrownIn
 * @property {boolean} gameOver
 * @property {number | null} winner
 * @property {string} kind
 */

export const SUITS = /** @type {Record<string, string>} */ ({ s: "\u2660", h: "\u2665", d: "\u2666", c: "\u2663" });

/**
 * An element with attributes and children.
 * @param {string} tag @param {Record<string, string | number | boolean | null | undefined>} [attrs]
 * @param {...(Node | string | null | undefined | false)} kids
 * @returns {HTMLElement}
 */
export function h(tag, attrs = {}, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = String(v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const kid of kids) if (kid !== null && kid !== undefined && kid !== false) el.append(kid);
  return el;
}

/** A card's name as people read it: ``Jh`` -> ``J♥``, ``Th`` -> ``10♥`` (the joker as B).
 * @param {string} name */
export function cardText(name) {
  if (name.length !== 2 || !(name[1] in SUITS)) return name;
  return (name[0] === "T" ? "10" : name[0]) + SUITS[name[1]];
}

/** Whether a card's name is printed red (hearts and diamonds; the joker is not): the page's
 * one test of it. @param {string} name */
export function isRed(name) {
  return name.length === 2 && (name[1] === "h" || name[1] === "d");
}

/** @param {string} name @param {string} [extra] */
export function cardChip(name, extra = "") {
  return h("span", { class: `card${isRed(name) ? " red" : ""}${extra ? " " + extra : ""}` }, cardText(name));
}

/** @param {string} call @param {boolean} [alone] */
export function callText(call, alone = false) {
  const base = call === "Pass" ? "Pass" : call === "Order" ? "Order up" : call === "n" ? "No trump" : call === "x" ? "Trump ?" : (SUITS[call] || call);
  return alone ? `${base} alone` : base;
}

const PLACES = ["south", "west", "north", "east"];

/**
 * Draw the table into ``root``.
 * @param {HTMLElement} root
 * @param {TableState | null} s
 * @param {string[]} players
 */
export function renderTable(root, s, players) {
  root.replaceChildren();
  if (!s) {
    root.append(h("p", { class: "empty" }, "No deal yet: tap the up-card of the first deal."));
    return;
  }
  const n = s.players.length || players.length;
  const four = n === 4;
  const playing = s.kind !== "deal_scored" && s.kind !== "game_over";
  for (let seat = 0; seat < n; seat++) {
    const name = s.players[seat] || players[seat] || `Seat ${seat}`;
    const badges = [];
    if (seat === s.dealer) badges.push(h("span", { class: "badge dealer", title: "dealer" }, "D"));
    if (playing && seat === s.toAct) badges.push(h("span", { class: "badge act" }, "to act"));
    if (seat === s.maker) badges.push(h("span", { class: "badge maker" }, s.alone ? "maker, alone" : "maker"));
    if (seat === s.aloneDefender) badges.push(h("span", { class: "badge maker" }, "defends alone"));
    if (s.sitOut.includes(seat)) badges.push(h("span", { class: "badge out" }, "sits out"));
    const calls = s.calls.filter((c) => c.seat === seat);
    const last = calls[calls.length - 1];
    let played = null;
    if (s.trick) {
      const i = s.trick.seats.indexOf(seat);
      if (i >= 0) played = cardChip(s.trick.cards[i], s.trick.winner === seat ? "won" : "");
    }
    const hand = s.hands[seat] || [];
    const known = hand.filter((c) => c !== "Xx");
    root.append(
      h("div", { class: `seat ${four ? PLACES[seat] : ""}${playing && seat === s.toAct ? " acting" : ""}`, "data-seat": seat },
        h("div", { class: "who" }, h("strong", {}, name), ...badges),
        h("div", { class: "line" },
          h("span", { class: "tricks" }, (s.tricksPerSeat[seat] || 0) === 1 ? "1 trick" : `${s.tricksPerSeat[seat] || 0} tricks`),
          last ? h("span", { class: "call" }, callText(last.call)) : null,
          played),
        known.length ? h("div", { class: "hand" }, ...known.map((c) => cardChip(c, "small"))) : null),
    );
  }
  const trump = s.trump ? (s.trump === "n" ? "No trump" : `Trump ${SUITS[s.trump] || s.trump}`) : s.thrownIn ? "Thrown in" : "No trump yet";
  const upState = { face_up: "face up", turned_down: "turned down", taken: "picked up" }[s.upCardState] || s.upCardState;
  const teams = (s.score || []).map((v, t) => `${players.filter((_, i) => i % 2 === t).map((p) => p.split(" ")[0]).join(" & ") || `Team ${t}`} ${v}`);
  root.append(
    h("div", { class: "middle" },
      h("div", { class: "deal" }, `Deal ${s.dealNumber + 1}`),
      s.upCard ? h("div", { class: "up" }, cardChip(s.upCard, s.upCardState === "turned_down" ? "down" : ""), h("small", {}, upState)) : null,
      h("div", { class: "trump" }, trump),
      s.discard ? h("div", { class: "discard" }, "discard ", cardChip(s.discard, "small")) : null,
      h("div", { class: "score" }, teams.join("  \u2013  ")),
      h("div", { class: "tricks-team" }, `tricks ${(s.tricksPerTeam || []).join(" \u2013 ")}`),
      s.gameOver ? h("div", { class: "over" }, `Game over${s.winner !== null ? `: team ${s.winner} wins` : ""}`) : null),
  );
}
