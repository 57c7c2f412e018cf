"""Crypto figures of our Signal engine beside the reference peer (native libsignal).

Each operation is timed the same way on both sides, with the agent as the responder (what
Pacerelle's agents always are) and a native human device on the other end:
  bundle     identity, signed + Kyber prekeys (and 50 one-time prekeys for ours)
  set-up     the agent decrypting the human's first PreKey message (PQXDH + first ratchet step)
  decrypt    the agent decrypting a steady SignalMessage
  encrypt    the agent encrypting a steady message
  ping-pong  agent encrypt, human decrypt, human encrypt, agent decrypt
Also: the slowest single call of ours seen anywhere (SPQR epoch steps included), and the JSON
size of one session after the run.
"""

import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from custom_components.pacerelle.client.signal.engine import decrypt, encrypt
from custom_components.pacerelle.client.signal.prekeys import PreKeys
from custom_components.pacerelle.client.signal.session import PeerAddress
from custom_components.pacerelle.client.signal.session_json import record_to_json
from custom_components.pacerelle.client.signal.state import AgentSignalState
from tests.reference_peer import ReferencePeer
from tests.signal.interop import native_bundle

AGENT = "agent:bench"
PEER = PeerAddress("user", "conversation", 1)
TARGETS_MS = {"set-up": 60.0, "decrypt": 2.0, "encrypt": 2.0, "ping-pong": 30.0}
MAX_CALL_MS = 100.0


@dataclass
class Timings:
    """Samples in seconds per operation, and the slowest single call of ours."""

    ours: dict[str, list[float]] = field(default_factory=dict)
    native: dict[str, list[float]] = field(default_factory=dict)
    slowest: float = 0.0

    def add(self, side: dict[str, list[float]], name: str, seconds: float) -> None:
        side.setdefault(name, []).append(seconds)


def timed[T](call: Callable[[], T]) -> tuple[T, float]:
    start = time.perf_counter()
    result = call()
    return result, time.perf_counter() - start


def _ours_conversation(timings: Timings, rounds: int) -> int:
    """Our agent against a native human; returns the JSON size of the session at the end."""
    state, seconds = timed(AgentSignalState.new)
    timings.add(timings.ours, "bundle", seconds)
    timings.slowest = max(timings.slowest, seconds)
    human = ReferencePeer("human:bench:ours")
    one_time = state.prekeys.one_time_prekeys[0].prekey_id
    human.process_prekey_bundle(AGENT, native_bundle(state.prekeys, one_time))
    first = human.encrypt(AGENT, b"hello")
    (state, _), seconds = timed(lambda: decrypt(state, PEER, first))
    timings.add(timings.ours, "set-up", seconds)
    timings.slowest = max(timings.slowest, seconds)
    for _ in range(rounds):
        start = time.perf_counter()
        state, frame = encrypt(state, PEER, b"agent says hi")
        encrypted = time.perf_counter()
        human.decrypt(AGENT, frame)
        frame = human.encrypt(AGENT, b"human says hi")
        received = time.perf_counter()
        state, _ = decrypt(state, PEER, frame)
        end = time.perf_counter()
        timings.add(timings.ours, "encrypt", encrypted - start)
        timings.add(timings.ours, "decrypt", end - received)
        timings.add(timings.ours, "ping-pong", end - start)
        timings.slowest = max(timings.slowest, encrypted - start, end - received)
    human.close()
    return len(json.dumps(record_to_json(state.record(PEER))))


def _native_conversation(timings: Timings, rounds: int) -> None:
    agent, seconds = timed(lambda: ReferencePeer(AGENT))
    bundle, more = timed(agent.generate_prekey_bundle)
    timings.add(timings.native, "bundle", seconds + more)
    human = ReferencePeer("human:bench:native")
    human.process_prekey_bundle(AGENT, bundle)
    first = human.encrypt(AGENT, b"hello")
    _, seconds = timed(lambda: agent.decrypt("human", first))
    timings.add(timings.native, "set-up", seconds)
    for _ in range(rounds):
        start = time.perf_counter()
        frame = agent.encrypt("human", b"agent says hi")
        encrypted = time.perf_counter()
        human.decrypt(AGENT, frame)
        frame = human.encrypt(AGENT, b"human says hi")
        received = time.perf_counter()
        agent.decrypt("human", frame)
        end = time.perf_counter()
        timings.add(timings.native, "encrypt", encrypted - start)
        timings.add(timings.native, "decrypt", end - received)
        timings.add(timings.native, "ping-pong", end - start)
    agent.close()
    human.close()


def _bundle_only(timings: Timings, count: int) -> None:
    for _ in range(count):
        _, seconds = timed(lambda: PreKeys.create(int(time.time())))
        timings.add(timings.ours, "bundle", seconds)
        timings.slowest = max(timings.slowest, seconds)


def run(conversations: int = 10, rounds: int = 100) -> list[str]:
    """Run the measurements; returns the lines to print."""
    timings = Timings()
    sizes = [_ours_conversation(timings, rounds) for _ in range(conversations)]
    for _ in range(conversations):
        _native_conversation(timings, rounds)
    _bundle_only(timings, conversations)
    lines = [
        f"crypto: {conversations} conversations x {rounds} ping-pong rounds, medians",
        f"{'operation':<10} {'ours ms':>9} {'native ms':>10} {'ratio':>7} {'target ms':>10}",
    ]
    for name in ("bundle", "set-up", "decrypt", "encrypt", "ping-pong"):
        ours = statistics.median(timings.ours[name]) * 1000
        native = statistics.median(timings.native[name]) * 1000
        target = TARGETS_MS.get(name)
        target_text = f"< {target:g}" if target else "-"
        lines.append(
            f"{name:<10} {ours:>9.3f} {native:>10.4f} {ours / native:>6.0f}x {target_text:>10}"
        )
    lines.append(
        f"slowest single call of ours: {timings.slowest * 1000:.1f} ms (target < {MAX_CALL_MS:g})"
    )
    lines.append(
        f"session JSON after {rounds} rounds: median {statistics.median(sizes)} bytes, "
        f"max {max(sizes)} bytes (target < 32768)"
    )
    return lines
