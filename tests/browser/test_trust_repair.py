"""The trust repair in the real frontend (issue 13): code shown, trust chosen, ask answered.

A real `hass` with Pacerelle added through the frontend (as test_add_integration does), the
emulator in this process. The owner writes from device 1 (trusted on first use); a second
"owner device" with an identity key of its own (as the relay could forge) writes. In
Chromium, Settings -> System -> Repairs shows one repair for it, with the verification code
the emulator's chat page shows for that device and no choice made; the person first chooses
"Not now: keep it unverified" (issue 37: the dialog says nothing was decided, the repair
stays), opens the same repair again and chooses "Trust it". Then
`pacerelle.ask`, called through Home Assistant's REST API, is answered from device 2 and
counts. Screenshots: tests/artifacts/browser/trust_repair/<run>/; with
PACERELLE_PUBLISH_IMAGES=1 the repair dialog and the agent's device page also become README's
images (a test run never rewrites tracked files otherwise).
"""

import asyncio
import contextlib
import re
from pathlib import Path
from typing import Any

import aiohttp
from playwright.async_api import Browser, Locator, Page, expect
from playwright.async_api import Error as PlaywrightError

from tests.browser.chromium import ARTIFACTS, Screenshots, browser_page
from tests.browser.home_assistant import running_home_assistant
from tests.browser.pages import add_integration, frontend_call, open_page
from tests.helpers.emulator import EmulatorHandle, running_emulator

ISSUES_WITHIN = 20.0
ANSWER_WITHIN = 20.0
TRUST_LABEL = "Trust it (the codes are the same)"
KEEP_LABEL = "Not now: keep it unverified (this repair stays)"
KEPT_TEXT = "Nothing was decided: the device stays unverified."
CHOOSE_TEXT = "Choose one: nothing is chosen for you."
VIEWPORT = {"width": 1200, "height": 900}
DEVICE_PAGE_VIEWPORT = {"width": 1200, "height": 1180}
# The agent's verification code sensor: beside its value (two lines, four on a phone) the
# name has 60 to 88 px at these widths (the Diagnostic card's box, padding included); at
# 360 px, 56: "Code" would show as "Co…" there.
CODE_NAME = "Code"
CODE_VIEWPORT_WIDTHS = (1920, 1200, 1024, 800, 412, 375)


async def _pacerelle_issues(page: Page) -> list[str]:
    issues = (await frontend_call(page, {"type": "repairs/list_issues"}))["issues"]
    return [item["issue_id"] for item in issues if item["domain"] == "pacerelle"]


async def _wait_issues(page: Page, count: int) -> list[str]:
    async with asyncio.timeout(ISSUES_WITHIN):
        while True:
            issues = await _pacerelle_issues(page)
            if len(issues) >= count:
                return issues
            await asyncio.sleep(0.25)


async def _open_repair(page: Page, base_url: str, code: str) -> None:
    repair = page.get_by_text(re.compile("wants to talk to"))
    await open_page(page, f"{base_url}/config/repairs", repair)
    await repair.first.click()
    # The code the person compares with the one their Pacerelle app shows.
    await expect(page.get_by_text(code)).to_be_visible()


async def _keep_in_repairs(page: Page, base_url: str, code: str, shots: Screenshots) -> None:
    """Nothing is chosen beforehand; "keep it unverified" decides nothing and says so."""
    await _open_repair(page, base_url, code)
    await expect(page.get_by_role("radio", checked=True)).to_have_count(0)
    await expect(page.get_by_role("radio")).to_have_count(3)
    await shots.take(page, "repair-dialog")
    await page.get_by_role("button", name="Submit").click()  # nothing chosen: asked again
    await expect(page.get_by_text(CHOOSE_TEXT)).to_be_visible()
    await page.get_by_text(KEEP_LABEL, exact=True).click()
    await page.get_by_role("button", name="Submit").click()
    await expect(page.get_by_text(KEPT_TEXT)).to_be_visible()
    await shots.take(page, "repair-kept")
    await page.locator("ha-dialog-footer").get_by_role("button", name="Close").click()
    await expect(page.get_by_text(KEPT_TEXT)).to_have_count(0)


async def _trust_in_repairs(page: Page, base_url: str, code: str, shots: Screenshots) -> None:
    await _open_repair(page, base_url, code)
    await shots.take(page, "repair-dialog-again")
    await page.get_by_text(TRUST_LABEL, exact=True).click()
    await shots.take(page, "repair-trust-chosen")
    await page.get_by_role("button", name="Submit").click()
    await expect(page.get_by_text(code)).to_have_count(0)
    await shots.take(page, "repair-done")


async def _agent_device_page(page: Page, base_url: str, shots: Screenshots) -> None:
    devices = await frontend_call(page, {"type": "config/device_registry/list"})
    [agent] = [  # the agent's, not its owner's conversation's (model "Conversation")
        device
        for device in devices
        if any(identifier[0] == "pacerelle" for identifier in device["identifiers"])
        and device["model"] == "Agent"
    ]
    sensors = page.get_by_text("Sensors", exact=True)
    await open_page(page, f"{base_url}/config/devices/device/{agent['id']}", sensors)
    # Tall enough for the Diagnostic card (the connection); the icons loaded.
    await page.set_viewport_size(DEVICE_PAGE_VIEWPORT)
    await page.wait_for_load_state("networkidle")
    await shots.take(page, "device-page")
    await _code_name_is_whole(page, shots)
    # The trust and block actions the device offers to automations and scripts.
    actions = await frontend_call(
        page, {"type": "device_automation/action/list", "device_id": agent["id"]}
    )
    assert {action["type"] for action in actions if action["domain"] == "pacerelle"} >= {
        "trust_device",
        "block_device",
    }


async def _code_name_is_whole(page: Page, shots: Screenshots) -> None:
    """The Code sensor's name is not cut beside its long value, on a desktop and a phone."""
    name = page.get_by_text(CODE_NAME, exact=True)
    for width in CODE_VIEWPORT_WIDTHS:
        await page.set_viewport_size({"width": width, "height": 900})
        whole = await _scrolled_and_whole(name)
        await shots.take(page, f"device-page-code-{width}")
        assert whole, width
    await page.set_viewport_size(VIEWPORT)


async def _scrolled_and_whole(name: Locator) -> bool:
    """Whether the name's text fits its box (ellipsis cuts a name wider than its box), with
    it scrolled into view, in one step: the card is drawn again after a resize, and an
    element found before that is gone ("not attached to the DOM")."""
    for _ in range(10):
        await expect(name).to_be_visible()
        with contextlib.suppress(PlaywrightError):
            return bool(
                await name.evaluate(
                    "node => { node.scrollIntoView({block: 'center'});"
                    " return node.scrollWidth <= node.clientWidth; }"
                )
            )
    raise AssertionError("the Code sensor's name kept being drawn again")


async def test_trust_repair_in_the_frontend_then_the_device_answers(
    browser: Browser, tmp_path: Path, socket_enabled: None
) -> None:
    shots = Screenshots(ARTIFACTS / "trust_repair")
    async with (
        running_emulator() as emulator,
        running_home_assistant(tmp_path / "config") as base_url,
        browser_page(browser, shots, viewport=VIEWPORT) as page,
    ):
        await add_integration(page, base_url, emulator, shots)
        [installation] = await emulator.admin("GET", "/installations")
        agent_id, owner = installation["agent_id"], installation["owner_id"]
        conversation = installation["conversation_id"]
        await emulator.wait_agent(agent_id, lambda status: status["connected"])

        # Device 1 first (trusted on first use), then a device with a key of its own.
        await emulator.send(conversation, text="hello from my phone")
        await emulator.send(conversation, text="hello from a new device", device_id="2")
        issues = await _wait_issues(page, 1)
        await asyncio.sleep(0.5)  # a second issue (device 1, or a duplicate) would show now
        assert await _pacerelle_issues(page) == issues
        [issue] = issues
        assert issue.endswith(f"_{owner}_2")
        devices = await emulator.admin("GET", f"/users/{owner}/devices")
        code = next(str(d["verification_code"]) for d in devices if d["device_id"] == "2")

        await _keep_in_repairs(page, base_url, code, shots)
        assert await _pacerelle_issues(page) == issues  # the device stays decidable
        await _trust_in_repairs(page, base_url, code, shots)
        assert await _pacerelle_issues(page) == []

        token = await page.evaluate("JSON.parse(localStorage.hassTokens).access_token")
        async with aiohttp.ClientSession() as session:
            asked = asyncio.create_task(_ask(session, base_url, token))
            question = await _question_on_device(emulator, conversation)
            await emulator.send(
                conversation,
                device_id="2",
                widget_response={"ref": question["id"], "value": True},
            )
            answer = await asyncio.wait_for(asked, ANSWER_WITHIN)
        assert (answer["status"], answer["value"], answer["sender_device_id"]) == (
            "answered",
            True,
            "2",
        )

        await _agent_device_page(page, base_url, shots)
    shots.publish(
        {"repair-dialog": "trust-1-repair-dialog.png", "device-page": "trust-2-device-page.png"}
    )


async def _ask(session: aiohttp.ClientSession, base_url: str, token: str) -> dict[str, Any]:
    """pacerelle.ask through the REST API, as a script elsewhere would call it."""
    async with session.post(
        f"{base_url}/api/services/pacerelle/ask?return_response",
        json={"kind": "confirm", "title": "Open the garage?", "timeout": 30},
        headers={"Authorization": f"Bearer {token}"},
    ) as response:
        assert response.status == 200, await response.text()
        body: dict[str, Any] = await response.json()
    answer: dict[str, Any] = body["service_response"]
    return answer


async def _question_on_device(emulator: EmulatorHandle, conversation: str) -> dict[str, Any]:
    async with asyncio.timeout(ANSWER_WITHIN):
        while True:
            widgets = [
                item
                for item in await emulator.inbox(conversation)
                if item.get("kind") == "widget.standard"
            ]
            if widgets:
                payload: dict[str, Any] = widgets[-1]["payload"]
                return payload
            await asyncio.sleep(0.2)
