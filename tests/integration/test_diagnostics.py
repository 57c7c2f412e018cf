"""Diagnostics say how the agent is, and no secret reaches them or the logs."""

import base64
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.components.diagnostics import (
    get_diagnostics_for_config_entry,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator
from syrupy.assertion import SnapshotAssertion

from custom_components.pacerelle.client import OutgoingFile
from custom_components.pacerelle.diagnostics import Pseudonyms
from custom_components.pacerelle.options import CONF_LLM_CONVERSATIONS
from custom_components.pacerelle.store.agent_store import agent_store
from tests.helpers.agent import Agent, start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.entities import ha_snapshot, replacing, wait_state
from tests.helpers.runtime import wait_until

USER_TEXT = "The alarm code is quokka-4711, open the garage"
REPLY_TEXT = "Opening the garage now, Margaret"
NOTE = "handled: garage opened for Margaret"
FILE_CONTENT = b"%PDF secret floor plan " + bytes(range(64))
# Loggers of the in-process emulator (its access log shows the gateway URL with the token).
# Prekey ids are random; one-time prekey counts depend on when replenishment runs.
RANDOM_OR_RACING = {"id", "one_time_prekeys", "one_time_prekeys_published"}
EMULATOR_LOGGERS = ("aiohttp.access", "aiohttp.server", "tests.")


def strings_in(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings_in(item)


async def secrets_of(hass: HomeAssistant, emulator: EmulatorHandle, setup: Agent) -> set[str]:
    """Every token, key and piece of Signal state the agent holds (long strings only)."""
    document = await agent_store(hass, setup.installed.agent_id).load()
    found = {setup.installed.installation_token}
    found |= {
        token.token
        for token in emulator.emulator.state.runtime_tokens.values()
        if token.agent_id == setup.installed.agent_id
    }
    for section in ("signal", "conversations"):
        found |= {text for text in strings_in(document[section]) if len(text) >= 24}
    for section in ("inbox", "history"):
        for item in strings_in(document[section]):
            if len(item) >= 16 and item.endswith("="):
                found.add(item)  # attachment keys and IVs
    return found


async def converse(hass: HomeAssistant, emulator: EmulatorHandle, setup: Agent) -> None:
    """A conversation with everything that carries secrets: text, files, a note, a widget."""
    installed, agent = setup.installed, setup.runtime.agent
    pending = setup.entity_id(hass, "sensor", "pending_requests")
    files = [{"name": "plan.pdf", "mime": "application/pdf", "data_b64": _b64(FILE_CONTENT)}]
    message_id = await emulator.send(installed.conversation_id, text=USER_TEXT, attachments=files)
    await wait_state(hass, pending, "1")
    request = agent.find_request(message_id)
    assert request is not None
    assert await agent.download(message_id, 0) == FILE_CONTENT
    copy = OutgoingFile("copy.pdf", "application/pdf", FILE_CONTENT)
    await agent.send_text(REPLY_TEXT, source_message_id=message_id, files=[copy])
    await agent.mark_processed(message_id, NOTE)
    await emulator.send(installed.conversation_id, widget_response={"ref": "w1", "value": "no"})
    await wait_state(hass, pending, "1")
    await emulator.wait_inbox(installed.conversation_id, 1)


async def test_no_secret_in_diagnostics_or_logs(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    emulator: EmulatorHandle,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    setup = await start_agent(hass, emulator)
    await converse(hass, emulator, setup)
    diagnostics = await get_diagnostics_for_config_entry(hass, hass_client, setup.entry)
    secrets = await secrets_of(hass, emulator, setup)
    data = setup.runtime.agent.data
    message_ids = {handled.request.message_id for handled in data.history.requests}
    message_ids |= {reply.message_id for reply in data.history.replies}
    attachment_ids = {
        str(item["id"]) for handled in data.history.requests for item in handled.request.attachments
    }
    assert message_ids
    assert attachment_ids
    assert len(secrets) > 20  # tokens, identity and prekeys, sessions, history and file keys
    assert await hass.config_entries.async_unload(setup.entry.entry_id)

    dumped = json.dumps(diagnostics)
    # Not a bare number: random message ids (hex) may contain one.
    plaintexts = {USER_TEXT, REPLY_TEXT, NOTE, "Margaret", "quokka-4711"}
    for secret in secrets | plaintexts:
        assert secret not in dumped
    # Nor the ids of the agent, its owner and its conversation, nor the verification code.
    installed = setup.installed
    identifiers = {installed.agent_id, installed.owner_id, installed.conversation_id}
    for identifier in identifiers | message_ids | attachment_ids:
        assert identifier not in dumped, identifier
    assert setup.runtime.status.verification_code not in dumped
    # Labels in their place keep who wrote where readable.
    [reply] = diagnostics["history"]["recent_replies"]
    assert reply["to"] == diagnostics["entry"]["data"]["owner_id"] == "person_1"
    assert reply["conversation_id"] == "conversation_1"
    [request] = [r for r in diagnostics["history"]["recent_requests"] if r["attachments"]]
    assert reply["source_message_id"] == request["message_id"]
    assert request["message_id"].startswith("message_")
    assert request["attachments"][0]["id"] == "attachment_1"
    assert diagnostics["status"]["pending_requests"] == 1
    assert diagnostics["history"]["recent_replies"][0]["text_length"] == len(REPLY_TEXT)

    ours = [r for r in caplog.records if not r.name.startswith(EMULATOR_LOGGERS)]
    assert ours
    logged = "\n".join(record.getMessage() for record in ours)
    for secret in secrets:
        assert secret not in logged
    pacerelle_logged = "\n".join(
        r.getMessage() for r in ours if r.name.startswith("custom_components.pacerelle")
    )
    assert "Agent" in pacerelle_logged  # the integration did log at debug level
    for plaintext in plaintexts:
        assert plaintext not in pacerelle_logged


async def test_diagnostics_snapshot(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    emulator: EmulatorHandle,
    snapshot: SnapshotAssertion,
) -> None:
    setup = await start_agent(hass, emulator)
    message_id = await emulator.send(setup.installed.conversation_id, text="status?")
    await wait_until(lambda: setup.runtime.status.pending == 1)
    await setup.runtime.agent.send_text("All calm", source_message_id=message_id)
    diagnostics = await get_diagnostics_for_config_entry(hass, hass_client, setup.entry)
    volatile = setup.volatile()
    volatile[emulator.base_url] = "<server_url>"
    replace = replacing(volatile)

    def matcher(*, data: Any, path: Any) -> Any:
        name = str(path[-1][0]) if path else ""
        if isinstance(data, str) and name.endswith("_at"):
            return "<time>"
        if isinstance(data, int) and name in RANDOM_OR_RACING:
            return f"<{name}>"
        return replace(data=data, path=path)

    assert diagnostics == ha_snapshot(snapshot)(matcher=matcher)
    assert await hass.config_entries.async_unload(setup.entry.entry_id)


async def test_the_options_conversations_are_labels_too(
    hass: HomeAssistant, hass_client: ClientSessionGenerator, emulator: EmulatorHandle
) -> None:
    group = "cnv_family_group_4711"
    setup = await start_agent(hass, emulator, options={CONF_LLM_CONVERSATIONS: [group]})
    diagnostics = await get_diagnostics_for_config_entry(hass, hass_client, setup.entry)
    assert await hass.config_entries.async_unload(setup.entry.entry_id)
    assert group not in json.dumps(diagnostics)
    # The owner's conversation is conversation_1 (the entry's data); the group comes next.
    assert diagnostics["entry"]["options"][CONF_LLM_CONVERSATIONS] == ["conversation_2"]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_pseudonyms_are_stable_per_kind() -> None:
    ids = Pseudonyms()
    assert [ids.person("usr_b"), ids.person("usr_a"), ids.person("usr_b")] == [
        "person_1",
        "person_2",
        "person_1",
    ]
    # Kinds count apart; the same raw id of another kind gets its own label.
    assert ids.conversation("usr_b") == "conversation_1"
    assert ids("session", "human:usr_b:cnv:device:1") == "session_1"
    assert ids.person(None) is None
