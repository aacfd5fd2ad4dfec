"""One `jam serve` that a browser test starts itself, when the shared server of conftest
does not fit: a node of a cluster, a server with tighter limits."""

import os
import re
import subprocess
import time
import urllib.request

import pytest

from conftest import REPO, WEB_ROOT, _wait_healthy


def jam_binary():
    """The `jam` program under test: JAM_BIN, else the debug build."""
    binary = os.environ.get("JAM_BIN") or str(REPO / ".build" / "debug" / "jam")
    if not os.access(binary, os.X_OK):
        pytest.fail(f"no jam binary at {binary}: build it (swift build) or set JAM_BIN")
    return binary


def stop_process(process, seconds=10):
    """SIGTERM, and SIGKILL when it does not end within `seconds`."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class JamServer:
    """`jam serve` on 127.0.0.1 with its own data folder (`folder/name`) and log
    (`folder/name.log`), on a free port it picks (--port 0)."""

    def __init__(self, name, binary, folder, arguments=(), environment=None):
        self.name = name
        self.binary = binary
        self.data = folder / name
        self.data.mkdir()
        self.log_path = folder / f"{name}.log"
        self.log = open(self.log_path, "w+")
        self.arguments = list(arguments)
        self.environment = environment or {}
        self.url = None
        self.process = None
        self._start()

    def _start(self):
        arguments = [self.binary, "serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", str(self.data),
                     *self.arguments]
        # Run by scripts/browser-tests.sh the tests check the client built into `jam` (or
        # JAM_WEB_ROOT), like its own server; run alone, the sources, like conftest's.
        if not os.environ.get("JAM_BASE_URL"):
            arguments += ["--web-root", str(WEB_ROOT)]
        # Secrets go in the environment, not the arguments, so `ps` does not show them.
        self.process = subprocess.Popen(arguments, stdout=self.log, stderr=subprocess.STDOUT,
                                        env={**os.environ, **self.environment})

    def wait_listening(self, seconds=60):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            # From the start: the file's offset is shared with the child's writes.
            self.log.seek(0)
            match = re.search(r"listening on (http://127\.0\.0\.1:\d+)", self.log.read())
            if match:
                self.url = match.group(1)
                _wait_healthy(self.url)
                return
            time.sleep(0.1)
        pytest.fail(f"{self.name} did not start:\n{self.tail()}")

    @property
    def address(self):
        return self.url.split("//", 1)[1]

    @property
    def alive(self):
        return self.process.poll() is None

    def connections(self):
        """The server's openjam_realtime_connections (absent until its first socket: 0)."""
        with urllib.request.urlopen(f"{self.url}/metrics", timeout=2) as answer:
            text = answer.read().decode()
        match = re.search(r"^openjam_realtime_connections(?:\{[^}]*\})? (\S+)$", text, re.M)
        return int(float(match.group(1))) if match else 0

    def kill9(self):
        self.process.kill()  # SIGKILL: no goodbye to the sockets, the database or a balancer
        self.process.wait()

    def tail(self, lines=30):
        self.log.seek(0)
        return "".join(self.log.readlines()[-lines:])

    def stop(self):
        stop_process(self.process)
        self.log.close()
