"""Room calibration end to end in headless Chromium with a fake microphone: the host's
browser listens (Chromium plays a WAV file as its microphone), two guests' browsers play
along, the host starts a calibration from the sync column, and the delays the server sets
match the offsets the WAV was built with, within 2 ms.

The WAV is built in a page from js/probe.js (one definition of the probe): the listener's
own probe, then each guest's probe one slot later, late or early by a known amount, as a
microphone in the room would hear them. The listener opens its microphone when the plan
arrives, 3 s before the first probe; Chromium starts the file then, so the listener's
own probe sits a little before its instant, and the guests' by the same amount plus their
offsets. Only the differences count, as in a real room.
"""

import base64
import json
import time

import pytest

from jam_page import add_track, click, create_session, debug, el, join_by_link, wait_for

# Guest offsets (ms): how much later than the listener's own probe each one is heard.
OFFSETS_MS = [42.5, -27.0]
# Where the listener's own probe sits in the file: the plan arrives 3 s before it, and
# the microphone opens a moment after the plan.
FIRST_MS = 2_920
SLOT_MS = 1_400
# From a calibration's start to its first probe (CalibrationRules.leadMs), s.
CALIBRATION_LEAD_S = 3.0
REPEATS, REPEAT_MS = 3, 200

BUILD_WAV = """
const [positionsMs, repeats, repeatMs, done] = arguments;
(async () => {
  const { synthesizeProbe, encodeWav } = await import('/js/probe.js');
  const rate = 48000;
  const probe = synthesizeProbe(rate);
  const samples = new Float32Array(rate * 10);
  let seed = 7;
  const random = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 - 0.5; };
  for (let i = 0; i < samples.length; i++) samples[i] = 0.02 * random();  // a quiet room
  // Each device plays the probe `repeats` times, `repeatMs` apart (CalibrationRules).
  for (const ms of positionsMs.flatMap((first) => Array.from({ length: repeats }, (_, r) => first + r * repeatMs))) {
    const at = ms / 1000 * rate;
    const whole = Math.floor(at), part = at - whole;
    for (let i = 0; i < probe.length; i++) {
      samples[whole + i] += 0.7 * probe[i] * (1 - part);
      samples[whole + i + 1] += 0.7 * probe[i] * part;
    }
  }
  const bytes = encodeWav(samples, rate);
  let text = '';
  for (let i = 0; i < bytes.length; i += 8192) text += String.fromCharCode(...bytes.subarray(i, i + 8192));
  done(btoa(text));
})().catch((error) => done({ error: String(error) }));
"""


def user_id(driver):
    return json.loads(driver.execute_script("return localStorage.getItem('openjam.identity')"))["userId"]


def test_a_calibration_with_a_fake_microphone_sets_the_delays_the_recording_holds(base_url, browsers, tmp_path):
    guests = [browsers.open("gil"), browsers.open("fay")]
    # The first guest's page builds the WAV from js/probe.js.
    guests[0].get(base_url + "/")

    host = None
    try:
        # The listener's browser is started with the file's path; the file is written once
        # the guests have joined, since the plan orders the devices after the listener by
        # user id, and Chromium reads it only when the microphone opens.
        builder = guests[0]
        wav_path = tmp_path / "room.wav"
        wav_path.write_bytes(b"")
        host = browsers.open("hana", flags=[
            "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
            f"--use-file-for-fake-audio-capture={wav_path}",
        ])
        code = create_session(host, base_url, "Hana")
        for guest, name in zip(guests, ["Gil", "Fay"]):
            join_by_link(guest, base_url, code, name)
        ids = [user_id(g) for g in guests]
        order = sorted(range(len(guests)), key=lambda i: ids[i])
        positions = [FIRST_MS] + [FIRST_MS + (slot + 1) * SLOT_MS + OFFSETS_MS[i] for slot, i in enumerate(order)]
        data = builder.execute_async_script(BUILD_WAV, positions, REPEATS, REPEAT_MS)
        assert not isinstance(data, dict), data
        wav_path.write_bytes(base64.b64decode(data))

        for driver in [host] + guests:
            click(driver, el(driver, "device-toggle"))
        add_track(host, 3)
        for driver in [host] + guests:
            wait_for(driver, lambda d: debug(d)["playing"], 15, "a browser never started playing")
        host_device = debug(host)["deviceId"]

        def own_row(d):
            for row in d.find_elements("css selector", "#sync-list .sync-device"):
                if row.get_attribute("data-device-id") == host_device:
                    return row
            return None

        # Every device reports as playing (its calibrate button shows), the host's own among them.
        def all_playing(d):
            rows = d.find_elements("css selector", "#sync-list .sync-device")
            return len(rows) == 1 + len(guests) and all(r.find_element("css selector", "button.sync-calibrate").is_displayed() for r in rows)

        wait_for(host, all_playing, 20, "the playing devices never showed in the host's sync column")
        click(host, own_row(host).find_element("css selector", "button.sync-calibrate"))
        wait_for(host, lambda d: "Calibration done" in el(d, "sync-message").text or "Calibration failed" in el(d, "sync-message").text,
                 20, "the calibration never finished")
        message = el(host, "sync-message").text
        assert "done" in message, message

        errors = []
        for index, guest in enumerate(guests):
            wait_for(guest, lambda d: debug(d)["deviceDelayMs"] != 0, 10, "a guest's delay was never set")
            delay = debug(guest)["deviceDelayMs"]
            print(f"\n[figures] calibration: guest {index} heard {OFFSETS_MS[index]:+.1f} ms from the listener, "
                  f"delay set to {delay:+.1f} ms (error {delay - OFFSETS_MS[index]:+.2f} ms)")
            errors.append((index, delay, delay - OFFSETS_MS[index]))
        for index, delay, error in errors:
            assert abs(error) <= 2, f"guest {index}: delay {delay} ms, recorded offset {OFFSETS_MS[index]} ms"
    finally:
        # What the host saw, for a failure's diagnosis.
        if host is not None:
            print("\nhost's sync column says:", el(host, "sync-message").text)


# A CalibrationRunner for device u1/d1 on an exact clock that reports into `posted`, for the
# scripts below (prepended to each); `options` override any of it.
RIG = """
function rig(CalibrationRunner, posted, options) {
  return new CalibrationRunner({
    device: () => ({ userId: 'u1', deviceId: 'd1' }),
    clock: () => ({ estimate: { localTime: (at) => at } }),
    compensationMs: () => 0,
    send: async (type, data) => { posted.push({ type, data }); },
    onStatus: () => {},
    ...options,
  });
}
"""


FAILING_RECORDING = RIG + """
const [path, done] = arguments;
(async () => {
  const { CalibrationRunner } = await import('/js/calibration.js');
  let stopped = 0, t = 0;
  const posted = [];
  const track = { stop: () => { stopped += 1; } };
  const stream = { getTracks: () => [track], getAudioTracks: () => [track] };
  const node = () => ({ connect() {}, disconnect() {} });
  const context = { sampleRate: 48000, currentTime: 0, destination: {}, createMediaStreamSource: node, createScriptProcessor: node };
  if (path === 'frames') {
    globalThis.MediaStreamTrackProcessor = class { constructor() { throw new Error('the microphone went away'); } };
  } else if (path === 'silentFrames') {
    // A capture that stops delivering without ending (muted, interrupted): read() never settles.
    globalThis.MediaStreamTrackProcessor = class {
      constructor() { this.readable = { getReader: () => ({ read: () => new Promise(() => {}), cancel: async () => {} }) }; }
    };
    setTimeout(() => { t = 1e9; }, 50);
  } else {
    // A suspended context: the processor never runs. Time passes the window at once.
    globalThis.MediaStreamTrackProcessor = undefined;
    setTimeout(() => { t = 1e9; }, 50);
  }
  const runner = rig(CalibrationRunner, posted, {
    audio: () => context,
    now: () => t,
    getUserMedia: async () => stream,
  });
  const plan = { id: 'c1', listener: { userId: 'u1', deviceId: 'd1' }, repeats: 1, repeatMs: 200, windowMs: 100, probeMs: 50,
    probes: [{ userId: 'u2', deviceId: 'd2', atMs: 1000 }] };
  await runner.handle(plan);
  done({ stopped, posted, running: runner.running });
})().catch((error) => done({ error: String(error) }));
"""


def test_a_recording_that_fails_turns_the_microphone_off_and_reports_nothing_heard(base_url, browsers):
    page = browsers.open("listener")
    page.get(base_url + "/")
    for path in ("frames", "silentFrames", "suspended"):
        result = page.execute_async_script(FAILING_RECORDING, path)
        assert "error" not in result, f"{path}: {result}"
        assert result["stopped"] == 1, f"{path}: the microphone was left on: {result}"
        assert [p["type"] for p in result["posted"]] == ["calibrationReport"], f"{path}: {result}"
        assert [a["offsetMs"] for a in result["posted"][0]["data"]["arrivals"]] == [None], f"{path}: {result}"
        assert result["running"] is None, f"{path}: the runner still thinks it is calibrating"


ABORTED_RUN = RIG + """
const done = arguments[arguments.length - 1];
(async () => {
  const { CalibrationRunner } = await import('/js/calibration.js');
  let stopped = 0;
  const posted = [], statuses = [];
  const track = { stop: () => { stopped += 1; } };
  const stream = { getTracks: () => [track], getAudioTracks: () => [track] };
  const node = () => ({ connect() {}, disconnect() {} });
  // A context that runs nothing: only the abort can end the recording early.
  const context = { sampleRate: 48000, currentTime: 0, destination: {}, createMediaStreamSource: node, createScriptProcessor: node };
  globalThis.MediaStreamTrackProcessor = undefined;
  const runner = rig(CalibrationRunner, posted, {
    audio: () => context,
    onStatus: (text) => statuses.push(text),
    now: () => performance.now(),
    getUserMedia: async () => stream,
  });
  // Listening for a minute from now.
  const plan = { id: 'c1', listener: { userId: 'u1', deviceId: 'd1' }, repeats: 1, repeatMs: 200, windowMs: 100, probeMs: 50,
    probes: [{ userId: 'u2', deviceId: 'd2', atMs: performance.now() + 60_000 }] };
  const run = runner.handle(plan);
  await new Promise((resolve) => setTimeout(resolve, 100));
  const listening = statuses.slice();
  runner.abort();
  const stoppedAtOnce = stopped;
  await run;
  done({ stoppedAtOnce, stopped, posted, running: runner.running, listening, statuses });
})().catch((error) => done({ error: String(error) }));
"""


def test_leaving_stops_a_calibration_and_its_microphone_at_once(base_url, browsers):
    page = browsers.open("listener")
    page.get(base_url + "/")
    result = page.execute_async_script(ABORTED_RUN)
    assert "error" not in result, result
    assert any("listening" in text for text in result["listening"]), result
    assert result["stoppedAtOnce"] == 1, f"the microphone stayed on after the abort: {result}"
    assert result["posted"] == [], f"a stopped run reported: {result}"
    assert result["running"] is None, result


UNSENT_REPORT = RIG + """
const done = arguments[arguments.length - 1];
(async () => {
  const { CalibrationRunner } = await import('/js/calibration.js');
  const statuses = [];
  const runner = rig(CalibrationRunner, [], {
    audio: () => null,
    send: async () => { throw new Error('the session ended'); },
    onStatus: (text) => statuses.push(text),
  });
  runner.report({ id: 'c1' }, []);
  await new Promise((resolve) => setTimeout(resolve, 0));
  done({ statuses });
})().catch((error) => done({ error: String(error) }));
"""


def test_a_report_that_cannot_be_sent_says_so_rather_than_waiting_for_a_result(base_url, browsers):
    page = browsers.open("listener")
    page.get(base_url + "/")
    result = page.execute_async_script(UNSENT_REPORT)
    assert "error" not in result, result
    assert result["statuses"][-1] == "Calibration: what this device heard could not be sent (the session ended).", result


LATE_PROBES = RIG + """
const done = arguments[arguments.length - 1];
(async () => {
  const { CalibrationRunner } = await import('/js/calibration.js');
  const starts = {};
  let current = null;
  const node = () => ({ connect() {}, disconnect() {}, gain: { value: 1 } });
  const context = {
    sampleRate: 48000, currentTime: 10, destination: {},
    createBuffer: () => ({ copyToChannel() {} }),
    createGain: node,
    createBufferSource: () => ({ connect() {}, stop() {}, start(at) { starts[current].push(at); } }),
  };
  const statuses = [];
  const runner = rig(CalibrationRunner, [], {
    audio: () => context,
    compensationMs: () => 100,
    onStatus: (text) => statuses.push(text),
    now: () => 1000,
    getUserMedia: async () => { throw new Error('not the listener'); },
  });
  // Heard at `atMs` means leaving the player 100 ms before; "now" is 1000.
  for (const [name, atMs] of [['past', 900], ['tooNear', 1149], ['inTime', 1150]]) {
    current = name;
    starts[name] = [];
    const plan = { id: name, listener: { userId: 'u9', deviceId: 'd9' }, repeats: 3, repeatMs: 200, windowMs: 400, probeMs: 80,
      probes: [{ userId: 'u1', deviceId: 'd1', atMs }] };
    // A plan with a probe to play resolves once the probes ended; these never do, so do not wait.
    runner.handle(plan);
    await new Promise((resolve) => setTimeout(resolve, 0));
    runner.abort();
    runner.running = null;
  }
  done({ starts, statuses });
})().catch((error) => done({ error: String(error) }));
"""


def test_a_probe_whose_moment_is_past_or_too_near_is_not_played_late(base_url, browsers):
    page = browsers.open("prober")
    page.get(base_url + "/")
    result = page.execute_async_script(LATE_PROBES)
    assert "error" not in result, result
    assert result["starts"]["past"] == [], result
    assert result["starts"]["tooNear"] == [], result
    # In time: three repeats, the first 50 ms from now on the context's clock (10 s + 0.05 s).
    assert [round(t, 3) for t in result["starts"]["inTime"]] == [10.05, 10.25, 10.45], result
    assert sum("too late" in s for s in result["statuses"]) == 2, result


MICROPHONE_PROBLEMS = RIG + """
const done = arguments[arguments.length - 1];
(async () => {
  const { CalibrationRunner } = await import('/js/calibration.js');
  const context = { sampleRate: 48000, currentTime: 0, destination: {} };
  const listen = async (name, getUserMedia) => {
    const posted = [];
    const runner = rig(CalibrationRunner, posted, {
      audio: () => context,
      now: () => performance.now(),
      getUserMedia,
    });
    const plan = { id: name, listener: { userId: 'u1', deviceId: 'd1' }, repeats: 1, repeatMs: 200, windowMs: 100, probeMs: 50,
      probes: [{ userId: 'u2', deviceId: 'd2', atMs: performance.now() + 60_000 }] };
    await runner.handle(plan);
    return posted;
  };
  const refused = await listen('refused', async () => { throw new DOMException('Permission denied', 'NotAllowedError'); });
  // A page on plain http: the browser gives it no mediaDevices at all.
  Object.defineProperty(navigator, 'mediaDevices', { value: undefined, configurable: true });
  const unavailable = await listen('unavailable', undefined);
  done({ refused, unavailable });
})().catch((error) => done({ error: String(error) }));
"""


def test_a_listener_without_a_microphone_reports_why_rather_than_hearing_nothing(base_url, browsers):
    page = browsers.open("listener")
    page.get(base_url + "/")
    result = page.execute_async_script(MICROPHONE_PROBLEMS)
    assert "error" not in result, result
    for name, problem in (("refused", "microphoneRefused"), ("unavailable", "microphoneUnavailable")):
        posted = result[name]
        assert [p["type"] for p in posted] == ["calibrationReport"], result
        assert posted[0]["data"]["problem"] == problem, result
        assert [a["offsetMs"] for a in posted[0]["data"]["arrivals"]] == [None], result


def test_a_page_that_may_not_use_a_microphone_starts_no_calibration_and_says_why(base_url, browsers):
    host, guest = browsers.open("hana"), browsers.open("gil")
    code = create_session(host, base_url, "Hana")
    join_by_link(guest, base_url, code, "Gil")
    for driver in (host, guest):
        click(driver, el(driver, "device-toggle"))
    add_track(host, 3)
    for driver in (host, guest):
        wait_for(driver, lambda d: debug(d)["playing"], 15, "a browser never started playing")
    host_device = debug(host)["deviceId"]

    def own_button(d):
        for row in d.find_elements("css selector", "#sync-list .sync-device"):
            if row.get_attribute("data-device-id") == host_device:
                button = row.find_element("css selector", "button.sync-calibrate")
                return button if button.is_displayed() else None
        return None

    button = wait_for(host, own_button, 20, "the host's own device never showed as one to calibrate with")
    # As on a phone that opened the page over plain http: no mediaDevices at all.
    host.execute_script("Object.defineProperty(navigator, 'mediaDevices', { value: undefined, configurable: true })")
    click(host, button)
    wait_for(host, lambda d: "https" in el(d, "sync-message").text, 5, "the page did not say why it cannot listen")
    said = el(host, "sync-message").text
    # Had a calibration started, its plan (3 s ahead) would have this page listen, fail and say
    # so, and the result would follow: the words stay the page's own for longer than that.
    deadline = time.monotonic() + CALIBRATION_LEAD_S + 1
    while time.monotonic() < deadline:
        assert el(host, "sync-message").text == said, f"a calibration ran after all: {el(host, 'sync-message').text}"
        time.sleep(0.1)  # pacing the reads, not waiting for anything


CLOCK_RESET_WHILE_RECORDING = RIG + """
const [stallAfter, done] = arguments;
(async () => {
  const { CalibrationRunner } = await import('/js/calibration.js');
  const { synthesizeProbe } = await import('/js/probe.js');
  const rate = 48000, frame = 4800;
  // 0.7 s of room: the listener's own probe heard 10 ms after its instant (100 ms in).
  const room = new Float32Array(7 * frame);
  room.set(synthesizeProbe(rate), Math.round(0.110 * rate));
  let t = 0, reads = 0;
  const clock = { estimate: { localTime: (at) => at } };
  globalThis.MediaStreamTrackProcessor = class {
    constructor() {
      this.readable = { getReader: () => ({
        cancel: async () => {},
        read: async () => {
          if (stallAfter !== null && reads === stallAfter) {
            // The microphone stops delivering without ending; time runs past the window.
            setTimeout(() => { t = 1e9; }, 50);
            return new Promise(() => {});
          }
          const index = reads++;
          t += 100;
          // A reconnect drops the clock's samples while the room is recorded.
          clock.estimate = null;
          return { done: false, value: { sampleRate: rate, numberOfFrames: frame, close() {},
            copyTo(dest) { dest.set(room.subarray(index * frame, (index + 1) * frame)); } } };
        },
      }) };
    }
  };
  const posted = [];
  const track = { stop() {} };
  const runner = rig(CalibrationRunner, posted, {
    clock: () => clock,
    audio: () => ({ sampleRate: rate, currentTime: 0, destination: {} }),
    now: () => t,
    getUserMedia: async () => ({ getTracks: () => [track], getAudioTracks: () => [track] }),
  });
  // The listener's own probe, which the room above already holds: nothing is played here.
  const plan = { id: 'c1', listener: { userId: 'u1', deviceId: 'd1' }, repeats: 1, repeatMs: 200, windowMs: 100, probeMs: 80,
    probes: [{ userId: 'u1', deviceId: 'd1', atMs: 100 }] };
  runner.playProbe = () => null;
  await runner.handle(plan);
  done({ posted });
})().catch((error) => done({ error: String(error && error.stack || error) }));
"""


@pytest.mark.parametrize("stall_after", [None, 4], ids=["whole recording", "microphone stalls after the probe"])
def test_a_clock_reset_or_a_late_stall_while_the_room_is_recorded_does_not_lose_what_was_heard(base_url, browsers, stall_after):
    page = browsers.open("listener")
    page.get(base_url + "/")
    result = page.execute_async_script(CLOCK_RESET_WHILE_RECORDING, stall_after)
    assert "error" not in result, result
    data = result["posted"][0]["data"]
    assert "problem" not in data, result
    arrivals = data["arrivals"]
    assert arrivals[0]["offsetMs"] is not None, f"the probe was lost: {result}"
    assert abs(arrivals[0]["offsetMs"] - 10) < 1, result


LISTENER_TOO_LATE = RIG + """
const done = arguments[arguments.length - 1];
(async () => {
  const { CalibrationRunner } = await import('/js/calibration.js');
  const posted = [];
  let microphones = 0;
  const runner = rig(CalibrationRunner, posted, {
    audio: () => ({ sampleRate: 48000, currentTime: 0, destination: {} }),
    now: () => 1000,
    getUserMedia: async () => { microphones += 1; throw new Error('not asked for'); },
  });
  // The listener's own probe was due 100 ms ago; another device's comes later.
  const plan = { id: 'c1', listener: { userId: 'u1', deviceId: 'd1' }, repeats: 3, repeatMs: 200, windowMs: 400, probeMs: 80,
    probes: [{ userId: 'u1', deviceId: 'd1', atMs: 900 }, { userId: 'u2', deviceId: 'd2', atMs: 2300 }] };
  await runner.handle(plan);
  done({ posted, microphones });
})().catch((error) => done({ error: String(error) }));
"""


def test_a_listener_too_late_for_its_own_probe_reports_that_at_once(base_url, browsers):
    page = browsers.open("listener")
    page.get(base_url + "/")
    result = page.execute_async_script(LISTENER_TOO_LATE)
    assert "error" not in result, result
    assert result["microphones"] == 0, result
    assert [p["type"] for p in result["posted"]] == ["calibrationReport"], result
    assert result["posted"][0]["data"]["problem"] == "planTooLate", result
