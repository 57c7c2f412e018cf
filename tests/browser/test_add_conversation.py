"""A person names a group on the integration's page ("Add conversation"), in Chromium.

A real `hass` with Pacerelle added through the frontend (as test_add_integration does), the
emulator in this process with a group of three (the owner, Ana and Ben, two phones each).
The owner writes first from a phone (trusted on first use), Ana writes in the group; the
integration's page offers "Add conversation", its list shows the group with its members'
ids and when it was last active; named "Family", the subentry shows on the page and
`notify.family` appears, and `notify.send_message` on it, called through Home Assistant's
REST API, reaches every member's phone. Deleted on the page, only its entity goes: the
agent's own entities stay, and its notify entity still reaches the owner.
Screenshots: tests/artifacts/browser/add_conversation/<run>/; with
PACERELLE_PUBLISH_IMAGES=1 the picked group, the page and the new entity become README's
"Named conversations" images.
"""

import asyncio
import re
from pathlib import Path
from typing import Any

import aiohttp
from playwright.async_api import Browser, Page, expect

from tests.browser.chromium import ARTIFACTS, Screenshots, browser_page
from tests.browser.home_assistant import running_home_assistant
from tests.browser.pages import add_integration, frontend_call, open_integration_page, open_page
from tests.helpers.emulator import EmulatorHandle, running_emulator

# The whole test, Home Assistant's start included, on 2 loaded cores; within it each step
# has its own bound (STEP_TIMEOUT_MS). Cancelled inside, so Home Assistant is still stopped.
TEST_TIMEOUT = 300.0
SEEN_WITHIN = 30.0
DELIVERED_WITHIN = 30.0
VIEWPORT = {"width": 1200, "height": 900}
PEOPLE = ("usr_ana", "usr_ben")
DEVICES = ("1", "2")
ENTITY_ID = "notify.family"
FAMILY_ENTITIES = {ENTITY_ID, "event.family_messages", "sensor.family_members"}
# The agent's own notify entity: the flow's suggested name, "Home Assistant".
OWNER_ENTITY_ID = "notify.home_assistant"


class Api:
    """Home Assistant's REST API as a script elsewhere calls it, with the person's token."""

    def __init__(self, session: aiohttp.ClientSession, base_url: str, token: str) -> None:
        self.session, self.base_url = session, base_url
        self.headers = {"Authorization": f"Bearer {token}"}

    async def call(self, domain: str, service: str, data: dict[str, Any], *, answer: bool) -> Any:
        query = "?return_response" if answer else ""
        url = f"{self.base_url}/api/services/{domain}/{service}{query}"
        async with self.session.post(url, json=data, headers=self.headers) as response:
            assert response.status == 200, await response.text()
            return await response.json()

    async def notify(self, entity_id: str, message: str) -> None:
        data = {"entity_id": entity_id, "message": message}
        await self.call("notify", "send_message", data, answer=False)


async def _family_group(
    emulator: EmulatorHandle, installation: dict[str, Any]
) -> tuple[str, list[str]]:
    """The owner, Ana and Ben, two phones each, in a group with the agent; (id, members)."""
    members = [str(installation["owner_id"]), *PEOPLE]
    for member in members:
        for device_id in DEVICES:
            await emulator.admin("POST", f"/users/{member}/devices", {"device_id": device_id})
    body = {"name": "Family", "members": members, "agent_ids": [installation["agent_id"]]}
    created = await emulator.admin("POST", "/groups", body)
    return str(created["conversation_id"]), members


async def _wait_seen(api: Api, message_id: str) -> None:
    """Until the agent holds the message (pending, or in its history once handled)."""
    async with asyncio.timeout(SEEN_WITHIN):
        while True:
            status = await api.call("pacerelle", "get_status", {}, answer=True)
            history = await api.call("pacerelle", "get_history", {}, answer=True)
            held = status["service_response"]["pending_requests"]
            held += history["service_response"]["requests"]
            if any(item["message_id"] == message_id for item in held):
                return
            await asyncio.sleep(0.25)


async def _name_the_group(
    page: Page, base_url: str, group_id: str, members: list[str], shots: Screenshots
) -> None:
    """ "Add conversation" on the integration's page: the group listed, picked, named."""
    # The agent's own device listed: the page has its entry.
    await open_integration_page(page, base_url, "Home Assistant")
    await page.get_by_role("button", name="Add conversation").click()
    dialog = page.locator("dialog-data-entry-flow")
    await expect(dialog.get_by_text("Pick a conversation the agent takes part in")).to_be_visible()
    await dialog.get_by_label("Conversation").click()
    # The group as the list shows it: its members, when it was last active, its id.
    option = page.get_by_text(f" · {group_id}")
    await expect(option).to_be_visible()
    listed = await option.inner_text()
    assert all(member in listed for member in members), listed
    assert re.search(r"· \d{4}-\d\d-\d\d \d\d:\d\d UTC · ", listed), listed
    await shots.take(page, "conversation-list")
    await option.click()
    await expect(option).to_be_hidden()
    # Typed once the list closed: filled while it closes, the name was lost.
    name = dialog.get_by_role("textbox", name="Name")
    await name.click()
    await name.press_sequentially("Family")
    await expect(name).to_have_value("Family")
    await dialog.get_by_role("button", name="Submit").click()
    await expect(dialog.get_by_text("Created configuration for Family")).to_be_visible()
    await dialog.get_by_role("button", name="Finish").click()
    await expect(dialog.get_by_text("Created configuration for Family")).to_be_hidden()
    # The subentry's row (with a device of its own, its device is named so too).
    await expect(page.get_by_text("Family", exact=True).first).to_be_visible()
    await page.wait_for_function(
        "id => document.querySelector('home-assistant').hass.states[id] !== undefined",
        arg=ENTITY_ID,
    )
    await shots.take(page, "conversation-on-page")


async def _entity_settings(page: Page, base_url: str, shots: Screenshots) -> None:
    """The new entity among the entities, its settings showing `notify.family`."""
    search = page.get_by_placeholder(re.compile(r"^Search \d+ entities"))
    await open_page(page, f"{base_url}/config/entities", search)
    await search.fill(ENTITY_ID)
    # The entity's row, not a device group's heading; the agent's own entities filtered out.
    row = page.get_by_role("row").filter(has_text="Family").filter(has_text="Pacerelle").first
    await expect(row).to_be_visible()
    await expect(page.get_by_role("row").filter(has_text="Connection")).to_have_count(0)
    await row.get_by_text("Family", exact=True).first.click()
    await page.get_by_role("button", name="Settings").click()
    # The field holds the object id; the domain `notify.` is shown before it.
    object_id = ENTITY_ID.removeprefix("notify.")
    await expect(page.get_by_role("textbox", name="Entity ID")).to_have_value(object_id)
    await shots.take(page, "conversation-entity")


async def _pacerelle_entities(page: Page) -> set[str]:
    """The integration's entity ids, from the entity registry."""
    entities = await frontend_call(page, {"type": "config/entity_registry/list"})
    return {item["entity_id"] for item in entities if item["platform"] == "pacerelle"}


async def _delete_the_name(page: Page, base_url: str, shots: Screenshots) -> None:
    """Deleted on the page: its device and entities go, the agent's own stay."""
    before = await _pacerelle_entities(page)
    assert ENTITY_ID in before
    await open_integration_page(page, base_url, "Family")
    subentry = page.locator("ha-config-sub-entry-row").filter(has_text="Family")
    # The subentry's own menu, first: its device's row (inside it) has one too.
    await subentry.get_by_role("button", name="Menu").first.click()
    await shots.take(page, "subentry-menu")
    await page.get_by_role("menuitem", name="Delete").click()
    await expect(page.get_by_role("heading", name="Delete Family?")).to_be_visible()
    await shots.take(page, "subentry-delete")
    await page.get_by_role("button", name="Delete", exact=True).click()
    await expect(subentry).to_have_count(0)
    await page.wait_for_function(
        "id => document.querySelector('home-assistant').hass.states[id] === undefined",
        arg=ENTITY_ID,
    )
    # The conversation's device and entities go; the agent's stay (its notify among them).
    assert await _pacerelle_entities(page) == before - FAMILY_ENTITIES
    assert OWNER_ENTITY_ID in before
    await shots.take(page, "subentry-deleted")


async def test_a_group_is_named_on_the_integration_page(
    browser: Browser, tmp_path: Path, socket_enabled: None
) -> None:
    shots = Screenshots(ARTIFACTS / "add_conversation")
    async with (
        asyncio.timeout(TEST_TIMEOUT),
        running_emulator() as emulator,
        running_home_assistant(tmp_path / "config") as base_url,
        browser_page(browser, shots, viewport=VIEWPORT) as page,
    ):
        await add_integration(page, base_url, emulator, shots)
        [installation] = await emulator.admin("GET", "/installations")
        await emulator.wait_agent(installation["agent_id"], lambda s: s["connected"])
        group_id, members = await _family_group(emulator, installation)
        token = await page.evaluate("JSON.parse(localStorage.hassTokens).access_token")
        async with aiohttp.ClientSession() as session:
            api = Api(session, base_url, token)
            # The owner's phone first (trusted on first use), then Ana in the group.
            await emulator.send(installation["conversation_id"], text="hello")
            written = await emulator.send(group_id, text="Who is home?", user_id=PEOPLE[0])
            await _wait_seen(api, written)
            await _name_the_group(page, base_url, group_id, members, shots)
            await _entity_settings(page, base_url, shots)

            # notify.send_message on it, as an automation calls it: every member's phone.
            await api.notify(ENTITY_ID, "Dinner is ready")
            entries = await emulator.wait_inbox(
                group_id, len(members) * len(DEVICES), within=DELIVERED_WITHIN
            )
            assert sorted((e["user_id"], e["device_id"]) for e in entries) == sorted(
                (member, device_id) for member in members for device_id in DEVICES
            )
            assert {e["text"] for e in entries} == {"Dinner is ready"}

            await _delete_the_name(page, base_url, shots)
            # The agent's sessions stay: its own notify entity still reaches the owner.
            await api.notify(OWNER_ENTITY_ID, "Still here")
            direct = installation["conversation_id"]
            [still] = await emulator.wait_inbox(direct, 1, within=DELIVERED_WITHIN)
            assert still["text"] == "Still here"
    shots.publish(
        {
            "conversation-list": "conversations-1-add-conversation.png",
            "conversation-on-page": "conversations-2-integration-page.png",
            "conversation-entity": "conversations-3-notify-entity.png",
        }
    )
