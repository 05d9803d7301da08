// @ts-check
// The Render tab: the channel's game (or a deal range) rendered with the channel's look to a
// video file, as a job with progress, cancel and a download link (overlay/service/renders.py
// runs `euchre-overlay render` for it); and the look exported as one file (settings, match
// data, photos and logos) that `euchre-overlay render --channel-settings FILE` takes as is.

import { h, count } from "./dom.js";
import { S, enc, notice } from "./session.js";

const CODECS = [["qtrle", "QuickTime Animation (.mov, lossless alpha)"], ["prores", "ProRes 4444 (.mov, alpha)"],
  ["vp9", "VP9 (.webm, alpha)"], ["h264", "H.264 (.mp4, no alpha)"]];

/** what the producer picked (kept across the panel's re-renders) */
const F = { codec: "qtrle", deals: "", fps: "30", size: "", from: "", to: "" };
/** @type {{ channel: string, jobs: any[] } | null} */
let listed = null;
/** @type {number | null} */
let timer = null;

const url = () => `/studio/api/channels/${enc(S.ch)}/renders`;

async function refresh() {
  try {
    listed = { channel: S.ch, jobs: (await S.api.get(url())).renders };
  } catch (err) { notice(err.message); }
  const busy = listed && listed.jobs.some((j) => j.status === "running" || j.status === "waiting");
  if (timer !== null) { clearTimeout(timer); timer = null; }
  if (busy && S.tab === "render") timer = window.setTimeout(refresh, 500);
  if (S.tab === "render") S.render();
}

async function start() {
  /** @type {Record<string, string>} */
  const form = { codec: F.codec, fps: F.fps };
  if (F.deals.trim()) form.deals = F.deals.trim();
  if (F.size.trim()) form.size = F.size.trim();
  if (F.from.trim()) form.from = F.from.trim();
  if (F.to.trim()) form.to = F.to.trim();
  try { await S.api.post(url(), form); } catch (err) { notice(err.message); }
  await refresh();
}

async function stop(job) {
  try { await S.api.del(`${url()}/${enc(job.id)}`); } catch (err) { notice(err.message); }
  await refresh();
}

/** Download a file the token guards: fetched with the token, handed to the browser as a blob. */
async function download(path, name) {
  try {
    const r = await fetch(path, { headers: { Authorization: `Bearer ${S.api.token}` } });
    if (!r.ok) throw new Error(`${r.status} ${r.statusText}`);
    const a = /** @type {HTMLAnchorElement} */ (h("a", { href: URL.createObjectURL(await r.blob()), download: name }));
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
  } catch (err) { notice(`${name}: ${err.message}`); }
}

const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;

/** The Render tab. */
export function renderRender(p) {
  if (!listed || listed.channel !== S.ch) { listed = { channel: S.ch, jobs: [] }; refresh(); }
  const info = S.info || {};
  const field = (label, input) => h("label", { class: "field-row" }, h("span", {}, label), input);
  const codec = h("select", { id: "render-codec", onchange: (e) => { F.codec = e.target.value; } },
    ...CODECS.map(([v, t]) => h("option", { value: v, selected: v === F.codec ? "" : null }, t)));
  const deals = h("input", { type: "text", id: "render-deals", value: F.deals, placeholder: "all (or 2, 3-5)", oninput: (e) => { F.deals = e.target.value; } });
  const fps = h("select", { id: "render-fps", onchange: (e) => { F.fps = e.target.value; } },
    ...["24", "25", "30", "50", "60"].map((v) => h("option", { value: v, selected: v === F.fps ? "" : null }, `${v} frames/s`)));
  const size = h("input", { type: "text", id: "render-size", value: F.size, placeholder: "the view's (1920x1080)", oninput: (e) => { F.size = e.target.value; } });
  // a piece of that video, on its own clock (render --from/--to): seconds or m:ss
  const from = h("input", { type: "text", id: "render-from", value: F.from, placeholder: "its start (or 1:05)", oninput: (e) => { F.from = e.target.value; } });
  const to = h("input", { type: "text", id: "render-to", value: F.to, placeholder: "its end (or 1:25.5)", oninput: (e) => { F.to = e.target.value; } });
  p.append(h("h2", {}, "Render"),
    h("p", { class: "help" }, info.game ? `${info.game.title || info.game.source}: ${count(info.game.deals, "deal")}. Drawn with this channel's program look, match data and images, the way euchre-overlay render draws it, one render at a time beside the live show.` : "No game to render yet (the Game tab)."),
    field("codec", codec), field("deals", deals), field("frame rate", fps), field("size", size), field("from", from), field("to", to),
    h("div", { class: "row" }, h("button", { id: "render-start", class: "primary", disabled: info.game ? null : "", onclick: start }, "Render")));
  const list = h("ul", { class: "list renders" });
  for (const j of (listed && listed.jobs) || []) {
    const pct = Math.round(100 * (j.progress || 0));
    const piece = j.from || j.to ? ` · ${j.from || "start"} to ${j.to || "end"}` : "";
    const what = `${j.codec}${j.deals ? ` · deals ${j.deals}` : " · whole game"}${piece} · ${j.fps} fps${j.size ? ` · ${j.size}` : ""}`;
    const state = j.status === "running" ? `${pct}% (${j.done}/${j.total} frames)` : j.status === "done" ? `done · ${mb(j.bytes || 0)}` : j.status === "failed" ? `failed: ${j.error}` : j.status;
    list.append(h("li", { dataset: { render: j.id, status: j.status } },
      h("span", { class: "name" }, what),
      j.status === "running" ? h("progress", { max: "100", value: String(pct) }) : null,
      h("span", { class: j.status === "failed" ? "error" : "help" }, state),
      j.status === "done" ? h("button", { class: "download", onclick: () => download(j.url, `${S.ch}-${j.id}${j.codec === "vp9" ? ".webm" : j.codec === "h264" ? ".mp4" : ".mov"}`) }, "Download") : null,
      h("button", { class: "danger", onclick: () => stop(j) }, j.status === "running" || j.status === "waiting" ? "Cancel" : "Delete")));
  }
  if (!listed || !listed.jobs.length) list.append(h("li", { class: "help" }, "No render yet."));
  p.append(list);
  p.append(h("h2", {}, "Export the look"),
    h("p", { class: "help" }, "The whole look as one file: layout, views, theme, timing, match data with names, photos and logos. euchre-overlay render --channel-settings FILE takes it as it is, on any machine."),
    h("button", { id: "look-export-file", onclick: () => download(`/studio/api/channels/${enc(S.ch)}/export`, `${S.ch}-look.json`) }, "Export look file"));
}
