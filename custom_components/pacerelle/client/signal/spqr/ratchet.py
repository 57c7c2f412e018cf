"""SPQR's entry points (lib.rs): start a session's state, send, receive, negotiate the version.

`send` returns the bytes libsignal puts in SignalMessage.pq_ratchet and a 32-byte key that
the Double Ratchet mixes into the message keys; `recv` takes those bytes and returns the same
key. Neither changes the state passed in.
"""

import os
from collections.abc import Callable

from ..errors import SignalError, SignalErrorKind
from .braid import BraidState, braid_recv, braid_send, init_a, init_b
from .chain import Chain
from .message import decode_message, encode_message
from .params import ChainParams, Direction, Version
from .state import SpqrState, VersionNegotiation

DEFAULT_CHAIN_PARAMS = ChainParams()
DISABLED = SpqrState()
"""The state of a session without SPQR (V0): sends empty messages and yields no keys."""


def _error(detail: str) -> SignalError:
    return SignalError(SignalErrorKind.PQ_RATCHET, detail)


def _init_braid(version: Version, direction: Direction, auth_key: bytes) -> BraidState | None:
    if version is Version.V0:
        return None
    return init_a(auth_key) if direction is Direction.A2B else init_b(auth_key)


def initial_state(
    direction: Direction,
    auth_key: bytes,
    *,
    version: Version = Version.V1,
    min_version: Version = Version.V1,
    chain_params: ChainParams = DEFAULT_CHAIN_PARAMS,
) -> SpqrState:
    """A session's first state; libsignal passes the PQXDH-derived auth key, V1 and min V1."""
    if version is Version.V0:
        return DISABLED
    negotiation = VersionNegotiation(
        auth_key=bytes(auth_key),
        direction=direction,
        min_version=min_version,
        chain_params=chain_params,
    )
    return SpqrState(negotiation, None, _init_braid(version, direction, bytes(auth_key)))


def _chain_from_negotiation(negotiation: VersionNegotiation | None) -> Chain:
    if negotiation is None:
        raise _error("Chain not available")
    return Chain.new(negotiation.auth_key, negotiation.direction, negotiation.chain_params)


def send(
    state: SpqrState, random: Callable[[int], bytes] = os.urandom
) -> tuple[SpqrState, bytes | None, bytes]:
    """The next outgoing message: (new state, message key or None, pq_ratchet bytes)."""
    if state.braid is None:
        return DISABLED, None, b""
    braid, message, secret = braid_send(state.braid, random)
    chain = state.chain
    if chain is None:
        negotiation = state.negotiation
        if negotiation is None:
            raise _error("Chain not available")
        # With min_version V0, keys wait until the peer is known to speak V1.
        if negotiation.min_version > Version.V0:
            chain = _chain_from_negotiation(negotiation)
    if chain is None:
        if secret is not None:
            raise SignalError(SignalErrorKind.INVALID_STATE, "epoch secret without a chain")
        index, key = 0, None
    else:
        if secret is not None:
            chain = chain.add_epoch(secret.epoch, secret.secret)
        chain, index, message_key = chain.send_key(message.epoch - 1)
        key = message_key
    # Sending never changes the version negotiation.
    new_state = SpqrState(state.negotiation, chain, braid)
    return new_state, key, encode_message(message, index)


def _message_version(message: bytes) -> Version | None:
    """Empty means V0; a version byte we do not know means a newer peer (None)."""
    if not message:
        return Version.V0
    try:
        return Version(message[0])
    except ValueError:
        return None


def _negotiate(state: SpqrState, theirs: Version) -> SpqrState:
    """Fall back to the peer's lower version if our start allows it; no later change."""
    negotiation = state.negotiation
    if negotiation is None:
        raise _error("Version mismatch after negotiation")
    if theirs < negotiation.min_version:
        raise _error(f"Minimum version: peer speaks {theirs.name}")
    chain = state.chain if state.chain is not None else _chain_from_negotiation(negotiation)
    braid = _init_braid(theirs, negotiation.direction, negotiation.auth_key)
    return SpqrState(None, chain, braid)


def recv(
    state: SpqrState, message: bytes, *, max_jump: int | None = None
) -> tuple[SpqrState, bytes | None]:
    """Take in a peer's pq_ratchet bytes: (new state, message key or None).

    `max_jump` lowers the chain's own jump limit for this one message (archived sessions).
    """
    theirs = _message_version(message)
    if theirs is None:
        # A newer peer: ignore its part and keep sending our version's format.
        return state, None
    if theirs < state.version:
        state = _negotiate(state, theirs)
    if state.braid is None:
        return DISABLED, None
    braid_message, index = decode_message(message)
    braid, secret = braid_recv(state.braid, braid_message)
    chain = state.chain if state.chain is not None else _chain_from_negotiation(state.negotiation)
    if secret is not None:
        chain = chain.add_epoch(secret.epoch, secret.secret)
    key_epoch = braid_message.epoch - 1
    key = None
    # Index 0 in epoch 0 is a message sent before the chain existed: it has no key.
    if key_epoch != 0 or index != 0:
        chain, key = chain.recv_key(key_epoch, index, max_jump)
    # Receiving ends the version negotiation.
    return SpqrState(None, chain, braid), key
