"""Crypto figures of our Signal engine beside the reference peer (native libsignal).

Each operation is timed the same way on both sides, with the agent as the responder (what
Pacerelle's agents always are) and a native human device on the other end:
  bundle     what a bundle needs: identity, signed + Kyber prekeys with their signatures,
             one one-time prekey (native: a new store and generate_prekey_bundle)
  set-up     the agent decrypting the human's first PreKey message (PQXDH + first ratchet step)
  decrypt    the agent decrypting a steady SignalMessage
  encrypt    the agent encrypting a steady message
  ping-pong  agent encrypt, human decrypt, human encrypt, agent decrypt
Times are CPU time of the calling thread (`CLOCK`), which on an idle machine equals wall
time and on a busy one leaves out other processes' turns. Targets: ours within `MAX_RATIO`
of native on every row, no single call of ours (SPQR epoch steps included) above
`MAX_CALL_MS`. The "constant-time" column says whether the work that depends on secrets
runs in native constant-time code. Also: a whole new agent (50 one-time prekeys), and the
JSON size of one session after the run.
"""

import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from custom_components.pacerelle.client.signal.engine import decrypt, encrypt
from custom_components.pacerelle.client.signal.prekeys import ONE_TIME_PREKEY_TARGET, PreKeys
from custom_components.pacerelle.client.signal.session import PeerAddress
from custom_components.pacerelle.client.signal.session_json import record_to_json
from custom_components.pacerelle.client.signal.state import AgentSignalState
from tests.client.signal.interop import native_bundle
from tests.helpers.reference_peer import ReferencePeer

AGENT = "agent:bench"
PEER = PeerAddress("user", "conversation", 1)
# CPU time of this thread (the native library runs in it too, through ctypes): on a busy
# machine, other processes preempting ours would otherwise land in whichever side runs longer.
CLOCK = time.thread_time
OPERATIONS = ("bundle", "set-up", "decrypt", "encrypt", "ping-pong")
MAX_RATIO = 3.0
MAX_CALL_MS = 25.0
SPQR_NOTE = "(a)"
CONSTANT_TIME = {
    "bundle": "yes",
    "set-up": "yes",
    "decrypt": f"yes {SPQR_NOTE}",
    "encrypt": f"yes {SPQR_NOTE}",
    "ping-pong": f"yes {SPQR_NOTE}",
}
NOTES = (
    "constant-time: X25519 and XEdDSA (libsodium), ML-KEM-1024 Kyber prekeys and AES (OpenSSL), "
    "HMAC and HKDF",
    "    (CPython's HACL*, else OpenSSL) run natively;",
    f"{SPQR_NOTE} except SPQR's split ML-KEM-768 encapsulation at an epoch step (Python, with "
    "fresh randomness used once,",
    "    no long-term secret); Kyber prekeys from stores older than the native code "
    "decapsulate in Python until they rotate out",
)


@dataclass
class Timings:
    """Samples in seconds per operation, and the slowest single call of ours."""

    ours: dict[str, list[float]] = field(default_factory=dict)
    native: dict[str, list[float]] = field(default_factory=dict)
    new_agent: list[float] = field(default_factory=list)
    slowest: float = 0.0
    slowest_call: str = ""

    def call(self, name: str, seconds: float) -> None:
        """Note one call of ours, for the slowest one."""
        if seconds > self.slowest:
            self.slowest, self.slowest_call = seconds, name

    def add(self, side: dict[str, list[float]], name: str, seconds: float) -> None:
        side.setdefault(name, []).append(seconds)


def timed[T](call: Callable[[], T]) -> tuple[T, float]:
    start = CLOCK()
    result = call()
    return result, CLOCK() - start


def _ours_conversation(timings: Timings, rounds: int) -> int:
    """Our agent against a native human; returns the JSON size of the session at the end."""
    state, seconds = timed(AgentSignalState.new)
    timings.new_agent.append(seconds)
    timings.call("new agent", seconds)
    human = ReferencePeer("human:bench:ours")
    one_time = state.prekeys.one_time_prekeys[0].prekey_id
    human.process_prekey_bundle(AGENT, native_bundle(state.prekeys, one_time))
    first = human.encrypt(AGENT, b"hello")
    (state, _), seconds = timed(lambda: decrypt(state, PEER, first))
    timings.add(timings.ours, "set-up", seconds)
    timings.call("set-up", seconds)
    for _ in range(rounds):
        start = CLOCK()
        state, frame = encrypt(state, PEER, b"agent says hi")
        encrypted = CLOCK()
        human.decrypt(AGENT, frame)
        frame = human.encrypt(AGENT, b"human says hi")
        received = CLOCK()
        state, _ = decrypt(state, PEER, frame)
        end = CLOCK()
        timings.add(timings.ours, "encrypt", encrypted - start)
        timings.add(timings.ours, "decrypt", end - received)
        timings.add(timings.ours, "ping-pong", end - start)
        timings.call("encrypt", encrypted - start)
        timings.call("decrypt", end - received)
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
        start = CLOCK()
        frame = agent.encrypt("human", b"agent says hi")
        encrypted = CLOCK()
        human.decrypt(AGENT, frame)
        frame = human.encrypt(AGENT, b"human says hi")
        received = CLOCK()
        agent.decrypt("human", frame)
        end = CLOCK()
        timings.add(timings.native, "encrypt", encrypted - start)
        timings.add(timings.native, "decrypt", end - received)
        timings.add(timings.native, "ping-pong", end - start)
    agent.close()
    human.close()


def _bundle_only(timings: Timings, count: int) -> None:
    for _ in range(count):
        _, seconds = timed(lambda: PreKeys.create(int(time.time()), one_time_prekeys=1))
        timings.add(timings.ours, "bundle", seconds)
        timings.call("bundle", seconds)


def run(conversations: int = 10, rounds: int = 100) -> list[str]:
    """Run the measurements; returns the lines to print."""
    timings = Timings()
    sizes = []
    for _ in range(conversations):  # interleaved, so that a busy machine slows both sides
        sizes.append(_ours_conversation(timings, rounds))
        _native_conversation(timings, rounds)
        _bundle_only(timings, 1)
    lines = [
        f"crypto: {conversations} conversations x {rounds} ping-pong rounds, medians",
        f"{'operation':<10} {'ours ms':>9} {'native ms':>10} {'ratio':>7} {'target':>7}"
        "  constant-time",
    ]
    for name in OPERATIONS:
        ours = statistics.median(timings.ours[name]) * 1000
        native = statistics.median(timings.native[name]) * 1000
        lines.append(
            f"{name:<10} {ours:>9.3f} {native:>10.4f} {ours / native:>6.1f}x "
            f"{f'<= {MAX_RATIO:g}x':>7}  {CONSTANT_TIME[name]}"
        )
    lines.extend(NOTES)
    lines.append(
        f"slowest single call of ours: {timings.slowest * 1000:.1f} ms, {timings.slowest_call} "
        f"(target < {MAX_CALL_MS:g})"
    )
    lines.append(
        f"new agent (bundle + {ONE_TIME_PREKEY_TARGET} one-time prekeys): median "
        f"{statistics.median(timings.new_agent) * 1000:.2f} ms"
    )
    lines.append(
        f"session JSON after {rounds} rounds: median {statistics.median(sizes)} bytes, "
        f"max {max(sizes)} bytes (target < 32768)"
    )
    return lines
