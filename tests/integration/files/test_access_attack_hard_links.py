"""A hard link to the agent's key (or a secret of Home Assistant) in an allowed folder.

A hard link is a second name of the same file: it has no target to resolve, so the
real-path check sees a file of the allowed folder. Someone who can write there (and link
on the same file system) plants one for an automation to send. Real hard links, real
services, the running emulator; the share is inside the configuration directory so that
the link is possible at all (one file system).
"""

import os
from pathlib import Path

import pytest
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.files.access import (
    NOT_ALLOWED,
    FileRefusedError,
    read_regular_file,
)
from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.services import call, received, refused


def _share(hass: HomeAssistant) -> Path:
    share = Path(hass.config.path("share"))
    share.mkdir(exist_ok=True)
    hass.config.allowlist_external_dirs = {str(share)}
    return share


async def test_a_hard_link_to_the_key_or_secrets_is_refused(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    share = _share(hass)
    key = Path(hass.config.path(".storage", "pacerelle", f"{agent.installed.agent_id}.key"))
    secrets = Path(hass.config.path("secrets.yaml"))
    secrets.write_text("api_password: hunter2\n")
    os.link(key, share / "holiday.jpg")
    os.link(secrets, share / "notes.txt")

    for name in ("holiday.jpg", "notes.txt"):
        await refused(
            hass,
            "send_message",
            {"text": "x", "attachments": [str(share / name)]},
            "path_not_allowed",
        )
    assert await emulator.inbox(agent.conversation_id) == []


async def test_an_ordinary_file_with_two_names_is_sent(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    """More than one link alone is no reason to refuse (deduplicated media, backups)."""
    agent = await start_agent(hass, emulator, spoken=True)
    share = _share(hass)
    (share / "photo.jpg").write_bytes(b"public")
    os.link(share / "photo.jpg", share / "same-photo.jpg")
    await call(hass, "send_message", {"text": "x", "attachments": [str(share / "same-photo.jpg")]})
    (entry,) = await received(emulator, agent, 1)
    assert len(entry["files"]) == 1


def test_every_store_file_is_protected(tmp_path: Path) -> None:
    """Any file under .storage (sub-folders too), not only the agent's key."""
    config = tmp_path / "config"
    (config / ".storage" / "pacerelle").mkdir(parents=True)
    (config / ".storage" / "auth").write_text("refresh tokens")
    (config / ".storage" / "pacerelle" / "agent.enc").write_bytes(b"sealed")
    share = config / "share"
    share.mkdir()
    os.link(config / ".storage" / "auth", share / "a")
    os.link(config / ".storage" / "pacerelle" / "agent.enc", share / "b")
    for name in ("a", "b"):
        with pytest.raises(FileRefusedError) as caught:
            read_regular_file(str(share / name), lambda _: True, 100, config_dir=str(config))
        assert caught.value.reason == NOT_ALLOWED
