"""Blocking file primitives that hold against links and swaps (run them in the executor).

A checked path can be swapped for a link or a FIFO before use, so everything works on
descriptors: opened first, without following a final link and without blocking, then what was
opened is checked (type, size, real path read back from the descriptor) and used.
A hard link passes the real-path check, so a file to send with st_nlink > 1 is refused when it
is one whose content must never leave (any regular file under `.storage`, or `secrets.yaml`,
compared by device and inode); single-name files are not looked up, so deduplicated media
still go. Left open on purpose: a hard link to an older version of a replaced file cannot be
told apart; the agent's `.key` is never replaced, so a link to it is always caught.
"""

import errno
import os
import stat
from collections.abc import Callable
from contextlib import ExitStack, suppress
from typing import Final

from ..limits import MAX_PROTECTED_FILES, MAX_SAME_NAME
from .incoming import IncomingPath, UnsafePathError, absolute_path

PROTECTED_FOLDER: Final = ".storage"
PROTECTED_FILES: Final = ("secrets.yaml",)
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


def protected_files(config_dir: str) -> set[tuple[int, int]]:
    """(st_dev, st_ino) of the files that must never be sent (see the module docstring)."""
    found: set[tuple[int, int]] = set()
    candidates = [os.path.join(config_dir, name) for name in PROTECTED_FILES]
    for root, _folders, files in os.walk(os.path.join(config_dir, PROTECTED_FOLDER)):
        candidates.extend(os.path.join(root, name) for name in files)
        if len(candidates) > MAX_PROTECTED_FILES:
            break
    for candidate in candidates[:MAX_PROTECTED_FILES]:
        with suppress(OSError):
            info = os.stat(candidate, follow_symlinks=False)
            if stat.S_ISREG(info.st_mode):
                found.add((info.st_dev, info.st_ino))
    return found


def read_regular_file(
    path: str, is_allowed: IsAllowed, limit: int, *, config_dir: str | None = None
) -> bytes:
    """The bytes of the regular file at `path`, inside an allowed folder, at most `limit`.

    FileRefusedError when it is outside (after resolving links), a link itself, not a
    regular file (folder, FIFO, device, socket), another name (a hard link) of a protected
    file of `config_dir`, or too large; OSError when unreadable.
    """
    try:
        absolute_path(path)
    except UnsafePathError as err:
        raise FileRefusedError(NOT_ALLOWED) from err
    if not is_allowed(path):
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
        if (
            config_dir is not None
            and info.st_nlink > 1
            and (info.st_dev, info.st_ino) in protected_files(config_dir)
        ):
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


def _open_subfolder(root_fd: int, name: str) -> int:
    """The sub-folder `name` of the opened folder, made if missing, never through a link."""
    with suppress(FileExistsError):
        os.mkdir(name, FOLDER_MODE, dir_fd=root_fd)
    try:
        return os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=root_fd)
    except OSError as err:
        # A link (ELOOP) or a file (ENOTDIR) planted where the folder goes.
        if err.errno in (errno.ELOOP, errno.ENOTDIR):
            raise FileRefusedError(OUTSIDE) from err
        raise


def _write_exclusive(dir_fd: int, folder: str, name: str, content: bytes) -> str:
    """Write a new file in the opened `folder` (real path given); the name it got."""
    name, fd = _create_new(dir_fd, name)
    try:
        with os.fdopen(fd, "wb") as file:
            _inside(fd, os.path.join(folder, name), folder)
            file.write(content)
    except BaseException:
        os.unlink(name, dir_fd=dir_fd)
        raise
    return name


def write_new_file(target: IncomingPath, content: bytes, is_allowed: IsAllowed) -> str:
    """Write `content` as a new file at `target` (numbered if the name is taken); its path.

    The chosen folder is made if missing and allowed (links on its way are the user's
    choice), then opened once: its real path, read back from the descriptor, must be
    allowed. The sub-folder is made or opened relative to it without following a link,
    and the file is created exclusively, without following a link, in that sub-folder.
    """
    if not is_allowed(target.folder):
        raise FileRefusedError(NOT_ALLOWED)
    os.makedirs(target.folder, FOLDER_MODE, exist_ok=True)
    with ExitStack() as stack:
        root_fd = os.open(target.folder, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        stack.callback(os.close, root_fd)
        root = opened_path(root_fd, target.folder)
        if not is_allowed(root):
            raise FileRefusedError(NOT_ALLOWED)
        folder_fd, folder = root_fd, root
        if target.subfolder:
            folder_fd = _open_subfolder(root_fd, target.subfolder)
            stack.callback(os.close, folder_fd)
            folder = os.path.join(root, target.subfolder)
            _inside(folder_fd, folder, root)
        name = _write_exclusive(folder_fd, folder, target.file_name, content)
    parts = [target.subfolder] if target.subfolder else []
    return os.path.join(target.folder, *parts, name)
