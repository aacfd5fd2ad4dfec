// How long after play() this device's sound really starts. The start latency belongs
// to this device and browser: remembered, so the next session starts on time from
// its first song.
import { readStored, writeStored } from './storage.js';

const LATENCY_KEY = 'openjam.startLatencyMs';
const DEFAULT_LATENCY_MS = 60;
export const MAX_LATENCY_MS = 300;

/** The remembered start latency, ms, or the default when none is stored. */
export function rememberedLatency() {
  const value = Number(readStored(LATENCY_KEY));
  return Number.isFinite(value) && value > 0 && value <= MAX_LATENCY_MS ? value : DEFAULT_LATENCY_MS;
}

export function rememberLatency(value) {
  writeStored(LATENCY_KEY, Number(value.toFixed(1)));
}
