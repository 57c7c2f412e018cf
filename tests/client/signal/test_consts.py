"""libsignal's limits as the engine holds them (rust/protocol/src/consts.rs and
protocol.rs): what our peers rely on, each checked against its libsignal value."""

from custom_components.pacerelle.client.signal import consts


def test_the_limits_are_libsignals() -> None:
    assert consts.MAX_FORWARD_JUMPS == 25_000
    assert consts.MAX_MESSAGE_KEYS == 2_000
    assert consts.MAX_RECEIVER_CHAINS == 5
    assert consts.ARCHIVED_STATES_MAX_LENGTH == 40


def test_the_wire_constants_are_libsignals() -> None:
    assert consts.CIPHERTEXT_MESSAGE_VERSION == 4
    assert consts.PRE_KYBER_MESSAGE_VERSION == 3
    assert consts.MAC_LENGTH == 8
    assert consts.PUBLIC_KEY_LENGTH == 33
    assert consts.MAX_CIPHERTEXT_LENGTH <= consts.MAX_FRAME_LENGTH


def test_the_kyber_ciphertext_length_is_its_type_byte_and_the_kem_ciphertext() -> None:
    from custom_components.pacerelle.client.signal.kem import kyber1024

    assert consts.KYBER1024_CIPHERTEXT_LENGTH == kyber1024.CIPHERTEXT_SIZE + 1
