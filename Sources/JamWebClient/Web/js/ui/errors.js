// Errors in words. The server's messages are specific and safe to show ("no
// session with code ABC123"); this adds what the person was trying to do and, for
// the codes people meet in normal use, a plain sentence of what to do about it.
import { ErrorCode } from '../protocol.js';

const PLAIN = {
  [ErrorCode.unauthorized]: 'Your sign-in is no longer valid. Join the session again.',
  [ErrorCode.notMember]: 'You are not a member of this session any more.',
  [ErrorCode.locked]: 'The queue is locked: only the host and co-hosts can add songs.',
  [ErrorCode.duplicate]: 'That song is already in the queue or playing.',
  [ErrorCode.sessionFull]: 'The session is full.',
  [ErrorCode.gone]: 'The session has ended.',
  [ErrorCode.queueLimit]: 'You already have as many songs waiting as this session allows. Wait until one has played.',
  [ErrorCode.rateLimited]: 'Too many attempts. Wait a moment and try again.',
  [ErrorCode.internal]: 'The server ran into a problem and nothing changed. Try again.',
  [ErrorCode.unavailable]: 'The server cannot be reached. Check your connection.',
  [ErrorCode.tooLarge]: 'That is too large to send.',
};

const ACTIONS = {
  add: (subject) => (subject ? `Couldn't add “${subject}”` : "Couldn't add the song"),
  vote: () => "Your vote didn't count",
  skip: () => "Couldn't skip",
  'skip request': () => "Your skip request didn't count",
  'skip withdrawal': () => "Couldn't take back your skip request",
  remove: (subject) => (subject ? `Couldn't remove “${subject}”` : "Couldn't remove the song"),
  join: () => "Couldn't join",
  create: () => "Couldn't start a session",
  search: () => 'Search failed',
  settings: () => "Couldn't change the settings",
  pause: () => "Couldn't pause",
  resume: () => "Couldn't resume",
  play: () => "Couldn't start playing",
  role: () => "Couldn't change the member's role",
  kick: () => "Couldn't remove the member",
  code: () => "Couldn't make a new join code",
  leave: () => "Couldn't leave the session",
  rename: () => "Couldn't change your name",
  end: () => "Couldn't end the session",
  resume_session: () => "Couldn't reopen your session",
  delay: () => "Couldn't set the device's delay",
  resync: () => "Couldn't ask the device to re-sync",
  calibrate: () => "Couldn't start the calibration",
};

// What is no longer there when an action on a song or a person is refused as not found:
// said in words, where the server's message names the item or member by its id.
const SONG_GONE = 'That song is no longer in the queue.';
const PERSON_GONE = 'That person is no longer in the session.';
const NOT_FOUND = {
  vote: SONG_GONE,
  remove: SONG_GONE,
  role: PERSON_GONE,
  kick: PERSON_GONE,
  delay: PERSON_GONE,
  resync: PERSON_GONE,
};

/** "no session with code X" -> "No session with code X." */
function sentence(message) {
  const text = String(message || '').trim();
  if (!text) return '';
  const first = text[0].toUpperCase() + text.slice(1);
  return /[.!?]$/.test(first) ? first : `${first}.`;
}

/**
 * How long a rate-limited action waits, from a socket refusal's `retryAfterMs` or a REST
 * answer's Retry-After seconds: "1.5 s", "12 s"; null when the refusal does not say.
 */
function waitInWords(error) {
  const ms = Number.isFinite(error.retryAfterMs) ? error.retryAfterMs
    : Number.isFinite(error.retryAfterSeconds) ? error.retryAfterSeconds * 1000 : null;
  if (!(ms > 0)) return null;
  const seconds = ms / 1000;
  return seconds < 10 ? `${Math.ceil(seconds * 10) / 10} s` : `${Math.ceil(seconds)} s`;
}

/**
 * @param {{code: string, message: string, retryAfterMs?: number, retryAfterSeconds?: number}} error
 * @param {string} [action] a key of ACTIONS
 * @param {string} [subject] e.g. the song's title
 */
export function describeError(error, action, subject) {
  const code = error && error.code;
  const lead = ACTIONS[action] ? ACTIONS[action](subject) : 'Something went wrong';
  const wait = code === ErrorCode.rateLimited ? waitInWords(error) : null;
  let detail;
  if (action === 'join' && code === ErrorCode.notFound) {
    detail = `${sentence(error.message)} Check the code and try again.`;
  } else if (action === 'join' && code === ErrorCode.forbidden) {
    // The one refusal of a join: the host removed this member ("the host removed you …").
    detail = sentence(error.message);
  } else if (action === 'join' && code === ErrorCode.invalidField) {
    detail = `${sentence(error.message)} A join code has 6 letters and digits, like K7MPQ2.`;
  } else if (code === ErrorCode.notFound && NOT_FOUND[action]) {
    detail = NOT_FOUND[action];
  } else if (action === 'add' && code === ErrorCode.rateLimited && error.message) {
    // The session's add cooldown: its words say how long to wait.
    detail = sentence(error.message);
  } else if (wait) {
    detail = `Too many attempts. Try again in ${wait}.`;
  } else if (code === ErrorCode.queueLimit && /queue is full/.test(error.message || '')) {
    // The session's own limit, not the member's: nobody can add until a song has played.
    detail = 'The queue is full. Wait until a song has played.';
  } else if (code === ErrorCode.unavailable && error.message) {
    // Its words say what happened to the change ("the command was not applied, try again"),
    // which a fixed sentence about the connection would hide.
    detail = sentence(error.message);
  } else if (PLAIN[code]) {
    detail = PLAIN[code];
  } else if (code === ErrorCode.forbidden) {
    // The server names who may ("only the host may …", "only a host or co-host may …").
    detail = sentence(error.message) || 'You are not allowed to do that.';
  } else {
    detail = sentence(error && error.message) || 'Unknown error.';
  }
  return `${lead}: ${detail}`;
}

/** Why the session's connection ended for good (a close code's JamError), in words. */
export function describeSessionFailure(error) {
  switch (error.code) {
    case ErrorCode.forbidden:
    case ErrorCode.notMember: return `You are no longer in this session (${error.message}).`;
    case ErrorCode.gone: return PLAIN[ErrorCode.gone];
    case ErrorCode.notFound: return 'This session no longer exists.';
    case ErrorCode.unauthorized: return PLAIN[ErrorCode.unauthorized];
    default: return `The connection to the session failed: ${error.message}.`;
  }
}
