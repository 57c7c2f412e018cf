"""The CPU work of the runtime, as pure functions run in an executor thread.

They take immutable AgentData and return a new one; nothing here does I/O or touches the
event loop. `open_batch` decrypts a batch of incoming messages; `seal` encrypts one
outgoing message. A message that cannot be opened leaves the data as it was.
"""

import base64
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .conversations.group_key_bounds import SenderEpochs
from .errors import PacerelleError, SendError, SendRefusal
from .limits import MAX_GROUP_KEY_BYTES, MAX_NEW_GROUP_KEY_SESSIONS
from .relay import answers as server_answers
from .relay.frames import InboundMessage, is_group_recipient, is_relay_id
from .signal import engine
from .signal.errors import SignalError, SignalErrorKind
from .signal.session import PeerAddress
from .signal.state import AgentSignalState
from .signal.wire import PreKeySignalMessage, parse_frame
from .trust.door import SealRule
from .values import groups, history_v1
from .values.agent_data import AgentData
from .values.payloads import parse_content
from .values.requests import Request, RequestTooLargeError, stored_size
from .values.sent_widgets import typed_content

_LOGGER = logging.getLogger(__name__)


class MissingGroupKeyError(PacerelleError):
    """No key yet for a group message: leave it unacknowledged, it comes back later."""


class UntrustedGroupKeysError(MissingGroupKeyError):
    """A group send finds keys, but none it may seal with (see `seal`)."""


@dataclass(frozen=True, slots=True)
class Opened:
    """One message's outcome: a request, or why it was refused for good."""

    message: InboundMessage
    request: Request | None = None
    refusal: str | None = None
    deferred: bool = False
    # For decrypt_failures.py: the engine's error kind of a direct message that failed,
    # and whether one that decrypted was a PreKey message (a new session).
    signal_failure: str | None = None
    new_session: bool = False


def peer_of(user_id: str, conversation_id: str, device_id: str) -> PeerAddress:
    """The peer; ValueError unless `device_id` is canonical (server_answers.device_id)."""
    try:
        canonical = server_answers.device_id(device_id, "device id")
    except PacerelleError as err:
        raise ValueError(str(err)) from None
    return PeerAddress(user_id, conversation_id, int(canonical))


def open_batch(
    data: AgentData,
    messages: Sequence[InboundMessage],
    *,
    require_encryption: bool,
    now: float,
    envelopes: Mapping[str, Sequence[Mapping[str, Any]]],
) -> tuple[AgentData, list[Opened]]:
    """Decrypt `messages` in order; `envelopes` are group key envelopes per conversation."""
    for conversation_id, items in envelopes.items():
        data = _learn_group_keys(data, conversation_id, items)
    results: list[Opened] = []
    for message in messages:
        try:
            data, opened = _open_one(data, message, require_encryption, now)
        except MissingGroupKeyError:
            opened = Opened(message, deferred=True)
        except SignalError as err:
            opened = Opened(
                message, refusal=f"{type(err).__name__}: {err}", signal_failure=err.kind.value
            )
        except RequestTooLargeError as err:
            data = data.counted(refused_requests=1)  # a bound of the store: shown in diagnostics
            opened = Opened(message, refusal=f"{type(err).__name__}: {err}")
        except (PacerelleError, UnicodeDecodeError, ValueError) as err:
            opened = Opened(message, refusal=f"{type(err).__name__}: {err}")
        except Exception as err:
            # A bug must not hold the rest of the batch hostage (it would come back with
            # every redelivery): this message alone is refused, with the trace logged.
            _LOGGER.exception("Unexpected error opening message %s", message.message_id)
            opened = Opened(message, refusal=f"unexpected {type(err).__name__}")
        results.append(opened)
    return data, results


def _open_one(
    data: AgentData, message: InboundMessage, require_encryption: bool, now: float
) -> tuple[AgentData, Opened]:
    new_session = False
    group_key: str | None = None
    # Who wrote it, as the trust door judges it (trust/door.py).
    identity: bytes | None = None
    judged_device = message.sender_device_id
    if not message.encrypted:
        if require_encryption:
            raise PacerelleError("an unencrypted message while encryption is required")
        plaintext = message.payload.decode()
    elif message.is_group:
        ciphertext = groups.parse_message(message.payload)
        if ciphertext.conversation_id != message.conversation_id:
            raise groups.GroupError("a group message for another conversation")
        key = data.conversations.group_keys.get(ciphertext.key_name)
        if key is None or not data.conversations.opens_with(key.name):
            # Not held, or of an epoch the group has not entered (group_epochs.py): it
            # waits, and opens once the group moves there.
            raise MissingGroupKeyError(ciphertext.key_name)
        plaintext = groups.open_message(key, ciphertext)
        # The key's owner wrote it, whatever the frame's `from` says: a relay relabelling
        # one member's message as another's is refused (members share their keys with each
        # other, so one member can still write as another: see trust.py).
        if key.sender_id is not None and key.sender_id != message.sender_id:
            raise groups.GroupError(
                f"a group message from {message.sender_id} sealed with {key.sender_id}'s key"
            )
        group_key = key.name
        if key.sender_device_id is not None:
            identity, judged_device = key.sender_identity, key.sender_device_id
        # Recently used keys are the last evicted (group_key_bounds.py).
        data = replace(data, conversations=data.conversations.with_group_key_used(key.name))
    else:
        peer = peer_of(message.sender_id, message.conversation_id, message.sender_device_id)
        signal, raw, _changed = _decrypt(data, peer, message.payload)
        new_session = isinstance(parse_frame(message.payload), PreKeySignalMessage)
        data = replace(data, signal=signal)
        identity = signal.record(peer).trusted_identity
        plaintext = raw.decode()
    body, history_key = history_v1.unwrap_delivery(plaintext)
    conversations = data.conversations
    if history_key is not None:
        history_v1.check_key(conversations.history_keys.get(message.conversation_id), history_key)
        conversations = conversations.with_history_key(message.conversation_id, history_key)
    if not message.is_group:
        conversations = conversations.with_device(
            message.sender_id, message.conversation_id, message.sender_device_id
        )
    content = typed_content(parse_content(body, message.attachments), data.history)
    request = Request.build(
        message,
        content,
        now,
        group_key=group_key,
        sender_identity=identity,
        trust_device_id=judged_device,
    )
    return replace(data, conversations=conversations), Opened(
        message, request, new_session=new_session
    )


def _decrypt(
    data: AgentData, peer: PeerAddress, frame: bytes
) -> tuple[AgentSignalState, bytes, bool]:
    """(signal state, plaintext, whether the peer's identity changed)."""
    try:
        signal, plaintext = engine.decrypt(data.signal, peer, frame)
    except SignalError as err:
        if err.kind is not SignalErrorKind.UNTRUSTED_IDENTITY:
            raise
    else:
        return signal, plaintext, False
    # A reinstalled app starts over with a new identity and a PreKey message. As Signal's
    # apps do for incoming messages, we accept it and tell the user (who can verify it);
    # only the peer's trust changes, never our own identity.
    if not isinstance(parse_frame(frame), PreKeySignalMessage):
        raise SignalError(SignalErrorKind.UNTRUSTED_IDENTITY, "changed identity outside a PreKey")
    record = replace(data.signal.record(peer), trusted_identity=None)
    signal, plaintext = engine.decrypt(data.signal.with_record(peer, record), peer, frame)
    return signal, plaintext, True


def _learn_group_keys(
    data: AgentData, conversation_id: str, envelopes: Sequence[Mapping[str, Any]]
) -> AgentData:
    """Open the group key envelopes we do not hold yet, with each sender's Signal session.

    The relay's list is at most limits.MAX_GROUP_KEY_ENVELOPES long, and at most
    MAX_NEW_GROUP_KEY_SESSIONS of them start a session (a key agreement each), so the work
    of one fetch is bounded; an envelope older than the epochs kept of its sender, or whose
    key would be bigger than MAX_GROUP_KEY_BYTES stored, is not learned
    (group_key_bounds.py).
    """
    held = SenderEpochs(data.conversations.group_keys, conversation_id)
    new_sessions = postponed = 0
    learned: list[str] = []
    for envelope in envelopes:
        key_id, epoch = envelope.get("key_id"), envelope.get("epoch")
        sender, sealed = envelope.get("sender_id"), envelope.get("envelope_b64")
        if (
            envelope.get("conversation_id") != conversation_id
            or not isinstance(key_id, str)
            or type(epoch) is not int
            or not is_relay_id(sender)
            or not isinstance(sealed, str)
        ):
            _LOGGER.warning("Ignoring a malformed group key envelope")
            continue
        if f"{conversation_id}:{key_id}:{epoch}" in data.conversations.group_keys:
            continue
        device = envelope.get("sender_device_id")
        try:
            # Absent: the default device; a JSON number is read as one (never as device 1).
            checked = "1" if device is None else server_answers.device_id(device, "device")
            if not held.worth_opening((sender, checked), epoch):
                continue  # would be evicted at once: not worth a decryption
            peer = peer_of(sender, conversation_id, checked)
            if data.signal.record(peer).current is None:
                if new_sessions == MAX_NEW_GROUP_KEY_SESSIONS:
                    postponed += 1  # listed again by the next fetch
                    continue
                new_sessions += 1
            # A reinstalled app delivers its keys with a new identity, accepted as for a
            # direct message: the trust judge then finds the key's device `changed`.
            signal, plaintext, _ = _decrypt(data, peer, base64.b64decode(sealed))
            key = groups.parse_sender_key(
                plaintext,
                conversation_id=conversation_id,
                key_id=key_id,
                epoch=epoch,
                sender_id=sender,
                sender_device_id=str(peer.device_id),
                sender_identity=signal.record(peer).trusted_identity,
            )
        except (SignalError, PacerelleError, ValueError) as err:
            _LOGGER.warning("Ignoring a group key envelope that does not open: %s", err)
            continue
        if stored_size(key.to_json()) > MAX_GROUP_KEY_BYTES:
            _LOGGER.warning("Ignoring a group key over %d bytes stored", MAX_GROUP_KEY_BYTES)
            data = replace(data, signal=signal)  # the session moved on all the same
            continue
        held.add(key)
        learned.append(key.name)
        data = replace(data, signal=signal, conversations=data.conversations.with_group_key(key))
    if learned:
        # Who the members are now (group_epochs.py): only what came in this fetch founds
        # a new epoch.
        conversations = data.conversations.with_group_keys_learned(conversation_id, learned)
        data = replace(data, conversations=conversations)
    if postponed:
        _LOGGER.warning(
            "Left %d group key envelopes of new senders for the next fetch (%d at most per fetch)",
            postponed,
            MAX_NEW_GROUP_KEY_SESSIONS,
        )
    return data


@dataclass(frozen=True, slots=True)
class Sealed:
    data: AgentData
    payload: bytes
    history_record: dict[str, Any] | None
    # What it was sealed for (the flush re-decides it, outbox/flush.py): the session's remote
    # identity key of a direct message, the group key's name of a group one.
    identity: bytes | None = None
    group_key: str | None = None


def seal(
    data: AgentData,
    *,
    agent_id: str,
    message_id: str,
    conversation_id: str,
    to: str,
    device_id: str | None,
    plaintext: str,
    encrypted: bool,
    rule: SealRule,
    group_envelopes: Sequence[Mapping[str, Any]] = (),
) -> Sealed:
    """The payload of an outgoing MSG (and its history record) and the data to save.

    A group message is sealed with a key of the group's current epoch from one of its
    members (group_epochs.py: never one a removed member made for an epoch of his own),
    after learning `group_envelopes` (the group's keys fetched just before, as the SDK
    does): members rotate their keys when someone leaves, and a key the agent learns only
    from the next incoming message would leave the one who left able to read what the
    agent says meanwhile. Only keys that `rule` accepts are used (trust/door.py: those of
    trusted sessions, and the asker's own for a reply): the relay can deliver a key of its
    own, over a session it made up, with the highest epoch, and would read what the agent
    seals with it. A direct message is sealed only if `rule` accepts the session's remote
    identity key (SendError otherwise): this check is the one every send path goes through.
    """
    if not encrypted:
        return Sealed(data, plaintext.encode(), None)
    if is_group_recipient(to, conversation_id):
        data = _learn_group_keys(data, conversation_id, group_envelopes)
        asking = rule.answering
        held = data.conversations.group_keys
        asker = held.get(asking.group_key) if asking and asking.group_key else None
        allowed = rule.group_key_allowed(asker)
        key = data.conversations.sealing_group_key(conversation_id, allowed)
        if key is None:
            if data.conversations.holds_group_key(conversation_id):
                raise UntrustedGroupKeysError(f"no trusted group key for {conversation_id}")
            raise MissingGroupKeyError(f"no group key for {conversation_id}")
        rule.check_group(key, data.conversations.group_readers(key))
        payload = groups.seal_message(key, plaintext)
        data = replace(data, conversations=data.conversations.with_group_key_used(key.name))
        identity, group_key = None, key.name
    else:
        if device_id is None:  # never a default device: nobody said which key reads it
            raise SendError(SendRefusal.NO_SESSION, f"no device of {to} to send to")
        peer = peer_of(to, conversation_id, device_id)
        session = data.signal.record(peer)
        if session.current is None:
            raise SignalError(SignalErrorKind.NO_SESSION, "no session with that device")
        rule.check_direct(to, device_id, session.trusted_identity)
        signal, payload = engine.encrypt(data.signal, peer, plaintext.encode())
        data = replace(data, signal=signal)
        identity, group_key = session.trusted_identity, None
    history_key = data.conversations.history_keys.get(conversation_id)
    record = None
    if history_key is not None:
        record = history_v1.seal_record(
            plaintext,
            history_key,
            conversation_id=conversation_id,
            message_id=message_id,
            agent_id=agent_id,
        )
    return Sealed(data, payload, record, identity, group_key)
