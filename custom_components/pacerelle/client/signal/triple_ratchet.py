"""The triple ratchet: the Double Ratchet's message keys salted by SPQR's, as triple_ratchet.rs.

Encrypting takes SPQR's next message and key, derives the message keys from the sending
chain with that key as HKDF salt, encrypts with AES-256-CBC (PKCS#7) and MACs the message.
Decrypting finds the receiving chain (a DH ratchet step if the peer's ratchet key is new),
takes the message key seed, lets SPQR read its part, derives the keys, checks the MAC, then
decrypts. Nothing is changed in place: the caller keeps the new state only on success.
"""

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from . import spqr
from .consts import MAX_FORWARD_JUMPS
from .double_ratchet import Random, RatchetState, receive_key
from .errors import SignalError, SignalErrorKind
from .ratchet_keys import derive_message_keys
from .wire import SignalMessage

_BLOCK_BITS = 128
_BLOCK_BYTES = _BLOCK_BITS // 8


def aes_cbc_encrypt(key: bytes, iv: bytes, plaintext: bytes) -> bytes:
    """AES-256-CBC with PKCS#7 padding (libsignal's signal_crypto::aes_256_cbc_encrypt).

    The padding is added here rather than by a padder object (a tenth of the call's cost):
    it depends only on the plaintext's length, which the ciphertext shows anyway.
    """
    pad = _BLOCK_BYTES - len(plaintext) % _BLOCK_BYTES
    encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    return encryptor.update(plaintext + bytes((pad,)) * pad) + encryptor.finalize()


def aes_cbc_decrypt(key: bytes, iv: bytes, ciphertext: bytes) -> bytes:
    """The plaintext, or INVALID_MESSAGE for a bad length or bad padding."""
    if not ciphertext or len(ciphertext) % _BLOCK_BYTES:
        raise SignalError(SignalErrorKind.INVALID_MESSAGE, "ciphertext is not whole AES blocks")
    decryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor()
    padded = decryptor.update(ciphertext) + decryptor.finalize()
    unpadder = padding.PKCS7(_BLOCK_BITS).unpadder()
    try:
        return unpadder.update(padded) + unpadder.finalize()
    except ValueError as err:
        raise SignalError(SignalErrorKind.INVALID_MESSAGE, "bad PKCS#7 padding") from err


def encrypt(
    ratchet: RatchetState,
    pq_state: spqr.SpqrState,
    plaintext: bytes,
    *,
    local_identity: bytes,
    remote_identity: bytes,
    random: Random,
) -> tuple[RatchetState, spqr.SpqrState, SignalMessage]:
    """Our next message on the current sending chain, and the states after it."""
    new_pq_state, pq_key, pq_message = spqr.send(pq_state, random)
    sender = ratchet.sender_chain
    keys = derive_message_keys(sender.chain_key.message_seed(), sender.chain_key.index, pq_key)
    message = SignalMessage.create(
        mac_key=keys.mac_key,
        ratchet_key=sender.ratchet_public,
        counter=sender.chain_key.index,
        previous_counter=ratchet.previous_counter,
        ciphertext=aes_cbc_encrypt(keys.cipher_key, keys.iv, plaintext),
        pq_ratchet=pq_message,
        sender_identity=local_identity,
        receiver_identity=remote_identity,
    )
    return ratchet.advance_sender(), new_pq_state, message


def decrypt(
    ratchet: RatchetState,
    pq_state: spqr.SpqrState,
    message: SignalMessage,
    *,
    local_identity: bytes,
    remote_identity: bytes,
    random: Random,
    max_forward_jumps: int = MAX_FORWARD_JUMPS,
) -> tuple[RatchetState, spqr.SpqrState, bytes]:
    """The plaintext of one of the peer's messages, and the states after it."""
    received = receive_key(ratchet, message.ratchet_key, message.counter, random, max_forward_jumps)
    new_pq_state, pq_key = spqr.recv(pq_state, message.pq_ratchet, max_jump=max_forward_jumps)
    keys = derive_message_keys(received.seed, received.counter, pq_key)
    if not message.mac_is_valid(keys.mac_key, remote_identity, local_identity):
        raise SignalError(SignalErrorKind.INVALID_MAC, "MAC verification failed")
    plaintext = aes_cbc_decrypt(keys.cipher_key, keys.iv, message.ciphertext)
    return received.state, new_pq_state, plaintext
