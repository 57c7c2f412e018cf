"""SPQR between two of our parties: keys agree, epochs advance, failures change nothing.

Party A is libsignal's initiator (Direction.A2B), party B the recipient (B2A), both with
min_version V1 as libsignal sets them, so every message has a key from the first one on.
Randomness is seeded: a run is reproducible byte for byte.
"""

import random
from collections.abc import Callable

import pytest

from custom_components.pacerelle.client.signal.errors import SignalError, SignalErrorKind
from custom_components.pacerelle.client.signal.kem import mlkem768_incremental as kem
from custom_components.pacerelle.client.signal.spqr import (
    ChainParams,
    Direction,
    SpqrState,
    Version,
    initial_state,
    recv,
    send,
)
from custom_components.pacerelle.client.signal.spqr.authenticator import Authenticator

AUTH_KEY = bytes([41]) * 32


def _parties() -> tuple[SpqrState, SpqrState]:
    return (
        initial_state(Direction.A2B, AUTH_KEY),
        initial_state(Direction.B2A, AUTH_KEY),
    )


def _random(seed: int) -> Callable[[int], bytes]:
    return random.Random(seed).randbytes


def _epoch(state: SpqrState) -> int:
    assert state.braid is not None
    return state.braid.epoch


def _lockstep(steps: int, seed: int = 1) -> tuple[SpqrState, SpqrState, list[bytes]]:
    a, b = _parties()
    rng = _random(seed)
    wire: list[bytes] = []
    for _ in range(steps):
        a, a_key, message = send(a, rng)
        b, b_key = recv(b, message)
        assert a_key is not None
        assert a_key == b_key
        wire.append(message)
        b, b_key, message = send(b, rng)
        a, a_key = recv(a, message)
        assert b_key is not None
        assert a_key == b_key
        wire.append(message)
    return a, b, wire


def test_first_messages_carry_the_header_and_its_mac() -> None:
    a, b = _parties()
    seed = bytes(range(64))
    rng = iter([seed])
    a, key, first = send(a, lambda n: next(rng)[:n])
    assert key is not None
    keys = kem.generate(seed)
    mac = Authenticator.new(AUTH_KEY, 1).mac_hdr(1, keys.hdr)
    # version 1, epoch 1, key index 1, HDR, chunk 0: the erasure code is systematic.
    assert first == bytes([1, 1, 1, 1, 0]) + keys.hdr[:32]
    a, _, second = send(a, lambda n: b"")
    a, _, third = send(a, lambda n: b"")
    assert second == bytes([1, 1, 2, 1, 1]) + keys.hdr[32:]
    assert third == bytes([1, 1, 3, 1, 2]) + mac
    # B has nothing to send before the header: an empty payload, but already a key.
    _, b_key, b_first = send(b, lambda n: b"")
    assert b_first == bytes([1, 1, 1, 0])
    assert b_key is not None


def test_lockstep_keys_agree_and_epochs_advance() -> None:
    a, b, wire = _lockstep(90)
    assert _epoch(a) >= 3
    assert _epoch(b) >= 3
    # Messages are short: a chunk (32 bytes) plus a few bytes of header.
    assert max(len(m) for m in wire) <= 40
    # The same seed gives the same bytes.
    assert _lockstep(90)[2] == wire


def test_random_traffic_with_loss() -> None:
    # Port of lib.rs `ratchet`: each side sends half the time, 30 % of messages are lost.
    a, b = _parties()
    rng = random.Random(5)
    coin = rng.random
    epochs_seen = set()
    for _ in range(400):
        if coin() < 0.5:
            a, a_key, message = send(a, rng.randbytes)
            if coin() < 0.7:
                b, b_key = recv(b, message)
                assert a_key == b_key
        if coin() < 0.5:
            b, b_key, message = send(b, rng.randbytes)
            if coin() < 0.7:
                a, a_key = recv(a, message)
                assert a_key == b_key
        epochs_seen.add(_epoch(a))
    assert max(epochs_seen) >= 3


def test_out_of_order_and_bursts() -> None:
    # After lib.rs empty_key_until_version_negotiation, with libsignal's min_version V1.
    a, b = _parties()
    rng = _random(3)
    from_a, from_b = [], []
    for _ in range(3):
        a, key, message = send(a, rng)
        from_a.append((message, key))
        b, key, message = send(b, rng)
        from_b.append((message, key))
    a, key = recv(a, from_b[1][0])
    assert key == from_b[1][1]
    for _ in range(2):
        a, key, message = send(a, rng)
        from_a.append((message, key))
    b, key = recv(b, from_a[0][0])
    assert key == from_a[0][1]
    for _ in range(2):
        b, key, message = send(b, rng)
        from_b.append((message, key))
    for message, want in (from_a[2], from_a[3], from_a[1], from_a[4]):
        b, key = recv(b, message)
        assert key == want
    for message, want in (from_b[0], from_b[2], from_b[3], from_b[4]):
        a, key = recv(a, message)
        assert key == want


def test_shuffled_bursts_across_epochs() -> None:
    a, b = _parties()
    rng = random.Random(9)
    for _ in range(40):
        for sender, receiver in (("a", "b"), ("b", "a")):
            parties = {"a": a, "b": b}
            burst = []
            for _ in range(rng.randrange(1, 10)):
                parties[sender], key, message = send(parties[sender], rng.randbytes)
                burst.append((message, key))
            rng.shuffle(burst)
            for message, want in burst:
                parties[receiver], key = recv(parties[receiver], message)
                assert key == want
            a, b = parties["a"], parties["b"]
    assert _epoch(a) >= 3


def test_json_round_trip_changes_nothing() -> None:
    # The same run as _lockstep(90, seed=11), with states stored and read back on the way.
    reference = _lockstep(90, seed=11)[2]
    a, b = _parties()
    rng_a = _random(11)
    coin = random.Random(11).random
    kinds = set()
    for i in range(90):
        a, _, message = send(a, rng_a)
        assert message == reference[2 * i]
        b, _ = recv(b, message)
        b, _, message = send(b, rng_a)
        assert message == reference[2 * i + 1]
        a, _ = recv(a, message)
        for state in (a, b):
            kinds.add(type(state.braid).__name__)
            restored = SpqrState.from_json(state.to_json())
            assert restored == state
        if coin() < 0.5:
            a, b = SpqrState.from_json(a.to_json()), SpqrState.from_json(b.to_json())
    assert len(kinds) == 10


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"format": 2},
        {"format": 1, "braid": {"state": "nope"}},
        {"format": 1, "chain": {"links": []}},
        {"format": 1, "negotiation": {"auth_key": "!!", "direction": 0}},
    ],
)
def test_bad_json_is_refused(data: dict[str, object]) -> None:
    with pytest.raises(SignalError) as err:
        SpqrState.from_json(data)
    assert err.value.kind is SignalErrorKind.INVALID_STATE


def _snapshot(state: SpqrState) -> object:
    return state.to_json()


def test_failures_leave_the_state_unchanged() -> None:
    a, b, _ = _lockstep(3)
    before = _snapshot(b)
    a, _, message = send(a, _random(4))
    for bad in (
        b"\x01",
        message[:5],
        bytes([1, 0]) + message[2:],  # epoch 0
        bytes([1, 9]) + message[2:],  # an epoch far ahead
        message[:3] + b"\x09" + message[4:],  # unknown payload type
    ):
        with pytest.raises(SignalError) as err:
            recv(b, bad)
        assert err.value.kind is SignalErrorKind.PQ_RATCHET
        assert _snapshot(b) == before
    # A replayed message has no key left.
    b, _ = recv(b, message)
    before = _snapshot(b)
    with pytest.raises(SignalError, match="Key already requested"):
        recv(b, message)
    assert _snapshot(b) == before


def test_a_tampered_header_fails_its_mac() -> None:
    a, b = _parties()
    rng = _random(8)
    tampered = []
    for _ in range(3):
        a, _, message = send(a, rng)
        tampered.append(message[:-1] + bytes([message[-1] ^ 1]))
    b, _ = recv(b, tampered[0])
    b, _ = recv(b, tampered[1])
    before = _snapshot(b)
    with pytest.raises(SignalError, match="MAC verification failed"):
        recv(b, tampered[2])
    assert _snapshot(b) == before


def test_a_tampered_ciphertext_fails_its_mac() -> None:
    a, b = _parties()
    rng = _random(12)
    message = b""
    while not message or message[3] != 6:  # until B sends its first CT2 chunk
        a, _, message = send(a, rng)
        b, _ = recv(b, message)
        b, _, message = send(b, rng)
        if message[3] != 6:
            a, _ = recv(a, message)
    a, _ = recv(a, message[:-1] + bytes([message[-1] ^ 0x80]))
    # ct2 and its MAC take 5 chunks: the last one completes the tampered ciphertext.
    for _ in range(3):
        b, _, message = send(b, rng)
        a, _ = recv(a, message)
    before = _snapshot(a)
    b, _, message = send(b, rng)
    with pytest.raises(SignalError, match="MAC verification failed"):
        recv(a, message)
    assert _snapshot(a) == before


def test_sending_does_not_change_the_state_passed_in() -> None:
    a, b, _ = _lockstep(10)
    for state in (a, b):
        before = _snapshot(state)
        send(state, _random(2))
        assert _snapshot(state) == before


def test_custom_chain_params_are_enforced() -> None:
    params = ChainParams(max_jump=5, max_ooo_keys=5)
    a = initial_state(Direction.A2B, AUTH_KEY, chain_params=params)
    b = initial_state(Direction.B2A, AUTH_KEY, chain_params=params)
    rng = _random(6)
    messages = []
    for _ in range(7):
        a, _, message = send(a, rng)
        messages.append(message)
    with pytest.raises(SignalError, match="Key jump: 0 - 6"):
        recv(b, messages[5])
    b, _ = recv(b, messages[4])


# Version negotiation (lib.rs tests).


def test_min_version_v1_creates_keys_at_once_while_v0_waits() -> None:
    for v1_side in (Direction.A2B, Direction.B2A):
        strict = initial_state(v1_side, AUTH_KEY, min_version=Version.V1)
        lenient = initial_state(v1_side.switch(), AUTH_KEY, min_version=Version.V0)
        strict, key, message = send(strict, _random(1))
        assert key is not None
        lenient, lenient_key, _ = send(lenient, _random(2))
        assert lenient_key is None
        lenient, _ = recv(lenient, message)
        _, key, _ = send(lenient, _random(3))
        assert key is not None


def test_negotiation_down_to_v0() -> None:
    for v0_side in (Direction.A2B, Direction.B2A):
        v1 = initial_state(v0_side.switch(), AUTH_KEY, min_version=Version.V0)
        v0 = initial_state(v0_side, AUTH_KEY, version=Version.V0)
        assert v1.version is Version.V1
        assert v1.negotiation is not None
        assert v0 == SpqrState()
        v1, _, message = send(v1, _random(1))
        v0, key = recv(v0, message)
        assert key is None
        v0, key, message = send(v0, _random(2))
        assert (key, message) == (None, b"")
        v1, key = recv(v1, message)
        assert key is None
        assert v1 == SpqrState()


def test_negotiation_refused_below_min_version() -> None:
    for v0_side in (Direction.A2B, Direction.B2A):
        v1 = initial_state(v0_side.switch(), AUTH_KEY)
        with pytest.raises(SignalError, match="Minimum version") as err:
            recv(v1, b"")
        assert err.value.kind is SignalErrorKind.PQ_RATCHET


def test_no_negotiation_after_the_first_message() -> None:
    a, _, _ = _lockstep(1)
    assert a.negotiation is None
    with pytest.raises(SignalError, match="Version mismatch"):
        recv(a, b"")


def test_a_newer_version_is_ignored() -> None:
    a, _ = _parties()
    assert recv(a, bytes([2, 1, 1, 0])) == (a, None)


def test_disabled_states_exchange_nothing() -> None:
    state = SpqrState()
    for _ in range(3):
        state, key, message = send(state, _random(1))
        assert (key, message) == (None, b"")
        state, key = recv(state, message)
        assert key is None
    assert SpqrState.from_json(state.to_json()) == state
