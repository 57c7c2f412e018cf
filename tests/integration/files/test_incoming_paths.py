"""incoming_files.incoming_file_path, the one door from a sender's metadata to a path.

A property test: whatever `id`, `name`, `mime` and message id a sender (or the relay)
picks, the answer is a path inside the folder, made of plain names, or a refusal.
"""

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from custom_components.pacerelle.files.access import (
    NOT_ALLOWED,
    FileRefusedError,
    read_regular_file,
    write_new_file,
)
from custom_components.pacerelle.files.incoming import UnsafePathError, incoming_file_path
from custom_components.pacerelle.limits import MAX_FILE_NAME_BYTES

HOSTILE_TEXT = [
    "",
    ".",
    "..",
    "...",
    "/",
    "/tmp/abs",
    "../../x",
    "a/../../b",
    "..\\..\\b",
    "nul\0byte",
    "\ud800",
    " . ",
    ".hidden",
    "x" * 5000,
    "\U0001d49c" * 300,
    "\n\r\t",
    "~",
]
# What a sender may put in a JSON field: text (hostile or any), numbers, null, lists, objects.
sender_values = st.one_of(
    st.sampled_from(HOSTILE_TEXT),
    st.text(),
    st.text(alphabet=st.sampled_from("./\\\0 a")),
    st.none(),
    st.integers(),
    st.floats(allow_nan=True),
    st.lists(st.text(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2),
)
folders = st.sampled_from(["/media/pacerelle", "/", "/a b/c.d", "//x", "/m/../n"])


def _is_plain(name: str) -> bool:
    return (
        name not in ("", ".", "..")
        and not name.startswith(".")
        and "/" not in name
        and "\0" not in name
        and len(name.encode("utf-8")) <= MAX_FILE_NAME_BYTES
    )


@settings(max_examples=400, deadline=None)
@given(
    folder=folders,
    attachment_id=sender_values,
    name=sender_values,
    mime=sender_values,
    message_id=st.one_of(st.none(), sender_values),
    index=st.integers(min_value=0, max_value=50),
)
def test_any_metadata_gives_a_path_inside_the_folder_or_a_refusal(
    folder: str, attachment_id: Any, name: Any, mime: Any, message_id: Any, index: int
) -> None:
    attachment = {"id": attachment_id, "name": name, "mime": mime}
    try:
        target = incoming_file_path(folder, attachment, index, message_id=message_id)
    except UnsafePathError:
        return
    root = os.path.normpath(folder)
    path = target.path
    assert os.path.normpath(path) == path
    assert os.path.commonpath([root, path]) == root
    parts = os.path.relpath(path, root).split(os.sep)
    assert len(parts) == (1 if message_id is None else 2)
    assert all(_is_plain(part) for part in parts), parts


@pytest.mark.parametrize("folder", ["", "media", "./media", "../x", "/media\0/x", "/m\ud800", None])
def test_a_folder_that_is_not_absolute_is_refused(folder: Any) -> None:
    with pytest.raises(UnsafePathError):
        incoming_file_path(folder, {"name": "a.txt"}, 0)


@pytest.mark.parametrize(
    ("name", "mime", "expected"),
    [
        ("..", None, "attachment-3"),
        ("", "image/jpeg", "attachment-3.jpg"),
        (None, "application/x-sh", "attachment-3"),
        ("...", "text/plain", "attachment-3.txt"),
        ("a/../../b", None, "b"),
        ("..\\..\\win.ini", None, "win.ini"),
        ("nul\0byte.txt", None, "nul_byte.txt"),
        (".bashrc", None, "bashrc"),
        ("Façade été.jpg", None, "Façade été.jpg"),
    ],
)
def test_names(name: Any, mime: Any, expected: str) -> None:
    attachment = {"id": "../../x", "name": name, "mime": mime}
    target = incoming_file_path("/media", attachment, 2, message_id="../..")
    assert (target.subfolder, target.file_name) == ("message", expected)


def test_a_long_name_keeps_its_extension_within_the_byte_limit() -> None:
    name = incoming_file_path("/m", {"name": "\U0001d49c" * 300 + ".jpeg"}, 0).file_name
    assert name.endswith(".jpeg")
    assert len(name.encode()) <= MAX_FILE_NAME_BYTES


@settings(max_examples=60, deadline=None)
@given(name=sender_values, message_id=sender_values)
def test_what_is_written_lands_in_the_folder(name: Any, message_id: Any) -> None:
    """The same, on a real disk: write_new_file puts the file where the path says."""
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp, "media")
        folder.mkdir()
        target = incoming_file_path(str(folder), {"name": name}, 0, message_id=message_id)
        path = write_new_file(target, b"x", lambda _path: True)
        written = [Path(root, file) for root, _, files in os.walk(temp) for file in files]
        assert written == [Path(path)]
        assert Path(path).parent == (folder if message_id is None else folder / target.subfolder)
        assert Path(path).stat().st_mode & 0o777 == 0o640


@pytest.mark.parametrize("path", ["relative.txt", "/a\0b", "/a\ud800"])
def test_a_path_to_send_that_no_file_system_can_name_is_refused(path: str) -> None:
    with pytest.raises(FileRefusedError) as refused:
        read_regular_file(path, lambda _path: True, 10)
    assert refused.value.reason == NOT_ALLOWED
