"""The hand-over marks file: marks appended are read back by a new process, the newest
`slots` of each window, trusted ones in both windows; a file not of this shape is read as
no marks and made anew; it is private to its owner (0600)."""

import logging
import stat
from pathlib import Path

import pytest

from custom_components.pacerelle.client.state.handed_over_file import (
    HandedOverFile,
    file_bytes,
    parsed_marks,
)


def mark(number: int) -> str:
    return f"{number:032x}"


def test_marks_survive_a_reopening_newest_kept(tmp_path: Path) -> None:
    marks = HandedOverFile(tmp_path, "agt", slots=3)
    assert marks.read() is None  # no file yet: a store older than the marks
    for number in range(5):
        marks.append(mark(number), trusted=number % 2 == 0)
    marks.sync_pending()
    marks.close()
    again = HandedOverFile(tmp_path, "agt", slots=3).read()
    assert again == {
        "all": [mark(2), mark(3), mark(4)],
        "trusted": [mark(0), mark(2), mark(4)],
    }
    assert stat.S_IMODE(marks.path.stat().st_mode) == 0o600
    assert marks.path.stat().st_size == file_bytes(3)


def test_a_written_section_replaces_the_marks(tmp_path: Path) -> None:
    marks = HandedOverFile(tmp_path, "agt", slots=4)
    marks.read()
    marks.append(mark(9), trusted=True)
    marks.write({"all": [mark(1)], "trusted": []})
    marks.close()
    parsed = parsed_marks(marks.path.read_bytes())
    assert parsed == (4, {"all": [mark(1)], "trusted": []})


def test_a_foreign_file_is_read_as_no_marks_and_made_anew(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    marks = HandedOverFile(tmp_path, "agt", slots=2)
    marks.path.write_bytes(b"not ours" * 100)
    with caplog.at_level(logging.WARNING):
        assert marks.read() is None
    assert "not a file of hand-over marks" in caplog.text
    marks.append(mark(7), trusted=False)
    marks.close()
    assert HandedOverFile(tmp_path, "agt", slots=2).read() == {"all": [mark(7)], "trusted": []}
