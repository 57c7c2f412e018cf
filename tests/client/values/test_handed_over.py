"""The hand-over marks: bounded, what the relay cannot change, kept outside the agent's folder.

client/values/handed_over.py decides what a mark is and how many are kept; the agent's store
keeps them in their own file beside the folder (client/state/handed_over_file.py), so a
restore of the folder alone does not take them back, and a file that is damaged is read as
no marks (never a refusal).
"""

import base64
import logging
import shutil
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.client.limits import MAX_HANDED_OVER, MAX_HANDED_OVER_FILE_BYTES
from custom_components.pacerelle.client.relay.frames import InboundMessage
from custom_components.pacerelle.client.signal.state import AgentSignalState
from custom_components.pacerelle.client.values import groups
from custom_components.pacerelle.client.values.agent_data import AgentData
from custom_components.pacerelle.client.values.handed_over import (
    MARK_LENGTH,
    HandedOver,
    hand_over_mark,
)
from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.store.agent_store import agent_store

AGENT = "agent-1"


def _message(payload: bytes, *, message_id: str = "m1", group: bool = False) -> InboundMessage:
    conversation = "c1"
    return InboundMessage(
        message_id=message_id,
        conversation_id=conversation,
        sender_id="u1",
        sender_device_id="1",
        to=f"group:{conversation}" if group else AGENT,
        payload=payload,
        encrypted=True,
        reply_to_message_id=None,
        attachments=(),
        digest=message_id,
    )


def _marks(count: int, start: int = 0) -> list[str]:
    return [f"{n:0{MARK_LENGTH}x}" for n in range(start, start + count)]


def test_the_marks_are_bounded_and_the_oldest_go_first() -> None:
    marks = HandedOver().with_marks(_marks(MAX_HANDED_OVER + 10))
    assert len(marks.marks) == MAX_HANDED_OVER
    assert _marks(10)[-1] not in marks
    assert _marks(1, MAX_HANDED_OVER + 9)[0] in marks
    # A mark seen again counts as new: it is the last to go.
    oldest = next(iter(marks.marks))
    again = marks.with_marks([oldest]).with_marks(_marks(1, 10**6))
    assert oldest in again
    assert len(again.marks) == MAX_HANDED_OVER
    # Trusted marks are a window of their own: untrusted hand-overs never push them out.
    kept = HandedOver().with_marks(_marks(1, 10**7), trusted=_marks(1, 10**7))
    flooded = kept.with_marks(_marks(MAX_HANDED_OVER + 10, 10**8))
    assert _marks(1, 10**7)[0] in flooded
    assert _marks(1, 10**7)[0] not in HandedOver(flooded.marks)
    # The largest file the bound allows fits the reading limit many times over.
    assert len(str(marks.to_json())) * 4 < MAX_HANDED_OVER_FILE_BYTES


def test_only_marks_are_read_back() -> None:
    good = _marks(3)
    value = [*good, "x" * MARK_LENGTH, "ABC", 7, None, good[0].upper()]
    assert HandedOver.from_json(value).to_json() == {"all": good, "trusted": []}
    assert HandedOver.from_json({"all": value, "trusted": value[::-1]}).trusted == dict.fromkeys(
        good[::-1]
    )
    assert HandedOver.from_json({"marks": good}).marks == {}
    assert len(HandedOver.from_json(_marks(MAX_HANDED_OVER + 5)).marks) == MAX_HANDED_OVER


def test_a_group_message_keeps_its_mark_under_any_id_and_device() -> None:
    key = groups.GroupKey(
        conversation_id="c1",
        key_id="k1",
        epoch=1,
        raw_key=b"\1" * 32,
        sender_id="u1",
    )
    payload = groups.seal_message(key, "turn on the kitchen light")
    first = hand_over_mark(_message(payload, group=True))
    moved = replace(_message(payload, message_id="m2", group=True), sender_device_id="9")
    assert hand_over_mark(moved) == first
    assert hand_over_mark(_message(groups.seal_message(key, "same"), group=True)) != first


def test_an_unreadable_payload_is_marked_by_its_conversation_and_id() -> None:
    broken = base64.b64decode("AQ==")
    assert hand_over_mark(_message(broken)) == hand_over_mark(_message(broken))
    assert hand_over_mark(_message(broken)) != hand_over_mark(_message(broken, message_id="m2"))


async def test_the_marks_stay_when_the_agents_folder_is_put_back(
    hass: HomeAssistant, caplog: pytest.LogCaptureFixture
) -> None:
    store = agent_store(hass, AGENT)
    folder = Path(hass.config.path(".storage", DOMAIN))
    data = AgentData(signal=await hass.async_add_executor_job(_signal))
    await store.create({"installation": {"token": "t"}})
    await store.save({"installation": {"token": "t"}, **data.sections()})
    backup = Path(hass.config.path("copy"))
    await hass.async_add_executor_job(shutil.copytree, folder, backup)

    newer = replace(data, handed_over=data.handed_over.with_marks(_marks(2)))
    await store.save({"installation": {"token": "t"}, **newer.sections()})
    marks_file = folder.parent / f"{DOMAIN}.handed_over.{AGENT}"
    assert marks_file.is_file()
    tables = await hass.async_add_executor_job(_tables, folder / f"{AGENT}.db")
    assert "handed_over" not in tables  # the folder keeps no marks
    await store.close()  # Home Assistant stopped (the store is read again)

    def restore() -> None:
        shutil.rmtree(folder)
        shutil.copytree(backup, folder)

    await hass.async_add_executor_job(restore)
    loaded = AgentData.from_document(await agent_store(hass, AGENT).load())
    assert loaded is not None
    assert loaded.handed_over.to_json() == {"all": _marks(2), "trusted": []}

    # A save without the section (the config flow's) leaves the marks alone.
    without = {key: value for key, value in data.sections().items() if key != "handed_over"}
    await store.save({"installation": {"token": "t"}, **without})
    assert marks_file.is_file()

    await hass.async_add_executor_job(marks_file.write_text, "{not json")
    await store.close()
    with caplog.at_level(logging.WARNING):
        damaged = await agent_store(hass, AGENT).load()
    assert "handed_over" not in damaged
    assert "is not a file of hand-over marks" in caplog.text


def _tables(database: Path) -> set[str]:
    with sqlite3.connect(database) as connection:
        found = {row[0] for row in connection.execute("SELECT DISTINCT tbl FROM records")}
    connection.close()
    return found


def _signal() -> AgentSignalState:
    return AgentSignalState.new()


async def test_marks_that_cannot_be_written_never_fail_the_save(
    hass: HomeAssistant, caplog: pytest.LogCaptureFixture
) -> None:
    store = agent_store(hass, AGENT)
    data = AgentData(signal=await hass.async_add_executor_job(_signal))
    await store.create({"installation": {"token": "t"}})
    marks_file = Path(hass.config.path(".storage", f"{DOMAIN}.handed_over.{AGENT}"))
    await hass.async_add_executor_job(marks_file.mkdir)  # in the way of the rename
    newer = replace(data, handed_over=data.handed_over.with_marks(_marks(1)))
    with caplog.at_level(logging.ERROR):
        await store.save({"installation": {"token": "t"}, **newer.sections()})
        # One message, however many steps failed (the load's mapping, the save's rewrite).
    assert caplog.text.count("Could not keep the marks of the requests handed over") == 1
    loaded = AgentData.from_document(await store.load())
    assert loaded is not None
    assert loaded.signal.prekeys.identity_key == data.signal.prekeys.identity_key
    leftovers = [p.name for p in marks_file.parent.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []
