"""The reference peer binding: two native stores hold a conversation."""

from dataclasses import replace

import pytest

from tests.helpers.reference_peer import (
    ReferencePeer,
    ReferencePeerError,
    reference_peer_available,
)

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(not reference_peer_available(), reason="reference peer not installed"),
]

PREKEY_MESSAGE = 0x01
SIGNAL_MESSAGE = 0x02


def test_bundle_has_the_published_shape() -> None:
    with ReferencePeer("agent:a") as agent:
        bundle = agent.generate_prekey_bundle(prekey_id=7, signed_prekey_id=9, kyber_prekey_id=9)
    assert (bundle.prekey_id, bundle.signed_prekey_id, bundle.kyber_prekey_id) == (7, 9, 9)
    assert bundle.device_id == 1
    # 14 bits; the native generator can give 0 (seen once in CI), so 0 counts.
    assert 0 <= bundle.registration_id < 1 << 14
    assert len(bundle.identity_key) == 33
    assert bundle.identity_key[0] == 0x05
    assert len(bundle.prekey_public) == 33
    assert len(bundle.signed_prekey_public) == 33
    assert len(bundle.signed_prekey_signature) == 64
    assert len(bundle.kyber_prekey_public) == 1569
    assert bundle.kyber_prekey_public[0] == 0x08
    assert len(bundle.kyber_prekey_signature) == 64


def test_two_peers_converse_and_survive_a_snapshot() -> None:
    with ReferencePeer("agent:a") as agent, ReferencePeer("human:b") as human:
        human.process_prekey_bundle("agent:a", agent.generate_prekey_bundle())

        first = human.encrypt("agent:a", b"hello agent")
        assert first[0] == PREKEY_MESSAGE
        assert first[1] == 0x44  # message version 4 in both nibbles
        assert agent.decrypt("human:b", first) == b"hello agent"

        reply = agent.encrypt("human:b", b"hello human")
        assert reply[0] == SIGNAL_MESSAGE
        assert human.decrypt("agent:a", reply) == b"hello human"

        with ReferencePeer.from_snapshot("agent:a", agent.export()) as restored:
            again = human.encrypt("agent:a", b"after restore")
            assert again[0] == SIGNAL_MESSAGE
            assert restored.decrypt("human:b", again) == b"after restore"
            assert human.decrypt("agent:a", restored.encrypt("human:b", b"ok")) == b"ok"


def test_native_failures_carry_the_code() -> None:
    with ReferencePeer("agent:a") as agent, ReferencePeer("human:b") as human:
        bundle = agent.generate_prekey_bundle()
        signature = bytearray(bundle.signed_prekey_signature)
        signature[0] ^= 1
        forged = replace(bundle, signed_prekey_signature=bytes(signature))
        with pytest.raises(ReferencePeerError) as failure:
            human.process_prekey_bundle("agent:a", forged)
        assert failure.value.code < 0

        with pytest.raises(ReferencePeerError):
            agent.decrypt("human:b", b"\x02garbage")


def test_closed_peer_refuses_calls() -> None:
    peer = ReferencePeer("agent:a")
    peer.close()
    peer.close()
    with pytest.raises(ReferencePeerError):
        peer.export()
