// The shape of each event's data as JamClient decodes it (JamProtocol's ServerEvent and the
// types it holds): a frame whose data lacks a part its type requires, has one of another type,
// or names a value no enum here has, is refused there before its mirror sees it, and here by
// the mirror (mirror.js). Direct frames are not checked: nothing is built from them.
import { Event, HistoryOutcome, PlaybackState, QueueOrdering, Role, TrackSource } from './protocol.js';

const string = (v) => typeof v === 'string';
const number = (v) => typeof v === 'number' && Number.isFinite(v);
/** Whole numbers: Swift's Int, Int64 and Millis refuse a fraction. */
const integer = (v) => Number.isInteger(v);
const boolean = (v) => typeof v === 'boolean';
const object = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const optional = (check) => (v) => v === undefined || v === null || check(v);
const oneOf = (values) => { const known = new Set(Object.values(values)); return (v) => known.has(v); };
const arrayOf = (check) => (v) => Array.isArray(v) && v.every(check);
const mapOf = (check) => (v) => object(v) && Object.values(v).every(check);
const shape = (fields) => (v) => object(v) && Object.entries(fields).every(([key, check]) => check(v[key]));

const member = shape({ userId: string, displayName: string, role: oneOf(Role), connected: boolean, lastAddedAt: optional(integer) });
const track = shape({
  id: string, name: string, artist: string, album: optional(string), durationMs: optional(integer),
  artworkURL: optional(string), isrc: optional(string), source: oneOf(TrackSource), asSent: optional(string),
});
const queueItem = shape({ id: string, track, addedBy: member, addedAt: integer, score: integer, reason: string });
const history = shape({
  item: queueItem, startedAt: integer, endedAt: integer, outcome: oneOf(HistoryOutcome),
  endedBy: optional(string), endedByName: optional(string),
});
const nowPlaying = shape({ item: queueItem, epoch: integer, state: oneOf(PlaybackState), positionMs: integer, anchorMs: integer });
const settings = shape({
  locked: boolean, skipThreshold: number, maxMembers: integer, maxQueuedPerMember: integer, allowDuplicates: boolean,
  ordering: oneOf(QueueOrdering), fallback: boolean, addCooldownSeconds: optional(integer),
});
const deviceDelay = shape({ userId: string, deviceId: string, delayMs: number });
const timeline = shape({ epoch: integer, positionMs: integer, atMs: integer });

/** A SessionView (a stateSync's data). */
export const isSessionView = shape({
  session: shape({ id: string, joinCode: string, name: string, hostId: string, hostDisplayName: string, settings, createdAt: integer }),
  members: arrayOf(member), nowPlaying: optional(nowPlaying), queue: arrayOf(queueItem), myVotes: mapOf(integer),
  skipRequests: shape({ count: integer, needed: integer, mine: boolean }), history: arrayOf(history),
  upNext: optional(nowPlaying), deviceDelays: optional(arrayOf(deviceDelay)),
});

const EVENT_DATA = Object.freeze({
  [Event.stateSync]: isSessionView,
  [Event.memberJoined]: member,
  [Event.memberUpdated]: member,
  [Event.memberLeft]: shape({ userId: string, hostId: string }),
  [Event.queueUpdate]: shape({ queue: arrayOf(queueItem) }),
  [Event.queueItemAdded]: shape({ item: queueItem, index: integer }),
  [Event.queueItemRemoved]: shape({ itemId: string }),
  [Event.votesUpdate]: shape({ itemId: string, score: integer, reason: string, movedTo: optional(integer) }),
  [Event.playPrepare]: shape({ item: queueItem, epoch: integer, startAt: integer, previous: optional(history) }),
  [Event.playCommit]: shape({ itemId: string, epoch: integer, startAt: integer, positionMs: integer }),
  [Event.pause]: timeline,
  [Event.resume]: timeline,
  [Event.seek]: timeline,
  [Event.stopped]: shape({ epoch: integer, previous: optional(history) }),
  [Event.skipRequests]: shape({ count: integer, needed: integer }),
  [Event.sessionUpdated]: shape({ settings, name: string, joinCode: string }),
  [Event.sessionEnded]: shape({ reason: string }),
  [Event.deviceDelay]: deviceDelay,
});

/** Whether `envelope`'s data has the shape its (known, numbered) type requires. */
export function readableEventData(envelope) {
  const check = EVENT_DATA[envelope.type];
  return check === undefined ? false : check(envelope.data);
}
