// The calibration probe and the detector that finds it in a microphone recording.
//
// The probe is a short linear chirp across the band every phone speaker and microphone
// reproduce: correlating a recording with it (a matched filter) concentrates the probe's
// whole energy into one sharp peak (time × bandwidth ≈ 440, i.e. 26 dB above noise of the
// same power), so it is found in a noisy room. The correlation's envelope (the magnitude
// of its analytic signal) makes the peak independent of the carrier's phase. In a
// reverberant room a reflection can be as loud as the sound that came straight, but it
// always comes later: the first peak within 6 dB of the largest is the arrival.
import { fft, nextPowerOfTwo } from './fft.js';

/** The probe's length, ms. */
export const PROBE_MS = 80;
/** The chirp sweeps from here… */
export const PROBE_LOW_HZ = 1_500;
/** …to here, Hz. */
export const PROBE_HIGH_HZ = 7_000;
/** Fade in and out over this long, ms, so the probe does not click. */
const FADE_MS = 5;
/** A peak counts when its envelope is at least this many times the window's median envelope. */
export const HEARD_RATIO = 8;
/** The first arrival is the earliest peak within this fraction of the largest (6 dB). */
const FIRST_ARRIVAL = 0.5;

/** The probe at `sampleRate`: a raised-cosine-faded linear chirp, peak 0.9. */
export function synthesizeProbe(sampleRate) {
  const length = Math.round((PROBE_MS / 1000) * sampleRate);
  const duration = length / sampleRate;
  const sweep = (PROBE_HIGH_HZ - PROBE_LOW_HZ) / (2 * duration);
  const fade = Math.max(1, Math.round((FADE_MS / 1000) * sampleRate));
  const probe = new Float32Array(length);
  for (let i = 0; i < length; i++) {
    const t = i / sampleRate;
    const edge = Math.min(i, length - 1 - i);
    const gain = edge >= fade ? 1 : 0.5 - 0.5 * Math.cos((Math.PI * edge) / fade);
    probe[i] = 0.9 * gain * Math.sin(2 * Math.PI * (PROBE_LOW_HZ * t + sweep * t * t));
  }
  return probe;
}

const probeSpectra = new Map();

/** The conjugate spectrum of the probe, zero-padded to `size`, kept per rate and size. */
function probeSpectrum(sampleRate, size) {
  const key = `${sampleRate}/${size}`;
  let spectrum = probeSpectra.get(key);
  if (!spectrum) {
    const probe = synthesizeProbe(sampleRate);
    const re = new Float64Array(size);
    const im = new Float64Array(size);
    re.set(probe);
    fft(re, im, false);
    for (let i = 0; i < size; i++) im[i] = -im[i];
    spectrum = { re, im, length: probe.length };
    probeSpectra.set(key, spectrum);
  }
  return spectrum;
}

/**
 * Looks for the probe within `halfWindowSamples` of `expectedSample` in `recording`
 * (mono). Returns the arrival's offset from the expected sample in ms (negative: early),
 * or null when no peak stands out of the window's noise; `confidence` is the peak's
 * ratio to the median envelope.
 * @returns {{offsetMs: number|null, confidence: number}}
 */
export function detectProbe(recording, sampleRate, expectedSample, halfWindowSamples) {
  const start = Math.max(0, Math.round(expectedSample - halfWindowSamples));
  const probeLength = Math.round((PROBE_MS / 1000) * sampleRate);
  const end = Math.min(recording.length, Math.round(expectedSample + halfWindowSamples) + probeLength);
  const lags = end - start - probeLength + 1;
  if (lags < 3) return { offsetMs: null, confidence: 0 };
  const size = nextPowerOfTwo(end - start + probeLength);
  const re = new Float64Array(size);
  const im = new Float64Array(size);
  for (let i = start; i < end; i++) re[i - start] = recording[i];
  fft(re, im, false);
  const probe = probeSpectrum(sampleRate, size);
  // Cross-spectrum, keeping positive frequencies only (doubled): its inverse is the
  // correlation's analytic signal, whose magnitude is the envelope.
  const half = size / 2;
  for (let k = 0; k < size; k++) {
    const a = re[k], b = im[k];
    const c = probe.re[k], d = probe.im[k];
    const weight = k === 0 || k === half ? 1 : k < half ? 2 : 0;
    re[k] = weight * (a * c - b * d);
    im[k] = weight * (a * d + b * c);
  }
  fft(re, im, true);
  const envelope = new Float64Array(lags);
  let peak = 0;
  for (let lag = 0; lag < lags; lag++) {
    envelope[lag] = Math.hypot(re[lag], im[lag]);
    if (envelope[lag] > peak) peak = envelope[lag];
  }
  const median = medianOf(envelope);
  const confidence = median > 0 ? peak / median : 0;
  if (!(confidence >= HEARD_RATIO)) return { offsetMs: null, confidence };
  const threshold = FIRST_ARRIVAL * peak;
  let lag = 0;
  while (lag < lags && envelope[lag] < threshold) lag++;
  // Climb to the top of that peak, then place it between samples (a parabola through three).
  while (lag + 1 < lags && envelope[lag + 1] >= envelope[lag]) lag++;
  let fraction = 0;
  if (lag > 0 && lag + 1 < lags) {
    const l = envelope[lag - 1], c = envelope[lag], r = envelope[lag + 1];
    const curvature = l - 2 * c + r;
    if (curvature < 0) fraction = (0.5 * (l - r)) / curvature;
  }
  const arrival = start + lag + fraction;
  return { offsetMs: ((arrival - expectedSample) / sampleRate) * 1000, confidence };
}

/**
 * Every slot's probe: `slots` are `{key, expectedSample, halfWindowSamples}`.
 * @returns {{key: any, offsetMs: number|null, confidence: number}[]}
 */
export function detectArrivals(recording, sampleRate, slots) {
  return slots.map((slot) => ({ key: slot.key, ...detectProbe(recording, sampleRate, slot.expectedSample, slot.halfWindowSamples) }));
}

/** 16-bit PCM mono WAV bytes of `samples` (clipped to ±1). */
export function encodeWav(samples, sampleRate) {
  const bytes = new Uint8Array(44 + samples.length * 2);
  const view = new DataView(bytes.buffer);
  const text = (offset, value) => { for (let i = 0; i < value.length; i++) bytes[offset + i] = value.charCodeAt(i); };
  text(0, 'RIFF');
  view.setUint32(4, 36 + samples.length * 2, true);
  text(8, 'WAVE');
  text(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, 1, true); // mono
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 2, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  text(36, 'data');
  view.setUint32(40, samples.length * 2, true);
  for (let i = 0; i < samples.length; i++) {
    const clipped = Math.max(-1, Math.min(1, samples[i]));
    view.setInt16(44 + i * 2, Math.round(clipped * 32767), true);
  }
  return bytes;
}

function medianOf(values) {
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.floor(sorted.length / 2)];
}
