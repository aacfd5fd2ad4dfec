// The sync engine's tuning (JamClient's SyncEngine.Configuration), in ms unless
// said otherwise.
export const DEFAULT_SYNC_CONFIG = Object.freeze({
  correctionIntervalMs: 250,
  reportIntervalMs: 5_000,
  // currentTime reads carry ~0.3 ms of noise in Chromium: a tighter band only chases it.
  deadBandMs: 1,
  targetBandMs: 0.3,
  seekThresholdMs: 100,
  maxRateDeviation: 0.05,
  correctionHorizonMs: 2_000,
  settleAfterStartMs: 300,
  minRateStep: 0.0002,
  upNextToleranceMs: 1_000,
  restateToleranceMs: 50,
  // A player still silent this long after a start should have settled (four seeks slower
  // than every margin, audio that stopped) is started on the course again.
  stalledStartRetryMs: 1_500,
  // An item that failed to load is tried again after this, doubling per failure in a row up
  // to the cap, while it is still current (load-retry.js).
  loadRetryBaseMs: 2_000,
  loadRetryCapMs: 30_000,
});
