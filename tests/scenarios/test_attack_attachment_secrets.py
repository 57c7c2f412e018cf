"""No attachment secret reaches the Home Assistant side; a lying sender's file is refused.

An attachment's key, IV, blob id and the relay's digest stay in the client
(client/attachments.py): the requests Home Assistant is given and the events it fires carry
the public fields only. A file whose sender lies about it (its size, its digest, a size over
the client's bound) is refused by the client's download, translated through
`pacerelle.download_attachment`, and nothing is written.
"""

import base64
import json
from pathlib import Path
from typing import Any

from homeassistant.core import HomeAssistant

from custom_components.pacerelle.client.limits import MAX_FILE_BYTES
from custom_components.pacerelle.client.values.payloads import PUBLIC_ATTACHMENT_FIELDS
from tests.helpers.agent import Agent, start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.services import call, human_writes, refused, stored_attachment

CONTENT = b"the plan of the house " * 50
SECRET_FIELDS = ("key_b64", "iv_b64", "blob_id", "sha256")


def _file(**lies: Any) -> dict[str, Any]:
    return {
        "name": "plan.txt",
        "mime": "text/plain",
        "data_b64": base64.b64encode(CONTENT).decode(),
        **lies,
    }


def _secrets(agent: Agent, message_id: str) -> list[str]:
    """The stored secret values of the message's first file (the client's own copy)."""
    stored = stored_attachment(agent, message_id)
    assert {"key_b64", "iv_b64", "blob_id", "sha256"} <= set(stored)  # the client holds them
    return [str(stored[name]) for name in SECRET_FIELDS]


async def test_no_attachment_secret_reaches_home_assistant(
    hass: HomeAssistant, emulator: EmulatorHandle, tmp_path: Path
) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    event = await human_writes(emulator, agent, text="see", attachments=[_file()])
    message_id = event["message_id"]
    secrets = _secrets(agent, message_id)
    client = agent.runtime.agent
    request = client.find_request(message_id)
    assert request is not None
    seen: list[Any] = [
        event,
        request,
        client.pending_requests(),
        client.history(),
        await call(hass, "get_history", {}),
        await call(hass, "get_status", {}),
    ]
    for view in (
        request,
        *client.pending_requests(),
        *(h.request for h in client.history().requests),
    ):
        for item in view.attachments:
            assert set(item) <= set(PUBLIC_ATTACHMENT_FIELDS), item
    (public,) = event["attachments"]
    assert set(public) == {"id", "name", "mime", "size"}  # the event's fields, as before
    for shown in seen:
        text = repr(shown) + json.dumps(shown, default=repr)
        for name in SECRET_FIELDS:
            assert name not in text
        for value in secrets:
            assert value not in text
    # The HA side still gets the file: bytes, from the client.
    (tmp_path / "media").mkdir()
    hass.config.allowlist_external_dirs = {str(tmp_path / "media")}
    saved = await call(
        hass, "download_attachment", {"message_id": message_id, "folder": str(tmp_path / "media")}
    )
    assert Path(saved["files"][0]["path"]).read_bytes() == CONTENT


async def test_a_file_that_is_not_what_its_sender_declared_is_refused(
    hass: HomeAssistant, emulator: EmulatorHandle, tmp_path: Path
) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    media = tmp_path / "media"
    media.mkdir()
    hass.config.allowlist_external_dirs = {str(media)}
    lies = {
        "larger than the 10 bytes declared": {"declared_size": 10},
        f"{len(CONTENT)} bytes, not the {len(CONTENT) + 5} declared": {
            "declared_size": len(CONTENT) + 5
        },
        "its digest does not match": {"declared_sha256": "ab" * 32},
        f"declared {MAX_FILE_BYTES + 1} bytes, over {MAX_FILE_BYTES}": {
            "declared_size": MAX_FILE_BYTES + 1
        },
    }
    for detail, lie in lies.items():
        event = await human_writes(emulator, agent, text="a file", attachments=[_file(**lie)])
        data = {"message_id": event["message_id"], "folder": str(media)}
        error = await refused(hass, "download_attachment", data, "attachment_unreadable")
        assert error.translation_placeholders["detail"] == f"bad_attachment: {detail}"
        assert list(media.iterdir()) == []  # nothing written
