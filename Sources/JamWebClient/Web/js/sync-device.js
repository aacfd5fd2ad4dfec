// What is heard, not what is played (JamClient's SyncEngine+Device): the output path's
// latency and this device's delay the engine schedules ahead by, and a host's request to
// start afresh. Installed on SyncEngine.prototype by sync-engine.js, so `this` is the engine.

export const SyncDevice = {
  /** True when `ref` ({userId, deviceId}) names this device. */
  isMine(ref) {
    return !!this.device && ref.userId === this.device.userId && ref.deviceId === this.device.deviceId;
  },

  /** This device's delay in a view's `deviceDelays` (0 when none is set). */
  delayIn(delays) {
    const entry = (delays || []).find((d) => this.isMine(d));
    return entry ? entry.delayMs : 0;
  },

  /**
   * A host asked this device (or every device of this member) to re-sync: measure the
   * clock afresh and start again on the timeline rather than nudging towards it.
   */
  resync(request) {
    if (!this.device || request.userId !== this.device.userId) return;
    if (request.deviceId != null && request.deviceId !== this.device.deviceId) return;
    this.status.resyncs += 1;
    this.clock.reset();
    this.clockWaitOver = false;
    this.clockWaitSince = null;
    this.followed = null;
    this.resetCorrection();
    this.generation += 1;
    this.drive();
    this.changed();
  },

  /** How far ahead of the timeline the player runs: the output path's latency plus this device's delay. */
  compensationMs() {
    return this.status.outputLatencyMs + this.status.deviceDelayMs;
  },

  /** Reads the player's (smoothed) output latency. */
  refreshOutputLatency() {
    const latency = this.player.outputLatencyMs;
    if (Number.isFinite(latency) && latency >= 0) this.status.outputLatencyMs = latency;
  },
};
