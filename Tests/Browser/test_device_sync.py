"""Sync as people hear it, in two or three headless Chromiums against a real server:
the output latency moves the start, a member's report reaches the host's sync column,
device delays are kept by the server across a reload and can be set by a host, and a
host's re-sync reaches the member's device.
"""

import statistics
import time

from jam_page import add_track, click, create_session, debug, el, join_by_link, wait_for

# Chromium reports the fake output device's latency; this pretends a Bluetooth speaker.
FAKE_LATENCY_S = 0.15
INJECT_LATENCY = f"""
Object.defineProperty(AudioContext.prototype, 'outputLatency', {{ get() {{ return {FAKE_LATENCY_S}; }}, configurable: true }});
"""


def playing_item(driver):
    s = debug(driver)
    return s["itemId"] if s["playing"] and s["phase"] == "playing" else None


def test_an_injected_output_latency_starts_the_device_that_much_earlier(base_url, browsers):
    alice = browsers.open("alice")
    bob = browsers.open("bob")
    bob.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": INJECT_LATENCY})
    code = create_session(alice, base_url, "Alice")
    join_by_link(bob, base_url, code, "Bob")
    click(alice, el(alice, "device-toggle"))
    click(bob, el(bob, "device-toggle"))
    add_track(alice, 3)
    item = wait_for(alice, playing_item, 10, "Alice's browser never started playing")
    wait_for(bob, lambda d: playing_item(d) == item, 10, "Bob's browser never started playing")

    def settled(d):
        s = debug(d)
        return s["playing"] and s["measurements"] >= 8 and s["lastErrorMs"] is not None and abs(s["lastErrorMs"]) < 5

    wait_for(alice, settled, 12, "Alice's playback did not settle")
    wait_for(bob, settled, 12, "Bob's playback did not settle")
    a0, b0 = debug(alice), debug(bob)
    # Bob's page reads the injected latency (plus the context's own base latency).
    assert abs(b0["outputLatencyMs"] - FAKE_LATENCY_S * 1000) < 15, b0["outputLatencyMs"]
    expected = b0["compensationMs"] - a0["compensationMs"]
    leads = []
    end = time.monotonic() + 3
    while time.monotonic() < end:
        a, b = debug(alice), debug(bob)
        if a["playing"] and b["playing"] and a["itemId"] == b["itemId"] == item:
            # Position minus server time compares the two elements at the same server instant.
            leads.append((b["positionMs"] - b["serverNowMs"]) - (a["positionMs"] - a["serverNowMs"]))
        time.sleep(0.03)
    assert len(leads) >= 30
    lead = statistics.median(leads)
    print(f"\n[figures] injected output latency {b0['outputLatencyMs']:.1f} ms vs {a0['outputLatencyMs']:.1f} ms: "
          f"Bob's audio element runs {lead:.1f} ms ahead of Alice's (expected {expected:.1f} ms)")
    # Heard together: Bob's element is ahead by the difference of what the two pages compensate.
    assert abs(lead - expected) < 10, f"lead {lead:.1f} ms, expected {expected:.1f} ms"
    assert lead > 100


def row_for(driver, user_name):
    rows = driver.find_elements("css selector", "#sync-list .sync-device")
    for row in rows:
        if user_name in row.text:
            return row
    return None


def host_and_playing_guest(base_url, browsers):
    """Hana hosts, Gil plays along; returns both pages and Gil's row in Hana's sync column."""
    host = browsers.open("host")
    guest = browsers.open("guest")
    code = create_session(host, base_url, "Hana")
    join_by_link(guest, base_url, code, "Gil")
    click(guest, el(guest, "device-toggle"))
    add_track(host, 3)
    wait_for(guest, playing_item, 10, "Gil's browser never started playing")
    row = wait_for(host, lambda d: row_for(d, "Gil"), 15, "Gil's device never showed in the host's sync column")
    return host, guest, row


def test_the_host_sees_each_device_and_sets_its_delay_and_a_member_keeps_their_own_across_a_reload(base_url, browsers):
    # Gil's reports reach Hana's sync column: a row for his device with a grade and its figures.
    host, guest, row = host_and_playing_guest(base_url, browsers)
    guest_device = debug(guest)["deviceId"]
    assert row.get_attribute("data-device-id") == guest_device
    assert row.get_attribute("data-grade") in ("good", "fair", "poor")
    assert "clock ±" in row.text and "playback" in row.text and "output" in row.text
    # Gil is no host: he has no sync column.
    assert el(guest, "sync-column").get_attribute("hidden") is not None

    # Hana gives Gil's device 35 ms: it reaches Gil's page and his engine.
    delay = row.find_element("css selector", "input.sync-delay")
    delay.clear()
    delay.send_keys("35\n")
    wait_for(guest, lambda d: el(d, "device-delay").get_attribute("value") == "35", 10, "the host's delay never reached Gil")
    wait_for(guest, lambda d: debug(d)["deviceDelayMs"] == 35, 5)

    # An empty field or a delay beyond the limit is refused on the page, and nothing changes.
    field = el(guest, "device-delay")
    for typed in ("", "2500"):
        field.clear()
        field.send_keys(f"{typed}\n")
        wait_for(guest, lambda d: "from -2000 to 2000 ms" in d.execute_script("return arguments[0].validationMessage", field), 5,
                 f"typing {typed!r} showed no reason")
        assert field.get_attribute("aria-invalid") == "true"
    time.sleep(1)
    assert debug(guest)["deviceDelayMs"] == 35, "a refused delay reached the server"
    assert el(guest, "device-delay-shown").text == "starts 35 ms early"

    # Gil moves it himself (+ twice: 45 ms); after a reload the server gives it back.
    click(guest, el(guest, "device-delay-more"))
    wait_for(guest, lambda d: el(d, "device-delay").get_attribute("value") == "40", 5)
    click(guest, el(guest, "device-delay-more"))
    wait_for(guest, lambda d: el(d, "device-delay").get_attribute("value") == "45", 5)
    guest.refresh()
    wait_for(guest, lambda d: el(d, "device-delay").get_attribute("value") == "45", 15, "the delay was lost on reload")
    assert debug(guest)["deviceId"] == guest_device
    # Three quick presses are three steps, whatever the server has echoed by then.
    for _ in range(3):
        el(guest, "device-delay-more").click()
    wait_for(guest, lambda d: el(d, "device-delay").get_attribute("value") == "60", 5, "quick presses were lost")
    # And Hana's column shows it with the next report.
    wait_for(host, lambda d: "delay +60 ms" in (row_for(d, "Gil").text if row_for(d, "Gil") else ""), 15)


def test_a_hosts_resync_reaches_the_members_device(base_url, browsers):
    host, guest, row = host_and_playing_guest(base_url, browsers)
    starts = debug(guest)["starts"]
    click(host, row.find_element("css selector", "button.sync-resync"))
    wait_for(guest, lambda d: debug(d)["resyncs"] == 1, 10, "the re-sync never reached Gil's device")
    # It measured its clock afresh and started again on the timeline.
    wait_for(guest, lambda d: debug(d)["starts"] > starts and debug(d)["playing"], 10, "Gil's device did not restart")


def test_a_device_that_cannot_record_is_not_offered_as_the_listener(base_url, browsers):
    host, guest, row = host_and_playing_guest(base_url, browsers)

    def calibrate_shown(d):
        found = row_for(d, "Gil")
        return found is not None and found.find_element("css selector", "button.sync-calibrate").is_displayed()

    # A page that may ask for a microphone says so: Gil's device is offered to listen.
    wait_for(host, calibrate_shown, 15, "Gil's playing device was never offered as a listener")
    # As on a phone that opened the page over plain http: no mediaDevices at all. Its next
    # report says it cannot listen, and the host is no longer offered it.
    guest.execute_script("Object.defineProperty(navigator, 'mediaDevices', { value: undefined, configurable: true })")
    wait_for(host, lambda d: not calibrate_shown(d), 15, "a device that cannot record stayed on offer as a listener")
    assert "cannot listen" in row_for(host, "Gil").text
