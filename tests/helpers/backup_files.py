"""What a Home Assistant backup holds of an agent: its store, read back as the agent would."""

import io
import tarfile
from pathlib import Path

from custom_components.pacerelle.client.state.record_store import RecordStore


def store_files_of(backup: Path, agent_id: str, target: Path) -> RecordStore:
    """The agent's database and key as the backup holds them (the database complete on its
    own: no write-ahead log with content beside it), in `target`, as a store to load."""
    target.mkdir()
    with tarfile.open(backup) as outer:
        inner = outer.extractfile("homeassistant.tar.gz")
        assert inner is not None
        with tarfile.open(fileobj=io.BytesIO(inner.read()), mode="r:gz") as home:
            names = home.getnames()
            for suffix in (".db", ".key"):
                [name] = [n for n in names if n.endswith(f"pacerelle/{agent_id}{suffix}")]
                member = home.extractfile(name)
                assert member is not None
                (target / f"{agent_id}{suffix}").write_bytes(member.read())
            assert not any(
                n.endswith(f"{agent_id}.db-wal") and home.getmember(n).size for n in names
            )
    return RecordStore(target, agent_id)
