// Synthesised calibration recordings with known arrivals, and the detector's answers on
// them: probes at chosen offsets from their slots, under 0 dB white noise, loud low
// "music", a reverberant room whose first reflection is as loud as the direct sound, a
// missing probe and a faint one. Run in the page (test_probe_detector.py) or under Node:
// `node --experimental-default-type=module Tests/Browser/probe_cases.mjs`.

/** A deterministic generator (mulberry32), so every run hears the same room. */
export function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Standard normal draws from `random` (Box–Muller). */
function gaussian(random) {
  return () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/**
 * A recording of `seconds` with probe k (scaled by `gains[k]`, absent when 0) arriving
 * `offsetsMs[k]` after slot k's instant (slots `slotMs` apart from `firstMs`), through
 * `room` (an impulse response, or none), plus `noise(i)`.
 */
export function synthesise(probe, { sampleRate, seconds, firstMs, slotMs, offsetsMs, gains, room, noise }) {
  const out = new Float32Array(Math.round(seconds * sampleRate));
  const slots = offsetsMs.map((offset, k) => ({
    key: k,
    expectedSample: Math.round(((firstMs + k * slotMs) / 1000) * sampleRate),
    arrivalSample: ((firstMs + k * slotMs + offset) / 1000) * sampleRate,
  }));
  for (const [k, slot] of slots.entries()) {
    const gain = gains ? gains[k] : 1;
    if (!gain) continue;
    // A fractional arrival: each probe sample lands between two recording samples.
    const whole = Math.floor(slot.arrivalSample), part = slot.arrivalSample - whole;
    const taps = room || [[0, 1]];
    for (const [delay, level] of taps) {
      for (let i = 0; i < probe.length; i++) {
        const at = whole + delay + i;
        if (at + 1 >= out.length) break;
        out[at] += gain * level * probe[i] * (1 - part);
        out[at + 1] += gain * level * probe[i] * part;
      }
    }
  }
  if (noise) for (let i = 0; i < out.length; i++) out[i] += noise(i);
  return { samples: out, slots };
}

/** A room: the direct sound, an early reflection, and a decaying diffuse tail (RT60 ≈ 0.4 s). */
export function reverberantRoom(sampleRate, random, { reflectionMs = 3, reflectionLevel = 0.9 } = {}) {
  const taps = [[0, 1], [Math.round((reflectionMs / 1000) * sampleRate), reflectionLevel]];
  const normal = gaussian(random);
  const rt60 = 0.4;
  for (let ms = 6; ms < 400; ms += 0.5) {
    const level = 0.25 * Math.pow(10, (-3 * (ms / 1000)) / rt60) * normal();
    taps.push([Math.round((ms / 1000) * sampleRate), level]);
  }
  return taps;
}

function rms(values) {
  let sum = 0;
  for (const v of values) sum += v * v;
  return Math.sqrt(sum / values.length);
}

/** Every case, with what the detector answered, and the failures against ±`toleranceMs`. */
export async function runProbeCases(base, toleranceMs = 1) {
  const { synthesizeProbe, detectProbe, encodeWav } = await import(`${base}probe.js`);
  const failures = [];
  const results = [];
  let worst = 0;
  let slowestMs = 0;
  const offsetsMs = [-180, -37.3, 0, 12.6, 95, 240];
  for (const sampleRate of [48_000, 44_100]) {
    const probe = synthesizeProbe(sampleRate);
    const probeRms = rms(probe);
    const random = seeded(sampleRate);
    const normal = gaussian(random);
    const music = (i) => 0.5 * Math.sin((2 * Math.PI * 110 * i) / sampleRate) + 0.3 * Math.sin((2 * Math.PI * 233 * i) / sampleRate)
      + 0.2 * Math.sin((2 * Math.PI * 587 * i) / sampleRate + 1);
    const cases = [
      { name: 'clean', options: {} },
      { name: 'white noise at 0 dB SNR', options: { noise: () => probeRms * normal() } },
      { name: 'loud low music-like sound', options: { noise: music } },
      { name: 'reverberant room, reflection at +3 ms of 0.9×', options: { room: reverberantRoom(sampleRate, random), noise: () => 0.05 * probeRms * normal() } },
      { name: 'reverberant room, reflection louder than the direct sound', options: { room: reverberantRoom(sampleRate, random, { reflectionMs: 4, reflectionLevel: 1.3 }) } },
      { name: 'a missing probe in 0 dB noise', options: { gains: [1, 1, 0, 1, 1, 1], noise: () => probeRms * normal() } },
      { name: 'a probe 20 dB down in light noise', options: { gains: [1, 0.1, 1, 1, 0.1, 1], noise: () => 0.01 * probeRms * normal() } },
    ];
    for (const c of cases) {
      const { samples, slots } = synthesise(probe, { sampleRate, seconds: 8, firstMs: 1_000, slotMs: 1_000, offsetsMs, ...c.options });
      const started = performance.now();
      const found = slots.map((slot) => detectProbe(samples, sampleRate, slot.expectedSample, Math.round(0.4 * sampleRate)));
      slowestMs = Math.max(slowestMs, performance.now() - started);
      found.forEach((answer, k) => {
        const present = !c.options.gains || c.options.gains[k] > 0;
        const label = `${sampleRate} Hz, ${c.name}, probe ${k}`;
        if (!present) {
          if (answer.offsetMs !== null) failures.push(`${label}: reported ${answer.offsetMs} ms for a probe that is not there`);
          return;
        }
        if (answer.offsetMs === null) {
          failures.push(`${label}: not heard (confidence ${answer.confidence})`);
          return;
        }
        // The slot's instant is rounded to a sample, so the truth is measured from that sample.
        const truth = ((slots[k].arrivalSample - slots[k].expectedSample) / sampleRate) * 1000;
        const error = answer.offsetMs - truth;
        worst = Math.max(worst, Math.abs(error));
        if (Math.abs(error) > toleranceMs) failures.push(`${label}: ${answer.offsetMs.toFixed(3)} ms, truth ${truth.toFixed(3)} ms`);
      });
      results.push({ sampleRate, name: c.name, found });
    }
  }
  // A device heard at the window's edge, its repeats a little later still: the median the
  // listener reports stays within the window the server takes (±400 ms).
  const { medianArrival } = await import(`${base}calibration.js`);
  const edge = synthesise(synthesizeProbe(48_000), { sampleRate: 48_000, seconds: 3, firstMs: 500, slotMs: 200, offsetsMs: [395, 407, 409] });
  const atEdge = medianArrival(edge.samples, 48_000, edge.slots[0].expectedSample, { windowMs: 400, repeats: 3, repeatMs: 200 });
  if (atEdge === null || atEdge > 400 || atEdge < 399) failures.push(`a device at the window's edge reported at ${atEdge} ms, not 400`);
  const wav = encodeWav(new Float32Array([0, 0.5, -0.5, 1]), 48_000);
  const text = (offset, length) => String.fromCharCode(...wav.slice(offset, offset + length));
  const view = new DataView(wav.buffer);
  if (text(0, 4) !== 'RIFF' || text(8, 4) !== 'WAVE' || text(36, 4) !== 'data' || view.getUint32(40, true) !== 8
    || view.getUint32(24, true) !== 48_000 || view.getInt16(46, true) !== 16384 || view.getInt16(50, true) !== 32767) {
    failures.push('encodeWav wrote a bad header or bad samples');
  }
  return { failures, worstErrorMs: worst, slowestAnalysisMs: slowestMs, results: results.length };
}

// Under Node: run against the source folder and print the figures.
if (typeof process !== 'undefined' && process.argv && import.meta.url === `file://${process.argv[1]}`) {
  const path = await import('node:path');
  const url = await import('node:url');
  const root = path.resolve(path.dirname(url.fileURLToPath(import.meta.url)), '..', '..');
  const base = `${url.pathToFileURL(path.join(root, 'Sources/JamWebClient/Web/js')).href}/`;
  const answer = await runProbeCases(base);
  console.log(JSON.stringify(answer, null, 1));
  process.exit(answer.failures.length ? 1 : 0);
}
