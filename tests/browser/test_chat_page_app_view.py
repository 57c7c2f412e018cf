"""The chat page shows what Pacerelle's app shows (issue 15, item 6), in headless Chromium.

Verification codes of the agent and of each device (equal to the integration's), a
`danger` confirm styled as dangerous, the label of the chosen answer, a picture inline,
the copy button's feedback, and the connection key cleared once a request spent it.
"""

import base64
import io
import json
import os
import uuid

from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from playwright.async_api import Browser, expect

from custom_components.pacerelle.client.signal.identity import verification_code
from tests.browser.chat_page import create_connect_key, next_message, start_request
from tests.browser.chromium import ARTIFACTS, STEP_TIMEOUT_MS, PageProblems, Screenshots
from tests.helpers.emulator import EmulatorHandle

UNLOCK_TITLE = "Unlock the front door?"


def _png() -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (40, 30), (200, 40, 40)).save(buffer, format="PNG")
    return buffer.getvalue()


async def test_chat_page_shows_codes_labels_pictures_and_spent_keys(
    browser: Browser, emulator: EmulatorHandle
) -> None:
    shots = Screenshots(ARTIFACTS / "chat_page_app_view")
    context = await browser.new_context(
        viewport={"width": 1200, "height": 800},
        permissions=["clipboard-read", "clipboard-write"],
    )
    context.set_default_timeout(STEP_TIMEOUT_MS)
    expect.set_options(timeout=STEP_TIMEOUT_MS)
    page = await context.new_page()
    problems = PageProblems(page)
    installed = await emulator.install(name="Home Assistant")
    agent = await emulator.agent(installed)
    await agent.connect()
    try:
        await page.goto(emulator.base_url + "/")
        connect_key = await create_connect_key(page)
        copy = page.locator("#copy-key")
        await copy.click()
        await expect(copy).to_have_text("Copied ✓")
        assert await page.evaluate("navigator.clipboard.readText()") == connect_key
        await expect(copy).to_have_text("Copy")
        # Home Assistant spends the key: the page drops it.
        await start_request(emulator, connect_key)
        await expect(page.locator("#key-used")).to_be_visible()
        await expect(page.locator("#key-box")).to_be_hidden()
        assert connect_key not in await page.content()
        await shots.take(page, "key-spent")

        status = await emulator.admin("GET", f"/agents/{installed.agent_id}")
        agent_code = verification_code(base64.b64decode(status["identity_key"]))
        listed = page.locator("#agents li", has_text=installed.agent_id)
        await expect(listed).to_contain_text(agent_code)
        await listed.get_by_role("link").click()
        codes = page.locator("#codes")
        await expect(codes).to_contain_text(agent_code)
        await expect(codes).to_contain_text("gets its key with its first message")

        await page.locator("#text").fill("unlock")
        await page.get_by_role("button", name="Send").click()
        envelope, _ = await next_message(agent)
        devices = await emulator.admin("GET", f"/users/{installed.owner_id}/devices")
        device_code = verification_code(base64.b64decode(devices[0]["identity_key"]))
        await expect(codes).to_contain_text(device_code)

        widget_id = str(uuid.uuid4())
        widget = {
            "type": "widget.standard",
            "id": widget_id,
            "v": 1,
            "kind": "confirm",
            "spec": {
                "title": UNLOCK_TITLE,
                "danger": True,
                "labels": {"yes": "Unlock", "no": "Keep it locked"},
            },
        }
        await agent.reply(envelope, json.dumps(widget))
        box = page.locator(".widget", has_text=UNLOCK_TITLE)
        unlock = box.get_by_role("button", name="Unlock")
        await expect(unlock).to_have_class("danger")
        red = await unlock.evaluate("node => getComputedStyle(node).backgroundColor")
        assert red == "rgb(198, 40, 40)"
        await shots.take(page, "danger-confirm")
        await unlock.click()
        _, plaintext = await next_message(agent)
        assert json.loads(plaintext)["value"] is True
        await expect(box).to_contain_text("Answered: Unlock")
        await expect(page.locator(".bubble.out", has_text="Answered: Unlock")).to_be_visible()

        # A snapshot as the integration sends it: a chat.message with an encrypted file.
        png = _png()
        key, iv = os.urandom(32), os.urandom(12)
        upload = await emulator.call(
            "POST",
            "/agent/blobs",
            data=AESGCM(key).encrypt(iv, png, None),
            headers={
                "Authorization": f"Bearer {agent.token}",
                "Content-Type": "application/octet-stream",
            },
        )
        message = {
            "kind": "chat.message",
            "text": "Someone rang.",
            "attachments": [
                {
                    "id": "snapshot",
                    "name": "front_door.png",
                    "mime": "image/png",
                    "size": len(png),
                    "blob_id": upload["id"],
                    "key_b64": base64.b64encode(key).decode(),
                    "iv_b64": base64.b64encode(iv).decode(),
                }
            ],
        }
        await agent.reply(envelope, json.dumps(message))
        picture = page.locator(".bubble.in img.inline-image")
        await expect(picture).to_have_attribute("alt", "front_door.png")
        assert await picture.evaluate("node => node.complete && node.naturalWidth") == 40
        await expect(page.locator(".bubble.in a", has_text="front_door.png")).to_be_visible()
        await shots.take(page, "answered")
    finally:
        await agent.close()
        await context.close()
    assert problems.seen == []
