"""A person uses the emulator's chat page in headless Chromium, with a real agent behind it.

The emulator runs in this process; the agent is the reference agent (native libsignal).
The page creates a connection key, Home Assistant's side of Agent Connect is played with
plain HTTP calls using that key, the person approves in the page's Requests list, picks
the agent, sends a text, sees the agent's answer and its confirm widget as buttons, and
answers Yes. The agent must get the text and the widget.response decrypted. Screenshots
of each step go to tests/artifacts/browser/chat_page/<run>/.
"""

import json
import uuid

from playwright.async_api import Browser, Route, expect

from tests.browser.chat_page import (
    AGENT_DESCRIPTION,
    AGENT_NAME,
    create_connect_key,
    exchange,
    next_message,
    start_request,
)
from tests.browser.chromium import ARTIFACTS, STEP_TIMEOUT_MS, PageProblems, Screenshots
from tests.emulator.reference_agent import ReferenceAgent
from tests.helpers.emulator import REDIRECT_URI, EmulatorHandle

QUESTION = "Is the oven still on?"
ANSWER = "It is. Shall I turn it off?"
WIDGET_TITLE = "Turn the oven off?"
POLL_MS = 1000  # chat.js refreshes the lists and the conversation this often


async def _back_in_home_assistant(route: Route) -> None:
    # No Home Assistant here: the approval's redirect lands on a stand-in page.
    await route.fulfill(content_type="text/html", body="<p>Back in Home Assistant</p>")


async def test_chat_page_with_the_reference_agent(
    browser: Browser, emulator: EmulatorHandle
) -> None:
    shots = Screenshots(ARTIFACTS / "chat_page")
    context = await browser.new_context(
        viewport={"width": 1200, "height": 800},
        permissions=["clipboard-read", "clipboard-write"],
    )
    context.set_default_timeout(STEP_TIMEOUT_MS)
    expect.set_options(timeout=STEP_TIMEOUT_MS)
    await context.route(REDIRECT_URI + "?*", _back_in_home_assistant)
    page = await context.new_page()
    problems = PageProblems(page)
    agent: ReferenceAgent | None = None
    try:
        await page.goto(emulator.base_url + "/")
        await expect(page.get_by_text("No agent yet.")).to_be_visible()
        # Nothing to write to before an agent is picked.
        await expect(page.locator("#composer")).to_be_hidden()
        await shots.take(page, "empty")

        connect_key = await create_connect_key(page)
        assert connect_key in emulator.emulator.state.connect_keys
        await page.get_by_role("button", name="Copy").click()
        assert await page.evaluate("navigator.clipboard.readText()") == connect_key
        await shots.take(page, "connection-key")

        started = await start_request(emulator, connect_key)
        request = page.locator("#requests li", has_text=AGENT_NAME)
        await expect(request).to_contain_text(AGENT_DESCRIPTION)
        await shots.take(page, "request")
        # The page polls every second; a list that did not change must keep its buttons,
        # or a click landing during a rebuild is lost.
        approve = await request.get_by_role("button", name="Approve").element_handle()
        await page.wait_for_timeout(POLL_MS + 200)
        assert await approve.evaluate("node => node.isConnected")
        async with context.expect_page() as opened:
            await request.get_by_role("button", name="Approve").click()
        callback = await opened.value
        await expect(callback.get_by_text("Back in Home Assistant")).to_be_visible()
        await callback.close()
        await expect(page.get_by_text("No request waiting.")).to_be_visible()
        installed = await exchange(emulator, started, callback.url)

        agent = await emulator.agent(installed)
        await agent.connect()
        listed = page.locator("#agents li", has_text=AGENT_NAME)
        await expect(listed.locator(".dot.on")).to_be_visible()
        await expect(listed).to_contain_text(installed.agent_id)
        await shots.take(page, "agent-online")

        await listed.get_by_role("link", name=AGENT_NAME).click()
        await expect(page.locator("#chat-title")).to_contain_text(installed.conversation_id)
        await expect(page.locator("#composer")).to_be_visible()
        await page.locator("#text").fill(QUESTION)
        await page.get_by_role("button", name="Send").click()
        envelope, plaintext = await next_message(agent)
        assert envelope["encrypted"] is True
        assert plaintext == QUESTION
        await expect(page.locator(".bubble.out", has_text=QUESTION)).to_be_visible()
        await shots.take(page, "question-sent")

        widget_id = str(uuid.uuid4())
        widget = {
            "type": "widget.standard",
            "id": widget_id,
            "v": 1,
            "kind": "confirm",
            "spec": {"title": WIDGET_TITLE, "labels": {"yes": "Yes", "no": "No"}},
        }
        await agent.reply(envelope, ANSWER)
        await agent.reply(envelope, json.dumps(widget))
        await expect(page.locator(".bubble.in", has_text=ANSWER)).to_be_visible()
        box = page.locator(".bubble.in .widget", has_text=WIDGET_TITLE)
        await expect(box.get_by_role("button")).to_have_text(["Yes", "No", "Cancel"])
        await shots.take(page, "answer-and-widget")

        await box.get_by_role("button", name="Yes").click()
        envelope, plaintext = await next_message(agent)
        response = json.loads(plaintext)
        assert response["type"] == "widget.response"
        assert response["ref"] == widget_id
        assert response["value"] is True
        assert "cancelled" not in response
        await expect(box).to_contain_text("Answered: Yes")
        await expect(box.get_by_role("button")).to_have_count(0)
        await shots.take(page, "widget-answered")

        # Both answers reached the person's device with a valid history record.
        inbox = await emulator.inbox(installed.conversation_id)
        assert [entry["kind"] for entry in inbox] == ["text", "widget.standard"]
        assert {entry["history"] for entry in inbox} == {"valid"}
    except Exception:
        await shots.take(page, "failure")
        raise
    finally:
        if agent is not None:
            await agent.close()
        await context.close()
    assert problems.seen == []
