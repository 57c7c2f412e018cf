"""X25519 keys and XEdDSA signatures, checked against libsignal's native runtime."""

import hashlib
import random
from dataclasses import replace

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from hypothesis import given, settings
from hypothesis import strategies as st

from custom_components.pacerelle.client.signal import curve
from custom_components.pacerelle.client.signal.curve import (
    PUBLIC_KEY_TYPE,
    KeyPair,
    agree,
    deserialize_public,
    serialize_public,
    xeddsa_sign,
    xeddsa_verify,
)
from custom_components.pacerelle.client.signal.errors import SignalError, SignalErrorKind
from tests.client.signal.xeddsa_pure import (
    base_multiply,
    clamp,
    compress,
    edwards_public_key,
    is_canonical_montgomery_pure,
    xeddsa_sign_pure,
)
from tests.helpers.reference_peer import (
    ReferenceBundle,
    ReferencePeer,
    ReferencePeerError,
    reference_peer_available,
)

GROUP_ORDER = 2**252 + 27742317777372353535851937790883648493
FIELD_PRIME = 2**255 - 19

keys = st.binary(min_size=32, max_size=32)
messages = st.binary(max_size=200)
nonces = st.binary(min_size=64, max_size=64)
native = pytest.mark.skipif(not reference_peer_available(), reason="reference peer not installed")


def _flip(data: bytes, bit: int) -> bytes:
    flipped = bytearray(data)
    flipped[bit // 8] ^= 1 << (bit % 8)
    return bytes(flipped)


def test_key_pair_is_clamped_and_matches_native_x25519() -> None:
    pair = KeyPair.generate()
    assert len(pair.private) == len(pair.public) == 32
    assert pair.private[0] & 0b111 == 0
    assert pair.private[31] & 0b1100_0000 == 0b0100_0000
    native_public = X25519PrivateKey.from_private_bytes(pair.private).public_key()
    assert native_public.public_bytes_raw() == pair.public
    assert KeyPair.from_private(pair.private) == pair
    assert pair.private.hex() not in repr(pair)


def test_from_private_clamps_like_libsignal() -> None:
    pair = KeyPair.from_private(b"\xff" * 32)
    assert pair.private == b"\xf8" + b"\xff" * 30 + b"\x7f"
    with pytest.raises(SignalError) as failure:
        KeyPair.from_private(b"\x01" * 31)
    assert failure.value.kind is SignalErrorKind.INVALID_KEY


def test_public_key_wire_form() -> None:
    raw = KeyPair.generate().public
    serialized = serialize_public(raw)
    assert serialized == bytes([PUBLIC_KEY_TYPE]) + raw
    assert deserialize_public(serialized) == raw
    for bad in (b"\x08" + raw, serialized[:-1], serialized + b"\x00", b""):
        with pytest.raises(SignalError) as failure:
            deserialize_public(bad)
        assert failure.value.kind is SignalErrorKind.INVALID_KEY
    with pytest.raises(SignalError):
        serialize_public(raw[:31])


def test_agreement_is_symmetric_and_refuses_low_order_points() -> None:
    alice, bob = KeyPair.generate(), KeyPair.generate()
    assert agree(alice.private, bob.public) == agree(bob.private, alice.public)
    for low_order in (bytes(32), (1).to_bytes(32, "little")):
        with pytest.raises(SignalError) as failure:
            agree(alice.private, low_order)
        assert failure.value.kind is SignalErrorKind.INVALID_KEY


def test_pure_oracle_edwards_arithmetic_matches_native_ed25519() -> None:
    for seed in (bytes(32), b"\x01" * 32, hashlib.sha256(b"seed").digest()):
        expanded = bytearray(hashlib.sha512(seed).digest()[:32])
        expanded[0] &= 248
        expanded[31] = (expanded[31] & 127) | 64
        scalar = int.from_bytes(expanded, "little")
        expected = Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw()
        assert compress(base_multiply(scalar)) == expected
        assert compress(base_multiply(scalar % GROUP_ORDER)) == expected


def test_signing_is_deterministic_given_the_randomness() -> None:
    pair = KeyPair.from_private(bytes(range(32)))
    first = xeddsa_sign(pair.private, b"message", bytes(64))
    assert first == xeddsa_sign(pair.private, b"message", bytes(64))
    assert first != xeddsa_sign(pair.private, b"message", b"\x01" * 64)
    assert len(first) == 64
    with pytest.raises(SignalError):
        xeddsa_sign(pair.private, b"message", bytes(63))


def _sign_bit(private: bytes) -> int:
    """The sign bit of the Edwards public key of an X25519 private key (1: x is odd)."""
    return edwards_public_key(clamp(private))[-1] >> 7


def test_libsodium_signer_is_byte_identical_to_the_pure_one_on_many_keys() -> None:
    rng = random.Random(16)
    sign_bits = []
    for _ in range(300):
        private = rng.randbytes(32)
        message = rng.randbytes(rng.randrange(0, 1600))
        nonce = rng.randbytes(64)
        pair = KeyPair.from_private(private)
        signature = xeddsa_sign(pair.private, message, nonce)
        assert signature == xeddsa_sign_pure(pair.private, message, nonce)
        assert xeddsa_verify(pair.public, message, signature)
        assert signature[-1] >> 7 == _sign_bit(private)
        sign_bits.append(_sign_bit(private))
    assert 100 < sum(sign_bits) < 200  # both Edwards signs, about half each


def _point_sum(u1: int, u2: int) -> int:
    """The u of P1 + P2 on the Montgomery curve (affine, P1 != +-P2), from chosen v's."""
    v1, v2 = _montgomery_v(u1), _montgomery_v(u2)
    slope = (v2 - v1) * pow(u2 - u1, -1, FIELD_PRIME) % FIELD_PRIME
    return (slope * slope - 486662 - u1 - u2) % FIELD_PRIME


def _montgomery_v(u: int) -> int:
    p = FIELD_PRIME
    rhs = (u**3 + 486662 * u * u + u) % p
    root = pow(rhs, (p + 3) // 8, p)
    if root * root % p != rhs:
        root = root * pow(2, (p - 1) // 4, p) % p
    assert root * root % p == rhs
    return root


def test_native_prime_order_check_agrees_with_the_pure_ladder() -> None:
    rng = random.Random(161)
    order_eight = 39382357235489614581723060781553021112529911719440698176882885853963445705823
    candidates = [0, 1, 2, 9, FIELD_PRIME - 1, FIELD_PRIME, FIELD_PRIME + 9, 2**256 - 1]
    candidates += [order_eight, FIELD_PRIME - order_eight]
    for _ in range(150):
        u = int.from_bytes(KeyPair.generate().public, "little")
        candidates += [u, _point_sum(u, order_eight), rng.randrange(2**255), rng.randrange(2**256)]
    verdicts = []
    for u in candidates:
        raw = (u % 2**256).to_bytes(32, "little")
        verdict = curve.is_prime_order_point(raw)
        assert verdict == is_canonical_montgomery_pure(raw), u
        verdicts.append(verdict)
    assert 150 <= sum(verdicts) < len(verdicts) - 300  # many of each kind


def test_without_pynacl_signing_refuses_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    assert curve.native_signing_unavailable() is None
    monkeypatch.setattr(curve, "_SODIUM", None)
    assert "PyNaCl" in (curve.native_signing_unavailable() or "")
    with pytest.raises(SignalError) as failure:
        xeddsa_sign(KeyPair.generate().private, b"m")
    assert failure.value.kind is SignalErrorKind.INVALID_STATE


@settings(max_examples=60, deadline=None)
@given(private=keys, message=messages, nonce=nonces)
def test_signatures_verify(private: bytes, message: bytes, nonce: bytes) -> None:
    pair = KeyPair.from_private(private)
    signature = xeddsa_sign(pair.private, message, nonce)
    assert xeddsa_verify(pair.public, message, signature)
    # libsignal signs with the unclamped scalar mod the order too: same result either way.
    assert xeddsa_sign(private, message, nonce) == signature


@settings(max_examples=60, deadline=None)
@given(private=keys, message=messages, bit=st.integers(0, 511), other=keys)
def test_tampering_is_rejected(private: bytes, message: bytes, bit: int, other: bytes) -> None:
    pair = KeyPair.from_private(private)
    signature = xeddsa_sign(pair.private, message)
    assert not xeddsa_verify(pair.public, message, _flip(signature, bit))
    assert not xeddsa_verify(pair.public, message + b"!", signature)
    if message:
        assert not xeddsa_verify(pair.public, _flip(message, 0), signature)
    stranger = KeyPair.from_private(other)
    if stranger.public != pair.public:
        assert not xeddsa_verify(stranger.public, message, signature)


def test_verify_refuses_malformed_input() -> None:
    pair = KeyPair.generate()
    signature = xeddsa_sign(pair.private, b"m")
    assert not xeddsa_verify(pair.public, b"m", signature[:63])
    assert not xeddsa_verify(pair.public[:31], b"m", signature)
    minus_one = (FIELD_PRIME - 1).to_bytes(32, "little")
    assert not xeddsa_verify(minus_one, b"m", signature)
    high = bytearray(signature)
    high[63] |= 0b0010_0000
    assert not xeddsa_verify(pair.public, b"m", bytes(high))


def _unreduced(signature: bytes) -> bytes:
    """The same signature with s + L in place of s (libsignal accepts s below 2**253)."""
    sign = signature[63] & 0x80
    s = int.from_bytes(signature[32:], "little") & ~(1 << 255)
    bumped = bytearray((s + GROUP_ORDER).to_bytes(32, "little"))
    bumped[31] |= sign
    return signature[:32] + bytes(bumped)


def test_unreduced_scalar_is_accepted_like_libsignal() -> None:
    pair = KeyPair.generate()
    signature = xeddsa_sign(pair.private, b"m")
    assert xeddsa_verify(pair.public, b"m", _unreduced(signature))


@native
@pytest.mark.interop
def test_native_signatures_verify_and_tampered_ones_do_not() -> None:
    with ReferencePeer("agent:a") as peer:
        for ids in range(1, 4):
            bundle = peer.generate_prekey_bundle(ids, ids, ids)
            identity = deserialize_public(bundle.identity_key)
            signed = (
                (bundle.signed_prekey_public, bundle.signed_prekey_signature),
                (bundle.kyber_prekey_public, bundle.kyber_prekey_signature),
            )
            for message, signature in signed:
                assert xeddsa_verify(identity, message, signature)
                assert not xeddsa_verify(identity, _flip(message, 9), signature)
                for bit in (0, 255, 256, 300, 511):
                    assert not xeddsa_verify(identity, message, _flip(signature, bit))


def _resigned(bundle: ReferenceBundle, identity: KeyPair, tamper: bool = False) -> ReferenceBundle:
    signed_prekey_signature = xeddsa_sign(identity.private, bundle.signed_prekey_public)
    kyber_signature = xeddsa_sign(identity.private, bundle.kyber_prekey_public)
    if tamper:
        kyber_signature = _flip(kyber_signature, 100)
    return replace(
        bundle,
        identity_key=serialize_public(identity.public),
        signed_prekey_signature=signed_prekey_signature,
        kyber_prekey_signature=kyber_signature,
    )


@native
@pytest.mark.interop
def test_native_runtime_accepts_our_signatures() -> None:
    with ReferencePeer("agent:a") as agent:
        bundle = agent.generate_prekey_bundle()
        assert len(bundle.kyber_prekey_public) == 1569
        for _ in range(5):
            identity = KeyPair.generate()
            with ReferencePeer("human:b") as human:
                human.process_prekey_bundle("agent:a", _resigned(bundle, identity))
                assert human.encrypt("agent:a", b"hi")[0] == 0x01
        unreduced = replace(
            _resigned(bundle, identity),
            signed_prekey_signature=_unreduced(
                xeddsa_sign(identity.private, bundle.signed_prekey_public)
            ),
        )
        with ReferencePeer("human:b") as human:
            human.process_prekey_bundle("agent:a", unreduced)


@native
@pytest.mark.interop
def test_native_runtime_rejects_our_tampered_signatures() -> None:
    with ReferencePeer("agent:a") as agent, ReferencePeer("human:b") as human:
        bundle = agent.generate_prekey_bundle()
        identity = KeyPair.generate()
        with pytest.raises(ReferencePeerError):
            human.process_prekey_bundle("agent:a", _resigned(bundle, identity, tamper=True))
        other = KeyPair.generate()
        wrong_identity = replace(
            _resigned(bundle, identity), identity_key=serialize_public(other.public)
        )
        with pytest.raises(ReferencePeerError):
            human.process_prekey_bundle("agent:a", wrong_identity)


@native
@pytest.mark.interop
def test_native_runtime_accepts_our_signatures_under_both_edwards_signs() -> None:
    rng = random.Random(1616)
    identities: dict[int, list[KeyPair]] = {0: [], 1: []}
    while min(len(found) for found in identities.values()) < 8:
        private = rng.randbytes(32)
        identities[_sign_bit(private)].append(KeyPair.from_private(private))
    with ReferencePeer("agent:a") as agent:
        bundle = agent.generate_prekey_bundle()
        for sign, pairs in identities.items():
            for identity in pairs[:8]:
                signed = _resigned(bundle, identity)
                assert signed.kyber_prekey_signature[-1] >> 7 == sign
                with ReferencePeer("human:b") as human:
                    human.process_prekey_bundle("agent:a", signed)
                    assert human.encrypt("agent:a", b"hi")[0] == 0x01


def _cryptography_agree(private: bytes, public: bytes) -> bytes | None:
    """X25519 by `cryptography`, None where it refuses (a small-order point)."""
    try:
        shared = X25519PrivateKey.from_private_bytes(private).exchange(
            X25519PublicKey.from_public_bytes(public)
        )
    except ValueError:
        return None
    return None if shared == bytes(32) else shared


def test_libsodium_x25519_matches_cryptography_and_refuses_the_same_points() -> None:
    rng = random.Random(25519)
    order_eight = 39382357235489614581723060781553021112529911719440698176882885853963445705823
    other_order_eight = 325606250916557431795983626356110631294008115727848805560023387167927233504
    low_order = [0, 1, order_eight, other_order_eight, FIELD_PRIME - 1, FIELD_PRIME]
    low_order += [FIELD_PRIME + 1, 2**255 + order_eight]
    publics = [rng.randbytes(32) for _ in range(100)]
    publics += [u.to_bytes(32, "little") for u in low_order]
    refused = 0
    for public in publics:
        pair = KeyPair.from_private(rng.randbytes(32))
        native_public = X25519PrivateKey.from_private_bytes(pair.private).public_key()
        assert native_public.public_bytes_raw() == pair.public
        expected = _cryptography_agree(pair.private, public)
        if expected is None:
            refused += 1
            with pytest.raises(SignalError) as failure:
                agree(pair.private, public)
            assert failure.value.kind is SignalErrorKind.INVALID_KEY
        else:
            assert agree(pair.private, public) == expected
    assert refused == len(low_order)
