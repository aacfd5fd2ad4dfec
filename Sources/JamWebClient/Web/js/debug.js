// A read-only window onto playback sync, for tests and for people debugging a
// setup: window.openjam.debug() samples the device's audio position and the server
// timeline at the same instant. It changes nothing.
import { Phase } from './connection.js';
import { SyncPhase } from './sync-status.js';
import { positionAt } from './timeline.js';

/** @param {import('./session-page.js').SessionPage} page its engine, clock, store and player are read */
export function installDebugHook(page) {
  const debug = () => {
    const engine = page.engine;
    const clock = page.clock;
    const store = page.store;
    const player = page.player;
    const element = player.slot.element;
    // Read the audio position and the local instant together: they are compared.
    const positionMs = player.slot.loaded ? element.currentTime * 1000 : null;
    const now = performance.now();
    const estimate = clock ? clock.estimate : null;
    const serverNowMs = estimate ? estimate.serverTime(now) : null;
    const timeline = engine ? engine.timeline : null;
    const status = engine ? engine.status : null;
    // The element runs ahead of the timeline by the output latency and the delay: where it should be now.
    const compensationMs = status ? status.outputLatencyMs + status.deviceDelayMs : 0;
    const expectedPositionMs = timeline && estimate ? positionAt(timeline, estimate.serverTime(now + compensationMs)) : null;
    return {
      itemId: timeline ? timeline.itemId : null,
      epoch: timeline ? timeline.epoch : null,
      state: timeline ? timeline.state : null,
      loadedTrackId: player.loadedTrackId,
      serverNowMs,
      positionMs,
      expectedPositionMs,
      // Against this device's wall clock, as the sync indicator shows it.
      offsetMs: estimate ? estimate.offset(now) - performance.timeOrigin : null,
      errorMs: estimate ? estimate.errorBound(now) : null,
      halfRoundTripMs: estimate ? estimate.halfRoundTripBound(now) : null,
      driftPpm: estimate ? estimate.driftMsPerSecond * 1000 : null,
      playing: !!engine && engine.enabled && player.isPlaying,
      enabled: !!engine && engine.enabled,
      phase: status ? status.phase : SyncPhase.off,
      rate: status ? status.rate : 1,
      lastErrorMs: status ? status.lastErrorMs : null,
      starts: status ? status.starts : 0,
      seeks: status ? status.seeks : 0,
      rateCorrections: status ? status.rateCorrections : 0,
      measurements: status ? status.measurements : 0,
      startLatencyMs: player.startLatencyMs,
      outputLatencyMs: status ? status.outputLatencyMs : 0,
      deviceDelayMs: status ? status.deviceDelayMs : 0,
      compensationMs,
      resyncs: status ? status.resyncs : 0,
      loadFailures: status ? status.loadFailures : 0,
      deviceId: engine && engine.device ? engine.device.deviceId : null,
      connection: store ? store.phase.phase : Phase.idle,
      seq: store ? store.mirror.seq : null,
    };
  };
  Object.defineProperty(window, 'openjam', { value: Object.freeze({ debug }), writable: false, configurable: false });
}
