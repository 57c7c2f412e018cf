"""The ML-KEM braid: each message's part of the exchange, epoch by epoch (v1/chunked/states.rs).

Party A starts on the key-generating side of epoch 1 and party B on the encapsulating side;
each finished epoch swaps the roles. A message of an older epoch changes nothing; one from a
later epoch than the exchange allows is refused.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import assert_never

from ..errors import SignalError, SignalErrorKind
from .authenticator import Authenticator
from .encoding import Chunk
from .message import BraidMessage, PayloadType
from .send_ct import (
    Ct1Acknowledged,
    Ct1Sampled,
    Ct2Sampled,
    EkReceivedCt1Sampled,
    HeaderReceived,
    NoHeaderReceived,
    SendCtState,
)
from .send_ek import (
    Ct1Received,
    EkSentCt1Received,
    HeaderSent,
    KeysSampled,
    KeysUnsampled,
    SendEkState,
)

FIRST_EPOCH = 1

type BraidState = SendEkState | SendCtState


@dataclass(frozen=True, slots=True)
class EpochSecret:
    """A finished epoch's secret, for the chains."""

    epoch: int
    secret: bytes


def init_a(auth_key: bytes) -> BraidState:
    """Party A (direction A2B) generates the first key pair."""
    return KeysUnsampled(FIRST_EPOCH, Authenticator.new(auth_key, FIRST_EPOCH))


def init_b(auth_key: bytes) -> BraidState:
    """Party B (direction B2A) waits for A's first header."""
    return NoHeaderReceived.new_epoch(FIRST_EPOCH, Authenticator.new(auth_key, FIRST_EPOCH))


def braid_send(
    state: BraidState, random: Callable[[int], bytes]
) -> tuple[BraidState, BraidMessage, EpochSecret | None]:
    """What the next outgoing message carries, and the epoch secret if this send creates one."""
    new_state: BraidState = state
    chunk: Chunk | None = None
    secret: EpochSecret | None = None
    match state:
        case KeysUnsampled():
            payload = PayloadType.HDR
            new_state, chunk = state.send_hdr_chunk(random)
        case KeysSampled():
            payload = PayloadType.HDR
            new_state, chunk = state.send_hdr_chunk()
        case HeaderSent():
            payload = PayloadType.EK
            new_state, chunk = state.send_ek_chunk()
        case Ct1Received():
            # Each key chunk now also tells the peer that ct1 arrived.
            payload = PayloadType.EK_CT1_ACK
            new_state, chunk = state.send_ek_chunk()
        case EkSentCt1Received():
            payload = PayloadType.CT1_ACK
        case NoHeaderReceived() | Ct1Acknowledged():
            payload = PayloadType.NONE
        case HeaderReceived():
            payload = PayloadType.CT1
            new_state, chunk, epoch_secret = state.send_ct1_chunk(random)
            secret = EpochSecret(state.epoch, epoch_secret)
        case Ct1Sampled() | EkReceivedCt1Sampled():
            payload = PayloadType.CT1
            new_state, chunk = state.send_ct1_chunk()
        case Ct2Sampled():
            payload = PayloadType.CT2
            new_state, chunk = state.send_ct2_chunk()
        case _:
            assert_never(state)
    return new_state, BraidMessage(state.epoch, payload, chunk), secret


def braid_recv(state: BraidState, message: BraidMessage) -> tuple[BraidState, EpochSecret | None]:
    """Take in an incoming message; returns the new state and the epoch secret it completes."""
    if message.epoch > state.epoch:
        # Only the peer starting the next epoch (so it has our ct2) may run ahead of us.
        if isinstance(state, Ct2Sampled) and message.epoch == state.epoch + 1:
            return KeysUnsampled(message.epoch, state.auth), None
        raise SignalError(SignalErrorKind.PQ_RATCHET, f"epoch not in valid range: {message.epoch}")
    if message.epoch < state.epoch:
        return state, None
    return _recv_same_epoch(state, message.payload, message.chunk)


def _recv_same_epoch(
    state: BraidState, payload: PayloadType, chunk: Chunk | None
) -> tuple[BraidState, EpochSecret | None]:
    """Messages that carry nothing this state waits for leave it as it is."""
    new_state: BraidState = state
    secret: EpochSecret | None = None
    match state, payload:
        case KeysSampled() | HeaderSent(), PayloadType.CT1 if chunk is not None:
            new_state = state.recv_ct1_chunk(chunk)
        case Ct1Received(), PayloadType.CT2 if chunk is not None:
            new_state = state.recv_ct2_chunk(chunk)
        case EkSentCt1Received(), PayloadType.CT2 if chunk is not None:
            received = state.recv_ct2_chunk(chunk)
            if isinstance(received, tuple):
                new_state, epoch_secret = received
                secret = EpochSecret(state.epoch, epoch_secret)
            else:
                new_state = received
        case NoHeaderReceived(), PayloadType.HDR if chunk is not None:
            new_state = state.recv_hdr_chunk(chunk)
        case Ct1Sampled(), PayloadType.EK | PayloadType.EK_CT1_ACK if chunk is not None:
            new_state = state.recv_ek_chunk(chunk, ct1_ack=payload is PayloadType.EK_CT1_ACK)
        case EkReceivedCt1Sampled(), PayloadType.CT1_ACK | PayloadType.EK_CT1_ACK:
            new_state = state.recv_ct1_ack()
        case Ct1Acknowledged(), PayloadType.EK | PayloadType.EK_CT1_ACK if chunk is not None:
            new_state = state.recv_ek_chunk(chunk)
    return new_state, secret
