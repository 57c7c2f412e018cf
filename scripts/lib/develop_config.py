"""scripts/develop's Home Assistant configuration: what a new install gets, and its port.

    develop_config.py init CONFIG_DIR PORT   write a new configuration (an existing one is kept)
    develop_config.py port CONFIG_DIR DEFAULT   the port Home Assistant will serve on
    develop_config.py hosts CONFIG_DIR   the addresses it listens on, one a line ("" for all)

A new configuration is the one Home Assistant writes for a new install (homeassistant/
config.py: default_config, frontend themes, automation/script/scene includes and their
files), with two changes: default_config's integrations are listed without `my` (with it,
Pacerelle's approval would come back through my.home-assistant.io instead of straight to
this instance) and without what cannot work in the demo's environment (LEFT_OUT), and a
`packages/` folder holds the demo's devices. There is no `http:` block: Home Assistant
2026.10 keeps the HTTP settings in `.storage/http`, and would stage YAML there as a trial
to confirm (restarting to undo it after five minutes) with a repair. So a new
configuration gets that store instead, as Settings → System → Network saves it: listening
on 127.0.0.1 only (until onboarding, whoever reaches it first becomes its owner) on the
port given.
"""

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from homeassistant.components import default_config
from homeassistant.components.http.config import (
    HTTP_STORAGE_SCHEMA,
    STORAGE_KEY,
    STORAGE_MINOR_VERSION,
    STORAGE_VERSION,
)
from homeassistant.util import dt as dt_util

DEMO = Path(__file__).resolve().parent / "demo"
# default_config's integrations the demo leaves out: `my` (above); `frontend` is written
# with its themes below; go2rtc needs a go2rtc binary (a new install logs "Setup failed for
# 'go2rtc'" and raises an "Invalid config" notification without one) and only serves
# camera streams, which the demo's still camera has none of; dhcp needs libpcap ("libpcap
# is not available") to discover devices on a network the demo has none of.
LEFT_OUT = frozenset({"my", "frontend", "go2rtc", "dhcp"})
HEADER = """\
# Written by scripts/develop: Home Assistant's configuration for a new install, with
# default_config's integrations listed without `my`, go2rtc and dhcp (see
# scripts/lib/develop_config.py).
"""
TAIL = """
# Load frontend themes from the themes folder
frontend:
  themes: !include_dir_merge_named themes

automation: !include automations.yaml
script: !include scripts.yaml
scene: !include scenes.yaml

homeassistant:
  # The demo's camera, doorbell, lock and temperature (README's examples).
  packages: !include_dir_named packages

logger:
  default: warning
  logs:
    custom_components.pacerelle: debug
"""
# Where the demo's Home Assistant listens: this machine only.
SERVER_HOST = "127.0.0.1"
# The files a new install gets next to configuration.yaml, and their first content.
INCLUDED_FILES = {"automations.yaml": "[]", "scripts.yaml": "", "scenes.yaml": ""}


def default_config_domains() -> list[str]:
    manifest = json.loads((Path(default_config.__file__).parent / "manifest.json").read_text())
    return sorted(set(manifest["dependencies"]) - LEFT_OUT)


def write_new_configuration(config_dir: Path, port: int) -> bool:
    configuration = config_dir / "configuration.yaml"
    if configuration.exists():
        return False
    write_http_store(config_dir, port)
    lines = [HEADER, "# default_config without `my`, go2rtc and dhcp"]
    lines += [f"{domain}:" for domain in default_config_domains()]
    (config_dir / "themes").mkdir(exist_ok=True)
    packages = config_dir / "packages"
    packages.mkdir(exist_ok=True)
    shutil.copyfile(DEMO / "pacerelle_demo.yaml", packages / "pacerelle_demo.yaml")
    for name, content in INCLUDED_FILES.items():
        if not (config_dir / name).exists():
            (config_dir / name).write_text(content)
    configuration.write_text("\n".join(lines) + "\n" + TAIL)
    return True


def write_http_store(config_dir: Path, port: int) -> None:
    """`.storage/http` as Home Assistant keeps a confirmed configuration: no trial, no
    YAML to migrate. A store that exists is kept."""
    path = config_dir / ".storage" / STORAGE_KEY
    if path.exists():
        return
    stable = HTTP_STORAGE_SCHEMA({"server_host": [SERVER_HOST], "server_port": port})
    stable |= {"created_at": dt_util.utcnow().isoformat(), "error": None, "error_message": None}
    document = {
        "version": STORAGE_VERSION,
        "minor_version": STORAGE_MINOR_VERSION,
        "key": STORAGE_KEY,
        "data": {"stable": stable, "pending": None, "yaml_migration_done": True},
    }
    path.parent.mkdir(exist_ok=True)
    # Private, as Home Assistant writes it.
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as file:
        json.dump(document, file, indent=2)


def _active_http(config_dir: Path) -> dict[str, Any] | None:
    """The HTTP settings Home Assistant applies at its next start (a pending trial
    first), or None without a store."""
    try:
        stored = json.loads((config_dir / ".storage" / STORAGE_KEY).read_text())["data"]
    except FileNotFoundError, KeyError, ValueError:
        return None
    pending = stored.get("pending")
    if pending and not pending.get("error"):
        return dict(pending)
    return dict(stored["stable"])


def serving_hosts(config_dir: Path) -> list[str]:
    """The addresses Home Assistant listens on: "" for every interface."""
    active = _active_http(config_dir)
    return list(active.get("server_host") or [""]) if active else [""]


def serving_port(config_dir: Path, default: int) -> int:
    """The port of `.storage/http` (a pending trial first), else an old YAML one, else
    `default` (a new install's, set through SETUP_PORT)."""
    active = _active_http(config_dir)
    if active is not None:
        return int(active.get("server_port", default))
    for line in (config_dir / "configuration.yaml").read_text().splitlines():
        name, _, value = line.strip().partition(":")
        if name == "server_port" and value.strip().isdigit():
            return int(value)
    return default


def main() -> None:
    command, config_dir = sys.argv[1], Path(sys.argv[2])
    if command == "init":
        print("new" if write_new_configuration(config_dir, int(sys.argv[3])) else "kept")
    elif command == "hosts":
        print("\n".join(serving_hosts(config_dir)))
    elif command == "port":
        print(serving_port(config_dir, int(sys.argv[3])))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
