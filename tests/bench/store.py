"""Store figures: the whole-document `.enc` store beside the per-record SQLite store.

Per state (tests/helpers/store_states.py: empty, typical, busy, large, cap) and per operation, the
commit the runtime makes: an incoming message (its session advanced, a receipt, a pending
request and its history entry), a send (the session advanced, a reply) and mark_processed
(the pending request gone, its history entry updated). Each is the bounds (store_bounds.py)
and the save, as AgentCore.commit runs them; CPU time of this process (all threads) and
bytes handed to write(2) (/proc/self/io wchar: the files, WAL included). The store is
measured as a start finds it (built, closed, loaded again, its first commit made), then
ROUNDS commits of each kind for the .enc store (medians) and NEW_ROUNDS for the per-record
one: medians, and means, which hold what comes once in many commits (SQLite's WAL
checkpoints, an eviction), per operation. Then the per-record store's CPU per commit at the
cap against empty (the target: within 2x), twice: from the table, and from the two stores
open side by side, their commits alternating (INTERLEAVED rounds of each operation), so a
machine that slows down or speeds up during the run weighs on both alike.
Start-up: reading and parsing the store into AgentData; RSS after it. Last, the hand-over
marks file beside the store (store/handed_over.py), both windows full: what one more
hand-over costs on the loop (a mark stored into the mapping) and at the sync (its msync).
The wall time of the commit a message waits for on each path (incoming: the relay's frame
to the event; send: send_message to the relay), empty against the cap, with the fsyncs
and fdatasyncs behind it (counted by an LD_PRELOAD shim, fsyncs.py): the store's share of
the two latencies, so a slow disk can be judged from a fast one's fsync count and time.
Then the two latencies themselves, with real hass and emulator processes, a fresh agent
beside one at the cap (felt_latency.py): p50 and p95, the ratio, hass's CPU per message.
"""

import gc
import logging
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from custom_components.pacerelle.client.limits import MAX_HANDED_OVER
from custom_components.pacerelle.client.signal.state import AgentSignalState
from custom_components.pacerelle.client.state.encrypted_file import EncryptedFile
from custom_components.pacerelle.client.state.handed_over_file import HandedOverFile
from custom_components.pacerelle.client.state.record_store import RecordStore
from custom_components.pacerelle.client.state.versions import migrate
from custom_components.pacerelle.client.store_bounds import within_bounds
from custom_components.pacerelle.client.stored_sizes import StoredSizes
from custom_components.pacerelle.client.values.agent_data import AgentData
from custom_components.pacerelle.client.values.handed_over import HandedOver
from custom_components.pacerelle.client.values.history import Reply
from tests.bench import felt_latency, fsyncs
from tests.helpers.store_states import SHAPES, grown, model_session, request

ROUNDS = 3
NEW_ROUNDS = 150
INTERLEAVED = 300
EXTRA = {"installation": {"token": "pit_bench"}, "version": 2, "generation": 1}
KIB = 1024


def _written() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    return 0


def _rss_mib() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * 4096 / (KIB * KIB)


def _advanced(data: AgentData, number: int) -> AgentData:
    """The data after one message in a session (a new current state, its last use)."""
    signal = data.signal
    names = list(signal.sessions)
    if not names:
        return data
    name = names[number % len(names)]
    record = signal.sessions[name]
    assert record.current is not None
    sessions = {**signal.sessions, name: replace(record, current=replace(record.current))}
    last_used = {**signal.last_used, name: 2e9 + number}
    return replace(
        data,
        signal=AgentSignalState(
            signal.prekeys,
            MappingProxyType(sessions),
            signal.base_keys_seen,
            MappingProxyType(last_used),
        ),
    )


def _incoming(data: AgentData, number: int) -> AgentData:
    data = _advanced(data, number)
    new = request(1_000_000 + number, 100)
    inbox = data.inbox.with_received("d" * 64, new).accept([new.message_id])
    return replace(data, inbox=inbox, history=data.history.with_request(new))


def _send(data: AgentData, number: int) -> AgentData:
    data = _advanced(data, number)
    reply = Reply(f"out_{number}", "cnv_0", "usr_0", None, "text", "ok", None, None, 3e9)
    return replace(data, history=data.history.with_reply(reply))


def _processed(data: AgentData, number: int) -> AgentData:
    message_id = f"msg_{1_000_000 + number}"
    return replace(
        data,
        inbox=data.inbox.processed(message_id),
        history=data.history.with_processed(message_id, 4e9, None),
    )


OPERATIONS: dict[str, Callable[[AgentData, int], AgentData]] = {
    "incoming": _incoming,
    "send": _send,
    "processed": _processed,
}


class _Old:
    def __init__(self, directory: Path) -> None:
        self.file = EncryptedFile(directory, "agt_bench")
        self.sizes = StoredSizes()

    def setup(self, data: AgentData) -> None:
        self.file.create({**EXTRA, **data.sections()})

    def commit(self, data: AgentData) -> AgentData:
        data = within_bounds(data, self.sizes)
        self.file.write({**EXTRA, **data.sections()})
        return data

    def start(self) -> AgentData | None:
        self.sizes = StoredSizes()
        return AgentData.from_document(migrate(self.file.read()))


class _New:
    def __init__(self, directory: Path) -> None:
        self.store = RecordStore(directory, "agt_bench")
        self.sizes = StoredSizes()

    def setup(self, data: AgentData) -> None:
        self.store.create(EXTRA)
        self.store.load(migrate)
        self.store.commit(EXTRA, data)

    def commit(self, data: AgentData) -> AgentData:
        data = within_bounds(data, self.sizes)
        self.store.commit(EXTRA, data)
        return data

    def start(self) -> AgentData | None:
        self.store.close()
        self.store = RecordStore(self.store.file.directory, "agt_bench")
        self.sizes = StoredSizes()
        return self.store.load(migrate)[1]


def _measure(kind: type[_Old] | type[_New], data: AgentData) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    rounds = NEW_ROUNDS if kind is _New else ROUNDS
    with tempfile.TemporaryDirectory() as directory:
        store = kind(Path(directory))
        store.setup(data)
        started = store.start()  # as a start finds it: no WAL left from the build
        assert started is not None
        data = store.commit(started)
        for name, operation in OPERATIONS.items():
            cpu, written, wall = [], [], []
            syncs_before = fsyncs.counters()
            for number in range(rounds):
                data_next = operation(data, number)
                started_cpu, before = time.process_time(), _written()
                started_wall = time.perf_counter()
                data = store.commit(data_next)
                wall.append(time.perf_counter() - started_wall)
                cpu.append(time.process_time() - started_cpu)
                written.append(_written() - before)
            figures[name] = (
                statistics.median(cpu) * 1000,
                statistics.median(written) / KIB,
                statistics.mean(cpu) * 1000,
                statistics.mean(written) / KIB,
            )
            syncs_after = fsyncs.counters()
            syncs = (
                (
                    (syncs_after[0] - syncs_before[0]) / rounds,
                    (syncs_after[1] - syncs_before[1]) * 1000 / rounds,
                )
                if syncs_before is not None and syncs_after is not None
                else None
            )
            figures[f"{name} wall"] = (
                statistics.median(wall) * 1000,
                statistics.quantiles(wall, n=20)[-1] * 1000,
                statistics.mean(wall) * 1000,
                syncs,
            )
        files = sum(p.stat().st_size for p in Path(directory).iterdir())
        del data
        gc.collect()
        rss = _rss_mib()
        started_wall = time.perf_counter()
        loaded = store.start()
        figures["start"] = time.perf_counter() - started_wall
        figures["rss"] = _rss_mib() - rss
        figures["size"] = files / KIB / KIB
        del loaded
        if isinstance(store, _New):
            store.store.close()
    gc.collect()
    return figures


def run() -> list[str]:
    fsyncs.preload()
    # The evictions at the caps log a line each, as in use; formatted, and written to
    # /dev/null rather than between the figures.
    handler = logging.StreamHandler(open(os.devnull, "w"))  # noqa: SIM115
    handler.setFormatter(
        logging.Formatter("%(asctime)s %(levelname)s (%(threadName)s) [%(name)s] %(message)s")
    )
    logging.getLogger("custom_components.pacerelle").addHandler(handler)
    logging.getLogger("custom_components.pacerelle").propagate = False
    base, model = model_session()
    lines = [
        f"store: per commit, CPU ms / KiB written, medians of {ROUNDS} (old) and of "
        f"{NEW_ROUNDS} (new; means in brackets); start-up s; RSS MiB after it",
        "| state | store | MB | incoming | send | mark_processed | start-up | RSS |",
        "|---|---|---|---|---|---|---|---|",
    ]
    new: dict[str, dict[str, Any]] = {}
    for state, shape in SHAPES.items():
        data = grown(base, model, shape)
        for label, kind in (("old .enc", _Old), ("new rows", _New)):
            f = _measure(kind, data)
            if kind is _New:
                new[state] = f
                cells = [
                    f"{f[op][0]:.2f} ({f[op][2]:.2f}) ms / {f[op][1]:.0f} ({f[op][3]:.0f}) KiB"
                    for op in OPERATIONS
                ]
            else:
                cells = [f"{f[op][0]:.1f} ms / {f[op][1]:.0f} KiB" for op in OPERATIONS]
            lines.append(
                f"| {state} | {label} | {f['size']:.1f} | {' | '.join(cells)} | "
                f"{f['start']:.2f} | {f['rss']:+.0f} |"
            )
        del data
        gc.collect()
    ratios = [
        f"{op} {new['cap'][op][0] / new['empty'][op][0]:.1f}x "
        f"(means {new['cap'][op][2] / new['empty'][op][2]:.1f}x)"
        for op in OPERATIONS
    ]
    lines.append("new rows, CPU per commit at the cap against empty: " + ", ".join(ratios))
    lines.extend(_latency_lines(new))
    empty, cap = grown(base, model, SHAPES["empty"]), grown(base, model, SHAPES["cap"])
    lines.append(
        f"the same, the two stores' commits alternating ({INTERLEAVED} of each, medians): "
        + _interleaved(empty, cap)
    )
    return [*lines, _marks_line(), *felt_latency.run()]


def _latency_lines(new: dict[str, dict[str, Any]]) -> list[str]:
    """The wall time of the commit each path waits for (a frame to its event: incoming; a
    send to the relay: send), fresh against the cap, and the fsyncs behind it."""
    lines = [
        f"new rows, the commit on each path, wall ms (median, p95, mean of {NEW_ROUNDS}); "
        "fsyncs per commit and their ms (mean):",
        "| path | state | median | p95 | mean | fsyncs | fsync ms |",
        "|---|---|---|---|---|---|---|",
    ]
    paths = {"incoming": "frame to event", "send": "send_message to relay"}
    for op, path in paths.items():
        for state in ("empty", "cap"):
            median, p95, mean, syncs = new[state][f"{op} wall"]
            count, spent = (f"{syncs[0]:.2f}", f"{syncs[1]:.2f}") if syncs else ("n/a", "n/a")
            lines.append(
                f"| {path} ({op}) | {state} | {median:.2f} | {p95:.2f} | {mean:.2f} | "
                f"{count} | {spent} |"
            )
    ratios = [
        f"{paths[op]} {new['cap'][f'{op} wall'][0] / new['empty'][f'{op} wall'][0]:.2f}x "
        f"(means {new['cap'][f'{op} wall'][2] / new['empty'][f'{op} wall'][2]:.2f}x)"
        for op in paths
    ]
    lines.append("new rows, commit wall time at the cap against empty: " + ", ".join(ratios))
    return lines


def _interleaved(empty: AgentData, cap: AgentData) -> str:
    ratios = []
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as other:
        stores = [_New(Path(one)), _New(Path(other))]
        datas = []
        for store, data in zip(stores, (empty, cap), strict=True):
            store.setup(data)
            started = store.start()
            assert started is not None
            datas.append(store.commit(started))
        for name, operation in OPERATIONS.items():
            cpu: list[list[float]] = [[], []]
            for number in range(INTERLEAVED):
                for index, store in enumerate(stores):
                    data_next = operation(datas[index], number)
                    started_cpu = time.process_time()
                    datas[index] = store.commit(data_next)
                    cpu[index].append(time.process_time() - started_cpu)
            low, high = statistics.median(cpu[0]), statistics.median(cpu[1])
            ratios.append(f"{name} {high / low:.1f}x ({low * 1000:.2f} / {high * 1000:.2f} ms)")
        for store in stores:
            store.store.close()
    return ", ".join(ratios)


def _marks_line() -> str:
    """The marks file at its bounds: CPU of one more (trusted) hand-over's mark, on the loop
    (stores into the mapping), and of the msync that makes it survive a power cut."""
    marks = [f"{n:032x}" for n in range(MAX_HANDED_OVER)]
    kept = HandedOver().with_marks(marks, trusted=marks)
    with tempfile.TemporaryDirectory() as directory:
        file = HandedOverFile(Path(directory), "bench")
        file.write(kept.to_json())
        size = Path(file.path).stat().st_size / KIB
        appends, syncs = [], []
        for number in range(ROUNDS):
            mark = f"{10**12 + number:032x}"
            started = time.perf_counter()
            file.append(mark, trusted=True)
            appended = time.perf_counter()
            file.sync_pending()
            appends.append(appended - started)
            syncs.append(time.perf_counter() - appended)
        file.close()
    return (
        f"hand-over marks file, both windows full ({size:.0f} KiB): one mark "
        f"{statistics.median(appends) * 1e6:.1f} µs on the loop, its msync "
        f"{statistics.median(syncs) * 1000:.1f} ms (the pages it dirtied)"
    )
