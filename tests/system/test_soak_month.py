"""A simulated month of the busy household (tests/bench/soak.py), in a couple of minutes.

The same household as `scripts/bench --soak` (two agents, five people with two phones,
three groups whose members change, texts, files, voice notes, widgets and their answers,
refused token requests, daily backups, weekly restarts), at half its traffic and with the
relay dropping the connections every three simulated hours instead of every hour (240
drops and reconnections, not 720: the wall time of a month is mostly theirs). It fails on
any message lost or doubled either way, and on any figure past its bound (the constants
below), each measured on Home Assistant's side.
"""

from pathlib import Path

from custom_components.pacerelle.client.limits import MAX_ACCEPTED_RECEIPTS
from tests.bench import soak
from tests.bench.soak_figures import MIB

SCALE = 0.5
HOURS_A_STEP = 3  # the relay drops the connections every three hours (the bench: every hour)
# Resident memory may grow this much between the end of the second week and the end of
# the last (both a week after a restart: the same age, with more history behind them).
MAX_WEEK_GROWTH = 6 * MIB
EXTRA_TASKS = 4  # beyond those after the introductions (a request in flight, a backup's)
EXTRA_FDS = 8
MAX_WAL = 2 * 4 * MIB  # two agents; each WAL is folded back past 1,000 pages of 2 KiB
MAX_REPAIRS = 4  # the four "new group" notices (one per agent and group), nothing else
MAX_TABLE_ROWS = MAX_ACCEPTED_RECEIPTS + 64  # the largest cap of a table (limits.py)


async def test_a_month_loses_nothing_and_grows_within_bounds(
    tmp_path: Path, socket_enabled: None
) -> None:
    run = await soak.simulate(tmp_path, months=1, scale=SCALE, hours_a_step=HOURS_A_STEP)
    [row] = run.rows
    start = run.start
    assert start is not None
    figures = soak.format_row(row)
    assert row.messages_in > 0, figures
    assert row.messages_out > 0, figures
    assert row.lost == (0, 0), figures
    assert row.doubled == (0, 0), figures
    end = row.sample
    weeks = [sample.rss / MIB for sample in run.week_ends]
    assert len(weeks) >= 4, weeks
    assert run.week_ends[-1].rss - run.week_ends[1].rss <= MAX_WEEK_GROWTH, weeks
    assert end.tasks <= start.tasks + EXTRA_TASKS, end.probe["top_tasks"]
    assert end.fds <= start.fds + EXTRA_FDS, figures
    assert end.wal_bytes <= MAX_WAL, figures
    assert len(end.repairs) <= MAX_REPAIRS, end.repairs
    assert end.largest_table[1] <= MAX_TABLE_ROWS, figures
