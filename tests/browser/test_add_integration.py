"""A person adds Pacerelle in the real Home Assistant frontend, in headless Chromium.

A real `hass` process serves the frontend; the emulator runs in this process. The browser
onboards Home Assistant, adds the integration, pastes a connection key from the emulator,
approves on the emulator's approval page (the window the frontend opens) and lands on the
created entry. A tab whose WebSocket is lost as the page loads stays blank for about a
minute once reconnected: there the page is opened again until the entry shows
(`pages.open_page`).
Each step's screenshot is kept under tests/artifacts/browser/add_integration/<run>/ (or
$PACERELLE_ARTIFACTS/browser/... when set); with PACERELLE_PUBLISH_IMAGES=1 five of them
become README's config-flow images.
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

from tests.browser.chromium import ARTIFACTS, Screenshots, browser_page
from tests.browser.home_assistant import running_home_assistant
from tests.browser.pages import (
    onboard,
    open_integration_page,
    open_pacerelle_flow,
    paste_key_and_approve,
)
from tests.helpers.emulator import running_emulator

# In the tab it is added to, the first WebSocket closes once Home Assistant said auth_ok:
# what the page asked for on it is lost; reconnected, the page stays blank for about 60 s.
LOSE_THE_FIRST_CONNECTION = """
if (!sessionStorage.getItem("connection-lost")) {
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        if (event.data.includes('"auth_ok"') && !sessionStorage.getItem("connection-lost")) {
          sessionStorage.setItem("connection-lost", "1");
          this.close();
        }
      });
    }
  };
}
"""


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


async def test_add_pacerelle_in_the_frontend(
    browser: Browser, tmp_path: Path, socket_enabled: None
) -> None:
    shots = Screenshots(ARTIFACTS / "add_integration")
    config_dir = tmp_path / "config"
    async with (
        running_emulator() as emulator,
        running_home_assistant(config_dir) as base_url,
        browser_page(browser, shots, viewport={"width": 1200, "height": 900}) as page,
    ):
        traffic = Traffic(base_url)
        traffic.watch(page)
        await onboard(page, base_url, shots)
        await open_pacerelle_flow(page, base_url, shots)
        await paste_key_and_approve(page, emulator, shots)
        # The success step; with the agent's device it asks for a name and an area.
        done = re.compile(r"Created configuration for Home Assistant|Name and assign")
        await expect(page.get_by_text(done).first).to_be_visible()
        await shots.take(page, "created")
        await page.get_by_role("button", name=re.compile(r"^(Skip and finish|Finish)$")).click()

        [installation] = await emulator.admin("GET", "/installations")
        agent_id = installation["agent_id"]
        owner_id = installation["owner_id"]
        await open_integration_page(page, base_url, "Home Assistant")
        # The agent came online with the installation the flow stored.
        await emulator.wait_agent(agent_id, lambda status: status["connected"])
        await shots.take(page, "entry")
        token = emulator.emulator.state.installations[agent_id].installation_token
        await traffic.assert_never_carried(token)

        # The connection lost as the page loads: the entry shows, once the frontend has
        # reconnected by itself or the page is opened again (which of the two comes first
        # depends on the machine's load).
        lossy = await page.context.new_page()
        await lossy.add_init_script(LOSE_THE_FIRST_CONNECTION)
        assert await open_integration_page(lossy, base_url, "Home Assistant") <= 2
        assert await lossy.evaluate("sessionStorage.getItem('connection-lost')") == "1"
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
