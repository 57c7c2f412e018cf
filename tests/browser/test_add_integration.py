"""A person adds Pacerelle in the real Home Assistant frontend, in headless Chromium.

A real `hass` process serves the frontend; the emulator runs in this process. The browser
onboards Home Assistant, adds the integration, pastes a connection key from the emulator,
approves on the emulator's approval page (the window the frontend opens) and lands on the
created entry. Each step's screenshot is kept under tests/artifacts/browser/add_integration/
<run>/ (or $PACERELLE_ARTIFACTS/browser/... when set); with PACERELLE_PUBLISH_IMAGES=1
five of them become README's config-flow images.
"""

import contextlib
import json
import re
from pathlib import Path

from playwright.async_api import (
    Browser,
    Page,
    Response,
    WebSocket,
    expect,
)
from playwright.async_api import Error as PlaywrightError

from tests.browser.chromium import ARTIFACTS, STEP_TIMEOUT_MS, Screenshots
from tests.browser.home_assistant import running_home_assistant
from tests.helpers.emulator import EmulatorHandle, running_emulator

PASSWORD = "browser-test-password"
# A Next of onboarding that leaves its step shown this long is clicked again, at most
# NEXT_ATTEMPTS times in all (under load 8 on 2 cores the analytics step can stay through
# three clicks: its save waits on a backend still starting integrations).
NEXT_RETRY_MS = 7_000
NEXT_ATTEMPTS = 6


class Traffic:
    """What Home Assistant sent to the browser: API and callback bodies, WebSocket frames."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.texts: list[str] = []
        self.responses: list[Response] = []

    def watch(self, page: Page) -> None:
        page.on("response", self._on_response)
        page.on("websocket", self._on_websocket)

    def _on_response(self, response: Response) -> None:
        path = response.url.removeprefix(self.base_url)
        if path != response.url and path.startswith(("/api/", "/auth/")):
            self.responses.append(response)

    def _on_websocket(self, websocket: WebSocket) -> None:
        websocket.on("framereceived", self._on_frame)

    def _on_frame(self, payload: str | bytes) -> None:
        self.texts.append(payload if isinstance(payload, str) else payload.decode(errors="replace"))

    async def assert_never_carried(self, secret: str) -> None:
        for response in self.responses:
            # Redirects and aborted requests have no body.
            with contextlib.suppress(PlaywrightError):
                self.texts.append(await response.text())
        assert len(self.texts) > 20, "the frontend's traffic was not captured"
        assert all(secret not in text for text in self.texts)


async def _onboard(page: Page, base_url: str, shots: Screenshots) -> None:
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


async def _open_pacerelle_flow(page: Page, base_url: str, shots: Screenshots) -> None:
    await page.goto(f"{base_url}/config/integrations/dashboard")
    # The http settings of configuration.yaml come up as a trial to confirm (HA 2026.10).
    await page.get_by_role("button", name="Confirm").click()
    await page.get_by_text("Add integration", exact=True).click()
    # Typed into the dialog's own search field: typed into the page, letters are shortcuts.
    await page.get_by_placeholder("Search for a brand name").fill("Pacerelle")
    await shots.take(page, "add-integration")
    await page.get_by_text("Pacerelle", exact=True).click()
    await expect(page.locator("input[name=connection_key]")).to_be_visible()


async def _paste_key_and_approve(page: Page, emulator: EmulatorHandle, shots: Screenshots) -> None:
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


async def test_add_pacerelle_in_the_frontend(
    browser: Browser, tmp_path: Path, socket_enabled: None
) -> None:
    shots = Screenshots(ARTIFACTS / "add_integration")
    config_dir = tmp_path / "config"
    async with running_emulator() as emulator, running_home_assistant(config_dir) as base_url:
        context = await browser.new_context(viewport={"width": 1200, "height": 900})
        context.set_default_timeout(STEP_TIMEOUT_MS)
        expect.set_options(timeout=STEP_TIMEOUT_MS)
        page = await context.new_page()
        traffic = Traffic(base_url)
        traffic.watch(page)
        try:
            await _onboard(page, base_url, shots)
            await _open_pacerelle_flow(page, base_url, shots)
            await _paste_key_and_approve(page, emulator, shots)
            # The success step; with the agent's device it asks for a name and an area.
            done = re.compile(r"Created configuration for Home Assistant|Name and assign")
            await expect(page.get_by_text(done).first).to_be_visible()
            await shots.take(page, "created")
            await page.get_by_role("button", name=re.compile(r"^(Skip and finish|Finish)$")).click()

            [installation] = await emulator.admin("GET", "/installations")
            agent_id = installation["agent_id"]
            owner_id = installation["owner_id"]
            await page.goto(f"{base_url}/config/integrations/integration/pacerelle")
            # The launch screen fades out once the frontend is connected.
            await expect(page.locator("#ha-launch-screen")).to_have_count(0)
            await expect(page.get_by_text("Home Assistant", exact=True).first).to_be_visible()
            # The agent came online with the installation the flow stored.
            await emulator.wait_agent(agent_id, lambda status: status["connected"])
            await shots.take(page, "entry")
            token = emulator.emulator.state.installations[agent_id].installation_token
            await traffic.assert_never_carried(token)
        except Exception:
            await shots.take(page, "failure")
            raise
        finally:
            await context.close()
    shots.publish(
        {
            "form-filled": "config-flow-1-connection-key.png",
            "waiting-for-approval": "config-flow-2-approve.png",
            "approval-page": "config-flow-3-pacerelle-approval.png",
            "created": "config-flow-4-device.png",
            "entry": "config-flow-5-entry.png",
        }
    )

    entries = json.loads((config_dir / ".storage" / "core.config_entries").read_text())
    [entry] = [item for item in entries["data"]["entries"] if item["domain"] == "pacerelle"]
    assert entry["unique_id"] == owner_id  # the Pacerelle account
    assert entry["data"]["server_url"] == emulator.base_url
    store = config_dir / ".storage" / "pacerelle"
    names = sorted(p.name for p in store.iterdir() if not p.name.endswith(("-wal", "-shm")))
    assert names == [f"{agent_id}.db", f"{agent_id}.key", f"{agent_id}.lock"]
    assert "pit_" not in (config_dir / ".storage" / "core.config_entries").read_text()
