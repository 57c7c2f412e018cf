"""The engine's public API: decrypt a peer's frame, encrypt a frame for a peer.

Both are transactional: they return a new state and never modify the one passed in; on any
failure they raise SignalError and nothing changed. The caller persists the returned state
before acknowledging the message (a crash in between replays the message on the old state).
"""

import os
from dataclasses import replace

from .consts import CIPHERTEXT_MESSAGE_VERSION, KYBER1024_CIPHERTEXT_LENGTH
from .curve import serialize_public
from .double_ratchet import Random
from .errors import SignalError, SignalErrorKind
from .kem import KYBER1024_KEY_TYPE
from .pqxdh import accept
from .prekeys import PreKeys
from .session import PeerAddress, SessionRecord, initialize_bob_session
from .state import AgentSignalState
from .wire import PreKeySignalMessage, frame_signal_message, parse_frame

__all__ = [
    "AgentSignalState",
    "PeerAddress",
    "SignalError",
    "SignalErrorKind",
    "decrypt",
    "encrypt",
]


def _start_session(
    record: SessionRecord, prekeys: PreKeys, message: PreKeySignalMessage
) -> SessionRecord:
    """The record with a new current session from a PreKey message (libsignal process_prekey)."""
    signed = prekeys.signed_prekey_by_id(message.signed_pre_key_id)
    kyber = prekeys.kyber_prekey_by_id(message.kyber_pre_key_id)
    one_time = None
    if message.pre_key_id is not None:
        one_time = prekeys.one_time_prekey_by_id(message.pre_key_id).key_pair.private
    ciphertext = message.kyber_ciphertext
    if len(ciphertext) != KYBER1024_CIPHERTEXT_LENGTH or ciphertext[0] != KYBER1024_KEY_TYPE:
        raise SignalError(SignalErrorKind.INVALID_MESSAGE, "not a Kyber1024 ciphertext")
    keys = accept(
        identity_private=prekeys.identity.private,
        signed_prekey_private=signed.key_pair.private,
        one_time_prekey_private=one_time,
        kyber_secret_key=kyber.secret,
        their_identity=message.identity_key,
        their_base_key=message.base_key,
        kyber_ciphertext=ciphertext[1:],
    )
    session = initialize_bob_session(
        keys,
        signed_prekey_private=signed.key_pair.private,
        signed_prekey_public=serialize_public(signed.key_pair.public),
        local_identity=prekeys.identity_key,
        remote_identity=message.identity_key,
        alice_base_key=message.base_key,
        local_registration_id=prekeys.registration_id,
        remote_registration_id=message.registration_id,
    )
    return record.promote(session)


def _decrypt_prekey_message(
    state: AgentSignalState, peer: PeerAddress, message: PreKeySignalMessage, random: Random
) -> tuple[AgentSignalState, bytes]:
    record = state.record(peer)
    record.check_trusted(message.identity_key)
    prekeys = state.prekeys
    matching = record.promote_matching(CIPHERTEXT_MESSAGE_VERSION, message.base_key)
    if matching is None:
        state = state.with_base_key_used(
            message.kyber_pre_key_id, message.signed_pre_key_id, message.base_key
        )
        record = _start_session(record, prekeys, message)
        if message.pre_key_id is not None:
            prekeys = prekeys.consume_one_time_prekey(message.pre_key_id)
    else:
        record = matching  # a retry of a PreKey message whose session we already have
    record, plaintext = record.decrypt(message.message, from_prekey_message=True, random=random)
    record = replace(record, trusted_identity=message.identity_key)
    return state.with_prekeys(prekeys).with_record(peer, record), plaintext


def decrypt(
    state: AgentSignalState, peer: PeerAddress, frame: bytes, *, random: Random = os.urandom
) -> tuple[AgentSignalState, bytes]:
    """The plaintext of a peer's frame (decoded payload_b64) and the state to persist."""
    message = parse_frame(frame)
    if isinstance(message, PreKeySignalMessage):
        return _decrypt_prekey_message(state, peer, message, random)
    record = state.record(peer)
    if record.current is None:
        raise SignalError(SignalErrorKind.NO_SESSION, f"no session with {peer.storage_name}")
    record, plaintext = record.decrypt(message, from_prekey_message=False, random=random)
    return state.with_record(peer, record), plaintext


def encrypt(
    state: AgentSignalState, peer: PeerAddress, plaintext: bytes, *, random: Random = os.urandom
) -> tuple[AgentSignalState, bytes]:
    """The frame (to base64 into payload_b64) of a message to a peer, and the state to persist."""
    record, message = state.record(peer).encrypt(plaintext, random)
    return state.with_record(peer, record), frame_signal_message(message)
