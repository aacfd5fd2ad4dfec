// REST calls. Every failure becomes a JamError carrying the server's code and its
// message (which is written for people), so views can show it as it is.
import { ErrorCode, JamError, errorCodeForStatus } from './protocol.js';

/**
 * What an answer without the server's error body means: a gateway's own page (HAProxy, nginx)
 * when no server behind it answered, else a status nobody explained.
 */
function bareStatusWords(status) {
  if (status === 502 || status === 503 || status === 504) {
    return `the server is not answering right now (the gateway in front of it answered ${status}); try again in a moment`;
  }
  return `the server answered ${status} without saying why`;
}

/** How long a call may take before the page says the server did not answer (JamAPI's timeout). */
export const REQUEST_TIMEOUT_MS = 15_000;

/**
 * A signal that fires after `ms`, and `done()` to stop its timer. AbortSignal.timeout is
 * missing before Safari 16, which older iPhones cannot get past.
 */
function deadline(ms) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException('the call took too long', 'TimeoutError')), ms);
  return { signal: controller.signal, done: () => clearTimeout(timer) };
}

export class Api {
  /**
   * @param {string} [token]
   * @param {{ timeoutMs?: number }} [options]
   */
  constructor(token, { timeoutMs = REQUEST_TIMEOUT_MS } = {}) {
    this.token = token || null;
    this.timeoutMs = timeoutMs;
  }

  /** @param {{ idempotencyKey?: string }} [options] a key names the change, so sending it again applies it once */
  async request(method, path, body, { idempotencyKey } = {}) {
    const headers = { Accept: 'application/json' };
    if (idempotencyKey) headers['Idempotency-Key'] = idempotencyKey;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    // A call that never ends (a server or path gone quiet) would otherwise leave a button
    // busy, or every later settings change queued behind it, for good.
    const { signal, done } = deadline(this.timeoutMs);
    const unanswered = () => new JamError(
      ErrorCode.unavailable, `the server did not answer within ${this.timeoutMs >= 1000 ? `${Math.round(this.timeoutMs / 1000)} s` : `${this.timeoutMs} ms`}; try again`);
    let response;
    let text;
    try {
      try {
        response = await fetch(path, {
          method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store', signal,
        });
      } catch {
        if (signal.aborted) throw unanswered();
        throw new JamError(ErrorCode.unavailable, 'cannot reach the server — check your connection');
      }
      if (response.status === 204) return null;
      try {
        text = await response.text();
      } catch {
        throw signal.aborted ? unanswered() : new JamError(ErrorCode.unavailable, 'the answer was cut off on its way; try again');
      }
    } finally {
      done();
    }
    let payload = null;
    let json = true;
    if (text) {
      try {
        payload = JSON.parse(text);
      } catch {
        payload = null;
        json = false;
      }
    }
    if (response.ok && !json) {
      // A Wi-Fi sign-in page or a proxy answered in the server's place: said so, rather than
      // a view with nothing in it failing somewhere further on.
      throw new JamError(ErrorCode.unavailable,
        'the answer did not come from OpenJam (a Wi-Fi sign-in page or a proxy in the way?); try again once you are online');
    }
    if (!response.ok) {
      const detail = payload && payload.error;
      const code = detail && typeof detail.code === 'string' ? detail.code : errorCodeForStatus(response.status);
      const message = detail && typeof detail.message === 'string' ? detail.message : bareStatusWords(response.status);
      const error = new JamError(code, message);
      error.status = response.status;
      const retryAfter = Number(response.headers.get('Retry-After'));
      if (Number.isFinite(retryAfter) && retryAfter > 0) error.retryAfterSeconds = retryAfter;
      throw error;
    }
    return payload;
  }

  /** @returns {Promise<import('./protocol.js').GuestAuthResponse>} */
  guest(displayName) {
    return this.request('POST', '/auth/guest', { displayName });
  }

  /** A fresh token for the current one (which must still be valid). */
  refresh() {
    return this.request('POST', '/auth/refresh');
  }

  /**
   * Opens a session. With `key`, a create sent again after a failure on the way answers with
   * the session the first one made, if it made one, instead of opening a second.
   */
  createSession({ name, displayName, key } = {}) {
    const body = {};
    if (name) body.name = name;
    if (displayName) body.displayName = displayName;
    return this.request('POST', '/api/v1/sessions', body, { idempotencyKey: key });
  }

  joinSession(code, displayName) {
    const body = { code };
    if (displayName) body.displayName = displayName;
    return this.request('POST', '/api/v1/sessions/join', body);
  }

  getSession(id) {
    return this.request('GET', `/api/v1/sessions/${encodeURIComponent(id)}`);
  }

  /** Host controls over REST: settings (locked, fallback...), playback, seekMs, regenerateJoinCode. */
  updateSession(id, patch) {
    return this.request('PATCH', `/api/v1/sessions/${encodeURIComponent(id)}`, patch);
  }

  /** Ends the session for everybody (host only). */
  endSession(id) {
    return this.request('DELETE', `/api/v1/sessions/${encodeURIComponent(id)}`);
  }

  leaveSession(id) {
    return this.request('POST', `/api/v1/sessions/${encodeURIComponent(id)}/leave`);
  }

  /** @returns {Promise<{tracks: import('./protocol.js').Track[]}>} */
  search(query, limit = 25) {
    const params = new URLSearchParams({ q: query, limit: String(limit) });
    return this.request('GET', `/api/v1/search?${params}`);
  }
}
