"""Issue 12 item 13: session records have one name per peer, and stores of version 1 migrate.

Version 1 joined ids with ":", so ("a:b", "c", 1) and ("a", "b:c", 1) shared one session
record and a frame from one decrypted under the other. `tests/data/store_v1.json` was written
by that release (tests/data/make_v1_fixture.py), with the native peers' stores, so the
migrated sessions are checked by the peers' next messages.
"""

import base64
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from hypothesis import given
from hypothesis import strategies as st

from custom_components.pacerelle.client.limits import MAX_DEVICE_ID
from custom_components.pacerelle.client.signal.engine import decrypt, encrypt
from custom_components.pacerelle.client.signal.errors import SignalError, SignalErrorKind
from custom_components.pacerelle.client.signal.session import (
    PeerAddress,
    address_of,
    legacy_addresses,
)
from custom_components.pacerelle.client.state.encrypted_file import EncryptedFile
from custom_components.pacerelle.client.state.versions import STORE_VERSION, migrate
from custom_components.pacerelle.client.values.agent_data import AgentData
from custom_components.pacerelle.store.agent_store import STORE_DIRECTORY, agent_store
from tests.client.signal.interop import AGENT_NAME, Agent
from tests.helpers.reference_peer import ReferencePeer, reference_peer_available

FIXTURE = Path(__file__).parents[2] / "data" / "store_v1.json"
needs_peer = pytest.mark.skipif(not reference_peer_available(), reason="no reference peer")

ids = st.text(alphabet=st.sampled_from("ab:%3A5"), max_size=6)
addresses = st.builds(PeerAddress, ids, ids, st.integers(min_value=0, max_value=3))
# Addresses of real devices: a device id is 1 to MAX_DEVICE_ID (client/device_ids.py).
device_addresses = st.builds(
    PeerAddress, ids, ids, st.integers(min_value=1, max_value=MAX_DEVICE_ID)
)


@given(addresses, addresses)
def test_names_are_injective(first: PeerAddress, second: PeerAddress) -> None:
    assert (first.storage_name == second.storage_name) == (first == second)


@given(device_addresses)
def test_a_name_is_read_back_as_its_address(address: PeerAddress) -> None:
    """The one reading of a record name (the trust book's seed uses it, values/trust_book.py)."""
    assert address_of(address.storage_name) == address


@pytest.mark.parametrize(
    "name",
    [
        "human:a:b:c:device:1",  # version 1's unescaped form: ambiguous, never guessed
        "human:a:b:device:01",  # another spelling of device 1
        "human:a:b:device:0",  # no device id
        "human:a:b:device:\u0661".encode().decode("unicode_escape"),  # an Arabic-Indic one
        "human:a%3a:b:device:1",  # an escape the engine never writes
        "group:a:b:device:1",
        "human:a:b",
    ],
)
def test_names_of_another_form_have_no_address(name: str) -> None:
    assert address_of(name) is None


@given(ids, ids, st.integers(min_value=0, max_value=3), st.data())
def test_ids_split_elsewhere_never_share_a_name(
    user: str, conversation: str, device: int, data: st.DataObject
) -> None:
    """Version 1's collision: the same joined text cut at another ":"."""
    address = PeerAddress(user, conversation, device)
    joined = f"{user}:{conversation}"
    cut = data.draw(st.sampled_from([i for i, char in enumerate(joined) if char == ":"]))
    other = PeerAddress(joined[:cut], joined[cut + 1 :], device)
    assert (address.storage_name == other.storage_name) == (address == other)
    # And a "%3A" spelled out is not a ":" escaped.
    spelled = PeerAddress(user.replace(":", "%3A"), conversation, device)
    assert (address.storage_name == spelled.storage_name) == (address == spelled)


@given(st.text(alphabet=st.characters(exclude_characters=":%"), max_size=20), ids)
def test_ids_without_colon_or_percent_keep_the_sdk_name(user: str, conversation: str) -> None:
    if ":" in conversation or "%" in conversation:
        conversation = "conv-1"
    address = PeerAddress(user, conversation, 7)
    assert address.storage_name == f"human:{user}:{conversation}:device:7"


def test_every_reading_of_a_version_1_name() -> None:
    assert legacy_addresses("human:a:b:c:device:1") == [
        PeerAddress("a", "b:c", 1),
        PeerAddress("a:b", "c", 1),
    ]
    assert legacy_addresses("agent:x") == []


@needs_peer
def test_a_frame_from_one_colliding_address_does_not_decrypt_under_the_other() -> None:
    agent = Agent()
    first, second = PeerAddress("a:b", "c", 1), PeerAddress("a", "b:c", 1)
    human = ReferencePeer("a:b in c")
    human.process_prekey_bundle(AGENT_NAME, agent.bundle())
    state, plain = decrypt(agent.state, first, human.encrypt(AGENT_NAME, b"hello"))
    assert plain == b"hello"
    state, reply = encrypt(state, first, b"hi")
    assert human.decrypt(AGENT_NAME, reply) == b"hi"
    later = human.encrypt(AGENT_NAME, b"open the door")  # a SignalMessage, no PreKey
    with pytest.raises(SignalError) as caught:
        decrypt(state, second, later)
    assert caught.value.kind is SignalErrorKind.NO_SESSION
    assert decrypt(state, first, later)[1] == b"open the door"


def _fixture() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text())


def _check_each_peer_still_talks(data: AgentData, peers: dict[str, Any]) -> None:
    state = data.signal
    for label, peer in peers.items():
        human = ReferencePeer.from_snapshot(label, base64.b64decode(peer["snapshot_b64"]))
        address = PeerAddress(peer["user_id"], peer["conversation_id"], peer["device_id"])
        frame = human.encrypt(AGENT_NAME, f"again {label}".encode())
        state, plain = decrypt(state, address, frame)
        assert plain == f"again {label}".encode()


@needs_peer
def test_a_version_1_document_migrates_and_its_sessions_keep_working() -> None:
    fixture = _fixture()
    migrated = migrate(fixture["document"])
    assert migrated["version"] == STORE_VERSION == 2
    assert sorted(migrated["signal"]["sessions"]) == [
        "human:a%3Ab:c:device:1",  # "a:b" in "c", told apart by its last device
        "human:pc%25t:conv-1:device:2",
        "human:user-1:conv-1:device:1",  # no ":" or "%": the SDK's name, untouched
    ]
    data = AgentData.from_document(migrated)
    assert data is not None
    _check_each_peer_still_talks(data, fixture["peers"])


def test_an_ambiguous_version_1_record_is_dropped_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    document = _fixture()["document"]
    document["conversations"]["last_devices"] = {}  # nothing tells "a:b"/"c" from "a"/"b:c"
    caplog.set_level(logging.WARNING)
    migrated = migrate(document)
    assert sorted(migrated["signal"]["sessions"]) == [
        "human:pc%25t:conv-1:device:2",
        "human:user-1:conv-1:device:1",
    ]
    assert "human:a:b:c:device:1" in caplog.text


@needs_peer
async def test_home_assistant_loads_a_store_written_by_version_1(hass: HomeAssistant) -> None:
    fixture = _fixture()
    directory = Path(hass.config.path(".storage", *STORE_DIRECTORY))
    # The file as the old release wrote it: version 1 inside, same format and key.
    await hass.async_add_executor_job(
        EncryptedFile(directory, "agt_v1").create, fixture["document"]
    )
    store = agent_store(hass, "agt_v1")
    document = await store.load()
    assert document["version"] == 2
    assert "human:a%3Ab:c:device:1" in document["signal"]["sessions"]
    data = await hass.async_add_executor_job(AgentData.from_document, document)
    assert data is not None
    await hass.async_add_executor_job(_check_each_peer_still_talks, data, fixture["peers"])
    await store.save(document)  # saved at version 2 ...
    assert (await store.load())["signal"]["sessions"] == document["signal"]["sessions"]


def test_a_version_1_name_reads_only_a_canonical_device_id() -> None:
    """The engine takes the client's one rule (client/device_ids.py): "007", "+7" and an
    Arabic-Indic seven are no device 7, so no second spelling of a session is migrated."""
    for device in ("007", "+7", "\u0667", "0", "1_0"):
        assert legacy_addresses(f"human:a:b:device:{device}") == [], device
    assert legacy_addresses("human:a:b:device:7") == [PeerAddress("a", "b", 7)]
