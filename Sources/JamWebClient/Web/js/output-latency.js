// How long after the page hands audio to the browser it is heard: the AudioContext's
// outputLatency (the device's buffers, a Bluetooth route) plus its baseLatency (the
// context's own), or, where outputLatency is missing, the gap getOutputTimestamp shows.
// Chromium's figure moves from reading to reading, so the median of the last readings
// is used, and a reading that cannot be right (not a number, negative, over a second)
// is ignored.

/** Readings kept for the median. */
const READINGS = 9;
/** Read again after this long, ms. */
const EVERY_MS = 2_000;
/** Beyond this a reading is taken for a glitch, ms. */
const MAX_MS = 1_000;

export class OutputLatency {
  constructor(now = () => performance.now()) {
    this.now = now;
    this.readings = [];
    this.readAt = -Infinity;
    this.context = null;
  }

  /** Follows `context` (the one the audio elements play through). */
  attach(context) {
    this.context = context;
    this.readings = [];
    this.readAt = -Infinity;
  }

  /** The smoothed latency, ms (0 before any audio context). */
  get ms() {
    const now = this.now();
    if (this.context && now - this.readAt >= EVERY_MS) {
      this.readAt = now;
      const reading = readLatency(this.context);
      if (Number.isFinite(reading) && reading >= 0 && reading <= MAX_MS) {
        this.readings.push(reading);
        if (this.readings.length > READINGS) this.readings.shift();
      }
    }
    if (!this.readings.length) return 0;
    const sorted = this.readings.slice().sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
  }
}

/** One raw reading of `context`'s latency, ms. */
function readLatency(context) {
  const base = Number.isFinite(context.baseLatency) ? context.baseLatency : 0;
  if (Number.isFinite(context.outputLatency)) return (context.outputLatency + base) * 1000;
  if (typeof context.getOutputTimestamp === 'function') {
    const stamp = context.getOutputTimestamp();
    if (stamp && Number.isFinite(stamp.contextTime) && stamp.contextTime > 0) return (context.currentTime - stamp.contextTime) * 1000;
  }
  return base * 1000;
}
