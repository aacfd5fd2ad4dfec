// The wire protocol as the browser sees it. Every shape and name here mirrors
// Sources/JamProtocol (the one definition); nothing else in the client spells a
// wire string, so a protocol change touches this file only.

/**
 * @typedef {'library'|'spotify'|'appleMusic'|'external'} TrackSource
 * @typedef {{id: string, name: string, artist: string, album?: string, durationMs?: number,
 *   artworkURL?: string, isrc?: string, source: TrackSource}} Track
 * @typedef {'host'|'cohost'|'member'} Role
 * @typedef {{userId: string, displayName: string, role: Role, connected: boolean}} Member
 * @typedef {{id: string, track: Track, addedBy: Member, addedAt: number, score: number, reason: string}} QueueItem
 * @typedef {'preparing'|'playing'|'paused'} PlaybackState
 * @typedef {{item: QueueItem, epoch: number, state: PlaybackState, positionMs: number, anchorMs: number}} NowPlaying
 * @typedef {{locked: boolean, skipThreshold: number, maxMembers: number, maxQueuedPerMember: number,
 *   allowDuplicates: boolean, ordering: 'votes'|'fair', fallback: boolean}} SessionSettings
 * @typedef {{id: string, joinCode: string, name: string, hostId: string, hostDisplayName: string,
 *   settings: SessionSettings, createdAt: number}} SessionInfo
 * @typedef {{count: number, needed: number, mine: boolean}} SkipRequestsView
 * @typedef {{item: QueueItem, startedAt: number, endedAt: number, outcome: 'played'|'skipped'|'removed',
 *   endedBy?: string, endedByName?: string}} HistoryEntry
 * @typedef {{session: SessionInfo, members: Member[], nowPlaying: NowPlaying|null, queue: QueueItem[],
 *   myVotes: Object<string, number>, skipRequests: SkipRequestsView, history: HistoryEntry[],
 *   upNext?: NowPlaying|null}} SessionView
 * @typedef {{type: string, data: any, epoch: number, seq: number, timestamp: number}} ServerEnvelope
 * @typedef {{clientSendTime: number, serverReceiveTime: number, serverSendTime: number}} Pong
 * @typedef {{epoch: number, positionMs: number, atMs: number}} TimelineChange
 * @typedef {{item: QueueItem, epoch: number, startAt: number, previous?: HistoryEntry|null}} PlayPrepare
 * @typedef {{itemId: string, epoch: number, startAt: number, positionMs: number}} PlayCommit
 * @typedef {{userId: string, displayName: string, token: string, expiresAt: number}} GuestAuthResponse
 * @typedef {{userId: string, deviceId: string, delayMs: number}} DeviceDelay
 * @typedef {{myVotes: Object<string, number>, mySkipRequest: boolean}} MyChoices
 * @typedef {'good'|'fair'|'poor'} SyncGrade
 * @typedef {{userId: string, deviceId?: string, clockErrorMs: number, playbackErrorMs: number, clockDriftPpm?: number,
 *   outputLatencyMs?: number, delayMs?: number, playing: boolean, canListen?: boolean, ageMs: number,
 *   grade: SyncGrade}} DeviceSyncStatus
 * @typedef {{userId: string, deviceId: string, atMs: number}} CalibrationProbe
 * @typedef {{id: string, listener: {userId: string, deviceId: string}, probes: CalibrationProbe[], probeMs: number,
 *   windowMs: number}} CalibrationPlan
 * @typedef {{id: string, ok: boolean, message: string, results: {userId: string, deviceId: string, heard: boolean,
 *   correctionMs?: number, delayMs?: number}[]}} CalibrationOutcome
 */

export const TrackSource = Object.freeze({
  library: 'library', spotify: 'spotify', appleMusic: 'appleMusic', external: 'external',
});

export const Role = Object.freeze({ host: 'host', cohost: 'cohost', member: 'member' });

/** Host and co-hosts hold the host controls (ServerEvent's Role.hasHostControls). */
export function hasHostControls(role) {
  return role === Role.host || role === Role.cohost;
}

/**
 * Whether a member of `role` with `waiting` songs of their own in the queue may add another
 * (SessionSettings.mayQueueAnother): maxQueuedPerMember holds members, not hosts or co-hosts.
 */
export function mayQueueAnother(settings, waiting, role) {
  return !settings || waiting < settings.maxQueuedPerMember || hasHostControls(role);
}

/** Whether `settings` hold a member of `role` to a wait between their adds: hosts and co-hosts are never held. */
export function hasAddCooldown(settings, role) {
  return !!settings && settings.addCooldownSeconds > 0 && !hasHostControls(role);
}

/**
 * When `member` may add again (SessionSettings.nextAddAt(for:)): null when they may now (no
 * cooldown, host controls, no add yet), else the server instant the cooldown ends.
 */
export function nextAddAt(settings, member) {
  if (!member || !hasAddCooldown(settings, member.role) || member.lastAddedAt == null) return null;
  return member.lastAddedAt + settings.addCooldownSeconds * 1000;
}

export const PlaybackState = Object.freeze({ preparing: 'preparing', playing: 'playing', paused: 'paused' });

export const QueueOrdering = Object.freeze({ votes: 'votes', fair: 'fair' });

/** HistoryOutcome: how a played item left the timeline. A newer server may send others. */
export const HistoryOutcome = Object.freeze({ played: 'played', skipped: 'skipped', removed: 'removed' });

/** The reason shown for an item with `score` in votes ordering (QueueItem.votesReason): an optimistic score shows it too. */
export function votesReason(score) {
  switch (score) {
    case 0: return 'no votes';
    case 1: return '1 vote';
    case -1: return '-1 vote';
    default: return `${score} votes`;
  }
}

/** ServerEventType. */
export const Event = Object.freeze({
  stateSync: 'stateSync', memberJoined: 'memberJoined', memberLeft: 'memberLeft', memberUpdated: 'memberUpdated',
  queueUpdate: 'queueUpdate', queueItemAdded: 'queueItemAdded', queueItemRemoved: 'queueItemRemoved', votesUpdate: 'votesUpdate', playPrepare: 'playPrepare', playCommit: 'playCommit',
  pause: 'pause', resume: 'resume', seek: 'seek', stopped: 'stopped', skipRequests: 'skipRequests',
  sessionUpdated: 'sessionUpdated', pong: 'pong', ack: 'ack', error: 'error', sessionEnded: 'sessionEnded',
  deviceDelay: 'deviceDelay', syncStatus: 'syncStatus', calibration: 'calibration', calibrationResult: 'calibrationResult',
  resync: 'resync', myChoices: 'myChoices',
});

/**
 * Replies to one connection, the passing device-sync frames and a member's own choices; they
 * carry the current seq without advancing it.
 */
export const DIRECT_EVENTS = new Set([
  Event.pong, Event.ack, Event.error, Event.syncStatus, Event.calibration, Event.calibrationResult, Event.resync, Event.myChoices,
]);

/** SyncGrade: how a device follows, as the sync column colours it. */
export const SyncGrade = Object.freeze({ good: 'good', fair: 'fair', poor: 'poor' });

/** How old a device's last report may be before the sync column says when it was heard (SyncGrade.staleMs). */
export const SyncTiming = Object.freeze({ staleMs: 12000 });

/** Why a calibration's listener heard nothing (ListenerProblem). */
export const ListenerProblem = Object.freeze({
  microphoneUnavailable: 'microphoneUnavailable', microphoneRefused: 'microphoneRefused', planTooLate: 'planTooLate',
});

/** Calibration figures the page needs (CalibrationRules). */
export const CalibrationTiming = Object.freeze({ minimumProbeLeadMs: 50 });

/** Device ids and delays as the server accepts them (Validate.deviceId, Validate.deviceDelay). */
export const DeviceLimits = Object.freeze({ maxDeviceId: 64, maxDelayMs: 2000 });

/**
 * A device delay as a person typed it: `{delayMs}`, or `{error}` saying why it is not one
 * (the server's rule, `SetDeviceDelay.validate`: a number within ±maxDelayMs). An empty
 * field is not 0: nothing is sent for it.
 */
export function readDeviceDelay(text) {
  const trimmed = String(text).trim();
  const value = trimmed === '' ? NaN : Number(trimmed);
  if (!Number.isFinite(value) || Math.abs(value) > DeviceLimits.maxDelayMs) {
    return { error: `The delay must be a number from -${DeviceLimits.maxDelayMs} to ${DeviceLimits.maxDelayMs} ms.` };
  }
  return { delayMs: value };
}

/**
 * Reads a settings count typed by a person: a whole number from 1 to `limit`, as
 * SettingsPatch.validate takes it, or `{error}` in words for the field.
 * @param {string} text @param {number} limit
 */
export function readSettingCount(text, limit) {
  const trimmed = String(text).trim();
  const value = trimmed === '' ? NaN : Number(trimmed);
  if (!Number.isInteger(value) || value < 1 || value > limit) return { error: `Type a whole number from 1 to ${limit}.` };
  return { value };
}

/**
 * Whether the server takes `value` as a device id (Validate.deviceId): 1 to DeviceLimits.maxDeviceId
 * ASCII letters, digits, '-' and '_' (ASCII, so UTF-16 units count as Swift's bytes do).
 * Tests/Fixtures/ClientParity/device-ids.json holds the shared cases.
 */
export function isDeviceId(value) {
  return typeof value === 'string' && value.length >= 1 && value.length <= DeviceLimits.maxDeviceId
    && /^[A-Za-z0-9_-]+$/.test(value);
}

/** ClientCommandType. */
export const Command = Object.freeze({
  hello: 'hello', ping: 'ping', addToQueue: 'addToQueue', removeFromQueue: 'removeFromQueue', vote: 'vote',
  skip: 'skip', requestSkip: 'requestSkip', withdrawSkipRequest: 'withdrawSkipRequest', play: 'play', pause: 'pause',
  resume: 'resume', seek: 'seek',
  ready: 'ready', syncReport: 'syncReport', updateSettings: 'updateSettings', promote: 'promote', kick: 'kick',
  leave: 'leave', setDeviceDelay: 'setDeviceDelay', calibrate: 'calibrate', calibrationReport: 'calibrationReport',
  resync: 'resync',
});

/** ErrorCode with its HTTP status (ErrorCode.httpStatus). */
export const ErrorCode = Object.freeze({
  malformed: 'malformed', unknownType: 'unknownType', invalidField: 'invalidField', tooLarge: 'tooLarge',
  unauthorized: 'unauthorized', forbidden: 'forbidden', notMember: 'notMember', locked: 'locked',
  notFound: 'notFound', methodNotAllowed: 'methodNotAllowed', duplicate: 'duplicate', sessionFull: 'sessionFull', conflict: 'conflict',
  gone: 'gone', queueLimit: 'queueLimit', keyReused: 'keyReused', rateLimited: 'rateLimited', internal: 'internal',
  unavailable: 'unavailable',
});

export const ERROR_STATUS = Object.freeze({
  malformed: 400, unknownType: 400, invalidField: 400, tooLarge: 413, unauthorized: 401, forbidden: 403,
  notMember: 403, locked: 403, notFound: 404, methodNotAllowed: 405, duplicate: 409, sessionFull: 409, conflict: 409, gone: 410,
  queueLimit: 422, keyReused: 422, rateLimited: 429, internal: 500, unavailable: 503,
});

/** A typed error with a message meant for people (JamError). */
export class JamError extends Error {
  /**
   * @param {string} code one of ErrorCode @param {string} message
   * @param {number} [retryAfterMs] for rateLimited: when the same kind of command can pass again
   */
  constructor(code, message, retryAfterMs) {
    super(message);
    this.name = 'JamError';
    this.code = code;
    if (Number.isFinite(retryAfterMs)) this.retryAfterMs = retryAfterMs;
  }
}

/** The code for an HTTP status when a body carried none (a proxy answered, say): ErrorCode.forStatus. */
export function errorCodeForStatus(status) {
  const found = Object.entries(ERROR_STATUS).find(([, s]) => s === status);
  if (found) return found[0];
  // A gateway's 502 and 504: no node answered, as the server's own 503 says.
  if (status === 502 || status === 504) return ErrorCode.unavailable;
  return status >= 500 ? ErrorCode.internal : ErrorCode.malformed;
}

/**
 * Realtime close codes: a refusal is 4000 + the HTTP status; those never get better
 * by reconnecting (CloseCode.permanentFailure).
 */
export const CloseCode = Object.freeze({
  normal: 1000, protocolError: 1002, invalidText: 1007, tooBig: 1009, badRequest: 4400, unauthorized: 4401, forbidden: 4403, notFound: 4404, gone: 4410,
  slowReader: 4429,
});

/**
 * The server's refusal frame before the close (an error without an id) names the failure
 * more closely when it is the refusal the code stands for: 4403 is a host's removal
 * (forbidden) or no membership (notMember), and only the latter may join again
 * (CloseCode.permanentFailure; close-failures.json holds the shared cases).
 * @param {JamError|null} [refusal]
 * @returns {JamError|null} the failure a close code means for good, or null when a retry may help.
 */
export function permanentCloseFailure(code, reason, refusal = null) {
  const failure = closeFailure(code, reason);
  if (failure && refusal && code === 4000 + Math.min(ERROR_STATUS[refusal.code] ?? 500, 999)) return refusal;
  return failure;
}

function closeFailure(code, reason) {
  const text = reason || '';
  switch (code) {
    case CloseCode.badRequest: return new JamError(ErrorCode.invalidField, text || 'the server refused the connection');
    case CloseCode.unauthorized: return new JamError(ErrorCode.unauthorized, text || 'sign in again');
    case CloseCode.forbidden: return new JamError(ErrorCode.forbidden, text || 'not a member of this session');
    case CloseCode.notFound: return new JamError(ErrorCode.notFound, text || 'the session does not exist');
    case CloseCode.gone: return new JamError(ErrorCode.gone, text || 'the session has ended');
    default: return null;
  }
}

/** The highest settings a host may choose (SessionSettings: memberLimit, queueLimit, cooldownLimit in seconds). */
export const SettingsLimits = Object.freeze({ memberLimit: 1000, queueLimit: 500, cooldownLimit: 3600 });

/** Input limits shared by every edge (Validate). */
export const Limits = Object.freeze({
  maxDisplayName: 64, maxSessionName: 100, maxNonce: 128, maxCommandId: 128, maxCodeLength: 32, maxId: 128,
  maxBytesPerCharacter: 8,
});

/** A client frame `{type, data?, id?}` as JSON text. */
export function encodeFrame(type, data, id) {
  const frame = { type };
  if (data !== undefined) frame.data = data;
  if (id !== undefined) frame.id = id;
  return JSON.stringify(frame);
}

/**
 * Parses a server frame; null when it is not an envelope. Its type may be one this client
 * does not know (a newer server's): see `isKnownEvent`.
 * @returns {ServerEnvelope|null}
 */
export function decodeEnvelope(text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!value || typeof value !== 'object' || typeof value.type !== 'string') return null;
  if (typeof value.seq !== 'number' || typeof value.epoch !== 'number' || typeof value.timestamp !== 'number') return null;
  return value;
}

/** Whether `type` is an event type of this client's protocol (ServerEventType). */
export function isKnownEvent(type) {
  return Object.prototype.hasOwnProperty.call(Event, type);
}

/**
 * Join codes as the server reads them (JoinCodes.normalise): upper case, without hyphens or
 * whitespace. Whitespace is Unicode's White_Space, as Swift's `Unicode.Scalar.Properties.isWhitespace`
 * (tab, newlines, NEL, no-break and ideographic spaces); not `\s`, which misses NEL and takes
 * U+FEFF, which the server keeps. Tests/Fixtures/ClientParity/join-codes.json holds the shared cases.
 */
export function normaliseJoinCode(input) {
  return String(input || '').toUpperCase().replace(/[\p{White_Space}-]/gu, '');
}

/** Where a track's audio is served; only library tracks have audio on this server. */
export function audioURL(track) {
  return `/api/v1/tracks/${encodeURIComponent(track.id)}/audio`;
}

/** True when this server can stream the track to a browser. */
export function isPlayable(track) {
  return !!track && track.source === TrackSource.library;
}

/** The invite link's path: the server serves the page there, which joins that session. */
export function joinPath(code) {
  return `/j/${encodeURIComponent(code)}`;
}

/**
 * How the socket carries the token without putting it in the URL (mirrors Swift's
 * `SocketAuth`): the page offers the subprotocols `openjam` and `bearer.<token>`, and the
 * server selects `openjam`.
 */
export const SocketAuth = Object.freeze({ protocolName: 'openjam', tokenPrefix: 'bearer.' });

/** The subprotocols a browser offers for `token`. */
export function socketProtocols(token) {
  return [SocketAuth.protocolName, SocketAuth.tokenPrefix + token];
}

/** Most history entries a session keeps (Swift's `SessionView.historyLimit`); the mirror drops older ones too. */
export const HISTORY_LIMIT = 100;

/** The realtime endpoint's path. */
export function realtimePath(sessionId) {
  return `/api/v1/sessions/${encodeURIComponent(sessionId)}/realtime`;
}
