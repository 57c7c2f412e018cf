"""The `browser` fixture: Debian's headless Chromium, launched once per test."""

from collections.abc import AsyncIterator

import pytest
from playwright.async_api import Browser, async_playwright

from tests.browser.chromium import CHROMIUM, CHROMIUM_FLAGS


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(
            f"Chromium is needed at {CHROMIUM} for the browser tests: scripts/setup installs "
            "it (in the Debian root file system, or with apt on a root host); otherwise "
            "install the `chromium` package, or deselect with -m 'not browser'."
        )
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True
        )
        try:
            yield browser
        finally:
            await browser.close()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests of this folder `browser` (the one place; no module repeats it)."""
    for item in items:
        if item.path.is_relative_to(__file__.rpartition("/")[0]):
            item.add_marker(pytest.mark.browser)
