"""What every browser test shares: Debian's Chromium, its flags, per-run screenshots,
README's images renewed from them (`publish`, with PACERELLE_PUBLISH_IMAGES=1), and the
problems a page reports (`PageProblems`), and a test's page (`browser_page`).

The `browser` fixture that launches it lives in tests/browser/conftest.py.
"""

import contextlib
import os
import shutil
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, Dialog, Page, expect

CHROMIUM = Path("/usr/bin/chromium")
# Headless and self-contained: no sandbox (root in a chroot), no GPU, no calls home.
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = (
    Path(os.environ.get("PACERELLE_ARTIFACTS", Path(__file__).resolve().parents[1] / "artifacts"))
    / "browser"
)
STEP_TIMEOUT_MS = 20_000
DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
KEPT_RUNS = 3


@contextlib.asynccontextmanager
async def browser_page(browser: Browser, shots: Screenshots, **options: Any) -> AsyncIterator[Page]:
    """A page in a browser context of its own (`options`: the context's), each step bounded
    by STEP_TIMEOUT_MS; a failure's screenshot is taken before the context closes."""
    context = await browser.new_context(**options)
    context.set_default_timeout(STEP_TIMEOUT_MS)
    expect.set_options(timeout=STEP_TIMEOUT_MS)
    page = await context.new_page()
    try:
        yield page
    except Exception:
        await shots.take(page, "failure")
        raise
    finally:
        await context.close()


class Screenshots:
    """Numbered screenshots of one run, in a directory of its own (runs may overlap).

    The last KEPT_RUNS runs are kept; the path is printed so a failing run shows it.
    """

    def __init__(self, parent: Path) -> None:
        parent.mkdir(parents=True, exist_ok=True)
        for stale in sorted(parent.iterdir())[:-KEPT_RUNS]:
            if stale.is_dir():
                shutil.rmtree(stale, ignore_errors=True)
            else:
                stale.unlink(missing_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        self.directory = parent / f"{stamp}-{os.getpid()}"
        self.directory.mkdir()
        self.count = 0
        print(f"screenshots in {self.directory}")

    async def take(self, page: Page, name: str) -> None:
        self.count += 1
        await page.screenshot(path=self.directory / f"{self.count:02d}-{name}.png")

    def publish(self, images: Mapping[str, str]) -> None:
        """README's images (docs/images/<image> for each screenshot name) from this run,
        when PACERELLE_PUBLISH_IMAGES=1: a test run never rewrites tracked files otherwise."""
        if os.environ.get("PACERELLE_PUBLISH_IMAGES") != "1":
            return
        for name, image in images.items():
            [shot] = self.directory.glob(f"*-{name}.png")
            shutil.copyfile(shot, DOCS_IMAGES / image)


class PageProblems:
    """Alerts (the page's error reports), uncaught errors and console errors of a page."""

    def __init__(self, page: Page) -> None:
        self.seen: list[str] = []
        page.on("dialog", self.on_dialog)
        page.on("pageerror", lambda error: self.seen.append(f"uncaught: {error}"))
        page.on(
            "console",
            lambda message: self.seen.append(f"console: {message.text}")
            if message.type == "error"
            else None,
        )

    async def on_dialog(self, dialog: Dialog) -> None:
        """A dialog nobody expected: kept as a problem, dismissed."""
        self.seen.append(f"{dialog.type}: {dialog.message}")
        await dialog.dismiss()
