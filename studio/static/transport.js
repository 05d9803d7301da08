// The transport bar: Director commands, the playhead and pages per output (polled), the
// scrubber with deal markers.

import { h, clear, $ } from "./dom.js";
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
  if (S.info.game && S.info.game.steps !== S.timeline.length) {
    S.timeline = (await S.api.get(`/studio/api/channels/${enc(S.ch)}/timeline`)).steps;
  }
  renderTransport();
}

export function renderTransport() {
  const info = S.info;
  const pages = clear($("#pages"));
  if (!info) return;
  for (const o of OUTPUTS) {
    const n = (info.pages || {})[o] || 0;
    const delay = ((info.playhead || {}).delays || {})[o] || 0;
    pages.append(h("span", { title: `${n} page(s) showing ${o}` }, h("span", { class: `dot${n ? " on" : ""}` }), `${o} ${n}`, delay ? ` · ${delay} s` : ""));
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
  // an alternative line on air (overlay.branching): the scrubber is the main line's, so it
  // waits; MAIN LINE returns
  const line = ph.line;
  $("#mainline").hidden = !line;
  scrub.disabled = Boolean(line);
  const st = line ? null : S.timeline[ph.step || 0];
  $("#where").textContent = line
    ? `ALTERNATIVE LINE · deal ${line.deal} · line ${line.line} · step ${(ph.step || 0) - line.firstStep + 1}/${line.steps - line.firstStep}${ph.playing ? "" : " · paused"}`
    : st ? `deal ${st.deal + 1} · step ${(ph.step || 0) + 1}/${steps} · ${st.kind.replace(/_/g, " ")}${ph.playing ? "" : " · paused"}` : "no game";
  const m = clear($("#markers"));
  let last = null;
  S.timeline.forEach((s, i) => {
    if (s.deal === last) return;
    last = s.deal;
    const mark = h("span", { title: `deal ${s.deal + 1} (deal number ${s.dealNumber} in the file): step ${i + 1}` }, `D${s.deal + 1}`);
    mark.style.left = `${(100 * i) / Math.max(1, steps - 1)}%`;
    m.append(mark);
  });
}
