"""Kyber1024 (round 3, as libsignal uses it) and the lattice arithmetic under it."""

import random
from collections.abc import Callable
from hashlib import sha3_256, sha3_512, sha256, shake_256
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from hypothesis import given, settings
from hypothesis import strategies as st
from kyber_py.kyber.default_parameters import DEFAULT_PARAMETERS  # type: ignore[import-untyped]
from kyber_py.kyber.kyber import Kyber  # type: ignore[import-untyped]

from custom_components.pacerelle.client.signal.errors import SignalError, SignalErrorKind
from custom_components.pacerelle.client.signal.kem import (
    KYBER1024_KEY_TYPE,
    deserialize_kyber_ciphertext,
    deserialize_kyber_public,
    kpke,
    serialize_kyber_ciphertext,
    serialize_kyber_public,
)
from custom_components.pacerelle.client.signal.kem.encoding import (
    compress_encode,
    decode,
    decode_decompress,
    encode,
)
from custom_components.pacerelle.client.signal.kem.kyber1024 import (
    CIPHERTEXT_SIZE,
    PUBLIC_KEY_SIZE,
    SECRET_KEY_SIZE,
    decapsulate,
    encapsulate,
    generate_keypair,
)
from custom_components.pacerelle.client.signal.kem.ntt import (
    ZETAS,
    Q,
    dot,
    from_standard,
    inverse_ntt,
    ntt,
    prepare,
    to_standard,
)
from custom_components.pacerelle.client.signal.kem.sampling import sample_matrix
from tests.helpers.reference_peer import ReferencePeer, reference_peer_available

DATA = Path(__file__).parents[1] / "data" / "kem"

# SHA-256 of the official round 3 known-answer file PQCkemKAT_3168.rsp (Kyber1024, 100
# vectors; the copy in GiacomoPope/kyber-py assets/, which starts at "count = 0").
NIST_KAT_SHA256 = "a5f6aadd9e5d082937888be40cbdff3355533754b8f3d09532bc17c783b1caab"
NIST_KAT_COUNT = 100
NIST_KAT_FIRST_SHARED_SECRET = "B10F7394926AD3B49C5D62D5AEB531D5757538BCC0DA9E550D438F1B61BD7419"


class NistDrbg:
    """The AES-256-CTR DRBG of NIST's PQC KAT generator (rng.c), no reseeding."""

    def __init__(self, entropy: bytes) -> None:
        self._key = bytes(32)
        self._counter = 0
        self._update(entropy)

    def _next_block(self) -> bytes:
        self._counter = (self._counter + 1) % (1 << 128)
        encryptor = Cipher(algorithms.AES(self._key), modes.ECB()).encryptor()
        return encryptor.update(self._counter.to_bytes(16, "big")) + encryptor.finalize()

    def _update(self, provided: bytes | None) -> None:
        material = b"".join(self._next_block() for _ in range(3))
        if provided is not None:
            material = bytes(a ^ b for a, b in zip(material, provided, strict=True))
        self._key = material[:32]
        self._counter = int.from_bytes(material[32:], "big")

    def random_bytes(self, length: int) -> bytes:
        out = b""
        while len(out) < length:
            out += self._next_block()
        self._update(None)
        return out[:length]


def test_regenerates_the_nist_round3_known_answer_file() -> None:
    master = NistDrbg(bytes(range(48)))
    seeds = [master.random_bytes(48) for _ in range(NIST_KAT_COUNT)]
    records = []
    for count, seed in enumerate(seeds):
        drbg = NistDrbg(seed)
        keygen_coins = drbg.random_bytes(32) + drbg.random_bytes(32)  # d, then z
        public, secret = generate_keypair(keygen_coins)
        ciphertext, shared = encapsulate(public, drbg.random_bytes(32))
        assert decapsulate(secret, ciphertext) == shared
        if count == 0:
            assert shared.hex().upper() == NIST_KAT_FIRST_SHARED_SECRET
        fields = {"seed": seed, "pk": public, "sk": secret, "ct": ciphertext, "ss": shared}
        lines = [f"count = {count}", *(f"{k} = {v.hex().upper()}" for k, v in fields.items())]
        records.append("\n".join(lines) + "\n\n")
    assert sha256("".join(records).encode()).hexdigest() == NIST_KAT_SHA256


def test_libsignal_test_keys_work() -> None:
    public = (DATA / "libsignal-kyber1024-pk.dat").read_bytes()
    secret = (DATA / "libsignal-kyber1024-sk.dat").read_bytes()
    assert (len(public), len(secret)) == (PUBLIC_KEY_SIZE, SECRET_KEY_SIZE)
    # Layout s || pk || H(pk) || z.
    assert secret[1536 : 1536 + PUBLIC_KEY_SIZE] == public
    assert secret[1536 + PUBLIC_KEY_SIZE : -32] == sha3_256(public).digest()
    # t - A s must be the small noise e: checks our NTT order and matrix against libcrux's keys.
    rho = public[1536:]
    t_hat = kpke.decode_ntt_vector(public[:1536], 4)
    s_hat = [prepare(poly) for poly in kpke.decode_ntt_vector(secret[:1536], 4)]
    for row, t in zip(sample_matrix(rho, 4, transposed=False), t_hat, strict=True):
        noise = inverse_ntt([(a - b) % Q for a, b in zip(t, dot(row, s_hat), strict=True)])
        assert all(c <= 2 or c >= Q - 2 for c in noise)
    for coins in (bytes(32), bytes(range(32))):
        ciphertext, shared = encapsulate(public, coins)
        assert decapsulate(secret, ciphertext) == shared


# Protobuf framing around the keys in the native store's snapshot and in the message:
# KyberPreKeyRecordStructure.private_key (field 3) and PreKeySignalMessage.kyber_ciphertext
# (field 8), each 1 + 3168 or 1 + 1568 bytes with the 0x08 type byte.
SNAPSHOT_SECRET_PREFIX = b"\x1a\xe1\x18\x08"
MESSAGE_CIPHERTEXT_PREFIX = b"\x42\xa1\x0c\x08"


@pytest.mark.interop
@pytest.mark.skipif(not reference_peer_available(), reason="reference peer not installed")
def test_native_libsignal_encapsulation_reencrypts_under_our_decryption() -> None:
    with ReferencePeer("agent:a") as agent, ReferencePeer("human:b") as human:
        bundle = agent.generate_prekey_bundle()
        snapshot = agent.export()
        human.process_prekey_bundle("agent:a", bundle)
        framed = human.encrypt("agent:a", b"hello")
    public = deserialize_kyber_public(bundle.kyber_prekey_public)
    after_public = snapshot.index(bundle.kyber_prekey_public) + len(bundle.kyber_prekey_public)
    assert snapshot[after_public:].startswith(SNAPSHOT_SECRET_PREFIX)
    start = after_public + len(SNAPSHOT_SECRET_PREFIX)
    secret = snapshot[start : start + SECRET_KEY_SIZE]
    assert secret[1536 : 1536 + PUBLIC_KEY_SIZE] == public
    start = framed.index(MESSAGE_CIPHERTEXT_PREFIX) + len(MESSAGE_CIPHERTEXT_PREFIX)
    ciphertext = framed[start : start + CIPHERTEXT_SIZE]
    # The accepting branch of decapsulation: libcrux's ciphertext is exactly ours for that m.
    message = kpke.decrypt(kpke.KYBER1024, secret[:1536], ciphertext)
    coins = sha3_512(message + secret[-64:-32]).digest()[32:]
    assert kpke.encrypt(kpke.KYBER1024, public, message, coins) == ciphertext
    assert len(decapsulate(secret, ciphertext)) == 32


def _fixed_randomness(*chunks: bytes) -> Callable[[int], bytes]:
    pending = list(chunks)

    def random_bytes(length: int) -> bytes:
        chunk = pending.pop(0)
        assert len(chunk) == length
        return chunk

    return random_bytes


@settings(max_examples=6, deadline=None)
@given(seed=st.binary(min_size=64, max_size=64), coins=st.binary(min_size=32, max_size=32))
def test_agrees_with_kyber_py(seed: bytes, coins: bytes) -> None:
    other = Kyber(DEFAULT_PARAMETERS["kyber_1024"])
    other.random_bytes = _fixed_randomness(seed[:32], seed[32:], coins)
    other_public, other_secret = other.keygen()
    other_shared, other_ciphertext = other.encaps(other_public)

    public, secret = generate_keypair(seed)
    ciphertext, shared = encapsulate(public, coins)
    assert (public, secret) == (other_public, other_secret)
    assert (ciphertext, shared) == (other_ciphertext, other_shared)
    fresh_ciphertext, fresh_shared = encapsulate(public)
    assert other.decaps(other_secret, fresh_ciphertext) == fresh_shared


def test_rejects_a_tampered_ciphertext_the_libcrux_way() -> None:
    public, secret = generate_keypair(bytes(range(64)))
    ciphertext, shared = encapsulate(public, bytes(32))
    tampered = bytearray(ciphertext)
    tampered[100] ^= 1
    rejected = decapsulate(secret, bytes(tampered))
    z = secret[-32:]
    key = shake_256(z + bytes(tampered)).digest(32)
    expected = shake_256(key + sha3_256(bytes(tampered)).digest()).digest(32)
    assert rejected == expected != shared
    assert decapsulate(secret, bytes(tampered)) == rejected


def test_random_keys_round_trip_and_differ() -> None:
    first_public, first_secret = generate_keypair()
    second_public, _ = generate_keypair()
    assert first_public != second_public
    ciphertext, shared = encapsulate(first_public)
    assert len(ciphertext) == CIPHERTEXT_SIZE
    assert decapsulate(first_secret, ciphertext) == shared


@pytest.mark.parametrize(
    ("call", "kind"),
    [
        (lambda: generate_keypair(bytes(63)), SignalErrorKind.INVALID_KEY),
        (lambda: encapsulate(bytes(PUBLIC_KEY_SIZE - 1)), SignalErrorKind.INVALID_KEY),
        (lambda: encapsulate(bytes(PUBLIC_KEY_SIZE), bytes(31)), SignalErrorKind.INVALID_STATE),
        (lambda: decapsulate(bytes(SECRET_KEY_SIZE + 1), bytes(1568)), SignalErrorKind.INVALID_KEY),
        (lambda: decapsulate(bytes(SECRET_KEY_SIZE), bytes(1567)), SignalErrorKind.INVALID_MESSAGE),
    ],
)
def test_wrong_sizes_are_refused(call: Callable[[], object], kind: SignalErrorKind) -> None:
    with pytest.raises(SignalError) as caught:
        call()
    assert caught.value.kind == kind


def test_public_key_serialization_has_the_type_byte() -> None:
    public, _ = generate_keypair(bytes(64))
    serialized = serialize_kyber_public(public)
    assert len(serialized) == 1569
    assert serialized[0] == KYBER1024_KEY_TYPE == 0x08
    assert deserialize_kyber_public(serialized) == public
    ciphertext, _ = encapsulate(public, bytes(32))
    assert deserialize_kyber_ciphertext(serialize_kyber_ciphertext(ciphertext)) == ciphertext


@pytest.mark.parametrize(
    "data",
    [b"", b"\x0a" + bytes(1568), b"\x08" + bytes(1567), b"\x08" + bytes(1569), b"\x05" + bytes(32)],
)
def test_bad_serialized_public_keys_are_refused(data: bytes) -> None:
    with pytest.raises(SignalError) as caught:
        deserialize_kyber_public(data)
    assert caught.value.kind == SignalErrorKind.INVALID_KEY
    with pytest.raises(SignalError) as caught:
        deserialize_kyber_ciphertext(data)
    assert caught.value.kind == SignalErrorKind.INVALID_MESSAGE


def _reference_ntt(poly: list[int]) -> list[int]:
    # FIPS 203 Algorithm 9, written plainly.
    values = [c % Q for c in poly]
    k = 1
    length = 128
    while length >= 2:
        for start in range(0, 256, 2 * length):
            zeta = ZETAS[k]
            k += 1
            for j in range(start, start + length):
                t = zeta * values[j + length] % Q
                values[j + length] = (values[j] - t) % Q
                values[j] = (values[j] + t) % Q
        length //= 2
    return values


def _schoolbook(left: list[int], right: list[int]) -> list[int]:
    product = [0] * 512
    for i, a in enumerate(left):
        for j, b in enumerate(right):
            product[i + j] += a * b
    return [(product[i] - product[i + 256]) % Q for i in range(256)]  # X^256 = -1


def test_ntt_matches_fips203_and_multiplies_negacyclically() -> None:
    rng = random.Random(1)
    for _ in range(3):
        f = [rng.randrange(-3, Q) for _ in range(256)]
        g = [rng.randrange(Q) for _ in range(256)]
        assert to_standard(ntt(f)) == _reference_ntt(f)
        assert inverse_ntt(ntt(f)) == [c % Q for c in f]
        assert from_standard(to_standard(g)) == g
        assert inverse_ntt(dot([ntt(f)], [prepare(ntt(g))])) == _schoolbook(f, g)


@pytest.mark.parametrize("bits", [1, 4, 5, 10, 11, 12])
def test_byte_encoding_is_little_endian_bit_packing(bits: int) -> None:
    rng = random.Random(bits)
    values = [rng.randrange(1 << bits) for _ in range(256)]
    packed = sum(v << (bits * i) for i, v in enumerate(values))
    assert encode(values, bits) == packed.to_bytes(32 * bits, "little")
    assert decode(encode(values, bits), bits) == values


@pytest.mark.parametrize("bits", [1, 4, 5, 10, 11])
def test_compression_rounds_to_nearest(bits: int) -> None:
    values = list(range(0, Q, 13))[:256]
    values += [Q - 1] * (256 - len(values))
    decoded = decode(compress_encode(values, bits), bits)
    for x, y in zip(values, decoded, strict=True):
        assert y == round((x << bits) / Q) % (1 << bits)
    restored = decode_decompress(compress_encode(values, bits), bits)
    for x, r in zip(values, restored, strict=True):
        distance = min((x - r) % Q, (r - x) % Q)
        assert distance <= (Q + (1 << bits)) // (1 << (bits + 1))
