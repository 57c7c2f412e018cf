"""The human side of Pacerelle: each user's devices, holding real libsignal sessions."""

import base64
import binascii
import hashlib
import time
import uuid

from tests.helpers.reference_peer import ReferenceBundle, ReferencePeer, ReferencePeerError

from .config import DEFAULT_DEVICE_ID
from .context import Emulator
from .http_util import ApiError
from .human_payloads import (
    HISTORY_FEATURE,
    build_plaintext,
    check_history_record,
    describe_plaintext,
    history_key,
    wrap_for_history,
)
from .state import AgentKeys, DeviceRecord, Installation, Json
from .verification import verification_code_b64


def _unb64(value: str) -> bytes:
    return base64.b64decode(value)


def _id_order(device_id: str) -> tuple[int, str]:
    return (int(device_id), "") if device_id.isdigit() else (1 << 31, device_id)


def agent_peer_name(agent_id: str, identity_key_b64: str) -> str:
    # One session name per agent identity: a changed identity starts a new, trusted session,
    # as the app does once the user accepts the new safety number.
    fingerprint = hashlib.sha256(_unb64(identity_key_b64)).hexdigest()[:16]
    return f"agent:{agent_id}#{fingerprint}"


def _take_bundle(keys: AgentKeys) -> ReferenceBundle:
    """The agent's bundle with one one-time prekey, which leaves the server for good."""
    bundle = keys.bundle
    if bundle is None:
        raise ApiError(409, "the agent has not published its prekey bundle yet")
    prekey = keys.one_time_prekeys.pop(0) if keys.one_time_prekeys else None
    keys.handed_out += prekey is not None
    return ReferenceBundle(
        registration_id=bundle["registration_id"],
        device_id=bundle["device_id"],
        prekey_id=prekey["prekey_id"] if prekey else 0,
        prekey_public=_unb64(prekey["public_key"]) if prekey else b"",
        signed_prekey_id=bundle["signed_prekey_id"],
        signed_prekey_public=_unb64(bundle["signed_prekey_public"]),
        signed_prekey_signature=_unb64(bundle["signed_prekey_signature"]),
        kyber_prekey_id=bundle["kyber_prekey_id"],
        kyber_prekey_public=_unb64(bundle["kyber_prekey_public"]),
        kyber_prekey_signature=_unb64(bundle["kyber_prekey_signature"]),
        identity_key=_unb64(bundle["identity_key"]),
    )


class HumanDevice:
    """One phone or browser of a user: a native Signal store, saved after every use."""

    def __init__(self, record: DeviceRecord) -> None:
        self.record = record
        name = f"human:{record.user_id}:device:{record.device_id}"
        self.peer = (
            ReferencePeer.from_snapshot(name, _unb64(record.snapshot_b64))
            if record.snapshot_b64
            else ReferencePeer(name)
        )

    def save(self) -> None:
        self.record.snapshot_b64 = base64.b64encode(self.peer.export()).decode()

    def identity_key_b64(self) -> str:
        """The device's public identity key, read from its store the first time."""
        if self.record.identity_key_b64 is None:
            # The native store has no getter for its identity key; a bundle carries it.
            # Its prekeys are never published: a human device only starts sessions.
            bundle = self.peer.generate_prekey_bundle()
            self.record.identity_key_b64 = base64.b64encode(bundle.identity_key).decode()
            self.save()
        return self.record.identity_key_b64

    def describe(self) -> Json:
        return {
            "user_id": self.record.user_id,
            "device_id": self.record.device_id,
            "identity_key": self.identity_key_b64(),
            "verification_code": verification_code_b64(self.identity_key_b64()),
        }

    def encrypt_for(
        self, emulator: Emulator, agent_id: str, plaintext: bytes, group_id: str | None = None
    ) -> bytes:
        """Signal-encrypt for the agent. The agent keys sessions by person, conversation and
        device, so a group (`group_id`) has sessions of its own, apart from the direct one."""
        keys = emulator.state.keys_for(agent_id)
        published = keys.bundle["identity_key"] if keys.bundle else None
        scope = agent_id if group_id is None else f"{agent_id}@{group_id}"
        suffix = "" if group_id is None else f"@{group_id}"
        current = self.record.session_identities.get(scope)
        if published is not None and published != current:
            bundle = _take_bundle(keys)
            try:
                self.peer.process_prekey_bundle(
                    agent_peer_name(agent_id, published) + suffix, bundle
                )
            except ReferencePeerError as err:
                raise ApiError(409, f"the agent's prekey bundle was refused: {err}") from err
            self.record.session_identities[scope] = current = published
            emulator.record("session_started", agent_id=agent_id, device_id=self.record.device_id)
        if current is None:
            raise ApiError(409, "the agent has not published its prekey bundle yet")
        framed = self.peer.encrypt(agent_peer_name(agent_id, current) + suffix, plaintext)
        self.save()
        return framed

    def decrypt_from(self, agent_id: str, framed: bytes) -> bytes:
        current = self.record.session_identities.get(agent_id)
        if current is None:
            raise ReferencePeerError("no session with this agent", -2)
        plaintext = self.peer.decrypt(agent_peer_name(agent_id, current), framed)
        self.save()
        return plaintext


class HumanSide:
    """Sends for users (encrypting as their device) and receives what agents send them."""

    def __init__(self, emulator: Emulator) -> None:
        self._emulator = emulator
        self._devices: dict[str, HumanDevice] = {}

    def device(self, user_id: str, device_id: str) -> HumanDevice:
        key = f"{user_id}/{device_id}"
        device = self._devices.get(key)
        if device is None:
            records = self._emulator.state.devices
            record = records.setdefault(key, DeviceRecord(user_id, device_id))
            device = self._devices[key] = HumanDevice(record)
        return device

    def add_device(self, user_id: str, device_id: str, same_identity_as: str | None) -> HumanDevice:
        """A new device of a person: with a fresh identity key, or sharing one of another
        device of the same person (a copy of its store, whose sessions it never reuses:
        its first send starts its own session from the agent's bundle)."""
        records = self._emulator.state.devices
        if f"{user_id}/{device_id}" in records:
            raise ApiError(409, f"device {device_id} of {user_id} exists")
        record = DeviceRecord(user_id, device_id)
        if same_identity_as is not None:
            if f"{user_id}/{same_identity_as}" not in records:
                raise ApiError(404, f"unknown device {same_identity_as} of {user_id}")
            source = self.device(user_id, same_identity_as)
            record.identity_key_b64 = source.identity_key_b64()
            source.save()
            record.snapshot_b64 = source.record.snapshot_b64
        records[f"{user_id}/{device_id}"] = record
        device = self.device(user_id, device_id)
        device.identity_key_b64()
        self._emulator.commit()
        self._emulator.record("device_added", user_id=user_id, device_id=device_id)
        return device

    def devices_of(self, user_id: str) -> list[HumanDevice]:
        """The person's devices known to the emulator, in device id order."""
        records = self._emulator.state.devices.values()
        ids = sorted((item.device_id for item in records if item.user_id == user_id), key=_id_order)
        return [self.device(user_id, device_id) for device_id in ids]

    async def reset_device(self, conversation_id: str, device_id: str) -> None:
        """A reinstalled app: the device gets a new identity, the agent gets a notice."""
        installation = self.installation(conversation_id)
        key = f"{installation.owner_id}/{device_id}"
        device = self._devices.pop(key, None)
        if device is not None:
            device.peer.close()
        if self._emulator.state.devices.pop(key, None) is None and device is None:
            raise ApiError(404, "unknown device")
        self._emulator.commit()
        await self._emulator.hub.notify(
            installation.agent_id, {"type": "IDENTITY_CHANGED", "user_id": installation.owner_id}
        )

    def installation(self, conversation_id: str) -> Installation:
        installation = self._emulator.state.installation_by_conversation(conversation_id)
        if installation is None:
            raise ApiError(404, "unknown conversation")
        return installation

    async def send(self, conversation_id: str, body: Json) -> str:
        emulator = self._emulator
        installation = self.installation(conversation_id)
        if installation.revoked:
            raise ApiError(409, "the installation was revoked")
        device_id = str(body.get("device_id") or DEFAULT_DEVICE_ID)
        plaintext, attachments, kind = build_plaintext(emulator, installation, body)
        log = emulator.state.conversation_log(conversation_id)
        keys = emulator.state.keys_for(installation.agent_id)
        features = keys.bundle.get("protocol_features", []) if keys.bundle else []
        encrypted = body.get("encrypted", True) is not False
        wire_text = plaintext
        # The history key is a secret: it only ever travels inside the encryption.
        wants_history = body.get("history", True) is not False
        if encrypted and wants_history and HISTORY_FEATURE in features:
            wire_text = wrap_for_history(plaintext, history_key(log))
        if encrypted:
            device = self.device(installation.owner_id, device_id)
            framed = device.encrypt_for(emulator, installation.agent_id, wire_text.encode())
        else:
            framed = wire_text.encode()
        envelope: Json = {
            "type": "MSG",
            "id": str(uuid.uuid4()),
            "conversation_id": conversation_id,
            "from": installation.owner_id,
            "from_device_id": device_id,
            "to": installation.agent_id,
            "payload_b64": base64.b64encode(framed).decode(),
            "encrypted": encrypted,
        }
        if isinstance(body.get("reply_to_message_id"), str):
            envelope["reply_to_message_id"] = body["reply_to_message_id"]
        if attachments:
            envelope["attachments"] = attachments
        log.sent.append(
            {
                "message_id": envelope["id"],
                "device_id": device_id,
                "kind": kind,
                "text": plaintext,
                "encrypted": encrypted,
                "frame_type": framed[0] if encrypted else None,
                "at": emulator.now(),
            }
        )
        last = emulator.state.last_device
        last[conversation_id] = device_id
        await emulator.hub.enqueue(installation.agent_id, envelope)
        emulator.record("human_sent", conversation_id=conversation_id, message_id=envelope["id"])
        return str(envelope["id"])

    async def deliver_from_agent(self, installation: Installation, envelope: Json) -> None:
        """What the addressed device receives: decrypted, checked, appended to the inbox."""
        emulator = self._emulator
        conversation_id = installation.conversation_id
        log = emulator.state.conversation_log(conversation_id)
        if any(entry["message_id"] == envelope["id"] for entry in log.inbox):
            emulator.record("duplicate_agent_message", message_id=envelope["id"])
            return
        device_id = str(
            envelope.get("to_device_id")
            or emulator.state.last_device.get(conversation_id)
            or DEFAULT_DEVICE_ID
        )
        entry: Json = {
            "message_id": envelope["id"],
            "conversation_id": conversation_id,
            "from": envelope["from"],
            "to": envelope["to"],
            "to_device_id": envelope.get("to_device_id"),
            "device_id": device_id,
            "encrypted": envelope["encrypted"],
            "reply_to_message_id": envelope.get("reply_to_message_id"),
            "attachments": envelope.get("attachments"),
            "received_at": emulator.now(),
            "received_wall": time.time(),
        }
        entry.update(self._open(installation, device_id, envelope))
        log.inbox.append(entry)
        emulator.commit()
        emulator.record("agent_sent", agent_id=installation.agent_id, message_id=envelope["id"])

    def _open(self, installation: Installation, device_id: str, envelope: Json) -> Json:
        emulator = self._emulator
        try:
            framed = base64.b64decode(envelope["payload_b64"], validate=True)
        except binascii.Error:
            return {"kind": "undecryptable", "error": "payload_b64 is not base64"}
        if not envelope["encrypted"]:
            plaintext = framed.decode(errors="replace")
            return {
                "text": plaintext,
                **describe_plaintext(emulator, plaintext, installation.conversation_id),
            }
        key = f"{installation.owner_id}/{device_id}"
        if key not in emulator.state.devices:
            return {"kind": "undecryptable", "error": f"unknown device {device_id}"}
        device = self.device(installation.owner_id, device_id)
        try:
            plain_bytes = device.decrypt_from(installation.agent_id, framed)
            plaintext = plain_bytes.decode()
        except (ReferencePeerError, UnicodeDecodeError) as err:
            return {"kind": "undecryptable", "error": str(err), "frame_type": framed[:1].hex()}
        log = emulator.state.conversation_log(installation.conversation_id)
        return {
            "text": plaintext,
            "frame_type": framed[0],
            "history": check_history_record(envelope, plaintext, log.history_key),
            **describe_plaintext(emulator, plaintext, installation.conversation_id),
        }
