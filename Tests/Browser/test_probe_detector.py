"""The calibration detector (js/probe.js) in the page's own Chromium, on synthesised
recordings with known arrivals (Tests/Browser/probe_cases.mjs): probes at offsets from
−180 to +240 ms, under 0 dB white noise, loud low music, in a reverberant room whose first
reflection is as loud as (or louder than) the direct sound, a missing probe and a faint
one. Every probe that is there is found within 1 ms; the missing one is reported, not
guessed.
"""

import re
from pathlib import Path

import pytest

# The cases' functions, inlined (the page's Content-Security-Policy refuses blob: modules);
# they import probe.js from the page's /js/ folder. The Node entry point is cut off.
CASES = (Path(__file__).resolve().parent / "probe_cases.mjs").read_text()
CASES = CASES.split("// Under Node:")[0]
RUN = re.sub(r"^export ", "", CASES, flags=re.M) + """
const [done] = arguments;
runProbeCases(location.origin + '/js/', 1)
  .then((answer) => done(answer), (error) => done({ error: String(error && error.stack || error) }));
"""


@pytest.fixture(scope="module")
def page(base_url, tmp_path_factory):
    from conftest import Browsers

    pool = Browsers(tmp_path_factory.mktemp("probe"))
    driver = pool.open("probe")
    driver.get(base_url + "/")
    yield driver
    pool.close_all()


def test_every_probe_is_found_within_a_millisecond_and_a_missing_one_is_reported(page):
    answer = page.execute_async_script(RUN)
    assert "error" not in answer, answer.get("error")
    assert answer["failures"] == [], "\n".join(answer["failures"])
    assert answer["results"] == 14
    print(f"[figures] probe detector: worst error {answer['worstErrorMs']:.4f} ms, "
          f"slowest analysis of 6 probes in 8 s {answer['slowestAnalysisMs']:.0f} ms")
    assert answer["worstErrorMs"] <= 1
    assert answer["slowestAnalysisMs"] < 1000
