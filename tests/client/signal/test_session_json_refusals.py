"""A stored session record is trusted only in the exact shape we write: each corrupt field of
a real record (the agent's session with the reference peer) is INVALID_STATE, never a crash
or a session that half-loads. Also the AES-CBC layer's refusals of a forged body."""

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from custom_components.pacerelle.client.signal.consts import MAX_MESSAGE_KEYS, MAX_RECEIVER_CHAINS
from custom_components.pacerelle.client.signal.engine import decrypt, encrypt
from custom_components.pacerelle.client.signal.errors import SignalError, SignalErrorKind
from custom_components.pacerelle.client.signal.session import PeerAddress
from custom_components.pacerelle.client.signal.session_json import record_from_json, record_to_json
from custom_components.pacerelle.client.signal.triple_ratchet import (
    aes_cbc_decrypt,
    aes_cbc_encrypt,
)
from tests.client.signal.interop import AGENT_NAME, Agent
from tests.helpers.reference_peer import ReferencePeer, reference_peer_available

PEER = PeerAddress("user-1", "conv-1", 1)
KEY_B64 = "A" * 43 + "="  # 32 zero bytes
type Corruption = Callable[[dict[str, Any]], None]

needs_peer = pytest.mark.skipif(not reference_peer_available(), reason="no reference peer")


@pytest.fixture(scope="module")
def record_json() -> dict[str, Any]:
    """A record after a PreKey message, a reply and an answer: SPQR chain and braid present."""
    agent = Agent()
    human = ReferencePeer("human")
    human.process_prekey_bundle(AGENT_NAME, agent.bundle())
    state, _ = decrypt(agent.state, PEER, human.encrypt(AGENT_NAME, b"x"))
    state, reply = encrypt(state, PEER, b"y")
    human.decrypt(AGENT_NAME, reply)
    state, _ = decrypt(state, PEER, human.encrypt(AGENT_NAME, b"z"))
    return json.loads(json.dumps(record_to_json(state.record(PEER))))


def _ratchet(data: dict[str, Any]) -> dict[str, Any]:
    return data["current"]["ratchet"]


def _spqr(data: dict[str, Any]) -> dict[str, Any]:
    return data["current"]["spqr"]


def _set(path: Callable[[dict[str, Any]], Any], key: Any, value: Any) -> Corruption:
    def corrupt(data: dict[str, Any]) -> None:
        path(data)[key] = value

    return corrupt


def _many_skipped(data: dict[str, Any]) -> None:
    _ratchet(data)["receivers"][0][2] = [[n, KEY_B64] for n in range(MAX_MESSAGE_KEYS + 1)]


def _many_receivers(data: dict[str, Any]) -> None:
    receivers = _ratchet(data)["receivers"]
    _ratchet(data)["receivers"] = [receivers[0]] * (MAX_RECEIVER_CHAINS + 1)


def _link(side: int, field: int, value: Any) -> Corruption:
    def corrupt(data: dict[str, Any]) -> None:
        _spqr(data)["chain"]["links"][0][side][field] = value

    return corrupt


CORRUPTIONS: dict[str, Corruption] = {
    "identity not text": _set(lambda d: d, "trusted_identity", 5),
    "identity short": _set(lambda d: d, "trusted_identity", KEY_B64),
    "version negative": _set(lambda d: d["current"], "version", -1),
    "version boolean": _set(lambda d: d["current"], "version", True),
    "registration over uint32": _set(lambda d: d["current"], "local_registration_id", 1 << 32),
    "too many skipped keys": _many_skipped,
    "too many receiver chains": _many_receivers,
    "previous not a list": _set(lambda d: d, "previous", 7),
    "spqr unknown format": _set(_spqr, "format", 99),
    "spqr root not text": _set(lambda d: _spqr(d)["chain"], "next_root", None),
    "spqr root bad base64": _set(lambda d: _spqr(d)["chain"], "next_root", "not base64!"),
    "spqr root short": _set(lambda d: _spqr(d)["chain"], "next_root", "AAAA"),
    "spqr epoch negative": _set(lambda d: _spqr(d)["chain"], "current_epoch", -1),
    "spqr send epoch past current": _set(lambda d: _spqr(d)["chain"], "send_epoch", 1),
    "spqr no links": _set(lambda d: _spqr(d)["chain"], "links", []),
    "spqr chain key bad size": _link(0, 1, "AAAA"),
    "spqr skipped keys bad size": _link(1, 2, "AAAA"),
    "spqr braid epoch 0": _set(lambda d: _spqr(d)["braid"], "epoch", 0),
    "spqr braid unknown state": _set(lambda d: _spqr(d)["braid"], "state", "sideways"),
}


@needs_peer
def test_the_record_round_trips(record_json: dict[str, Any]) -> None:
    record = record_from_json(record_json)
    assert record_to_json(record) == record_json


@needs_peer
@pytest.mark.parametrize("name", list(CORRUPTIONS))
def test_a_corrupt_field_is_invalid_state(record_json: dict[str, Any], name: str) -> None:
    data = copy.deepcopy(record_json)
    CORRUPTIONS[name](data)
    with pytest.raises(SignalError) as caught:
        record_from_json(data)
    assert caught.value.kind is SignalErrorKind.INVALID_STATE
    assert str(caught.value).startswith("invalid_state: session record:")


KEY, IV = bytes(32), bytes(16)


def test_aes_cbc_round_trip_and_whole_blocks_only() -> None:
    for size in (0, 1, 15, 16, 17):
        plain = bytes(range(size))
        sealed = aes_cbc_encrypt(KEY, IV, plain)
        assert len(sealed) % 16 == 0
        assert aes_cbc_decrypt(KEY, IV, sealed) == plain
    for forged in (b"", bytes(15), bytes(33)):
        with pytest.raises(SignalError, match="whole AES blocks") as caught:
            aes_cbc_decrypt(KEY, IV, forged)
        assert caught.value.kind is SignalErrorKind.INVALID_MESSAGE


def test_aes_cbc_bad_padding_is_invalid_message() -> None:
    sealed = aes_cbc_encrypt(KEY, IV, b"sixteen bytes!!!")  # a whole block of padding follows
    forged = sealed[:-16] + bytes(16)  # the last block decrypts to junk padding
    with pytest.raises(SignalError, match="padding") as caught:
        aes_cbc_decrypt(KEY, IV, forged)
    assert caught.value.kind is SignalErrorKind.INVALID_MESSAGE
