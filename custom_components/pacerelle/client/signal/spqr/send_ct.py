"""The encapsulating side of an epoch (v1/chunked/send_ct.rs with v1/unchunked/send_ct.rs).

This side collects the header (with its MAC), encapsulates against it at once (ct1 needs only
the header, so this epoch's secret is known now), sends ct1 in chunks while collecting the
encapsulation key, then sends ct2 with a MAC over ct1 || ct2:

    NoHeaderReceived -hdr done, MAC ok-> HeaderReceived -send-> Ct1Sampled
      -ek done-> EkReceivedCt1Sampled -ct1 acked-> Ct2Sampled
      -ct1 acked-> Ct1Acknowledged -ek done-> Ct2Sampled
      -ek done with ack-> Ct2Sampled
    Ct2Sampled -message of epoch + 1-> send_ek.KeysUnsampled (epoch + 1)

Every method returns new values; none changes the state it is called on.
"""

from collections.abc import Callable
from dataclasses import dataclass, replace

from ..errors import SignalError, SignalErrorKind
from ..kem import mlkem768_incremental as kem
from . import chunking, kdf
from .authenticator import MAC_SIZE, Authenticator
from .encoding import Chunk, PolyDecoder, PolyEncoder

ENCAPS_RANDOMNESS_SIZE = 32


@dataclass(frozen=True, slots=True)
class NoHeaderReceived:
    """Collecting the peer's header chunks."""

    epoch: int
    auth: Authenticator
    receiving_hdr: PolyDecoder

    @classmethod
    def new_epoch(cls, epoch: int, auth: Authenticator) -> NoHeaderReceived:
        return cls(epoch, auth, chunking.start_receiving(kem.HEADER_SIZE + MAC_SIZE))

    def recv_hdr_chunk(self, chunk: Chunk) -> NoHeaderReceived | HeaderReceived:
        decoder = chunking.add_chunk(self.receiving_hdr, chunk)
        decoded = chunking.decoded(decoder)
        if decoded is None:
            return replace(self, receiving_hdr=decoder)
        hdr, mac = decoded[: kem.HEADER_SIZE], decoded[kem.HEADER_SIZE :]
        self.auth.verify_hdr(self.epoch, hdr, mac)
        receiving_ek = chunking.start_receiving(kem.ENCAPSULATION_KEY_SIZE)
        return HeaderReceived(self.epoch, self.auth, hdr, receiving_ek)


@dataclass(frozen=True, slots=True)
class HeaderReceived:
    """Has the header; the next send encapsulates."""

    epoch: int
    auth: Authenticator
    hdr: bytes
    receiving_ek: PolyDecoder

    def send_ct1_chunk(self, random: Callable[[int], bytes]) -> tuple[Ct1Sampled, Chunk, bytes]:
        """The first ct1 chunk, and this epoch's secret for the sending chain."""
        ct1, es, shared_secret = kem.encaps1(self.hdr, random(ENCAPS_RANDOMNESS_SIZE))
        secret = kdf.epoch_secret(self.epoch, shared_secret)
        auth = self.auth.update(self.epoch, secret)
        encoder, chunk = chunking.next_chunk(chunking.start_sending(ct1))
        state = Ct1Sampled(self.epoch, auth, self.hdr, es, ct1, encoder, self.receiving_ek)
        return state, chunk, secret


def _check_ek(hdr: bytes, ek: bytes) -> None:
    if not kem.ek_matches_header(ek, hdr):
        raise SignalError(
            SignalErrorKind.PQ_RATCHET,
            "Erroneous data received from remote party: encapsulation key does not match header",
        )


def _send_ct2(epoch: int, auth: Authenticator, ek: bytes, es: bytes, ct1: bytes) -> Ct2Sampled:
    ct2 = kem.encaps2(ek, es)
    mac = auth.mac_ct(epoch, ct1 + ct2)
    return Ct2Sampled(epoch, auth, chunking.start_sending(ct2 + mac))


@dataclass(frozen=True, slots=True)
class Ct1Sampled:
    """Sending ct1 chunks while collecting the encapsulation key."""

    epoch: int
    auth: Authenticator
    hdr: bytes
    es: bytes
    ct1: bytes
    sending_ct1: PolyEncoder
    receiving_ek: PolyDecoder

    def send_ct1_chunk(self) -> tuple[Ct1Sampled, Chunk]:
        encoder, chunk = chunking.next_chunk(self.sending_ct1)
        return Ct1Sampled(
            self.epoch, self.auth, self.hdr, self.es, self.ct1, encoder, self.receiving_ek
        ), chunk

    def recv_ek_chunk(
        self, chunk: Chunk, ct1_ack: bool
    ) -> Ct1Sampled | Ct1Acknowledged | EkReceivedCt1Sampled | Ct2Sampled:
        decoder = chunking.add_chunk(self.receiving_ek, chunk)
        ek = chunking.decoded(decoder)
        if ek is not None:
            _check_ek(self.hdr, ek)
            if ct1_ack:
                return _send_ct2(self.epoch, self.auth, ek, self.es, self.ct1)
            return EkReceivedCt1Sampled(
                self.epoch, self.auth, self.es, ek, self.ct1, self.sending_ct1
            )
        if ct1_ack:
            return Ct1Acknowledged(self.epoch, self.auth, self.hdr, self.es, self.ct1, decoder)
        return replace(self, receiving_ek=decoder)


@dataclass(frozen=True, slots=True)
class EkReceivedCt1Sampled:
    """Has the whole key; sending ct1 chunks until the peer acknowledges ct1."""

    epoch: int
    auth: Authenticator
    es: bytes
    ek: bytes
    ct1: bytes
    sending_ct1: PolyEncoder

    def send_ct1_chunk(self) -> tuple[EkReceivedCt1Sampled, Chunk]:
        encoder, chunk = chunking.next_chunk(self.sending_ct1)
        return EkReceivedCt1Sampled(
            self.epoch, self.auth, self.es, self.ek, self.ct1, encoder
        ), chunk

    def recv_ct1_ack(self) -> Ct2Sampled:
        return _send_ct2(self.epoch, self.auth, self.ek, self.es, self.ct1)


@dataclass(frozen=True, slots=True)
class Ct1Acknowledged:
    """The peer has ct1; still collecting the encapsulation key (sends carry no chunk)."""

    epoch: int
    auth: Authenticator
    hdr: bytes
    es: bytes
    ct1: bytes
    receiving_ek: PolyDecoder

    def recv_ek_chunk(self, chunk: Chunk) -> Ct1Acknowledged | Ct2Sampled:
        decoder = chunking.add_chunk(self.receiving_ek, chunk)
        ek = chunking.decoded(decoder)
        if ek is None:
            return replace(self, receiving_ek=decoder)
        _check_ek(self.hdr, ek)
        return _send_ct2(self.epoch, self.auth, ek, self.es, self.ct1)


@dataclass(frozen=True, slots=True)
class Ct2Sampled:
    """Sending ct2 and its MAC until a message of the next epoch shows the peer has it."""

    epoch: int
    auth: Authenticator
    sending_ct2: PolyEncoder

    def send_ct2_chunk(self) -> tuple[Ct2Sampled, Chunk]:
        encoder, chunk = chunking.next_chunk(self.sending_ct2)
        return Ct2Sampled(self.epoch, self.auth, encoder), chunk


type SendCtState = (
    NoHeaderReceived
    | HeaderReceived
    | Ct1Sampled
    | EkReceivedCt1Sampled
    | Ct1Acknowledged
    | Ct2Sampled
)
