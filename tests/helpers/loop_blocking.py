"""Home Assistant's loop-blocking detection, made strict for Pacerelle's code in the tests.

Home Assistant's `block_async_io.enable()` leaves most file calls unguarded under a test
runner ("unittest" in sys.modules), only warns for custom integrations, and does not
guard `Config.is_allowed_path`, which is documented as blocking. So the tests wrap every
call that Home Assistant lists as blocking, `is_allowed_path`, and the `os` calls that
touch the disk, with Home Assistant's own `protect_loop`, strict: called on the thread
of a running event loop with a frame of custom_components/pacerelle on the stack, they
raise RuntimeError. Every catch is also recorded, so code that swallows the error still
fails its test when the fixture ends.
"""

import asyncio
import functools
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from homeassistant import block_async_io
from homeassistant.core_config import Config
from homeassistant.util.loop import protect_loop

PACKAGE_MARKER = f"{os.sep}custom_components{os.sep}pacerelle{os.sep}"
# Disk calls Home Assistant does not list but that block just the same.
EXTRA_CALLS: tuple[tuple[object, str], ...] = (
    (Config, "is_allowed_path"),
    (os, "open"),
    (os, "stat"),
    (os, "lstat"),
    (os, "mkdir"),
    (os, "makedirs"),
    (os, "unlink"),
    (os, "replace"),
    (os, "rename"),
    (os, "fsync"),
    (os, "readlink"),
)

# asyncio's debug mode (on in Home Assistant's tests) reads source lines through linecache
# for every task and handle it creates, and coverage.py looks up each new file it traces:
# that is the test set-up, not Pacerelle's I/O.
EXEMPT_CALLERS: tuple[str, ...] = (f"{os.sep}linecache.py", f"{os.sep}traceback.py")
EXEMPT_PACKAGES: tuple[str, ...] = (f"{os.sep}coverage{os.sep}",)
_GUARD_FILES: tuple[str, ...] = (
    f"tests{os.sep}helpers{os.sep}loop_blocking.py",
    f"homeassistant{os.sep}util{os.sep}loop.py",
)


@dataclass
class BlockingCatches:
    """Blocking calls caught on the event loop: (function, where in Pacerelle)."""

    found: list[tuple[str, str]] = field(default_factory=list)
    _busy: threading.local = field(default_factory=threading.local)

    def caller_file(self) -> str:
        """The file that made the guarded call (beyond this module and protect_loop)."""
        frame = sys._getframe(2)
        while frame is not None and frame.f_code.co_filename.endswith(_GUARD_FILES):
            frame = frame.f_back
        return frame.f_code.co_filename if frame is not None else ""

    def pacerelle_frame(self) -> str | None:
        """Where in Pacerelle the call comes from; None if not from Pacerelle, or through
        an exempt package (coverage.py tracing a file that Pacerelle's code entered)."""
        frame = sys._getframe(2)
        while frame is not None:
            if any(package in frame.f_code.co_filename for package in EXEMPT_PACKAGES):
                return None
            if PACKAGE_MARKER in frame.f_code.co_filename:
                return f"{frame.f_code.co_filename}:{frame.f_lineno}"
            frame = frame.f_back
        return None

    def allowed_by(
        self, name: str, ha_allowed: Callable[[dict[str, Any]], bool] | None
    ) -> Callable[[dict[str, Any]], bool]:
        """The `check_allowed` of protect_loop: True lets the call through."""

        def allowed(mapped_args: dict[str, Any]) -> bool:
            if asyncio._get_running_loop() is None:
                return True
            if ha_allowed is not None and ha_allowed(mapped_args):
                return True
            if self.caller_file().endswith(EXEMPT_CALLERS):
                return True
            where = self.pacerelle_frame()
            if where is None:
                return True
            self.found.append((name, where))
            return False

        return allowed

    def outermost(self, original: Any, protected: Any) -> Any:
        """Only the outermost guarded call is checked: what it (or the report, through
        linecache and logging) calls in turn is not Pacerelle's doing."""

        @functools.wraps(original)
        def call(*args: Any, **kwargs: Any) -> Any:
            if getattr(self._busy, "on", False):
                return original(*args, **kwargs)
            self._busy.on = True
            try:
                return protected(*args, **kwargs)
            finally:
                self._busy.on = False

        return call


@contextmanager
def strict_loop_blocking() -> Iterator[BlockingCatches]:
    """Guard the calls for the block; the catches, to check (or clear) before it ends."""
    catches = BlockingCatches()
    loop_thread = threading.get_ident()
    guarded: list[tuple[object, str, Any]] = []
    calls = [
        (call.object, call.function, call.original_func, call.check_allowed)
        for call in block_async_io._BLOCKING_CALLS
    ]
    calls += [(owner, name, getattr(owner, name), None) for owner, name in EXTRA_CALLS]
    for owner, name, original, ha_allowed in calls:
        if getattr(owner, name) is not original:
            continue  # already wrapped (Home Assistant's enable() ran)
        label = f"{getattr(owner, '__name__', owner)}.{name}"
        protected = protect_loop(
            original,
            loop_thread_id=loop_thread,
            strict=True,
            strict_core=True,
            check_allowed=catches.allowed_by(label, ha_allowed),
        )
        setattr(owner, name, catches.outermost(original, protected))
        guarded.append((owner, name, original))
    try:
        yield catches
    finally:
        for owner, name, original in reversed(guarded):
            setattr(owner, name, original)
