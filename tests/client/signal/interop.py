"""Interop driver: our engine as the agent, native libsignal peers as the humans' devices.

Random conversations (reproducible schedule from --seed): each has one human with one to
three devices; every device fetches the agent's bundle and speaks first, then the schedule
mixes ping-pong, bursts of up to 50 messages one way delivered in shuffled order, some of a
human's messages held back until after the next event, agent state saved to JSON and
reloaded (also in the middle of a burst), native stores exported and re-imported, and
devices that start a fresh session from a new bundle (late messages of the old session must
still decrypt), and rotations of the signed/Kyber prekey pair (the old pair stays in grace).
Every message must decrypt on the other side to the plaintext that was sent.

With --legacy-prekeys the agent starts from an old store (tests/client/signal/data/
legacy_prekeys.json, made by the pure-Python Kyber and XEdDSA code before the native one):
sessions start on its round 3 prekeys until rotations bring natively made ones.

    python -m tests.client.signal.interop --seed 1 --conversations 5 --messages 200

prints `interop: X/Y messages ok` last and exits 1 on any failure.
"""

import argparse
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from custom_components.pacerelle.client.signal.curve import serialize_public
from custom_components.pacerelle.client.signal.engine import decrypt, encrypt
from custom_components.pacerelle.client.signal.errors import SignalError
from custom_components.pacerelle.client.signal.kem import kyber1024, serialize_kyber_public
from custom_components.pacerelle.client.signal.prekeys import PreKeys
from custom_components.pacerelle.client.signal.session import PeerAddress
from custom_components.pacerelle.client.signal.state import AgentSignalState
from tests.helpers.reference_peer import ReferenceBundle, ReferencePeer, ReferencePeerError

AGENT_NAME = "agent:interop"
MAX_BURST = 50
MAX_DEVICES = 3
LEGACY_PREKEYS = Path(__file__).parent / "data" / "legacy_prekeys.json"
ROTATION_STEP = 3600  # the agent's clock per rotation: no pair leaves its grace in a run


@dataclass
class Device:
    """One human device: a native store and our address for it."""

    peer: ReferencePeer
    address: PeerAddress
    spoke: bool = False


@dataclass
class Tally:
    """Messages attempted and failures, with the first few failures described."""

    total: int = 0
    failures: list[str] = field(default_factory=list)
    events: Counter[str] = field(default_factory=Counter)

    @property
    def ok(self) -> int:
        return self.total - len(self.failures)


class Agent:
    """Our engine's state plus the bookkeeping a server would do (handing out prekeys)."""

    def __init__(self, *, legacy_prekeys: bool = False) -> None:
        if legacy_prekeys:
            prekeys = PreKeys.from_json(json.loads(LEGACY_PREKEYS.read_text()))
            self.state = AgentSignalState.new().with_prekeys(prekeys)
        else:
            self.state = AgentSignalState.new()
        self.now = self.state.prekeys.signed_prekey.created_at
        self.handed_out: set[int] = set()

    @property
    def legacy_kyber_prekey(self) -> bool:
        """Whether the published Kyber prekey is a round 3 one of the pure-Python code."""
        return len(self.state.prekeys.kyber_prekey.secret) == kyber1024.SECRET_KEY_SIZE

    def rotate(self) -> None:
        """A new signed/Kyber pair (made natively); the current one is retired into grace."""
        self.now += ROTATION_STEP
        self.state = self.state.with_prekeys(self.state.prekeys.rotate(self.now))

    def bundle(self) -> ReferenceBundle:
        """A bundle with a one-time prekey nobody fetched yet (replenished when low)."""
        prekeys = self.state.prekeys
        fresh = [p for p in prekeys.one_time_prekeys if p.prekey_id not in self.handed_out]
        if not fresh:
            prekeys = prekeys.replenish_one_time_prekeys(len(prekeys.one_time_prekeys) + 10)[0]
            self.state = self.state.with_prekeys(prekeys)
            fresh = [p for p in prekeys.one_time_prekeys if p.prekey_id not in self.handed_out]
        one_time = fresh[0]
        self.handed_out.add(one_time.prekey_id)
        return native_bundle(prekeys, one_time.prekey_id)

    def reload(self) -> None:
        """Save the state to JSON text and read it back, as the runtime does across restarts."""
        text = json.dumps(self.state.to_json())
        self.state = AgentSignalState.from_json(json.loads(text))


def native_bundle(prekeys: PreKeys, one_time_id: int) -> ReferenceBundle:
    """Our published bundle in the native runtime's shape."""
    one_time = prekeys.one_time_prekey_by_id(one_time_id)
    return ReferenceBundle(
        registration_id=prekeys.registration_id,
        device_id=prekeys.device_id,
        prekey_id=one_time_id,
        prekey_public=serialize_public(one_time.key_pair.public),
        signed_prekey_id=prekeys.signed_prekey.prekey_id,
        signed_prekey_public=serialize_public(prekeys.signed_prekey.key_pair.public),
        signed_prekey_signature=prekeys.signed_prekey.signature,
        kyber_prekey_id=prekeys.kyber_prekey.prekey_id,
        kyber_prekey_public=serialize_kyber_public(prekeys.kyber_prekey.public),
        kyber_prekey_signature=prekeys.kyber_prekey.signature,
        identity_key=prekeys.identity_key,
    )


class Conversation:
    """One human (several devices) talking with the agent, driven by a seeded schedule."""

    def __init__(self, agent: Agent, rng: random.Random, index: int, tally: Tally) -> None:
        self.agent, self.rng, self.tally = agent, rng, tally
        user = f"user{index}"
        self.devices = [
            Device(ReferencePeer(f"human:{user}:{d}"), PeerAddress(user, f"conv{index}", d))
            for d in range(1, rng.randint(1, MAX_DEVICES) + 1)
        ]
        self.counter = 0
        self.held_back: list[tuple[Device, bytes, bytes]] = []
        for device in self.devices:
            self.fetch_bundle(device)

    def fetch_bundle(self, device: Device) -> None:
        """The device fetches the agent's current bundle (its next message starts a session)."""
        form = "legacy" if self.agent.legacy_kyber_prekey else "native"
        self.tally.events[f"bundles with {form} Kyber prekeys"] += 1
        device.peer.process_prekey_bundle(AGENT_NAME, self.agent.bundle())

    def _plaintext(self, direction: str) -> bytes:
        self.counter += 1
        padding = self.rng.randbytes(self.rng.choice((0, 1, 15, 16, 17, 200)))
        return f"{direction} #{self.counter} ".encode() + padding

    def _deliver(
        self, frames: list[tuple[bytes, bytes]], receive: Callable[[bytes], bytes]
    ) -> None:
        order = list(frames)
        if len(order) > 1 and self.rng.random() < 0.5:
            self.rng.shuffle(order)
        for frame, expected in order:
            self.tally.total += 1
            try:
                got = receive(frame)
            except (SignalError, ReferencePeerError) as error:
                self.tally.failures.append(f"{expected[:20]!r}: {error}")
                continue
            if got != expected:
                self.tally.failures.append(f"{expected[:20]!r}: got {got[:20]!r}")

    def human_burst(self, device: Device, count: int) -> None:
        frames = []
        for _ in range(count):
            plaintext = self._plaintext(f"h{device.address.device_id}")
            frame = device.peer.encrypt(AGENT_NAME, plaintext)
            self.tally.events["PreKey messages" if frame[0] == 1 else "human messages"] += 1
            frames.append((frame, plaintext))
        device.spoke = True
        if len(frames) > 1 and self.rng.random() < 0.2:
            for _ in range(self.rng.randint(1, len(frames) - 1)):
                frame, plaintext = frames.pop(self.rng.randrange(len(frames)))
                self.held_back.append((device, frame, plaintext))
        self._deliver(frames, self._agent_receiver(device))

    def _agent_receiver(self, device: Device) -> Callable[[bytes], bytes]:
        def receive(frame: bytes) -> bytes:
            self.agent.state, plaintext = decrypt(self.agent.state, device.address, frame)
            return plaintext

        return receive

    def deliver_held_back(self) -> None:
        """Deliver what was held back: late messages, in random order."""
        held, self.held_back = self.held_back, []
        self.rng.shuffle(held)
        self.tally.events["late messages"] += len(held)
        for device, frame, plaintext in held:
            self._deliver([(frame, plaintext)], self._agent_receiver(device))

    def agent_burst(self, device: Device, count: int) -> None:
        frames = []
        for _ in range(count):
            plaintext = self._plaintext("agent")
            self.agent.state, frame = encrypt(self.agent.state, device.address, plaintext)
            self.tally.events["agent messages"] += 1
            frames.append((frame, plaintext))
        self._deliver(frames, lambda frame: device.peer.decrypt(AGENT_NAME, frame))

    def step(self, budget: int) -> int:
        """One scheduled event; returns how many messages it sent."""
        held_before = bool(self.held_back)
        sent = self._event(budget)
        if held_before:
            self.deliver_held_back()
        return sent

    def _event(self, budget: int) -> int:
        rng = self.rng
        device = rng.choice(self.devices)
        roll = rng.random()
        if roll < 0.04:
            self.agent.reload()
            self.tally.events["state reloads"] += 1
            return 0
        if roll < 0.06:
            snapshot = device.peer.export()
            device.peer = ReferencePeer.from_snapshot(device.peer.name, snapshot)
            self.tally.events["native reloads"] += 1
            return 0
        if roll < 0.09 and device.spoke:
            self.fetch_bundle(device)
            self.tally.events["new sessions"] += 1
            return 0
        if roll < 0.11:
            self.agent.rotate()
            self.tally.events["prekey rotations"] += 1
            return 0
        count = min(budget, rng.randint(1, MAX_BURST) if roll < 0.35 else 1)
        if not device.spoke or rng.random() < 0.5:
            self.human_burst(device, count)
        else:
            self.agent_burst(device, count)
        return count

    def run(self, messages: int) -> None:
        sent = 0
        while sent < messages:
            sent += self.step(messages - sent)
        self.deliver_held_back()


def run(seed: int, conversations: int, messages: int, *, legacy_prekeys: bool = False) -> Tally:
    """Run the schedule; every conversation sends `messages` messages in all."""
    rng = random.Random(seed)
    agent, tally = Agent(legacy_prekeys=legacy_prekeys), Tally()
    for index in range(conversations):
        Conversation(agent, rng, index, tally).run(messages)
    return tally


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--conversations", type=int, default=3)
    parser.add_argument("--messages", type=int, default=100, help="messages per conversation")
    parser.add_argument(
        "--legacy-prekeys", action="store_true", help="start from an old store's prekeys"
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    tally = run(args.seed, args.conversations, args.messages, legacy_prekeys=args.legacy_prekeys)
    for failure in tally.failures[:10]:
        print(f"FAILED {failure}")
    events = ", ".join(f"{count} {name}" for name, count in sorted(tally.events.items()))
    print(f"interop: seed {args.seed}, {time.perf_counter() - started:.1f} s; {events}")
    print(f"interop: {tally.ok}/{tally.total} messages ok")
    return 0 if tally.total and not tally.failures else 1


if __name__ == "__main__":
    sys.exit(main())
