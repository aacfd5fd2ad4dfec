"""The web client's modules against the shared client-parity fixtures
(Tests/Fixtures/ClientParity), in the Chromium the page runs in: the same cases
JamClient's ClientParityFixtureTests pass in Swift (display-names.json: the server's
Validate, in JamProtocolTests' ValidationTests; join-codes.json and device-ids.json:
JoinCodes and Validate.deviceId, in JamCoreTests' JoinCodeAndDeviceIdParityTests), so the hand port cannot drift
without a test failing. Also what drifted before: a vote's reason, and the first start
that must wait for a full burst of clock pings.
"""

import json
import re
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

from jam_page import add_track, click, create_session, join_by_link, queue_item, queue_score, wait_for, el

FIXTURES = Path(__file__).resolve().parents[1] / "Fixtures" / "ClientParity"

# The runner's functions, inlined into the script (the page's Content-Security-Policy
# refuses a module from a blob: URL, and the server serves only the web client); they
# import the modules under test from the page's /js/ folder.
RUN = re.sub(r"^export ", "", (Path(__file__).resolve().parent / "parity_runner.mjs").read_text(), flags=re.M) + """
const [name, fixture, done] = arguments;
({ runTimeline, runCorrection, runMirror, runClock, runDefaults, runCredits, runProbe, runDisplayNames,
  runJoinCodes, runDeviceIds, runInviteLinks, runConnectionWatch, runSettings, runErrorStatuses, runCloseFailures, runLoadRetry })[name](location.origin + '/js/', fixture)
  .then((failures) => done({ failures }), (error) => done({ error: String(error && error.stack || error) }));
"""


@pytest.fixture(scope="module")
def page(base_url, tmp_path_factory):
    from conftest import Browsers

    pool = Browsers(tmp_path_factory.mktemp("parity"))
    driver = pool.open("parity")
    driver.get(base_url + "/")
    yield driver
    pool.close_all()


@pytest.mark.parametrize("name,runner", [
    ("timeline", "runTimeline"),
    ("correction", "runCorrection"),
    ("mirror", "runMirror"),
    ("clock", "runClock"),
    ("defaults", "runDefaults"),
    ("credits", "runCredits"),
    ("probe", "runProbe"),
    ("display-names", "runDisplayNames"),
    ("join-codes", "runJoinCodes"),
    ("device-ids", "runDeviceIds"),
    ("invite-links", "runInviteLinks"),
    ("connection-watch", "runConnectionWatch"),
    ("settings", "runSettings"),
    ("error-statuses", "runErrorStatuses"),
    ("close-failures", "runCloseFailures"),
    ("load-retry", "runLoadRetry"),
])
def test_web_client_modules_pass_the_shared_fixture(page, name, runner):
    fixture = json.loads((FIXTURES / f"{name}.json").read_text())
    answer = page.execute_async_script(RUN, runner, fixture)
    assert "error" not in answer, answer.get("error")
    assert answer["failures"] == [], "\n".join(answer["failures"])


# A session view with one song playing from `positionMs` at server time `anchorMs`, for the
# engine scripts below (prepended to each).
PLAYING_VIEW = """
function playingView(positionMs, anchorMs) {
  const track = { id: 'song-1', name: 'Song', artist: 'Band', durationMs: 600000, source: 'library' };
  const member = { userId: 'u', displayName: 'U', role: 'host', connected: true };
  return {
    session: { id: 's', joinCode: 'ABC', name: 'n', hostId: 'u', hostDisplayName: 'U', createdAt: 0,
      settings: { locked: false, skipThreshold: 0.5, maxMembers: 50, maxQueuedPerMember: 10, allowDuplicates: false, ordering: 'votes', fallback: false } },
    members: [member], queue: [], myVotes: {}, history: [], skipRequests: { count: 0, needed: 1, mine: false },
    nowPlaying: { item: { id: 'item-1', track, addedBy: member, addedAt: 0, score: 0, reason: 'now playing' },
      epoch: 1, state: 'playing', positionMs, anchorMs },
  };
}
"""


# A sync engine on a fake player and a clock fed by hand: how many samples it takes
# before the first start (JamClient's Participant waits for a full burst, at most
# firstStartWaitMs).
FIRST_START = PLAYING_VIEW + """
const [samplesFirst, waitMs, done] = arguments;
(async () => {
  const { ClockSync } = await import('/js/clock.js');
  const { SyncEngine } = await import('/js/sync-engine.js');
  let now = 1_000_000;
  const clock = new ClockSync({ now: () => now });
  const feed = (count) => {
    for (let i = 0; i < count; i += 1) {
      now += 25;
      const ping = clock.makePing();
      clock.record({ clientSendTime: ping.clientSendTime, serverReceiveTime: ping.clientSendTime + 20 + 5000,
        serverSendTime: ping.clientSendTime + 20.2 + 5000 }, ping.clientSendTime + 40.2);
    }
  };
  const starts = [];
  const player = {
    loadedTrackId: null, isPlaying: false, cueMarginMs: 0,
    async load(track) { this.loadedTrackId = track.id; },
    preload() {}, pause() { this.isPlaying = false; }, async seek() {}, setRate() {},
    play(position, atLocal) { starts.push({ position, atLocal, samples: clock.acceptedSamples, at: now }); this.isPlaying = true; },
    position() { return null; },
  };
  const engine = new SyncEngine({ player, clock, post: () => true, now: () => now });
  const view = playingView(0, now + 5000 - 60000);
  const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
  feed(samplesFirst);
  engine.setEnabled(true);
  engine.handle({ type: 'stateSync', data: view, epoch: 1, seq: 1, timestamp: 0 });
  await settle();
  const beforeBurst = { starts: starts.length, phase: engine.status.phase };
  if (waitMs > 0) now += waitMs; else feed(clock.config.firstBurstSize - samplesFirst);
  engine.correct();
  await settle();
  done({ beforeBurst, starts, firstBurstSize: clock.config.firstBurstSize });
})().catch((error) => done({ error: String(error && error.stack || error) }));
"""


def test_a_joiner_starts_only_after_a_full_burst_of_clock_samples(page):
    answer = page.execute_async_script(FIRST_START, 1, 0)
    assert "error" not in answer, answer.get("error")
    assert answer["firstBurstSize"] == 48
    # One pong is an estimate, but a rough one: no start yet.
    assert answer["beforeBurst"] == {"starts": 0, "phase": "waitingForClock"}
    assert len(answer["starts"]) == 1 and answer["starts"][0]["samples"] == 48


def test_a_joiner_whose_burst_does_not_come_starts_after_the_wait(page):
    answer = page.execute_async_script(FIRST_START, 3, 2000)
    assert "error" not in answer, answer.get("error")
    assert answer["beforeBurst"] == {"starts": 0, "phase": "waitingForClock"}
    assert len(answer["starts"]) == 1 and answer["starts"][0]["samples"] == 3


# A start that never came (the player gave up cueing, or its audio stopped): the engine
# starts the course again once the player stays silent past the settling time and
# stalledStartRetryMs, as JamClient's SyncEngine does (SyncEngineTests.silentStartIsRetried).
SILENT_START = PLAYING_VIEW + """
const [done] = arguments;
(async () => {
  const { ClockSync } = await import('/js/clock.js');
  const { SyncEngine } = await import('/js/sync-engine.js');
  let now = 1_000_000;
  const clock = new ClockSync({ now: () => now });
  for (let i = 0; i < 48; i += 1) {
    now += 25;
    const ping = clock.makePing();
    clock.record({ clientSendTime: ping.clientSendTime, serverReceiveTime: ping.clientSendTime + 20 + 5000,
      serverSendTime: ping.clientSendTime + 20.2 + 5000 }, ping.clientSendTime + 40.2);
  }
  const starts = [];
  let course = null;
  const player = {
    loadedTrackId: null, isPlaying: false, cueMarginMs: 0,
    async load(track) { this.loadedTrackId = track.id; },
    preload() {}, pause() { this.isPlaying = false; }, async seek() {}, setRate() {}, learnStartError() {},
    // The first start never comes; the second does.
    play(position, atLocal) { starts.push(now); if (starts.length > 1) { this.isPlaying = true; course = { position, atLocal }; } },
    position(t) { return course ? course.position + (t - course.atLocal) : null; },
  };
  const engine = new SyncEngine({ player, clock, post: () => true, now: () => now });
  const view = playingView(30000, now + 5000 - 10000);
  const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
  engine.setEnabled(true);
  engine.handle({ type: 'stateSync', data: view, epoch: 1, seq: 1, timestamp: 0 });
  await settle();
  const started = now;
  const startsBy = {};
  for (let step = 1; step <= 40; step += 1) {
    now += 250;
    engine.correct();
    await settle();
    startsBy[step * 250] = starts.length;
  }
  done({ first: starts.length ? starts[0] - started : null, startsBy, retry: engine.config.stalledStartRetryMs,
    settle: engine.config.settleAfterStartMs });
})().catch((error) => done({ error: String(error && error.stack || error) }));
"""


def test_a_start_that_never_came_is_made_again(page):
    answer = page.execute_async_script(SILENT_START)
    assert "error" not in answer, answer.get("error")
    assert answer["first"] == 0
    by = {int(k): v for k, v in answer["startsBy"].items()}
    grace = answer["settle"] + answer["retry"]
    # Left alone while it may still be settling, started again once it is past that.
    assert all(count == 1 for at, count in by.items() if at < grace), by
    assert by[min(at for at in by if at >= grace)] == 2, by
    # Playing then: nothing more is started.
    assert by[10000] == 2, by


# A skip while the current song still downloads: the engine loads the new song at once,
# not after that download, as JamClient's SyncEngine does
# (ParticipantEventTests.aSkipCancelsTheLoadOfTheSongItReplaces). The player is AudioPlayer's
# contract: a load of another track ends the wait of the one before, which throws.
SKIP_WHILE_LOADING = PLAYING_VIEW + """
const [done] = arguments;
(async () => {
  const { ClockSync } = await import('/js/clock.js');
  const { SyncEngine } = await import('/js/sync-engine.js');
  const now = 1_000_000;
  const clock = new ClockSync({ now: () => now });
  const loads = [];
  let waiting = null;
  const player = {
    loadedTrackId: null, isPlaying: false, cueMarginMs: 0,
    load(track) {
      loads.push(track.id);
      if (waiting) waiting(new Error('replaced by another load'));
      waiting = null;
      // song-1's download never ends by itself.
      if (track.id === 'song-1') return new Promise((resolve, reject) => { waiting = reject; });
      this.loadedTrackId = track.id;
      return Promise.resolve();
    },
    preload() {}, pause() {}, async seek() {}, setRate() {}, learnStartError() {}, play() {},
    position() { return null; },
  };
  const posted = [];
  const engine = new SyncEngine({ player, clock, post: (type, data) => { posted.push({ type, data }); return true; }, now: () => now });
  const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
  engine.setEnabled(true);
  const view = playingView(0, 0);
  engine.handle({ type: 'stateSync', data: view, epoch: 1, seq: 1, timestamp: 0 });
  await settle();
  const item = { ...view.nowPlaying.item, id: 'item-2', track: { ...view.nowPlaying.item.track, id: 'song-2', name: 'Song 2' } };
  engine.handle({ type: 'playPrepare', data: { item, epoch: 2, startAt: 5000, previous: null }, epoch: 2, seq: 2, timestamp: 0 });
  for (let i = 0; i < 5; i += 1) await settle();
  done({ loads, loaded: player.loadedTrackId, readies: posted.filter((p) => p.type === 'ready').map((p) => p.data.epoch),
    loadFailures: engine.status.loadFailures });
})().catch((error) => done({ error: String(error && error.stack || error) }));
"""


def test_a_skip_while_the_current_song_loads_loads_the_new_song_at_once(page):
    answer = page.execute_async_script(SKIP_WHILE_LOADING)
    assert "error" not in answer, answer.get("error")
    assert answer == {"loads": ["song-1", "song-2"], "loaded": "song-2", "readies": [2], "loadFailures": 0}


# The web player told to be silent while its song still loads (the session stopped, or moved
# on to a song this device cannot play, or the device was turned off) gives the download up:
# the element lets go of it, and the load ends as replaced.
PAUSE_WHILE_LOADING = """
const [done] = arguments;
(async () => {
  const { AudioPlayer } = await import('/js/player.js');
  const host = document.createElement('div');
  document.body.appendChild(host);
  const player = new AudioPlayer(host);
  const track = { id: 'song-that-loads', name: 'Loading', artist: 'Band', durationMs: 600000, source: 'library' };
  const loading = player.load(track);
  player.pause();
  let outcome;
  try {
    await loading;
    outcome = 'loaded';
  } catch (error) {
    outcome = error.message;
  }
  const element = player.slot.element;
  done({ outcome, holdsSource: element.hasAttribute('src'), loadedTrackId: player.loadedTrackId });
  player.unload();
  host.remove();
})().catch((error) => done({ error: String(error && error.stack || error) }));
"""


def test_the_web_player_paused_while_its_song_loads_gives_the_download_up(page):
    answer = page.execute_async_script(PAUSE_WHILE_LOADING)
    assert "error" not in answer, answer.get("error")
    assert answer == {"outcome": '"Loading": replaced before it loaded', "holdsSource": False, "loadedTrackId": None}

# A second skip while the first one's song still loads: the song before them both still
# sounds (it plays until the next start), so the newest song loads into the silent element and
# the sounding one plays on; the load of the song skipped past ends as replaced.
DOUBLE_SKIP_WHILE_LOADING = """
const [done] = arguments;
(async () => {
  const { AudioPool } = await import('/js/audio-pool.js');
  const host = document.createElement('div');
  document.body.appendChild(host);
  const pool = new AudioPool(host);
  const track = (id) => ({ id, name: id, artist: 'Band', durationMs: 600000, source: 'library' });
  // Song a plays: its element holds a source and is not paused.
  const a = pool.slot;
  a.trackId = 'song-a';
  a.loaded = true;
  a.element.src = '/audio/song-a';
  Object.defineProperty(a.element, 'paused', { configurable: true, get: () => false });
  pool.switchTo(track('song-b'));
  let skippedPast = 'pending';
  pool.slot.ready.then(() => { skippedPast = 'loaded'; }, (error) => { skippedPast = error.message; });
  pool.switchTo(track('song-c'));
  await new Promise((resolve) => setTimeout(resolve, 0));
  done({ retiring: pool.retiring === a, stillSounding: a.element.hasAttribute('src') && a.trackId, loading: pool.slot.trackId,
    loadingElsewhere: pool.slot !== a, skippedPast });
  delete a.element.paused;
  pool.releaseAll();
  host.remove();
})().catch((error) => done({ error: String(error && error.stack || error) }));
"""


def test_a_second_skip_while_a_song_loads_lets_the_sounding_song_play_on(page):
    answer = page.execute_async_script(DOUBLE_SKIP_WHILE_LOADING)
    assert "error" not in answer, answer.get("error")
    assert answer == {"retiring": True, "stillSounding": "song-a", "loading": "song-c", "loadingElsewhere": True,
                      "skippedPast": '"song-b": replaced before it loaded'}


# A device that said ready says it again on its next socket: the server forgets a member's
# ready when its socket goes, and a ready posted while the socket was down is lost
# (ParticipantEventTests.readyIsSaidAgainOnTheNextSocket in JamClient). The store tells its
# listeners of each reconnect, not of the first connection; the engine says ready again
# only for the item it said it for, while that item still prepares.
READY_AGAIN = PLAYING_VIEW + """
const [done] = arguments;
(async () => {
  const { ClockSync } = await import('/js/clock.js');
  const { SyncEngine } = await import('/js/sync-engine.js');
  const { SessionStore } = await import('/js/store.js');
  const now = 1_000_000;
  const clock = new ClockSync({ now: () => now });
  const player = {
    loadedTrackId: null, isPlaying: false, cueMarginMs: 0,
    async load(track) { this.loadedTrackId = track.id; },
    preload() {}, pause() {}, async seek() {}, setRate() {}, learnStartError() {}, play() {},
    position() { return null; },
  };
  const readies = [];
  const engine = new SyncEngine({ player, clock, now: () => now,
    post: (type, data) => { if (type === 'ready') readies.push(data.epoch); return true; } });
  const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
  const store = new SessionStore({ sessionId: 's', token: () => 't', me: 'u', clock: {} });
  let reconnects = 0;
  store.onReconnected(() => { reconnects += 1; engine.reconnected(); });
  const phase = (name) => store.connection.options.onPhase({ phase: name });
  const answer = {};
  phase('connecting');
  phase('connected');
  answer.firstConnection = reconnects;
  engine.setEnabled(true);
  const view = playingView(0, 60000);
  view.nowPlaying.state = 'preparing';
  view.nowPlaying.epoch = 2;
  engine.handle({ type: 'stateSync', data: view, epoch: 2, seq: 1, timestamp: 0 });
  await settle();
  answer.said = [...readies];
  phase('retrying');
  phase('connecting');
  phase('connected');
  answer.reconnects = reconnects;
  answer.afterReconnect = [...readies];
  engine.handle({ type: 'playCommit', data: { itemId: 'item-1', epoch: 2, startAt: 60000, positionMs: 0 }, epoch: 2, seq: 2, timestamp: 0 });
  await settle();
  phase('retrying');
  phase('connected');
  answer.whilePlaying = [...readies];
  done(answer);
})().catch((error) => done({ error: String(error && error.stack || error) }));
"""


def test_a_device_that_said_ready_says_it_again_on_its_next_socket(page):
    answer = page.execute_async_script(READY_AGAIN)
    assert "error" not in answer, answer.get("error")
    assert answer == {"firstConnection": 0, "said": [2], "reconnects": 1, "afterReconnect": [2, 2], "whilePlaying": [2, 2]}


# A device joining 8 minutes into a song while the server's clock runs 100 ppm faster than
# its own: the engine starts it where the server's clock says the song is now, not by counting
# the device's ms since the anchor (48 ms short here), as JamClient's SyncEngine does
# (SyncEngineTests.midSongJoinOnADriftingClock).
DRIFTING_JOIN = PLAYING_VIEW + """
const [done] = arguments;
(async () => {
  const { ClockSync } = await import('/js/clock.js');
  const { SyncEngine } = await import('/js/sync-engine.js');
  let now = 1_000_000;
  const server = (local) => local + 5000 + (local - 1_000_000) * 100e-6;
  const clock = new ClockSync({ now: () => now });
  for (let burst = 0; burst < 8; burst += 1) {
    for (let i = 0; i < 24; i += 1) {
      now += 25;
      const ping = clock.makePing();
      const t1 = server(ping.clientSendTime + 10);
      clock.record({ clientSendTime: ping.clientSendTime, serverReceiveTime: t1, serverSendTime: t1 }, ping.clientSendTime + 20);
    }
    now += 15_000;
  }
  let course = null;
  const player = {
    loadedTrackId: null, isPlaying: false, cueMarginMs: 0,
    async load(track) { this.loadedTrackId = track.id; },
    preload() {}, pause() { this.isPlaying = false; }, async seek() {}, setRate() {}, learnStartError() {},
    play(position, atLocal) { this.isPlaying = true; course = { position, atLocal }; },
    // As an audio element does: its position moves on with the device's own clock.
    position(t) { return course ? course.position + (t - course.atLocal) : null; },
  };
  const engine = new SyncEngine({ player, clock, post: () => true, now: () => now });
  const anchor = Math.round(server(now) - 8 * 60_000);
  engine.setEnabled(true);
  engine.handle({ type: 'stateSync', data: playingView(0, anchor), epoch: 1, seq: 1, timestamp: 0 });
  await new Promise((resolve) => setTimeout(resolve, 0));
  now += 1000;
  done({ fitted: clock.driftFitted, errorMs: course ? player.position(now) - (server(now) - anchor) : null });
})().catch((error) => done({ error: String(error && error.stack || error) }));
"""


def test_a_device_joining_mid_song_counts_the_time_since_its_start_on_the_servers_clock(page):
    answer = page.execute_async_script(DRIFTING_JOIN)
    assert "error" not in answer, answer.get("error")
    assert answer["fitted"], answer
    assert answer["errorMs"] is not None and abs(answer["errorMs"]) <= 2, answer


# The optimistic layer: a vote on its way shows its score at once, and in votes
# ordering the reason that goes with it (QueueItem.votesReason in JamClient's store).
OPTIMISTIC_VOTE = """
const [ordering, done] = arguments;
(async () => {
  const { SessionStore } = await import('/js/store.js');
  const member = { userId: 'u', displayName: 'U', role: 'host', connected: true };
  const track = { id: 'song-2', name: 'Song 2', artist: 'Band', durationMs: 60000, source: 'library' };
  const view = {
    session: { id: 's', joinCode: 'ABC', name: 'n', hostId: 'u', hostDisplayName: 'U', createdAt: 0,
      settings: { locked: false, skipThreshold: 0.5, maxMembers: 50, maxQueuedPerMember: 10, allowDuplicates: false, ordering, fallback: false } },
    members: [member], myVotes: {}, history: [], skipRequests: { count: 0, needed: 1, mine: false }, nowPlaying: null,
    queue: [{ id: 'item-2', track, addedBy: member, addedAt: 0, score: 0, reason: ordering === 'votes' ? 'no votes' : "U's turn" }],
  };
  const store = new SessionStore({ sessionId: 's', token: () => 't', me: 'u', clock: {} });
  store.mirror.apply({ type: 'stateSync', data: view, epoch: 1, seq: 1, timestamp: 0 });
  store.connection.send = () => new Promise(() => {}); // the vote stays in flight
  store.vote('item-2', 1);
  const entry = store.snapshot().queue[0];
  done({ score: entry.item.score, reason: entry.item.reason, inFlight: entry.voteInFlight });
})().catch((error) => done({ error: String(error && error.stack || error) }));
"""


@pytest.mark.parametrize("ordering,reason", [("votes", "1 vote"), ("fair", "U's turn")])
def test_a_vote_in_flight_shows_the_reason_that_goes_with_its_score(page, ordering, reason):
    answer = page.execute_async_script(OPTIMISTIC_VOTE, ordering)
    assert "error" not in answer, answer.get("error")
    assert answer == {"score": 1, "reason": reason, "inFlight": True}


# The same song added twice in a row (duplicates allowed): once the first add is answered,
# the second add's stand-in must not take the first add's item for its own, or one entry
# shows for two adds (SessionStore.add in JamClient, PendingAddTests.theSameSongAddedTwiceShowsTwice).
DOUBLE_ADD = """
const [done] = arguments;
(async () => {
  const { SessionStore } = await import('/js/store.js');
  const member = { userId: 'u', displayName: 'U', role: 'host', connected: true };
  const track = { id: 'song-1', name: 'Song 1', artist: 'Band', durationMs: 60000, source: 'library' };
  const view = {
    session: { id: 's', joinCode: 'ABC', name: 'n', hostId: 'u', hostDisplayName: 'U', createdAt: 0,
      settings: { locked: false, skipThreshold: 0.5, maxMembers: 50, maxQueuedPerMember: 10, allowDuplicates: true, ordering: 'votes', fallback: false } },
    members: [member], myVotes: {}, history: [], skipRequests: { count: 0, needed: 1, mine: false }, nowPlaying: null, queue: [],
  };
  const store = new SessionStore({ sessionId: 's', token: () => 't', me: 'u', clock: {} });
  store.mirror.apply({ type: 'stateSync', data: view, epoch: 1, seq: 1, timestamp: 0 });
  const answers = [];
  store.connection.send = () => new Promise((resolve) => { answers.push(resolve); });
  const first = store.add(track);
  store.add(track);
  const item = { id: 'item-1', track, addedBy: member, addedAt: 1, score: 0, reason: 'no votes' };
  store.mirror.apply({ type: 'queueItemAdded', data: { item, index: 0 }, epoch: 1, seq: 2, timestamp: 0 });
  answers[0]({ id: 'c1', itemId: 'item-1' });
  await first;
  done({ pending: store.snapshot().queue.map((entry) => entry.pending) });
})().catch((error) => done({ error: String(error && error.stack || error) }));
"""


def test_the_same_song_added_twice_shows_twice_while_the_second_add_is_on_its_way(page):
    answer = page.execute_async_script(DOUBLE_ADD)
    assert "error" not in answer, answer.get("error")
    assert answer == {"pending": [False, True]}

# Two host skips before the first is answered: the command names no item, so a second
# one would skip the next song too (SessionStore.skip in JamClient).
DOUBLE_SKIP = """
const [done] = arguments;
(async () => {
  const { SessionStore } = await import('/js/store.js');
  const store = new SessionStore({ sessionId: 's', token: () => 't', me: 'u', clock: {} });
  const sent = [];
  let answer;
  store.connection.send = (command) => { sent.push(command); return new Promise((resolve) => { answer = resolve; }); };
  const first = store.skip();
  store.skip();
  const whileFirst = sent.length;
  answer({});
  await first;
  store.skip();
  done({ whileFirst, afterAnswer: sent.length });
})().catch((error) => done({ error: String(error && error.stack || error) }));
"""


def test_a_second_host_skip_before_the_first_is_answered_sends_nothing(page):
    answer = page.execute_async_script(DOUBLE_SKIP)
    assert "error" not in answer, answer.get("error")
    assert answer == {"whileFirst": 1, "afterAnswer": 2}


def test_a_vote_that_keeps_the_order_shows_its_new_reason_to_everybody(base_url, browsers):
    alice = browsers.open("alice")
    bob = browsers.open("bob")
    code = create_session(alice, base_url, "Alice")
    join_by_link(bob, base_url, code, "Bob")
    wait_for(alice, lambda d: "Bob" in el(d, "members-list").text, message="Alice never saw Bob join")
    add_track(alice, 0)  # plays at once
    wait_for(alice, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#search-results li.result")) > 1)
    second = add_track(alice, 1)
    wait_for(bob, lambda d: queue_item(d, second) is not None, message="Bob never saw the second song queued")

    # A single queued item cannot move: the server sends votesUpdate and no queueUpdate.
    click(bob, queue_item(bob, second).find_element(By.CSS_SELECTOR, "button.vote-up"))
    wait_for(alice, lambda d: queue_score(d, second) == 1, message="Alice never saw Bob's vote")

    def meta(driver):
        return queue_item(driver, second).find_element(By.CSS_SELECTOR, ".item-meta").text

    wait_for(alice, lambda d: "1 vote" in meta(d), message=f"Alice sees the new score beside {meta(alice)!r}")
    assert "no votes" not in meta(alice)
    wait_for(bob, lambda d: "1 vote" in meta(d), message=f"Bob sees {meta(bob)!r}")


# A newer server's event type (UnknownEventTests in JamClientTests does the same with the
# Swift client): one that took a seq the mirror lacks asks for the whole state, a passing
# one is dropped, and a resume in flight does not hold the request back.
UNKNOWN_EVENT = """
const done = arguments[0];
(async () => {
  const { SessionStore } = await import('/js/store.js');
  const host = { userId: 'host', displayName: 'Host', role: 'host', connected: true };
  const view = (members) => ({
    session: { id: 's', joinCode: 'ABC', name: 'n', hostId: 'host', hostDisplayName: 'Host', createdAt: 0,
      settings: { locked: false, skipThreshold: 0.5, maxMembers: 50, maxQueuedPerMember: 10, allowDuplicates: false, ordering: 'votes', fallback: false } },
    members, myVotes: {}, history: [], skipRequests: { count: 0, needed: 1, mine: false }, nowPlaying: null, queue: [],
  });
  const member = (id) => ({ userId: id, displayName: id, role: 'member', connected: true });
  const store = new SessionStore({ sessionId: 's', token: () => 't', me: 'host', clock: {} });
  const posts = [];
  store.connection.post = (type, data) => { posts.push([type, data]); return true; };
  const frame = (type, data, seq) => store.connection.received(JSON.stringify({ type, data, epoch: 0, seq, timestamp: 0 }), 0);
  frame('stateSync', view([host]), 5);
  frame('somethingNew', {}, 5);
  frame('memberJoined', member('gil'), 6);
  frame('somethingNewer', { x: 1 }, 7);
  frame('memberLeft', { userId: 'gil', hostId: 'host' }, 8);
  const afterUnknown = posts.slice();
  frame('stateSync', view([host, member('fay')]), 8);
  frame('memberJoined', member('hal'), 9);
  const members = store.mirror.view.members.map((m) => m.userId);
  const seq = store.mirror.seq;
  frame('memberLeft', { userId: 'hal', hostId: 'host' }, 11);
  frame('somethingNewer', {}, 10);
  done({ afterUnknown, members, seq, posts });
})().catch((error) => done({ error: String(error && error.stack || error) }));
"""


def test_an_unknown_event_that_took_a_seq_brings_the_whole_state(page):
    answer = page.execute_async_script(UNKNOWN_EVENT)
    assert "error" not in answer, answer.get("error")
    # Not hello {lastSeq: 6}: the server would replay the same frame.
    assert answer["afterUnknown"] == [["hello", {}]]
    assert answer["members"] == ["host", "fay", "hal"] and answer["seq"] == 9
    assert answer["posts"] == [["hello", {}], ["hello", {"lastSeq": 9}], ["hello", {}]]


# After a reconnect the clock starts again from one rough sample; the engine leaves a playing
# player alone until the burst is in, as JamClient's SyncEngine does
# (SyncEngineTests.aResetClockSteersNothingUntilItsBurstIsIn).
RESET_CLOCK = PLAYING_VIEW + """
const [done] = arguments;
(async () => {
  const { ClockSync } = await import('/js/clock.js');
  const { SyncEngine } = await import('/js/sync-engine.js');
  let now = 1_000_000;
  const clock = new ClockSync({ now: () => now });
  // Pongs over a path of upMs out and downMs back; the server's clock is 5000 ms ahead.
  const feed = (count, upMs, downMs) => {
    for (let i = 0; i < count; i += 1) {
      now += 25;
      const ping = clock.makePing();
      clock.record({ clientSendTime: ping.clientSendTime, serverReceiveTime: ping.clientSendTime + upMs + 5000,
        serverSendTime: ping.clientSendTime + upMs + 5000 }, ping.clientSendTime + upMs + downMs);
    }
  };
  feed(48, 20, 20);
  let course = null;
  const seeks = [];
  const rates = [];
  const player = {
    loadedTrackId: null, isPlaying: false, cueMarginMs: 0,
    async load(track) { this.loadedTrackId = track.id; },
    preload() {}, pause() { this.isPlaying = false; }, learnStartError() {},
    async seek(position) { seeks.push(position); course = { position, atLocal: now }; },
    setRate(rate) { rates.push(rate); },
    play(position, atLocal) { this.isPlaying = true; course = { position, atLocal }; },
    position(t) { return course ? course.position + (t - course.atLocal) : null; },
  };
  const engine = new SyncEngine({ player, clock, post: () => true, now: () => now });
  const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
  const steps = async (count) => {
    for (let step = 0; step < count; step += 1) {
      now += 250;
      engine.correct();
      await settle();
    }
  };
  engine.setEnabled(true);
  engine.handle({ type: 'stateSync', data: playingView(30000, now + 5000 - 10000), epoch: 1, seq: 1, timestamp: 0 });
  await settle();
  await steps(12);
  const before = { measurements: engine.status.measurements, seeks: seeks.length, rates: rates.length };
  clock.reset();
  // One pong, 70 ms out and 10 back: the estimate is 30 ms off.
  feed(1, 70, 10);
  const roughOffset = clock.estimate ? clock.estimate.offsetAtReference - 5000 : null;
  await steps(6);
  const afterReset = { measurements: engine.status.measurements, seeks: seeks.length, rates: rates.length };
  feed(48, 20, 20);
  await steps(4);
  done({ before, roughOffset, afterReset, afterBurst: engine.status.measurements });
})().catch((error) => done({ error: String(error && error.stack || error) }));
"""


def test_a_reset_clock_steers_a_playing_device_only_once_its_burst_is_in(page):
    answer = page.execute_async_script(RESET_CLOCK)
    assert "error" not in answer, answer.get("error")
    before = answer["before"]
    assert before["measurements"] > 0, answer
    assert abs(answer["roughOffset"] - 30) < 1, answer
    # Neither measured nor corrected against the one rough sample.
    assert answer["afterReset"] == before, answer
    assert answer["afterBurst"] > before["measurements"], answer


# The page's REST calls against a stand-in fetch: one that never answers, and a Wi-Fi sign-in
# page answering in the server's place.
API_FAILURES = """
const [done] = arguments;
(async () => {
  const { Api } = await import('/js/api.js');
  const realFetch = window.fetch;
  const outcome = async (fakeFetch) => {
    window.fetch = fakeFetch;
    try {
      const answer = await new Api(null, { timeoutMs: 300 }).guest('Ann');
      return { answer };
    } catch (error) {
      return { code: error.code, message: error.message };
    } finally {
      window.fetch = realFetch;
    }
  };
  // As a real fetch does, the silent one gives up only when its signal fires.
  const silent = await outcome((path, init) => new Promise((resolve, reject) => {
    init.signal.addEventListener('abort', () => reject(init.signal.reason));
  }));
  const portal = await outcome(async () => new Response('<html><title>Sign in to Wi-Fi</title></html>',
    { status: 200, headers: { 'Content-Type': 'text/html' } }));
  done({ silent, portal });
})().catch((error) => done({ error: String(error && error.stack || error) }));
"""


def test_a_call_the_server_never_answers_or_a_sign_in_page_answers_fails_with_words(page):
    answer = page.execute_async_script(API_FAILURES)
    assert "error" not in answer, answer.get("error")
    assert answer["silent"]["code"] == "unavailable", answer
    assert "the server did not answer within" in answer["silent"]["message"], answer
    assert answer["portal"]["code"] == "unavailable", answer
    assert "did not come from OpenJam" in answer["portal"]["message"], answer
