"""Files that change under a send: links, FIFOs, folders and swaps never leak the store key.

Someone who can write in an allowed folder (a Samba share, a camera's upload folder)
plants what an automation will send. The agent's store key (`<agent id>.key`, in the
configuration directory, which is not allowed) is the prize.
"""

import asyncio
import base64
import os
import threading
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError

from custom_components.pacerelle.client.limits import MAX_FILE_BYTES
from tests.helpers.agent import Agent, start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until
from tests.helpers.services import call, received, refused

# Sends raced against the swapping thread; a check-then-open loses about 1 in 5.
RACE_SENDS = 40
REFUSALS = {"file_not_regular", "path_not_allowed", "file_unreadable"}


def key_file(hass: HomeAssistant, agent: Agent) -> Path:
    path = Path(hass.config.path(".storage", "pacerelle", f"{agent.installed.agent_id}.key"))
    assert path.is_file()
    return path


async def share_agent(hass: HomeAssistant, emulator: EmulatorHandle, tmp_path: Path) -> Agent:
    (tmp_path / "share").mkdir()
    agent = await start_agent(hass, emulator, spoken=True)
    hass.config.allowlist_external_dirs = {str(tmp_path / "share")}
    return agent


def sent_contents(inbox: list[dict[str, Any]]) -> list[bytes]:
    """What the person's device decrypted, file by file."""
    return [
        base64.b64decode(file["content_b64"])
        for entry in inbox
        for file in entry.get("files") or []
    ]


async def test_a_link_to_the_key_is_refused(
    hass: HomeAssistant, emulator: EmulatorHandle, tmp_path: Path
) -> None:
    agent = await share_agent(hass, emulator, tmp_path)
    key = key_file(hass, agent)
    share = tmp_path / "share"
    (share / "key.txt").symlink_to(key)
    (share / "store").symlink_to(key.parent, target_is_directory=True)
    (share / "public.txt").write_text("public")
    (share / "link-to-public.txt").symlink_to(share / "public.txt")

    for path in (share / "key.txt", share / "store" / key.name):
        await refused(
            hass, "send_message", {"text": "x", "attachments": [str(path)]}, "path_not_allowed"
        )
    # A final link is never followed, even to an allowed file: send the file by its name.
    await refused(
        hass,
        "send_message",
        {"text": "x", "attachments": [str(share / "link-to-public.txt")]},
        "file_not_regular",
    )
    assert await emulator.inbox(agent.conversation_id) == []


async def test_a_fifo_and_a_folder_are_refused_at_once(
    hass: HomeAssistant, emulator: EmulatorHandle, tmp_path: Path
) -> None:
    await share_agent(hass, emulator, tmp_path)
    fifo = tmp_path / "share" / "pipe"
    os.mkfifo(fifo)
    (tmp_path / "share" / "folder").mkdir()
    try:
        async with asyncio.timeout(5):
            for name in ("pipe", "folder"):
                path = str(tmp_path / "share" / name)
                error = await refused(
                    hass, "send_message", {"text": "x", "attachments": [path]}, "file_not_regular"
                )
                assert error.translation_placeholders == {"path": path}
    finally:
        # Unblocks a reader stuck in open() (one that opens before it checks), so the
        # executor can shut down.
        with suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


async def test_size_is_checked_before_reading(
    hass: HomeAssistant, emulator: EmulatorHandle, tmp_path: Path
) -> None:
    await share_agent(hass, emulator, tmp_path)
    big = tmp_path / "share" / "big.bin"
    with big.open("wb") as file:
        file.truncate(MAX_FILE_BYTES + 1)  # sparse: nothing is read to refuse it
    error = await refused(
        hass, "send_message", {"text": "x", "attachments": [str(big)]}, "file_too_large"
    )
    assert error.translation_placeholders["limit"] == str(MAX_FILE_BYTES)


class Swapper(threading.Thread):
    """Swaps `path` between a regular file and a link to `secret`, as fast as it can."""

    def __init__(self, path: Path, secret: Path) -> None:
        super().__init__(daemon=True)
        self.path, self.secret = path, secret
        self.stop = threading.Event()
        self.swaps = 0

    def run(self) -> None:
        spare = self.path.with_name(".spare")
        while not self.stop.is_set():
            spare.unlink(missing_ok=True)
            if self.swaps % 2:
                spare.symlink_to(self.secret)
            else:
                spare.write_bytes(b"public")
            os.replace(spare, self.path)
            self.swaps += 1


async def changed(swapper: Swapper) -> None:
    """Returns once the file was swapped twice more: the swapper only runs when the event
    loop lets go of the GIL, which a busy loop may not do for a whole send."""
    target = swapper.swaps + 2
    await wait_until(lambda: swapper.swaps >= target)


async def test_a_swap_race_never_sends_the_key(
    hass: HomeAssistant, emulator: EmulatorHandle, tmp_path: Path
) -> None:
    agent = await share_agent(hass, emulator, tmp_path)
    key = key_file(hass, agent)
    path = tmp_path / "share" / "doc.txt"
    path.write_bytes(b"public")
    swapper = Swapper(path, key)
    swapper.start()
    sent, refusals = 0, set()
    try:
        async with asyncio.timeout(60):
            for _ in range(RACE_SENDS):
                await changed(swapper)
                try:
                    await call(hass, "send_message", {"text": "doc", "attachments": [str(path)]})
                    sent += 1
                except HomeAssistantError as err:
                    refusals.add(err.translation_key)
    finally:
        swapper.stop.set()
        await hass.async_add_executor_job(swapper.join, 5)
    assert swapper.swaps > RACE_SENDS
    assert refusals <= REFUSALS
    assert sent > 0  # the regular file was caught too: the race was real
    contents = sent_contents(await received(emulator, agent, sent))
    assert key.read_bytes() not in contents
    assert set(contents) <= {b"public"}


async def test_a_swap_right_after_the_check_never_sends_the_key(
    hass: HomeAssistant, emulator: EmulatorHandle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attacker wins the race every time: the file becomes a link to the key right
    after each allowlist check passes for it. Only a check on what was opened holds."""
    agent = await share_agent(hass, emulator, tmp_path)
    key = key_file(hass, agent)
    path = tmp_path / "share" / "doc.txt"
    spare = path.with_name(".spare")
    checked = hass.config.is_allowed_path
    swaps = 0

    def check_then_swap(target: str) -> bool:
        nonlocal swaps
        allowed = checked(target)
        if allowed and target == str(path) and not path.is_symlink():
            spare.symlink_to(key)
            os.replace(spare, path)
            swaps += 1
        return allowed

    monkeypatch.setattr(hass.config, "is_allowed_path", check_then_swap)
    for _ in range(3):
        path.unlink(missing_ok=True)
        path.write_bytes(b"public")
        attachment = {"text": "doc", "attachments": [str(path)]}
        with pytest.raises(HomeAssistantError) as caught:
            await call(hass, "send_message", attachment)
        assert caught.value.translation_key in REFUSALS
    assert swaps == 3
    assert await emulator.inbox(agent.conversation_id) == []


@pytest.mark.parametrize("name", ["missing.txt", "no-such-folder/x.txt"])
async def test_a_missing_file_is_a_translated_error(
    hass: HomeAssistant, emulator: EmulatorHandle, tmp_path: Path, name: str
) -> None:
    await share_agent(hass, emulator, tmp_path)
    await refused(
        hass,
        "send_message",
        {"text": "x", "attachments": [str(tmp_path / "share" / name)]},
        "file_unreadable",
    )
