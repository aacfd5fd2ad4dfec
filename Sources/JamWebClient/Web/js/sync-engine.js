// Drives the device's player so it follows the server's timeline (JamClient's
// SyncEngine): scheduled starts from playPrepare/playCommit, a mid-song join from a
// stateSync, pause/resume/seek at the instants the server announces, and drift
// correction (sync-loop.js, correction-policy.js), nothing being measured until a
// start has landed and settled.
//
// Events update the last-known timeline at once (timeline-tracker.js); the player is
// then brought to it by one driver at a time (a load takes a while; events arriving
// meanwhile only move the target), so nothing acts on an outdated course.
import { Command, Event, PlaybackState, isPlayable } from './protocol.js';
import { DEFAULT_SYNC_CONFIG } from './sync-config.js';
import { loadRetryAfter } from './load-retry.js';
import { SyncPhase, initialSyncStatus } from './sync-status.js';
import * as Timeline from './timeline.js';
import { TimelineTracker, Tracked } from './timeline-tracker.js';
import { SyncDevice } from './sync-device.js';
import { SyncLoop } from './sync-loop.js';

export class SyncEngine {
  /**
   * @param {object} options
   * @param {import('./player.js').AudioPlayer} options.player
   * @param {import('./clock.js').ClockSync} options.clock
   * @param {(type: string, data: object) => boolean} options.post sends a frame that needs no answer
   * @param {() => number} [options.now]
   * @param {object} [options.config]
   * @param {{userId: string, deviceId: string}} [options.device] this device: its delay in the
   *   session is applied, its reports name it, and a host's resync for it is followed
   */
  constructor({ player, clock, post, now = () => performance.now(), config = {}, device = null }) {
    this.player = player;
    this.device = device;
    this.clock = clock;
    this.post = post;
    this.now = now;
    this.config = { ...DEFAULT_SYNC_CONFIG, ...config };
    this.tracker = new TimelineTracker(this.config);
    this.enabled = false;
    this.generation = 0;
    this.drivenGeneration = 0;
    this.driving = false;
    this.followed = null;
    this.readySentEpoch = null;
    /** The load under way: {trackId, supersede()}, or null. */
    this.loading = null;
    /** The current item's failed loads and when it is tried again (load-retry.js), or null. */
    this.loadRetry = null;
    this.measureNotBefore = -Infinity;
    this.scheduledStartLocal = null;
    this.correctionDeadline = null;
    this.awaitingStartMeasurement = false;
    this.loadError = null;
    this.status = initialSyncStatus();
    this.listeners = new Set();
    this.loop = null;
    this.nextReport = -Infinity;
    this.clockWaitSince = null;
    this.clockWaitOver = false;
    /** clock.resets when the wait was last over: a reset (a reconnect) starts it again. */
    this.clockResetsSeen = 0;
  }

  /** The current item's last-known timeline; null when nothing is current. */
  get timeline() {
    return this.tracker.timeline;
  }

  onChange(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  changed() {
    for (const fn of this.listeners) fn(this.status);
  }

  /** Starts the correction and report loop (the timeline is followed only while enabled). */
  start() {
    clearInterval(this.loop);
    this.loop = setInterval(() => this.tick(), this.config.correctionIntervalMs);
  }

  stop() {
    clearInterval(this.loop);
    this.loop = null;
    this.setEnabled(false);
  }

  /** "Play on this device" on or off. */
  setEnabled(enabled) {
    if (this.enabled === enabled) return;
    this.enabled = enabled;
    this.followed = null;
    this.resetCorrection();
    if (!enabled) {
      this.player.pause();
      this.status.phase = SyncPhase.off;
      this.status.lastErrorMs = null;
      this.changed();
      return;
    }
    // Whatever the timeline is now, join it (mid-song if need be).
    this.tracker.startWhilePreparing = true;
    this.loadRetry = null;
    this.generation += 1;
    this.drive();
  }

  // MARK: events

  /** Applies one session event (in seq order, as the store applied it). */
  handle(envelope) {
    if (envelope.type === Event.stateSync) {
      this.loadRetry = null; // a snapshot (after a reconnect, say) retries a failed load at once
      this.status.deviceDelayMs = this.delayIn(envelope.data.deviceDelays);
    }
    if (envelope.type === Event.deviceDelay && this.isMine(envelope.data)) {
      // The correction loop moves the player to the new schedule smoothly.
      this.status.deviceDelayMs = envelope.data.delayMs;
      this.changed();
      return;
    }
    if (envelope.type === Event.resync) {
      this.resync(envelope.data);
      return;
    }
    const result = this.tracker.apply(envelope);
    if (result === Tracked.dropped) this.status.droppedEvents += 1;
    if (result === Tracked.changed) {
      this.generation += 1;
      const timeline = this.timeline;
      this.status.epoch = timeline ? timeline.epoch : null;
      this.status.itemId = timeline ? timeline.itemId : null;
      if (this.loading && (!timeline || timeline.track.id !== this.loading.trackId)) this.loading.supersede();
    }
    this.preloadUpNext();
    this.drive();
  }

  /**
   * The session's socket is new (a reconnect). The server counts a device ready only while
   * its member stays connected, and a ready posted while the socket was down is lost: a
   * ready already said for the preparing item is said again (JamClient's SyncEngine.reconnected).
   * Said before the new socket's first event is applied, it may name an item the server has
   * moved on from meanwhile: the server ignores a ready for any but the item it prepares.
   */
  reconnected() {
    const current = this.timeline;
    if (this.enabled && current && current.state === PlaybackState.preparing && this.readySentEpoch === current.epoch) {
      this.post(Command.ready, { epoch: current.epoch });
    }
  }

  preloadUpNext() {
    const next = this.tracker.upNext;
    if (this.enabled && next && isPlayable(next.track)) this.player.preload(next.track);
  }

  // MARK: driving the player

  async drive() {
    if (this.driving) return;
    this.driving = true;
    try {
      while (this.drivenGeneration !== this.generation) {
        const target = this.generation;
        if (!(await this.bringPlayer(target))) return; // waits for the clock; the loop retries
        if (target === this.generation) this.drivenGeneration = target;
      }
    } finally {
      this.driving = false;
      this.changed();
    }
  }

  /**
   * Loads `track`; false once the timeline wants another track: a skip while a song still
   * downloads goes to the new song at once, not after that download (the player's next load
   * replaces the element, which ends the old wait). JamClient's SyncEngine.loadUnlessSuperseded.
   */
  async loadUnlessSuperseded(track) {
    const load = this.player.load(track);
    try {
      return await new Promise((resolve, reject) => {
        this.loading = { trackId: track.id, supersede: () => resolve(false) };
        load.then(() => resolve(true), reject);
      });
    } finally {
      this.loading = null;
    }
  }

  /** One attempt; false when it has to wait for the first clock sync. */
  async bringPlayer(target) {
    if (!this.enabled) {
      this.status.phase = SyncPhase.off;
      return true;
    }
    const wanted = this.timeline;
    if (!wanted) {
      this.followed = null;
      this.resetCorrection();
      this.player.pause();
      this.setRate(1);
      this.status.phase = SyncPhase.stopped;
      return true;
    }
    if (!isPlayable(wanted.track)) {
      this.followed = null;
      this.resetCorrection();
      this.player.pause();
      this.status.phase = SyncPhase.unplayable;
      return true;
    }
    if (this.player.loadedTrackId !== wanted.track.id) {
      const retry = this.loadRetry;
      if (retry && retry.epoch === wanted.epoch && this.now() < retry.dueAt) return true;
      this.followed = null;
      this.resetCorrection();
      this.status.phase = SyncPhase.loading;
      this.changed();
      try {
        if (!(await this.loadUnlessSuperseded(wanted.track))) return true;
        this.loadError = null;
        if (this.loadRetry && this.loadRetry.epoch === wanted.epoch) this.loadRetry = null;
      } catch (error) {
        // Shown by the sync indicator; a failure of a load that is no longer wanted is moot.
        if (this.enabled && this.generation === target && this.timeline && this.timeline.track.id === wanted.track.id) {
          this.loadRetry = loadRetryAfter(this.loadRetry, wanted.epoch, this.now(), this.config);
          this.status.loadFailures += 1;
          this.status.phase = SyncPhase.loadFailed;
          this.loadError = error.message;
          this.player.pause();
        }
        return true;
      }
      if (!this.enabled) return true;
    }
    const current = this.timeline;
    if (current && current.state === PlaybackState.preparing && this.readySentEpoch !== current.epoch
        && current.itemId === wanted.itemId) {
      this.readySentEpoch = current.epoch;
      this.post(Command.ready, { epoch: current.epoch });
    }
    if (this.generation !== target) return true;
    // Holding still, and waiting for the start, need no clock: a pause missed while the socket
    // was down is applied at once, not after the new connection's first burst.
    if (wanted.state !== PlaybackState.preparing && wanted.state !== PlaybackState.playing) {
      await this.hold(wanted);
      return true;
    }
    if (wanted.state === PlaybackState.preparing && !this.tracker.startWhilePreparing) {
      this.status.phase = SyncPhase.ready;
      return true;
    }
    const estimate = this.clock.estimate;
    const now = this.now();
    if (!estimate || !this.clockSettled(now)) {
      this.status.phase = SyncPhase.waitingForClock;
      return false;
    }
    const course = wanted.state === PlaybackState.playing
      ? wanted : Timeline.moved(wanted, PlaybackState.playing, wanted.positionMs, wanted.anchorMs);
    this.follow(course, estimate, now);
    return true;
  }

  /** Holds the player paused at the timeline's position (SyncEngine.hold). */
  async hold(wanted) {
    if (this.followed && Timeline.sameCourse(this.followed, wanted)) return;
    this.followed = wanted;
    this.resetCorrection();
    this.scheduledStartLocal = null;
    this.player.pause();
    this.setRate(1);
    const position = this.player.position(this.now());
    if (position == null || Math.abs(position - wanted.positionMs) > 0.5) await this.player.seek(wanted.positionMs);
    this.status.phase = SyncPhase.paused;
  }

  /**
   * True once the clock may time a start or a correction. The first start (and the first
   * after a host's re-sync or a reconnect, which drop the clock's samples) waits for a full
   * burst of pings (at most firstStartWaitMs), as JamClient's SyncEngine does: a device
   * joining mid-song otherwise starts on its first, roughest sample and lands ~20 ms off
   * (docs/PERFORMANCE.md), and a playing one would be steered there. Later starts use
   * whatever estimate there is.
   */
  clockSettled(now) {
    if (this.clock.resets !== this.clockResetsSeen) {
      this.clockResetsSeen = this.clock.resets;
      this.clockWaitOver = false;
      this.clockWaitSince = null;
    }
    if (this.clockWaitOver) return true;
    if (this.clockWaitSince == null) this.clockWaitSince = now;
    const { firstBurstSize, firstStartWaitMs } = this.clock.config;
    if (this.clock.acceptedSamples < firstBurstSize && now - this.clockWaitSince < firstStartWaitMs) return false;
    this.clockWaitOver = true;
    return true;
  }

  follow(course, estimate, now) {
    // What is heard now left the player compensationMs ago: schedule that much ahead.
    this.refreshOutputLatency();
    const serverNow = estimate.serverTime(now + this.compensationMs());
    const end = Timeline.endsAt(course);
    if (end != null && serverNow >= end) {
      // Over already: nothing to play until the server moves on.
      this.followed = course;
      this.resetCorrection();
      this.player.pause();
      this.status.phase = SyncPhase.stopped;
      return;
    }
    if (this.followed) {
      if (Timeline.sameCourse(this.followed, course)) return;
      const restatement = this.followed.state === PlaybackState.playing && this.followed.epoch === course.epoch
        && course.anchorMs <= serverNow
        && Math.abs((this.followed.positionMs - this.followed.anchorMs) - (course.positionMs - course.anchorMs)) < this.config.restateToleranceMs;
      if (restatement && this.player.isPlaying) {
        // The correction loop will absorb the difference smoothly.
        this.followed = course;
        return;
      }
    }
    this.startCourse(course, estimate, now);
  }

  // Starts at the local instant the anchor falls on, or, when that has passed (a device
  // joining mid-song), now at the position the server's clock gives for now: the player would
  // count the time since a past instant in local ms, which the drift makes longer or shorter
  // than the server's (JamClient's SyncEngine.startCourse does the same).
  startCourse(course, estimate, now) {
    this.resetCorrection();
    this.setRate(1);
    let startLocal = estimate.localTime(course.anchorMs) - this.compensationMs();
    let positionMs = course.positionMs;
    if (startLocal < now) {
      positionMs = Timeline.positionAt(course, estimate.serverTime(now + this.compensationMs()));
      startLocal = now;
    }
    this.player.play(positionMs, startLocal);
    this.followed = course;
    this.status.starts += 1;
    this.scheduledStartLocal = startLocal;
    this.measureNotBefore = Math.max(now, startLocal) + this.config.settleAfterStartMs + this.player.cueMarginMs;
    this.awaitingStartMeasurement = true;
    this.status.phase = startLocal > now ? SyncPhase.scheduled : SyncPhase.playing;
  }

  resetCorrection() {
    this.correctionDeadline = null;
    this.awaitingStartMeasurement = false;
  }

  setRate(rate) {
    if (this.status.rate !== rate) {
      this.status.rate = rate;
      this.player.setRate(rate);
    }
  }
}

// The periodic half (measuring, correcting, reporting) lives in sync-loop.js, as
// JamClient keeps it in SyncEngine+Correction.
Object.assign(SyncEngine.prototype, SyncLoop, SyncDevice);
