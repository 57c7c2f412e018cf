"""ML-KEM-768 with split encapsulation, as SPQR v1 uses it."""

import json
from collections.abc import Callable
from hashlib import sha3_256
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.mlkem import MLKEM768PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from custom_components.pacerelle.client.signal.errors import SignalError, SignalErrorKind
from custom_components.pacerelle.client.signal.kem.encoding import decode, encode
from custom_components.pacerelle.client.signal.kem.mlkem768_incremental import (
    CIPHERTEXT1_SIZE,
    CIPHERTEXT2_SIZE,
    ENCAPSULATION_KEY_SIZE,
    ENCAPSULATION_STATE_SIZE,
    HEADER_SIZE,
    Keys,
    decaps,
    ek_matches_header,
    encaps1,
    encaps2,
    generate,
)
from custom_components.pacerelle.client.signal.kem.ntt import Q

# The first vectors of libcrux-ml-kem's tests/kats/nistkats_mlkem_768.json (FIPS 203 final,
# seeds from NIST's KAT DRBG).
KATS = json.loads(
    (Path(__file__).parents[1] / "data" / "kem" / "mlkem768_nist_kats_libcrux.json").read_text()
)


@pytest.mark.parametrize("kat", KATS, ids=lambda kat: kat["key_generation_seed"][:8])
def test_split_encapsulation_reproduces_the_known_answers(kat: dict[str, str]) -> None:
    keys = generate(bytes.fromhex(kat["key_generation_seed"]))
    public = keys.ek + keys.hdr[:32]
    assert sha3_256(public).hexdigest() == kat["sha3_256_hash_of_public_key"]
    assert keys.hdr[32:] == sha3_256(public).digest()
    ct1, state, shared = encaps1(keys.hdr, bytes.fromhex(kat["encapsulation_seed"]))
    ct2 = encaps2(keys.ek, state)
    assert sha3_256(ct1 + ct2).hexdigest() == kat["sha3_256_hash_of_ciphertext"]
    assert shared.hex() == kat["shared_secret"]
    assert decaps(keys.dk, ct1, ct2) == shared


def test_keys_are_the_native_key_split_in_two() -> None:
    seed = bytes(range(64))
    keys = generate(seed)
    native = MLKEM768PrivateKey.from_seed_bytes(seed).public_key().public_bytes_raw()
    assert keys.dk == seed
    assert keys.ek + keys.hdr[:32] == native  # ek = t, header = rho || H(t || rho)
    assert (len(keys.ek), len(keys.hdr)) == (ENCAPSULATION_KEY_SIZE, HEADER_SIZE)
    assert generate().dk != generate().dk


@settings(max_examples=150, deadline=None)
@given(seed=st.binary(min_size=64, max_size=64), randomness=st.binary(min_size=32, max_size=32))
def test_native_decapsulation_agrees_with_split_encapsulation(
    seed: bytes, randomness: bytes
) -> None:
    keys = generate(seed)
    ct1, state, shared = encaps1(keys.hdr, randomness)
    ct2 = encaps2(keys.ek, state)
    assert (len(ct1), len(ct2), len(state)) == (
        CIPHERTEXT1_SIZE,
        CIPHERTEXT2_SIZE,
        ENCAPSULATION_STATE_SIZE,
    )
    native = MLKEM768PrivateKey.from_seed_bytes(seed)
    assert native.decapsulate(ct1 + ct2) == shared
    assert decaps(keys.dk, ct1, ct2) == shared


def test_a_key_that_does_not_match_the_header_gives_another_secret() -> None:
    keys = generate(bytes(64))
    other = generate(bytes([1]) * 64)
    ct1, state, shared = encaps1(keys.hdr)
    ct2 = encaps2(other.ek, state)
    assert decaps(keys.dk, ct1, ct2) != shared
    ct1_again, state_again, shared_again = encaps1(keys.hdr)
    assert shared_again != shared
    assert decaps(keys.dk, ct1_again, encaps2(keys.ek, state_again)) == shared_again


def _with_byte_flipped(data: bytes, index: int) -> bytes:
    changed = bytearray(data)
    changed[index] ^= 0x01
    return bytes(changed)


def test_header_check_needs_the_matching_hash_and_reduced_coefficients() -> None:
    keys = generate(bytes(range(64)))
    assert ek_matches_header(keys.ek, keys.hdr)
    assert not ek_matches_header(_with_byte_flipped(keys.ek, 0), keys.hdr)
    assert not ek_matches_header(keys.ek, _with_byte_flipped(keys.hdr, 0))  # rho
    assert not ek_matches_header(keys.ek, _with_byte_flipped(keys.hdr, 63))  # hash
    assert not ek_matches_header(keys.ek[:-1], keys.hdr)
    assert not ek_matches_header(keys.ek, keys.hdr + b"\x00")
    # Adding q to a coefficient leaves t unchanged modulo q; only the range check sees it.
    first = decode(keys.ek[:384], 12)
    index = next(i for i, value in enumerate(first) if value + Q < 4096)
    first[index] += Q
    unreduced = encode(first, 12) + keys.ek[384:]
    rehashed = keys.hdr[:32] + sha3_256(unreduced + keys.hdr[:32]).digest()
    assert not ek_matches_header(unreduced, rehashed)


def test_encapsulation_is_deterministic_given_its_randomness() -> None:
    keys = generate(bytes(64))
    first = encaps1(keys.hdr, bytes(32))
    assert encaps1(keys.hdr, bytes(32)) == first
    assert encaps1(keys.hdr, bytes([1]) * 32) != first
    assert encaps2(keys.ek, first[1]) == encaps2(keys.ek, first[1])


def _keys() -> Keys:
    return generate(bytes(64))


@pytest.mark.parametrize(
    ("call", "kind"),
    [
        (lambda: generate(bytes(32)), SignalErrorKind.INVALID_KEY),
        (lambda: encaps1(bytes(63)), SignalErrorKind.INVALID_KEY),
        (lambda: encaps1(_keys().hdr, bytes(31)), SignalErrorKind.INVALID_STATE),
        (
            lambda: encaps2(_keys().ek[:-1], bytes(ENCAPSULATION_STATE_SIZE)),
            SignalErrorKind.INVALID_KEY,
        ),
        (
            lambda: encaps2(_keys().ek, bytes(ENCAPSULATION_STATE_SIZE - 1)),
            SignalErrorKind.INVALID_STATE,
        ),
        (lambda: decaps(bytes(2400), bytes(960), bytes(128)), SignalErrorKind.INVALID_KEY),
        (lambda: decaps(bytes(64), bytes(959), bytes(128)), SignalErrorKind.INVALID_MESSAGE),
        (lambda: decaps(bytes(64), bytes(960), bytes(129)), SignalErrorKind.INVALID_MESSAGE),
    ],
)
def test_wrong_sizes_are_refused(call: Callable[[], object], kind: SignalErrorKind) -> None:
    with pytest.raises(SignalError) as caught:
        call()
    assert caught.value.kind == kind
