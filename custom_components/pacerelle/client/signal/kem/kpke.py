"""K-PKE, the CPA-secure encryption inside both Kyber round 3 and ML-KEM (FIPS 203 5).

The two KEMs wrap it differently (how seeds, coins and the shared secret are hashed) but
share these keys, ciphertexts and arithmetic byte for byte. Encryption is split in the
two halves the incremental ML-KEM API needs: `encrypt_u` (needs only rho from the
public key) and `encrypt_v` (needs the t vector); `encrypt` runs both.

Keys and ciphertexts are bytes; NTT-domain polynomials are in the split layout of
ntt.py and are converted to the standard order only where they are encoded.
"""

from dataclasses import dataclass

from .encoding import (
    compress_encode,
    decode_decompress,
    decode_vector,
    encode_vector,
    encoded_size,
)
from .ntt import (
    PreparedNtt,
    add_reduce,
    dot,
    from_standard,
    inverse_ntt,
    ntt,
    prepare,
    sub_reduce,
    to_standard,
)
from .sampling import sample_cbd2, sample_matrix

SEED_SIZE = 32  # rho, sigma, the message and the encryption coins
COEFFICIENT_BITS = 12
MESSAGE_BITS = 1


@dataclass(frozen=True, slots=True)
class PkeParameters:
    """One parameter set: module rank k and the compression of u and v."""

    rank: int
    u_bits: int
    v_bits: int

    @property
    def vector_size(self) -> int:
        """Bytes of a 12-bit encoded vector (t in the public key, s in the secret key)."""
        return self.rank * encoded_size(COEFFICIENT_BITS)

    @property
    def public_key_size(self) -> int:
        """t || rho."""
        return self.vector_size + SEED_SIZE

    @property
    def u_size(self) -> int:
        """The first part of a ciphertext, the compressed vector u."""
        return self.rank * encoded_size(self.u_bits)

    @property
    def v_size(self) -> int:
        """The second part of a ciphertext, the compressed polynomial v."""
        return encoded_size(self.v_bits)

    @property
    def ciphertext_size(self) -> int:
        """u || v."""
        return self.u_size + self.v_size


KYBER1024 = PkeParameters(rank=4, u_bits=11, v_bits=5)
MLKEM768 = PkeParameters(rank=3, u_bits=10, v_bits=4)


def encode_ntt_vector(polys: list[list[int]]) -> bytes:
    """ByteEncode_12 of NTT-domain polynomials (split layout in, standard order out)."""
    return encode_vector([to_standard(poly) for poly in polys], COEFFICIENT_BITS)


def decode_ntt_vector(data: bytes, rank: int) -> list[list[int]]:
    """ByteDecode_12 into NTT-domain polynomials (split layout); no modulus check."""
    return [from_standard(poly) for poly in decode_vector(data, rank, COEFFICIENT_BITS)]


def generate(params: PkeParameters, rho: bytes, sigma: bytes) -> tuple[bytes, bytes]:
    """K-PKE.KeyGen from its two seeds: (public key t || rho, secret key s)."""
    rank = params.rank
    matrix = sample_matrix(rho, rank, transposed=False)
    secret = [ntt(sample_cbd2(sigma, nonce)) for nonce in range(rank)]
    errors = [ntt(sample_cbd2(sigma, rank + nonce)) for nonce in range(rank)]
    prepared = [prepare(poly) for poly in secret]
    public = [
        add_reduce(dot(row, prepared), error) for row, error in zip(matrix, errors, strict=True)
    ]
    return encode_ntt_vector(public) + rho, encode_ntt_vector(secret)


def encrypt_u(
    params: PkeParameters, rho: bytes, coins: bytes
) -> tuple[bytes, list[PreparedNtt], list[int]]:
    """The first half of K-PKE.Encrypt: (compressed u, NTT(r) prepared, e2).

    r and e2 are what the second half needs besides the message and t.
    """
    rank = params.rank
    matrix_t = sample_matrix(rho, rank, transposed=True)
    r_hat = [prepare(ntt(sample_cbd2(coins, nonce))) for nonce in range(rank)]
    errors1 = [sample_cbd2(coins, rank + nonce) for nonce in range(rank)]
    error2 = sample_cbd2(coins, 2 * rank)
    u = [
        add_reduce(inverse_ntt(dot(row, r_hat)), error)
        for row, error in zip(matrix_t, errors1, strict=True)
    ]
    return b"".join(compress_encode(poly, params.u_bits) for poly in u), r_hat, error2


def encrypt_v(
    params: PkeParameters,
    t_encoded: bytes,
    r_hat: list[PreparedNtt],
    error2: list[int],
    message: bytes,
) -> bytes:
    """The second half of K-PKE.Encrypt: compressed v = t.r + e2 + Decompress_1(message)."""
    t_hat = decode_ntt_vector(t_encoded, params.rank)
    mu = decode_decompress(message, MESSAGE_BITS)
    v = add_reduce(inverse_ntt(dot(t_hat, r_hat)), error2, mu)
    return compress_encode(v, params.v_bits)


def encrypt(params: PkeParameters, public_key: bytes, message: bytes, coins: bytes) -> bytes:
    """K-PKE.Encrypt: u || v."""
    u, r_hat, error2 = encrypt_u(params, public_key[params.vector_size :], coins)
    return u + encrypt_v(params, public_key[: params.vector_size], r_hat, error2, message)


def decrypt(params: PkeParameters, secret_key: bytes, ciphertext: bytes) -> bytes:
    """K-PKE.Decrypt: the 32-byte message Compress_1(v - NTT^-1(s . NTT(u)))."""
    rank = params.rank
    size = encoded_size(params.u_bits)
    u_hat = [
        prepare(ntt(decode_decompress(ciphertext[i * size : (i + 1) * size], params.u_bits)))
        for i in range(rank)
    ]
    v = decode_decompress(ciphertext[params.u_size :], params.v_bits)
    s_hat = decode_ntt_vector(secret_key, rank)
    return compress_encode(sub_reduce(v, inverse_ntt(dot(s_hat, u_hat))), MESSAGE_BITS)
