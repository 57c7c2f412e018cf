"""K-PKE, the encryption under both KEMs: what one side encrypts to a public key the secret
key decrypts, at the sizes of each parameter set, and another secret key reads other bytes."""

import pytest

from custom_components.pacerelle.client.signal.kem.kpke import (
    KYBER1024,
    MLKEM768,
    PkeParameters,
    decrypt,
    encrypt,
    generate,
)


@pytest.mark.parametrize("params", [KYBER1024, MLKEM768], ids=["kyber1024", "mlkem768"])
def test_decrypt_reads_what_encrypt_sealed(params: PkeParameters) -> None:
    public, secret = generate(params, b"r" * 32, b"s" * 32)
    assert len(public) == params.public_key_size
    message = bytes(range(32))
    ciphertext = encrypt(params, public, message, b"c" * 32)
    assert len(ciphertext) == params.ciphertext_size
    assert decrypt(params, secret, ciphertext) == message
    assert encrypt(params, public, message, b"d" * 32) != ciphertext  # other coins
    _, other_secret = generate(params, b"r" * 32, b"t" * 32)
    assert decrypt(params, other_secret, ciphertext) != message


def test_the_parameter_sets_have_the_standard_sizes() -> None:
    assert (KYBER1024.public_key_size, KYBER1024.ciphertext_size) == (1568, 1568)
    assert (MLKEM768.public_key_size, MLKEM768.ciphertext_size) == (1184, 1088)
