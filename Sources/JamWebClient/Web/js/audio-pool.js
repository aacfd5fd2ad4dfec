// The device's two <audio> elements, so the next item can load while the current
// one plays and take over at its end without a gap. One is active (the one the
// player plays); the other is the spare, which preloads. When the active one is
// replaced while it still sounds, it is kept "retiring" until the next start.
import { audioURL } from './protocol.js';
import { waitForReady, watchPause } from './media-element.js';

/**
 * @typedef {{element: HTMLAudioElement, trackId: string|null, ready: Promise<void>|null,
 *   loaded: boolean, abortReady?: (() => void)|null}} AudioSlot
 */

export class AudioPool {
  /** @param {HTMLElement} host where the (invisible) audio elements live */
  constructor(host) {
    /** @type {AudioSlot[]} */
    this.slots = [makeElement(host), makeElement(host)].map((element) => ({ element, trackId: null, ready: null, loaded: false }));
    this.active = 0;
    this.retiring = null;
    /** Called when the active element pauses before its end, by anybody's doing. */
    this.onActivePause = null;
    for (const slot of this.slots) {
      watchPause(slot.element, () => {
        if (slot === this.slot && this.onActivePause) this.onActivePause();
      });
    }
  }

  /** The active slot: the one that plays. */
  get slot() {
    return this.slots[this.active];
  }

  get spare() {
    return this.slots[1 - this.active];
  }

  setVolume(volume) {
    for (const slot of this.slots) slot.element.volume = volume;
  }

  /** Loads the track into the spare element ahead of its start (gapless hand-over). */
  preload(track) {
    if (this.slot.trackId === track.id || this.spare.trackId === track.id) return;
    this.fill(this.spare, track).catch(() => {}); // a failure shows when the player's load() uses it
  }

  /**
   * Makes the spare the active slot, holding `track` (preloaded, or loading from now
   * on); the one it replaces retires.
   */
  switchTo(track) {
    // The spare may hold the track already: preloaded, or the retiring element when the
    // server goes back to the song that is still finishing. Either is taken over as it is;
    // a retiring one must not be released first (its load would fail as replaced).
    const held = this.spare.trackId === track.id;
    if (held && this.retiring === this.spare) this.retiring = null;
    // The active element has not started (its song still loads, or waits for its start)
    // while the one before it still sounds: the new song takes the silent element, and the
    // sounding one plays on until the next start rather than stopping at a second skip.
    if (!held && this.retiring === this.spare && this.slot.element.paused) {
      this.fill(this.slot, track);
      return;
    }
    this.retire(this.slot);
    this.active = 1 - this.active;
    if (!held) this.fill(this.slot, track);
  }

  /** Keeps the outgoing element playing (its item may run until the next one starts), else frees it. */
  retire(slot) {
    if (this.retiring && this.retiring !== slot) this.release(this.retiring);
    this.retiring = null;
    if (slot.element.paused) this.release(slot);
    else this.retiring = slot;
  }

  stopRetiring() {
    if (this.retiring) {
      this.release(this.retiring);
      this.retiring = null;
    }
  }

  /**
   * Unloads an element that is done: in Chromium an idle element that still holds a
   * stream can leave the shared audio output with jumpy timing for the others.
   */
  release(slot) {
    const el = slot.element;
    el.pause();
    slot.trackId = null;
    slot.loaded = false;
    slot.ready = null;
    if (slot.abortReady) slot.abortReady();
    if (el.hasAttribute('src')) {
      el.removeAttribute('src');
      el.load();
    }
  }

  releaseAll() {
    for (const slot of this.slots) this.release(slot);
  }

  fill(slot, track) {
    const el = slot.element;
    slot.trackId = track.id;
    slot.loaded = false;
    el.pause();
    el.playbackRate = 1;
    if (slot.abortReady) slot.abortReady();
    el.src = audioURL(track);
    el.load();
    const ready = waitForReady(el, track, (abort) => { slot.abortReady = abort; });
    slot.ready = ready;
    // A failed load is forgotten (the element unloaded) so that the next load of this
    // track fetches it anew rather than getting the same failure again; when to retry is
    // the engine's decision (once per snapshot or re-enable). A slot refilled or released
    // meanwhile has moved on and is left alone.
    ready.catch(() => {
      if (slot.ready === ready) this.release(slot);
    });
    return ready;
  }
}

function makeElement(host) {
  const element = document.createElement('audio');
  element.preload = 'auto';
  element.className = 'device-audio';
  // Rate corrections resample rather than time-stretch: Chromium's pitch-keeping
  // stretcher (WSOLA) shifts the timeline by ~20 ms at every rate change and ignores
  // rates within ~0.3 % of 1, while resampling follows the rate exactly. A correction
  // of a few ms runs at 0.1-0.5 % off speed, a pitch change nobody hears.
  element.preservesPitch = false;
  element.mozPreservesPitch = false;
  element.webkitPreservesPitch = false;
  host.appendChild(element);
  return element;
}
