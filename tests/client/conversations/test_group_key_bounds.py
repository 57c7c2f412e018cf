"""Group keys stay bounded whatever a relay delivers (client/conversations/group_key_bounds.py).

Real crypto throughout: every key arrives as a Signal envelope sealed by a reference peer
(libsignal) over a session of its own, as the relay's `/agent/group-keys` lists them, and
is learned by the agent's own code (crypto_jobs.open_batch), then bounded by the save's
`within_bounds`. The relay's sessions are invented: peers whose identity nobody verified.
"""

import base64
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from custom_components.pacerelle.client.crypto_jobs import open_batch, seal
from custom_components.pacerelle.client.limits import (
    MAX_GROUP_KEY_BYTES,
    MAX_GROUP_KEY_EPOCHS,
    MAX_KEYED_GROUPS,
    MAX_KEYS_PER_GROUP,
    MAX_NEW_GROUP_KEY_SESSIONS,
)
from custom_components.pacerelle.client.relay.frames import InboundMessage, group_recipient
from custom_components.pacerelle.client.store_bounds import within_bounds
from custom_components.pacerelle.client.stored_sizes import StoredSizes
from custom_components.pacerelle.client.trust.door import SealRule
from custom_components.pacerelle.client.values import groups
from custom_components.pacerelle.client.values.agent_data import AgentData
from custom_components.pacerelle.client.values.requests import stored_size
from custom_components.pacerelle.client.values.trust_book import (
    DeviceTrust,
    TrustBook,
    TrustState,
    device_name,
)
from tests.client.signal.interop import AGENT_NAME, Agent
from tests.helpers.client_agent import Recorder, connected_agent, wait_for
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.reference_peer import ReferencePeer, reference_peer_available

pytestmark = pytest.mark.skipif(not reference_peer_available(), reason="no reference peer")

FAMILY = "c-family"
ENVELOPES = 5000
FETCH = 250  # within the integration's cap on one /agent/group-keys answer (256)


@dataclass
class Sender:
    """One Signal session that delivers group keys: a person's device (real or invented)."""

    person: str
    device: str
    peer: ReferencePeer

    def envelope(self, key: groups.GroupKey) -> dict[str, Any]:
        sealed = self.peer.encrypt(AGENT_NAME, json.dumps(key.to_json()).encode())
        return {
            "conversation_id": key.conversation_id,
            "key_id": key.key_id,
            "epoch": key.epoch,
            "sender_id": self.person,
            "sender_device_id": self.device,
            "envelope_b64": base64.b64encode(sealed).decode(),
        }


def _senders(agent: Agent, *names: tuple[str, str]) -> list[Sender]:
    found = []
    for person, device in names:
        peer = ReferencePeer(f"{person}.{device}")
        peer.process_prekey_bundle(AGENT_NAME, agent.bundle())
        found.append(Sender(person, device, peer))
    return found


def _key(conversation_id: str, key_id: str, epoch: int) -> groups.GroupKey:
    return groups.GroupKey(conversation_id, key_id, epoch, os.urandom(32))


def _learn(
    data: AgentData, envelopes: list[dict[str, Any]], sizes: StoredSizes, valued: Any = None
) -> AgentData:
    """One fetch per conversation, then the save's bounds, as the runtime does."""
    by_conversation: dict[str, list[dict[str, Any]]] = {}
    for envelope in envelopes:
        by_conversation.setdefault(envelope["conversation_id"], []).append(envelope)
    data, _ = open_batch(data, [], require_encryption=True, now=1.0, envelopes=by_conversation)
    return within_bounds(data, sizes, valued)


def _group_message(sender: str, key: groups.GroupKey, text: str) -> InboundMessage:
    return InboundMessage(
        f"m-{key.name}-{text}",
        key.conversation_id,
        sender,
        "1",
        group_recipient(key.conversation_id),
        groups.seal_message(key, text),
        True,
        None,
        (),
        f"m-{key.name}",
    )


def _opens(data: AgentData, message: InboundMessage) -> str | None:
    _, [opened] = open_batch(data, [message], require_encryption=True, now=1.0, envelopes={})
    return opened.request.text if opened.request is not None else None


def _chunks(items: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(items), FETCH):
        yield items[start : start + FETCH]


def test_a_relay_delivering_5000_key_envelopes_over_invented_sessions() -> None:
    """Members alice and bob (verified) hold the current keys of the family group; the relay
    then delivers 5,000 envelopes over sessions it made up: 2,500 in the family group (25
    invented devices, two of them claiming to be alice's and bob's, 100 epochs each) and
    2,500 in 100 groups it invents. The store stays bounded, the members' keys survive and
    their messages open, the agent still seals with a member's key, evictions are counted."""
    agent = Agent()
    alice, bob = _senders(agent, ("u-alice", "1"), ("u-bob", "1"))
    invented = _senders(
        agent,
        ("u-alice", "7"),
        ("u-bob", "9"),
        *((f"u-ghost-{index}", "1") for index in range(23)),
    )
    strangers = _senders(agent, *((f"u-stranger-{index}", "1") for index in range(100)))
    verified = {(alice.person, alice.device), (bob.person, bob.device)}

    def trusted(key: groups.GroupKey) -> bool:  # trust.py's judgment, for verified devices
        return (key.sender_id, key.sender_device_id) in verified

    alice_key, bob_key = _key(FAMILY, "k-alice", 4), _key(FAMILY, "k-bob", 4)
    sizes = StoredSizes()
    data = _learn(
        AgentData(agent.state), [alice.envelope(alice_key), bob.envelope(bob_key)], sizes, trusted
    )
    assert _opens(data, _group_message("u-bob", bob_key, "before")) == "before"

    flood = [
        sender.envelope(_key(FAMILY, f"k-{sender.person}-{sender.device}-{epoch}", epoch))
        for sender in invented
        for epoch in range(1, 101)
    ]
    flood += [
        sender.envelope(_key(f"c-invented-{index}", f"k-{epoch}", epoch))
        for index, sender in enumerate(strangers)
        for epoch in range(1, 26)
    ]
    assert len(flood) == ENVELOPES
    started = time.perf_counter()
    for chunk in _chunks(flood):
        data = _learn(data, chunk, sizes, trusted)
    elapsed = time.perf_counter() - started

    keys = data.conversations.group_keys
    family = [key for key in keys.values() if key.conversation_id == FAMILY]
    assert len(family) == MAX_KEYS_PER_GROUP
    assert len({key.conversation_id for key in keys.values()}) == MAX_KEYED_GROUPS
    per_sender: dict[tuple[str | None, str | None, str], int] = {}
    for key in keys.values():
        name = (key.sender_id, key.sender_device_id, key.conversation_id)
        per_sender[name] = per_sender.get(name, 0) + 1
    assert max(per_sender.values()) <= MAX_GROUP_KEY_EPOCHS
    # The members' keys survived, and their messages open.
    assert alice_key.name in keys
    assert bob_key.name in keys
    assert _opens(data, _group_message("u-alice", alice_key, "after")) == "after"
    assert _opens(data, _group_message("u-bob", bob_key, "after")) == "after"
    # The agent seals with a member's key, never with the relay's epoch 100: the door's
    # rule (client/trust/door.py) on a book that trusts the two members' devices.
    members = [keys[alice_key.name], keys[bob_key.name]]
    book = TrustBook(
        {
            device_name(str(k.sender_id), str(k.sender_device_id)): DeviceTrust(
                str(k.sender_id), str(k.sender_device_id), k.sender_identity, TrustState.TRUSTED
            )
            for k in members
        }
    )
    sealed = seal(
        data,
        agent_id="a-1",
        message_id="r-1",
        conversation_id=FAMILY,
        to=group_recipient(FAMILY),
        device_id=None,
        plaintext="dinner at 7",
        encrypted=True,
        rule=SealRule(book),
    )
    assert json.loads(sealed.payload)["key_id"] in {"k-alice", "k-bob"}
    # Every key learned and not kept is counted.
    assert data.evictions.group_keys == ENVELOPES + 2 - len(keys)
    stored = stored_size(data.conversations.to_json()["group_keys"])
    print(f"\n{len(keys)} group keys kept, {stored} bytes stored; the flood took {elapsed:.2f} s")
    assert stored <= MAX_KEYED_GROUPS * MAX_KEYS_PER_GROUP * MAX_GROUP_KEY_BYTES
    assert stored < 128 * 1024  # measured ~76 KiB (253 keys) for these short ids


def test_a_group_with_many_member_changes_keeps_only_the_last_epochs() -> None:
    """Ten changes of members: alice makes a key per epoch (and, once, a second key in an
    epoch). The agent keeps her last MAX_GROUP_KEY_EPOCHS epochs, one key each: a message
    still in flight from two changes ago opens, one from before that is deferred."""
    agent = Agent()
    [alice] = _senders(agent, ("u-alice", "1"))
    sizes = StoredSizes()
    data = AgentData(agent.state)
    made = []
    for epoch in range(1, 11):
        key = _key(FAMILY, f"k-{epoch}", epoch)
        made.append(key)
        data = _learn(data, [alice.envelope(key)], sizes)
    replaced = _key(FAMILY, "k-10-again", 10)
    data = _learn(data, [alice.envelope(replaced)], sizes)

    held = sorted((key.epoch, key.key_id) for key in data.conversations.group_keys.values())
    assert held == [(8, "k-8"), (9, "k-9"), (10, "k-10-again")]
    assert data.evictions.group_keys == 8
    assert _opens(data, _group_message("u-alice", made[7], "in flight")) == "in flight"
    _, [late] = open_batch(
        data,
        [_group_message("u-alice", made[6], "too late")],
        require_encryption=True,
        now=1.0,
        envelopes={},
    )
    assert late.deferred
    # The relay listing an evicted epoch again: not even decrypted (it would go at once).
    again = _key(FAMILY, "k-old", 2)
    after, _ = open_batch(
        data,
        [],
        require_encryption=True,
        now=1.0,
        envelopes={FAMILY: [alice.envelope(again)]},
    )
    assert after is data


def test_without_a_trust_judge_the_least_recently_used_group_goes_first() -> None:
    """With no host policy (a bare client), whole groups go by recency: a group whose key
    just opened a message is kept over groups learned after it."""
    agent = Agent()
    senders = _senders(agent, *((f"u-{index}", "1") for index in range(MAX_KEYED_GROUPS + 1)))
    sizes = StoredSizes()
    data = AgentData(agent.state)
    first = _key("c-0", "k", 1)
    data = _learn(data, [senders[0].envelope(first)], sizes)
    for index, sender in enumerate(senders[1:-1], start=1):
        data = _learn(data, [sender.envelope(_key(f"c-{index}", "k", 1))], sizes)
    # The first group is used (a message opens), then one group too many arrives.
    data, [opened] = open_batch(
        data,
        [_group_message("u-0", first, "still here")],
        require_encryption=True,
        now=1.0,
        envelopes={},
    )
    assert opened.request is not None
    data = _learn(data, [senders[-1].envelope(_key("c-last", "k", 1))], sizes)
    conversations = {key.conversation_id for key in data.conversations.group_keys.values()}
    assert len(conversations) == MAX_KEYED_GROUPS
    assert "c-0" in conversations  # used last but one
    assert "c-1" not in conversations  # the least recently used
    assert data.evictions.group_keys == 1


async def _inject(
    emulator: EmulatorHandle, agent_id: str, person: str, key: groups.GroupKey
) -> None:
    """The relay lists a key envelope sealed by `person`'s device 1 (a device the emulator
    makes up on the spot when `person` is nobody)."""
    device = emulator.emulator.humans.device(person, "1")
    sealed = device.encrypt_for(emulator.emulator, agent_id, json.dumps(key.to_json()).encode())
    await emulator.admin(
        "POST",
        "/group-keys",
        {
            "agent_id": agent_id,
            "conversation_id": key.conversation_id,
            "key_id": key.key_id,
            "epoch": key.epoch,
            "sender_id": person,
            "sender_device_id": "1",
            "envelope_b64": base64.b64encode(sealed).decode(),
        },
    )


async def _group_frame(emulator: EmulatorHandle, person: str, key: groups.GroupKey) -> None:
    frame = {
        "type": "MSG",
        "id": f"m-{key.name}",
        "conversation_id": key.conversation_id,
        "from": person,
        "from_device_id": "1",
        "to": group_recipient(key.conversation_id),
        "payload_b64": base64.b64encode(groups.seal_message(key, key.key_id)).decode(),
        "encrypted": True,
    }
    await emulator.faults(inject_frames=[json.dumps(frame)])


def _saved_keys(recorder: Recorder) -> int:
    saved = AgentData.from_document(recorder.documents[-1]) if recorder.documents else None
    return len(saved.conversations.group_keys) if saved is not None else 0


async def test_the_running_agent_bounds_what_the_relay_lists_and_keeps_the_trusted_key(
    emulator: EmulatorHandle,
) -> None:
    """The running agent against the emulator as a hostile relay: the owner's group key
    opens a message; the relay then lists 88 more envelopes over 22 devices it made up
    and sends a message sealed with one of them, which makes the agent fetch them all (it
    does not open: its epoch is one no member moved the group to). The
    saved store keeps MAX_KEYS_PER_GROUP keys, the owner's among them (the trust door,
    asked at each save, trusts only it), though it is the least recently used."""
    installed = await emulator.install()
    recorder = Recorder()
    conversation, owner = installed.conversation_id, installed.owner_id

    async with connected_agent(emulator, installed, recorder) as agent:
        owner_key = _key(conversation, "k-owner", 1)
        await _inject(emulator, installed.agent_id, owner, owner_key)
        await _group_frame(emulator, owner, owner_key)
        await wait_for(lambda: len(recorder.delivered) == 1)
        ghost_keys = [
            _key(conversation, f"k-ghost-{ghost}-{epoch}", epoch)
            for ghost in range(22)
            for epoch in range(1, 5)
        ]
        for index, key in enumerate(ghost_keys):
            await _inject(emulator, installed.agent_id, f"u-ghost-{index // 4}", key)
        await _group_frame(emulator, "u-ghost-21", ghost_keys[-1])
        # Fetched for that message; saved bounded. The message itself waits: its epoch is
        # one no member moved the group to (client/values/group_epochs.py).
        await wait_for(lambda: _saved_keys(recorder) == MAX_KEYS_PER_GROUP)
        saved = AgentData.from_document(recorder.documents[-1])
        assert saved is not None
        keys = saved.conversations.group_keys
        assert len(keys) == MAX_KEYS_PER_GROUP
        assert owner_key.name in keys
        assert ghost_keys[-1].name in keys  # the key learned last
        assert len(recorder.delivered) == 1
        # 89 learned (22 devices x 4 epochs and the owner's): 22 of older epochs, then 3
        # beyond the group's bound.
        assert saved.evictions.group_keys == 89 - MAX_KEYS_PER_GROUP
        # The door trusted the owner's first device on first use: only its key is valued.
        assert agent.trust.book.get(owner, "1").trusted


@pytest.mark.parametrize(
    ("listed", "refusal"),
    [(300, "at most 256 items"), (ENVELOPES, "response over 1048576 bytes")],
)
async def test_a_relay_listing_thousands_of_envelopes_in_one_answer_is_refused_unopened(
    emulator: EmulatorHandle, caplog: pytest.LogCaptureFixture, listed: int, refusal: str
) -> None:
    """One `/agent/group-keys` answer of 300 envelopes (over api.MAX_GROUP_KEY_ENVELOPES)
    or of 5,000 (over the 1 MiB of any answer): refused whole, none decrypted, nothing
    learned; the message that made the agent fetch waits, unacknowledged, for a relay that
    behaves. So one fetch decrypts at most 256 envelopes."""
    installed = await emulator.install()
    recorder = Recorder()
    conversation = installed.conversation_id
    filler = base64.b64encode(b"\x33" * 60).decode()
    emulator.emulator.state.group_keys.extend(
        {
            "agent_id": installed.agent_id,
            "conversation_id": conversation,
            "key_id": f"k-{index}",
            "epoch": 1,
            "sender_id": f"u-ghost-{index}",
            "sender_device_id": "1",
            "envelope_b64": filler,
        }
        for index in range(listed)
    )
    async with connected_agent(emulator, installed, recorder) as agent:
        await _group_frame(emulator, installed.owner_id, _key(conversation, "k-owner", 1))
        await wait_for(lambda: "Could not fetch group keys" in caplog.text)
        assert refusal in caplog.text
        assert not agent.data.conversations.group_keys
        assert not recorder.delivered


def test_one_fetch_starts_at_most_64_sessions_the_next_one_goes_on() -> None:
    """A fetch listing envelopes over 100 sessions the agent never saw: 64 key agreements,
    the other 36 envelopes wait for the next fetch (the relay lists them again)."""
    agent = Agent()
    senders = _senders(agent, *((f"u-new-{index}", "1") for index in range(100)))
    envelopes = [sender.envelope(_key(FAMILY, f"k-{sender.person}", 1)) for sender in senders]
    listed = {FAMILY: envelopes}
    data = AgentData(agent.state)
    started = time.perf_counter()
    data, _ = open_batch(data, [], require_encryption=True, now=1.0, envelopes=listed)
    elapsed = time.perf_counter() - started
    assert len(data.signal.sessions) == MAX_NEW_GROUP_KEY_SESSIONS
    assert len(data.conversations.group_keys) == MAX_NEW_GROUP_KEY_SESSIONS
    print(f"\n{MAX_NEW_GROUP_KEY_SESSIONS} new sessions in one fetch: {elapsed:.2f} s")
    data, _ = open_batch(data, [], require_encryption=True, now=1.0, envelopes=listed)
    assert len(data.signal.sessions) == 100
    assert len(data.conversations.group_keys) == 100


def test_a_store_from_before_the_bounds_loads_and_is_bounded_at_its_first_save() -> None:
    """Same stored form (no migration): a document holding 10 epochs of a member's keys and
    evictions counted without `group_keys` loads as is; its first save keeps 3 epochs."""
    old = AgentData(Agent().state)
    for epoch in range(1, 11):
        key = _key(FAMILY, f"k-{epoch}", epoch)
        conversations = old.conversations.with_group_key(
            groups.GroupKey(
                key.conversation_id, key.key_id, key.epoch, key.raw_key, "u-alice", "1", None
            )
        )
        old = AgentData(old.signal, conversations=conversations)
    document = json.loads(json.dumps(old.sections()))
    del document["evictions"]["group_keys"]
    loaded = AgentData.from_document(document)
    assert loaded is not None
    assert len(loaded.conversations.group_keys) == 10
    saved = within_bounds(loaded)
    assert sorted(key.epoch for key in saved.conversations.group_keys.values()) == [8, 9, 10]
    assert saved.evictions.group_keys == 7
