"""A trial page's recording in a real browser: an asciicast plays frame by frame, offline, from disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skillgym.report.trialpage import trial_page
from skillgym.results import Grade, TrialPaths
from tests.browser.conftest import Watch, save_screenshot
from tests.results import result_for

KEY = "dogfood/demo/preloaded/stub/trial-1"
CAST = [
    {"version": 2, "width": 30, "height": 4},
    [0.1, "o", "READY>"],
    [0.6, "o", " hello\r\nECHO: hello\r\n"],
    [1.2, "o", "READY>"],
]


def _page(run_dir: Path) -> Path:
    folder = run_dir / KEY
    bundle = folder / "workspace" / "bundle" / "recordings"
    bundle.mkdir(parents=True)
    (bundle / "session.cast").write_text("\n".join(json.dumps(e) for e in CAST), encoding="utf-8")
    (folder / "trace.json").write_text('{"final_text": "ok"}', encoding="utf-8")
    paths = TrialPaths(
        dir=KEY, result=f"{KEY}/result.json", trace=f"{KEY}/trace.json", bundle=f"{KEY}/workspace/bundle"
    )
    page = trial_page(run_dir, result_for(KEY, "passed", paths=paths, grade=Grade(passed=True, score=1.0)))
    assert page is not None
    return run_dir / page


def test_a_recording_plays_its_frames(page: tuple[Any, Watch], tmp_path: Path) -> None:
    p, _ = page
    p.goto(_page(tmp_path).as_uri())
    player = p.locator("#bundle figure[data-kind=cast] .frames")
    screen, slider = player.locator("pre"), player.locator("input[type=range]")
    assert player.locator(".controls").is_visible()  # the script shows the controls
    assert slider.get_attribute("max") == "2"
    assert screen.inner_text().splitlines() == ["READY> hello", "ECHO: hello", "READY>"]  # the last frame
    slider.fill("0")
    assert screen.inner_text() == "READY>"
    assert player.locator(".frame-time").inner_text() == "frame 1/3 at 0.1 s"
    player.locator("button").click()  # play from the first frame to the last, then stop
    p.wait_for_function("() => document.querySelector('.frames button').textContent === 'play'", timeout=5000)
    assert player.locator(".frame-time").inner_text() == "frame 3/3 at 1.2 s"
    assert screen.inner_text().splitlines()[-1] == "READY>"
    save_screenshot(p, tmp_path, "trial-recording.png", full_page=True)
