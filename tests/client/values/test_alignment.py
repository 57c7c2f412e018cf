"""The aligned diff (client/values/alignment.py): a commit that finds its changes by pointer
comparisons writes and measures exactly what a full walk would.

`align` is checked on its own (every record of the new list is accounted for, kept runs
really are the same), then through its two users, against the rule they replace: the
store's rows after any sequence of commits load back as the data committed, and the sizes
the bounds reuse are those a fresh measure gives.
"""

from dataclasses import replace
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from custom_components.pacerelle.client.limits import MAX_ALIGNED_CHANGES
from custom_components.pacerelle.client.signal.state import AgentSignalState
from custom_components.pacerelle.client.state.record_store import RecordStore
from custom_components.pacerelle.client.state.versions import migrate
from custom_components.pacerelle.client.stored_sizes import StoredSizes
from custom_components.pacerelle.client.values.agent_data import AgentData, Conversations
from custom_components.pacerelle.client.values.alignment import align
from custom_components.pacerelle.client.values.checkpoints import (
    Checkpoint,
    Checkpoints,
    CheckpointStatus,
)
from custom_components.pacerelle.client.values.history import HandledRequest, History
from custom_components.pacerelle.client.values.requests import Inbox, Request, stored_size
from tests.helpers.store_states import request

EXTRA = {"installation": {"token": "pit_aligned"}, "version": 2}

# One step of a commit on an ordered collection: what the runtime does to its mappings.
_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(1, 3)),
        st.tuples(st.just("drop"), st.integers(0, 40)),  # the record at that position
        st.tuples(st.just("drop_front"), st.integers(1, 6)),
        st.tuples(st.just("change"), st.integers(0, 40)),  # another object, same key
        st.tuples(st.just("move_last"), st.integers(0, 40)),  # a group key used
        st.tuples(st.just("insert"), st.integers(0, 40)),  # a new key between old ones
        st.just(("reverse", 0)),
    ),
    max_size=6,
)


class _Record:
    """A record compared by identity only (the rule align's ids give)."""

    def __init__(self, n: int) -> None:
        self.n = n


def _applied(
    old: dict[str, object], steps: list[tuple[str, int]], fresh: list[int]
) -> dict[str, object]:
    new = dict(old)

    def make() -> _Record:
        fresh[0] += 1
        return _Record(fresh[0])

    for step, n in steps:
        keys = list(new)
        if step == "append":
            for _ in range(n):
                value = make()
                new[f"msg_{fresh[0]}"] = value
        elif step == "drop_front":
            for key in keys[:n]:
                del new[key]
        elif step == "reverse":
            new = dict(reversed(new.items()))
        elif keys:
            key = keys[n % len(keys)]
            if step == "drop":
                del new[key]
            elif step == "change":
                new[key] = make()
            elif step == "move_last":
                new[key] = new.pop(key)
            elif step == "insert":
                value = make()
                items = list(new.items())
                index = n % len(items)
                new = dict([*items[:index], (f"msg_{fresh[0]}", value), *items[index:]])
    return new


def _listed(mapping: dict[str, object]) -> list[list[object]]:
    return [list(mapping), [id(value) for value in mapping.values()]]


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 30), _STEPS)
def test_an_alignment_accounts_for_every_record(size: int, steps: list[tuple[str, int]]) -> None:
    fresh = [size]
    old = {f"msg_{n}": _Record(n) for n in range(size)}
    new = _applied(old, steps, fresh)
    (old_keys, old_ids), (new_keys, new_ids) = _listed(old), _listed(new)
    found = align([old_keys, old_ids], [new_keys, new_ids])
    if found is None:
        assert len(steps) > 0  # only a commit of many changes is refused
        return
    pairs: list[tuple[int, int]] = []  # (new index, old index) of the records kept
    for i, j, n in found.kept:
        assert old_keys[i : i + n] == new_keys[j : j + n]
        assert old_ids[i : i + n] == new_ids[j : j + n]
        pairs += zip(range(j, j + n), range(i, i + n), strict=True)
    for i, j in found.changed:
        assert old_keys[i] == new_keys[j]
        assert old_ids[i] != new_ids[j]
        pairs.append((j, i))
    pairs.sort()
    gone = [i for start, end in found.gone for i in range(start, end)]
    assert sorted(gone + [i for _, i in pairs]) == list(range(len(old_keys)))  # each once
    assert [j for j, _ in pairs] == list(range(found.tail))  # every one before the tail
    assert [i for _, i in pairs] == sorted(i for _, i in pairs)  # in their old order
    # A key of the tail that was there before was taken from where it was (moved).
    assert all(key not in new_keys[: found.tail] for key in new_keys[found.tail :])
    if not steps:
        assert found.kept == ([(0, 0, size)] if size else [])
        assert found.tail == size


def test_many_changes_are_left_to_the_full_walk() -> None:
    old = {f"k{n}": _Record(n) for n in range(100)}
    new = {key: (_Record(-1) if n % 2 else value) for n, (key, value) in enumerate(old.items())}
    assert align(_listed(old), _listed(new)) is None  # 50 changed places > MAX_ALIGNED_CHANGES
    assert MAX_ALIGNED_CHANGES < 50


def _data(pending: dict[str, Request], keys: dict[str, Checkpoint]) -> AgentData:
    history = History(tuple(HandledRequest(r) for r in list(pending.values())[-5:]), ())
    return AgentData(
        AgentSignalState.new(),
        inbox=Inbox(pending=pending, accepted={key: f"d{key}" for key in pending}),
        history=history,
        checkpoints=Checkpoints(keys),
        conversations=Conversations(),
    )


def _checkpoint(message_id: str, n: int) -> Checkpoint:
    return Checkpoint(
        message_id, "cnv_0", f"summary {n}", "next", None, CheckpointStatus.ACTIVE, float(n)
    )


def _requests(records: dict[str, object]) -> dict[str, Request]:
    """The records as requests under their ids (a new record: a new request, its text new)."""
    return {
        key: value if isinstance(value, Request) else _request_of(key, value)
        for key, value in records.items()
    }


def _request_of(key: str, record: object) -> Request:
    assert isinstance(record, _Record)
    return request(int(key.removeprefix("msg_")), 10 + record.n % 50)


def _checkpoints(records: dict[str, object]) -> dict[str, Checkpoint]:
    return {
        key: value if isinstance(value, Checkpoint) else _checkpoint(key, _number(value))
        for key, value in records.items()
    }


def _number(record: object) -> int:
    assert isinstance(record, _Record)
    return record.n


@settings(max_examples=40, deadline=None)
@given(st.lists(_STEPS, min_size=1, max_size=5))
def test_commits_found_by_alignment_load_back_as_committed(
    tmp_path_factory: object, commits: list[list[tuple[str, int]]]
) -> None:
    directory = Path(tmp_path_factory.mktemp("aligned"))  # type: ignore[attr-defined]
    store = RecordStore(directory, "agt_aligned")
    store.create(EXTRA)
    store.load(migrate)
    fresh = [20]
    pending: dict[str, object] = {f"msg_{n}": request(n, 10) for n in range(20)}
    checkpoints: dict[str, object] = {f"msg_{n}": _checkpoint(f"msg_{n}", n) for n in range(8)}
    data = _data(_requests(pending), _checkpoints(checkpoints))
    store.commit(EXTRA, data)
    for steps in commits:
        pending = dict(_requests(_applied(pending, steps, fresh)))
        checkpoints = dict(_checkpoints(_applied(checkpoints, steps[::-1], fresh)))
        data = _data(_requests(pending), _checkpoints(checkpoints))
        store.commit(EXTRA, data)
    store.close()
    again = RecordStore(directory, "agt_aligned")
    _, loaded = again.load(migrate)
    assert loaded is not None
    assert loaded.sections() == data.sections()
    assert list(loaded.inbox.pending) == list(data.inbox.pending)  # eviction order kept
    assert list(loaded.checkpoints.items) == list(data.checkpoints.items)
    assert again.commit(EXTRA, loaded) == 0
    again.close()


@settings(max_examples=200, deadline=None)
@given(st.lists(_STEPS, min_size=1, max_size=6))
def test_remembered_sizes_are_those_measured_afresh(commits: list[list[tuple[str, int]]]) -> None:
    sizes = StoredSizes()
    fresh = [10]
    records: dict[str, object] = {f"msg_{n}": request(n, n) for n in range(10)}
    for steps in commits:
        requests = _requests(_applied(records, steps, fresh))
        records = dict(requests)
        measured = sizes.sizes("pending", requests.values(), Request.to_json)
        assert measured == [stored_size(r.to_json()) for r in requests.values()]


def test_a_request_replaced_in_its_place_is_measured_again() -> None:
    sizes = StoredSizes()
    small = [request(n, 10) for n in range(5)]
    assert sizes.total("pending", small, Request.to_json) == sum(
        stored_size(r.to_json()) for r in small
    )
    grown = [*small[:2], replace(small[2], text="x" * 5000), *small[3:]]
    assert sizes.sizes("pending", grown, Request.to_json) == [
        stored_size(r.to_json()) for r in grown
    ]
