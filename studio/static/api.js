// @ts-check
// The service's JSON API with the token in a header (never in a URL: URLs end up in logs).

export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.error ? body.error : `HTTP ${status}`);
    this.status = status;
    this.body = body || {};
  }
}

export class Api {
  constructor(token) {
    this.token = token;
    /** called on a 401: the server no longer takes this token (rotated, or another server)
     * @type {((body: any) => void) | null} */
    this.onRefused = null;
    /** called when the server stops answering (false) and answers again (true)
     * @type {((answering: boolean) => void) | null} */
    this.onReach = null;
    /** Date.now() of the first unanswered request since the last answer, or null */
    this.downSince = null;
  }

  /** fetch, with the server's silence (stopped, restarting, the network down) said as such:
   * an ApiError of status 0 instead of the browser's "Failed to fetch".
   * @param {string} path @param {RequestInit} init @returns {Promise<Response>} */
  async fetch(path, init) {
    let r;
    try {
      r = await fetch(path, init);
    } catch (err) {
      if (init.signal && init.signal.aborted) throw err;
      if (this.downSince === null) { this.downSince = Date.now(); if (this.onReach) this.onReach(false); }
      throw new ApiError(0, { error: "No answer from the server: it is stopped or restarting, or the network is down. The studio keeps trying." });
    }
    if (this.downSince !== null) { this.downSince = null; if (this.onReach) this.onReach(true); }
    return r;
  }

  /**
   * One request; the answer's JSON (null for an empty body).  Throws ApiError on a refusal.
   * @param {string} method @param {string} path @param {unknown} [body] JSON, or with raw the body itself (a BodyInit)
   * @param {{ raw?: boolean, type?: string }} [options] type: the body's Content-Type
   * @returns {Promise<any>} the service's JSON answer (each caller knows its route's shape)
   */
  async req(method, path, body, { raw = false, type } = {}) {
    const headers = { Authorization: `Bearer ${this.token}` };
    let payload;
    if (body !== undefined) {
      if (raw) {
        payload = /** @type {BodyInit} */ (body);
        if (type) headers["Content-Type"] = type;
      } else {
        payload = JSON.stringify(body);
        headers["Content-Type"] = type || "application/json";
      }
    }
    const r = await this.fetch(path, { method, headers, body: payload, cache: "no-store" });
    let data = null;
    const text = await r.text();
    if (text) {
      try { data = JSON.parse(text); } catch { data = { error: text }; }
    }
    if (!r.ok) {
      if (r.status === 401 && this.onRefused) this.onRefused(data);
      throw new ApiError(r.status, data);
    }
    return data;
  }

  get(path) { return this.req("GET", path); }

  /** A guarded image as a blob: URL (an <img> cannot send the token itself); with `body`, the
   * image a POST of that JSON answers. @param {string} path @param {unknown} [body] */
  async blobUrl(path, body) {
    /** @type {RequestInit} */
    const init = { headers: { Authorization: `Bearer ${this.token}` }, cache: "no-store" };
    if (body !== undefined) Object.assign(init, { method: "POST", body: JSON.stringify(body), headers: { ...init.headers, "Content-Type": "application/json" } });
    const r = await this.fetch(path, init);
    if (!r.ok) {
      if (r.status === 401 && this.onRefused) this.onRefused(null);
      throw new ApiError(r.status, null);
    }
    return URL.createObjectURL(await r.blob());
  }
  post(path, body) { return this.req("POST", path, body === undefined ? {} : body); }
  patch(path, body) { return this.req("PATCH", path, body, { type: "application/merge-patch+json" }); }
  del(path) { return this.req("DELETE", path); }
}
