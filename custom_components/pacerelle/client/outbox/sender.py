"""Outgoing messages: target resolution, encryption, history record, write, confirmation.

A reply answers a request (`source_message_id`): same conversation, the sender's device, or
the group. Explicit `conversation_id`/`to` are for advanced use. Encryption and the history
record happen in the executor; the Signal state is saved before the frame is written (a
crash in between costs one message key, never a reused one). See outbox.py for what
confirms a send.

While the agent is offline a send is sealed the same way and queued durably instead
(values/send_queue.py, outbox/flush.py): written in order on the next connection, before anything
new; `expire_after=0` refuses it at once instead, as before the queue existed, and so
does a stopped or revoked agent.
"""

import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..agent_core import AgentCore, ConnectionState
from ..conversations.seen import conversation_recipient
from ..crypto_jobs import Sealed, UntrustedGroupKeysError, seal
from ..device_ids import is_device_id
from ..errors import (
    PacerelleConnectionError,
    PacerelleError,
    PacerelleResponseError,
    SendError,
    SendRefusal,
)
from ..limits import DEFAULT_EXPIRE_AFTER, MAX_SEND_TEXT_CHARS
from ..relay.answers import device_id
from ..relay.api import AgentApi
from ..relay.frames import build_message, is_group_recipient
from ..signal.errors import SignalError, SignalErrorKind
from ..signal.session import PeerAddress
from ..values.agent_data import AgentData, UncertainSend, device_key
from ..values.history import FAILED, SENT, UNCERTAIN, Reply
from ..values.payloads import chat_payload
from ..values.requests import Request, payload_seal
from ..values.send_queue import QueuedSend, QueueFullError
from .confirmations import Outbox, Written
from .flush import QUEUED, QueuedSends

_LOGGER = logging.getLogger(__name__)

NOT_RUNNING = frozenset({ConnectionState.STOPPED, ConnectionState.DISCONNECTED})


@dataclass(frozen=True, slots=True)
class Target:
    conversation_id: str
    to: str
    device_id: str | None
    # A reply in a group: the key the answered message was sealed with.
    group_key: str | None = None


@dataclass(frozen=True, slots=True)
class Recipient:
    """Who a send goes to: `to` (a person, or `group:<conversation>`) in a conversation, and
    the request it answers, if any."""

    conversation_id: str
    to: str
    request: Request | None

    @property
    def is_group(self) -> bool:
        return is_group_recipient(self.to, self.conversation_id)


class Sender:
    def __init__(self, core: AgentCore, api: AgentApi) -> None:
        self._core = core
        self._api = api
        self.outbox = Outbox()
        self.queue = QueuedSends(core, self.outbox)

    def find_request(self, message_id: str) -> Request | None:
        data = self._core.data
        request = data.inbox.pending.get(message_id)
        if request is not None:
            return request
        # Being handed over right now (an automation answering at once): the stored copy.
        received = data.inbox.received.get(message_id)
        if received is not None:
            return received[1]
        for item in reversed(data.history.requests):
            if item.request.message_id == message_id:
                return item.request
        return None

    def recipient(
        self, source_message_id: str | None, conversation_id: str | None, to: str | None
    ) -> Recipient:
        """Who a send goes to, the one rule: the sender of the request it answers (its
        group, for a group request), else `to` in `conversation_id` (the agent's own by
        default); without `to`, whoever reaches all of that conversation (its group, the
        person, the owner in the agent's own: conversations/seen.py
        `conversation_recipient`). SendError: the request answered, or the conversation
        without `to`, is unknown to the agent."""
        if source_message_id is not None:
            request = self.find_request(source_message_id)
            if request is None:
                raise SendError(SendRefusal.UNKNOWN_REQUEST, source_message_id)
            to = request.to if request.is_group else request.sender_id
            return Recipient(request.conversation_id, to, request)
        core = self._core
        conversation = conversation_id or core.config.conversation_id
        if to is None:
            to = conversation_recipient(core.data, core.config, conversation)
            if to is None:
                raise SendError(SendRefusal.UNKNOWN_CONVERSATION, conversation)
        return Recipient(conversation, to, None)

    def resolve(
        self,
        source_message_id: str | None,
        conversation_id: str | None,
        to: str | None,
        to_device_id: str | None,
    ) -> Target:
        """The recipient and the device a send is sealed for (the seal checks its key)."""
        found = self.recipient(source_message_id, conversation_id, to)
        conversation, recipient, request = found.conversation_id, found.to, found.request
        if request is not None:
            if found.is_group:
                return Target(conversation, recipient, None, request.group_key)
            # The device that wrote; the seal checks it is still the key that wrote.
            return Target(conversation, recipient, request.sender_device_id)
        if found.is_group:
            return Target(conversation, recipient, None)
        trust = self._core.trust
        if to_device_id is not None:
            # Named by the caller: that device or a refusal; a blocked one is known before its
            # session's key is (the seal checks the rest of the rule on that key).
            refusal = trust.seal_rule().direct_refusal(recipient, to_device_id, None, None)
            if refusal is SendRefusal.BLOCKED_DEVICE:
                raise SendError(refusal, f"{recipient} device {to_device_id}")
            return Target(conversation, recipient, to_device_id)
        last = self._core.data.conversations.last_devices.get(device_key(recipient, conversation))
        device = trust.choose_device(recipient, last, self._session_key(recipient, conversation))
        return Target(conversation, recipient, device)

    def _session_key(self, person_id: str, conversation_id: str) -> Callable[[str], bytes | None]:
        """The remote identity key of our current session with a device here, if any."""
        signal = self._core.data.signal

        def key(device: str) -> bytes | None:
            if not is_device_id(device):
                return None
            record = signal.record(PeerAddress(person_id, conversation_id, int(device)))
            return record.trusted_identity if record.current is not None else None

        return key

    async def _group_envelopes(self, target: Target) -> Sequence[Mapping[str, Any]]:
        """The group's key envelopes, fetched before each group send (see crypto_jobs.seal).

        Offline (the fetch fails), the send goes on with the keys already held, so that it
        can be queued; the relay itself no longer delivers to a member who left.
        """
        if not self._core.config.encrypted or not is_group_recipient(
            target.to, target.conversation_id
        ):
            return ()
        try:
            return await self._api.group_keys(target.conversation_id)
        except PacerelleError as err:
            _LOGGER.warning("Could not fetch group keys before sending: %s", err)
            return ()

    async def send(
        self,
        plaintext: str,
        target: Target,
        *,
        kind: str,
        display_text: str,
        reply_to_message_id: str | None = None,
        source_message_id: str | None = None,
        public_attachments: Sequence[Mapping[str, Any]] = (),
        expire_after: float = DEFAULT_EXPIRE_AFTER,
    ) -> Reply:
        """Encrypt, save, write (or queue while offline); the Reply as recorded in history.

        `expire_after` (seconds) is how long it may wait queued; 0 refuses it when offline.
        """
        if len(plaintext) > MAX_SEND_TEXT_CHARS:
            raise SendError(SendRefusal.TOO_LONG, f"over {MAX_SEND_TEXT_CHARS} characters")
        core = self._core
        config = core.config
        message_id = str(uuid.uuid4())
        envelopes = await self._group_envelopes(target)
        in_group = is_group_recipient(target.to, target.conversation_id)
        answering = self.find_request(source_message_id) if source_message_id else None
        async with core.lock:
            # The book as it stands once the lock is held (the seal runs in the executor).
            rule = core.trust.seal_rule(answering)
            connected = core.connection is not None and not core.connection.closed
            # Queued only while the agent is trying to connect: a stopped or revoked one
            # would hold the message until a restart or a re-authentication.
            if not connected and (expire_after <= 0 or core.state in NOT_RUNNING):
                raise PacerelleConnectionError("the agent is not connected")
            try:
                sealed = await core.hooks.run_blocking(
                    lambda: seal(
                        core.data,
                        agent_id=config.agent_id,
                        message_id=message_id,
                        conversation_id=target.conversation_id,
                        to=target.to,
                        device_id=target.device_id,
                        plaintext=plaintext,
                        encrypted=config.encrypted,
                        rule=rule,
                        group_envelopes=envelopes,
                    )
                )
            except UntrustedGroupKeysError as err:
                raise SendError(
                    SendRefusal.NO_TRUSTED_DEVICE, f"group {target.conversation_id}"
                ) from err
            except SignalError as err:
                if err.kind is SignalErrorKind.NO_SESSION:
                    raise SendError(
                        SendRefusal.NO_SESSION, "the person has not written yet"
                    ) from err
                raise
            reply = Reply(
                message_id=message_id,
                conversation_id=target.conversation_id,
                to=target.to,
                to_device_id=target.device_id,
                kind=kind,
                text=display_text,
                reply_to_message_id=reply_to_message_id,
                source_message_id=source_message_id,
                sent_at=core.now(),
            )
            data = sealed.data
            own_seal = payload_seal(sealed.payload) if in_group and config.encrypted else None
            if own_seal is not None:
                # Reflected back as the member whose key sealed it, it is refused (inbox.py).
                data = replace(data, inbox=data.inbox.with_group_seal(own_seal))
            frame = build_message(
                message_id=message_id,
                conversation_id=target.conversation_id,
                to=target.to,
                payload=sealed.payload,
                encrypted=config.encrypted,
                to_device_id=target.device_id,
                reply_to_message_id=reply_to_message_id,
                attachments=[dict(item) for item in public_attachments] or None,
                history_record=sealed.history_record,
            )
            if not connected or data.queued.sends:
                # Offline, or older sends still queued: this one waits behind them.
                return await self._queue(data, reply, frame, expire_after, sealed)
            await core.commit(replace(data, history=data.history.with_reply(reply)))
            try:
                serial = await core.write(frame)
            except PacerelleConnectionError:
                if expire_after <= 0 or core.state in NOT_RUNNING:
                    await self._set_status({message_id}, FAILED)
                    raise
                # The connection ended under us and the frame was refused (outbox.py):
                # it waits for the next connection like any send made offline.
                return await self._requeue(reply, frame, expire_after, sealed)
            except PacerelleError:
                await self._set_status({message_id}, FAILED)
                raise
            self.outbox.settle(core.now())
            self.outbox.written(Written(message_id, target.conversation_id, serial, core.now()))
            core.hooks.send_status(message_id, target.conversation_id, SENT)
        return reply

    async def _requeue(
        self, reply: Reply, frame: str, expire_after: float, sealed: Sealed
    ) -> Reply:
        """Queue a send already recorded in history whose write was refused (lock held)."""
        data = self._core.data
        try:
            return await self._queue(data, reply, frame, expire_after, sealed, recorded=True)
        except SendError:
            await self._set_status({reply.message_id}, FAILED)
            raise

    async def _queue(
        self,
        data: AgentData,
        reply: Reply,
        frame: str,
        expire_after: float,
        sealed: Sealed,
        *,
        recorded: bool = False,
    ) -> Reply:
        """Keep a sealed send for the next connection (lock held); flush if connected now."""
        core = self._core
        now = core.now()
        send = QueuedSend(
            reply.message_id,
            reply.conversation_id,
            frame,
            now,
            now + expire_after,
            to=reply.to,
            device_id=reply.to_device_id,
            identity_key=sealed.identity,
            group_key=sealed.group_key,
            answers=reply.source_message_id,
        )
        try:
            data.queued.check_room(send.size)
        except QueueFullError as err:
            raise SendError(SendRefusal.QUEUE_FULL, err.limit) from err
        reply = replace(reply, status=QUEUED)
        history = (
            data.history.with_reply_status({reply.message_id}, QUEUED)
            if recorded
            else data.history.with_reply(reply)
        )
        await core.commit(replace(data, history=history, queued=data.queued.added(send)))
        self.queue.report([send], QUEUED)
        self.queue.changed()
        await self.queue.flush()
        return reply

    async def flush_queue(self) -> None:
        """Write what was queued while offline (called once connected)."""
        async with self._core.lock:
            await self.queue.flush()

    async def relay_refused(self, message_id: str, error: str) -> None:
        written = self.outbox.failed(message_id)
        if written is not None:
            _LOGGER.warning("The relay refused message %s: %s", message_id, error)
            async with self._core.lock:
                await self._set_status({message_id}, FAILED)
            self._core.hooks.send_status(message_id, written.conversation_id, FAILED)

    async def connection_ended(self, serial: int, *, clean: bool) -> None:
        lost = self.outbox.connection_ended(serial, self._core.now(), clean=clean)
        if not lost:
            return
        _LOGGER.warning("%d sent message(s) could not be confirmed", len(lost))
        core = self._core
        async with core.lock:
            data = core.data.with_uncertain(
                [UncertainSend(item.message_id, item.conversation_id, item.at) for item in lost]
            )
            ids = {item.message_id for item in lost}
            await core.commit(replace(data, history=data.history.with_reply_status(ids, UNCERTAIN)))
        for item in lost:
            core.hooks.send_status(item.message_id, item.conversation_id, UNCERTAIN)
        core.hooks.status_changed()

    async def _set_status(self, ids: set[str], status: str) -> None:
        data = self._core.data
        await self._core.commit(replace(data, history=data.history.with_reply_status(ids, status)))


def checked_device(to_device_id: str | None) -> str | None:
    """A device id given by the caller, canonical as the relay's (server_answers.device_id)."""
    if to_device_id is None:
        return None
    try:
        return device_id(to_device_id, "to_device_id")
    except PacerelleResponseError:
        raise SendError(SendRefusal.INVALID_DEVICE_ID, repr(to_device_id)[:40]) from None


__all__ = ["SendError", "Sender", "chat_payload"]
