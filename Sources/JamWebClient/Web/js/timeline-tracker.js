// The last-known server timeline, moved by session events as they arrive (the event
// half of JamClient's SyncEngine): the current item's timeline, the item announced to
// follow it without a gap (upNext), and the epoch, which drops events that are older.
// It only records; the sync engine brings the player to it.
import { Event, PlaybackState } from './protocol.js';
import * as Timeline from './timeline.js';

/** What applying one event did to the timeline. */
export const Tracked = Object.freeze({ changed: 'changed', unchanged: 'unchanged', dropped: 'dropped' });

export class TimelineTracker {
  /** @param {{upNextToleranceMs: number}} config */
  constructor(config) {
    this.config = config;
    /** @type {import('./timeline.js').Timeline|null} */
    this.timeline = null;
    /** @type {import('./timeline.js').Timeline|null} */
    this.upNext = null;
    this.epoch = -Infinity;
    // True when the timeline came from a snapshot (or the device was switched on): a
    // preparing item is then followed from its announced start, not left waiting.
    this.startWhilePreparing = false;
  }

  /** Applies one session event (in seq order, as the store applied it); returns one of Tracked. */
  apply(envelope) {
    const data = envelope.data;
    switch (envelope.type) {
      case Event.stateSync: return this.applyView(data);
      case Event.playPrepare: return this.applyPrepare(data);
      case Event.playCommit: return this.applyCommit(data);
      case Event.pause: return this.applyChange(data, (t) => Timeline.moved(t, PlaybackState.paused, data.positionMs, data.atMs));
      case Event.resume: return this.applyChange(data, (t) => Timeline.moved(t, PlaybackState.playing, data.positionMs, data.atMs));
      case Event.seek: return this.applyChange(data, (t) => Timeline.moved(t, t.state, data.positionMs, data.atMs));
      case Event.stopped: return this.applyStopped(data);
      case Event.sessionEnded:
        this.timeline = null;
        this.upNext = null;
        return Tracked.changed;
      default:
        return Tracked.unchanged;
    }
  }

  applyView(view) {
    this.timeline = view.nowPlaying ? Timeline.fromNowPlaying(view.nowPlaying) : null;
    this.upNext = view.upNext ? Timeline.fromNowPlaying(view.upNext) : null;
    if (view.nowPlaying) this.epoch = view.nowPlaying.epoch;
    this.startWhilePreparing = true;
    return Tracked.changed;
  }

  applyPrepare(prepare) {
    if (prepare.epoch < this.epoch) return Tracked.dropped;
    if (prepare.epoch === this.epoch) {
      // A repeat for the current item: only a preparing start can still move.
      const current = this.timeline;
      if (!current || current.state !== PlaybackState.preparing || current.itemId !== prepare.item.id) return Tracked.dropped;
      this.timeline = Timeline.moved(current, current.state, current.positionMs, prepare.startAt);
      return Tracked.changed;
    }
    if (this.announcesUpNext(prepare)) {
      this.upNext = Timeline.fromPrepare(prepare);
      return Tracked.unchanged;
    }
    this.timeline = Timeline.fromPrepare(prepare);
    this.epoch = prepare.epoch;
    this.startWhilePreparing = false;
    if (this.upNext && this.upNext.epoch <= prepare.epoch) this.upNext = null;
    return Tracked.changed;
  }

  /** A playPrepare for the epoch after a playing item, starting at its end, announces the gapless next item. */
  announcesUpNext(prepare) {
    const current = this.timeline;
    if (prepare.previous || !current || current.state !== PlaybackState.playing || prepare.epoch !== current.epoch + 1) return false;
    const end = Timeline.endsAt(current);
    return end != null && prepare.startAt >= end - this.config.upNextToleranceMs;
  }

  applyCommit(commit) {
    if (commit.epoch < this.epoch) return Tracked.dropped;
    if (commit.epoch > this.epoch) {
      const next = this.upNext;
      if (!next || next.epoch !== commit.epoch || next.itemId !== commit.itemId) return Tracked.dropped;
      this.timeline = Timeline.moved(next, PlaybackState.playing, commit.positionMs, commit.startAt);
      this.upNext = null;
      this.epoch = commit.epoch;
      return Tracked.changed;
    }
    const current = this.timeline;
    if (!current || current.itemId !== commit.itemId) return Tracked.dropped;
    this.timeline = Timeline.moved(current, PlaybackState.playing, commit.positionMs, commit.startAt);
    return Tracked.changed;
  }

  applyChange(change, transform) {
    if (change.epoch !== this.epoch || !this.timeline) return Tracked.dropped;
    this.timeline = transform(this.timeline);
    return Tracked.changed;
  }

  applyStopped(stopped) {
    if (stopped.epoch < this.epoch) return Tracked.dropped;
    this.epoch = stopped.epoch;
    this.timeline = null;
    this.upNext = null;
    return Tracked.changed;
  }
}
