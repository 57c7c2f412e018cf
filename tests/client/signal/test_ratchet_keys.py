"""Ratchet key derivations (libsignal's own vectors) and the Double Ratchet's bookkeeping."""

import os

import pytest

from custom_components.pacerelle.client.signal import curve
from custom_components.pacerelle.client.signal.consts import (
    MAX_FORWARD_JUMPS,
    MAX_MESSAGE_KEYS,
    MAX_RECEIVER_CHAINS,
)
from custom_components.pacerelle.client.signal.double_ratchet import (
    RatchetState,
    SenderChain,
    receive_key,
)
from custom_components.pacerelle.client.signal.errors import SignalError, SignalErrorKind
from custom_components.pacerelle.client.signal.ratchet_keys import (
    ChainKey,
    RootKey,
    derive_message_keys,
    hkdf_sha256,
)

# ratchet/keys.rs test_chain_key_derivation.
SEED = bytes.fromhex("8ab72d6f4cc5ac0d387eaf463378ddb28edd07385b1cb01250c715982e7ad48f")
CIPHER_KEY = bytes.fromhex("bf51e9d75e0e31031051f82a2491ffc084fa298b7793bd9db620056febf45217")
MAC_KEY = bytes.fromhex("c6c77d6a73a354337a56435e34607dfe48e3ace14e77314dc6abc172e7a7030b")
NEXT_CHAIN_KEY = bytes.fromhex("28e8f8fee54b801eef7c5cfb2f17f32c7b334485bbb70fac6ec10342a246d15d")


def test_chain_key_matches_libsignal_vectors() -> None:
    chain = ChainKey(SEED, 0)
    keys = derive_message_keys(chain.message_seed(), chain.index, None)
    assert keys.cipher_key == CIPHER_KEY
    assert keys.mac_key == MAC_KEY
    assert chain.next() == ChainKey(NEXT_CHAIN_KEY, 1)
    salted = derive_message_keys(chain.message_seed(), 0, b"\x07" * 32)
    assert salted.cipher_key != CIPHER_KEY


def test_hkdf_matches_rfc5869_case_1() -> None:
    okm = hkdf_sha256(
        bytes.fromhex("000102030405060708090a0b0c"),
        bytes.fromhex("0b" * 22),
        bytes.fromhex("f0f1f2f3f4f5f6f7f8f9"),
        42,
    )
    assert okm.hex() == (
        "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"
    )


def _state() -> tuple[RatchetState, curve.KeyPair]:
    ours = curve.KeyPair.generate()
    sender = SenderChain(ours.private, curve.serialize_public(ours.public), ChainKey(b"s" * 32, 0))
    return RatchetState(RootKey(b"r" * 32), sender, (), 0), ours


def _their_key() -> bytes:
    return curve.serialize_public(curve.KeyPair.generate().public)


def test_out_of_order_keys_are_kept_once_and_duplicates_refused() -> None:
    state, _ = _state()
    theirs = _their_key()
    late = receive_key(state, theirs, 3, os.urandom)
    assert [k.counter for k in late.state.receiver_chains[0].skipped] == [2, 1, 0]
    early = receive_key(late.state, theirs, 1, os.urandom)
    assert [k.counter for k in early.state.receiver_chains[0].skipped] == [2, 0]
    # The receiving chain depends on the root and the two ratchet keys only: in order or
    # not, counter 1 gets the same seed.
    in_order = receive_key(receive_key(state, theirs, 0, os.urandom).state, theirs, 1, os.urandom)
    assert in_order.seed == early.seed
    with pytest.raises(SignalError) as caught:
        receive_key(early.state, theirs, 1, os.urandom)
    assert caught.value.kind == SignalErrorKind.DUPLICATE_MESSAGE
    with pytest.raises(SignalError) as caught:
        receive_key(early.state, theirs, 3, os.urandom)
    assert caught.value.kind == SignalErrorKind.DUPLICATE_MESSAGE
    assert late.state.receiver_chains[0].skipped[1].counter == 1  # the input was not touched


def test_forward_jump_limit_and_skipped_key_cap() -> None:
    state, _ = _state()
    theirs = _their_key()
    with pytest.raises(SignalError) as caught:
        receive_key(state, theirs, MAX_FORWARD_JUMPS + 1, os.urandom)
    assert caught.value.kind == SignalErrorKind.LIMIT_EXCEEDED
    far = receive_key(state, theirs, MAX_MESSAGE_KEYS + 10, os.urandom)
    skipped = far.state.receiver_chains[0].skipped
    assert len(skipped) == MAX_MESSAGE_KEYS
    assert skipped[0].counter == MAX_MESSAGE_KEYS + 9
    assert skipped[-1].counter == 10


def test_receiver_chains_are_capped_and_previous_counter_kept() -> None:
    state, _ = _state()
    first = _their_key()
    state = receive_key(state, first, 0, os.urandom).state
    sender_before = state.sender_chain
    state = state.advance_sender().advance_sender().advance_sender()
    for _ in range(MAX_RECEIVER_CHAINS + 2):
        state = receive_key(state, _their_key(), 0, os.urandom).state
    assert len(state.receiver_chains) == MAX_RECEIVER_CHAINS
    assert all(chain.ratchet_key != first for chain in state.receiver_chains)
    assert state.sender_chain != sender_before
    assert state.previous_counter == 0  # the last step's sending chain had sent nothing
