// @ts-check
// The logger's outbox: every action with its seq, kept in localStorage until the server has
// acknowledged it (a reload or a dead battery loses nothing), sent one at a time in seq order.
// A resend after a lost answer is a duplicate the server acknowledges without applying it
// again (it dedups by seq), so "not sure it arrived" is always answered by sending again.

/** @typedef {Record<string, unknown>} Action an action as the live feed takes it, seq aside */
/** @typedef {"queued" | "sending" | "acked" | "refused"} EntryState */
/**
 * One action the page took: its seq, what it posts, where it is, and the times a bench reads
 * (epoch milliseconds: tapped, first sent, acknowledged).
 * @typedef {object} Entry
 * @property {number} seq
 * @property {Action} action
 * @property {string} label
 * @property {EntryState} state
 * @property {number} tappedAt
 * @property {number | null} sentAt
 * @property {number | null} ackAt
 * @property {number} tries
 * @property {string | null} error
 * @property {boolean} duplicate the server had it already (an answer was lost)
 * @property {number | null} steps the game's steps once the server took it (from its ack)
 */
/**
 * What one send came to: the server's answer, no answer at all (the network), or a refusal.
 * @typedef {{ kind: "ok", body: any } | { kind: "network", error: string } | { kind: "refused", status: number, body: any }} Sent
 */

/** @returns {number} epoch milliseconds, sub-millisecond */
export function epochMs() { return performance.timeOrigin + performance.now(); }

/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export class Outbox {
  /**
   * @param {string} key where the pending actions live in localStorage
   * @param {(e: Entry) => Promise<Sent>} send posts one action (with its seq)
   */
  constructor(key, send) {
    this.key = key;
    this.send = send;
    /** @type {Entry[]} the actions not acknowledged yet and the last few that are, oldest first */
    this.entries = this.load();
    /** @type {Entry[]} every action acknowledged since the page opened (what a bench reads) */
    this.log = [];
    /** the server's next seq as last seen */
    this.expected = 1;
    /** false after a send found no network, until one gets through */
    this.online = true;
    /** when the network was last found gone (epoch ms), for "offline for 12 s" */
    this.offlineSince = /** @type {number | null} */ (null);
    this.running = false;
    /** a refusal stops the queue until the person decides (drop or retry) */
    this.stopped = false;
    /** @type {(() => void)[]} */
    this.listeners = [];
    /** @type {((e: Entry, body: any) => void) | null} */
    this.onAck = null;
    /** @type {((e: Entry, status: number, body: any) => void) | null} */
    this.onRefused = null;
    this.retry = /** @type {ReturnType<typeof setTimeout> | null} */ (null);
  }

  /** @returns {Entry[]} */
  load() {
    try {
      const raw = localStorage.getItem(this.key);
      const list = raw ? JSON.parse(raw) : [];
      if (!Array.isArray(list)) return [];
      // a send cut by a reload may have arrived: send it again (a duplicate if it did)
      return list.map((/** @type {Entry} */ e) => ({ ...e, state: e.state === "sending" ? "queued" : e.state }));
    } catch {
      return [];
    }
  }

  save() {
    const pending = this.pending();
    try {
      if (pending.length) localStorage.setItem(this.key, JSON.stringify(pending));
      else localStorage.removeItem(this.key);
    } catch {
      // storage full or refused: the queue still lives in memory
    }
  }

  /** @returns {Entry[]} what the server has not acknowledged (queued, sending, refused) */
  pending() { return this.entries.filter((e) => e.state !== "acked"); }

  /** @param {() => void} fn */
  subscribe(fn) { this.listeners.push(fn); }

  changed() { for (const fn of this.listeners) fn(); }

  /** The seq the next action gets: after the server's and after every one waiting. */
  nextSeq() {
    let seq = this.expected;
    for (const e of this.entries) if (e.state !== "refused" && e.seq >= seq) seq = e.seq + 1;
    return seq;
  }

  /** @param {number} expected the server's next seq (from a view) */
  setExpected(expected) {
    this.expected = expected;
  }

  /**
   * Take an action: it gets the next seq, is stored, and is sent after those before it.
   * @param {Action} action @param {string} label @param {number} [tappedAt]
   * @returns {Entry}
   */
  add(action, label, tappedAt = epochMs()) {
    /** @type {Entry} */
    const e = { seq: this.nextSeq(), action, label, state: "queued", tappedAt, sentAt: null, ackAt: null, tries: 0, error: null, duplicate: false, steps: null };
    this.entries.push(e);
    this.save();
    const idle = !this.running && !this.stopped;
    void this.pump(); // on the wire first (when nothing is ahead of it), drawn after
    if (!idle) this.changed();
    return e;
  }

  /** The last action not sent yet, taken back (an undo that never needs the network). */
  takeBackLast() {
    const last = this.entries[this.entries.length - 1];
    if (!last || last.state !== "queued") return null; // "sending" is on the wire already
    this.entries.pop();
    this.save();
    this.changed();
    return last;
  }

  /** Drop the refused action and every one queued after it (the person chose to). */
  dropRefused() {
    const i = this.entries.findIndex((e) => e.state === "refused");
    if (i < 0) return 0;
    const n = this.entries.length - i;
    this.entries.splice(i);
    this.stopped = false;
    this.save();
    this.changed();
    return n;
  }

  /** Send the refused action again (after the person fixed what stood in its way). */
  retryRefused() {
    for (const e of this.entries) if (e.state === "refused") { e.state = "queued"; e.error = null; }
    this.stopped = false;
    this.save();
    this.changed();
    void this.pump();
  }

  /** Send what waits, in order, one at a time, until the queue is empty, the network is
   * gone (then again in a second, or as soon as the browser says it is back) or one is refused. */
  async pump() {
    if (this.running || this.stopped) return;
    this.running = true;
    if (this.retry !== null) { clearTimeout(this.retry); this.retry = null; }
    try {
      for (;;) {
        const e = this.entries.find((x) => x.state === "queued" || x.state === "sending");
        if (!e || this.stopped) break;
        e.state = "sending";
        e.tries += 1;
        if (e.sentAt === null) e.sentAt = epochMs();
        const answer = this.send(e);
        this.changed();
        const r = await answer;
        if (!this.entries.includes(e)) continue; // dropped meanwhile
        if (r.kind === "ok") {
          e.state = "acked";
          e.ackAt = epochMs();
          e.duplicate = Boolean(r.body && r.body.ack && r.body.ack.duplicate);
          e.steps = r.body && r.body.ack && typeof r.body.ack.steps === "number" ? r.body.ack.steps : null;
          this.online = true;
          this.offlineSince = null;
          this.log.push(e);
          this.trim();
          this.save();
          if (this.onAck) this.onAck(e, r.body);
          this.changed();
        } else if (r.kind === "network") {
          e.state = "queued";
          if (this.online) this.offlineSince = epochMs();
          this.online = false;
          this.changed();
          this.retry = setTimeout(() => { this.retry = null; void this.pump(); }, 1000);
          break;
        } else {
          e.state = "refused";
          e.error = (r.body && r.body.error) || `HTTP ${r.status}`;
          this.online = true;
          this.offlineSince = null;
          this.stopped = true;
          this.save();
          if (this.onRefused) this.onRefused(e, r.status, r.body);
          this.changed();
          break;
        }
      }
    } finally {
      this.running = false;
    }
  }

  /** Keep the last 20 acknowledged actions beside the pending ones (what the queue panel lists). */
  trim() {
    const acked = this.entries.filter((e) => e.state === "acked");
    if (acked.length > 20) {
      const drop = new Set(acked.slice(0, acked.length - 20));
      this.entries = this.entries.filter((e) => !drop.has(e));
    }
  }

  /** Wait until nothing waits (or ``ms`` pass); true when the queue is empty. */
  async drained(ms = 10000) {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      if (!this.pending().length) return true;
      await sleep(20);
    }
    return !this.pending().length;
  }
}
