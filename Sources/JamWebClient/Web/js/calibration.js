// Room calibration on this device (the server's CalibrationPlan): a device the plan lists
// plays the probe so that it is heard at its announced server instant; the listening
// device records the room from before the first probe to after the last, finds each
// arrival (probe.js) and reports it. Every figure is relative to the listener's own
// probe, so what its speaker, its microphone and this page's clock mapping add cancels.
import { CalibrationTiming, Command, ErrorCode, ListenerProblem } from './protocol.js';
import { detectProbe, synthesizeProbe } from './probe.js';

/** Recording runs from the plan's arrival to this long after the last window, ms. */
const MARGIN_MS = 300;
/** How long after its window a recording may hear nothing before it is given up. */
const STALLED_RECORDING_MS = 1000;
/** A device's later probes are looked for this close to where its first one says, ms. */
const REPEAT_WINDOW_MS = 15;
/** The probe plays at this gain: loud enough across a room, not startling up close. */
const PROBE_GAIN = 0.6;
/** The microphone as it is: echo cancellation would remove the very probe we listen for. */
const RAW_AUDIO = Object.freeze({ echoCancellation: false, noiseSuppression: false, autoGainControl: false });

/**
 * Whether this page can record the room, and so be a calibration's listener: a page on
 * plain http (a phone on the LAN) has no `mediaDevices` at all. Sync reports say it, so a
 * host is not offered a device that could only time the run out.
 */
export function canRecordRoom(nav = globalThis.navigator) {
  return !!(nav && nav.mediaDevices && typeof nav.mediaDevices.getUserMedia === 'function');
}

/** Whether `plan` lists `device` (`{userId, deviceId}`) as a probe or as the listener. */
export function roleIn(plan, device) {
  const same = (ref) => ref.userId === device.userId && ref.deviceId === device.deviceId;
  return { probe: plan.probes.find(same) || null, listening: same(plan.listener) };
}

export class CalibrationRunner {
  /**
   * @param {{device: () => {userId: string, deviceId: string}, clock: () => any,
   *   audio: () => AudioContext|null, compensationMs: () => number,
   *   send: (type: string, data: any) => Promise<any>, onStatus?: (text: string) => void,
   *   now?: () => number, getUserMedia?: (constraints: any) => Promise<MediaStream>}} options
   */
  constructor(options) {
    this.options = options;
    this.now = options.now || (() => performance.now());
    this.getUserMedia = options.getUserMedia || ((constraints) => {
      if (!canRecordRoom()) throw new Error('this page may not use a microphone: it needs https or localhost');
      return navigator.mediaDevices.getUserMedia(constraints);
    });
    this.running = null;
    /** The run under way was stopped (`abort`): it plays, records and reports nothing more. */
    this.aborted = false;
    /** The run's scheduled probe sounds, its microphone, and what ends its probe wait. */
    this.sources = [];
    this.stream = null;
    this.probesDone = null;
    /** This run's own probe came too late to be played (see `playProbe`). */
    this.probeTooLate = false;
  }

  /**
   * Stops the run under way, if any, because the member left the session: its probes go
   * silent, the microphone goes off at once, and nothing is reported.
   */
  abort() {
    if (!this.running) return;
    this.aborted = true;
    for (const source of this.sources) {
      try {
        source.stop();
      } catch {
        // Never started: nothing to stop.
      }
    }
    this.sources = [];
    if (this.stream) this.stream.getTracks().forEach((track) => track.stop());
    if (this.probesDone) this.probesDone();
  }

  status(text) {
    if (this.options.onStatus && !this.aborted) this.options.onStatus(text);
  }

  /** Plays this device's part in `plan`; resolves once it is done (the listener: reported). */
  async handle(plan) {
    const { probe, listening } = roleIn(plan, this.options.device());
    if (!probe && !listening) return;
    if (this.running === plan.id) return; // a repeated plan (a resumed socket) changes nothing
    this.running = plan.id;
    this.aborted = false;
    try {
      this.probeTooLate = false;
      const playing = probe ? this.playProbe(probe, plan) : null;
      if (listening && this.probeTooLate) {
        // Every figure is measured against the listener's own probe: without it the run can
        // only fail, so it says why at once rather than after everybody chirped.
        this.report(plan, plan.probes.map((p) => ({ userId: p.userId, deviceId: p.deviceId, offsetMs: null })),
          ListenerProblem.planTooLate);
        return;
      }
      await Promise.all([playing, listening ? this.listen(plan) : null]);
    } finally {
      this.running = null;
      this.sources = [];
      this.stream = null;
      this.probesDone = null;
    }
  }

  /** The page's local instant (performance.now) of server instant `atMs`; null without a clock. */
  localAt(atMs) {
    const clock = this.options.clock();
    const estimate = clock && clock.estimate;
    return estimate ? estimate.localTime(atMs) : null;
  }

  /**
   * Schedules the plan's repeats of the probe so that, after this device's output path
   * and delay, the first is heard at its instant.
   */
  playProbe(probe, plan) {
    const context = this.options.audio();
    const local = this.localAt(probe.atMs);
    if (!context || local === null) {
      this.status('Calibration: this device is not playing, so it plays no probe.');
      return null;
    }
    const startLocal = local - this.options.compensationMs();
    // The plan came late, or the output path is longer than its lead: a late probe would be
    // stored as this device's delay (CalibrationRules.minimumProbeLeadMs).
    if (startLocal - this.now() < CalibrationTiming.minimumProbeLeadMs) {
      this.status('Calibration: the probe came too late for this device, so it plays none and keeps its delay.');
      this.probeTooLate = true;
      return null;
    }
    const samples = synthesizeProbe(context.sampleRate);
    const buffer = context.createBuffer(1, samples.length, context.sampleRate);
    buffer.copyToChannel(samples, 0);
    const gain = context.createGain();
    gain.gain.value = PROBE_GAIN;
    gain.connect(context.destination);
    const first = context.currentTime + (startLocal - this.now()) / 1000;
    let last = null;
    for (let repeat = 0; repeat < plan.repeats; repeat++) {
      const source = context.createBufferSource();
      source.buffer = buffer;
      source.connect(gain);
      source.start(Math.max(context.currentTime, first + (repeat * plan.repeatMs) / 1000));
      this.sources.push(source);
      last = source;
    }
    this.status('Calibration: this device plays its probe…');
    return new Promise((resolve) => {
      last.onended = resolve;
      this.probesDone = resolve;
    });
  }

  /** Records the room through every window, finds each probe and reports the arrivals. */
  async listen(plan) {
    const context = this.options.audio();
    if (!context) {
      this.status('Calibration: press “Play on this device” on the listening device first.');
      return;
    }
    const last = Math.max(...plan.probes.map((p) => p.atMs));
    const endLocal = this.localAt(last + (plan.repeats - 1) * plan.repeatMs + plan.windowMs + plan.probeMs + MARGIN_MS);
    if (endLocal === null) return;
    // Placed with the clock as it is now: a reconnect or a re-sync during the recording
    // resets it, and every probe would then be "not heard". Only their differences count.
    const expectedLocal = plan.probes.map((p) => this.localAt(p.atMs));
    let stream;
    try {
      stream = await this.getUserMedia({ audio: RAW_AUDIO });
    } catch (error) {
      this.status(`Calibration: the microphone is not available (${error && error.message ? error.message : error}).`);
      // The result then names the microphone, not the volume, for everybody.
      const refused = error && (error.name === 'NotAllowedError' || error.name === 'SecurityError');
      this.report(plan, plan.probes.map((p) => ({ userId: p.userId, deviceId: p.deviceId, offsetMs: null })),
        refused ? ListenerProblem.microphoneRefused : ListenerProblem.microphoneUnavailable);
      return;
    }
    this.stream = stream;
    if (this.aborted) {
      stream.getTracks().forEach((track) => track.stop());
      return;
    }
    this.status('Calibration: listening — keep the room quiet…');
    const done = () => this.aborted || this.now() >= endLocal;
    let recording;
    try {
      recording = globalThis.MediaStreamTrackProcessor
        ? await recordFrames(stream, done, this.now)
        : await record(context, stream, done, this.now);
    } catch (error) {
      this.status(`Calibration: recording failed (${error && error.message ? error.message : error}).`);
      this.report(plan, plan.probes.map((p) => ({ userId: p.userId, deviceId: p.deviceId, offsetMs: null })),
        ListenerProblem.microphoneUnavailable);
      return;
    } finally {
      // The microphone goes off however the recording ended.
      stream.getTracks().forEach((track) => track.stop());
    }
    const rate = recording.rate;
    const arrivals = plan.probes.map((p, index) => {
      const expectedSample = Math.round(((expectedLocal[index] - recording.startLocal) * rate) / 1000);
      return { userId: p.userId, deviceId: p.deviceId, offsetMs: medianArrival(recording.samples, rate, expectedSample, plan) };
    });
    this.report(plan, arrivals);
  }

  /** Sends what was heard with an id, so a reconnect in between sends it again (the server answers a repeat harmlessly). */
  report(plan, arrivals, problem = null) {
    if (this.aborted) return;
    // Said before the answer: the result can come before the report's own ack.
    this.status('Calibration: sent what this device heard; waiting for the result…');
    const data = problem ? { calibrationId: plan.id, arrivals, problem } : { calibrationId: plan.id, arrivals };
    Promise.resolve(this.options.send(Command.calibrationReport, data)).catch((error) => {
      // Sent again after a reconnect, a report the run already took finds it over: its
      // result went out meanwhile, and nothing is wrong with the report.
      if (this.aborted || (error && error.code === ErrorCode.notFound)) return;
      this.status(`Calibration: what this device heard could not be sent (${error && error.message ? error.message : error}).`);
    });
  }
}

/**
 * One device's arrival: its first probe within the plan's window of `expectedSample`,
 * its repeats close to where that one says, and the median of what was found (null
 * when the first is not heard). A glitch in the recording moves one probe, not the median.
 */
export function medianArrival(samples, rate, expectedSample, plan) {
  const inside = (sample) => sample > 0 && sample < samples.length;
  if (!inside(expectedSample)) return null;
  const first = detectProbe(samples, rate, expectedSample, Math.round((plan.windowMs * rate) / 1000));
  if (first.offsetMs === null) return null;
  const offsets = [first.offsetMs];
  for (let repeat = 1; repeat < plan.repeats; repeat++) {
    const near = expectedSample + Math.round(((first.offsetMs + repeat * plan.repeatMs) * rate) / 1000);
    if (!inside(near)) continue;
    const found = detectProbe(samples, rate, near, Math.round((REPEAT_WINDOW_MS * rate) / 1000));
    if (found.offsetMs !== null) offsets.push(first.offsetMs + found.offsetMs);
  }
  offsets.sort((a, b) => a - b);
  const middle = offsets.length >> 1;
  const median = offsets.length % 2 ? offsets[middle] : (offsets[middle - 1] + offsets[middle]) / 2;
  // Repeats may be found up to REPEAT_WINDOW_MS past where the first says, which can carry the
  // median past the window the server takes (±windowMs): such a device is reported at its edge.
  return Math.max(-plan.windowMs, Math.min(plan.windowMs, median));
}

/**
 * Records `stream` frame by frame as the microphone delivers them (MediaStreamTrackProcessor,
 * where the browser has it): no Web Audio graph in between, whose input buffer drops or
 * repeats a 128-frame block now and then when the microphone's clock and the output's
 * differ, shifting every later probe by 2.9 ms. The first frame's local instant anchors
 * the recording; its error is the same for every probe, so it cancels.
 */
async function recordFrames(stream, done, now) {
  const [track] = stream.getAudioTracks();
  const reader = new MediaStreamTrackProcessor({ track }).readable.getReader();
  const chunks = [];
  let length = 0, rate = 48_000, startLocal = null;
  // A capture that stops delivering without ending (muted, interrupted) would leave read()
  // waiting for ever with the microphone on: give up a second after the window closed.
  let heardAt = now();
  let watchdog = null;
  const stalled = new Promise((resolve) => {
    watchdog = setInterval(() => {
      if (done() && now() - heardAt >= STALLED_RECORDING_MS) resolve(null);
    }, STALLED_RECORDING_MS / 4);
  });
  try {
    while (!done()) {
      const read = await Promise.race([reader.read(), stalled]);
      // What came before the stall is kept: it may hold every probe already.
      if (read === null && length > 0) break;
      if (read === null) throw new Error('no sound came from the microphone; is it muted?');
      const { value: frame, done: ended } = read;
      if (ended) break;
      heardAt = now();
      if (startLocal === null) {
        rate = frame.sampleRate;
        startLocal = now() - (frame.numberOfFrames / rate) * 1000;
      }
      const samples = new Float32Array(frame.numberOfFrames);
      frame.copyTo(samples, { planeIndex: 0, format: 'f32-planar' });
      frame.close();
      chunks.push(samples);
      length += samples.length;
    }
  } finally {
    clearInterval(watchdog);
    reader.cancel().catch(() => {});
  }
  const samples = new Float32Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    samples.set(chunk, offset);
    offset += chunk.length;
  }
  return { samples, startLocal, rate };
}

/**
 * Records `stream` in `context` until `done()`; returns the samples and the local instant
 * (performance.now) of the first one, mapped once through the context's clock: the
 * mapping's own error is the same for every probe, so it cancels.
 */
function record(context, stream, done, now) {
  return new Promise((resolve, reject) => {
    const source = context.createMediaStreamSource(stream);
    const processor = context.createScriptProcessor(4096, 1, 1);
    const chunks = [];
    let startLocal = null;
    let length = 0;
    let heardAt = now();
    // A context that does not run (suspended, say) processes nothing, and the promise would
    // wait for ever with the microphone on: give up a second after the window closed.
    const watchdog = setInterval(() => {
      if (!done() || now() - heardAt < STALLED_RECORDING_MS) return;
      clearInterval(watchdog);
      processor.onaudioprocess = null;
      source.disconnect();
      processor.disconnect();
      reject(new Error('no sound came from the microphone; is the page’s audio running?'));
    }, STALLED_RECORDING_MS / 4);
    processor.onaudioprocess = (event) => {
      heardAt = now();
      const input = event.inputBuffer.getChannelData(0);
      if (startLocal === null) {
        // The buffer's first sample, as the context's clock places it, in page time.
        startLocal = now() - (context.currentTime - event.playbackTime) * 1000 - (input.length / context.sampleRate) * 1000;
      }
      chunks.push(new Float32Array(input));
      length += input.length;
      if (done()) {
        clearInterval(watchdog);
        processor.onaudioprocess = null;
        source.disconnect();
        processor.disconnect();
        const samples = new Float32Array(length);
        let offset = 0;
        for (const chunk of chunks) {
          samples.set(chunk, offset);
          offset += chunk.length;
        }
        resolve({ samples, startLocal, rate: context.sampleRate });
      }
    };
    source.connect(processor);
    // Chromium runs a ScriptProcessor only while it is connected to the destination; it outputs silence.
    processor.connect(context.destination);
  });
}
