// The last-known server timeline of one item (JamClient's PlaybackTimeline):
// while playing, position(t) = positionMs + (t − anchorMs) for t ≥ anchorMs, and
// positionMs before the anchor (a start, resume or seek announced for a future
// instant holds the position until then). Plain frozen objects; every change makes
// a new one, so "the course last given to the player" can be compared by value.
import { PlaybackState } from './protocol.js';

/**
 * @typedef {{epoch: number, itemId: string, track: import('./protocol.js').Track,
 *   state: string, positionMs: number, anchorMs: number}} Timeline
 */

/** @returns {Timeline} from a view's nowPlaying or upNext */
export function fromNowPlaying(nowPlaying) {
  return Object.freeze({
    epoch: nowPlaying.epoch, itemId: nowPlaying.item.id, track: nowPlaying.item.track, state: nowPlaying.state,
    positionMs: nowPlaying.positionMs, anchorMs: nowPlaying.anchorMs,
  });
}

/** @returns {Timeline} what a playPrepare announces: preparing, from 0 at startAt */
export function fromPrepare(prepare) {
  return Object.freeze({
    epoch: prepare.epoch, itemId: prepare.item.id, track: prepare.item.track, state: PlaybackState.preparing,
    positionMs: 0, anchorMs: prepare.startAt,
  });
}

export function moved(timeline, state, positionMs, anchorMs) {
  return Object.freeze({ ...timeline, state, positionMs, anchorMs });
}

export function durationOf(timeline) {
  const d = timeline.track.durationMs;
  return d == null ? null : d;
}

/** The position at server instant t. */
export function positionAt(timeline, t) {
  let position = timeline.positionMs;
  if (timeline.state === PlaybackState.playing && t > timeline.anchorMs) position += t - timeline.anchorMs;
  const duration = durationOf(timeline);
  if (duration != null) position = Math.min(position, duration);
  return Math.max(0, position);
}

/** True when the audio should be advancing at server instant t. */
export function isAdvancing(timeline, t) {
  if (timeline.state !== PlaybackState.playing || t < timeline.anchorMs) return false;
  const duration = durationOf(timeline);
  return duration == null || timeline.positionMs + (t - timeline.anchorMs) < duration;
}

/** The server instant the item reaches its end, when playing with a known duration. */
export function endsAt(timeline) {
  const duration = durationOf(timeline);
  if (timeline.state !== PlaybackState.playing || duration == null) return null;
  return timeline.anchorMs + Math.max(0, duration - timeline.positionMs);
}

/** True when both describe the same item on the same course (a restatement). */
export function sameCourse(a, b, toleranceMs = 1) {
  if (!a || !b || a.epoch !== b.epoch || a.itemId !== b.itemId || a.state !== b.state) return false;
  switch (a.state) {
    case PlaybackState.playing:
      return Math.abs((a.positionMs - a.anchorMs) - (b.positionMs - b.anchorMs)) <= toleranceMs;
    case PlaybackState.paused:
      return Math.abs(a.positionMs - b.positionMs) <= toleranceMs;
    default:
      return Math.abs(a.positionMs - b.positionMs) <= toleranceMs && Math.abs(a.anchorMs - b.anchorMs) <= toleranceMs;
  }
}
