// Clock sync over the realtime socket: estimates offset = serverTime − localTime
// from ping/pong exchanges (t0 local send, t1 server receive, t2 server send, t3
// local receive), the same model as JamClient's ClockSync: bursts of pings, the
// samples of the last bursts intersected (which keeps what the lowest-delay samples
// allow: the NTP clock filter), the drift fitted once the window is long enough,
// and a hard error bound. Local time is performance.now(): monotonic, unlike
// Date.now(), which jumps when the machine's clock is set.
import { LineFit } from './line-fit.js';

// JamClient's ClockSync.Configuration defaults; Tests/Fixtures/ClientParity/defaults.json
// lists both and the differences that are meant.
export const DEFAULT_CLOCK_CONFIG = Object.freeze({
  // The offset comes from the fastest exchanges: at 40 ± 20 ms jitter, 8 pings gave
  // 7.6 ms p99 and 24 give ~3 ms after one burst (docs/PERFORMANCE.md).
  burstSize: 24,
  // A device joining mid-song starts on the first burst after the start or a reset alone:
  // 48 pings 30 ms apart halve its error against 24 pings 25 ms apart (docs/PERFORMANCE.md).
  firstBurstSize: 48,
  // The first burst is quick (a start may wait for it); later ones spread out, as pings
  // close behind a late one on an in-order path wait for it (docs/PERFORMANCE.md).
  burstSpacingMs: 30,
  steadyBurstSpacingMs: 100,
  // The first start waits for a full burst, at most this long (sync-engine.js).
  firstStartWaitMs: 2_000,
  resyncIntervalMs: 15_000,
  // Quicker bursts while the window spans less than startupMs (after the start, a reset or
  // a stepped server clock): the drift is limited by the lowest delays in the window.
  startupResyncIntervalMs: 7_500,
  startupMs: 120_000,
  unsyncedRetryMs: 1_000,
  burstGapMs: 1_000,
  // The offset's history once the drift is fitted (2 minutes), and before: older bursts moved
  // along an unfitted drift would bring its error in (docs/PERFORMANCE.md).
  filterBursts: 8,
  filterBurstsBeforeDriftFit: 3,
  // The drift window: bursts that began less than windowMs before the newest one, at most maxWindowBursts.
  windowMs: 240_000,
  maxWindowBursts: 48,
  minDriftBursts: 6,
  minDriftSpanMs: 75_000,
  driftPriorUncertaintyMsPerSecond: 0.1,
  minDriftUncertaintyMsPerSecond: 0.002,
  maxDriftMsPerSecond: 1.0,
  consistencySlackMs: 0.01,
  pendingTimeoutMs: 10_000,
});

/** A snapshot of the relation between local time and server time (ClockEstimate). */
export class ClockEstimate {
  constructor({ referenceLocal, offsetAtReference, errorBoundAtReference, halfRoundTripMs, driftMsPerSecond, driftUncertaintyMsPerSecond }) {
    this.referenceLocal = referenceLocal;
    this.offsetAtReference = offsetAtReference;
    this.errorBoundAtReference = errorBoundAtReference;
    this.halfRoundTripMs = halfRoundTripMs;
    this.driftMsPerSecond = driftMsPerSecond;
    this.driftUncertaintyMsPerSecond = driftUncertaintyMsPerSecond;
  }

  get slope() {
    return this.driftMsPerSecond / 1000;
  }

  offset(atLocal) {
    return this.offsetAtReference + this.slope * (atLocal - this.referenceLocal);
  }

  errorBound(atLocal) {
    return this.errorBoundAtReference + (this.driftUncertaintyMsPerSecond / 1000) * Math.abs(atLocal - this.referenceLocal);
  }

  halfRoundTripBound(atLocal) {
    return this.halfRoundTripMs + (this.driftUncertaintyMsPerSecond / 1000) * Math.abs(atLocal - this.referenceLocal);
  }

  serverTime(atLocal) {
    return atLocal + this.offset(atLocal);
  }

  localTime(atServer) {
    return (atServer - this.offsetAtReference + this.slope * this.referenceLocal) / (1 + this.slope);
  }
}

export class ClockSync {
  /**
   * @param {{now?: () => number, config?: object}} [options]
   */
  constructor({ now = () => performance.now(), config = {} } = {}) {
    this.now = now;
    this.config = { ...DEFAULT_CLOCK_CONFIG, ...config };
    this.pending = new Map();
    this.lastPingAt = -Infinity;
    this.nextBurstId = 0;
    this.currentBurstId = -1;
    this.bursts = [];
    this.priorDrift = 0;
    this.drift = 0;
    this.driftUncertainty = this.config.driftPriorUncertaintyMsPerSecond;
    this.driftFitted = false;
    /** @type {ClockEstimate|null} */
    this.estimate = null;
    this.acceptedSamples = 0;
    /** How many times reset() dropped the samples (ClockSync.resets). */
    this.resets = 0;
    this.rejectedSamples = 0;
    this.ignoredPongs = 0;
    this.burstCount = 0;
    // The next burst is the first since the start or a reset (firstBurstSize pings).
    this.firstBurstDue = true;
    this.timer = null;
    this.send = null;
  }

  get isSynchronised() {
    return this.estimate !== null;
  }

  serverTime(atLocal = this.now()) {
    return this.estimate ? this.estimate.serverTime(atLocal) : null;
  }

  /** Stamps a ping with the local time now and remembers it. */
  makePing() {
    let t0 = this.now();
    if (t0 <= this.lastPingAt) t0 = this.lastPingAt + 0.001; // unique keys even with a coarse timer
    if (t0 - this.lastPingAt >= this.config.burstGapMs || this.currentBurstId < 0) {
      this.currentBurstId = this.nextBurstId++;
      this.burstCount += 1;
    }
    this.lastPingAt = t0;
    this.prunePending(t0);
    this.pending.set(t0, this.currentBurstId);
    return { clientSendTime: t0 };
  }

  /** Records the answer to one of our pings, received at local instant t3. */
  record(pong, t3) {
    let key = pong.clientSendTime;
    if (!this.pending.has(key)) {
      // JSON round trips doubles exactly; this only guards against a server that rounds.
      key = [...this.pending.keys()].find((k) => Math.abs(k - pong.clientSendTime) < 1e-6);
      if (key === undefined) {
        this.ignoredPongs += 1;
        return;
      }
    }
    const burstId = this.pending.get(key);
    this.pending.delete(key);
    const sample = { t0: key, t1: pong.serverReceiveTime, t2: pong.serverSendTime, t3 };
    const delay = sample.t3 - sample.t0 - (sample.t2 - sample.t1);
    if (![sample.t1, sample.t2, sample.t3].every(Number.isFinite) || sample.t3 < sample.t0 || sample.t2 < sample.t1 || delay < 0) {
      this.rejectedSamples += 1;
      return;
    }
    this.acceptedSamples += 1;
    let burst = this.bursts.find((b) => b.id === burstId);
    if (!burst) {
      burst = { id: burstId, samples: [] };
      this.bursts.push(burst);
      this.bursts.sort((a, b) => a.id - b.id);
    }
    burst.samples.push(sample);
    const newest = burstStart(this.bursts[this.bursts.length - 1]);
    this.bursts = this.bursts.filter((b) => burstStart(b) > newest - this.config.windowMs);
    const keep = Math.max(1, this.config.maxWindowBursts);
    if (this.bursts.length > keep) this.bursts.splice(0, this.bursts.length - keep);
    this.recompute();
  }

  /**
   * Forgets every sample (after a reconnect the path, or the server node, may differ),
   * keeps the drift as the centre of the prior, and syncs again at once when running.
   */
  reset() {
    // A user of the estimate that saw another count knows it starts again from rough samples.
    this.resets += 1;
    this.pending.clear();
    this.bursts = [];
    this.estimate = null;
    this.acceptedSamples = 0;
    this.firstBurstDue = true;
    this.lastPingAt = -Infinity;
    this.currentBurstId = -1;
    this.priorDrift = this.drift;
    this.driftUncertainty = this.config.driftPriorUncertaintyMsPerSecond;
    this.driftFitted = false;
    if (this.send) this.schedule(0);
  }

  /** Starts the burst loop; send(ping) puts a ping frame on the socket and returns false when it cannot. */
  start(send) {
    this.stop();
    this.send = send;
    this.schedule(0);
  }

  stop() {
    clearTimeout(this.timer);
    this.timer = null;
    this.send = null;
  }

  schedule(delay) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.burst(), delay);
  }

  burst() {
    if (!this.send) return;
    let index = 0;
    // As ClockSync.run: the next burst is due an interval after this one began.
    const started = this.now();
    const spacing = this.isSynchronised ? this.config.steadyBurstSpacingMs : this.config.burstSpacingMs;
    const count = this.firstBurstDue ? this.config.firstBurstSize : this.config.burstSize;
    let allSent = true;
    const next = () => {
      if (!this.send) return;
      if (this.send(this.makePing()) === false) allSent = false;
      index += 1;
      if (index < Math.max(1, count)) {
        this.timer = setTimeout(next, spacing);
        return;
      }
      // Sent in full: the next burst is an ordinary one (a reset abandons this one and starts over).
      if (allSent) this.firstBurstDue = false;
      // Answered: the window's age when this burst began decides (ClockSync.run). No answer at
      // all yet: try again unsyncedRetryMs after this burst's last ping.
      const now = this.now();
      const due = this.isSynchronised ? started + this.resyncInterval(started) : now + this.config.unsyncedRetryMs;
      this.timer = setTimeout(() => this.burst(), Math.max(0, due - now));
    };
    next();
  }

  /** The wait from the start of a burst begun at `now` to the next once synchronised: short while the window is young (ClockSync.resyncInterval). */
  resyncInterval(now) {
    const oldest = this.bursts.length ? burstStart(this.bursts[0]) : Infinity;
    return now - oldest >= this.config.startupMs ? this.config.resyncIntervalMs : this.config.startupResyncIntervalMs;
  }

  /** Forgets the oldest ping waiting for its pong: the server refused it (over its budget), which answers it. */
  forgetOldestPending() {
    let oldest = Infinity;
    for (const t0 of this.pending.keys()) oldest = Math.min(oldest, t0);
    if (oldest !== Infinity) this.pending.delete(oldest);
  }

  /** Pings older than this got no answer: the connection may be dead even if the socket looks open. */
  oldestUnansweredAge(now = this.now()) {
    let oldest = Infinity;
    for (const t0 of this.pending.keys()) oldest = Math.min(oldest, t0);
    return oldest === Infinity ? 0 : now - oldest;
  }

  prunePending(now) {
    if (this.pending.size <= 4 * this.config.burstSize) return;
    for (const t0 of [...this.pending.keys()]) {
      if (now - t0 >= this.config.pendingTimeoutMs) this.pending.delete(t0);
    }
  }

  recompute() {
    const c = this.config;
    const searchRange = c.maxDriftMsPerSecond / 1000;
    const prior = {
      low: (this.priorDrift - c.driftPriorUncertaintyMsPerSecond) / 1000,
      high: (this.priorDrift + c.driftPriorUncertaintyMsPerSecond) / 1000,
    };
    for (;;) {
      const samples = this.bursts.flatMap((b) => b.samples);
      if (!samples.length) {
        this.estimate = null;
        return;
      }
      const r = samples.reduce((m, s) => Math.max(m, s.t3), -Infinity);
      const window = new LineFit(samples, r);
      const slopes = window.slopes(searchRange, c.consistencySlackMs);
      if (!slopes) {
        if (this.bursts.length > 1) {
          // The samples no longer fit one line (the server's clock was stepped): drop the oldest burst.
          this.bursts.shift();
        } else {
          const best = this.bursts[0].samples.reduce((a, b) => (delayOf(b) < delayOf(a) ? b : a));
          this.bursts[0].samples = [best];
        }
        continue;
      }
      const [feasibleLow, feasibleHigh] = slopes.feasible;
      let low = Math.max(feasibleLow, prior.low);
      let high = Math.min(feasibleHigh, prior.high);
      if (low > high) {
        low = feasibleLow;
        high = feasibleHigh;
      }
      let slope = this.priorDrift / 1000;
      const span = r - samples.reduce((m, s) => Math.min(m, s.t0), Infinity);
      this.driftFitted = this.bursts.length >= c.minDriftBursts && span >= c.minDriftSpanMs;
      if (this.driftFitted) slope = slopes.widest;
      slope = Math.min(high, Math.max(low, slope));
      this.drift = slope * 1000;
      this.driftUncertainty = Math.max(c.minDriftUncertaintyMsPerSecond, Math.max(slope - low, high - slope) * 1000);
      const filterBursts = this.driftFitted ? c.filterBursts : Math.min(c.filterBursts, c.filterBurstsBeforeDriftFit);
      const recent = this.bursts.slice(-Math.max(1, filterBursts)).flatMap((b) => b.samples);
      const filter = new LineFit(recent, r, window.base);
      const offset = (filter.upper(slope) + filter.lower(slope)) / 2;
      const [lowest, highest] = window.offsetRange(low, high);
      const bound = Math.max(0, offset - lowest, highest - offset);
      const best = recent.reduce((a, b) => (delayOf(b) < delayOf(a) ? b : a));
      const age = Math.abs(r - (best.t0 + best.t3) / 2);
      this.estimate = new ClockEstimate({
        referenceLocal: r,
        offsetAtReference: offset + window.base,
        errorBoundAtReference: bound,
        halfRoundTripMs: delayOf(best) / 2 + (this.driftUncertainty / 1000) * age,
        driftMsPerSecond: this.drift,
        driftUncertaintyMsPerSecond: this.driftUncertainty,
      });
      return;
    }
  }
}

function delayOf(s) {
  return s.t3 - s.t0 - (s.t2 - s.t1);
}

/** When a burst's first answered ping left (ClockSync.Burst.start). */
function burstStart(burst) {
  return burst.samples.reduce((m, s) => Math.min(m, s.t0), Infinity);
}
