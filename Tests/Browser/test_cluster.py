"""The web client through a balancer: three `jam serve` nodes sharing one PostgreSQL
database (a fresh one per test) and one token secret, behind HAProxy with
deploy/haproxy.cfg itself. Nothing in the page knows about nodes: these tests prove it
needs none.

Needs JAM_TEST_DATABASE_URL (a PostgreSQL URL whose user may CREATE DATABASE) and
JAM_TEST_HAPROXY (the haproxy program), which scripts/test.sh exports; without them the
tests are skipped, unless JAM_REQUIRE_ALL=1, which makes that a failure.

Which node holds a page's realtime socket is read from the nodes' /metrics
(openjam_realtime_connections), so a test knows, rather than hopes, that two pages sit
on different nodes, and which node to kill.
"""

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.parse
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

from conftest import REPO, _wait_healthy
from jam_server import JamServer, jam_binary, stop_process
from jam_page import (
    add_track, click, create_session, debug, el, join_by_code, now_playing_title, queue_item, queue_score,
    queue_titles, rest, severe_logs, visible, wait_connected, wait_for,
)

NODES = 3
HAPROXY_CONFIG = REPO / "deploy" / "haproxy.cfg"


def _unavailable(reason):
    if os.environ.get("JAM_REQUIRE_ALL") == "1":
        pytest.fail(f"{reason} (JAM_REQUIRE_ALL=1)")
    pytest.skip(reason)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _psql(url, sql):
    subprocess.run(["psql", url, "-v", "ON_ERROR_STOP=1", "-qAtc", sql], check=True, capture_output=True, text=True,
                   timeout=30)


def _with_database(url, name):
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


class Cluster:
    def __init__(self, nodes, balancer, haproxy, haproxy_log):
        self.nodes = nodes
        self.balancer = balancer
        self.haproxy = haproxy
        self.haproxy_log = haproxy_log

    def live(self):
        return [n for n in self.nodes if n.alive]

    def sockets(self):
        """{node number: realtime connections} over the live nodes."""
        return {n.number: n.connections() for n in self.live()}

    def wait_sockets(self, expected, message, timeout=10):
        """Waits until the live nodes hold exactly `expected` sockets in all; returns the count per node."""
        last = {}
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            last = self.sockets()
            if sum(last.values()) == expected:
                return last
            time.sleep(0.05)
        raise AssertionError(f"{message}: sockets per node {last}, expected {expected} in all")

    def diagnosis(self):
        parts = [f"--- node {n.number} ({'up' if n.alive else 'down'}) ---\n{n.tail(15)}" for n in self.nodes]
        parts.append(f"--- haproxy ---\n{Path(self.haproxy_log).read_text()[-2000:]}")
        return "\n".join(parts)


@pytest.fixture
def cluster(tmp_path):
    admin_url = os.environ.get("JAM_TEST_DATABASE_URL")
    haproxy = os.environ.get("JAM_TEST_HAPROXY")
    if not admin_url:
        _unavailable("JAM_TEST_DATABASE_URL is not set (scripts/test.sh starts a PostgreSQL for these tests)")
    if not haproxy or not os.access(haproxy, os.X_OK):
        _unavailable(f"JAM_TEST_HAPROXY is not an executable haproxy ({haproxy!r}; Debian: apt-get install haproxy)")
    if not shutil.which("psql"):
        _unavailable("psql is needed to create the test database (Debian: apt-get install postgresql-client)")
    binary = jam_binary()

    name = "jam_browser_" + secrets.token_hex(6)
    try:
        _psql(admin_url, f"CREATE DATABASE {name}")
    except subprocess.CalledProcessError as error:
        pytest.fail(f"cannot create a database at {admin_url}: {error.stderr.strip()}")
    folder = Path(tempfile.mkdtemp(prefix="openjam-browser-cluster-"))
    secret = secrets.token_hex(32)
    nodes, balancer_process, haproxy_log = [], None, folder / "haproxy.log"
    try:
        for number in range(1, NODES + 1):
            node = JamServer(f"node{number}", binary, folder, ["--database", _with_database(admin_url, name)],
                             {"JAM_SECRET": secret})
            node.number = number  # the tests name nodes by number, as deploy/haproxy.cfg does
            nodes.append(node)
        for node in nodes:
            node.wait_listening()
        port = _free_port()
        environment = {**os.environ, "JAM_LB_BIND": f"127.0.0.1:{port}"}
        for k in range(1, 4):
            # deploy/haproxy.cfg names three nodes; a missing one points at a closed port.
            environment[f"JAM_NODE{k}"] = nodes[k - 1].address if k <= len(nodes) else "127.0.0.1:9"
        with open(haproxy_log, "w") as log:
            balancer_process = subprocess.Popen([haproxy, "-db", "-f", str(HAPROXY_CONFIG)], stdout=log,
                                                stderr=subprocess.STDOUT, env=environment)
        balancer = f"http://127.0.0.1:{port}"
        try:
            _wait_healthy(balancer, 15)
        except RuntimeError:
            pytest.fail(f"HAProxy did not come up on {balancer}:\n{haproxy_log.read_text()[-2000:]}")
        running = Cluster(nodes, balancer, balancer_process, haproxy_log)
        yield running
    finally:
        # The balancer first, so no page is sent to a node that is going away.
        if balancer_process is not None:
            stop_process(balancer_process)
        for node in nodes:
            node.stop()
        try:
            _psql(admin_url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        except subprocess.CalledProcessError as error:
            print(f"warning: could not drop the test database {name}: {error.stderr.strip()}")
        shutil.rmtree(folder, ignore_errors=True)


def error_notices(driver):
    return [n.text for n in driver.find_elements(By.CSS_SELECTOR, "#notices .notice-error")]


def assert_settled(driver, allow=()):
    """Connected, no error notice, not thrown out of the session, nothing in the console."""
    wait_connected(driver)
    assert debug(driver)["connection"] == "connected"
    assert not error_notices(driver), f"error notices in {driver.openjam_name}: {error_notices(driver)}"
    assert not visible(driver, "ended"), el(driver, "ended").text
    errors = severe_logs(driver, allow)
    assert not errors, f"console errors in {driver.openjam_name}: {errors}"


def holder(counts):
    """The one node holding a socket, from {node: sockets} with one socket in all."""
    return next(number for number, count in counts.items() if count == 1)


def test_two_pages_on_different_nodes_share_the_session(cluster, browsers):
    lb = cluster.balancer
    alice = browsers.open("alice")
    bob = browsers.open("bob")

    # Alice goes through the balancer: her sign-in, create and socket are spread over the
    # nodes by round robin.
    code = create_session(alice, lb, "Alice", session_name="Across nodes")
    alice_node = holder(cluster.wait_sockets(1, "Alice's socket is on no node"))

    # Bob opens the page on another node directly, so the two are certainly apart.
    other = next(n for n in cluster.nodes if n.number != alice_node)
    join_by_code(bob, other.url, code, "Bob")
    counts = cluster.wait_sockets(2, "Bob's socket did not show")
    assert counts[alice_node] == 1 and counts[other.number] == 1, counts
    print(f"\nAlice through HAProxy on node {alice_node}, Bob directly on node {other.number}")

    wait_for(alice, lambda d: "Bob" in el(d, "members-list").text, message="Alice never saw Bob join")
    wait_for(bob, lambda d: "Alice" in el(d, "members-list").text, message="Bob never saw Alice")
    assert "Across nodes" in el(bob, "session-name").text
    assert "host: Alice" in el(bob, "session-host").text

    # Adds from either node reach the other.
    first = add_track(alice, 0)  # the first add plays at once
    wait_for(bob, lambda d: now_playing_title(d) == first, message="Bob never saw Alice's first song start")
    second = add_track(bob, 1)
    wait_for(alice, lambda d: second in queue_titles(d), message="Alice never saw Bob's song")
    third = add_track(alice, 2)
    wait_for(bob, lambda d: queue_titles(d) == [second, third], message="Bob's queue is not Alice's")
    wait_for(alice, lambda d: queue_titles(d) == [second, third], message="Alice's queue is not Bob's")

    # Votes too: Bob's on Alice's song moves it up on Alice's page.
    click(bob, queue_item(bob, third).find_element(By.CSS_SELECTOR, "button.vote-up"))
    wait_for(alice, lambda d: queue_score(d, third) == 1, message="Alice did not see Bob's vote")
    wait_for(alice, lambda d: queue_titles(d) == [third, second], message="the vote did not reorder Alice's queue")
    wait_for(bob, lambda d: queue_titles(d) == [third, second])
    wait_for(bob, lambda d: queue_item(d, third).find_element(By.CSS_SELECTOR, "button.vote-up")
             .get_attribute("aria-pressed") == "true", message="Bob's vote did not show as his")
    # And Alice's on Bob's song reaches Bob.
    click(alice, queue_item(alice, second).find_element(By.CSS_SELECTOR, "button.vote-up"))
    wait_for(bob, lambda d: queue_score(d, second) == 1, message="Bob did not see Alice's vote")

    assert_settled(alice)
    assert_settled(bob)


STATES = """
const states = [document.getElementById('connection').dataset.state];
window.__openjamStates = states;
new MutationObserver(() => {
  const state = document.getElementById('connection').dataset.state;
  if (states[states.length - 1] !== state) states.push(state);
}).observe(document.getElementById('connection'), {attributes: true, attributeFilter: ['data-state']});
"""


def test_page_survives_its_node_dying(cluster, browsers):
    lb = cluster.balancer
    alice = browsers.open("alice")
    code = create_session(alice, lb, "Alice")
    first = add_track(alice, 0)
    wait_for(alice, lambda d: now_playing_title(d) == first)
    doomed = holder(cluster.wait_sockets(1, "Alice's socket is on no node"))
    seq_before = debug(alice)["seq"]

    alice.execute_script(STATES)
    node = cluster.nodes[doomed - 1]
    node.kill9()
    killed_at = time.monotonic()
    survivor = cluster.live()[0]
    print(f"\nAlice through HAProxy on node {doomed}: killed it (kill -9); REST through node {survivor.number}")

    # Bob, over REST on a live node, joins and adds a song while Alice's page is cut off.
    status, me = rest(survivor.url, "POST", "/auth/guest", body={"displayName": "Bob"})
    assert status == 201, (status, me)
    token = me["token"]
    status, joined = rest(survivor.url, "POST", "/api/v1/sessions/join", token, {"code": code})
    assert status == 200, (status, joined, cluster.diagnosis())
    session_id = joined["session"]["id"]
    status, found = rest(survivor.url, "GET", "/api/v1/search?q=&limit=25", token)
    assert status == 200, (status, found)
    track = found["tracks"][3]
    status, added = rest(survivor.url, "POST", f"/api/v1/sessions/{session_id}/queue", token,
                         {"track": track, "nonce": secrets.token_hex(8)})
    assert status == 201, (status, added, cluster.diagnosis())
    title = track["name"]

    # Alice's page reconnects through HAProxy to a live node and resumes with Bob's song.
    wait_for(alice, lambda d: title in queue_titles(d), 15,
             f"Alice's page never showed '{title}' after node {doomed} died\n{cluster.diagnosis()}")
    shown_after = time.monotonic() - killed_at
    wait_for(alice, lambda d: "Bob" in el(d, "members-list").text, message="Alice's page never saw Bob join")
    wait_connected(alice)
    states = alice.execute_script("return window.__openjamStates")
    print(f"Bob's song on Alice's page {shown_after:.2f} s after the kill; connection states {states}")
    assert any(s != "connected" for s in states), f"the page never noticed its socket drop: {states}"
    assert debug(alice)["seq"] > seq_before
    counts = cluster.wait_sockets(1, "Alice's page holds no socket on a live node")
    assert doomed not in counts

    # Alice's own commands work after the failover, and reach the server.
    mine = add_track(alice, 4)
    wait_for(alice, lambda d: mine in queue_titles(d))

    def server_has_it(_):
        status, view = rest(survivor.url, "GET", f"/api/v1/sessions/{session_id}", token)
        return status == 200 and mine in [item["track"]["name"] for item in view["queue"]]

    wait_for(alice, server_has_it, message="Alice's add after the failover did not reach the server")
    assert now_playing_title(alice) == first, "the song playing before the kill is gone"
    # The dropped socket is the only thing Chromium may have complained about.
    assert_settled(alice, allow=("WebSocket connection to",))
