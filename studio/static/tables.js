// @ts-check
// Games in and every table at a glance, put together: the Game and Logger tabs (games.js,
// logger.js), files dropped on the studio, the overview (overview.js) and the notices
// (notices.js), all fed by one refresh of the glance (glance.js) every two seconds.

import { $, typingIn, keepingTyping } from "./dom.js";
import { S } from "./session.js";
import { poll } from "./transport.js";
import { G, refresh, forgetAnalysis } from "./glance.js";
import { renderNotices } from "./notices.js";
import { renderOverview, setupOverview, showOverview, overviewOpen } from "./overview.js";
import { setupDrop, loadReport, renderGame } from "./games.js";
import { renderLogger, forgetFreshKey } from "./logger.js";

export { renderGame, renderLogger };

/** every two seconds: a quiet logger is noticed well within its threshold (30 s by default) */
const EVERY_MS = 2000;

let seen = { ch: /** @type {string | null} */ (null), digest: /** @type {string | null} */ (null), facts: "" };

function onRefresh() {
  // another channel, or a new game on this one: what was learnt about the old one goes
  const info = S.info || {};
  const digest = info.game ? info.game.digest : null;
  // (the first refresh knows no channel before: a key made before it is still this channel's)
  if (seen.ch !== null && seen.ch !== S.ch) forgetFreshKey();
  if (seen.ch && (seen.ch !== S.ch || seen.digest !== digest)) forgetAnalysis(seen.ch);
  // the Game and Logger tabs show the channel's game, playhead and logger: redrawn when
  // those change (a form being typed in is left alone)
  const facts = JSON.stringify([S.ch, digest, info.follow, info.followError, info.loadError, info.feed, info.programAt && info.programAt.game, info.playhead && info.playhead.game]);
  const redraw = facts !== seen.facts && (S.tab === "game" || S.tab === "logger") && !typingIn($("#panel"));
  seen = { ch: S.ch, digest, facts: redraw || (S.tab !== "game" && S.tab !== "logger") ? facts : seen.facts };
  if (redraw) {
    const top = $("#right").scrollTop; // a redraw keeps the producer's place in the panel
    S.render();
    $("#right").scrollTop = top;
  }
  renderNotices();
  renderOverview();
}

/** Wire everything once the studio is signed in. */
export function setupTables() {
  G.listeners.push(onRefresh);
  setupOverview();
  setupDrop();
  document.addEventListener("studio:game-changed", async () => {
    await poll();
    await loadReport();
    await refresh();
    keepingTyping($("#panel"), S.render);
  });
  // the feed key made last is shown once: leaving the Logger tab forgets it
  $("#tabs").addEventListener("click", (e) => {
    const b = /** @type {HTMLElement} */ (e.target).closest("button");
    if (b && b.textContent !== "Logger") forgetFreshKey();
  });
  document.addEventListener("keydown", (e) => {
    const t = /** @type {HTMLElement} */ (e.target);
    if (e.ctrlKey || e.metaKey || e.altKey || (t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA"))) return;
    if (e.key === "o" || e.key === "O") showOverview(!overviewOpen());
    else if (e.key === "Escape" && overviewOpen()) showOverview(false);
  });
  refresh();
  setInterval(refresh, EVERY_MS);
  $("#notices").hidden = true;
}
