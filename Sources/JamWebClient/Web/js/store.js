// The session as the page renders it: the server's state (a SessionMirror fed by
// the socket) plus an optimistic layer, as JamClient's SessionStore does it. A vote
// shows at once and an older server update cannot undo it while it is in flight;
// rapid taps collapse into one follow-up; an add shows as pending until the server
// confirms it; a host skip hides the current item at once; a refusal rolls back and
// keeps the server's reason for the page to show.
import { Connection, Phase } from './connection.js';
import { readableEventData } from './event-shapes.js';
import { Applied, SessionMirror } from './mirror.js';
import { Command, ErrorCode, JamError, QueueOrdering, Role, votesReason } from './protocol.js';
import { randomUUID } from './ids.js';

export class SessionStore {
  /**
   * @param {object} options
   * @param {string} options.sessionId
   * @param {() => string} options.token the current token
   * @param {string} options.me the caller's user id
   * @param {import('./clock.js').ClockSync} options.clock
   */
  constructor({ sessionId, token, me, clock }) {
    this.sessionId = sessionId;
    this.me = me;
    this.clock = clock;
    this.mirror = new SessionMirror(me);
    this.phase = { phase: Phase.idle };
    this.votes = new Map(); // itemId -> {desired, sent, baseScore, baseVote}
    this.pendingAdds = []; // {nonce, item}
    this.hiddenBySkip = null;
    /** A host skip is on its way. */
    this.skipInFlight = false;
    /**
     * The member's own skip request or its withdrawal, {item, asking, others}: shown from the
     * tap, and kept while its item plays (the server broadcasts how many asked, not who).
     */
    this.skipAsked = null;
    this.lastRejection = null;
    this.helloInFlight = false;
    this.wholeStateInFlight = false;
    /** The socket has been connected once: a later connection measures the clock again. */
    this.connectedBefore = false;
    this.listeners = new Set();
    this.envelopeListeners = new Set();
    this.passingListeners = new Set();
    this.reconnectListeners = new Set();
    this.publishQueued = false;
    this.rejectionCounter = 0;
    // Until the first pong, server time is guessed from the envelope timestamps
    // (late by the one-way delay): enough for a progress bar, never for playback.
    this.roughOffset = null;
    this.connection = new Connection({
      sessionId,
      token,
      lastSeq: () => this.mirror.seq,
      onEnvelope: (envelope, receivedAt) => this.received(envelope, receivedAt),
      onUnknownEvent: (envelope) => this.unknownEvent(envelope),
      // A refused hello brings no resume: the next gap asks again (JamClient does the same).
      // A refused ping is answered, if not with a pong: the server answers in order and pongs
      // at once, so it is the oldest still waiting (as in JamClient).
      onRefusal: (error, { clockPingAnswered }) => {
        this.helloInFlight = false;
        this.wholeStateInFlight = false;
        if (clockPingAnswered) this.clock.forgetOldestPending();
      },
      onPong: (pong, receivedAt) => this.clock.record(pong, receivedAt),
      onPhase: (phase) => {
        // A reconnect may come through another route: measure the clock again, once the
        // server answers (as JamClient's Participant does). A socket the server opens only to
        // refuse and close keeps the estimate the device plays by.
        const reconnected = phase.phase === Phase.connected && this.phase.phase !== Phase.connected && this.connectedBefore;
        if (phase.phase === Phase.connected) this.connectedBefore = true;
        this.phase = phase;
        if (reconnected && this.clock.send) this.clock.reset();
        if (reconnected) for (const fn of this.reconnectListeners) fn();
        this.publish();
      },
      onOpen: () => {
        this.helloInFlight = false;
        this.wholeStateInFlight = false;
        if (!this.clock.send) {
          this.clock.start((ping) => this.connection.post(Command.ping, ping));
        } else {
          // A resume with nothing missed brings no frame, and the next burst may be seconds
          // away: a ping's pong says the socket is answered (as JamClient's first ping does).
          this.connection.post(Command.ping, { clientSendTime: performance.now() });
        }
      },
      unansweredAge: () => this.clock.oldestUnansweredAge(),
    });
  }

  /** Starts following the session, showing `view` (from REST) until the socket's state arrives. */
  start(view) {
    if (view) this.mirror.seed(view);
    this.connection.start();
    this.publish();
  }

  stop() {
    this.clock.stop();
    this.connection.stop();
  }

  /** fn(snapshot) after every change. */
  subscribe(fn) {
    this.listeners.add(fn);
    fn(this.snapshot());
    return () => this.listeners.delete(fn);
  }

  /** fn(envelope) for every session event applied, in order (the sync engine follows these). */
  onEnvelope(fn) {
    this.envelopeListeners.add(fn);
    return () => this.envelopeListeners.delete(fn);
  }

  /** Calls `fn` with every passing frame (syncStatus, calibration, …): outside the session's event order. */
  onPassing(fn) {
    this.passingListeners.add(fn);
    return () => this.passingListeners.delete(fn);
  }

  /** Calls `fn` each time the server answers a new socket after the first (a reconnect). */
  onReconnected(fn) {
    this.reconnectListeners.add(fn);
    return () => this.reconnectListeners.delete(fn);
  }

  /** Server time now (Unix ms): from the clock sync, or a rough guess before it. */
  serverNow(local = performance.now()) {
    const synced = this.clock.serverTime(local);
    if (synced != null) return synced;
    return this.roughOffset == null ? Date.now() : local + this.roughOffset;
  }

  received(envelope, receivedAt) {
    if (this.roughOffset == null) this.roughOffset = envelope.timestamp - receivedAt;
    const result = this.mirror.apply(envelope);
    if (result === Applied.gap) {
      this.resume();
      return;
    }
    if (result === Applied.unreadable) {
      // As JamClient does with a frame it cannot decode: a resume would replay the same frame.
      console.warn(`a ${envelope.type} frame (seq ${envelope.seq}) did not read; taking the whole state`);
      this.unknownEvent(envelope);
      return;
    }
    if (result === Applied.mine) {
      this.publish();
      return;
    }
    if (result === Applied.direct) {
      // JamClient drops a device-sync frame it cannot decode; so does this page.
      if (!readableEventData(envelope)) {
        console.warn(`a ${envelope.type} frame did not read; dropped`);
        return;
      }
      for (const fn of this.passingListeners) fn(envelope);
      return;
    }
    if (result !== Applied.applied) return;
    this.helloInFlight = false;
    this.wholeStateInFlight = false;
    for (const fn of this.envelopeListeners) fn(envelope);
    this.publish();
  }

  /** Frames are missing: ask for them (or a full stateSync). */
  resume() {
    if (this.helloInFlight) return;
    const data = this.mirror.seq == null ? {} : { lastSeq: this.mirror.seq };
    if (this.connection.post(Command.hello, data)) this.helloInFlight = true;
  }

  /**
   * A newer server's event type. One that took a seq the mirror lacks changed the session in a
   * way only the whole state can show (resuming would replay the same frame); one that did not
   * (a passing frame) is dropped. A resume in flight may have brought it, so only another
   * request for the whole state is one too many.
   */
  unknownEvent(envelope) {
    if (this.mirror.seq == null || envelope.seq <= this.mirror.seq || this.wholeStateInFlight) return;
    if (this.connection.post(Command.hello, {})) {
      this.helloInFlight = true;
      this.wholeStateInFlight = true;
    }
  }

  // MARK: actions

  /** Votes +1, -1 or 0 (clear) on a queued item; shows at once. */
  async vote(itemId, value) {
    this.lastRejection = null;
    const intent = this.votes.get(itemId);
    if (intent) {
      // A vote is on its way: remember the latest wish; one follow-up goes when it lands.
      intent.desired = value;
      this.publish();
      return;
    }
    const view = this.mirror.view;
    const item = view && view.queue.find((i) => i.id === itemId);
    const serverVote = (view && view.myVotes && view.myVotes[itemId]) || 0;
    this.votes.set(itemId, { desired: value, sent: value, baseScore: item ? item.score : 0, baseVote: serverVote });
    this.publish();
    let sending = value;
    for (;;) {
      try {
        await this.connection.send(Command.vote, { itemId, value: sending });
      } catch (error) {
        this.votes.delete(itemId);
        this.reject('vote', error);
        return;
      }
      this.mirror.setMyVote(itemId, sending);
      const current = this.votes.get(itemId);
      if (!current) return;
      if (current.desired === sending) {
        this.votes.delete(itemId);
        this.publish();
        return;
      }
      sending = current.desired;
      current.sent = sending;
    }
  }

  /** Adds a track; it shows as pending until the server confirms it. Resolves to the item id or null. */
  async add(track) {
    this.lastRejection = null;
    const nonce = randomUUID();
    const meMember = this.member(this.me) || { userId: this.me, displayName: 'you', role: Role.member, connected: true };
    const standIn = { id: `pending-${nonce}`, track, addedBy: meMember, addedAt: 0, score: 0, reason: 'adding…' };
    // The items there are now: a new one of ours with this track is this add landing.
    this.pendingAdds.push({ nonce, item: standIn, known: new Set(this.itemIds()) });
    this.publish();
    try {
      const ack = await this.connection.send(Command.addToQueue, { track, nonce });
      this.pendingAdds = this.pendingAdds.filter((p) => p.nonce !== nonce);
      // This add's item is no other add landing: the same song added twice shows twice.
      if (ack.itemId) for (const other of this.pendingAdds) other.known.add(ack.itemId);
      this.publish();
      return ack.itemId || null;
    } catch (error) {
      this.pendingAdds = this.pendingAdds.filter((p) => p.nonce !== nonce);
      this.reject('add', error, track.name);
      return null;
    }
  }

  /**
   * Host skip: the current item disappears at once. A second one before the first is
   * answered does nothing (SessionStore.skip). The skip names the item's epoch, so one sent
   * again after a reconnect is refused rather than skipping whatever plays by then.
   */
  async skip() {
    if (this.skipInFlight) return;
    this.skipInFlight = true;
    this.lastRejection = null;
    const view = this.mirror.view;
    const playing = view && view.nowPlaying;
    this.hiddenBySkip = playing ? playing.item.id : null;
    this.publish();
    try {
      await this.connection.send(Command.skip, playing ? { epoch: playing.epoch } : undefined);
      this.hiddenBySkip = null;
      this.publish();
    } catch (error) {
      this.hiddenBySkip = null;
      this.reject('skip', error);
    } finally {
      this.skipInFlight = false;
    }
  }

  /**
   * Asks to skip the current item; counts at once. The request names the item's epoch
   * (SessionStore.requestSkip), so one sent again after a reconnect is refused rather than
   * counting against the next song.
   */
  async requestSkip() {
    await this.changeSkipRequest(true);
  }

  /**
   * Takes back the member's request to skip the current item; counts at once
   * (SessionStore.withdrawSkipRequest). Like the request, it names the item's epoch.
   */
  async withdrawSkipRequest() {
    await this.changeSkipRequest(false);
  }

  async changeSkipRequest(asking) {
    this.lastRejection = null;
    const view = this.mirror.view;
    const now = view && view.nowPlaying;
    const playing = now ? now.item.id : null;
    const shown = this.snapshot().skipRequests;
    const asked = playing ? { item: playing, asking, others: Math.max(0, shown.count - (shown.mine ? 1 : 0)) } : null;
    if (asked) this.skipAsked = asked;
    this.publish();
    try {
      await this.connection.send(asking ? Command.requestSkip : Command.withdrawSkipRequest, now ? { epoch: now.epoch } : undefined);
      if (playing && asking) this.mirror.requestSkipAnswered(playing);
      if (playing && !asking) this.mirror.withdrawSkipAnswered(playing);
      // The mirror shows it now; kept, it would hide a change made on another device (myChoices).
      // A later tap still on its way stays shown until its own answer.
      if (this.skipAsked === asked) this.skipAsked = null;
    } catch (error) {
      if (this.skipAsked === asked) this.skipAsked = null;
      this.reject(asking ? 'skip request' : 'skip withdrawal', error);
    }
    this.publish();
  }

  /** Any other command (host controls, removal, roles): no optimistic step, refusals surface. */
  async perform(type, data, action, subject) {
    this.lastRejection = null;
    try {
      return await this.connection.send(type, data);
    } catch (error) {
      this.reject(action, error, subject);
      return null;
    }
  }

  /** Shows a refusal from elsewhere (a REST call the page made) like a command's. */
  reject(action, error, subject) {
    // Commands still waiting when the session ended for this member fail with that reason,
    // which the closing screen already says; a notice per command would only repeat it.
    if (this.phase.phase === Phase.failed && error === this.phase.error) return;
    const typed = error instanceof JamError ? error : new JamError(ErrorCode.internal, String(error && error.message || error));
    this.rejectionCounter += 1;
    this.lastRejection = { id: this.rejectionCounter, action, subject, code: typed.code, message: typed.message };
    // When a rate-limited command can pass again; a REST refusal carries its Retry-After in seconds.
    if (Number.isFinite(typed.retryAfterMs)) this.lastRejection.retryAfterMs = typed.retryAfterMs;
    if (Number.isFinite(typed.retryAfterSeconds)) this.lastRejection.retryAfterSeconds = typed.retryAfterSeconds;
    this.publish();
  }

  /** Ids of the items the server has now: queued, up next and playing. */
  itemIds() {
    const view = this.mirror.view;
    if (!view) return [];
    const ids = view.queue.map((i) => i.id);
    if (view.upNext) ids.push(view.upNext.item.id);
    if (view.nowPlaying) ids.push(view.nowPlaying.item.id);
    return ids;
  }

  /**
   * The server's item for a pending add, if its state already has it: the queue update
   * comes before the ack, and showing the stand-in beside the real item would list the
   * song twice until the ack. Items carry no nonce, so it is a new item of ours with
   * the same track that no earlier pending add has `claimed`.
   */
  landedItem(view, add, claimed) {
    const items = [...view.queue];
    if (view.upNext) items.push(view.upNext.item);
    if (view.nowPlaying) items.push(view.nowPlaying.item);
    return items.find((i) => !add.known.has(i.id) && !claimed.has(i.id)
      && i.track.id === add.item.track.id && i.addedBy.userId === this.me) || null;
  }

  member(userId) {
    const view = this.mirror.view;
    return view ? view.members.find((m) => m.userId === userId) || null : null;
  }

  // MARK: snapshot

  publish() {
    if (this.publishQueued) return;
    this.publishQueued = true;
    queueMicrotask(() => {
      this.publishQueued = false;
      const snapshot = this.snapshot();
      for (const fn of this.listeners) fn(snapshot);
    });
  }

  snapshot() {
    const view = this.mirror.view;
    const base = {
      me: this.me, phase: this.phase, lastRejection: this.lastRejection, ended: this.mirror.ended,
      seq: this.mirror.seq,
    };
    if (!view) {
      return { ...base, session: null, members: [], nowPlaying: null, upNext: null, queue: [], history: [],
        skipRequests: { count: 0, needed: 1, mine: false }, role: null };
    }
    const myVotes = view.myVotes || {};
    const queue = view.queue.map((item) => {
      const serverVote = myVotes[item.id] || 0;
      const intent = this.votes.get(item.id);
      if (!intent) return { item, myVote: serverVote, pending: false, voteInFlight: false };
      // In flight: the score as it was when the vote went out, moved by the member's wish.
      const shown = { ...item, score: intent.baseScore - intent.baseVote + intent.desired };
      // Never the new score beside the old reason; in fair ordering the reason is the member's turn.
      if (view.session.settings.ordering === QueueOrdering.votes) shown.reason = votesReason(shown.score);
      return { item: shown, myVote: intent.desired, pending: false, voteInFlight: true };
    });
    const claimed = new Set();
    for (const add of this.pendingAdds) {
      const landed = this.landedItem(view, add, claimed);
      if (landed) claimed.add(landed.id);
      else queue.push({ item: add.item, myVote: 0, pending: true, voteInFlight: false });
    }
    let skipRequests = view.skipRequests;
    const asked = this.skipAsked;
    if (asked && view.nowPlaying && asked.item === view.nowPlaying.item.id) {
      // Counted once: the server's count may include the change before its answer comes, or an
      // earlier tap's change while this one is on its way.
      const count = asked.asking ? Math.max(skipRequests.count, asked.others + 1) : Math.min(skipRequests.count, asked.others);
      skipRequests = { ...skipRequests, mine: asked.asking, count };
    }
    let nowPlaying = view.nowPlaying || null;
    if (this.hiddenBySkip && nowPlaying && nowPlaying.item.id === this.hiddenBySkip) nowPlaying = null;
    const me = view.members.find((m) => m.userId === this.me);
    return {
      ...base,
      session: view.session,
      members: view.members,
      nowPlaying,
      upNext: view.upNext || null,
      queue,
      history: view.history || [],
      skipRequests,
      role: me ? me.role : null,
      skipping: !!this.hiddenBySkip,
    };
  }
}

