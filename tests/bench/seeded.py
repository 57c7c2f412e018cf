"""A running agent's store grown to a state of tests/helpers/store_states.py, through the real
store.

While Home Assistant is stopped (the store's lock free), the agent's records are loaded as
the integration loads them (RecordStore under its key, `migrate`), grown by the state's
shape (`grown`: invented peers, requests, group keys, queued sends and checkpoints beside
what the agent holds), held to the store's bounds as AgentCore.commit holds them, and
committed with the integration's keys as they were. What the person's device talks to is
untouched: the identity and prekeys the relay publishes, the person's session and device,
the generation (the restore detection sees the same store) and the hand-over marks kept
beside the folder. The invented peers are at addresses no one writes from (`usr_N` in
`cnv_N`), so their sessions are only held, loaded and saved, as a household's idle ones.
"""

from dataclasses import dataclass
from pathlib import Path

from custom_components.pacerelle.client.state.record_store import RecordStore
from custom_components.pacerelle.client.state.versions import migrate
from custom_components.pacerelle.client.store_bounds import within_bounds
from custom_components.pacerelle.client.values.agent_data import AgentData
from custom_components.pacerelle.store.agent_store import STORE_DIRECTORY
from tests.helpers.store_states import SHAPES, grown, model_session


@dataclass(frozen=True)
class Held:
    """What an agent's store holds."""

    sessions: int
    pending: int
    history: int
    group_keys: int
    queued: int
    database_bytes: int


def seed(config_dir: Path, agent_id: str, state: str) -> Held:
    """Grow the agent's store in `config_dir` to `state` (SHAPES); Home Assistant stopped."""
    folder = _folder(config_dir)
    extra, data = _load(folder, agent_id)
    base, model = model_session()
    del base  # only its session's record is the model of the invented ones
    seeded = within_bounds(grown(data, model, SHAPES[state]))
    identity = data.signal.prekeys.bundle_json()["identity_key"]
    kept = all(
        seeded.signal.sessions.get(name) is record for name, record in data.signal.sessions.items()
    )
    if seeded.signal.prekeys is not data.signal.prekeys or not kept:
        raise RuntimeError("seeding would change the agent's identity or one of its sessions")
    store = RecordStore(folder, agent_id)
    try:
        store.load(migrate)
        store.commit(extra, seeded)
    finally:
        store.close()
    _, reloaded = _load(folder, agent_id)
    if reloaded.signal.prekeys.bundle_json()["identity_key"] != identity:
        raise RuntimeError("the seeded store holds another identity")
    return held(config_dir, agent_id)


def held(config_dir: Path, agent_id: str) -> Held:
    """What the agent's store in `config_dir` holds; Home Assistant stopped."""
    folder = _folder(config_dir)
    _, data = _load(folder, agent_id)
    return Held(
        sessions=len(data.signal.sessions),
        pending=len(data.inbox.pending),
        history=len(data.history.requests) + len(data.history.replies),
        group_keys=len(data.conversations.group_keys),
        queued=len(data.queued.sends),
        database_bytes=sum(
            path.stat().st_size for path in folder.glob(f"{agent_id}.db*") if path.is_file()
        ),
    )


def _folder(config_dir: Path) -> Path:
    return config_dir.joinpath(".storage", *STORE_DIRECTORY)


def _load(folder: Path, agent_id: str) -> tuple[dict[str, object], AgentData]:
    store = RecordStore(folder, agent_id)
    try:
        extra, data = store.load(migrate)
    finally:
        store.close()
    if data is None:
        raise RuntimeError("the agent's store holds no data")
    return extra, data
