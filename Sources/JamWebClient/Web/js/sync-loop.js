// The sync engine's periodic work (JamClient's SyncEngine+Correction): every
// correctionIntervalMs it measures where the player is against the timeline and
// corrects by the policy in correction-policy.js; every reportIntervalMs it tells the
// server how this device's clock and playback stand. Installed on
// SyncEngine.prototype by sync-engine.js, so `this` is the engine.
import { canRecordRoom } from './calibration.js';
import { correctionStep } from './correction-policy.js';
import { Command, PlaybackState, isPlayable } from './protocol.js';
import { SyncPhase } from './sync-status.js';
import * as Timeline from './timeline.js';

export const SyncLoop = {
  tick() {
    this.correct();
    const now = this.now();
    if (now >= this.nextReport && this.report()) this.nextReport = now + this.config.reportIntervalMs;
  },

  /** One correction step: measure player position − timeline position, then correct. */
  correct() {
    if (!this.enabled) return;
    // A failed load is tried again once its wait is over, while its item is still current.
    const retry = this.loadRetry;
    if (retry && !this.driving && this.drivenGeneration === this.generation && this.timeline
        && this.timeline.epoch === retry.epoch && this.now() >= retry.dueAt) this.generation += 1;
    if (this.drivenGeneration !== this.generation) {
      this.drive();
      return;
    }
    if (this.driving) return;
    const wanted = this.followed;
    const estimate = this.clock.estimate;
    if (!wanted || wanted.state !== PlaybackState.playing || !estimate || !isPlayable(wanted.track)) return;
    const now = this.now();
    // After a reconnect the clock starts again from one rough sample: steering the player by
    // it would move it off and back. It plays on untouched until the burst is in.
    if (!this.clockSettled(now)) return;
    this.refreshOutputLatency();
    // The timeline describes what is heard; the player runs compensationMs ahead of it.
    const serverNow = estimate.serverTime(now + this.compensationMs());
    if (!Timeline.isAdvancing(wanted, serverNow)) return;
    if (this.scheduledStartLocal != null && now >= this.scheduledStartLocal) {
      this.scheduledStartLocal = null;
      this.status.phase = SyncPhase.playing;
      this.changed();
    }
    if (now < this.measureNotBefore || this.player.loadedTrackId !== wanted.track.id) return;
    if (!this.player.isPlaying) {
      // Silent while the timeline plays: without this the device would stay quiet, and its
      // indicator unchanged, until the next song.
      if (now >= this.measureNotBefore + this.config.stalledStartRetryMs) {
        this.startCourse(wanted, estimate, now);
        this.changed();
      }
      return;
    }
    const actual = this.player.position(now);
    if (actual == null) return;
    const error = actual - Timeline.positionAt(wanted, serverNow);
    this.status.lastErrorMs = error;
    this.status.lastMeasuredAt = now;
    this.status.measurements += 1;
    if (this.awaitingStartMeasurement) {
      this.awaitingStartMeasurement = false;
      this.player.learnStartError(-error);
    }
    const step = correctionStep(error, { rate: this.status.rate, deadline: this.correctionDeadline, now }, this.config);
    switch (step.kind) {
      case 'restart':
        // Too far off for the rate to fix without being heard: start the course afresh.
        this.status.seeks += 1;
        this.startCourse(wanted, estimate, now);
        break;
      case 'inBand':
        this.correctionDeadline = null;
        this.setRate(1);
        break;
      default:
        this.correctionDeadline = step.deadline;
        if (step.rate != null) {
          this.status.rateCorrections += 1;
          this.setRate(step.rate);
        }
    }
    this.changed();
  },

  /**
   * Sends a syncReport: clock offset, half the best round trip (the server reads
   * 2 × errorMs as this device's round trip when it sizes start leads) and the last
   * measured playback error.
   */
  report() {
    const estimate = this.clock.estimate;
    if (!estimate) return false;
    // Before anything plays the server still needs the latency, to commit starts early enough.
    this.refreshOutputLatency();
    const now = this.now();
    const epoch = this.tracker.epoch;
    const report = {
      epoch: Math.max(0, Number.isFinite(epoch) ? epoch : 0),
      offsetMs: estimate.offset(now),
      errorMs: estimate.halfRoundTripBound(now),
      driftMs: this.status.lastErrorMs ?? 0,
      outputLatencyMs: this.status.outputLatencyMs,
      delayMs: this.status.deviceDelayMs,
      clockDriftPpm: estimate.driftMsPerSecond * 1000,
      playing: this.enabled && this.player.isPlaying,
      canListen: canRecordRoom(),
    };
    if (this.device) report.deviceId = this.device.deviceId;
    const sent = this.post(Command.syncReport, report);
    if (sent) this.status.reportsSent += 1;
    return sent;
  },
};
