"""A real headless Chromium (the system's, driven by Playwright), or a skip that says what is missing."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest

from tests.conftest import REPO


def chromium_path() -> str | None:
    """The system Chromium: Playwright's own browser download is never used."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").is_file() else None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright package is not installed (pip install -e '.[test]')")
    executable = chromium_path()
    if executable is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium)")
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=executable, headless=True)
        try:
            yield launched
        finally:
            launched.close()


# Where a reviewer finds the screenshots after a run: a gitignored folder in the repository (each run
# overwrites it), or SKILLGYM_SCREENSHOT_DIR. The session's summary lists what was saved.
SCREENSHOTS: Final = REPO / ".test-output" / "browser"
_saved: list[Path] = []


def screenshot_dir() -> Path:
    return Path(os.environ.get("SKILLGYM_SCREENSHOT_DIR") or SCREENSHOTS)


def save_screenshot(page: Any, tmp_path: Path, name: str, **options: Any) -> Path:
    """Save a screenshot in the test's output folder and in ``screenshot_dir()``; the latter's path."""
    path = tmp_path / name
    page.screenshot(path=str(path), **options)
    kept = screenshot_dir() / name
    kept.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, kept)
    assert kept.stat().st_size > 0, f"{name}: an empty screenshot"
    _saved.append(kept)
    return kept


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Name every screenshot saved, relative to the repository when it is inside it."""
    if not _saved:
        return
    terminalreporter.section("browser screenshots")
    for path in _saved:
        shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
        terminalreporter.write_line(str(shown))


class Watch:
    """What a page did that it must not: console errors, uncaught exceptions, requests off the disk."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.requests: list[str] = []

    def attach(self, page: Any) -> None:
        page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        page.on("pageerror", lambda e: self.errors.append(str(e)))

        def route(r: Any) -> None:
            if r.request.url.startswith("file://"):
                r.continue_()
            else:
                self.requests.append(r.request.url)
                r.abort()

        page.route("**/*", route)


@pytest.fixture
def page(browser: Any) -> Iterator[tuple[Any, Watch]]:
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    watch = Watch()
    opened = context.new_page()
    watch.attach(opened)
    yield opened, watch
    context.close()
    assert watch.errors == [], f"console errors: {watch.errors}"
    assert watch.requests == [], f"the page asked for something not on disk: {watch.requests}"


def same(attribute: str | None, value: float | None) -> bool:
    """A data attribute holds exactly report.json's number (empty for null)."""
    return (attribute or "") == ("" if value is None else repr(value)) and (
        value is None or float(attribute or "nan") == value
    )
