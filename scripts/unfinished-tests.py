#!/usr/bin/env python3
"""Names the Swift Testing tests that started but never finished, from a test run's log."""
import re
import sys

started, finished = [], set()
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    line = re.sub(r"\x1b\[[0-9;]*m", "", line)
    if m := re.search(r"◇ Test (.+?) started\.", line):
        started.append(m.group(1))
    elif m := re.search(r"[✔✘] Test (.+?)(?: with \d+ test cases?)? (?:passed|failed) after ", line):
        finished.add(m.group(1))
for name in started:
    # "run" is the whole run; argument cases are reported with their test.
    if name not in finished and name != "run" and not name.startswith("case passing"):
        print("  " + name)
