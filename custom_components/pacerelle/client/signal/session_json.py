"""The JSON form of a peer's session record (bytes as standard base64), and its strict reading.

Reading refuses anything malformed with INVALID_STATE: a stored state is trusted input only
once it has the exact shape `record_to_json` writes.
"""

import base64
import binascii
from collections.abc import Callable
from typing import Any

from . import spqr
from .consts import KEY_LENGTH, MAX_MESSAGE_KEYS, MAX_RECEIVER_CHAINS, PUBLIC_KEY_LENGTH
from .double_ratchet import RatchetState, ReceiverChain, SenderChain, SkippedKey
from .errors import SignalError, SignalErrorKind
from .ratchet_keys import ChainKey, RootKey
from .session import Archived, SessionRecord, SessionState, StoredState

UINT32_MAX = (1 << 32) - 1


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _bytes(value: Any, size: int) -> bytes:
    if not isinstance(value, str):
        raise TypeError("expected base64 text")
    data = base64.b64decode(value, validate=True)
    if len(data) != size:
        raise ValueError(f"expected {size} bytes, got {len(data)}")
    return data


def _uint(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= UINT32_MAX:
        raise ValueError(f"expected a uint32, got {value!r}")
    return value


def _chain_key_to_json(chain_key: ChainKey) -> list[Any]:
    return [_b64(chain_key.key), chain_key.index]


def _chain_key_from_json(data: Any) -> ChainKey:
    key, index = data
    return ChainKey(_bytes(key, KEY_LENGTH), _uint(index))


def _ratchet_to_json(ratchet: RatchetState) -> dict[str, Any]:
    sender = ratchet.sender_chain
    return {
        "root_key": _b64(ratchet.root_key.key),
        "sender": [
            _b64(sender.ratchet_private),
            _b64(sender.ratchet_public),
            _chain_key_to_json(sender.chain_key),
        ],
        "receivers": [
            [
                _b64(chain.ratchet_key),
                _chain_key_to_json(chain.chain_key),
                [[skipped.counter, _b64(skipped.seed)] for skipped in chain.skipped],
            ]
            for chain in ratchet.receiver_chains
        ],
        "previous_counter": ratchet.previous_counter,
    }


def _ratchet_from_json(data: dict[str, Any]) -> RatchetState:
    private, public, chain_key = data["sender"]
    receivers = []
    for ratchet_key, receiver_key, skipped in data["receivers"]:
        if len(skipped) > MAX_MESSAGE_KEYS:
            raise ValueError("too many skipped keys")
        receivers.append(
            ReceiverChain(
                _bytes(ratchet_key, PUBLIC_KEY_LENGTH),
                _chain_key_from_json(receiver_key),
                tuple(SkippedKey(_uint(n), _bytes(seed, KEY_LENGTH)) for n, seed in skipped),
            )
        )
    if len(receivers) > MAX_RECEIVER_CHAINS:
        raise ValueError("too many receiver chains")
    return RatchetState(
        root_key=RootKey(_bytes(data["root_key"], KEY_LENGTH)),
        sender_chain=SenderChain(
            _bytes(private, KEY_LENGTH),
            _bytes(public, PUBLIC_KEY_LENGTH),
            _chain_key_from_json(chain_key),
        ),
        receiver_chains=tuple(receivers),
        previous_counter=_uint(data["previous_counter"]),
    )


def _state_to_json(state: SessionState) -> dict[str, Any]:
    return {
        "version": state.version,
        "local_identity": _b64(state.local_identity),
        "remote_identity": _b64(state.remote_identity),
        "alice_base_key": _b64(state.alice_base_key),
        "local_registration_id": state.local_registration_id,
        "remote_registration_id": state.remote_registration_id,
        "ratchet": _ratchet_to_json(state.ratchet),
        "spqr": state.pq_state.to_json(),
    }


def _state_from_json(data: dict[str, Any]) -> SessionState:
    return SessionState(
        version=_uint(data["version"]),
        local_identity=_bytes(data["local_identity"], PUBLIC_KEY_LENGTH),
        remote_identity=_bytes(data["remote_identity"], PUBLIC_KEY_LENGTH),
        alice_base_key=_bytes(data["alice_base_key"], PUBLIC_KEY_LENGTH),
        local_registration_id=_uint(data["local_registration_id"]),
        remote_registration_id=_uint(data["remote_registration_id"]),
        ratchet=_ratchet_from_json(data["ratchet"]),
        pq_state=spqr.SpqrState.from_json(data["spqr"]),
    )


def record_to_json(record: SessionRecord) -> dict[str, Any]:
    """A JSON-ready dict of one peer's record."""
    return {
        "trusted_identity": (
            None if record.trusted_identity is None else _b64(record.trusted_identity)
        ),
        "current": None if record.current is None else _state_to_json(record.current),
        "previous": [state_to_json(state) for state in record.previous],
    }


def state_to_json(archived: Archived) -> Any:
    """One state's JSON: a stored state not parsed yet gives its stored JSON as it is."""
    if isinstance(archived, StoredState):
        return archived.to_json()
    return _state_to_json(archived)


def stored_state(source: Any, read: Callable[[Any], Any]) -> StoredState:
    """A state the store holds as `source`, `read(source)` its JSON, parsed on first use by
    the rule of record_from_json: anything malformed is INVALID_STATE then."""
    return StoredState(source, read, _archived_from_json)


def _archived_from_json(data: Any) -> SessionState:
    try:
        return _state_from_json(data)
    except SignalError as error:
        raise SignalError(
            SignalErrorKind.INVALID_STATE, f"archived session state: {error}"
        ) from error
    except (KeyError, TypeError, ValueError, binascii.Error) as error:
        raise SignalError(
            SignalErrorKind.INVALID_STATE, f"archived session state: {error!r}"
        ) from error


def record_from_json(data: Any) -> SessionRecord:
    """Read what `record_to_json` wrote; anything else is INVALID_STATE."""
    try:
        identity = data["trusted_identity"]
        current = data["current"]
        return SessionRecord(
            trusted_identity=None if identity is None else _bytes(identity, PUBLIC_KEY_LENGTH),
            current=None if current is None else _state_from_json(current),
            previous=tuple(
                state if isinstance(state, StoredState) else _state_from_json(state)
                for state in data["previous"]
            ),
        )
    except SignalError as error:
        raise SignalError(SignalErrorKind.INVALID_STATE, f"session record: {error}") from error
    except (KeyError, TypeError, ValueError, binascii.Error) as error:
        raise SignalError(SignalErrorKind.INVALID_STATE, f"session record: {error!r}") from error
