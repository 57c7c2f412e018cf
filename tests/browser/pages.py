"""Home Assistant's frontend as a person uses it: onboarding, adding Pacerelle, its pages.

A page of a busy Home Assistant can lose its WebSocket while it loads; reconnected, it
stays blank or stale ("No entries" on the integration page while the entry exists) for
about a minute, far longer than a step's timeout. A person reloads it; `open_page` does
the same, and waits until what the page should show shows.
"""

import asyncio
import contextlib
import re
from typing import Any, Self

from playwright.async_api import Locator, Page, WebSocket, expect

from tests.browser.chromium import STEP_TIMEOUT_MS, Screenshots
from tests.helpers.emulator import EmulatorHandle

PASSWORD = "browser-test-password"
# A Next of onboarding that leaves its step shown this long is clicked again, at most
# NEXT_ATTEMPTS times in all (under load 8 on 2 cores the analytics step can stay through
# three clicks: its save waits on a backend still starting integrations).
NEXT_RETRY_MS = 7_000
NEXT_ATTEMPTS = 6
# A page is opened at most this often; each time it has STEP_TIMEOUT_MS to show, and is
# looked at this often.
OPEN_ATTEMPTS = 4
LOOK_MS = 500
# What the integration page shows when its list of entries came back empty.
NO_ENTRIES = "No entries"
CONNECTED = "() => document.querySelector('home-assistant')?.hass?.connected === true"


class Sockets:
    """Whether a WebSocket the page opened since `opened_again` closed: a page that lost its
    connection while it loaded can stay blank or stale once reconnected."""

    def __init__(self, page: Page) -> None:
        self.page, self.opening, self.lost = page, 0, False

    def __enter__(self) -> Self:
        self.page.on("websocket", self._on_websocket)
        return self

    def __exit__(self, *_: object) -> None:
        self.page.remove_listener("websocket", self._on_websocket)

    def opened_again(self) -> None:
        """A new opening: the sockets of the ones before close as the page leaves them."""
        self.opening += 1
        self.lost = False

    def _on_websocket(self, websocket: WebSocket) -> None:
        opening = self.opening

        def on_close(_: WebSocket) -> None:
            if opening == self.opening:
                self.lost = True

        websocket.on("close", on_close)


async def open_page(page: Page, url: str, shown: Locator, stale: Locator | None = None) -> int:
    """Open `url` until `shown` is visible; how often it was opened. A page that lost its
    WebSocket since it was opened, or shows `stale`, is opened again once the frontend is
    connected, as a person reloads it; one that shows neither within STEP_TIMEOUT_MS fails."""
    with Sockets(page) as sockets:
        for opening in range(1, OPEN_ATTEMPTS + 1):
            sockets.opened_again()
            await page.goto(url)
            if await _shows(page, shown, stale, sockets):
                return opening
            print(f"open_page: {url} lost its connection or is stale, opened again")
    await expect(shown.first).to_be_visible()
    return OPEN_ATTEMPTS


async def _shows(page: Page, shown: Locator, stale: Locator | None, sockets: Sockets) -> bool:
    """True once `shown` shows; False once the page is connected after a loss, or connected
    and showing `stale`."""
    deadline = asyncio.get_running_loop().time() + STEP_TIMEOUT_MS / 1000
    while asyncio.get_running_loop().time() < deadline:
        with contextlib.suppress(AssertionError):
            await expect(shown.first).to_be_visible(timeout=LOOK_MS)
            return True
        wrong = sockets.lost or (stale is not None and await stale.first.is_visible())
        if wrong and await page.evaluate(CONNECTED):
            return False
    await expect(shown.first).to_be_visible(timeout=LOOK_MS)
    return True


async def open_integration_page(page: Page, base_url: str, entry_title: str) -> int:
    """Pacerelle's integration page, once an entry's row shows `entry_title` (the entry's
    or a subentry's; the sidebar's "Home Assistant" shows on a blank page too)."""
    return await open_page(
        page,
        f"{base_url}/config/integrations/integration/pacerelle",
        page.locator("ha-config-entry-row").filter(has_text=entry_title),
        page.get_by_text(NO_ENTRIES, exact=True),
    )


async def frontend_call(page: Page, message: dict[str, Any]) -> Any:
    """A WebSocket command over the frontend's own connection."""
    return await page.evaluate(
        "message => document.querySelector('home-assistant').hass.connection"
        ".sendMessagePromise(message)",
        message,
    )


async def onboard(page: Page, base_url: str, shots: Screenshots) -> None:
    """Onboarding of a fresh Home Assistant: the person's account, then every step's Next."""
    await page.goto(base_url)
    await page.get_by_role("button", name="Create my smart home").click()
    await page.locator("input[name=name]").fill("Test Person")
    await page.locator("input[name=username]").fill("test")
    await page.locator("input[name=password]").fill(PASSWORD)
    await page.locator("input[name=password_confirm]").fill(PASSWORD)
    await shots.take(page, "onboarding-user")
    await page.get_by_role("button", name="Create account").click()
    for step_text in ("Home location", "country your home is in", "Help us help you"):
        await _next_onboarding_step(page, step_text)
    await expect(page.get_by_text("All set!")).to_be_visible()
    await shots.take(page, "onboarding-done")
    await page.get_by_text("Finish", exact=True).click()
    await page.wait_for_url(re.compile(r"/home|/lovelace"))


async def _next_onboarding_step(page: Page, step_text: str) -> None:
    """Next, clicked again while the step stays: on a busy machine (the suite runs on every
    core) the frontend can take a click before the step acts on it, and then waits forever."""
    step = page.get_by_text(step_text).first
    await expect(step).to_be_visible()
    for _ in range(NEXT_ATTEMPTS):
        # Never a second click once the step went: it would be the next step's Next.
        if not await step.is_visible():
            return
        await page.get_by_text("Next", exact=True).click()
        with contextlib.suppress(AssertionError):
            await expect(step).to_be_hidden(timeout=NEXT_RETRY_MS)
            return
    await expect(step).to_be_hidden()


async def open_pacerelle_flow(page: Page, base_url: str, shots: Screenshots) -> None:
    """Add integration -> Pacerelle: the connection key form."""
    # The http settings of configuration.yaml come up as a trial to confirm (HA 2026.10).
    confirm = page.get_by_role("button", name="Confirm")
    await open_page(page, f"{base_url}/config/integrations/dashboard", confirm)
    await confirm.click()
    await page.get_by_text("Add integration", exact=True).click()
    # Typed into the dialog's own search field: typed into the page, letters are shortcuts.
    await page.get_by_placeholder("Search for a brand name").fill("Pacerelle")
    await shots.take(page, "add-integration")
    await page.get_by_text("Pacerelle", exact=True).click()
    await expect(page.locator("input[name=connection_key]")).to_be_visible()


async def paste_key_and_approve(page: Page, emulator: EmulatorHandle, shots: Screenshots) -> None:
    """The emulator's key pasted, then approved in the window the frontend opens."""
    await shots.take(page, "connection-key-form")
    await page.locator("input[name=connection_key]").fill(await emulator.connect_key())
    await page.get_by_text("Advanced", exact=True).click()
    await page.locator("input[name=server_url]").fill(emulator.base_url)
    await shots.take(page, "form-filled")
    # The frontend opens Pacerelle's approval page in a new window.
    async with page.context.expect_page() as opened:
        await page.get_by_role("button", name="Submit").click()
    approval = await opened.value
    await expect(approval.get_by_text("Connect an agent")).to_be_visible()
    await shots.take(page, "waiting-for-approval")
    await shots.take(approval, "approval-page")
    # Approving sends the window to Home Assistant's callback, which closes it.
    async with approval.expect_event("close", timeout=STEP_TIMEOUT_MS):
        await approval.get_by_role("button", name="Approve").click()


async def add_integration(
    page: Page, base_url: str, emulator: EmulatorHandle, shots: Screenshots
) -> None:
    """Onboarding, then Pacerelle added with the emulator's key and finished."""
    await onboard(page, base_url, shots)
    await open_pacerelle_flow(page, base_url, shots)
    await paste_key_and_approve(page, emulator, shots)
    await page.get_by_role("button", name=re.compile(r"^(Skip and finish|Finish)$")).click()
