"""Sessions with one peer device, as libsignal's state/session.rs and session_management.rs.

A peer's record holds the identity key we trust for it (first use, then fixed, as the
native runtime's identity store), the current session state and up to
ARCHIVED_STATES_MAX_LENGTH previous ones, newest first. A PreKey message with a new base key
starts a new session and archives the current one; a message is tried on the current state,
then on the previous ones, and a previous state that decrypts becomes current again.
We are always the responder (Bob): our sessions never carry a pending PreKey message.
"""

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..device_ids import is_device_id
from . import spqr
from .consts import (
    ARCHIVED_STATE_MAX_FORWARD_JUMPS,
    ARCHIVED_STATES_MAX_LENGTH,
    CIPHERTEXT_MESSAGE_VERSION,
    MAX_FORWARD_JUMPS,
    MAX_MESSAGE_KEYS,
)
from .double_ratchet import Random, RatchetState, SenderChain
from .errors import SignalError, SignalErrorKind
from .pqxdh import HandshakeKeys
from .triple_ratchet import decrypt as ratchet_decrypt
from .triple_ratchet import encrypt as ratchet_encrypt
from .wire import SignalMessage

SPQR_CHAIN_PARAMS = spqr.ChainParams(max_jump=MAX_FORWARD_JUMPS, max_ooo_keys=MAX_MESSAGE_KEYS)
"""ratchet.rs spqr_chain_params for a session with someone else (never a self-session here)."""


@dataclass(frozen=True, slots=True)
class PeerAddress:
    """One device of one human in one conversation."""

    user_id: str
    conversation_id: str
    device_id: int

    @property
    def storage_name(self) -> str:
        """The name of this peer's session record: one name per address, never shared.

        The SDK's form (PROTOCOL.md), `human:{user}:{conversation}:device:{n}`, with "%" and
        ":" percent-escaped in the ids: ids without them (all seen so far) keep the SDK's
        name, while ("a:b", "c") and ("a", "b:c") no longer meet in "human:a:b:c:...".
        """
        return _storage_name(self.user_id, self.conversation_id, self.device_id)

    @property
    def peer_name(self) -> str:
        """The storage name without the device: what all devices of the person share here."""
        return self.storage_name.rpartition(DEVICE_SEPARATOR)[0]


DEVICE_SEPARATOR = ":device:"
STORAGE_NAME_CACHE_SIZE = 1024
"""Names kept ready: each message looks its peer's name up twice (read, then write back)."""


@functools.lru_cache(maxsize=STORAGE_NAME_CACHE_SIZE, typed=True)
def _storage_name(user_id: str, conversation_id: str, device_id: int) -> str:
    user, conversation = _escape(user_id), _escape(conversation_id)
    return f"human:{user}:{conversation}:device:{device_id}"


def _escape(part: str) -> str:
    if "%" not in part and ":" not in part:  # every id seen so far: no copies
        return part
    return part.replace("%", "%25").replace(":", "%3A")


def address_of(name: str) -> PeerAddress | None:
    """The address whose `storage_name` is `name`; None for a name of another form."""
    body, separator, device = name.rpartition(DEVICE_SEPARATOR)
    if not separator or not body.startswith("human:") or not is_device_id(device):
        return None
    user, colon, conversation = body.removeprefix("human:").partition(":")
    if not colon or ":" in conversation:
        return None
    address = PeerAddress(_unescape(user), _unescape(conversation), int(device))
    return address if address.storage_name == name else None  # one spelling per address


def _unescape(part: str) -> str:
    if "%" not in part:
        return part
    return part.replace("%3A", ":").replace("%25", "%")


def legacy_addresses(name: str) -> list[PeerAddress]:
    """Every address whose unescaped name (store version 1) was `name`, in split order.

    Version 1 joined raw ids with ":", so a name whose ids held ":" has several readings;
    a name of another form has none.
    """
    body, separator, device = name.rpartition(DEVICE_SEPARATOR)
    if not separator or not body.startswith("human:") or not is_device_id(device):
        return []
    ids = body.removeprefix("human:")
    return [
        PeerAddress(ids[:index], ids[index + 1 :], int(device))
        for index, char in enumerate(ids)
        if char == ":"
    ]


@dataclass(frozen=True, slots=True)
class SessionState:
    """One session: identities, the Double Ratchet, SPQR, and how it started."""

    local_identity: bytes
    remote_identity: bytes
    alice_base_key: bytes
    ratchet: RatchetState
    pq_state: spqr.SpqrState
    local_registration_id: int
    remote_registration_id: int
    version: int = CIPHERTEXT_MESSAGE_VERSION

    def with_ratchets(self, ratchet: RatchetState, pq_state: spqr.SpqrState) -> SessionState:
        """This session after a message: built directly, as it runs on every message."""
        return SessionState(
            self.local_identity,
            self.remote_identity,
            self.alice_base_key,
            ratchet,
            pq_state,
            self.local_registration_id,
            self.remote_registration_id,
            self.version,
        )


class StoredState:
    """An archived state as the store read it: its JSON, parsed on first use and kept.

    Start-up parses no archived state (most are never used again); one is parsed when a
    message or a PreKey message needs it, or a bound its size. The store authenticated
    the row already (record_file.py); a row that decrypts but does not parse (a bug of
    whoever wrote it) raises INVALID_STATE here, at that first use: the message that
    needed it is refused and nothing is changed (session_json.stored_state).
    """

    __slots__ = ("_parse", "_read", "_source", "_state")

    def __init__(
        self, source: Any, read: Callable[[Any], Any], parse: Callable[[Any], SessionState]
    ) -> None:
        # The row's bytes and `read`, which gives its JSON (shared functions: a start-up
        # makes one small object per archived state, not a closure).
        self._source = source
        self._read = read
        self._parse = parse
        self._state: SessionState | None = None

    def state(self) -> SessionState:
        state = self._state
        if state is None:
            state = self._state = self._parse(self._read(self._source))
        return state

    def to_json(self) -> Any:
        """The stored JSON, unparsed (what record_to_json writes for the parsed state)."""
        return self._read(self._source)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StoredState):
            other = other.state()
        return isinstance(other, SessionState) and self.state() == other

    def __hash__(self) -> int:
        return hash(self.state())


type Archived = SessionState | StoredState


def archived_state(archived: Archived) -> SessionState:
    """The state itself (a stored one parsed now, INVALID_STATE if it does not parse)."""
    return archived.state() if isinstance(archived, StoredState) else archived


def initialize_bob_session(
    keys: HandshakeKeys,
    *,
    signed_prekey_private: bytes,
    signed_prekey_public: bytes,
    local_identity: bytes,
    remote_identity: bytes,
    alice_base_key: bytes,
    local_registration_id: int,
    remote_registration_id: int,
) -> SessionState:
    """The responder's new session: our first ratchet key is the signed prekey (ratchet.rs)."""
    pq_state = spqr.initial_state(
        spqr.Direction.B2A,
        keys.pq_auth_key,
        version=spqr.Version.V1,
        min_version=spqr.Version.V1,
        chain_params=SPQR_CHAIN_PARAMS,
    )
    sender = SenderChain(signed_prekey_private, signed_prekey_public, keys.chain_key)
    return SessionState(
        local_identity=local_identity,
        remote_identity=remote_identity,
        alice_base_key=alice_base_key,
        ratchet=RatchetState(keys.root_key, sender, (), 0),
        pq_state=pq_state,
        local_registration_id=local_registration_id,
        remote_registration_id=remote_registration_id,
    )


def _state_decrypt(
    state: SessionState, message: SignalMessage, random: Random, max_forward_jumps: int
) -> tuple[SessionState, bytes]:
    ratchet, pq_state, plaintext = ratchet_decrypt(
        state.ratchet,
        state.pq_state,
        message,
        local_identity=state.local_identity,
        remote_identity=state.remote_identity,
        random=random,
        max_forward_jumps=max_forward_jumps,
    )
    return state.with_ratchets(ratchet, pq_state), plaintext


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """Everything we keep for one peer device."""

    trusted_identity: bytes | None = None
    current: SessionState | None = None
    previous: tuple[Archived, ...] = ()

    def check_trusted(self, identity: bytes) -> None:
        """Refuse an identity other than the one this peer first used."""
        if self.trusted_identity is not None and self.trusted_identity != identity:
            raise SignalError(SignalErrorKind.UNTRUSTED_IDENTITY, "the peer's identity key changed")

    def promote(self, state: SessionState) -> SessionRecord:
        """`state` becomes current; the current one is archived first, newest first."""
        previous = self.previous
        if self.current is not None:
            previous = (self.current, *previous[: ARCHIVED_STATES_MAX_LENGTH - 1])
        return replace(self, current=state, previous=previous)

    def promote_matching(self, version: int, base_key: bytes) -> SessionRecord | None:
        """This record with the session this base key started made current, if we have it."""
        current = self.current
        if (
            current is not None
            and current.version == version
            and current.alice_base_key == base_key
        ):
            return self
        for index, archived in enumerate(self.previous):
            state = archived_state(archived)
            if state.version == version and state.alice_base_key == base_key:
                return self._promote_previous(index, state)
        return None

    def _promote_previous(self, index: int, state: SessionState) -> SessionRecord:
        trimmed = replace(self, previous=self.previous[:index] + self.previous[index + 1 :])
        return trimmed.promote(state)

    def decrypt(
        self, message: SignalMessage, *, from_prekey_message: bool, random: Random
    ) -> tuple[SessionRecord, bytes]:
        """Decrypt with the current state, else (not for a PreKey message) a previous one.

        A duplicate stops the search at once, as libsignal; otherwise the error of the
        current state (the one the peer most likely used) is the one reported.
        """
        errors: list[SignalError] = []
        current = self.current
        if current is not None:
            try:
                state, plaintext = self._try(current, message, random)
            except SignalError as error:
                if error.kind is SignalErrorKind.DUPLICATE_MESSAGE or from_prekey_message:
                    raise
                errors.append(error)
            else:
                return SessionRecord(self.trusted_identity, state, self.previous), plaintext
        if not from_prekey_message:
            for index, archived in enumerate(self.previous):
                previous = archived_state(archived)  # a damaged one stops here: INVALID_STATE
                try:
                    state, plaintext = self._try(
                        previous, message, random, ARCHIVED_STATE_MAX_FORWARD_JUMPS
                    )
                except SignalError as error:
                    if error.kind is SignalErrorKind.DUPLICATE_MESSAGE:
                        raise
                    errors.append(error)
                else:
                    return self._promote_previous(index, state), plaintext
        if errors:
            raise errors[0]
        raise SignalError(SignalErrorKind.NO_SESSION, "no session with this peer")

    @staticmethod
    def _try(
        state: SessionState,
        message: SignalMessage,
        random: Random,
        max_forward_jumps: int = MAX_FORWARD_JUMPS,
    ) -> tuple[SessionState, bytes]:
        if state.version != CIPHERTEXT_MESSAGE_VERSION:
            raise SignalError(
                SignalErrorKind.UNSUPPORTED_VERSION, f"session version {state.version}"
            )
        return _state_decrypt(state, message, random, max_forward_jumps)

    def encrypt(self, plaintext: bytes, random: Random) -> tuple[SessionRecord, SignalMessage]:
        """Our next message to this peer, on the current session."""
        current = self.current
        if current is None:
            raise SignalError(SignalErrorKind.NO_SESSION, "no session with this peer")
        ratchet, pq_state, message = ratchet_encrypt(
            current.ratchet,
            current.pq_state,
            plaintext,
            local_identity=current.local_identity,
            remote_identity=current.remote_identity,
            random=random,
        )
        updated = current.with_ratchets(ratchet, pq_state)
        return SessionRecord(self.trusted_identity, updated, self.previous), message
