"""What the browser tests do on the OpenJam page, in the page's own terms.

Every wait is on a condition with a timeout; nothing sleeps for a fixed time to
let something happen.
"""

import json
import time
import urllib.error
import urllib.request

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

DEFAULT_TIMEOUT = 10


def wait_for(driver, condition, timeout=DEFAULT_TIMEOUT, message="", poll=0.02):
    """Waits until condition(driver) is truthy and returns its value."""

    def check(d):
        try:
            return condition(d)
        except StaleElementReferenceException:
            return False

    return WebDriverWait(driver, timeout, poll_frequency=poll).until(check, message)


def el(driver, element_id):
    return driver.find_element(By.ID, element_id)


def visible(driver, element_id):
    found = driver.find_elements(By.ID, element_id)
    return bool(found) and found[0].is_displayed()


# The page's CONFIRM_MIN_GAP_MS (ui/dom.js), and a little more: a button that asks before it
# acts ignores a second click sooner than that, as the rest of a double-click.
CONFIRM_GAP_S = 0.55


def click(driver, element):
    # Scroll first: on a phone-sized window the button may be below the fold.
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
    if "armed" in (element.get_attribute("class") or "").split():
        # Answering its question, as a person who read it would: not as a double-click.
        time.sleep(CONFIRM_GAP_S)
    element.click()


def create_session(driver, base, name, session_name=None):
    """Starts a session as `name`; returns its join code."""
    driver.get(base + "/")
    wait_for(driver, lambda d: visible(d, "display-name"), message="the welcome form did not show")
    el(driver, "display-name").send_keys(name)
    if session_name:
        el(driver, "session-name-input").send_keys(session_name)
    click(driver, el(driver, "create-button"))
    wait_for(driver, lambda d: visible(d, "now-playing") and "/j/" in d.current_url, message="the session did not open")
    wait_connected(driver)
    return driver.current_url.rsplit("/j/", 1)[1]


def join_by_link(driver, base, code, name):
    """Opens the invite link /j/CODE as a new person and joins."""
    driver.get(f"{base}/j/{code}")
    wait_for(driver, lambda d: visible(d, "display-name"), message="the invite page did not show")
    assert el(driver, "join-code").get_attribute("value") == code
    el(driver, "display-name").send_keys(name)
    click(driver, el(driver, "join-button"))
    wait_for(driver, lambda d: visible(d, "now-playing"), message="joining by link did not open the session")
    wait_connected(driver)


def join_by_code(driver, base, code, name):
    driver.get(base + "/")
    wait_for(driver, lambda d: visible(d, "display-name"))
    el(driver, "display-name").send_keys(name)
    el(driver, "join-code").send_keys(code)
    click(driver, el(driver, "join-button"))
    wait_for(driver, lambda d: visible(d, "now-playing"), message="joining by code did not open the session")
    wait_connected(driver)


def wait_connected(driver, timeout=DEFAULT_TIMEOUT):
    wait_for(driver, lambda d: el(d, "connection").get_attribute("data-state") == "connected", timeout,
             "the realtime connection did not come up")


def search_results(driver):
    return driver.find_elements(By.CSS_SELECTOR, "#search-results li.result")


def add_track(driver, index):
    """Adds the index-th library track from the search list; returns its title."""
    wait_for(driver, lambda d: len(search_results(d)) > index, message="the library list did not load")
    item = search_results(driver)[index]
    title = item.find_element(By.CSS_SELECTOR, ".item-title").text
    click(driver, item.find_element(By.CSS_SELECTOR, "button.add"))
    return title


def queue_titles(driver):
    return [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#queue-list li.queue-item .item-title")]


def queue_item(driver, title):
    for item in driver.find_elements(By.CSS_SELECTOR, "#queue-list li.queue-item"):
        if item.find_element(By.CSS_SELECTOR, ".item-title").text == title:
            return item
    return None


def queue_score(driver, title):
    item = queue_item(driver, title)
    return None if item is None else int(item.get_attribute("data-score"))


def now_playing_title(driver):
    if not visible(driver, "np-title"):
        return None
    return el(driver, "np-title").text or None


def debug(driver):
    return driver.execute_script("return window.openjam.debug()")


def severe_logs(driver, allow=()):
    """Console entries at SEVERE level, less those matching an allowed substring."""
    entries = driver.get_log("browser")
    return [e for e in entries if e["level"] == "SEVERE" and not any(a in e["message"] for a in allow)]


def timed(driver, condition, timeout=DEFAULT_TIMEOUT, message=""):
    """Waits for condition and returns the seconds it took (polling every 10 ms)."""
    start = time.monotonic()
    wait_for(driver, condition, timeout, message, poll=0.01)
    return time.monotonic() - start


WATCH = """
const [selector, attribute, expected] = arguments;
const watch = {hit: null};
window.__openjamTestWatch = watch;
const check = () => {
  if (watch.hit !== null) return;
  const found = [...document.querySelectorAll(selector)].some(e =>
    attribute ? e.getAttribute(attribute) === expected : e.textContent === expected);
  if (found) {
    watch.hit = performance.timeOrigin + performance.now();
    observer.disconnect();
  }
};
const observer = new MutationObserver(check);
observer.observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});
check();
"""

CLICK = """
const t = performance.timeOrigin + performance.now();
arguments[0].click();
return t;
"""


def watch(driver, selector, expected, attribute=None):
    """Starts recording, inside the page, the wall-clock instant at which an element
    matching selector shows `expected` (its text, or the attribute's value)."""
    driver.execute_script(WATCH, selector, attribute, expected)


def watched_instant(driver):
    return driver.execute_script("return window.__openjamTestWatch && window.__openjamTestWatch.hit")


def click_at(driver, element):
    """Clicks from inside the page; returns the wall-clock instant of the click (ms)."""
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
    return driver.execute_script(CLICK, element)


def rest(base, method, path, token=None, body=None):
    """A JSON call to the server, as another of the person's devices would make it: (status, parsed answer)."""
    request = urllib.request.Request(base + path, method=method, data=None if body is None else json.dumps(body).encode())
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=15) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")


def session_by_rest(base, host_name):
    """A host elsewhere (no page) signs in and starts a session over REST: (their token, the session)."""
    status, host = rest(base, "POST", "/auth/guest", body={"displayName": host_name})
    assert status == 201, (status, host)
    status, created = rest(base, "POST", "/api/v1/sessions", host["token"], {})
    assert status == 201, (status, created)
    return host["token"], created["session"]
