"""The agent's data and its place in the store document (values/agent_data.py): a new
agent has none, runtime keys without an identity are refused, what is written reads back,
and the per-person memory keeps ids apart and the newest last."""

import asyncio

import pytest

from custom_components.pacerelle.client.limits import MAX_UNCERTAIN_SENDS
from custom_components.pacerelle.client.signal.state import AgentSignalState
from custom_components.pacerelle.client.values.agent_data import (
    SECTIONS,
    AgentData,
    AgentDataError,
    Conversations,
    UncertainSend,
    device_key,
    identity_fingerprint,
)


@pytest.fixture
async def data() -> AgentData:
    return AgentData(await asyncio.to_thread(AgentSignalState.new))


def test_a_store_without_an_identity_is_a_new_agent_unless_it_holds_runtime_data() -> None:
    assert AgentData.from_document({"installation": {}}) is None
    with pytest.raises(AgentDataError):
        AgentData.from_document({"installation": {}, "inbox": {}})


def test_what_is_written_reads_back(data: AgentData) -> None:
    conversations = Conversations().with_device("ana", "conv", "2")
    written = AgentData(
        data.signal,
        conversations=conversations,
        published_prekeys=frozenset({3, 4}),
        uncertain=(UncertainSend("m1", "conv", 5.0),),
    )
    sections = written.sections()
    assert set(sections) == set(SECTIONS)
    loaded = AgentData.from_document({"installation": {}, **sections})
    assert loaded is not None
    assert loaded.published_prekeys == {3, 4}
    assert loaded.uncertain == written.uncertain
    assert loaded.conversations.last_devices == {device_key("ana", "conv"): "2"}
    assert identity_fingerprint(loaded) == identity_fingerprint(written)


@pytest.mark.parametrize("section", ["inbox", "history", "uncertain_sends", "conversations"])
def test_a_missing_section_is_refused_as_a_store_error(data: AgentData, section: str) -> None:
    document = {"installation": {}, **data.sections()}
    del document[section]
    with pytest.raises(AgentDataError):
        AgentData.from_document(document)


def test_a_malformed_section_is_refused_not_crashed_on(data: AgentData) -> None:
    document = {"installation": {}, **data.sections()}
    document["uncertain_sends"] = [{"message_id": "m", "conversation_id": "c", "at": "soon"}]
    with pytest.raises(AgentDataError, match="ValueError"):
        AgentData.from_document(document)


def test_device_keys_never_meet() -> None:
    assert device_key("a|b", "c") != device_key("a", "b|c")
    assert device_key("a%7Cb", "c") != device_key("a|b", "c")
    assert device_key("ana", "conv") == "ana|conv"  # keys stores already hold


def test_the_last_device_is_kept_last_and_uncertain_sends_bounded(data: AgentData) -> None:
    conversations = Conversations().with_device("ana", "c", "1").with_device("bo", "c", "1")
    moved = conversations.with_device("ana", "c", "2")
    assert list(moved.last_devices.items())[-1] == (device_key("ana", "c"), "2")
    assert moved.with_device("ana", "c", "2") is moved
    sends = [UncertainSend(f"m{i}", "c", float(i)) for i in range(MAX_UNCERTAIN_SENDS + 3)]
    bounded = data.with_uncertain(sends)
    assert len(bounded.uncertain) == MAX_UNCERTAIN_SENDS
    assert bounded.uncertain[-1].message_id == sends[-1].message_id
