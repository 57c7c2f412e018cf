"""fsync(2) and fdatasync(2) calls of this process and their time, for scripts/bench --store.

SQLite calls them from C, out of Python's sight: `preload` builds fsync_count.c (gcc) and
runs this benchmark again with it in LD_PRELOAD; `counters` reads its totals then.
"""

import ctypes
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE = Path(__file__).with_name("fsync_count.c")
_MARK = "PACERELLE_BENCH_FSYNC_SHIM"


def _shim() -> ctypes.CDLL | None:
    path = os.environ.get(_MARK)
    if not path or path not in os.environ.get("LD_PRELOAD", ""):
        return None
    return ctypes.CDLL(path)  # already loaded: the same library, the same counters


def preload() -> None:
    """Unless the shim is loaded: build it and run this command again under it (or, with
    no compiler, go on without fsync figures)."""
    if _shim() is not None or os.environ.get(_MARK) == "":
        return
    built = Path(tempfile.mkdtemp(prefix="fsync-shim-")) / "fsync_count.so"
    result = subprocess.run(
        ["cc", "-O2", "-shared", "-fPIC", "-o", str(built), str(SOURCE), "-ldl"],
        capture_output=True,
        check=False,
    )
    if result.returncode != 0:
        os.environ[_MARK] = ""
        return
    env = {**os.environ, _MARK: str(built), "LD_PRELOAD": str(built)}
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)


def counters() -> tuple[int, float] | None:
    """Calls so far and the seconds they took; None without the shim."""
    shim = _shim()
    if shim is None:
        return None
    shim.fsync_calls.restype = ctypes.c_longlong
    shim.fsync_nanos.restype = ctypes.c_longlong
    return int(shim.fsync_calls()), shim.fsync_nanos() / 1e9
