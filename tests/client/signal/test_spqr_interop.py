"""SPQR against libsignal's: a long conversation with the native peer crosses many epochs.

Every message's keys include SPQR's key, so a message that decrypts on the other side shows
that both SPQRs derived the same key. Epochs only advance when the ML-KEM exchange completes
in both roles (our side generating the key pair in one epoch, encapsulating in the next).
"""

import random
from typing import Any

import pytest

from custom_components.pacerelle.client.signal.engine import decrypt, encrypt
from custom_components.pacerelle.client.signal.session import PeerAddress
from custom_components.pacerelle.client.signal.spqr import SpqrState
from custom_components.pacerelle.client.signal.spqr.message import (
    PayloadType,
    decode_message,
    encode_message,
)
from custom_components.pacerelle.client.signal.wire.frame import parse_frame
from custom_components.pacerelle.client.signal.wire.messages import PreKeySignalMessage
from tests.client.signal.interop import AGENT_NAME, Agent
from tests.helpers.reference_peer import ReferencePeer, reference_peer_available

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(not reference_peer_available(), reason="no reference peer"),
]


def _spqr_states(data: Any) -> list[SpqrState]:
    """Every SPQR state inside the agent's JSON."""
    found = []
    if isinstance(data, dict):
        for key, value in data.items():
            if key == "spqr" and isinstance(value, dict):
                found.append(SpqrState.from_json(value))
            else:
                found += _spqr_states(value)
    elif isinstance(data, list):
        for value in data:
            found += _spqr_states(value)
    return found


def _pq_ratchet(frame: bytes) -> bytes:
    message = parse_frame(frame)
    if isinstance(message, PreKeySignalMessage):
        return message.message.pq_ratchet
    return message.pq_ratchet


def test_many_epochs_with_the_native_peer() -> None:
    rng = random.Random(1)
    payloads_seen = set()
    agent = Agent()
    address = PeerAddress("user", "conversation", 1)
    with ReferencePeer("human:user:1") as peer:
        peer.process_prekey_bundle(AGENT_NAME, agent.bundle())
        for i in range(300):
            frames = [peer.encrypt(AGENT_NAME, b"h%d" % i) for _ in range(rng.choice((1, 1, 3)))]
            for frame in frames:
                # libsignal's SPQR bytes read and re-encode to exactly themselves.
                pq_ratchet = _pq_ratchet(frame)
                message, index = decode_message(pq_ratchet)
                assert encode_message(message, index) == pq_ratchet
                payloads_seen.add(message.payload)
            rng.shuffle(frames)
            for frame in frames:
                agent.state, plaintext = decrypt(agent.state, address, frame)
                assert plaintext == b"h%d" % i
            replies = []
            for _ in range(rng.choice((1, 1, 4))):
                agent.state, frame = encrypt(agent.state, address, b"a%d" % i)
                replies.append(frame)
            rng.shuffle(replies)
            for frame in replies:
                assert peer.decrypt(AGENT_NAME, frame) == b"a%d" % i
            if i % 50 == 0:
                agent.reload()
    (state,) = _spqr_states(agent.state.to_json())
    assert state.chain is not None
    assert state.chain.current_epoch >= 6
    assert payloads_seen == set(PayloadType)
