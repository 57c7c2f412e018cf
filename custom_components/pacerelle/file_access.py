"""Blocking file primitives that hold against links and swaps (run them in the executor).

A path is checked, then used: in between, anyone who can write in an allowed folder can
swap a file for a link (to the agent's key, say) or a FIFO. So both directions work on
descriptors: the file or folder is opened first, without following a final link and
without blocking, and what was opened is what gets checked (its type, its size, and its
real path, read back from the descriptor) and then read or written.
"""

import errno
import os
import stat
from collections.abc import Callable
from contextlib import suppress
from typing import Final

from .incoming_files import IncomingPath

# A second file of the same name gets "name (1).ext", ... up to this many.
MAX_SAME_NAME: Final = 999
FILE_MODE: Final = 0o640
FOLDER_MODE: Final = 0o750
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY: Final = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)
_NOCTTY: Final = getattr(os, "O_NOCTTY", 0)

type IsAllowed = Callable[[str], bool]


class FileRefusedError(Exception):
    """The file is not one Pacerelle reads or writes; `reason` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


NOT_ALLOWED: Final = "not_allowed"
NOT_REGULAR: Final = "not_regular"
TOO_LARGE: Final = "too_large"
OUTSIDE: Final = "outside"


def opened_path(fd: int, path: str) -> str:
    """The real path of what `fd` is, `path` being how it was opened.

    Linux names it in /proc/self/fd; elsewhere the resolved `path` must still be the same
    file (device and inode) as the descriptor, or the path was swapped meanwhile.
    """
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        real = os.path.realpath(path)
        opened, found = os.fstat(fd), os.stat(real)
        if (opened.st_dev, opened.st_ino) != (found.st_dev, found.st_ino):
            raise FileRefusedError(OUTSIDE) from None
        return real


def read_regular_file(path: str, is_allowed: IsAllowed, limit: int) -> bytes:
    """The bytes of the regular file at `path`, inside an allowed folder, at most `limit`.

    FileRefusedError when it is outside (after resolving links), a link itself, not a
    regular file (folder, FIFO, device, socket) or too large; OSError when unreadable.
    """
    if "\0" in path or not os.path.isabs(path) or not is_allowed(path):
        raise FileRefusedError(NOT_ALLOWED)
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _NOCTTY | _CLOEXEC)
    except OSError as err:
        # O_NOFOLLOW refuses a final link with ELOOP.
        if err.errno == errno.ELOOP:
            raise FileRefusedError(NOT_REGULAR) from err
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileRefusedError(NOT_REGULAR)
        if not is_allowed(opened_path(fd, path)):
            raise FileRefusedError(NOT_ALLOWED)
        if info.st_size > limit:
            raise FileRefusedError(TOO_LARGE)
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as file:
            # The file may have grown since fstat: read one byte more than allowed to know.
            content = file.read(limit + 1)
    finally:
        os.close(fd)
    if len(content) > limit:
        raise FileRefusedError(TOO_LARGE)
    return content


def _open_folder(name: str, dir_fd: int | None = None) -> int:
    return os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=dir_fd)


def _numbered(name: str, number: int) -> str:
    if number == 0:
        return name
    stem, suffix = os.path.splitext(name)
    return f"{stem} ({number}){suffix}"


def _create_new(dir_fd: int, name: str) -> tuple[str, int]:
    """A new file in the folder `dir_fd`, under `name` or the first free numbered name."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _NOCTTY | _CLOEXEC
    for number in range(MAX_SAME_NAME + 1):
        candidate = _numbered(name, number)
        try:
            return candidate, os.open(candidate, flags, FILE_MODE, dir_fd=dir_fd)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "too many files of this name", name)


def _inside(fd: int, path: str, parent: str) -> None:
    if os.path.dirname(opened_path(fd, path)) != parent:
        raise FileRefusedError(OUTSIDE)


def write_new_file(target: IncomingPath, content: bytes, is_allowed: IsAllowed) -> str:
    """Write `content` as a new file at `target` (numbered if the name is taken); its path.

    The folder (which may be a link the user chose) is opened once and its real path must
    be allowed; the sub-folder is made or opened relative to it without following a link;
    the file is created exclusively, without following a link, in that opened sub-folder.
    """
    root_fd = os.open(target.folder, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        root = opened_path(root_fd, target.folder)
        if not is_allowed(root):
            raise FileRefusedError(NOT_ALLOWED)
        dir_fd = root_fd
        if target.subfolder:
            with suppress(FileExistsError):
                os.mkdir(target.subfolder, FOLDER_MODE, dir_fd=root_fd)
            try:
                dir_fd = _open_folder(target.subfolder, root_fd)
            except OSError as err:
                # A link (ELOOP) or a file (ENOTDIR) planted where the folder goes.
                if err.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise FileRefusedError(OUTSIDE) from err
                raise
        try:
            if dir_fd != root_fd:
                _inside(dir_fd, os.path.join(root, target.subfolder or ""), root)
            name, fd = _create_new(dir_fd, target.file_name)
            try:
                folder = opened_path(dir_fd, os.path.join(root, target.subfolder or ""))
                _inside(fd, os.path.join(folder, name), folder)
                with os.fdopen(fd, "wb", closefd=False) as file:
                    file.write(content)
            except BaseException:
                os.unlink(name, dir_fd=dir_fd)
                raise
            finally:
                os.close(fd)
        finally:
            if dir_fd != root_fd:
                os.close(dir_fd)
    finally:
        os.close(root_fd)
    parts = [target.subfolder] if target.subfolder else []
    return os.path.join(target.folder, *parts, name)
