// How well this device follows the session, in numbers: the clock offset to the
// server with its error bound, the clock drift, and (while playing here) how far the
// audio is from the server's timeline and the rate correcting it.
import { SyncPhase } from '../sync-status.js';
import { h, setText } from './dom.js';
import { fixed, signed } from './format.js';

const PHASE_TEXT = {
  [SyncPhase.off]: 'Not playing on this device',
  [SyncPhase.idle]: 'Waiting for a song',
  [SyncPhase.loading]: 'Loading the song…',
  [SyncPhase.ready]: 'Ready, waiting for the start',
  [SyncPhase.waitingForClock]: 'Syncing the clock…',
  [SyncPhase.scheduled]: 'Starting on cue…',
  [SyncPhase.playing]: 'In sync',
  [SyncPhase.paused]: 'Paused',
  [SyncPhase.stopped]: 'Nothing to play',
  [SyncPhase.loadFailed]: "Couldn't load the song — trying again",
  [SyncPhase.unplayable]: 'Not playable on this device',
};

export class SyncIndicator {
  constructor() {
    this.state = h('span', { class: 'sync-state', id: 'sync-state' });
    this.offset = h('span', { class: 'sync-value', id: 'sync-offset' });
    this.error = h('span', { class: 'sync-value', id: 'sync-error' });
    this.drift = h('span', { class: 'sync-value', id: 'sync-drift' });
    this.playback = h('span', { class: 'sync-value', id: 'sync-playback' });
    this.playbackPart = h('span', { class: 'sync-part' }, 'audio ', this.playback);
    this.root = h('p', { class: 'sync-indicator', id: 'sync-indicator', role: 'status', 'aria-live': 'off' },
      this.state,
      h('span', { class: 'sync-part' }, 'clock ', this.offset, ' ± ', this.error),
      h('span', { class: 'sync-part' }, 'drift ', this.drift),
      this.playbackPart);
  }

  /**
   * @param {{estimate: import('../clock.js').ClockEstimate|null, now: number, status: object,
   *   enabled: boolean, loadError?: string}} info
   */
  update({ estimate, now, status, enabled, loadError }) {
    let phaseText = PHASE_TEXT[status.phase] || status.phase;
    // Sub-millisecond trims happen all the time; only a real gap is worth a word.
    if (status.phase === SyncPhase.playing && status.rate !== 1 && Math.abs(status.lastErrorMs ?? 0) > 5) {
      phaseText = `Catching up (speed ${fixed(status.rate * 100, 1)} %)`;
    }
    if (status.phase === SyncPhase.loadFailed && loadError) phaseText = `Couldn't load the song (${loadError}) — trying again`;
    setText(this.state, phaseText);
    this.root.dataset.phase = status.phase;
    if (estimate) {
      // Against this device's wall clock (performance.now() counts from page load).
      const offset = estimate.offset(now) - performance.timeOrigin;
      const bound = estimate.errorBound(now);
      const ppm = estimate.driftMsPerSecond * 1000;
      setText(this.offset, `${signed(offset, 2)} ms`);
      setText(this.error, `${fixed(bound, 2)} ms`);
      setText(this.drift, `${signed(ppm, 1)} ppm`);
      this.offset.dataset.value = String(offset);
      this.error.dataset.value = String(bound);
      this.drift.dataset.value = String(ppm);
      this.root.dataset.synced = 'true';
    } else {
      setText(this.offset, '…');
      setText(this.error, '…');
      setText(this.drift, '…');
      this.root.dataset.synced = 'false';
    }
    const showPlayback = enabled && status.lastErrorMs != null;
    this.playbackPart.hidden = !showPlayback;
    if (showPlayback) {
      setText(this.playback, `${signed(status.lastErrorMs, 1)} ms`);
      this.playback.dataset.value = String(status.lastErrorMs);
    }
  }
}
