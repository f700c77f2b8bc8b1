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
