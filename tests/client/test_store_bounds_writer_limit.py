"""The writer never produces a store that loading refuses (issue 12 item 2), and a kill's
leftovers are cleaned at load (item 9): the encrypted file and the agent's commit, on disk.
"""

import asyncio
import json
import os
import secrets
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from custom_components.pacerelle.client.agent_core import AgentConfig, AgentCore, AgentHooks
from custom_components.pacerelle.client.limits import (
    GCM_NONCE_BYTES,
    GCM_TAG_BYTES,
    MAX_DOCUMENT_BYTES,
)
from custom_components.pacerelle.client.signal.consts import (
    ARCHIVED_STATES_MAX_LENGTH,
    MAX_MESSAGE_KEYS,
    MAX_RECEIVER_CHAINS,
)
from custom_components.pacerelle.client.signal.double_ratchet import SkippedKey
from custom_components.pacerelle.client.signal.engine import decrypt
from custom_components.pacerelle.client.signal.session import PeerAddress, SessionRecord
from custom_components.pacerelle.client.state.document_store import DocumentStore
from custom_components.pacerelle.client.state.encrypted_file import EncryptedFile
from custom_components.pacerelle.client.state.errors import DocumentTooLargeError
from custom_components.pacerelle.client.values.agent_data import AgentData
from tests.client.signal.interop import AGENT_NAME, Agent
from tests.helpers.reference_peer import ReferencePeer, reference_peer_available

HEADER = 5  # MAGIC and FORMAT


@pytest.fixture
def store(tmp_path: Path) -> EncryptedFile:
    return EncryptedFile(tmp_path / "pacerelle", "agt_1")


def _document_of_size(size: int) -> dict[str, Any]:
    """A document whose encrypted file is exactly `size` bytes."""
    empty = len(json.dumps({"x": ""}, separators=(",", ":")))
    filler = size - HEADER - GCM_NONCE_BYTES - GCM_TAG_BYTES - empty
    return {"x": "a" * filler}


def test_the_largest_document_written_is_one_that_loads(store: EncryptedFile) -> None:
    store.create({"version": 1})
    store.write(_document_of_size(MAX_DOCUMENT_BYTES))
    assert store.data_path.stat().st_size == MAX_DOCUMENT_BYTES
    assert len(store.read()["x"]) > 0


def test_one_byte_more_is_refused_before_touching_the_disk(store: EncryptedFile) -> None:
    store.create({"version": 1})
    with pytest.raises(DocumentTooLargeError) as caught:
        store.write(_document_of_size(MAX_DOCUMENT_BYTES + 1))
    assert caught.value.excess == 1
    assert store.read() == {"version": 1}
    assert sorted(p.name for p in store.directory.iterdir()) == ["agt_1.enc", "agt_1.key"]


def test_leftovers_of_killed_writes_are_removed_at_load(store: EncryptedFile) -> None:
    store.create({"version": 1})
    directory = store.directory
    ours = [f".agt_1.{secrets.token_hex(4)}.tmp" for _ in range(3)]
    for name in ours:
        (directory / name).write_bytes(b"half a document")
    target = directory.parent / "precious"
    target.write_text("keep me")
    os.symlink(target, directory / ".agt_1.0badc0de.tmp")  # a link named like ours
    others = [".agt_2.0123abcd.tmp", ".agt_1.notours.tmp", "agt_1.0123abcd.tmp", "notes"]
    for name in others:
        (directory / name).write_text("not ours")

    assert store.read() == {"version": 1}

    left = sorted(p.name for p in directory.iterdir())
    assert not set(ours) & set(left)
    assert set(others) <= set(left)
    assert ".agt_1.0badc0de.tmp" in left  # never followed, never removed
    assert target.read_text() == "keep me"


def _swollen_record(peer: PeerAddress) -> tuple[AgentData, SessionRecord]:
    """A real session, then made as large as libsignal's bounds let a hostile peer make it:
    every receiving chain full of skipped keys, every archive slot taken."""
    agent = Agent()
    human = ReferencePeer("human")
    human.process_prekey_bundle(AGENT_NAME, agent.bundle())
    state, _ = decrypt(agent.state, peer, human.encrypt(AGENT_NAME, b"hello"))
    record = state.record(peer)
    assert record.current is not None
    chain = record.current.ratchet.receiver_chains[0]
    skipped = tuple(SkippedKey(n, secrets.token_bytes(32)) for n in range(MAX_MESSAGE_KEYS))
    ratchet = replace(
        record.current.ratchet,
        receiver_chains=(replace(chain, skipped=skipped),) * MAX_RECEIVER_CHAINS,
    )
    fat = replace(record.current, ratchet=ratchet)
    swollen = replace(record, current=fat, previous=(fat,) * ARCHIVED_STATES_MAX_LENGTH)
    return AgentData(state), swollen


@pytest.mark.skipif(not reference_peer_available(), reason="no reference peer")
async def test_a_save_too_large_to_load_evicts_more_instead_of_failing(
    store: EncryptedFile,
) -> None:
    base, data = await asyncio.to_thread(_swollen_agent_data)
    await asyncio.to_thread(store.create, {"version": 1})

    async def save(document: dict[str, Any]) -> None:
        await asyncio.to_thread(store.write, document)

    def run_blocking[T](function: Callable[[], T]) -> Any:
        return asyncio.to_thread(function)

    hooks = AgentHooks(run_blocking=run_blocking, deliver=lambda _: None)
    config = AgentConfig("agt_1", "u", "c", "http://127.0.0.1")
    core = AgentCore(config, hooks, base, {}, store=DocumentStore(save, run_blocking))
    async with asyncio.timeout(60):
        await core.commit(data)

    size = await asyncio.to_thread(lambda: store.data_path.stat().st_size)
    assert size <= MAX_DOCUMENT_BYTES
    document = await asyncio.to_thread(store.read)  # it loads
    assert document["evictions"] == core.data.evictions.to_json()
    assert core.data.evictions.store_shrinks == 1
    assert core.data.evictions.archived_sessions > 0
    # Archived states go before whole records, from the least recently used record.
    archived = {
        name: len(record["previous"]) for name, record in document["signal"]["sessions"].items()
    }
    assert len(archived) == 4
    names = [PeerAddress("u", "c", device).storage_name for device in range(1, 5)]
    assert archived[names[0]] < ARCHIVED_STATES_MAX_LENGTH
    assert [archived[name] for name in names[1:]] == [ARCHIVED_STATES_MAX_LENGTH] * 2 + [12]


def _swollen_agent_data() -> tuple[AgentData, AgentData]:
    """(the agent's data, the same with four swollen records: ~71 MB, over the limit)."""
    base, swollen = _swollen_record(PeerAddress("u", "c", 1))
    signal = base.signal
    for device in range(1, 5):
        record = swollen if device < 4 else replace(swollen, previous=swollen.previous[:12])
        signal = signal.with_record(PeerAddress("u", "c", device), record, now=float(device))
    return base, replace(base, signal=signal)
