"""A real headless Chromium (the system's, driven by Playwright), or a skip that says what is missing."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


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


def save_screenshot(page: Any, tmp_path: Path, name: str, **options: Any) -> Path:
    """Save a screenshot in the test's output folder, and in SKILLGYM_SCREENSHOT_DIR when that is set."""
    path = tmp_path / name
    page.screenshot(path=str(path), **options)
    extra = os.environ.get("SKILLGYM_SCREENSHOT_DIR")
    if extra:
        Path(extra).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, Path(extra) / name)
    return path


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
