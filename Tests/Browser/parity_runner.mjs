// Runs the shared client-parity fixtures (Tests/Fixtures/ClientParity) against the web
// client's modules, the same cases JamClient's ClientParityFixtureTests run in Swift
// (display-names.json: JamProtocolTests' ValidationTests, against the server's Validate;
// join-codes.json and device-ids.json: JamCoreTests' JoinCodeAndDeviceIdParityTests, against
// JoinCodes and Validate.deviceId).
// `base` is where the modules live: the page's /js/ in Chromium (test_parity_fixtures.py),
// a file: URL under Node when regenerating the clock fixture's expected values.
// Every function answers a list of failures (empty when the modules agree).

const TOLERANCE = 1e-6;

function close(a, b) {
  return a === b || (typeof a === 'number' && typeof b === 'number' && Math.abs(a - b) <= TOLERANCE);
}

/** Drops null and undefined members, so an absent optional and a null one compare equal (as Swift decodes them). */
function normalised(value) {
  if (Array.isArray(value)) return value.map(normalised);
  if (value && typeof value === 'object') {
    const out = {};
    for (const key of Object.keys(value).sort()) {
      if (value[key] !== null && value[key] !== undefined) out[key] = normalised(value[key]);
    }
    return out;
  }
  return value;
}

export async function runTimeline(base, fixture) {
  const Timeline = await import(`${base}timeline.js`);
  const failures = [];
  for (const c of fixture.cases) {
    const track = { id: 't', name: 'n', artist: 'a', durationMs: c.timeline.durationMs, source: 'library' };
    const timeline = Timeline.moved(
      { epoch: 1, itemId: 'item', track }, c.timeline.state, c.timeline.positionMs, c.timeline.anchorMs);
    const got = Timeline.positionAt(timeline, c.atMs);
    if (!close(got, c.expectedMs)) failures.push(`timeline "${c.name}": ${got} != ${c.expectedMs}`);
  }
  return failures;
}

export async function runCorrection(base, fixture) {
  const { correctionStep } = await import(`${base}correction-policy.js`);
  const failures = [];
  for (const c of fixture.cases) {
    const step = correctionStep(c.error, { rate: c.rate, deadline: c.deadline, now: c.now }, fixture.configuration);
    // The shared vocabulary: the browser's restart is JamClient's seek, both a jump.
    const kind = step.kind === 'restart' ? 'jump' : step.kind;
    const e = c.expected;
    const same = kind === e.kind
      && (kind !== 'steer' || (close(step.deadline, e.deadline) && (step.rate === null ? e.rate === null : close(step.rate, e.rate))));
    if (!same) failures.push(`correction "${c.name}": ${JSON.stringify(step)} != ${JSON.stringify(e)}`);
  }
  return failures;
}

export async function runMirror(base, fixture) {
  const { SessionMirror } = await import(`${base}mirror.js`);
  const failures = [];
  for (const c of fixture.cases) {
    const mirror = new SessionMirror(c.me);
    // A step is a server envelope, or what the member's own client does ("local").
    const results = c.envelopes.map((step) => {
      if (step.local === undefined) return mirror.apply(structuredClone(step));
      switch (step.local) {
        case 'requestSkipAnswered': mirror.requestSkipAnswered(step.itemId); break;
        case 'withdrawSkipAnswered': mirror.withdrawSkipAnswered(step.itemId); break;
        default: throw new Error(`mirror "${c.name}": unknown local step ${step.local}`);
      }
      return 'local';
    });
    if (JSON.stringify(results) !== JSON.stringify(c.results)) {
      failures.push(`mirror "${c.name}": results ${JSON.stringify(results)} != ${JSON.stringify(c.results)}`);
    }
    if (mirror.seq !== c.expected.seq || mirror.epoch !== c.expected.epoch) {
      failures.push(`mirror "${c.name}": seq/epoch ${mirror.seq}/${mirror.epoch} != ${c.expected.seq}/${c.expected.epoch}`);
    }
    const got = JSON.stringify(normalised(mirror.view)), want = JSON.stringify(normalised(c.expected.view));
    if (got !== want) failures.push(`mirror "${c.name}": view\n${got}\n!=\n${want}`);
  }
  return failures;
}

/** The estimate clock.js gives for each case: what `expected` holds. */
export async function clockResults(base, fixture) {
  const { ClockSync } = await import(`${base}clock.js`);
  return fixture.cases.map((c) => {
    // Pings and answers in time order (a ping first when both fall on one instant).
    const events = c.exchanges.flatMap((exchange) => [[exchange[0], 0, exchange], [exchange[3], 1, exchange]]);
    events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let now = 0;
    const sync = new ClockSync({ now: () => now });
    for (const [at, isAnswer, [t0, t1, t2, t3]] of events) {
      now = at;
      if (isAnswer) {
        sync.record({ clientSendTime: t0, serverReceiveTime: t1, serverSendTime: t2 }, t3);
      } else {
        const ping = sync.makePing();
        if (ping.clientSendTime !== t0) throw new Error(`clock "${c.name}": ping stamped ${ping.clientSendTime}, not ${t0}`);
      }
    }
    const e = sync.estimate;
    return {
      acceptedSamples: sync.acceptedSamples,
      rejectedSamples: sync.rejectedSamples,
      ignoredPongs: sync.ignoredPongs,
      driftMsPerSecond: sync.drift,
      at: c.at.map((t) => ({
        offsetMs: e.offset(t), errorBoundMs: e.errorBound(t), halfRoundTripMs: e.halfRoundTripBound(t),
        resyncIntervalMs: sync.resyncInterval(t),
      })),
    };
  });
}

export async function runClock(base, fixture) {
  const results = await clockResults(base, fixture);
  const failures = [];
  fixture.cases.forEach((c, index) => {
    const got = results[index], want = c.expected;
    const check = (what, a, b) => { if (!close(a, b)) failures.push(`clock "${c.name}": ${what} ${a} != ${b}`); };
    check('acceptedSamples', got.acceptedSamples, want.acceptedSamples);
    check('rejectedSamples', got.rejectedSamples, want.rejectedSamples);
    check('ignoredPongs', got.ignoredPongs, want.ignoredPongs);
    check('driftMsPerSecond', got.driftMsPerSecond, want.driftMsPerSecond);
    want.at.forEach((w, i) => {
      check(`offsetMs at ${c.at[i]}`, got.at[i].offsetMs, w.offsetMs);
      check(`errorBoundMs at ${c.at[i]}`, got.at[i].errorBoundMs, w.errorBoundMs);
      check(`halfRoundTripMs at ${c.at[i]}`, got.at[i].halfRoundTripMs, w.halfRoundTripMs);
      check(`resyncIntervalMs at ${c.at[i]}`, got.at[i].resyncIntervalMs, w.resyncIntervalMs);
    });
  });
  return failures;
}

/** Every key of each JS default object must be listed in defaults.json, with the listed value. */
export async function runDefaults(base, fixture) {
  const { DEFAULT_CLOCK_CONFIG } = await import(`${base}clock.js`);
  const { DEFAULT_SYNC_CONFIG } = await import(`${base}sync-config.js`);
  const failures = [];
  for (const [name, defaults] of [['clock', DEFAULT_CLOCK_CONFIG], ['sync', DEFAULT_SYNC_CONFIG]]) {
    const listed = fixture[name];
    const expected = {
      ...listed.shared,
      ...Object.fromEntries(Object.entries(listed.jsOnly).map(([k, v]) => [k, v.value])),
      ...Object.fromEntries(Object.entries(listed.different).map(([k, v]) => [k, v.js])),
    };
    for (const key of Object.keys(defaults)) {
      if (!(key in expected)) failures.push(`${name}.${key} = ${defaults[key]} is not listed in defaults.json`);
      else if (defaults[key] !== expected[key]) failures.push(`${name}.${key} = ${defaults[key]}, defaults.json says ${expected[key]}`);
    }
    for (const key of Object.keys(expected)) {
      if (!(key in defaults)) failures.push(`${name}.${key} is listed for the web client but it has no such default`);
    }
    for (const key of Object.keys(listed.swiftOnly)) {
      if (key in defaults) failures.push(`${name}.${key} is listed as Swift-only but the web client has it`);
    }
  }
  return failures;
}

export async function runCredits(base, fixture) {
  const { nextAddAt, mayQueueAnother } = await import(`${base}protocol.js`);
  const failures = [];
  for (const c of fixture.cases) {
    const actual = nextAddAt({ addCooldownSeconds: c.addCooldownSeconds }, c.member);
    if (actual !== c.expected) failures.push(`${c.name}: ${actual}, expected ${c.expected}`);
  }
  for (const c of fixture.queueRoom) {
    const may = mayQueueAnother({ maxQueuedPerMember: c.maxQueuedPerMember }, c.waiting, c.role);
    if (may !== c.may) failures.push(`queue room "${c.name}": ${may}, expected ${c.may}`);
  }
  return failures;
}

export async function runLoadRetry(base, fixture) {
  const { loadRetryAfter, loadRetryDelayMs } = await import(`${base}load-retry.js`);
  const { DEFAULT_SYNC_CONFIG } = await import(`${base}sync-config.js`);
  const failures = [];
  const config = { ...DEFAULT_SYNC_CONFIG, loadRetryBaseMs: fixture.baseMs, loadRetryCapMs: fixture.capMs };
  fixture.delaysMs.forEach((expected, index) => {
    const got = loadRetryDelayMs(index + 1, config);
    if (got !== expected) failures.push(`the wait after ${index + 1} failures: ${got}, expected ${expected}`);
  });
  for (const c of fixture.cases) {
    const got = loadRetryAfter(c.previous, c.epoch, c.now, config);
    if (JSON.stringify(normalised(got)) !== JSON.stringify(normalised(c.expected))) {
      failures.push(`load retry "${c.name}": ${JSON.stringify(got)}, expected ${JSON.stringify(c.expected)}`);
    }
  }
  return failures;
}

/** The probe probe.js synthesises for each case's rate: what `length`, `samples` and `energy` hold. */
export async function probeResults(base, fixture) {
  const { synthesizeProbe } = await import(`${base}probe.js`);
  return fixture.cases.map((c) => {
    const probe = synthesizeProbe(c.sampleRate);
    return {
      length: probe.length,
      samples: c.samples.map(([index]) => [index, probe[index]]),
      energy: probe.reduce((sum, x) => sum + x * x, 0),
    };
  });
}

export async function runProbe(base, fixture) {
  const results = await probeResults(base, fixture);
  const failures = [];
  fixture.cases.forEach((c, index) => {
    const got = results[index];
    if (got.length !== c.length) failures.push(`probe "${c.name}": length ${got.length} != ${c.length}`);
    c.samples.forEach(([at, value], i) => {
      if (!(Math.abs(got.samples[i][1] - value) <= 1e-6)) failures.push(`probe "${c.name}": sample ${at} ${got.samples[i][1]} != ${value}`);
    });
    if (!(Math.abs(got.energy - c.energy) <= 1e-3)) failures.push(`probe "${c.name}": energy ${got.energy} != ${c.energy}`);
  });
  return failures;
}

/** Each display name through text-limits.js: Validate.displayName's verdict and counts (display-names.json). */
export async function runDisplayNames(base, fixture) {
  const { checkDisplayName, characterCount } = await import(`${base}text-limits.js`);
  const { Limits } = await import(`${base}protocol.js`);
  const failures = [];
  if (Limits.maxDisplayName !== fixture.maxDisplayName) {
    failures.push(`Limits.maxDisplayName is ${Limits.maxDisplayName}, display-names.json says ${fixture.maxDisplayName}`);
  }
  if (Limits.maxBytesPerCharacter !== fixture.maxBytesPerCharacter) {
    failures.push(`Limits.maxBytesPerCharacter is ${Limits.maxBytesPerCharacter}, display-names.json says ${fixture.maxBytesPerCharacter}`);
  }
  for (const c of fixture.cases) {
    const name = (c.before ?? '') + c.text.repeat(c.times) + (c.after ?? '');
    const { value, characters, bytes, problem } = checkDisplayName(name);
    if (bytes !== c.bytes) failures.push(`display name "${c.name}": ${bytes} bytes, expected ${c.bytes}`);
    if ((problem === null) !== c.accepted) failures.push(`display name "${c.name}": problem ${problem}, expected accepted ${c.accepted}`);
    if (c.problem && problem !== c.problem) failures.push(`display name "${c.name}": problem ${problem}, expected ${c.problem}`);
    if (characters !== c.characters || characterCount(value) !== c.characters) {
      failures.push(`display name "${c.name}": ${characters} characters, expected ${c.characters}`);
    }
    if (value.length !== c.utf16Units) failures.push(`display name "${c.name}": ${value.length} UTF-16 units, expected ${c.utf16Units}`);
  }
  return failures;
}

/** Each pasted join code through protocol.js's normaliseJoinCode: JoinCodes.normalise's string (join-codes.json). */
export async function runJoinCodes(base, fixture) {
  const { normaliseJoinCode, Limits } = await import(`${base}protocol.js`);
  const failures = [];
  if (Limits.maxCodeLength !== fixture.maxCodeLength) {
    failures.push(`Limits.maxCodeLength is ${Limits.maxCodeLength}, join-codes.json says ${fixture.maxCodeLength}`);
  }
  for (const c of fixture.cases) {
    const code = normaliseJoinCode(c.input);
    if (code !== c.code) failures.push(`join code "${c.name}": ${JSON.stringify(code)}, expected ${JSON.stringify(c.code)}`);
  }
  return failures;
}

/** Each device id through protocol.js's isDeviceId: Validate.deviceId's verdict (device-ids.json). */
/** Invite links only this computer opens (invite-links.json): the terminal's rule, in the invite panel. */
export async function runInviteLinks(base, fixture) {
  const { linksOnlyHere } = await import(`${base}ui/invite.js`);
  const failures = [];
  for (const c of fixture.cases) {
    const onlyHere = linksOnlyHere(new URL(c.link).hostname);
    if (onlyHere !== c.onlyHere) failures.push(`invite link ${c.link}: only here ${onlyHere}, expected ${c.onlyHere}`);
  }
  return failures;
}

export async function runDeviceIds(base, fixture) {
  const { isDeviceId, DeviceLimits } = await import(`${base}protocol.js`);
  const failures = [];
  if (DeviceLimits.maxDeviceId !== fixture.maxDeviceId) {
    failures.push(`DeviceLimits.maxDeviceId is ${DeviceLimits.maxDeviceId}, device-ids.json says ${fixture.maxDeviceId}`);
  }
  for (const c of fixture.cases) {
    const accepted = isDeviceId(c.text.repeat(c.times));
    if (accepted !== c.accepted) failures.push(`device id "${c.name}": accepted ${accepted}, expected ${c.accepted}`);
  }
  return failures;
}

/** The settings' limits and steps (settings-choices.js), the step a value shows as, and typed counts (settings.json). */
export async function runSettings(base, fixture) {
  const { SettingsLimits, readSettingCount } = await import(`${base}protocol.js`);
  const { SKIP_THRESHOLDS, ADD_COOLDOWNS, closestChoice } = await import(`${base}settings-choices.js`);
  const choices = { skipThresholds: SKIP_THRESHOLDS, addCooldowns: ADD_COOLDOWNS };
  const failures = [];
  for (const [key, value] of Object.entries(fixture.limits)) {
    if (SettingsLimits[key] !== value) failures.push(`SettingsLimits.${key} is ${SettingsLimits[key]}, settings.json says ${value}`);
  }
  for (const [name, steps] of Object.entries(choices)) {
    if (JSON.stringify(steps) !== JSON.stringify(fixture[name])) {
      failures.push(`${name}: ${JSON.stringify(steps)}, settings.json says ${JSON.stringify(fixture[name])}`);
    }
  }
  for (const c of fixture.closest) {
    const index = closestChoice(choices[c.choices], c.value);
    if (index !== c.index) failures.push(`closest "${c.name}": ${index}, expected ${c.index}`);
  }
  for (const c of fixture.counts) {
    const read = readSettingCount(c.text, SettingsLimits[c.limit]);
    const value = 'error' in read ? null : read.value;
    if (value !== c.value) failures.push(`count "${c.name}": ${JSON.stringify(read)}, expected ${c.value}`);
  }
  return failures;
}

/** The code for a status without an error body (errorCodeForStatus; error-statuses.json). */
export async function runErrorStatuses(base, fixture) {
  const { errorCodeForStatus } = await import(`${base}protocol.js`);
  const failures = [];
  for (const c of fixture.cases) {
    const code = errorCodeForStatus(c.status);
    if (code !== c.code) failures.push(`status ${c.status}: ${code}, expected ${c.code}`);
  }
  return failures;
}

/** What a realtime close means for good (permanentCloseFailure; close-failures.json). */
export async function runCloseFailures(base, fixture) {
  const { JamError, permanentCloseFailure } = await import(`${base}protocol.js`);
  const failures = [];
  for (const c of fixture.cases) {
    const refusal = c.refusal ? new JamError(c.refusal.code, c.refusal.message) : null;
    const failure = permanentCloseFailure(c.code, c.reason, refusal);
    const got = failure ? { code: failure.code, message: failure.message } : null;
    if (JSON.stringify(got) !== JSON.stringify(c.failure)) failures.push(`${c.name}: ${JSON.stringify(got)}, expected ${JSON.stringify(c.failure)}`);
  }
  return failures;
}

/** ConnectionWatch's limits, isDead and shouldProbe (connection-watch.js) against the shared cases. */
export async function runConnectionWatch(base, fixture) {
  const { ConnectionWatch, isDead, shouldProbe } = await import(`${base}connection-watch.js`);
  const failures = [];
  for (const [key, value] of Object.entries(fixture.watch)) {
    if (ConnectionWatch[key] !== value) failures.push(`default ${key}: ${ConnectionWatch[key]}, expected ${value}`);
  }
  for (const c of fixture.cases) {
    const actual = isDead(c);
    if (actual !== c.dead) failures.push(`${c.name}: ${actual}, expected ${c.dead}`);
  }
  if (!fixture.probeCases || fixture.probeCases.length === 0) failures.push('no probe cases');
  for (const c of fixture.probeCases || []) {
    const actual = shouldProbe(c);
    if (actual !== c.probe) failures.push(`${c.name}: probe ${actual}, expected ${c.probe}`);
  }
  return failures;
}
