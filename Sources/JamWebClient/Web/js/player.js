// The device's audio as the sync engine drives it (JamClient's Player protocol),
// with local instants in performance.now() milliseconds. The two <audio> elements
// behind it live in audio-pool.js.
//
// Starting on time: play() is not instant (Chromium starts the sound ~40-50 ms
// after the call) and a seek while playing lands ~80 ms later, both varying by
// machine. So a start is "cued": pause, seek to a position a little ahead, wait
// for the seek to land, then call play() when the course reaches that position,
// early by the learned start latency. The engine reports how late each start
// really was, and the estimate follows.
import { AudioPool } from './audio-pool.js';
import { READY_STATE_FUTURE, seekTo } from './media-element.js';
import { silenceURL } from './silence.js';
import { OutputLatency } from './output-latency.js';
import { MAX_LATENCY_MS, rememberLatency, rememberedLatency } from './start-latency.js';

export class AudioPlayer {
  /** @param {HTMLElement} host where the (invisible) audio elements live */
  constructor(host, { now = () => performance.now() } = {}) {
    this.now = now;
    this.pool = new AudioPool(host);
    this.rate = 1;
    this.token = 0;
    this.startTimer = null;
    this.started = false;
    this.startLatencyMs = rememberedLatency();
    this.cueMarginMs = 150;
    this.onError = null;
    /** Called when the device pauses the sound itself: the lock screen, headphones out, a call. */
    this.onOutsidePause = null;
    // Every pause of the player's own clears `started` first (pause(), a cued start), so a
    // pause of the active element while it is still started came from outside the page.
    this.pool.onActivePause = () => {
      if (this.started && this.onOutsidePause) this.onOutsidePause();
    };
    this.context = null;
    this.latency = new OutputLatency(now);
  }

  /** How long after the elements play a sample it is heard, ms, smoothed (0 before the first start). */
  get outputLatencyMs() {
    return this.latency.ms;
  }

  /** The AudioContext on this device's output (made on the first "play on this device"), or null. */
  get audioContext() {
    return this.context;
  }

  /**
   * Makes (or resumes) an AudioContext on the output the elements play to: its output
   * latency is the device's (a Bluetooth route included), and calibration probes play
   * through it. The elements are not routed through it: measured, that made their
   * clock five to ten times noisier (p95 6 ms against the timeline instead of 0.6 ms),
   * and what their own path adds beyond the context's is the device delay's to correct.
   * From a click, since browsers start audio contexts only from a user gesture.
   */
  openAudio() {
    // An iPhone set to silent mutes Web Audio (the calibration probes) in its default
    // session, while the elements play on: a "playback" session, a music app's, plays
    // both. Asked for by the person's own "play on this device".
    const session = globalThis.navigator && globalThis.navigator.audioSession;
    if (session && session.type !== 'playback') session.type = 'playback';
    const Context = globalThis.AudioContext || globalThis.webkitAudioContext;
    if (!Context) return;
    if (!this.context) {
      try {
        this.context = new Context();
        this.latency.attach(this.context);
      } catch {
        // Without Web Audio the latency is unknown (0): the device delay is all there is.
        this.context = null;
        return;
      }
    }
    if (this.context.state === 'suspended') this.context.resume().catch(() => {});
  }

  /** The active slot (element, track id, loaded). */
  get slot() {
    return this.pool.slot;
  }

  /** The loaded track's id (null while loading or when none). */
  get loadedTrackId() {
    return this.slot.loaded ? this.slot.trackId : null;
  }

  /** True while audio is advancing on the course last given. */
  get isPlaying() {
    const el = this.slot.element;
    return this.started && !el.paused && !el.seeking && !el.ended && el.readyState >= READY_STATE_FUTURE;
  }

  setVolume(volume) {
    this.pool.setVolume(volume);
  }

  /** Loads the track into the spare element ahead of its start (gapless hand-over). */
  preload(track) {
    this.pool.preload(track);
  }

  /**
   * Loads `track`; resolves when it can start without delay. The old one plays on until
   * the next start. A failed load is not kept (the pool forgets it), so calling again
   * fetches the track anew. A load of another track meanwhile ends this one's wait (it
   * throws): the engine moves on that way when a skip comes while a song still downloads.
   */
  async load(track) {
    if (this.slot.trackId !== track.id) {
      this.token++; // a start still being cued belongs to the old element
      this.cancelStart();
      this.pool.switchTo(track);
      this.started = false;
    }
    const slot = this.slot;
    await slot.ready;
    if (slot.trackId !== track.id) throw new Error('replaced by another load');
    slot.loaded = true;
  }

  /**
   * From local instant atLocal on, plays so that the position is fromMs + (t − atLocal).
   * A future start keeps the current sound until shortly before; a past one joins the
   * course where it has got to.
   */
  play(fromMs, atLocal) {
    const token = ++this.token;
    this.cancelStart();
    const el = this.slot.element;
    const now = this.now();
    const cueAt = atLocal - this.cueMarginMs - 100;
    if (cueAt > now && !el.paused) {
      // Playing something now: keep it until just before the new course needs the element.
      this.startTimer = setTimeout(() => this.cueAndStart(token, fromMs, atLocal), cueAt - now);
      return;
    }
    this.cueAndStart(token, fromMs, atLocal);
  }

  async cueAndStart(token, fromMs, atLocal) {
    const el = this.slot.element;
    this.started = false;
    el.pause();
    this.setRate(1);
    for (let attempt = 0; attempt < 4; attempt++) {
      if (token !== this.token) return;
      const now = this.now();
      // Where the course will be once the seek has landed (nothing to wait for in a future start).
      const ahead = Math.max(0, now + this.cueMarginMs - atLocal);
      let cue = fromMs + ahead;
      const duration = Number.isFinite(el.duration) ? el.duration * 1000 : Infinity;
      if (cue >= duration) return; // the course is over on this device
      cue = Math.max(0, cue);
      await seekTo(el, cue);
      if (token !== this.token) return;
      const startLocal = atLocal + (cue - fromMs) - this.startLatencyMs;
      if (startLocal >= this.now() - 2) {
        await this.waitUntil(token, startLocal);
        if (token !== this.token) return;
        this.pool.stopRetiring();
        this.started = true;
        el.play().catch((error) => this.playFailed(token, error));
        return;
      }
      // The seek took longer than the margin allowed: cue further ahead.
      this.cueMarginMs = Math.min(1_000, this.cueMarginMs * 1.5);
    }
  }

  /** setTimeout is only good to a few ms (and much worse in a background tab): finish with a short spin. */
  waitUntil(token, local) {
    return new Promise((resolve) => {
      const spin = () => {
        if (token !== this.token) return resolve();
        const left = local - this.now();
        if (left > 12) {
          this.startTimer = setTimeout(spin, left - 10);
          return;
        }
        while (this.now() < local) { /* at most ~10 ms */ }
        resolve();
      };
      spin();
    });
  }

  /** A start the browser refused (blocked sound, say) reaches onError; a start interrupted by a pause does not. */
  playFailed(token, error) {
    if (token !== this.token || (error && error.name === 'AbortError')) return;
    this.started = false;
    if (this.onError) this.onError(error);
  }

  /**
   * How late (positive) the last start came out, measured by the engine: the
   * latency estimate moves most of the way towards it.
   */
  learnStartError(lateMs) {
    if (!Number.isFinite(lateMs) || Math.abs(lateMs) > 250) return;
    this.startLatencyMs = Math.min(MAX_LATENCY_MS, Math.max(0, this.startLatencyMs + 0.7 * lateMs));
    rememberLatency(this.startLatencyMs);
  }

  cancelStart() {
    clearTimeout(this.startTimer);
    this.startTimer = null;
  }

  /** Pauses at once, holding the position. */
  pause() {
    this.token++;
    this.cancelStart();
    this.started = false;
    this.slot.element.pause();
    this.pool.stopRetiring();
    // Told to be silent before its song loaded (the session stopped, or moved on to a song
    // this device cannot play, or the device was turned off): the download is not wanted,
    // and its load ends as replaced.
    if (!this.slot.loaded && this.slot.trackId !== null) this.pool.release(this.slot);
    this.setRate(1);
  }

  /** Moves while paused (a seek on a paused timeline). */
  async seek(positionMs) {
    await seekTo(this.slot.element, positionMs);
  }

  setRate(rate) {
    this.rate = rate;
    const el = this.slot.element;
    if (el.playbackRate !== rate) el.playbackRate = rate;
  }

  /** The position at local instant atLocal (extrapolated from now); null when nothing is loaded. */
  position(atLocal = this.now()) {
    if (!this.slot.loaded) return null;
    const el = this.slot.element;
    const ms = el.currentTime * 1000;
    if (!this.isPlaying) return ms;
    return ms + (atLocal - this.now()) * this.rate;
  }

  /**
   * Called from a click: some browsers (Safari on iPhones) let an element make sound
   * later only if it was started inside a user gesture, so each idle element plays a
   * moment of silence now. The silence is unloaded again at once: in Chromium an idle
   * element holding a stream left the shared audio output with jumpy timing (±20 ms
   * in currentTime for every element on the page).
   */
  unlock() {
    this.openAudio();
    for (const slot of this.pool.slots) {
      const el = slot.element;
      if (!el.paused) continue;
      const silent = !slot.trackId;
      if (silent) el.src = silenceURL();
      el.muted = true;
      // A refused unlock needs no word here: the real start reports it (playFailed).
      const done = () => {
        el.muted = false;
        if (slot === this.slot && this.started) return;
        el.pause();
        if (silent && !slot.trackId) {
          el.removeAttribute('src');
          el.load();
        }
      };
      const started = el.play();
      if (started) started.then(done, done);
      else done();
    }
  }

  /** Stops and forgets everything. */
  unload() {
    this.pause();
    this.pool.releaseAll();
  }
}
