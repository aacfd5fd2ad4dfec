"""The page's connection when the server says no: a socket the server opens only to refuse
and close, a reload while the server cannot show the session, and the words of a refusal
that says how long to wait or what became of the change. Each test that needs a server of
its own (tighter limits) starts one (jam_server.py)."""

import time

import pytest
from selenium.common.exceptions import ElementNotInteractableException

from jam_page import click, create_session, el, join_by_link, rest, session_by_rest, visible, wait_connected, wait_for
from jam_server import JamServer, jam_binary

# Counts the sockets the page opens; installed before the page's own scripts run.
COUNT_SOCKETS = """
window.__socketsOpened = 0;
const Real = window.WebSocket;
window.WebSocket = class extends Real {
  constructor(...args) { super(...args); window.__socketsOpened += 1; }
};
"""


@pytest.fixture
def own_server(tmp_path):
    servers = []

    def start(name, *arguments):
        server = JamServer(name, jam_binary(), tmp_path, arguments)
        servers.append(server)
        server.wait_listening()
        return server

    yield start
    for server in servers:
        server.stop()


def test_a_socket_refused_for_too_many_sockets_backs_off_and_says_why(own_server, browsers):
    server = own_server("capped", "--max-sockets-per-address", "1")
    host = browsers.open("host")
    code = create_session(host, server.url, "Hana")  # holds the one socket this address may open
    guest = browsers.open("guest")
    guest.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": COUNT_SOCKETS})
    guest.get(server.url + "/")
    wait_for(guest, lambda d: visible(d, "display-name"))
    el(guest, "display-name").send_keys("Gus")
    el(guest, "join-code").send_keys(code)
    click(guest, el(guest, "join-button"))
    wait_for(guest, lambda d: visible(d, "now-playing"), message="joining did not open the session")

    # Every socket is opened, refused with an error frame and closed with 4429. That is no
    # answer: the back-off grows (0.25, 0.5, 1, 2, 4 s ceilings), where a page that took the
    # refusal for a connection tried again within 0.25 s, about 40 times in these 6 s.
    time.sleep(6)
    opened = guest.execute_script("return window.__socketsOpened")
    print(f"\n{opened} sockets in 6 s while refused")
    assert 2 <= opened <= 12, opened
    # Between two tries the page waits, and says why: the refusal's words, not the other
    # meaning of 4429 (a reader that fell behind).
    status = wait_for(guest, lambda d: el(d, "connection").get_attribute("data-state") == "retrying"
                      and el(d, "connection-state").text, message="the page did not wait between tries")
    assert "too many open sockets from your address" in status, status
    assert "fell behind" not in status, status

    # Once the host's page closes its socket, the guest gets in (at once, with Retry now).
    host.quit()
    browsers.drivers.remove(host)

    def connected_now(driver):
        if el(driver, "connection").get_attribute("data-state") == "connected":
            return True
        if visible(driver, "connection-retry"):
            try:
                el(driver, "connection-retry").click()
            except ElementNotInteractableException:
                pass  # the page began its next try between the look and the click
        return False

    wait_for(guest, connected_now, timeout=20, poll=0.2, message="the guest did not get in once a socket was free")


# The page's first look at its remembered session fails as a server that is restarting does.
FAIL_FIRST_SESSION_READ = """
const realFetch = window.fetch;
window.fetch = (path, init) => {
  if (/\\/api\\/v1\\/sessions\\/[0-9a-f-]{36}$/.test(String(path)) && !(init && init.method && init.method !== 'GET')) {
    return Promise.reject(new TypeError('Failed to fetch'));
  }
  return realFetch(path, init);
};
"""


def test_a_reload_that_cannot_read_the_session_keeps_it_for_the_next_visit(base_url, browsers):
    page = browsers.open("member")
    create_session(page, base_url, "Hana")
    failing = page.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": FAIL_FIRST_SESSION_READ})
    page.get(base_url + "/")
    message = wait_for(page, lambda d: visible(d, "welcome-error") and el(d, "welcome-error").text,
                       message="the failed read said nothing")
    assert message.startswith("Couldn't reopen your session"), message
    # The server is back: the next visit opens the session, which a page that forgot it on
    # any failure would not (it would show the empty welcome screen).
    page.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": failing["identifier"]})
    page.get(base_url + "/")
    wait_for(page, lambda d: visible(d, "now-playing") and "/j/" in d.current_url,
             message="the remembered session did not open again")
    wait_connected(page)


def test_a_page_reopened_after_its_session_ended_says_so(base_url, browsers):
    alice, session = session_by_rest(base_url, "Alice")
    page = browsers.open("member")
    join_by_link(page, base_url, session["joinCode"], "Bob")
    wait_connected(page)
    # Bob closes the tab; overnight the host ends the session.
    page.get("about:blank")
    status, _ = rest(base_url, "DELETE", "/api/v1/sessions/" + session["id"], alice)
    assert status in (200, 204), status
    page.get(base_url + "/")
    said = wait_for(page, lambda d: visible(d, "ended") and el(d, "ended").text,
                    message="the page showed the start screen without a word about the session")
    assert "Session over" in said and ("The session has ended." in said or "This session no longer exists." in said), said
    assert not visible(page, "rejoin-button"), "an ended session cannot be joined again"


REFUSAL_WORDS = """
const [done] = arguments;
(async () => {
  const { describeError } = await import(location.origin + '/js/ui/errors.js');
  const { JamError } = await import(location.origin + '/js/protocol.js');
  const { SessionStore } = await import(location.origin + '/js/store.js');
  const { ClockSync } = await import(location.origin + '/js/clock.js');
  const store = new SessionStore({ sessionId: 's', token: () => 't', me: 'u', clock: new ClockSync() });
  store.reject('vote', new JamError('rateLimited', 'too many votes; slow down', 1450));
  const rest = new JamError('rateLimited', 'too many requests');
  rest.retryAfterSeconds = 12;
  // A gateway's own page when no server behind it answered, and a bare status from anywhere.
  const { Api } = await import(location.origin + '/js/api.js');
  const realFetch = window.fetch;
  const bare = async (status) => {
    window.fetch = async () => new Response('<html><body><h1>' + status + ' Bad Gateway</h1></body></html>',
      { status, headers: { 'Content-Type': 'text/html' } });
    try {
      await new Api('t').joinSession('K7MPQ2');
      return 'answered';
    } catch (error) {
      return describeError(error, 'join');
    } finally {
      window.fetch = realFetch;
    }
  };
  const gateway = await bare(502);
  const unexplained = await bare(418);
  return {
    gateway, unexplained,
    vote: describeError(store.lastRejection, store.lastRejection.action),
    rest: describeError(rest, 'join'),
    unsaid: describeError(new JamError('rateLimited', 'too many requests'), 'join'),
    unavailable: describeError(new JamError('unavailable', 'the database is not taking writes; the command was not applied, try again'), 'pause'),
    offline: describeError(new JamError('unavailable', ''), 'pause'),
    full: describeError(new JamError('queueLimit', 'the queue is full (1000 tracks)'), 'add', 'Song'),
    mine: describeError(new JamError('queueLimit', 'you already have 3 items queued (limit 3)'), 'add', 'Song'),
    goneSong: describeError(new JamError('notFound', 'no item 3f2a9c1e-0b7d-4c55-9a10-2f1d3e4a5b6c in the queue'), 'remove', 'Song'),
    gonePerson: describeError(new JamError('notFound', 'no member 7c1d in this session'), 'kick'),
  };
})().then(done, (error) => done({ error: String(error && error.stack || error) }));
"""


def test_a_refusal_says_how_long_to_wait_what_became_of_the_change_and_which_limit(base_url, browsers):
    page = browsers.open("words")
    page.get(base_url + "/")
    words = page.execute_async_script(REFUSAL_WORDS)
    assert "error" not in words, words
    assert words["vote"] == "Your vote didn't count: Too many attempts. Try again in 1.5 s.", words
    assert words["rest"] == "Couldn't join: Too many attempts. Try again in 12 s.", words
    assert words["unsaid"] == "Couldn't join: Too many attempts. Wait a moment and try again.", words
    assert words["unavailable"] == ("Couldn't pause: The database is not taking writes; the command was not applied, "
                                    "try again."), words
    assert words["offline"] == "Couldn't pause: The server cannot be reached. Check your connection.", words
    assert words["full"] == "Couldn't add “Song”: The queue is full. Wait until a song has played.", words
    assert words["gateway"] == ("Couldn't join: The server is not answering right now (the gateway in front of it "
                                "answered 502); try again in a moment."), words
    assert words["unexplained"] == "Couldn't join: The server answered 418 without saying why.", words
    assert words["mine"] == ("Couldn't add “Song”: You already have as many songs waiting as this session allows. "
                             "Wait until one has played."), words
    # Not found, in words rather than the server's ids.
    assert words["goneSong"] == "Couldn't remove “Song”: That song is no longer in the queue.", words
    assert words["gonePerson"] == "Couldn't remove the member: That person is no longer in the session.", words


# Lets the page's first create reach the server, then loses its answer on the way back, as a
# dropped connection would; the join code the server gave is kept for the test.
LOSE_FIRST_CREATE_ANSWER = """
const realFetch = window.fetch;
window.__lostCodes = [];
window.__createKeys = [];
window.fetch = async (input, init) => {
  const creating = String(input).endsWith('/api/v1/sessions') && init && init.method === 'POST';
  if (creating) window.__createKeys.push(init.headers['Idempotency-Key'] || null);
  const response = await realFetch(input, init);
  if (creating && window.__lostCodes.length === 0) {
    window.__lostCodes.push((await response.clone().json()).session.joinCode);
    throw new TypeError('Failed to fetch');
  }
  return response;
};
"""


def test_a_create_whose_answer_was_lost_opens_the_session_it_made_when_pressed_again(base_url, browsers):
    page = browsers.open("creator")
    page.get(base_url + "/")
    wait_for(page, lambda d: visible(d, "display-name"), message="the welcome form did not show")
    page.execute_script(LOSE_FIRST_CREATE_ANSWER)
    el(page, "display-name").send_keys("Hana")
    click(page, el(page, "create-button"))
    wait_for(page, lambda d: visible(d, "welcome-error") and "Couldn't start a session" in el(d, "welcome-error").text,
             message="the lost answer was not reported")
    click(page, el(page, "create-button"))
    wait_for(page, lambda d: visible(d, "now-playing") and "/j/" in d.current_url, message="the session did not open")
    wait_connected(page)
    lost = page.execute_script("return window.__lostCodes")
    keys = page.execute_script("return window.__createKeys")
    assert len(keys) == 2 and keys[0] and keys[0] == keys[1], keys
    assert page.current_url.rsplit("/j/", 1)[1] == lost[0], "the second press opened the session the first one made"


def test_a_create_pressed_again_with_another_name_after_a_lost_answer_is_a_new_create(base_url, browsers):
    page = browsers.open("renamer")
    page.get(base_url + "/")
    wait_for(page, lambda d: visible(d, "display-name"), message="the welcome form did not show")
    page.execute_script(LOSE_FIRST_CREATE_ANSWER)
    el(page, "display-name").send_keys("Hana")
    el(page, "session-name-input").send_keys("Friday")
    click(page, el(page, "create-button"))
    wait_for(page, lambda d: visible(d, "welcome-error") and "Couldn't start a session" in el(d, "welcome-error").text,
             message="the lost answer was not reported")
    # Another session name: the server would refuse the first key with this body.
    el(page, "session-name-input").send_keys(" night")
    click(page, el(page, "create-button"))
    wait_for(page, lambda d: visible(d, "now-playing") and "/j/" in d.current_url,
             message=f"the session did not open: {el(page, 'welcome-error').text}")
    keys = page.execute_script("return window.__createKeys")
    assert len(keys) == 2 and keys[0] and keys[1] and keys[0] != keys[1], keys
    assert el(page, "session-name").text == "Friday night"
