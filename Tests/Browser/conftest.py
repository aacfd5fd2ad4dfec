"""Fixtures for the browser tests: a real `jam serve` on 127.0.0.1 and headless
Chromium instances driven by Selenium, each with its own profile directory (so two
of them are two independent people).

scripts/browser-tests.sh starts the server and passes its address in
JAM_BASE_URL; without it the fixture starts one itself (JAM_BIN or
.build/debug/jam), which makes `pytest Tests/Browser` work on its own too.
"""

import os
import shutil
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from hold_proxy import HoldProxy

REPO = Path(__file__).resolve().parents[2]
WEB_ROOT = REPO / "Sources" / "JamWebClient" / "Web"


def _find(env, candidates):
    if os.environ.get(env):
        return os.environ[env]
    for name in candidates:
        path = shutil.which(name)
        if path:
            return path
    return None


CHROME = _find("CHROME_BIN", ["chromium", "chromium-browser", "google-chrome"])
CHROMEDRIVER = _find("CHROMEDRIVER", ["chromedriver"])


def pytest_collection_modifyitems(config, items):
    if CHROME and CHROMEDRIVER:
        return
    reason = "chromium and chromedriver are needed (apt-get install chromium chromium-driver)"
    if os.environ.get("JAM_REQUIRE_ALL") == "1":
        raise pytest.UsageError(reason)
    for item in items:
        item.add_marker(pytest.mark.skip(reason=reason))


def _wait_healthy(base, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=1) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"the server at {base} did not become healthy within {seconds} s")


@pytest.fixture(scope="session")
def base_url():
    given = os.environ.get("JAM_BASE_URL")
    if given:
        _wait_healthy(given)
        yield given.rstrip("/")
        return
    # Imported here: jam_server imports this module's helpers.
    from jam_server import JamServer, jam_binary

    folder = Path(tempfile.mkdtemp(prefix="openjam-browser-"))
    # As scripts/browser-tests.sh starts it: request limits off, since everybody in every test
    # comes from 127.0.0.1.
    server = JamServer("server", jam_binary(), folder, environment={"JAM_RATE_LIMITS": "off"})
    try:
        server.wait_listening()
        yield server.url
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


class Browsers:
    """Starts headless Chromium instances, each with its own profile, and quits them."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.drivers = []

    def open(self, name, width=1200, height=900, phone=False, flags=()):
        profile = self.tmp / f"profile-{name}"
        options = webdriver.ChromeOptions()
        options.binary_location = CHROME
        for flag in [
            "--headless=new",
            "--no-sandbox",
            "--disable-dev-shm-usage",
            "--disable-gpu",
            "--autoplay-policy=no-user-gesture-required",
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            "--no-first-run",
            *flags,
        ]:
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
        driver.set_script_timeout(30)
        if phone:
            # A real phone viewport (headless windows have a minimum width above 390).
            driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
                "width": width, "height": height, "deviceScaleFactor": 3, "mobile": True,
            })
        driver.openjam_name = name
        self.drivers.append(driver)
        return driver

    def close_all(self):
        for driver in self.drivers:
            try:
                driver.quit()
            except Exception:  # noqa: BLE001 - a crashed browser must not hide the test's own failure
                pass
        self.drivers = []


@pytest.fixture
def browsers(tmp_path):
    pool = Browsers(tmp_path)
    yield pool
    pool.close_all()


@pytest.fixture
def held(base_url):
    """A proxy in front of the server (its address is `held.base`) that can hold a page's
    realtime socket back: `held.hold()`, `held.release()` (see hold_proxy.py)."""
    target = urllib.parse.urlsplit(base_url)
    proxy = HoldProxy(target.hostname, target.port)
    yield proxy
    proxy.close()
