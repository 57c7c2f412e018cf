"""The Double Ratchet's state and steps, as libsignal's double_ratchet.rs runs them.

The state is immutable: every step returns a new state and shares what did not change, so a
failed decryption simply drops the new state. Receiving chains are kept oldest first (at most
MAX_RECEIVER_CHAINS); a chain's skipped message keys are kept as seeds, newest first (at most
MAX_MESSAGE_KEYS), because SPQR's key for that message is only known when it arrives.
"""

from collections.abc import Callable
from dataclasses import dataclass

from . import curve
from .consts import KEY_LENGTH, MAX_FORWARD_JUMPS, MAX_MESSAGE_KEYS, MAX_RECEIVER_CHAINS
from .errors import SignalError, SignalErrorKind
from .ratchet_keys import ChainKey, RootKey

type Random = Callable[[int], bytes]


@dataclass(frozen=True, slots=True)
class SkippedKey:
    """The seed of a message key derived ahead of its message."""

    counter: int
    seed: bytes


@dataclass(frozen=True, slots=True)
class ReceiverChain:
    """A chain opened by one of the peer's ratchet keys."""

    ratchet_key: bytes
    chain_key: ChainKey
    skipped: tuple[SkippedKey, ...] = ()


@dataclass(frozen=True, slots=True)
class SenderChain:
    """Our current ratchet key pair and the chain key of our next message."""

    ratchet_private: bytes
    ratchet_public: bytes
    chain_key: ChainKey


@dataclass(frozen=True, slots=True)
class RatchetState:
    """Root key, sending chain, receiving chains and the length of our previous chain."""

    root_key: RootKey
    sender_chain: SenderChain
    receiver_chains: tuple[ReceiverChain, ...]
    previous_counter: int

    def advance_sender(self) -> RatchetState:
        """The state after we sent a message on the current sending chain."""
        # Built directly: dataclasses.replace costs more than the HMAC of the step.
        chain = self.sender_chain
        sender = SenderChain(chain.ratchet_private, chain.ratchet_public, chain.chain_key.next())
        return RatchetState(self.root_key, sender, self.receiver_chains, self.previous_counter)


@dataclass(frozen=True, slots=True)
class ReceivedKey:
    """A message key seed taken from the ratchet, with the state that no longer holds it."""

    state: RatchetState
    seed: bytes
    counter: int


def _find_chain(state: RatchetState, ratchet_key: bytes) -> int | None:
    for index, chain in enumerate(state.receiver_chains):
        if chain.ratchet_key == ratchet_key:
            return index
    return None


def _dh_ratchet_step(state: RatchetState, their_key: bytes, random: Random) -> RatchetState:
    """Open a receiving chain for a new ratchet key of the peer, and a new sending chain."""
    shared = curve.agree(state.sender_chain.ratchet_private, their_key[1:])
    root, receiver_chain_key = state.root_key.create_chain(shared)
    ours = curve.KeyPair.from_private(random(KEY_LENGTH))
    final_root, sender_chain_key = root.create_chain(curve.agree(ours.private, their_key[1:]))
    chains = (*state.receiver_chains, ReceiverChain(their_key, receiver_chain_key))
    return RatchetState(
        root_key=final_root,
        sender_chain=SenderChain(
            ours.private, curve.serialize_public(ours.public), sender_chain_key
        ),
        receiver_chains=chains[-MAX_RECEIVER_CHAINS:],
        previous_counter=max(state.sender_chain.chain_key.index - 1, 0),
    )


def receive_key(
    state: RatchetState,
    their_key: bytes,
    counter: int,
    random: Random,
    max_forward_jumps: int = MAX_FORWARD_JUMPS,
) -> ReceivedKey:
    """The message key seed for (their ratchet key, counter), consumed from a new state.

    A past counter takes its skipped key, once (else DUPLICATE_MESSAGE); a future one derives
    and keeps the keys it skips, at most `max_forward_jumps` of them.
    """
    position = _find_chain(state, their_key)
    if position is None:
        state = _dh_ratchet_step(state, their_key, random)
        position = len(state.receiver_chains) - 1
    chain = state.receiver_chains[position]
    chain_key = chain.chain_key
    if counter < chain_key.index:
        for at, kept in enumerate(chain.skipped):
            if kept.counter == counter:
                remaining = chain.skipped[:at] + chain.skipped[at + 1 :]
                new_chain = ReceiverChain(chain.ratchet_key, chain_key, remaining)
                return ReceivedKey(_with_chain(state, position, new_chain), kept.seed, counter)
        raise SignalError(
            SignalErrorKind.DUPLICATE_MESSAGE,
            f"message {counter} of this chain was already received (chain at {chain_key.index})",
        )
    if counter - chain_key.index > max_forward_jumps:
        raise SignalError(
            SignalErrorKind.LIMIT_EXCEEDED,
            f"message {counter} jumps more than {max_forward_jumps} ahead of {chain_key.index}",
        )
    # Only the newest MAX_MESSAGE_KEYS skipped keys are kept: older steps need no message seed.
    keep_from = counter - MAX_MESSAGE_KEYS
    newly_skipped: list[SkippedKey] = []
    while chain_key.index < counter:
        if chain_key.index >= keep_from:
            newly_skipped.append(SkippedKey(chain_key.index, chain_key.message_seed()))
        chain_key = chain_key.next()
    newly_skipped.reverse()
    skipped = (*newly_skipped, *chain.skipped)[:MAX_MESSAGE_KEYS]
    new_chain = ReceiverChain(chain.ratchet_key, chain_key.next(), skipped)
    return ReceivedKey(_with_chain(state, position, new_chain), chain_key.message_seed(), counter)


def _with_chain(state: RatchetState, position: int, chain: ReceiverChain) -> RatchetState:
    chains = (*state.receiver_chains[:position], chain, *state.receiver_chains[position + 1 :])
    return RatchetState(state.root_key, state.sender_chain, chains, state.previous_counter)
