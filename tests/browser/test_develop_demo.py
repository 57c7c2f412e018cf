"""README's "Quick start" as a newcomer follows it, in headless Chromium, on `scripts/develop`.

A fresh `scripts/develop --config DIR --ha-port <free> --emulator-port <free>` (the
script itself, as a process group of its own) comes up on the chosen port without any
confirmation or repair. The person onboards, creates a connection key on the chat page,
adds Pacerelle in the frontend and approves. The preferred voice assistant hears and
speaks with the demo's engines (espeak-ng answers an MP3). README's "Answer status" and
doorbell automations are saved through the automation editor's API. A message on the chat page is
answered; Home Assistant is restarted from its UI, scripts/develop restarts it and keeps
the emulator; the demo goes on: the next message is answered and the doorbell sends the
demo camera's snapshot, shown inline on the chat page. Ctrl-C stops everything.
Screenshots: tests/artifacts/browser/develop_demo/<run>/; with PACERELLE_PUBLISH_IMAGES=1
the chat page's two become README's Quick start images.
"""

import asyncio
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from playwright.async_api import Browser, Page, expect

from custom_components.pacerelle.voice.formats import MP3, sniff_voice_format
from tests.browser.chat_page import create_connect_key
from tests.browser.chromium import ARTIFACTS, STEP_TIMEOUT_MS, Screenshots
from tests.browser.home_assistant import free_port
from tests.browser.pages import onboard, open_page
from tests.helpers.develop import script_module

develop_ports = script_module("develop_ports")

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
# Home Assistant's first start with default_config, and a restart; generous for 2 cores.
START_TIMEOUT = 240.0
RESTART_TIMEOUT = 180.0
STOP_TIMEOUT = 30.0
ANSWER_TIMEOUT_MS = 30_000
# The demo lends its speech engines to the preferred voice assistant once started.
VOICE_WITHIN = 60.0
DEMO_ENGINE = "pacerelle_demo"
READY = "develop: ready."
RESTARTING = "develop: Home Assistant asked for a restart"
# 127.0.0.1 as /proc/net/tcp writes it.
LOOPBACK = "0100007F"
# A person reads the console: it stays short.
MAX_CONSOLE_LINES = 12


@dataclass
class Develop:
    """A running scripts/develop: its URLs, its process and its console output so far."""

    process: asyncio.subprocess.Process
    console: Path
    config: Path
    ha_url: str
    chat_url: str

    def text(self) -> str:
        return self.console.read_text(errors="replace")

    async def wait_for(self, needle: str, count: int, within: float) -> None:
        async with asyncio.timeout(within):
            while self.text().count(needle) < count:
                assert self.process.returncode is None, f"develop exited:\n{self.text()}"
                await asyncio.sleep(0.25)


@asynccontextmanager
async def running_develop(config: Path, console: Path) -> AsyncIterator[Develop]:
    ha_port, emulator_port = free_port(), free_port()
    with console.open("wb") as output:
        process = await asyncio.create_subprocess_exec(
            str(ROOT / "scripts" / "develop"),
            "--config",
            str(config),
            "--ha-port",
            str(ha_port),
            "--emulator-port",
            str(emulator_port),
            stdout=output,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,  # its own group: Ctrl-C reaches it as from a terminal
        )
    develop = Develop(
        process,
        console,
        config,
        f"http://127.0.0.1:{ha_port}",
        f"http://127.0.0.1:{emulator_port}",
    )
    try:
        yield develop
    finally:
        if process.returncode is None:
            os.killpg(process.pid, signal.SIGINT)
            try:
                await asyncio.wait_for(process.wait(), STOP_TIMEOUT)
            except TimeoutError:
                os.killpg(process.pid, signal.SIGKILL)
                await process.wait()
        print(f"scripts/develop console:\n{develop.text()}", file=sys.stderr)


def keep_logs(develop: Develop, directory: Path) -> None:
    """The console and the log files next to the screenshots, for a failing run."""
    shutil.copyfile(develop.console, directory / "console.txt")
    for name in ("home-assistant.log", "home-assistant.log.1", "pacerelle-emulator.log"):
        with contextlib.suppress(FileNotFoundError):
            shutil.copyfile(develop.config / name, directory / name)


def readme_automation(heading: str) -> dict[str, Any]:
    """The YAML block under README's `### heading`, as the automation editor saves it."""
    text = README.read_text()
    section = text[text.index(f"### {heading}") :]
    block = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert block is not None
    automation: dict[str, Any] = yaml.safe_load(block.group(1))
    return automation


class HomeAssistantRest:
    """REST calls with the browser's own access token, as the frontend makes them."""

    def __init__(self, session: aiohttp.ClientSession, base_url: str, token: str) -> None:
        self.session, self.base_url = session, base_url
        self.headers = {"Authorization": f"Bearer {token}"}

    async def call(self, method: str, path: str, body: Any = None) -> Any:
        async with self.session.request(
            method, self.base_url + path, json=body, headers=self.headers
        ) as response:
            assert response.status < 400, f"{method} {path}: {await response.text()}"
            return await response.json()

    async def wait_running(self, within: float) -> None:
        async with asyncio.timeout(within):
            while True:
                if (await self.call("GET", "/api/config"))["state"] == "RUNNING":
                    return
                await asyncio.sleep(0.5)


async def _demo_voice(
    page: Page, rest: HomeAssistantRest, session: aiohttp.ClientSession, ha_url: str
) -> None:
    """The preferred voice assistant hears and speaks with the demo's engines, and the
    text-to-speech (espeak-ng) speaks in this Home Assistant: an MP3 of the sentence."""
    async with asyncio.timeout(VOICE_WITHIN):
        while True:
            listed = await page.evaluate(
                "() => document.querySelector('home-assistant').hass.connection"
                ".sendMessagePromise({type: 'assist_pipeline/pipeline/list'})"
            )
            [preferred] = [
                pipeline
                for pipeline in listed["pipelines"]
                if pipeline["id"] == listed["preferred_pipeline"]
            ]
            if preferred["tts_engine"] is not None:
                break
            await asyncio.sleep(0.5)
    assert (preferred["stt_engine"], preferred["tts_engine"]) == (DEMO_ENGINE, DEMO_ENGINE)
    spoken = await rest.call(
        "POST",
        "/api/tts_get_url",
        {"engine_id": DEMO_ENGINE, "message": "Turned on the light", "cache": False},
    )
    async with session.get(ha_url + spoken["path"]) as response:
        assert response.status == 200
        audio = await response.read()
    assert len(audio) > 4096
    assert sniff_voice_format(audio) is MP3


async def _add_pacerelle(page: Page, chat: Page, develop: Develop, shots: Screenshots) -> None:
    connect_key = await create_connect_key(chat)
    copy = chat.locator("#copy-key")
    await copy.click()
    await expect(copy).to_have_text("Copied ✓")
    await shots.take(chat, "chat-connection-key")

    add = page.get_by_text("Add integration", exact=True)
    await open_page(page, f"{develop.ha_url}/config/integrations/dashboard", add)
    await add.click()
    await page.get_by_placeholder("Search for a brand name").fill("Pacerelle")
    await page.get_by_text("Pacerelle", exact=True).click()
    await page.locator("input[name=connection_key]").fill(connect_key)
    await shots.take(page, "connection-key-form")
    async with page.context.expect_page() as opened:
        await page.get_by_role("button", name="Submit").click()
    approval = await opened.value
    await expect(approval.get_by_text("Connect an agent")).to_be_visible()
    await shots.take(approval, "approval-page")
    async with approval.expect_event("close", timeout=STEP_TIMEOUT_MS):
        await approval.get_by_role("button", name="Approve").click()
    await page.get_by_role("button", name=re.compile(r"^(Skip and finish|Finish)$")).click()
    # The chat page forgets the spent key, and asks for no approval once it is given.
    await expect(chat.locator("#key-used")).to_be_visible()
    await expect(chat.locator("#approve-below")).to_be_hidden()


async def _restart_from_the_ui(page: Page, develop: Develop, shots: Screenshots) -> None:
    restart = page.get_by_role("button", name="Restart Home Assistant")
    await open_page(page, f"{develop.ha_url}/config/system", restart)
    await restart.click()
    await page.get_by_text("Interrupts all running automations and scripts.").click()
    await shots.take(page, "restart-confirm")
    await page.get_by_role("button", name="Restart", exact=True).click()


async def _ask_status(chat: Page, count: int) -> None:
    await chat.locator("#text").fill("status")
    await chat.get_by_role("button", name="Send").click()
    answers = chat.locator(".bubble.in", has_text="Front door: locked.")
    await expect(answers).to_have_count(count, timeout=ANSWER_TIMEOUT_MS)


async def test_try_it_on_scripts_develop(
    browser: Browser, tmp_path: Path, socket_enabled: None
) -> None:
    shots = Screenshots(ARTIFACTS / "develop_demo")
    config = tmp_path / "config"
    async with (
        running_develop(config, tmp_path / "console.txt") as develop,
        aiohttp.ClientSession() as session,
    ):
        await develop.wait_for(READY, 1, START_TIMEOUT)
        _assert_loopback_only(int(develop.ha_url.rpartition(":")[2]))
        context = await browser.new_context(
            viewport={"width": 1200, "height": 800},
            permissions=["clipboard-read", "clipboard-write"],
        )
        context.set_default_timeout(STEP_TIMEOUT_MS)
        expect.set_options(timeout=STEP_TIMEOUT_MS)
        page = await context.new_page()
        chat = await context.new_page()
        try:
            await onboard(page, develop.ha_url, shots)
            await chat.goto(develop.chat_url + "/")
            await _add_pacerelle(page, chat, develop, shots)
            token = await page.evaluate("JSON.parse(localStorage.hassTokens).access_token")
            rest = HomeAssistantRest(session, develop.ha_url, token)

            # No trial of the HTTP settings to confirm, no repair about YAML.
            issues = await _repair_issues(page)
            print("repair issues:", [(item["domain"], item["issue_id"]) for item in issues])
            assert not [item for item in issues if item["domain"] == "http"], issues
            await _demo_voice(page, rest, session, develop.ha_url)

            automations = {
                "pacerelle_status": readme_automation('Answer "status"'),
                "pacerelle_doorbell": readme_automation(
                    "Send a camera snapshot when the doorbell rings"
                ),
            }
            for automation_id, automation in automations.items():
                path = f"/api/config/automation/config/{automation_id}"
                assert await rest.call("POST", path, automation) == {"result": "ok"}
            aliases = [page.get_by_text(item["alias"]) for item in automations.values()]
            await open_page(page, f"{develop.ha_url}/config/automation/dashboard", aliases[0])
            for alias in aliases:
                await expect(alias).to_be_visible()
            await shots.take(page, "automations")

            await chat.get_by_role("link", name="Home Assistant").click()
            await _ask_status(chat, 1)
            await shots.take(chat, "chat-status-answered")

            await _restart_from_the_ui(page, develop, shots)
            await develop.wait_for(RESTARTING, 1, RESTART_TIMEOUT)
            # The emulator kept running: the chat page answers while Home Assistant is down.
            async with session.get(develop.chat_url + "/_emulator/installations") as response:
                assert response.status == 200
            await develop.wait_for(READY, 2, RESTART_TIMEOUT)
            await expect(chat.locator("#agents .dot.on")).to_be_visible(timeout=60_000)
            # Automations listen only once Home Assistant has started, which may be after
            # the agent is back online (see the report: events before that are missed).
            await rest.wait_running(RESTART_TIMEOUT)

            await _ask_status(chat, 2)
            await rest.call(
                "POST",
                "/api/services/input_button/press",
                {"entity_id": "input_button.ring_the_doorbell"},
            )
            picture = chat.locator(".bubble.in img.inline-image")
            await expect(picture).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
            # One ring, one snapshot: the restart itself rang nothing.
            await expect(picture).to_have_count(1)
            assert await picture.evaluate("node => node.naturalWidth") == 640
            await chat.locator("#timeline").evaluate("node => node.scrollTop = node.scrollHeight")
            await shots.take(chat, "chat-after-restart-snapshot")
        except Exception:
            await shots.take(page, "failure")
            await shots.take(chat, "failure-chat")
            raise
        finally:
            await context.close()
            keep_logs(develop, shots.directory)
        # Ctrl-C: the whole group gets SIGINT; whichever of develop and Home Assistant (which
        # exits 0 on SIGINT) sees it first, develop says "stopped" and exits 0.
        os.killpg(develop.process.pid, signal.SIGINT)
        assert await asyncio.wait_for(develop.process.wait(), STOP_TIMEOUT) == 0
        assert develop.text().strip().splitlines()[-1] == "develop: stopped"
        for url in (develop.chat_url + "/_emulator/installations", develop.ha_url):
            with pytest.raises(aiohttp.ClientConnectionError):
                async with session.get(url):
                    pass
    shots.publish(
        {
            "chat-connection-key": "try-it-1-connection-key.png",
            "chat-after-restart-snapshot": "try-it-2-automation-and-snapshot.png",
        }
    )

    console = develop.text()
    lines = [line for line in console.splitlines() if line.strip()]
    assert len(lines) <= MAX_CONSOLE_LINES, console
    assert "Traceback" not in console
    assert f"develop: Home Assistant starting on {develop.ha_url}" in console
    for name in ("home-assistant.log", "pacerelle-emulator.log"):
        assert f"{config}/{name}" in console
        assert (config / name).stat().st_size > 0
    # What a new install gets, without `my` and without an `http:` block (the loopback
    # address is in Home Assistant's own store).
    configuration = (config / "configuration.yaml").read_text()
    assert "automation: !include automations.yaml" in configuration
    assert "\nmy:" not in configuration
    assert "http:" not in configuration
    assert "token=" not in (config / "pacerelle-emulator.log").read_text().replace(
        "token=[redacted]", ""
    )


# Run apart from the test (whose sockets may reach 127.0.0.1 only): this machine's address
# on its default route, if it has one besides loopback, and whether the port answers there.
OTHER_ADDRESS_PROBE = """
import socket, sys
with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
    try:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: only the route is chosen
    except OSError:
        raise SystemExit("none")
    address = probe.getsockname()[0]
if address.startswith("127."):
    raise SystemExit("none")
try:
    socket.create_connection((address, int(sys.argv[1])), timeout=5).close()
except ConnectionRefusedError:
    raise SystemExit(f"refused {address}")
raise SystemExit(f"answered {address}")
"""


def _assert_loopback_only(port: int) -> None:
    """Home Assistant listens on 127.0.0.1 only: nobody else on the network can onboard it."""
    listeners = develop_ports.listeners(port)
    assert listeners is not None
    assert {address for address, _ in listeners} == {LOOPBACK}, listeners
    probe = subprocess.run(
        [sys.executable, "-c", OTHER_ADDRESS_PROBE, str(port)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    print("other address:", probe.stderr.strip())
    assert probe.stderr.startswith(("none", "refused")), probe.stderr


async def _repair_issues(page: Page) -> list[dict[str, Any]]:
    """Home Assistant's repair issues, read over the frontend's own WebSocket connection."""
    issues: dict[str, Any] = await page.evaluate(
        "document.querySelector('home-assistant').hass.connection"
        ".sendMessagePromise({type: 'repairs/list_issues'})"
    )
    return list(issues["issues"])
