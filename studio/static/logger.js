// @ts-check
// The Logger tab: what a logger needs to feed this channel, without a terminal.  The feed
// URLs, the channel's feed keys (a key posts actions, opens the feed socket and PUTs the game of
// this channel only; it is shown once when made, stored hashed, revocable one by one), a
// copyable curl example, and what the logger has been doing (last message, refusals).

import { h } from "./dom.js";
import { S, enc, notice, ask } from "./session.js";

async function copy(text) {
  try { await navigator.clipboard.writeText(text); notice("Copied."); }
  catch { notice(`Copy this: ${text}`); }
}

/** the key made last, shown until the tab is left or another channel is opened */
let fresh = /** @type {{ channel: string, id: string, label: string, key: string, qr?: { link: string, url: string | null } } | null} */ (null);
/** @type {{ channel: string, keys: { id: string, label: string, created: number }[] } | null} */
let listed = null;
/** scroll the key just made into view (once) */
let reveal = false;

const keysUrl = () => `/api/channels/${enc(S.ch)}/feed-keys`;

/** Whether a tablet or another computer can reach the server, and at which addresses
 * (GET /studio/api/reach), asked once. */
let reach = /** @type {{ network: boolean, addresses: string[] } | null} */ (null);
let reachAsked = false;

/** Ask the server once (the Logger and Outputs tabs redrawn with the answer). */
export function ensureReach() {
  if (reachAsked) return;
  reachAsked = true;
  void (async () => {
    try { reach = await S.api.get("/studio/api/reach"); } catch { return; }
    if (S.tab === "logger" || S.tab === "outputs") S.render();
  })();
}

const LOOPBACK = /^(127\.|localhost$|\[::1\]$)/;

/** The origin to give another device: the studio's own, unless the studio was opened on this
 * computer's loopback (127.0.0.1, as `serve` prints it) and the server has network addresses:
 * a tablet cannot open http://127.0.0.1 links. */
export function deviceOrigin() {
  if (!LOOPBACK.test(location.hostname) || !reach || !reach.addresses.length) return location.origin;
  return `${location.protocol}//${reach.addresses[0]}${location.port ? `:${location.port}` : ""}`;
}

async function loadKeys() {
  try {
    listed = await S.api.get(keysUrl());
  } catch (err) {
    // not "No feed key yet": the list is asked for again at the tab's next drawing, a moment later
    notice(err.message);
    listed = null;
    setTimeout(() => { if (S.tab === "logger" && !listed) S.render(); }, 2000);
    return;
  }
  if (S.tab === "logger") S.render();
}

async function makeKey(label) {
  try {
    const r = await S.api.post(keysUrl(), { label });
    fresh = { channel: S.ch, id: r.id, label: r.label, key: r.key };
    reveal = true;
  } catch (err) { notice(err.message); }
  await loadKeys();
}

async function revoke(k) {
  if (!(await ask(`Revoke the feed key "${k.label}"? A logger using it is refused from its next message.`, "", { input: false }))) return;
  try {
    await S.api.del(`${keysUrl()}/${enc(k.id)}`);
    if (fresh && fresh.id === k.id) fresh = null;
  } catch (err) { notice(err.message); }
  await loadKeys();
}

/** The feed's addresses as a logger on another machine reaches this server. */
export function feedUrls(channel) {
  const base = `${deviceOrigin()}/api/channels/${enc(channel)}`;
  return { actions: `${base}/actions`, game: `${base}/game`, socket: `${base.replace(/^http/, "ws")}/feed` };
}

/** The logger page of a channel; with a feed key, a link that signs the page in (the key in the
 * fragment: never sent to the server in the address, and the page removes it at once). */
export function loggerPageUrl(channel, key = "") {
  return `${deviceOrigin()}/logger/${enc(channel)}${key ? `#key=${encodeURIComponent(key)}` : ""}`;
}

/** The curl a logger runs for the next action (the sequence number the channel expects next). */
export function curlExample(channel, key, seq) {
  const body = JSON.stringify({ seq, kind: "new_deal", dealer: 0, upCard: "Jh" });
  return `curl -X POST ${feedUrls(channel).actions} -H "Authorization: Bearer ${key}" -H "Content-Type: application/json" -d '${body}'`;
}

const when = (epoch) => new Date(epoch * 1000).toLocaleString();
const ago = (s) => (s < 90 ? `${Math.round(s)} s ago` : `${Math.round(s / 60)} min ago`);

function urlRow(name, url, id) {
  return h("div", { class: "urls" }, h("div", {}, h("strong", {}, name)), h("div", { class: "row" }, h("code", { id }, url), h("button", { onclick: () => copy(url) }, "Copy")));
}

/** The QR code of `link` (the logger page with the key just made), asked of the server once
 * per key and link. @param {{ qr?: { link: string, url: string | null } }} k @param {string} link */
function qrOf(k, link) {
  const img = /** @type {HTMLImageElement} */ (h("img", { id: "logger-qr", class: "qr", alt: `QR code of ${link.replace(/#key=.*/, "#key=…")}`, width: 270, height: 270 }));
  if (k.qr && k.qr.link === link) {
    if (k.qr.url) img.src = k.qr.url;
    return img;
  }
  k.qr = { link, url: null };
  void S.api.blobUrl("/studio/api/qr", { text: link }).then((url) => {
    if (!k.qr || k.qr.link !== link) { URL.revokeObjectURL(url); return; }
    k.qr.url = url;
    const shown = /** @type {HTMLImageElement | null} */ (document.getElementById("logger-qr"));
    if (shown) shown.src = url;
  }, (err) => notice(err.message));
  return img;
}

/** The Logger tab. */
export function renderLogger(p) {
  if (!listed || listed.channel !== S.ch) { listed = { channel: S.ch, keys: [] }; loadKeys(); }
  ensureReach();
  if (fresh && fresh.channel !== S.ch) fresh = null;
  const info = S.info || {};
  const urls = feedUrls(S.ch);
  const page = loggerPageUrl(S.ch);
  p.append(h("h2", {}, "Logger setup"),
    h("p", {}, "At the table: the logger page records the game with the rules' legal choices only. ",
      h("a", { id: "logger-page", href: page, target: "_blank", rel: "noopener" }, page),
      " (it asks for a feed key below, or the API token)."));
  if (reach && !reach.network) {
    p.append(h("p", { class: "notice", id: "reach-local" }, "This server listens on this computer only (serve's default address, 127.0.0.1): a tablet at the table cannot open these links. Restart it with ",
      h("code", {}, "serve --host 0.0.0.0"), " and the links here use the address the network knows."));
  }
  if (!info.game) p.append(h("p", { class: "help" }, "The channel needs a game with its players first: the Game tab's New live game."));
  p.append(h("p", { class: "help" }, "Another program may send single actions (POST, or the WebSocket) with a sequence number, or PUT the whole game as often as it likes (JSON or .egnb). It signs with a feed key of this channel (or the API token) in the Authorization header."));

  // the keys first: making one and copying it (with its curl) is what a producer comes for
  const keys = h("ul", { class: "list keys" });
  for (const k of listed.keys) {
    keys.append(h("li", { dataset: { key: k.id } }, h("span", { class: "name", title: `made ${when(k.created)}` }, k.label),
      h("span", { class: "help" }, k.id),
      h("button", { class: "danger", title: "revoke: the logger using it is refused from its next message", onclick: () => revoke(k) }, "Revoke")));
  }
  if (!listed.keys.length) keys.append(h("li", { class: "help" }, "No feed key yet."));
  const label = /** @type {HTMLInputElement} */ (h("input", { type: "text", id: "feed-key-label", placeholder: "who uses it: north tablet", maxlength: "80", "aria-label": "label of the new feed key" }));
  p.append(h("h2", {}, "Feed keys"),
    h("p", { class: "help" }, "A feed key posts actions and PUTs the game of this channel only: never its settings, playback or another channel. It is shown once; the server keeps only its hash."),
    keys,
    h("div", { class: "row" }, label, h("button", { id: "feed-key-make", onclick: () => makeKey(label.value.trim()) }, "Make a feed key")));

  const seq = info.game ? (info.game.seq || 0) + 1 : 1;
  if (fresh) {
    const curl = curlExample(S.ch, fresh.key, seq);
    const box = h("div", { class: "fresh-key", role: "status" },
      h("strong", {}, `Feed key "${fresh.label}": copy it now, it is not shown again.`),
      h("div", { class: "row" }, h("code", { id: "feed-key-value" }, fresh.key), h("button", { onclick: () => copy(fresh.key) }, "Copy key")),
      h("div", {}, "The logger page, signed in with this key (open it on the tablet at the table, or copy the link to it):"),
      h("div", { class: "row" }, h("a", { id: "logger-page-key", href: loggerPageUrl(S.ch, fresh.key), target: "_blank", rel: "noopener" }, "Open the logger page"),
        h("button", { onclick: () => copy(loggerPageUrl(S.ch, fresh.key)) }, "Copy link with key")),
      h("div", {}, "Or scan it with the tablet's camera:"),
      qrOf(fresh, loggerPageUrl(S.ch, fresh.key)),
      h("div", {}, "Or by hand (sends the next action, number ", String(seq), "):"),
      h("pre", { id: "feed-curl" }, curl), h("button", { onclick: () => copy(curl) }, "Copy curl"));
    p.append(box);
    if (reveal) { reveal = false; requestAnimationFrame(() => box.scrollIntoView({ block: "nearest" })); }
  } else {
    p.append(h("p", { class: "help" }, "Example, with a key in $FEED_KEY:"), h("pre", { id: "feed-curl" }, curlExample(S.ch, "$FEED_KEY", seq)));
  }
  p.append(h("h2", {}, "Feed addresses"),
    urlRow("Actions (POST)", urls.actions, "feed-actions"), urlRow("Whole game (PUT)", urls.game, "feed-game"), urlRow("WebSocket", urls.socket, "feed-socket"));

  const feed = info.feed;
  const activity = h("div", { class: "activity" });
  if (!feed || feed.lastAge === null) activity.append(h("p", { class: "help" }, "No logger message since the server started."));
  else {
    const via = feed.lastVia === "token" ? "the API token" : feed.lastVia === "file" ? "the followed file" : `feed key ${feed.lastVia}`;
    activity.append(h("p", {}, `Last message ${ago(feed.lastAge)} (${via}); ${feed.accepted} taken, ${feed.refused} refused.`));
  }
  if (feed && feed.refusals.length) {
    const list = h("ul", { class: "problems" });
    for (const r of feed.refusals) list.append(h("li", {}, `${ago(r.age)}${r.seq !== null ? ` · action ${r.seq}` : ""} · ${r.status}: ${r.error}`));
    activity.append(list);
  }
  p.append(h("h2", {}, "What the logger did"), activity);
}

/** Forget the key shown once (another channel, another tab). */
export function forgetFreshKey() {
  if (fresh && fresh.qr && fresh.qr.url) URL.revokeObjectURL(fresh.qr.url);
  fresh = null;
  listed = null;
}
