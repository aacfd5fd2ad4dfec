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

export class Api {
  /** @param {string} [token] */
  constructor(token) {
    this.token = token || null;
  }

  /** @param {{ idempotencyKey?: string }} [options] a key names the change, so sending it again applies it once */
  async request(method, path, body, { idempotencyKey } = {}) {
    const headers = { Accept: 'application/json' };
    if (idempotencyKey) headers['Idempotency-Key'] = idempotencyKey;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    let response;
    try {
      response = await fetch(path, {
        method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store',
      });
    } catch {
      throw new JamError(ErrorCode.unavailable, 'cannot reach the server — check your connection');
    }
    if (response.status === 204) return null;
    let payload = null;
    const text = await response.text();
    if (text) {
      try {
        payload = JSON.parse(text);
      } catch {
        payload = null;
      }
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
