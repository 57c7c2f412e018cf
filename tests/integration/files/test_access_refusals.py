"""The descriptor-based file primitives against links, swaps and growing files, on a real disk.

Each test builds the hostile layout in tmp_path (a link in a parent folder, a folder moved
between creation and check, a /proc file that is longer than it says) and asserts the
refusal and that nothing is left behind.
"""

import os
from collections.abc import Callable

import pytest

from custom_components.pacerelle.files import access as file_access
from custom_components.pacerelle.files.access import (
    NOT_ALLOWED,
    OUTSIDE,
    TOO_LARGE,
    FileRefusedError,
    opened_path,
    read_regular_file,
    write_new_file,
)
from custom_components.pacerelle.files.incoming import IncomingPath


def _under(folder: str) -> Callable[[str], bool]:
    """The integration's allow-list, reduced to a string prefix (links are file_access's job)."""
    return lambda path: path == folder or path.startswith(folder + os.sep)


def _no_proc(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a system without /proc/self/fd (macOS, BSD): the fallback path is taken."""

    real_readlink = os.readlink

    def readlink(path: str) -> str:
        if str(path).startswith("/proc/"):
            raise OSError("no /proc here")
        return real_readlink(path)

    monkeypatch.setattr(file_access.os, "readlink", readlink)


def test_without_proc_the_resolved_path_is_returned(
    tmp_path: os.PathLike[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.path.join(tmp_path, "real.txt")
    with open(real, "w") as file:
        file.write("x")
    link = os.path.join(tmp_path, "link.txt")
    os.symlink(real, link)
    fd = os.open(real, os.O_RDONLY)
    try:
        _no_proc(monkeypatch)
        assert opened_path(fd, link) == os.path.realpath(real)
    finally:
        os.close(fd)


def test_without_proc_a_swapped_path_is_refused(
    tmp_path: os.PathLike[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The descriptor is file A, the path now names file B: OUTSIDE."""
    first, second = os.path.join(tmp_path, "a"), os.path.join(tmp_path, "b")
    for name in (first, second):
        with open(name, "w") as file:
            file.write(name)
    fd = os.open(first, os.O_RDONLY)
    try:
        _no_proc(monkeypatch)
        with pytest.raises(FileRefusedError) as caught:
            opened_path(fd, second)
        assert caught.value.reason == OUTSIDE
    finally:
        os.close(fd)


def test_a_link_in_a_parent_folder_to_outside_is_refused(tmp_path: os.PathLike[str]) -> None:
    allowed = os.path.join(tmp_path, "allowed")
    outside = os.path.join(tmp_path, "outside")
    os.mkdir(allowed)
    os.mkdir(outside)
    with open(os.path.join(outside, "secret.key"), "wb") as file:
        file.write(b"private")
    os.symlink(outside, os.path.join(allowed, "door"))
    with pytest.raises(FileRefusedError) as caught:
        read_regular_file(os.path.join(allowed, "door", "secret.key"), _under(allowed), 100)
    assert caught.value.reason == NOT_ALLOWED


def test_a_file_longer_than_its_size_says_is_refused() -> None:
    """/proc files report size 0 but hold more: the read, not fstat, enforces the limit."""
    path = "/proc/self/status"
    assert os.stat(path).st_size == 0
    with pytest.raises(FileRefusedError) as caught:
        read_regular_file(path, lambda _: True, 10)
    assert caught.value.reason == TOO_LARGE


def test_a_folder_that_is_not_allowed_gets_nothing(tmp_path: os.PathLike[str]) -> None:
    folder = os.path.join(tmp_path, "elsewhere")
    with pytest.raises(FileRefusedError) as caught:
        write_new_file(IncomingPath(folder, None, "f.txt"), b"x", _under("/nowhere"))
    assert caught.value.reason == NOT_ALLOWED
    assert not os.path.exists(folder)


def test_a_chosen_folder_linking_outside_is_refused(tmp_path: os.PathLike[str]) -> None:
    allowed = os.path.join(tmp_path, "allowed")
    outside = os.path.join(tmp_path, "outside")
    os.mkdir(allowed)
    os.mkdir(outside)
    os.symlink(outside, os.path.join(allowed, "inbox"))
    target = IncomingPath(os.path.join(allowed, "inbox"), None, "f.txt")
    with pytest.raises(FileRefusedError) as caught:
        write_new_file(target, b"x", _under(allowed))
    assert caught.value.reason == NOT_ALLOWED
    assert os.listdir(outside) == []


def test_names_run_out_after_max_same_name(
    tmp_path: os.PathLike[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(file_access, "MAX_SAME_NAME", 2)
    folder = str(tmp_path)
    target = IncomingPath(folder, None, "photo.jpg")
    written = [write_new_file(target, b"%d" % i, _under(folder)) for i in range(3)]
    assert [os.path.basename(p) for p in written] == ["photo.jpg", "photo (1).jpg", "photo (2).jpg"]
    with pytest.raises(FileExistsError):
        write_new_file(target, b"more", _under(folder))
    assert sorted(os.listdir(folder)) == ["photo (1).jpg", "photo (2).jpg", "photo.jpg"]


def test_a_folder_moved_while_writing_is_refused_and_cleaned_up(
    tmp_path: os.PathLike[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sub-folder is moved away between the file's creation and its check: the file,
    which now lies elsewhere, is removed and the write refused."""
    folder = str(tmp_path)
    moved = os.path.join(folder, "moved")
    create = file_access._create_new

    def create_then_move(dir_fd: int, name: str) -> tuple[str, int]:
        created = create(dir_fd, name)
        os.rename(os.path.join(folder, "sub"), moved)
        return created

    monkeypatch.setattr(file_access, "_create_new", create_then_move)
    with pytest.raises(FileRefusedError) as caught:
        write_new_file(IncomingPath(folder, "sub", "f.txt"), b"content", _under(folder))
    assert caught.value.reason == OUTSIDE
    assert os.listdir(moved) == []
