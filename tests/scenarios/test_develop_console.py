"""scripts/develop's console (issue 15, item 5): only our errors reach it from the log files."""

import os
from pathlib import Path

import pytest

from tests.helpers.develop import script_module

console_filter = script_module("console_filter")


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        # Home Assistant's log format, our integration: shown.
        (
            "2026-11-30 13:28:55.052 ERROR (MainThread) [custom_components.pacerelle.runtime] x",
            True,
        ),
        ("2026-11-30 13:28:55.052 CRITICAL (MainThread) [custom_components.pacerelle] x", True),
        # The emulator's format (scripts/emulator).
        ("2026-11-30 13:28:36,308 ERROR tests.emulator.gateway x", True),
        # What cannot work offline, and what is not an error: files only.
        ("2026-11-30 13:29:15.239 ERROR (MainThread) [haffmpeg.core] FFmpeg fails", False),
        ("2026-11-30 13:29:25.979 ERROR (MainThread) [homeassistant.setup] go2rtc", False),
        ("2026-11-30 13:29:25.979 WARNING (MainThread) [custom_components.pacerelle] x", False),
        ("2026-11-30 13:29:25.979 DEBUG (MainThread) [custom_components.pacerelle] ERROR", False),
        ('2026-11-30 13:28:36,308 INFO aiohttp.access 127.0.0.1 "GET / HTTP/1.1" 200', False),
        # A message that merely mentions both words.
        ("2026-11-30 13:29:25.979 INFO (MainThread) [x] ERROR custom_components.pacerelle", False),
    ],
)
def test_only_our_errors_are_shown(line: str, shown: bool) -> None:
    assert bool(console_filter.OURS.search(line)) is shown


def test_follower_reads_new_lines_across_a_rotation(tmp_path: Path) -> None:
    log = tmp_path / "home-assistant.log"
    log.write_text("before start\n")
    follower = console_filter.Follower(log)
    assert follower.new_lines() == []  # what was there before is not shown
    with log.open("a") as file:
        file.write("one\ntw")
    assert follower.new_lines() == ["one"]
    with log.open("a") as file:
        file.write("o\n")
    assert follower.new_lines() == ["two"]
    # Home Assistant rotates its log at a restart: the new file is read from its start.
    os.replace(log, tmp_path / "home-assistant.log.1")
    log.write_text("after restart\n")
    assert follower.new_lines() == ["after restart"]


def test_follower_waits_for_a_file_that_does_not_exist_yet(tmp_path: Path) -> None:
    follower = console_filter.Follower(tmp_path / "later.log")
    assert follower.new_lines() == []
    (tmp_path / "later.log").write_text("first\n")
    assert follower.new_lines() == ["first"]
