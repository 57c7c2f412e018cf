"""scripts/lib/env.sh's ensure_rootfs on a root file system cache made by an older or a
newer checkout: what ROOTFS_PACKAGES adds is installed once (apt-get inside the root file
system, here a stand-in that records its arguments), and a cache that has more is left as
it is. The build's marker is never rewritten: a checkout of another age reads it as before.
"""

import os
import subprocess
from pathlib import Path
from typing import Final

ENV_SH: Final = Path(__file__).resolve().parents[2] / "scripts" / "lib" / "env.sh"
OLDER: Final = "python3.14,python3.14-venv,ca-certificates,git,ffmpeg"


def _ensure(cache: Path) -> tuple[list[str], str]:
    """Runs ensure_rootfs; the packages apt-get was asked for, and what it logged."""
    calls = cache / "apt-calls"
    script = f"""
        set -euo pipefail
        . {ENV_SH}
        # /bin/sh -c SCRIPT sh PACKAGE...: the packages.
        run_in_rootfs() {{ shift 4; echo "$*" >>{calls}; }}
        ensure_rootfs
    """
    done = subprocess.run(
        ["bash", "-c", script],
        env={**os.environ, "PACERELLE_CACHE_DIR": str(cache)},
        capture_output=True,
        text=True,
        check=True,
    )
    asked = calls.read_text().split() if calls.exists() else []
    calls.unlink(missing_ok=True)
    return asked, done.stderr


def _packages() -> list[str]:
    script = f". {ENV_SH}; echo $ROOTFS_PACKAGES"
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    return out.stdout.strip().split(",")


def _cache(tmp_path: Path, marker: str) -> Path:
    rootfs = tmp_path / "rootfs-sid"
    rootfs.mkdir()
    (rootfs / ".pacerelle-rootfs-ready").write_text(marker + "\n")
    return rootfs


def test_an_older_cache_gets_what_it_lacks_once(tmp_path: Path) -> None:
    rootfs = _cache(tmp_path, OLDER)
    missing = [package for package in _packages() if package not in OLDER.split(",")]
    assert "espeak-ng" in missing

    asked, logged = _ensure(tmp_path)
    assert asked == missing
    assert f"adding {' '.join(missing)} to the root file system" in logged
    assert (rootfs / ".pacerelle-rootfs-added").read_text().split() == missing
    assert (rootfs / ".pacerelle-rootfs-ready").read_text() == OLDER + "\n"

    assert _ensure(tmp_path) == ([], "")  # installed: nothing more to do


def test_a_cache_with_more_is_left_alone(tmp_path: Path) -> None:
    newer = ",".join([*_packages(), "some-later-package"])
    rootfs = _cache(tmp_path, newer)
    assert _ensure(tmp_path) == ([], "")
    assert not (rootfs / ".pacerelle-rootfs-added").exists()
    assert (rootfs / ".pacerelle-rootfs-ready").read_text() == newer + "\n"


def test_what_another_checkout_added_counts(tmp_path: Path) -> None:
    rootfs = _cache(tmp_path, OLDER)
    missing = [package for package in _packages() if package not in OLDER.split(",")]
    (rootfs / ".pacerelle-rootfs-added").write_text("\n".join([*missing, "other"]) + "\n")
    assert _ensure(tmp_path) == ([], "")
