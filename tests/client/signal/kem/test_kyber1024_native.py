"""Kyber1024 prekeys on native ML-KEM-1024: the same shared secrets as round 3, both branches.

The proof runs both decapsulations on the same key. `_mlkem_expanded_secret` is an ML-KEM-1024
key generation of our own over our K-PKE (FIPS 203 Algorithms 13 and 16): it expands the
seed `cryptography` stores into the 3168-byte secret key that the pure-Python round 3 code
(kyber1024.py, itself checked against the NIST round 3 KAT and libsignal) decapsulates with.
"""

import base64
import json
import random
from dataclasses import replace
from hashlib import sha3_256, sha3_512, shake_256
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.mlkem import MLKEM1024PrivateKey

from custom_components.pacerelle.client.signal.engine import decrypt, encrypt
from custom_components.pacerelle.client.signal.errors import SignalError, SignalErrorKind
from custom_components.pacerelle.client.signal.kem import (
    decapsulate_kyber1024,
    kpke,
    kyber1024,
    kyber1024_native,
)
from custom_components.pacerelle.client.signal.prekeys import ROTATION_INTERVAL, PreKeys
from custom_components.pacerelle.client.signal.session import PeerAddress
from custom_components.pacerelle.client.signal.state import AgentSignalState
from tests.client.signal.interop import native_bundle
from tests.helpers.reference_peer import ReferencePeer, reference_peer_available

native = pytest.mark.skipif(not reference_peer_available(), reason="reference peer not installed")

# Prekeys saved by the engine before this change (commit 8940c23, pure-Python round 3
# Kyber and XEdDSA): a current and a retired signed/Kyber pair, five one-time prekeys.
LEGACY_PREKEYS = Path(__file__).parents[1] / "data" / "legacy_prekeys.json"
LEGACY_CREATED = 1_790_000_000
RANK = 4  # ML-KEM-1024's k, the byte FIPS 203 appends to d in key generation


def _mlkem_expanded_secret(seed: bytes) -> tuple[bytes, bytes]:
    """(public key, expanded secret key) of ML-KEM-1024 from the seed d || z."""
    d, z = seed[:32], seed[32:]
    expanded = sha3_512(d + bytes((RANK,))).digest()  # G(d || k): round 3 hashes d alone
    public, pke_secret = kpke.generate(kpke.KYBER1024, expanded[:32], expanded[32:])
    return public, pke_secret + public + sha3_256(public).digest() + z


def _tampered(ciphertext: bytes, rng: random.Random) -> bytes:
    changed = bytearray(ciphertext)
    for _ in range(rng.randint(1, 3)):
        changed[rng.randrange(len(changed))] ^= 1 << rng.randrange(8)
    return bytes(changed)


def test_our_mlkem_key_generation_matches_the_native_one() -> None:
    rng = random.Random(1)
    for _ in range(20):
        seed = rng.randbytes(64)
        public, secret = _mlkem_expanded_secret(seed)
        assert len(secret) == kyber1024.SECRET_KEY_SIZE
        assert kyber1024_native.public_key(seed) == public
    generated_public, generated_seed = kyber1024_native.generate_keypair()
    assert len(generated_seed) == kyber1024_native.SEED_SIZE
    assert _mlkem_expanded_secret(generated_seed)[0] == generated_public


def test_valid_ciphertexts_give_the_round3_secret_natively() -> None:
    rng = random.Random(2)
    for _ in range(10):
        seed = rng.randbytes(64)
        public, secret = _mlkem_expanded_secret(seed)
        for _ in range(5):
            coins = rng.randbytes(32)
            ciphertext, shared = kyber1024.encapsulate(public, coins)
            assert kyber1024_native.decapsulate(seed, ciphertext) == shared
            assert kyber1024.decapsulate(secret, ciphertext) == shared
            # ML-KEM itself took the accepting branch: K' of G(m || H(ek)), m = H(coins).
            message = sha3_256(coins).digest()
            accepted = sha3_512(message + sha3_256(public).digest()).digest()[:32]
            assert MLKEM1024PrivateKey.from_seed_bytes(seed).decapsulate(ciphertext) == accepted


def test_rejected_ciphertexts_give_libcrux_rejection_secret_natively() -> None:
    rng = random.Random(3)
    for _ in range(10):
        seed = rng.randbytes(64)
        public, secret = _mlkem_expanded_secret(seed)
        valid, shared = kyber1024.encapsulate(public, rng.randbytes(32))
        for ciphertext in (_tampered(valid, rng), rng.randbytes(kyber1024.CIPHERTEXT_SIZE)):
            rejected = kyber1024_native.decapsulate(seed, ciphertext)
            assert rejected == kyber1024.decapsulate(secret, ciphertext) != shared
            # ML-KEM took the rejecting branch: J(z || c), which libcrux passes to its KDF.
            implicit = shake_256(seed[32:] + ciphertext).digest(32)
            assert MLKEM1024PrivateKey.from_seed_bytes(seed).decapsulate(ciphertext) == implicit
            assert rejected == kyber1024.kdf(implicit, ciphertext)


def test_prekey_decapsulation_picks_the_code_by_the_stored_form() -> None:
    seed = bytes(range(64))
    public, expanded = _mlkem_expanded_secret(seed)
    legacy_public, legacy_secret = kyber1024.generate_keypair(seed)
    assert legacy_public != public  # G(d) vs G(d || k): different keys from one seed
    ciphertext, shared = kyber1024.encapsulate(public, bytes(32))
    legacy_ciphertext, legacy_shared = kyber1024.encapsulate(legacy_public, bytes(32))
    assert decapsulate_kyber1024(seed, ciphertext) == shared
    assert decapsulate_kyber1024(expanded, ciphertext) == shared
    assert decapsulate_kyber1024(legacy_secret, legacy_ciphertext) == legacy_shared
    for secret, kind in ((bytes(63), SignalErrorKind.INVALID_KEY), (seed, None)):
        with pytest.raises(SignalError) as caught:
            decapsulate_kyber1024(secret, ciphertext[:-1])
        assert caught.value.kind == (kind or SignalErrorKind.INVALID_MESSAGE)


def test_new_prekeys_store_only_the_native_seed() -> None:
    keys = PreKeys.create(LEGACY_CREATED)
    assert len(keys.kyber_prekey.secret) == kyber1024_native.SEED_SIZE
    stored = keys.to_json()["kyber_prekey"]
    assert PreKeys.from_json(keys.to_json()) == keys
    other_public, _ = kyber1024_native.generate_keypair()
    for bad in ({"public": _b64(other_public)}, {"secret": _b64(bytes(65))}):
        data = keys.to_json()
        data["kyber_prekey"] = {**stored, **bad}
        with pytest.raises(SignalError) as caught:
            PreKeys.from_json(data)
        assert caught.value.kind == SignalErrorKind.INVALID_STATE


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _legacy_prekeys() -> PreKeys:
    return PreKeys.from_json(json.loads(LEGACY_PREKEYS.read_text()))


def _first_message(peer: ReferencePeer, prekeys: PreKeys, one_time_index: int) -> bytes:
    one_time = prekeys.one_time_prekeys[one_time_index].prekey_id
    peer.process_prekey_bundle("agent:a", native_bundle(prekeys, one_time))
    return peer.encrypt("agent:a", f"hello {one_time}".encode())


@native
@pytest.mark.interop
def test_libsignal_sessions_start_on_natively_made_prekeys() -> None:
    state = AgentSignalState.new()
    for device in (1, 2, 3):
        with ReferencePeer(f"human:u:{device}") as human:
            frame = _first_message(human, state.prekeys, device)
            state, plaintext = decrypt(state, PeerAddress("u", "c", device), frame)
            assert plaintext.startswith(b"hello ")
            assert human.decrypt("agent:a", _reply(state, device)) == b"reply"


def _reply(state: AgentSignalState, device: int) -> bytes:
    return encrypt(state, PeerAddress("u", "c", device), b"reply")[1]


@native
@pytest.mark.interop
def test_an_old_store_keeps_its_prekeys_until_they_rotate_out() -> None:
    legacy = _legacy_prekeys()
    assert len(legacy.kyber_prekey.secret) == kyber1024.SECRET_KEY_SIZE
    assert len(legacy.retired[0].kyber.secret) == kyber1024.SECRET_KEY_SIZE
    state = AgentSignalState(legacy)
    with ReferencePeer("human:u:1") as early, ReferencePeer("human:u:2") as late:
        # A human who fetched the old bundle, and one whose message waited in the queue.
        old_bundle_message = _first_message(early, legacy, 0)
        retired = replace(
            legacy, signed_prekey=legacy.retired[0].signed, kyber_prekey=legacy.retired[0].kyber
        )
        queued_message = _first_message(late, retired, 1)
        # The agent upgrades and rotates: the new pair is native, the old ones are in grace.
        rotated = legacy.rotate(LEGACY_CREATED + 2 * ROTATION_INTERVAL)
        assert len(rotated.kyber_prekey.secret) == kyber1024_native.SEED_SIZE
        state = state.with_prekeys(rotated)
        state = AgentSignalState.from_json(json.loads(json.dumps(state.to_json())))
        state, plaintext = decrypt(state, PeerAddress("u", "c", 1), old_bundle_message)
        assert plaintext.startswith(b"hello ")
        state, plaintext = decrypt(state, PeerAddress("u", "c", 2), queued_message)
        assert plaintext.startswith(b"hello ")
        with ReferencePeer("human:u:3") as fresh:
            frame = _first_message(fresh, state.prekeys, 2)
            state, plaintext = decrypt(state, PeerAddress("u", "c", 3), frame)
            assert plaintext.startswith(b"hello ")
    # Past the grace period the legacy keys are gone: only native secrets remain stored.
    expired = state.prekeys.rotate_if_due(LEGACY_CREATED + 60 * 24 * 3600)
    stored = [expired.kyber_prekey, *(old.kyber for old in expired.retired)]
    assert {len(prekey.secret) for prekey in stored} == {kyber1024_native.SEED_SIZE}
