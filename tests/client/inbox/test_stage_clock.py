"""A batch's stage clock: each lap adds the time since the last one to its stage, time
measured elsewhere adds to a stage too, and the log line lists stages in their first order."""

import time

from custom_components.pacerelle.client.inbox.stage_clock import StageClock


def test_laps_add_up_per_stage_in_their_first_order() -> None:
    start = time.perf_counter()
    clock = StageClock()
    clock.lap("lock")
    clock.lap("decrypt")
    clock.lap("lock")
    clock.add("write", 0.25)
    clock.add("write", 0.5)
    elapsed = time.perf_counter() - start
    assert list(clock.stages) == ["lock", "decrypt", "write"]
    assert clock.stages["write"] == 0.75
    assert 0.0 <= clock.stages["lock"] + clock.stages["decrypt"] <= elapsed
    assert str(clock).split(" ")[2] == "write=750.00"
