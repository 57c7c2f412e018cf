"""scripts/develop's Home Assistant configuration: what a new install gets, and its port.

    develop_config.py init CONFIG_DIR   write a new configuration (an existing one is kept)
    develop_config.py port CONFIG_DIR DEFAULT   the port Home Assistant will serve on

A new configuration is the one Home Assistant writes for a new install (homeassistant/
config.py: default_config, frontend themes, automation/script/scene includes and their
files), with two changes: default_config's integrations are listed without `my` (with it,
Pacerelle's approval would come back through my.home-assistant.io instead of straight to
this instance) and without what cannot work in the demo's environment (LEFT_OUT), and a
`packages/` folder holds the demo's devices. There is no `http:`
block: Home Assistant 2026.10 keeps the HTTP settings in `.storage/http` and raises a
repair for YAML; scripts/develop sets the port of a new install with SETUP_PORT instead.
"""

import json
import shutil
import sys
from pathlib import Path

from homeassistant.components import default_config

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
# The files a new install gets next to configuration.yaml, and their first content.
INCLUDED_FILES = {"automations.yaml": "[]", "scripts.yaml": "", "scenes.yaml": ""}


def default_config_domains() -> list[str]:
    manifest = json.loads((Path(default_config.__file__).parent / "manifest.json").read_text())
    return sorted(set(manifest["dependencies"]) - LEFT_OUT)


def write_new_configuration(config_dir: Path) -> bool:
    configuration = config_dir / "configuration.yaml"
    if configuration.exists():
        return False
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


def serving_port(config_dir: Path, default: int) -> int:
    """The port of `.storage/http` (a pending trial first), else an old YAML one, else
    `default` (a new install's, set through SETUP_PORT)."""
    try:
        stored = json.loads((config_dir / ".storage" / "http").read_text())["data"]
    except FileNotFoundError, KeyError, ValueError:
        stored = None
    if stored is not None:
        pending = stored.get("pending")
        if pending and not pending.get("error") and "server_port" in pending:
            return int(pending["server_port"])
        return int(stored["stable"].get("server_port", default))
    for line in (config_dir / "configuration.yaml").read_text().splitlines():
        name, _, value = line.strip().partition(":")
        if name == "server_port" and value.strip().isdigit():
            return int(value)
    return default


def main() -> None:
    command, config_dir = sys.argv[1], Path(sys.argv[2])
    if command == "init":
        print("new" if write_new_configuration(config_dir) else "kept")
    elif command == "port":
        print(serving_port(config_dir, int(sys.argv[3])))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
