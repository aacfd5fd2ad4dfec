// The session as the server last described it, kept current by applying events in
// seq order (JamClient's SessionMirror): stateSync always, duplicates dropped, a
// gap reported so the caller resumes with hello {lastSeq}, events of an older
// epoch consumed without effect. A frame whose data does not read changes nothing and is
// reported, as JamClient's decoding refuses it before its mirror sees it.
import { readableEventData } from './event-shapes.js';
import { DIRECT_EVENTS, Event, HISTORY_LIMIT, PlaybackState, Role } from './protocol.js';

export const Applied = Object.freeze({
  applied: 'applied', duplicate: 'duplicate', stale: 'stale', gap: 'gap', direct: 'direct',
  /** The caller's own votes and skip request, as another of their devices changed them: the view changed, the seq did not. */
  mine: 'mine',
  /** Its data does not read: nothing changed, and only the whole state can show the change. */
  unreadable: 'unreadable',
});

export class SessionMirror {
  constructor(me) {
    this.me = me;
    /** @type {import('./protocol.js').SessionView|null} */
    this.view = null;
    this.seq = null;
    this.epoch = 0;
    this.ended = null;
  }

  /** Starts from a REST answer (create/join/get) until the socket's stateSync arrives. */
  seed(view) {
    if (!this.view) this.view = structuredClone(view);
  }

  /** @returns {string} one of Applied */
  apply(envelope) {
    // One that does not read is dropped as the other direct frames are (JamClient cannot decode it).
    if (envelope.type === Event.myChoices && this.view && readableEventData(envelope)) {
      const { myVotes, mySkipRequest } = envelope.data;
      this.view = { ...this.view, myVotes: { ...myVotes }, skipRequests: { ...this.view.skipRequests, mine: mySkipRequest } };
      return Applied.mine;
    }
    if (DIRECT_EVENTS.has(envelope.type)) return Applied.direct;
    if (!readableEventData(envelope)) return Applied.unreadable;
    switch (envelope.type) {
      case Event.stateSync:
        this.view = envelope.data;
        this.seq = envelope.seq;
        this.epoch = envelope.epoch;
        return Applied.applied;
      default:
        break;
    }
    if (this.seq == null || !this.view) return Applied.gap;
    if (envelope.seq <= this.seq) return Applied.duplicate;
    if (envelope.seq > this.seq + 1) return Applied.gap;
    if (envelope.epoch < this.epoch) {
      this.seq = envelope.seq;
      return Applied.stale;
    }
    let view;
    try {
      view = this.reduced(envelope);
    } catch (error) {
      // A shape the check above let through: the seq stays, so the change is not lost for good.
      console.warn('an event did not apply', error);
      return Applied.unreadable;
    }
    this.seq = envelope.seq;
    this.epoch = envelope.epoch;
    this.view = view;
    if (envelope.type === Event.sessionEnded) this.ended = envelope.data;
    return Applied.applied;
  }

  /** Records the caller's own vote (the server broadcasts scores, not who voted). */
  setMyVote(itemId, value) {
    if (!this.view) return;
    const votes = { ...this.view.myVotes };
    if (value === 0) delete votes[itemId];
    else votes[itemId] = value;
    this.view = { ...this.view, myVotes: votes };
  }

  /**
   * Records that the server answered the caller's skip request for `itemId` (the server
   * broadcasts how many asked, not who). Only while that item still plays and requests are
   * counted: a request that reached the threshold has skipped the item already, and the
   * next one starts with nobody asking.
   */
  requestSkipAnswered(itemId) {
    const view = this.view;
    if (!view || !view.nowPlaying || view.nowPlaying.item.id !== itemId || !(view.skipRequests.count > 0)) return;
    this.view = { ...view, skipRequests: { ...view.skipRequests, mine: true } };
  }

  /**
   * Records that the server answered the caller's withdrawal of their skip request for
   * `itemId`, while that item still plays (SessionMirror.withdrawSkipAnswered).
   */
  withdrawSkipAnswered(itemId) {
    const view = this.view;
    if (!view || !view.nowPlaying || view.nowPlaying.item.id !== itemId) return;
    this.view = { ...view, skipRequests: { ...view.skipRequests, mine: false } };
  }

  /** The view after `envelope`; throws when its data is not of the shape its type has. */
  reduced(envelope) {
    const view = { ...this.view, session: { ...this.view.session } };
    const data = envelope.data;
    switch (envelope.type) {
      case Event.memberJoined:
      case Event.memberUpdated: {
        const members = view.members.slice();
        const index = members.findIndex((m) => m.userId === data.userId);
        if (index >= 0) members[index] = data;
        else members.push(data);
        view.members = members;
        if (data.role === Role.host) {
          view.session.hostId = data.userId;
          view.session.hostDisplayName = data.displayName;
        }
        // Items show their adder as they are now (without their last add), as the server does.
        const { lastAddedAt, ...adder } = data;
        updateAdder(view, data.userId, () => adder);
        break;
      }
      case Event.memberLeft: {
        view.members = view.members.filter((m) => m.userId !== data.userId);
        // A gone adder shows as they were: their name, no role, not connected.
        updateAdder(view, data.userId, (was) => ({ ...was, role: Role.member, connected: false }));
        view.deviceDelays = nonEmpty((view.deviceDelays || []).filter((d) => d.userId !== data.userId));
        view.session.hostId = data.hostId;
        const host = view.members.find((m) => m.userId === data.hostId);
        if (host) view.session.hostDisplayName = host.displayName;
        break;
      }
      case Event.queueItemAdded: {
        // Only the new item has a new place; every other item keeps its order.
        const queue = view.queue.filter((item) => item.id !== data.item.id);
        queue.splice(Math.min(Math.max(data.index, 0), queue.length), 0, data.item);
        view.queue = queue;
        break;
      }
      case Event.queueItemRemoved: {
        view.queue = view.queue.filter((item) => item.id !== data.itemId);
        const { [data.itemId]: dropped, ...myVotes } = view.myVotes || {};
        view.myVotes = myVotes;
        break;
      }
      case Event.queueUpdate: {
        view.queue = data.queue;
        const ids = new Set(data.queue.map((item) => item.id));
        view.myVotes = Object.fromEntries(Object.entries(view.myVotes || {}).filter(([id]) => ids.has(id)));
        break;
      }
      case Event.votesUpdate: {
        // Score and reason together: the order may not have changed, so no queueUpdate brings the reason.
        const queue = view.queue.map((item) => (item.id === data.itemId ? { ...item, score: data.score, reason: data.reason } : item));
        // A vote moves only its own item; every other item keeps its order.
        const index = queue.findIndex((item) => item.id === data.itemId);
        if (index >= 0 && Number.isInteger(data.movedTo) && data.movedTo !== index) {
          const [item] = queue.splice(index, 1);
          queue.splice(Math.min(Math.max(data.movedTo, 0), queue.length), 0, item);
        }
        view.queue = queue;
        // Where the host's device plays, members vote on what plays too.
        if (index < 0 && view.nowPlaying && view.nowPlaying.item.id === data.itemId) {
          view.nowPlaying = { ...view.nowPlaying, item: { ...view.nowPlaying.item, score: data.score, reason: data.reason } };
        }
        break;
      }
      case Event.playPrepare: {
        const announced = { item: data.item, epoch: data.epoch, state: PlaybackState.preparing, positionMs: 0, anchorMs: data.startAt };
        if (envelope.epoch < data.epoch) {
          // Announced to follow the current item without a gap.
          view.upNext = announced;
        } else {
          if (data.previous) view.history = [...(view.history || []), data.previous].slice(-HISTORY_LIMIT);
          view.nowPlaying = announced;
          if (view.upNext && view.upNext.item.id === data.item.id) view.upNext = null;
          view.skipRequests = { count: 0, needed: view.skipRequests.needed, mine: false };
        }
        break;
      }
      case Event.playCommit:
        if (view.nowPlaying && view.nowPlaying.item.id === data.itemId) {
          view.nowPlaying = { ...view.nowPlaying, state: PlaybackState.playing, positionMs: data.positionMs, anchorMs: data.startAt };
        }
        break;
      case Event.pause:
        moveTimeline(view, data, PlaybackState.paused);
        break;
      case Event.resume:
        moveTimeline(view, data, PlaybackState.playing);
        break;
      case Event.seek:
        moveTimeline(view, data, null);
        break;
      case Event.stopped:
        if (data.previous) view.history = [...(view.history || []), data.previous].slice(-HISTORY_LIMIT);
        view.nowPlaying = null;
        view.upNext = null;
        view.skipRequests = { count: 0, needed: view.skipRequests.needed, mine: false };
        break;
      case Event.skipRequests:
        // The member's own request stays theirs until its item leaves (a new item, a stop): a
        // count of 0 may only say they were away (the server counts connected members), as a
        // resume's replay brings back.
        view.skipRequests = { count: data.count, needed: data.needed, mine: view.skipRequests.mine };
        break;
      case Event.sessionUpdated:
        view.session.settings = data.settings;
        view.session.name = data.name;
        view.session.joinCode = data.joinCode;
        break;
      case Event.sessionEnded:
        break;
      case Event.deviceDelay: {
        const delays = (view.deviceDelays || []).slice();
        const index = delays.findIndex((d) => d.userId === data.userId && d.deviceId === data.deviceId);
        if (index >= 0) {
          if (data.delayMs === 0) delays.splice(index, 1);
          else delays[index] = data;
        } else if (data.delayMs !== 0) {
          delays.push(data);
        }
        view.deviceDelays = nonEmpty(delays);
        break;
      }
      default:
        break;
    }
    return view;
  }
}

/**
 * Replaces the adder shown on every item `userId` added (queued, playing and announced) with
 * `change(adder)`; the view's objects are copied, never changed in place.
 */
function updateAdder(view, userId, change) {
  const updated = (item) => (item.addedBy.userId === userId ? { ...item, addedBy: change(item.addedBy) } : item);
  view.queue = view.queue.map(updated);
  if (view.nowPlaying) view.nowPlaying = { ...view.nowPlaying, item: updated(view.nowPlaying.item) };
  if (view.upNext) view.upNext = { ...view.upNext, item: updated(view.upNext.item) };
}

/** The server leaves an empty list out of the view; so does the mirror, to stay equal to it. */
function nonEmpty(delays) {
  return delays.length ? delays : undefined;
}

/** The delay of `me`'s device `deviceId` in `view` (0 when none is set). */
export function deviceDelayOf(view, me, deviceId) {
  const entry = view && (view.deviceDelays || []).find((d) => d.userId === me && d.deviceId === deviceId);
  return entry ? entry.delayMs : 0;
}

function moveTimeline(view, change, state) {
  const now = view.nowPlaying;
  if (!now || now.epoch !== change.epoch) return;
  view.nowPlaying = { ...now, state: state || now.state, positionMs: change.positionMs, anchorMs: change.atMs };
}
