// The realtime socket: connecting, resuming with ?lastSeq after a drop, capped
// jittered back-off, commands with ids that are answered by ack/error (and resent
// with the same id after a reconnect, which the server answers without applying the
// command twice), and a watchdog, because a browser only notices a dead TCP path
// when it next writes — a phone switching networks would otherwise sit "connected".
import {
  CloseCode, Command, DIRECT_EVENTS, ErrorCode, Event, JamError, decodeEnvelope, encodeFrame, isKnownEvent, permanentCloseFailure, realtimePath, socketProtocols,
} from './protocol.js';
import { randomFraction, randomUUID } from './ids.js';
import { ConnectionWatch, isDead, shouldProbe } from './connection-watch.js';

/** Capped exponential back-off with full jitter (JamClient's Backoff). */
export function backoffDelayMs(attempt, baseMs = 250, capMs = 15_000) {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 20));
  return randomFraction() * ceiling;
}

export const Phase = Object.freeze({
  idle: 'idle', connecting: 'connecting', connected: 'connected', retrying: 'retrying', failed: 'failed', closed: 'closed',
});

export class Connection {
  /**
   * @param {object} options
   * @param {string} options.sessionId
   * @param {() => string} options.token the current token (it may be refreshed while the page is open)
   * @param {() => (number|null)} options.lastSeq the last applied seq, for resuming
   * @param {(envelope: object, receivedAt: number) => void} options.onEnvelope session events and passing frames (not pong/ack/error)
   * @param {(envelope: object) => void} options.onUnknownEvent a frame of a type this client does not know (a newer server's)
   * @param {(error: JamError, answered: {clockPingAnswered: boolean}) => void} [options.onRefusal] the server refused a frame sent without an id (a hello, say; a refused ping answers the clock's oldest unless the watch's own was older)
   * @param {(pong: object, receivedAt: number) => void} options.onPong
   * @param {(phase: object) => void} options.onPhase
   * @param {() => void} [options.onOpen] a new socket is open (clock sync restarts)
   * @param {() => number} [options.unansweredAge] ms the oldest unanswered ping has waited
   * @param {() => number} [options.now]
   */
  constructor(options) {
    this.options = options;
    this.now = options.now || (() => performance.now());
    this.socket = null;
    this.phase = { phase: Phase.idle };
    this.attempt = 0;
    this.retryTimer = null;
    this.watchdog = null;
    this.pending = new Map(); // id -> {frame, resolve, reject, sentAt}
    // The send time of the watch's own ping on this socket until its pong (not a clock sample).
    this.probeSentAt = null;
    this.counter = 0;
    this.stopped = false;
    this.lastRefusal = null;
    this.idPrefix = randomUUID().slice(0, 8);
    this.onOnline = () => {
      if (this.phase.phase === Phase.retrying) this.connectNow();
    };
    this.onVisible = () => {
      if (document.visibilityState === 'visible' && this.phase.phase === Phase.retrying) this.connectNow();
    };
  }

  start() {
    this.stopped = false;
    window.addEventListener('online', this.onOnline);
    document.addEventListener('visibilitychange', this.onVisible);
    this.watchdog = setInterval(() => this.checkAlive(), ConnectionWatch.checkEveryMs);
    this.open();
  }

  /** Closes for good (leaving, or switching sessions). */
  stop() {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.watchdog);
    window.removeEventListener('online', this.onOnline);
    document.removeEventListener('visibilitychange', this.onVisible);
    if (this.socket) {
      const socket = this.socket;
      this.socket = null;
      detach(socket);
      socket.close(CloseCode.normal, 'leaving');
    }
    this.failPending(new JamError(ErrorCode.unavailable, 'the connection was closed'));
    this.setPhase({ phase: Phase.closed });
  }

  get isOpen() {
    return !!this.socket && this.socket.readyState === WebSocket.OPEN;
  }

  setPhase(phase) {
    this.phase = phase;
    this.options.onPhase(phase);
  }

  url() {
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const params = new URLSearchParams();
    const lastSeq = this.options.lastSeq();
    if (lastSeq != null) params.set('lastSeq', String(lastSeq));
    const query = params.toString();
    return `${scheme}//${location.host}${realtimePath(this.options.sessionId)}${query ? `?${query}` : ''}`;
  }

  open() {
    if (this.stopped) return;
    this.attempt += 1;
    this.setPhase({ phase: Phase.connecting, attempt: this.attempt });
    this.lastRefusal = null;
    this.openedAt = this.now();
    let socket;
    try {
      // The token rides in a subprotocol, not the URL, so it stays out of access logs.
      socket = new WebSocket(this.url(), socketProtocols(this.options.token()));
    } catch (error) {
      this.retry(`cannot open a connection: ${error.message}`);
      return;
    }
    this.socket = socket;
    this.heardFirst = false;
    this.probeSentAt = null;
    socket.onopen = () => {
      this.lastHeardAt = this.now();
      // Commands that never got an answer go again with the same ids.
      for (const entry of this.pending.values()) socket.send(entry.frame);
      if (this.options.onOpen) this.options.onOpen();
    };
    socket.onmessage = (message) => {
      const receivedAt = this.now();
      if (this.socket !== socket) return;
      this.lastHeardAt = receivedAt;
      this.received(message.data, receivedAt);
    };
    socket.onclose = (close) => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.closed(close.code, close.reason);
    };
    // An error is always followed by a close, which carries what there is to know.
    socket.onerror = () => {};
  }

  received(text, receivedAt) {
    const envelope = decodeEnvelope(text);
    if (!envelope) return;
    // An error is not an answer: a server that refuses a socket opens it, says why and closes
    // it, and that must not reset the back-off (as in JamClient).
    if (envelope.type !== Event.error) this.answered();
    if (!isKnownEvent(envelope.type)) {
      this.options.onUnknownEvent(envelope);
      return;
    }
    if (!DIRECT_EVENTS.has(envelope.type)) {
      this.options.onEnvelope(envelope, receivedAt);
      return;
    }
    const data = envelope.data || {};
    if (envelope.type === Event.pong) {
      if (this.probeSentAt !== null && data.clientSendTime === this.probeSentAt) this.probeSentAt = null;
      else this.options.onPong(data, receivedAt);
    } else if (envelope.type === Event.ack) {
      this.settle(data.id, null, data);
    } else if (envelope.type === Event.error) {
      const error = new JamError(data.code || ErrorCode.internal, data.message || 'the server reported an error', data.retryAfterMs);
      if (data.id) {
        this.settle(data.id, error);
      } else {
        this.lastRefusal = error;
        // A refused ping (over the server's budget) is answered, if not with a pong: the oldest
        // waiting, the watch's own or else the clock's (as in JamClient).
        const clockWaited = this.options.unansweredAge ? this.options.unansweredAge() : 0;
        const probeIsOldest = this.probeSentAt !== null && this.now() - this.probeSentAt >= clockWaited;
        if (probeIsOldest) this.probeSentAt = null;
        if (this.options.onRefusal) this.options.onRefusal(error, { clockPingAnswered: !probeIsOldest });
      }
    } else {
      // The passing device-sync frames (syncStatus, calibration, …): the store hands them on.
      this.options.onEnvelope(envelope, receivedAt);
    }
  }

  /** The server answers on this socket: it is connected, and the back-off starts again. */
  answered() {
    if (this.heardFirst) return;
    this.heardFirst = true;
    this.attempt = 0;
    this.setPhase({ phase: Phase.connected });
  }

  closed(code, reason) {
    if (this.stopped) return;
    const failure = permanentCloseFailure(code, reason || (this.lastRefusal && this.lastRefusal.message), this.lastRefusal);
    if (failure) {
      this.stopped = true;
      clearInterval(this.watchdog);
      this.failPending(failure);
      this.setPhase({ phase: Phase.failed, error: failure });
      return;
    }
    // 4429 closes both a refusal (too many sockets from one address, too many requests from
    // the member) and a reader that fell behind: a socket refused before any answer says the
    // refusal's words.
    let why = 'connection lost';
    if (this.lastRefusal && !this.heardFirst) why = this.lastRefusal.message;
    else if (code === CloseCode.slowReader) why = 'this device fell behind';
    else if (reason) why = reason;
    this.retry(why);
  }

  retry(reason) {
    if (this.stopped) return;
    const attempt = Math.max(1, this.attempt);
    const delay = backoffDelayMs(attempt);
    this.setPhase({ phase: Phase.retrying, attempt, afterMs: delay, at: this.now() + delay, reason });
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.open(), delay);
  }

  /** Skips the wait (the network came back, the tab became visible, the user asked). */
  connectNow() {
    if (this.stopped || this.phase.phase !== Phase.retrying) return;
    clearTimeout(this.retryTimer);
    this.open();
  }

  /**
   * Drops the socket so it reconnects (a stuck connection, or a test).
   * @param {string} [reason] why, as the connection status shows it ("Offline (reason)")
   */
  reconnect(reason = 'reconnecting') {
    if (!this.socket) return;
    const socket = this.socket;
    this.socket = null;
    detach(socket);
    socket.close(CloseCode.normal, 'reconnecting');
    this.retry(reason);
  }

  checkAlive() {
    const { phase } = this.phase;
    if (!this.socket || (phase !== Phase.connecting && phase !== Phase.connected)) return;
    const now = this.now();
    const clockWaited = this.options.unansweredAge ? this.options.unansweredAge() : 0;
    const waited = Math.max(clockWaited, this.probeSentAt === null ? 0 : now - this.probeSentAt);
    let oldestCommand = Infinity;
    for (const entry of this.pending.values()) oldestCommand = Math.min(oldestCommand, entry.sentAt);
    const look = {
      answered: phase === Phase.connected,
      sinceOpenedMs: now - this.openedAt,
      oldestUnansweredPingMs: waited > 0 ? waited : null,
      oldestWaitingCommandMs: oldestCommand === Infinity ? null : now - oldestCommand,
      sinceHeardMs: now - this.lastHeardAt,
    };
    // Said as JamClient's SessionClient says it, not as a bare "reconnecting".
    if (isDead(look)) this.reconnect(look.answered ? 'the server stopped answering' : 'the server did not answer on the new connection');
    else if (shouldProbe(look)) this.probe();
  }

  /** Pings the server on a socket the watch wants to hear from; the watch then judges it by its pong or its silence. */
  probe() {
    const sentAt = this.now();
    if (this.post(Command.ping, { clientSendTime: sentAt })) this.probeSentAt = sentAt;
  }

  /** Sends a command and resolves with the server's ack; rejects with the server's JamError. */
  send(type, data) {
    if (this.phase.phase === Phase.failed) return Promise.reject(this.phase.error);
    if (this.stopped) return Promise.reject(new JamError(ErrorCode.unavailable, 'not connected to the session'));
    this.counter += 1;
    const id = `${this.idPrefix}-${this.counter}`;
    const frame = encodeFrame(type, data, id);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { frame, resolve, reject, sentAt: this.now() });
      if (this.isOpen) this.socket.send(frame);
    });
  }

  /** Sends a frame that gets no answer (ping, ready, syncReport, hello); false when not connected. */
  post(type, data) {
    if (!this.isOpen) return false;
    this.socket.send(encodeFrame(type, data));
    return true;
  }

  settle(id, error, ack) {
    const entry = this.pending.get(id);
    if (!entry) return;
    this.pending.delete(id);
    if (error) entry.reject(error);
    else entry.resolve(ack);
  }

  failPending(error) {
    for (const entry of this.pending.values()) entry.reject(error);
    this.pending.clear();
  }
}

function detach(socket) {
  socket.onopen = null;
  socket.onmessage = null;
  socket.onclose = null;
  socket.onerror = null;
}
