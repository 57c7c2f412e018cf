"""The agent's Signal state in the store: what `to_json` writes reads back with the same
identity and prekeys, another format is an unsupported version, and a damaged state is
INVALID_STATE, never a crash."""

import copy
import json
from functools import cache

import pytest

from custom_components.pacerelle.client.signal.errors import SignalError, SignalErrorKind
from custom_components.pacerelle.client.signal.state import AgentSignalState


@cache
def written() -> dict[str, object]:
    state: dict[str, object] = json.loads(
        json.dumps(AgentSignalState.new(now=1_700_000_000).to_json())
    )
    return state


def test_what_is_written_reads_back() -> None:
    loaded = AgentSignalState.from_json(copy.deepcopy(written()))
    assert loaded.to_json() == written()
    assert loaded.sessions == {}


def test_another_format_is_an_unsupported_version() -> None:
    state = copy.deepcopy(written())
    state["format"] = 999
    with pytest.raises(SignalError) as refused:
        AgentSignalState.from_json(state)
    assert refused.value.kind is SignalErrorKind.UNSUPPORTED_VERSION


@pytest.mark.parametrize("damage", ["prekeys", "sessions", "format"])
def test_a_damaged_state_is_invalid(damage: str) -> None:
    state = copy.deepcopy(written())
    del state[damage]
    with pytest.raises(SignalError) as refused:
        AgentSignalState.from_json(state)
    assert refused.value.kind is SignalErrorKind.INVALID_STATE


def test_an_older_state_without_its_later_keys_loads() -> None:
    state = copy.deepcopy(written())
    del state["base_keys_seen"], state["last_used"]
    assert AgentSignalState.from_json(state).base_keys_seen == {}
