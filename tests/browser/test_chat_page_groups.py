"""The chat page plays several members of a group, with the reference agent behind it.

The person picks the group, sets User to another member and writes; the agent reads it
with that member's sender key and answers the group; the answer shows for each member the
page switches to, and each sees only what they sent themselves.
"""

from playwright.async_api import Browser, Dialog, expect

from tests.browser.chromium import ARTIFACTS, STEP_TIMEOUT_MS, PageProblems, Screenshots
from tests.emulator.reference_groups import (
    fetch_key_envelopes,
    open_group_message,
    open_key_envelopes,
    seal_group_message,
)
from tests.helpers.emulator import EmulatorHandle


async def test_a_person_makes_a_group_and_plays_two_of_its_members(
    browser: Browser, emulator: EmulatorHandle
) -> None:
    shots = Screenshots(ARTIFACTS / "chat_page_groups")
    installed = await emulator.install()
    agent = await emulator.agent(installed)
    await agent.connect()
    context = await browser.new_context(viewport={"width": 1200, "height": 800})
    context.set_default_timeout(STEP_TIMEOUT_MS)
    expect.set_options(timeout=STEP_TIMEOUT_MS)
    page = await context.new_page()
    problems = PageProblems(page)
    try:
        await page.goto(emulator.base_url + "/")
        # The group is made on the page, with the connected agent, and a member added.
        await expect(page.locator("#agents li", has_text=installed.agent_id)).to_be_visible()
        await page.locator("#group-name").fill("Family")
        await page.locator("#group-members").fill("usr_demo, usr_ana")
        await page.get_by_role("button", name="Create group").click()
        listed = page.locator("#groups li", has_text="Family")
        await expect(listed).to_contain_text("usr_demo, usr_ana")
        [group] = await emulator.admin("GET", "/groups")
        group_id = group["conversation_id"]
        assert group["agent_ids"] == [installed.agent_id]
        await listed.get_by_role("link", name="Family").click()
        await page.locator("#user").fill("usr_ana")
        await expect(page.locator("#chat-title")).to_contain_text("as usr_ana")
        await page.locator("#text").fill("Who took the car?")
        await page.get_by_role("button", name="Send").click()
        envelope = await agent.frame()
        assert (envelope["from"], envelope["to"]) == ("usr_ana", f"group:{group_id}")
        keys = open_key_envelopes(agent, await fetch_key_envelopes(emulator, agent, group_id))
        assert open_group_message(keys, envelope) == "Who took the car?"
        await agent.ack(envelope)
        assert agent.ws is not None
        await agent.ws.send_json(
            {
                "type": "MSG",
                "id": "m-answer",
                "conversation_id": group_id,
                "to": f"group:{group_id}",
                "payload_b64": seal_group_message(keys, group_id, "Ben did, at nine"),
                "encrypted": True,
            }
        )
        await expect(page.locator(".bubble.in", has_text="Ben did, at nine")).to_be_visible()
        await expect(page.locator(".bubble.out", has_text="Who took the car?")).to_be_visible()
        await shots.take(page, "as-ana")

        await page.locator("#user").fill("usr_demo")
        await expect(page.locator("#chat-title")).to_contain_text("as usr_demo")
        await expect(page.locator(".bubble.in", has_text="Ben did, at nine")).to_be_visible()
        await expect(page.locator(".bubble.out")).to_have_count(0)
        await shots.take(page, "as-owner")

        # A member is added on the page too (a new epoch of the group's keys).
        # Its prompt is answered (PageProblems dismisses any other dialog as a problem).
        async def new_member(dialog: Dialog) -> None:
            assert dialog.type == "prompt"
            await dialog.accept("usr_ben")

        page.remove_listener("dialog", problems.on_dialog)
        page.once("dialog", new_member)
        await listed.get_by_role("button", name="Add member").click()
        await expect(listed).to_contain_text("usr_demo, usr_ana, usr_ben")
        page.on("dialog", problems.on_dialog)
        assert problems.seen == []
    finally:
        await context.close()
        await agent.close()
