// What the sync engine is doing and how well it follows the timeline (JamClient's
// SyncStatus): the page's sync indicator and the debug hook read it.

export const SyncPhase = Object.freeze({
  off: 'off', idle: 'idle', loading: 'loading', ready: 'ready', waitingForClock: 'waitingForClock',
  scheduled: 'scheduled', playing: 'playing', paused: 'paused', stopped: 'stopped', loadFailed: 'loadFailed',
  unplayable: 'unplayable',
});

/** A fresh status: off, nothing measured, every counter at 0. */
export function initialSyncStatus() {
  return {
    phase: SyncPhase.off, epoch: null, itemId: null, lastErrorMs: null, lastMeasuredAt: null, rate: 1,
    measurements: 0, rateCorrections: 0, seeks: 0, starts: 0, droppedEvents: 0, loadFailures: 0, reportsSent: 0,
    outputLatencyMs: 0, deviceDelayMs: 0, resyncs: 0,
  };
}
