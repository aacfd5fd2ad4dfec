"""The page's optimistic layer, proved by holding the server's answers back.

Bob's browser reaches the server through a proxy (the `held` fixture) that can hold
his realtime socket: what his page shows while the server's answer is held can only
come from the page itself. Each test then lets the answer through and checks the page
settles on the server's state, or, for a command the server refuses, that the change
is rolled back and the server's reason is shown. Alice talks to the server directly
and makes the server's state change while Bob's socket is held.
"""

import json
import re
import time

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from hold_proxy import DOWN, UP
from jam_page import (
    add_track, click, create_session, el, join_by_link, now_playing_title, queue_item, queue_titles, search_results,
    severe_logs, visible, wait_connected, wait_for,
)

# Long enough for a slow machine to render, far shorter than the page's watchdog
# (6 s without an answer), so a held socket is never mistaken for a dead one.
AT_ONCE = 2


def two_people(base_url, held, browsers):
    """Alice hosts (direct to the server); Bob joins through the holding proxy."""
    alice = browsers.open("alice")
    bob = browsers.open("bob")
    code = create_session(alice, base_url, "Alice")
    join_by_link(bob, held.base, code, "Bob")
    wait_for(alice, lambda d: "Bob" in el(d, "members-list").text, message="Alice never saw Bob join")
    return alice, bob


def entry(driver, title):
    """(score, in flight, pending, up vote pressed) of the queued song, or None."""
    item = queue_item(driver, title)
    if item is None:
        return None
    classes = item.get_attribute("class").split()
    pressed = item.find_element(By.CSS_SELECTOR, "button.vote-up").get_attribute("aria-pressed") == "true"
    return int(item.get_attribute("data-score")), "in-flight" in classes, "pending" in classes, pressed


def in_flight(driver):
    return driver.find_elements(By.CSS_SELECTOR, "#queue-list li.queue-item.in-flight")


def error_notices(driver):
    return [n.text for n in driver.find_elements(By.CSS_SELECTOR, "#notices .notice-error")]


def notice_with(driver, text):
    return wait_for(driver, lambda d: next((n for n in error_notices(d) if text in n), None),
                    message=f"no notice saying {text!r}; notices: {error_notices(driver)}")


def vote_up(driver, title):
    click(driver, queue_item(driver, title).find_element(By.CSS_SELECTOR, "button.vote-up"))


def member_row(driver, name):
    return next(m for m in driver.find_elements(By.CSS_SELECTOR, "#members-list li.member") if name in m.text)


def patch_settings(driver, settings):
    """Changes the session's settings over REST as the page's signed-in person (the host)."""
    return driver.execute_async_script("""
        const [settings, done] = arguments;
        const session = JSON.parse(localStorage.getItem('openjam.session'));
        const token = JSON.parse(localStorage.getItem('openjam.identity')).token;
        fetch('/api/v1/sessions/' + session.id, {method: 'PATCH',
          headers: {'Content-Type': 'application/json', Authorization: 'Bearer ' + token},
          body: JSON.stringify({settings})}).then(r => done(r.status));""", settings)


RECORD = """
const [key, body] = arguments;
const read = new Function(body);
const seen = [];
window['__openjamRecord_' + key] = seen;
const check = () => {
  const value = JSON.stringify(read());
  if (seen[seen.length - 1] !== value) seen.push(value);
};
new MutationObserver(check).observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});
check();
"""


def record(driver, key, body):
    """Starts recording, inside the page, every distinct value of the script `body`
    as the page changes (so a value shown for a moment between two polls is caught)."""
    driver.execute_script(RECORD, key, body)


def recorded(driver, key):
    return [json.loads(v) for v in driver.execute_script(f"return window.__openjamRecord_{key}")]


QUEUE_ENTRY = """
const item = [...document.querySelectorAll('#queue-list li.queue-item')]
  .find(li => li.querySelector('.item-title').textContent === %s);
return item ? [Number(item.dataset.score), item.classList.contains('in-flight'), item.classList.contains('pending')] : null;
"""


def assert_clean_console(*drivers):
    for driver in drivers:
        errors = severe_logs(driver)
        assert not errors, f"console errors in {driver.openjam_name}: {errors}"


def test_vote_shows_before_the_server_answers_and_settles_on_its_score(base_url, held, browsers):
    alice, bob = two_people(base_url, held, browsers)
    add_track(alice, 0)  # plays at once
    song = add_track(alice, 1)
    wait_for(bob, lambda d: entry(d, song) == (0, False, False, False), message="Bob never saw the song queued")

    held.hold(DOWN)
    vote_up(bob, song)
    wait_for(bob, lambda d: entry(d, song) == (1, True, False, True), AT_ONCE,
             f"Bob's vote did not show while the server's answer was held: {entry(bob, song)}")
    # The server has counted it (Alice sees it), and Bob's page still has no answer.
    wait_for(alice, lambda d: entry(d, song)[0] == 1, message="the vote did not reach the server")
    held.wait_held(DOWN)
    assert entry(bob, song) == (1, True, False, True)

    record(bob, "vote", QUEUE_ENTRY % json.dumps(song))
    held.release()
    wait_for(bob, lambda d: entry(d, song) == (1, False, False, True),
             message=f"Bob's vote did not settle once the answer arrived: {entry(bob, song)}")
    # Settling never showed the score without his vote, not even for a moment.
    assert recorded(bob, "vote") == [[1, True, False], [1, False, False]], recorded(bob, "vote")
    wait_connected(bob)
    assert not error_notices(bob)
    assert_clean_console(alice, bob)


def test_refused_vote_is_undone_and_the_reason_shown(base_url, held, browsers):
    alice, bob = two_people(base_url, held, browsers)
    add_track(alice, 0)
    doomed = add_track(alice, 1)
    kept = add_track(alice, 2)
    wait_for(bob, lambda d: queue_titles(d) == [doomed, kept], message="Bob's queue is not Alice's")

    # Bob votes while his socket is held both ways; meanwhile Alice removes the song,
    # so the vote reaches the server after the song is gone.
    held.hold(UP, DOWN)
    vote_up(bob, doomed)
    wait_for(bob, lambda d: entry(d, doomed) == (1, True, False, True), AT_ONCE,
             f"Bob's vote did not show while the server's answer was held: {entry(bob, doomed)}")
    held.wait_held(UP)
    remove = queue_item(alice, doomed).find_element(By.CSS_SELECTOR, "button.remove")
    click(alice, remove)
    click(alice, remove)
    wait_for(alice, lambda d: doomed not in queue_titles(d), message="Alice's removal did not go through")
    assert entry(bob, doomed) == (1, True, False, True)

    held.release()
    notice = notice_with(bob, "Your vote didn't count")
    # In words: the server's message names the song by its id.
    assert notice.startswith("Your vote didn't count: That song is no longer in the queue."), notice
    wait_for(bob, lambda d: queue_titles(d) == [kept], message="Bob's queue did not follow the server's")
    assert not in_flight(bob), "the refused vote is still shown as on its way"
    assert entry(bob, kept) == (0, False, False, False)
    assert entry(alice, kept)[0] == 0
    assert_clean_console(alice, bob)


def three_songs_and_bob_as_co_host(base_url, held, browsers):
    """Alice queues three songs and makes Bob co-host; returns them and the first two songs."""
    alice, bob = two_people(base_url, held, browsers)
    first = add_track(alice, 0)
    second = add_track(alice, 1)
    add_track(alice, 2)
    click(alice, member_row(alice, "Bob").find_element(By.XPATH, ".//button[text()='Make co-host']"))
    wait_for(bob, lambda d: visible(d, "host-skip") and now_playing_title(d) == first,
             message="Bob did not become co-host")
    return alice, bob, first, second


def test_host_skip_hides_the_song_at_once_and_a_refused_skip_brings_it_back(base_url, held, browsers):
    alice, bob, first, second = three_songs_and_bob_as_co_host(base_url, held, browsers)

    # An accepted skip: the song goes at once, and the next one comes with the answer.
    held.hold(DOWN)
    click(bob, el(bob, "host-skip"))
    wait_for(bob, lambda d: now_playing_title(d) is None, AT_ONCE,
             "the skipped song still showed while the server's answer was held")
    wait_for(alice, lambda d: now_playing_title(d) == second, message="the skip did not reach the server")
    held.wait_held(DOWN)
    assert now_playing_title(bob) is None
    # Waiting for the next song, not idle: no "Nothing is playing", no Play button.
    assert el(bob, "np-empty").text == "Skipping…", el(bob, "np-empty").text
    assert not visible(bob, "host-play"), "Play was offered while the skip was on its way"
    record(bob, "skip", "return document.getElementById('np-title').offsetParent ? document.getElementById('np-title').textContent : null")
    held.release()
    wait_for(bob, lambda d: now_playing_title(d) == second, message="Bob's page did not settle on the next song")
    assert recorded(bob, "skip") == [None, second], "the skipped song came back for a moment: " + repr(recorded(bob, "skip"))

    # A refused skip: Alice takes Bob's co-host role while his socket is held, so his
    # page still offers Skip and the server refuses it.
    held.hold(UP, DOWN)
    click(alice, member_row(alice, "Bob").find_element(By.XPATH, ".//button[text()='Make member']"))
    wait_for(alice, lambda d: member_row(d, "Bob").get_attribute("data-role") == "member", message="Alice could not demote Bob")
    assert visible(bob, "host-skip")
    click(bob, el(bob, "host-skip"))
    wait_for(bob, lambda d: now_playing_title(d) is None, AT_ONCE,
             "the skipped song still showed while the server's answer was held")
    held.wait_held(UP)

    held.release()
    notice = notice_with(bob, "Couldn't skip")
    assert "Only a host or co-host may skip" in notice, notice
    wait_for(bob, lambda d: now_playing_title(d) == second, message="the refused skip did not bring the song back")
    wait_for(bob, lambda d: not visible(d, "host-skip"), message="Bob's page still offers the host's Skip")
    assert now_playing_title(alice) == second
    assert_clean_console(alice, bob)


def press_late(alice, bob, held, button, second, refusal):
    """Bob presses `button`, whose frame waits on the way (a slow link) while Alice skips the
    song; once it arrives, it is refused with `refusal` and the next song plays on."""
    held.hold(UP)
    click(bob, el(bob, button))
    held.wait_held(UP)
    click(alice, el(alice, "host-skip"))
    wait_for(alice, lambda d: now_playing_title(d) == second, message="Alice's skip did not skip")

    held.release()
    notice = notice_with(bob, refusal)
    assert "no longer playing" in notice, notice
    wait_for(bob, lambda d: now_playing_title(d) == second, message="Bob's page did not settle on the song that plays")


def test_a_skip_that_arrives_after_its_song_ended_skips_nothing(base_url, held, browsers):
    alice, bob, _, second = three_songs_and_bob_as_co_host(base_url, held, browsers)
    press_late(alice, bob, held, "host-skip", second, "Couldn't skip")
    assert now_playing_title(alice) == second, "Bob's late skip skipped the next song too"
    assert_clean_console(alice, bob)


def test_a_pause_that_arrives_after_its_song_ended_leaves_the_next_song_playing(base_url, held, browsers):
    alice, bob, _, second = three_songs_and_bob_as_co_host(base_url, held, browsers)
    press_late(alice, bob, held, "host-pause", second, "Couldn't pause")
    assert el(alice, "np-state").text != "Paused", "Bob's late pause paused the next song"
    assert_clean_console(alice, bob)


def test_a_skip_request_that_arrives_after_its_song_ended_counts_against_nothing(base_url, held, browsers):
    alice, bob = two_people(base_url, held, browsers)
    first = add_track(alice, 0)
    second = add_track(alice, 1)
    add_track(alice, 2)
    wait_for(bob, lambda d: visible(d, "skip-request") and now_playing_title(d) == first, message="Bob cannot vote to skip")
    # A request that counted would stand against the next song ("1 of 2") without a word.
    press_late(alice, bob, held, "skip-request", second, "Your skip request didn't count")
    assert now_playing_title(alice) == second, "Bob's late request skipped the next song"
    assert_clean_console(alice, bob)


def test_pause_waits_for_its_answer_so_a_double_click_sends_it_once(base_url, held, browsers):
    alice, bob = two_people(base_url, held, browsers)
    first = add_track(alice, 0)
    click(alice, member_row(alice, "Bob").find_element(By.XPATH, ".//button[text()='Make co-host']"))
    wait_for(bob, lambda d: visible(d, "host-pause") and now_playing_title(d) == first, message="Bob did not become co-host")
    wait_for(bob, lambda d: el(d, "np-state").text == "Playing", message="the song never played on Bob's page")

    held.hold(DOWN)
    pause = el(bob, "host-pause")
    # Pressed from the keyboard: the focus stays on the button throughout, so Resume is one
    # more press away.
    bob.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].focus()", pause)
    pause.send_keys(Keys.ENTER)
    wait_for(alice, lambda d: el(d, "np-state").text == "Paused", message="the pause did not reach the server")
    held.wait_held(DOWN)
    assert pause.get_attribute("aria-disabled") == "true", "Pause could be pressed again while its answer was on its way"
    assert pause.get_attribute("aria-busy") == "true"
    bob.execute_script("arguments[0].click()", pause)  # a second press, as a double-click would

    held.release()
    wait_for(bob, lambda d: el(d, "np-state").text == "Paused" and el(d, "host-pause").get_attribute("aria-disabled") is None,
             message="Bob's page did not settle on the pause")
    assert el(bob, "host-pause").text == "Resume"
    assert bob.execute_script("return document.activeElement.id") == "host-pause", "the focus left the Pause button"
    time.sleep(0.5)
    assert not error_notices(bob), [n.text for n in error_notices(bob)]
    assert_clean_console(alice, bob)


def two_people_hearing_a_song(base_url, held, browsers):
    """Alice and Bob, with Alice's first song playing and nobody asking to skip it."""
    alice, bob = two_people(base_url, held, browsers)
    first = add_track(alice, 0)
    wait_for(bob, lambda d: now_playing_title(d) == first and "Vote to skip (0 of 2)" in el(d, "skip-request").text,
             message="Bob never saw the song play")
    return alice, bob, first


def test_skip_request_counts_before_the_server_answers(base_url, held, browsers):
    alice, bob, first = two_people_hearing_a_song(base_url, held, browsers)

    held.hold(DOWN)
    click(bob, el(bob, "skip-request"))
    wait_for(bob, lambda d: "Skip requested (1 of 2)" in el(d, "skip-request").text, AT_ONCE,
             f"the request was not counted at once: {el(bob, 'skip-request').text!r}")
    wait_for(alice, lambda d: "(1 of 2)" in el(d, "skip-request").text, message="the request did not reach the server")
    held.wait_held(DOWN)
    assert "Skip requested (1 of 2)" in el(bob, "skip-request").text

    held.release()
    wait_connected(bob)
    wait_for(bob, lambda d: "Skip requested (1 of 2)" in el(d, "skip-request").text,
             message=f"the request did not settle on the server's count: {el(bob, 'skip-request').text!r}")
    assert el(bob, "skip-request").get_attribute("aria-pressed") == "true"
    assert not error_notices(bob)
    assert_clean_console(alice, bob)


def test_a_skip_request_taken_back_stops_counting_before_the_server_answers(base_url, held, browsers):
    alice, bob, first = two_people_hearing_a_song(base_url, held, browsers)
    click(bob, el(bob, "skip-request"))
    wait_for(alice, lambda d: "(1 of 2)" in el(d, "skip-request").text, message="the request did not reach the server")
    wait_for(bob, lambda d: el(d, "skip-request").get_attribute("aria-pressed") == "true", message="the button is not pressed")
    assert el(bob, "skip-request").is_enabled(), "a request made can be taken back"

    held.hold(DOWN)
    click(bob, el(bob, "skip-request"))
    wait_for(bob, lambda d: "Vote to skip (0 of 2)" in el(d, "skip-request").text, AT_ONCE,
             f"the withdrawal did not show at once: {el(bob, 'skip-request').text!r}")
    wait_for(alice, lambda d: "Vote to skip (0 of 2)" in el(d, "skip-request").text,
             message="the withdrawal did not reach the server")
    held.wait_held(DOWN)
    assert el(bob, "skip-request").get_attribute("aria-pressed") == "false"

    held.release()
    wait_connected(bob)
    wait_for(bob, lambda d: "Vote to skip (0 of 2)" in el(d, "skip-request").text,
             message=f"the withdrawal did not settle on the server's count: {el(bob, 'skip-request').text!r}")
    # Asking again counts again.
    click(bob, el(bob, "skip-request"))
    wait_for(alice, lambda d: "(1 of 2)" in el(d, "skip-request").text, message="the second request did not count")
    assert now_playing_title(alice) == first
    assert not error_notices(bob)
    assert_clean_console(alice, bob)


def test_a_skip_request_that_skips_the_song_leaves_the_next_song_free_to_skip(base_url, held, browsers):
    alice, bob = two_people(base_url, held, browsers)
    first = add_track(alice, 0)
    wait_for(alice, lambda d: now_playing_title(d) == first, message="the first song never played")
    second = add_track(alice, 1)
    wait_for(bob, lambda d: now_playing_title(d) == first and "Vote to skip (0 of 2)" in el(d, "skip-request").text,
             message="Bob never saw the song play")
    wait_for(bob, lambda d: second in queue_titles(d), message="Bob never saw the second song queued")

    click(bob, el(bob, "skip-request"))
    wait_for(alice, lambda d: "Vote to skip (1 of 2)" in el(d, "skip-request").text, message="Bob's request never counted")
    # Alice's request reaches the threshold: the song is skipped before her request is answered.
    click(alice, el(alice, "skip-request"))
    for page, name in ((alice, "Alice"), (bob, "Bob")):
        wait_for(page, lambda d: now_playing_title(d) == second and "Vote to skip (0 of 2)" in el(d, "skip-request").text,
                 message=f"{name}'s page did not offer to skip the next song: {el(page, 'skip-request').text!r}")
        assert el(page, "skip-request").is_enabled(), name
    assert not error_notices(alice)
    assert_clean_console(alice, bob)


def test_add_shows_at_once_and_a_refused_add_is_taken_back_with_the_reason(base_url, held, browsers):
    alice, bob = two_people(base_url, held, browsers)
    add_track(alice, 0)
    wait_for(bob, lambda d: now_playing_title(d) is not None)

    held.hold(DOWN)
    mine = add_track(bob, 3)
    wait_for(bob, lambda d: (entry(d, mine) or ())[2:3] == (True,), AT_ONCE,
             "Bob's song did not show while the server's answer was held")
    assert "adding…" in queue_item(bob, mine).text
    wait_for(alice, lambda d: mine in queue_titles(d), message="the add did not reach the server")
    held.wait_held(DOWN)
    assert entry(bob, mine)[2], "the song stopped being pending before the answer came"
    record(bob, "add", "return [...document.querySelectorAll('#queue-list li.queue-item .item-title')]"
                       f".filter(t => t.textContent === {json.dumps(mine)}).length")
    held.release()
    wait_for(bob, lambda d: entry(d, mine) == (0, False, False, False), message="Bob's song did not settle as added")
    # Never missing, never twice: the stand-in gives way to the server's item.
    assert set(recorded(bob, "add")) == {1}, recorded(bob, "add")

    # Alice locks the queue while Bob's socket is held: his page still lets him add,
    # and the server refuses.
    held.hold(UP, DOWN)
    assert patch_settings(alice, {"locked": True}) == 200
    refused = add_track(bob, 4)
    wait_for(bob, lambda d: (entry(d, refused) or ())[2:3] == (True,), AT_ONCE,
             "the add did not show while the server's answer was held")
    held.wait_held(UP)

    held.release()
    notice = notice_with(bob, f"Couldn't add “{refused}”")
    assert "The queue is locked" in notice, notice
    wait_for(bob, lambda d: refused not in queue_titles(d), message="the refused add was not taken back")
    wait_for(bob, lambda d: visible(d, "search-locked"), message="Bob's page did not learn of the lock")
    assert refused not in queue_titles(alice)
    assert queue_titles(bob) == queue_titles(alice)
    assert_clean_console(alice, bob)


def test_an_add_on_its_way_cannot_be_sent_again_where_a_song_may_be_queued_twice(base_url, held, browsers):
    alice, bob = two_people(base_url, held, browsers)
    assert patch_settings(alice, {"allowDuplicates": True}) == 200
    add_track(alice, 0)
    # Bob's page knows a song may be queued twice: the playing one can be added again.
    wait_for(bob, lambda d: now_playing_title(d) is not None
             and search_results(d)[0].find_element(By.CSS_SELECTOR, "button.add").text == "Add",
             message="Bob's page did not learn that a song may be queued twice")

    held.hold(DOWN)
    mine = add_track(bob, 3)
    button = search_results(bob)[3].find_element(By.CSS_SELECTOR, "button.add")
    wait_for(bob, lambda d: not button.is_enabled() and button.text == "Adding…", AT_ONCE,
             "the Add button could be pressed again while the add was on its way")
    bob.execute_script("arguments[0].click()", button)  # a second tap, as a double-tap would
    wait_for(alice, lambda d: mine in queue_titles(d), message="the add did not reach the server")
    held.wait_held(DOWN)

    held.release()
    wait_for(bob, lambda d: entry(d, mine) == (0, False, False, False), message="Bob's song did not settle as added")
    wait_for(bob, lambda d: button.is_enabled() and button.text == "Add", message="the Add button did not come back")
    # A second add would have reached the server before the first's answer was let through.
    assert queue_titles(alice).count(mine) == 1, queue_titles(alice)
    assert queue_titles(bob) == queue_titles(alice)
    assert_clean_console(alice, bob)


def test_the_offline_countdown_is_not_read_out_every_second(base_url, held, browsers):
    alice, bob = two_people(base_url, held, browsers)
    # What a screen reader hears from the connection's live region: its text without the
    # parts hidden from it, noted at every change.
    bob.execute_script("""
        const region = document.getElementById('connection');
        const spoken = () => {
          const copy = region.cloneNode(true);
          copy.querySelectorAll('[aria-hidden="true"]').forEach((node) => node.remove());
          return copy.textContent.replace(/\\s+/g, ' ').trim();
        };
        window.announced = [spoken()];
        new MutationObserver(() => {
          const now = spoken();
          if (now !== window.announced[window.announced.length - 1]) window.announced.push(now);
        }).observe(region, { subtree: true, childList: true, characterData: true });
    """)
    held.close()  # Bob's server is gone: his page counts down to its next try
    wait_for(bob, lambda d: re.search(r"retrying in \d+ s", el(d, "connection").text), message="no countdown showed")
    # Waits of 0.25, 0.5, 1 and 2 s: four tries, each one "Reconnecting" between two waits.
    time.sleep(4)
    announced = bob.execute_script("return window.announced")
    assert any(text.startswith("Offline (") for text in announced), announced
    assert not [text for text in announced if re.search(r"in \d+ s|retrying|Reconnecting", text)], announced
    # Once offline, each text is announced once: the tries do not make it alternate.
    offline = announced[next(i for i, text in enumerate(announced) if text.startswith("Offline (")):]
    assert len(set(offline)) == len(offline), announced


def test_a_socket_the_server_stopped_answering_is_dropped_and_the_page_says_why(base_url, held, browsers):
    alice, bob = two_people(base_url, held, browsers)
    # Every text the connection status shows, however briefly (the first retry waits ~250 ms).
    bob.execute_script("""
        const region = document.getElementById('connection');
        window.shown = [region.textContent];
        new MutationObserver(() => window.shown.push(region.textContent.replace(/\\s+/g, ' ').trim()))
          .observe(region, { subtree: true, childList: true, characterData: true });
    """)
    # The server's answers, pongs included, stop reaching Bob: his page's next ping goes
    # unanswered, and after the watchdog's 6 s it drops the socket.
    held.hold(DOWN)
    wait_for(bob, lambda d: any("Offline (the server stopped answering)" in text for text in d.execute_script("return window.shown")),
             timeout=45, poll=0.2, message="the page never gave up on the silent socket, or did not say why")
    held.release()
    wait_connected(bob, timeout=30)


def test_a_command_on_a_socket_that_went_quiet_sends_a_ping_to_find_out(base_url, held, browsers):
    alice, bob, first = two_people_hearing_a_song(base_url, held, browsers)
    # When Bob's page sends each ping (clock bursts and the connection's own).
    bob.execute_script("""
        window.pingsSent = [];
        const send = WebSocket.prototype.send;
        WebSocket.prototype.send = function (data) {
          if (JSON.parse(data).type === 'ping') window.pingsSent.push(performance.now());
          return send.call(this, data);
        };
        const region = document.getElementById('connection');
        window.shown = [region.textContent];
        new MutationObserver(() => window.shown.push(region.textContent.replace(/\\s+/g, ' ').trim()))
          .observe(region, { subtree: true, childList: true, characterData: true });
    """)
    # Just after a clock burst: the next one is more than 5 s away (bursts 7.5 s apart, 2.4 s long).
    wait_for(bob, lambda d: d.execute_script("""
        const sent = window.pingsSent, quiet = sent.length ? performance.now() - sent[sent.length - 1] : 0;
        return quiet > 200 && quiet < 500;"""), timeout=30, poll=0.05, message="no clock burst ended")
    # The server's answers stop reaching Bob, and he asks to skip: the answer does not come.
    held.hold(DOWN)
    asked_at = bob.execute_script("const t = performance.now(); document.getElementById('skip-request').click(); return t;")
    time.sleep(4.7)
    # The next clock burst begins ~5.2 s after the last: only pings before it count.
    pings = [t - asked_at for t in bob.execute_script("return window.pingsSent") if 0 < t - asked_at <= 4600]
    # The watch looks every 2 s: once the request has waited 2 s with nothing heard, one ping goes.
    assert len(pings) == 1 and 2000 < pings[0] <= 4600, pings
    wait_for(bob, lambda d: any("Offline (the server stopped answering)" in text for text in d.execute_script("return window.shown")),
             timeout=15, poll=0.2, message="the page never gave up on the silent socket")
    held.release()
    wait_connected(bob, timeout=30)
    # The request went again on the new socket, with its id: it counts once.
    wait_for(alice, lambda d: "Vote to skip (1 of 2)" in el(d, "skip-request").text, message="Bob's request never reached Alice")
