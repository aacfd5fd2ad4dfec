// The shape of each event's data as JamClient decodes it (JamProtocol's ServerEvent and the
// types it holds): a frame whose data lacks a part its type requires, has one of another type,
// or names a value no enum here has, is refused there before anything reads it, and here too:
// by the mirror (mirror.js) for the session's events, by the store for the direct frames the
// device-sync page reads.
import { Event, HistoryOutcome, Limits, PlaybackState, QueueOrdering, Role, SyncGrade, TrackSource } from './protocol.js';

const string = (v) => typeof v === 'string';
const utf8 = new TextEncoder();
/** A JamID (user, item, session): not empty, at most Limits.maxId UTF-8 bytes. */
const id = (v) => typeof v === 'string' && v.length > 0 && (v.length * 3 <= Limits.maxId || utf8.encode(v).length <= Limits.maxId);
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

const member = shape({ userId: id, displayName: string, role: oneOf(Role), connected: boolean, lastAddedAt: optional(integer) });
const track = shape({
  id: string, name: string, artist: string, album: optional(string), durationMs: optional(integer),
  artworkURL: optional(string), isrc: optional(string), source: oneOf(TrackSource), asSent: optional(string),
});
const queueItem = shape({ id, track, addedBy: member, addedAt: integer, score: integer, reason: string });
const history = shape({
  item: queueItem, startedAt: integer, endedAt: integer, outcome: oneOf(HistoryOutcome),
  endedBy: optional(id), endedByName: optional(string),
});
const nowPlaying = shape({ item: queueItem, epoch: integer, state: oneOf(PlaybackState), positionMs: integer, anchorMs: integer });
const settings = shape({
  locked: boolean, skipThreshold: number, maxMembers: integer, maxQueuedPerMember: integer, allowDuplicates: boolean,
  ordering: oneOf(QueueOrdering), fallback: boolean, addCooldownSeconds: optional(integer),
});
const deviceDelay = shape({ userId: id, deviceId: string, delayMs: number });
const timeline = shape({ epoch: integer, positionMs: integer, atMs: integer });

/** A SessionView (a stateSync's data). */
export const isSessionView = shape({
  session: shape({ id, joinCode: string, name: string, hostId: id, hostDisplayName: string, settings, createdAt: integer }),
  members: arrayOf(member), nowPlaying: optional(nowPlaying), queue: arrayOf(queueItem), myVotes: mapOf(integer),
  skipRequests: shape({ count: integer, needed: integer, mine: boolean }), history: arrayOf(history),
  upNext: optional(nowPlaying), deviceDelays: optional(arrayOf(deviceDelay)),
});

const EVENT_DATA = Object.freeze({
  [Event.stateSync]: isSessionView,
  [Event.memberJoined]: member,
  [Event.memberUpdated]: member,
  [Event.memberLeft]: shape({ userId: id, hostId: id }),
  [Event.queueUpdate]: shape({ queue: arrayOf(queueItem) }),
  [Event.queueItemAdded]: shape({ item: queueItem, index: integer }),
  [Event.queueItemRemoved]: shape({ itemId: id }),
  [Event.votesUpdate]: shape({ itemId: id, score: integer, reason: string, movedTo: optional(integer) }),
  [Event.playPrepare]: shape({ item: queueItem, epoch: integer, startAt: integer, previous: optional(history) }),
  [Event.playCommit]: shape({ itemId: id, epoch: integer, startAt: integer, positionMs: integer }),
  [Event.pause]: timeline,
  [Event.resume]: timeline,
  [Event.seek]: timeline,
  [Event.stopped]: shape({ epoch: integer, previous: optional(history) }),
  [Event.skipRequests]: shape({ count: integer, needed: integer }),
  [Event.sessionUpdated]: shape({ settings, name: string, joinCode: string }),
  [Event.sessionEnded]: shape({ reason: string }),
  [Event.deviceDelay]: deviceDelay,
  // Direct frames the device-sync page reads.
  [Event.syncStatus]: shape({
    devices: arrayOf(shape({
      userId: id, deviceId: optional(string), clockErrorMs: number, playbackErrorMs: number, clockDriftPpm: optional(number),
      outputLatencyMs: optional(number), delayMs: optional(number), playing: boolean, canListen: optional(boolean), ageMs: number,
      grade: oneOf(SyncGrade),
    })),
  }),
  [Event.calibration]: shape({
    id: string, listener: shape({ userId: id, deviceId: string }),
    probes: arrayOf(shape({ userId: id, deviceId: string, atMs: number })),
    probeMs: number, windowMs: number, repeats: integer, repeatMs: number,
  }),
  [Event.calibrationResult]: shape({
    id: string, ok: boolean, message: string,
    results: arrayOf(shape({ userId: id, deviceId: string, heard: boolean, correctionMs: optional(number), delayMs: optional(number) })),
  }),
  [Event.resync]: shape({ userId: id, deviceId: optional(string) }),
  [Event.myChoices]: shape({ myVotes: mapOf(integer), mySkipRequest: boolean }),
});

/** Whether `envelope`'s data has the shape its (known) type requires; pong, ack and error are the connection's. */
export function readableEventData(envelope) {
  const check = EVENT_DATA[envelope.type];
  return check === undefined ? false : check(envelope.data);
}
