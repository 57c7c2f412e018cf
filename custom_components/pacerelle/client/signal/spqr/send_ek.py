"""The key-generating side of an epoch (v1/chunked/send_ek.rs with v1/unchunked/send_ek.rs).

This side samples an ML-KEM-768 key pair, sends the 64-byte header (with its MAC) then the
1,152-byte encapsulation key in chunks, receives ct1 and ct2 in chunks and decapsulates:

    KeysUnsampled -send-> KeysSampled -recv ct1-> HeaderSent -ct1 done-> Ct1Received
      -recv ct2-> EkSentCt1Received -ct2 done, MAC ok-> send_ct.NoHeaderReceived (epoch + 1)

Every method returns new values; none changes the state it is called on.
"""

from collections.abc import Callable
from dataclasses import dataclass, replace

from ..kem import mlkem768_incremental as kem
from . import chunking, kdf
from .authenticator import MAC_SIZE, Authenticator
from .encoding import Chunk, PolyDecoder, PolyEncoder
from .send_ct import NoHeaderReceived

KEYGEN_SEED_SIZE = 64


@dataclass(frozen=True, slots=True)
class KeysUnsampled:
    """Waiting to send: no key pair yet for this epoch."""

    epoch: int
    auth: Authenticator

    def send_hdr_chunk(self, random: Callable[[int], bytes]) -> tuple[KeysSampled, Chunk]:
        keys = kem.generate(random(KEYGEN_SEED_SIZE))
        mac = self.auth.mac_hdr(self.epoch, keys.hdr)
        encoder, chunk = chunking.next_chunk(chunking.start_sending(keys.hdr + mac))
        return KeysSampled(self.epoch, self.auth, keys.ek, keys.dk, encoder), chunk


@dataclass(frozen=True, slots=True)
class KeysSampled:
    """Sending header chunks until the first ct1 chunk shows the peer has the header."""

    epoch: int
    auth: Authenticator
    ek: bytes
    dk: bytes
    sending_hdr: PolyEncoder

    def send_hdr_chunk(self) -> tuple[KeysSampled, Chunk]:
        encoder, chunk = chunking.next_chunk(self.sending_hdr)
        return KeysSampled(self.epoch, self.auth, self.ek, self.dk, encoder), chunk

    def recv_ct1_chunk(self, chunk: Chunk) -> HeaderSent:
        receiving_ct1 = chunking.add_chunk(chunking.start_receiving(kem.CIPHERTEXT1_SIZE), chunk)
        sending_ek = chunking.start_sending(self.ek)
        return HeaderSent(self.epoch, self.auth, self.dk, sending_ek, receiving_ct1)


@dataclass(frozen=True, slots=True)
class HeaderSent:
    """Sending encapsulation key chunks while collecting ct1."""

    epoch: int
    auth: Authenticator
    dk: bytes
    sending_ek: PolyEncoder
    receiving_ct1: PolyDecoder

    def send_ek_chunk(self) -> tuple[HeaderSent, Chunk]:
        encoder, chunk = chunking.next_chunk(self.sending_ek)
        return HeaderSent(self.epoch, self.auth, self.dk, encoder, self.receiving_ct1), chunk

    def recv_ct1_chunk(self, chunk: Chunk) -> HeaderSent | Ct1Received:
        decoder = chunking.add_chunk(self.receiving_ct1, chunk)
        ct1 = chunking.decoded(decoder)
        if ct1 is None:
            return replace(self, receiving_ct1=decoder)
        return Ct1Received(self.epoch, self.auth, self.dk, ct1, self.sending_ek)


@dataclass(frozen=True, slots=True)
class Ct1Received:
    """Has ct1; keeps sending encapsulation key chunks, each acknowledging ct1."""

    epoch: int
    auth: Authenticator
    dk: bytes
    ct1: bytes
    sending_ek: PolyEncoder

    def send_ek_chunk(self) -> tuple[Ct1Received, Chunk]:
        encoder, chunk = chunking.next_chunk(self.sending_ek)
        return Ct1Received(self.epoch, self.auth, self.dk, self.ct1, encoder), chunk

    def recv_ct2_chunk(self, chunk: Chunk) -> EkSentCt1Received:
        decoder = chunking.start_receiving(kem.CIPHERTEXT2_SIZE + MAC_SIZE)
        receiving_ct2 = chunking.add_chunk(decoder, chunk)
        return EkSentCt1Received(self.epoch, self.auth, self.dk, self.ct1, receiving_ct2)


@dataclass(frozen=True, slots=True)
class EkSentCt1Received:
    """The peer has the whole key and ct1; collecting ct2 and its MAC."""

    epoch: int
    auth: Authenticator
    dk: bytes
    ct1: bytes
    receiving_ct2: PolyDecoder

    def recv_ct2_chunk(self, chunk: Chunk) -> EkSentCt1Received | tuple[NoHeaderReceived, bytes]:
        """Either still collecting, or the next epoch's start and this epoch's secret."""
        decoder = chunking.add_chunk(self.receiving_ct2, chunk)
        decoded = chunking.decoded(decoder)
        if decoded is None:
            return replace(self, receiving_ct2=decoder)
        ct2, mac = decoded[: kem.CIPHERTEXT2_SIZE], decoded[kem.CIPHERTEXT2_SIZE :]
        secret = kdf.epoch_secret(self.epoch, kem.decaps(self.dk, self.ct1, ct2))
        auth = self.auth.update(self.epoch, secret)
        auth.verify_ct(self.epoch, self.ct1 + ct2, mac)
        return NoHeaderReceived.new_epoch(self.epoch + 1, auth), secret


type SendEkState = KeysUnsampled | KeysSampled | HeaderSent | Ct1Received | EkSentCt1Received
