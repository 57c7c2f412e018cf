"""The symmetric chains that turn epoch secrets into per-message keys (chain.rs).

Each epoch has one chain per direction. Sending walks its chain one key at a time; receiving
may jump ahead (at most `max_jump`) and keeps the skipped keys, trimmed to `max_ooo_keys`
behind the newest, for messages that arrive out of order. Every operation returns a new
value: nothing here is mutated, so a caller keeps the old chain when a later step fails.
"""

from dataclasses import dataclass, replace
from types import MappingProxyType

from ..errors import SignalError, SignalErrorKind
from ..hmac_sha256 import hmac_sha256
from . import kdf
from .params import UINT32_MAX, ChainParams, Direction

KEY_SIZE = 32
EPOCHS_KEPT_BEFORE_SEND_EPOCH = 1
"""Older epochs are dropped once sending moves on, except this many (late messages)."""


def _error(detail: str) -> SignalError:
    return SignalError(SignalErrorKind.PQ_RATCHET, detail)


def _step(next_key: bytes, ctr: int) -> tuple[bytes, bytes]:
    """Derive key number `ctr` and the chain key after it.

    HKDF(salt 0, next_key, ctr || CHAIN_NEXT, 64 bytes) written out (every message runs it):
    the two expand blocks are exactly the two halves.
    """
    prk = hmac_sha256(kdf.ZERO_SALT, next_key)
    info = ctr.to_bytes(4, "big") + kdf.CHAIN_NEXT
    first = hmac_sha256(prk, info + b"\x01")
    return first, hmac_sha256(prk, first + info + b"\x02")


@dataclass(frozen=True, slots=True)
class ChainDirection:
    """One direction of one epoch: the last index derived, the next chain key, skipped keys.

    `next` is empty once sending has moved to a later epoch (the old send chain is erased).
    """

    ctr: int
    next: bytes
    skipped: MappingProxyType[int, bytes]

    @classmethod
    def new(cls, chain_key: bytes) -> ChainDirection:
        return cls(0, chain_key, MappingProxyType({}))

    def next_key(self) -> tuple[ChainDirection, int, bytes]:
        """The next sending key and its index (indexes start at 1)."""
        if not self.next or self.ctr >= UINT32_MAX:
            raise _error("Chain not available")
        ctr = self.ctr + 1
        chain_key, key = _step(self.next, ctr)
        return ChainDirection(ctr, chain_key, self.skipped), ctr, key

    def key(self, at: int, params: ChainParams) -> tuple[ChainDirection, bytes]:
        """The receiving key at index `at`, deriving and keeping any skipped on the way."""
        if at < self.ctr:
            return self._take_skipped(at, params)
        if at == self.ctr:
            raise _error(f"Key already requested: {at}")
        if at - self.ctr > params.max_jump:
            raise _error(f"Key jump: {self.ctr} - {at}")
        if not self.next:
            raise _error("Chain not available")
        # A jump past the whole window makes every kept key obsolete.
        skipped = {} if at > self.ctr + params.max_ooo_keys else dict(self.skipped)
        chain_key, ctr = self.next, self.ctr
        while at > ctr + 1:
            ctr += 1
            chain_key, key = _step(chain_key, ctr)
            if ctr + params.max_ooo_keys >= at:
                skipped[ctr] = key
        if len(skipped) >= params.trim_size:
            horizon = ctr - params.max_ooo_keys
            skipped = {index: k for index, k in skipped.items() if index >= horizon}
        ctr += 1
        chain_key, key = _step(chain_key, ctr)
        return ChainDirection(ctr, chain_key, MappingProxyType(skipped)), key

    def _take_skipped(self, at: int, params: ChainParams) -> tuple[ChainDirection, bytes]:
        if at + params.max_ooo_keys < self.ctr:
            raise _error(f"Key trimmed: {at}")
        key = self.skipped.get(at)
        if key is None:
            raise _error(f"Key already requested: {at}")
        skipped = dict(self.skipped)
        del skipped[at]
        return replace(self, skipped=MappingProxyType(skipped)), key


@dataclass(frozen=True, slots=True)
class ChainEpoch:
    """Both directions of one epoch."""

    send: ChainDirection
    recv: ChainDirection


def _epoch_links(generator: bytes, direction: Direction) -> ChainEpoch:
    """Split a 96-byte KDF output: [next root | A2B chain | B2A chain]."""
    a2b, b2a = generator[KEY_SIZE : 2 * KEY_SIZE], generator[2 * KEY_SIZE : 3 * KEY_SIZE]
    mine, theirs = (a2b, b2a) if direction is Direction.A2B else (b2a, a2b)
    return ChainEpoch(ChainDirection.new(mine), ChainDirection.new(theirs))


@dataclass(frozen=True, slots=True)
class Chain:
    """The chains of all epochs still kept: links[-1] is `current_epoch`."""

    direction: Direction
    current_epoch: int
    send_epoch: int
    links: tuple[ChainEpoch, ...]
    next_root: bytes
    params: ChainParams

    @classmethod
    def new(cls, initial_key: bytes, direction: Direction, params: ChainParams) -> Chain:
        """Epoch 0's chains, from the session's auth key."""
        generator = kdf.hkdf_sha256(kdf.ZERO_SALT, initial_key, kdf.CHAIN_START, 3 * KEY_SIZE)
        return cls(
            direction=direction,
            current_epoch=0,
            send_epoch=0,
            links=(_epoch_links(generator, direction),),
            next_root=generator[:KEY_SIZE],
            params=params,
        )

    def add_epoch(self, epoch: int, secret: bytes) -> Chain:
        """Start the chains of the next epoch from its ML-KEM secret."""
        if epoch != self.current_epoch + 1:
            raise SignalError(
                SignalErrorKind.INVALID_STATE,
                f"epoch secret for {epoch} after epoch {self.current_epoch}",
            )
        generator = kdf.hkdf_sha256(self.next_root, secret, kdf.CHAIN_ADD_EPOCH, 3 * KEY_SIZE)
        return replace(
            self,
            current_epoch=epoch,
            next_root=generator[:KEY_SIZE],
            links=(*self.links, _epoch_links(generator, self.direction)),
        )

    def send_key(self, epoch: int) -> tuple[Chain, int, bytes]:
        """The next sending key of `epoch` and its index; moving on erases older send chains."""
        if epoch < self.send_epoch:
            raise _error(f"Send key epoch decreased ({self.send_epoch} -> {epoch})")
        position = self._position(epoch)
        links = self.links
        if epoch != self.send_epoch:
            dropped = max(0, position - EPOCHS_KEPT_BEFORE_SEND_EPOCH)
            position -= dropped
            links = tuple(
                replace(link, send=replace(link.send, next=b"")) if i < position else link
                for i, link in enumerate(links[dropped:])
            )
        link = links[position]
        send, index, key = link.send.next_key()
        links = (*links[:position], ChainEpoch(send, link.recv), *links[position + 1 :])
        return self._with(epoch, links), index, key

    def recv_key(self, epoch: int, index: int, max_jump: int | None = None) -> tuple[Chain, bytes]:
        """The receiving key of message `index` in `epoch` (jumping at most `max_jump`)."""
        position = self._position(epoch)
        params = self.params
        if max_jump is not None and max_jump < params.max_jump:
            params = replace(params, max_jump=max_jump)
        link = self.links[position]
        recv, key = link.recv.key(index, params)
        links = (*self.links[:position], ChainEpoch(link.send, recv), *self.links[position + 1 :])
        return self._with(self.send_epoch, links), key

    def _with(self, send_epoch: int, links: tuple[ChainEpoch, ...]) -> Chain:
        """This chain with new links; built directly, as it runs on every message."""
        return Chain(
            self.direction, self.current_epoch, send_epoch, links, self.next_root, self.params
        )

    def _position(self, epoch: int) -> int:
        back = self.current_epoch - epoch
        if back < 0 or back >= len(self.links):
            raise _error(f"epoch not in valid range: {epoch}")
        return len(self.links) - 1 - back
