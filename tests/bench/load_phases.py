"""Where a per-record store's load goes: its rows read and decrypted, parsed, assembled into
the store document, migrated, read by AgentData.from_document, and the next commit's
baseline built (CPU time of this process, median of ROUNDS loads per phase), per state
(tests/helpers/store_states.py). The document is a view over the parsed rows: what
assembling it costs is the share a load straight from the rows could save."""

import statistics
import tempfile
import time
from pathlib import Path

from custom_components.pacerelle.client.state import assembly
from custom_components.pacerelle.client.state.record_store import RecordStore
from custom_components.pacerelle.client.state.versions import migrate, versioned
from custom_components.pacerelle.client.values.agent_data import SECTIONS, AgentData
from tests.helpers.store_states import SHAPES, grown, model_session

ROUNDS = 5
STATES = ("typical", "busy", "cap")


def _phases(directory: Path) -> dict[str, float]:
    """One load of the store in `directory`, phase by phase (seconds of CPU)."""
    store = RecordStore(directory, "agt")
    file = store.file
    took: dict[str, float] = {}
    start = time.process_time()

    def lap(name: str) -> None:
        nonlocal start
        now = time.process_time()
        took[name] = now - start
        start = now

    file.lock()
    file.open()
    rows = list(file.decrypted_rows())
    lap("read and decrypted")
    loaded = assembly.loaded_rows(rows, file.row_key)
    lap("rows parsed")
    document = assembly.document_of(loaded)
    lap("document assembled")
    document = migrate(document)
    lap("migrated")
    extra = {key: value for key, value in document.items() if key not in SECTIONS}
    data = AgentData.from_document(document)
    lap("from_document")
    assembly.baseline(loaded, extra, data)
    lap("baseline")
    file.close()
    return took


def run() -> list[str]:
    base, model = model_session()
    lines = []
    for state in STATES:
        with tempfile.TemporaryDirectory() as folder:
            directory = Path(folder)
            store = RecordStore(directory, "agt")
            store.create(versioned({}))
            store.load(migrate)
            store.commit(versioned({}), grown(base, model, SHAPES[state]))
            store.close()
            rounds = [_phases(directory) for _ in range(ROUNDS)]
        medians = {name: statistics.median(r[name] for r in rounds) for name in rounds[0]}
        total = sum(medians.values())
        lines.append(f"load of the {state} store: {total * 1000:.1f} ms of CPU")
        lines.extend(
            f"  {name:20} {value * 1000:8.1f} ms {100 * value / total:5.1f} %"
            for name, value in medians.items()
        )
    return lines
