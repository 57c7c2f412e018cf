"""scripts/develop's Home Assistant configuration (issue 15, items 1 and 2).

A new configuration is what Home Assistant writes for a new install (its own writer is
run next to ours and compared), without `my`, with the demo's package; the port comes
from `.storage/http` once Home Assistant has written it, and a new install's port is set
with SETUP_PORT, which Home Assistant's http integration reads.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from homeassistant import config as ha_config
from homeassistant.components import default_config
from homeassistant.components.http import config as http_config
from homeassistant.components.http.config import default_server_port
from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
from homeassistant.util.yaml import load_yaml

from tests.helpers.develop import develop_config


def _load(config_dir: Path) -> dict[str, Any]:
    loaded = load_yaml(config_dir / "configuration.yaml")
    assert isinstance(loaded, dict)
    return loaded


def test_a_new_configuration_is_home_assistants_without_my(tmp_path: Path) -> None:
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ours.mkdir()
    theirs.mkdir()
    assert develop_config.write_new_configuration(ours, 18123) is True
    assert ha_config._write_default_config(str(theirs)) is True

    mine, new_install = _load(ours), _load(theirs)
    manifest = json.loads((Path(default_config.__file__).parent / "manifest.json").read_text())
    # default_config's integrations one by one, except `my` and what cannot work in the
    # demo (a go2rtc binary, libpcap): a new install of it logs no setup failure.
    assert set(manifest["dependencies"]) - {"my", "go2rtc", "dhcp"} <= set(mine)
    assert {"go2rtc", "dhcp"} <= set(manifest["dependencies"])
    for left_out in ("my", "go2rtc", "dhcp"):
        assert left_out not in mine
    assert "default_config" not in mine
    # Everything else a new install has, with the same included files and contents.
    for key, value in new_install.items():
        if key != "default_config":
            assert mine[key] == value, key
    for name in ("automations.yaml", "scripts.yaml", "scenes.yaml"):
        assert (ours / name).read_text() == (theirs / name).read_text()
    assert (ours / "themes").is_dir()
    # No `http:` block: Home Assistant would stage it as a trial and raise a repair.
    assert "http" not in mine
    package = mine["homeassistant"]["packages"]["pacerelle_demo"]
    assert package["camera"] == [{"platform": "pacerelle_demo"}]


def test_an_existing_configuration_is_kept(tmp_path: Path) -> None:
    (tmp_path / "configuration.yaml").write_text("homeassistant:\n")
    assert develop_config.write_new_configuration(tmp_path, 18123) is False
    assert (tmp_path / "configuration.yaml").read_text() == "homeassistant:\n"
    assert not (tmp_path / "automations.yaml").exists()
    assert not (tmp_path / ".storage").exists()


async def test_a_new_configuration_listens_on_loopback_only(
    hass: HomeAssistant, hass_storage: dict[str, Any], tmp_path: Path
) -> None:
    """The store written for a new install is what Home Assistant's own HTTP settings
    load: 127.0.0.1 and the port given, confirmed (no trial), no YAML (no repair)."""
    assert develop_config.write_new_configuration(tmp_path, 18123) is True
    path = tmp_path / ".storage" / "http"
    assert path.stat().st_mode & 0o777 == 0o600
    hass_storage["http"] = json.loads(path.read_text())

    loaded = await http_config.async_load_config(hass, {})
    assert (loaded["server_host"], loaded["server_port"]) == (["127.0.0.1"], 18123)
    store = await http_config.async_get_and_load_store(hass)
    assert store.active_config_type is http_config.ActiveConfigType.STABLE
    assert store.pending is None
    assert not ir.async_get(hass).issues
    assert develop_config.serving_hosts(tmp_path) == ["127.0.0.1"]
    assert develop_config.serving_port(tmp_path, 8123) == 18123
    # A directory without a store (an older one) listens on every interface.
    assert develop_config.serving_hosts(tmp_path / "older") == [""]


def _store(config_dir: Path, stable: int, pending: dict[str, Any] | None = None) -> None:
    (config_dir / ".storage").mkdir(exist_ok=True)
    data = {"stable": {"server_port": stable}, "pending": pending, "yaml_migration_done": True}
    (config_dir / ".storage" / "http").write_text(json.dumps({"version": 2, "data": data}))


@pytest.mark.parametrize(
    ("store", "yaml_port", "expected"),
    [
        (None, None, 18123),  # new install: --ha-port
        ((28123, None), None, 28123),  # Home Assistant's store wins over --ha-port
        ((28123, {"server_port": 38123, "error": None}), None, 38123),  # a trial runs next
        ((28123, {"server_port": 38123, "error": "not_promoted"}), None, 28123),
        (None, 48123, 48123),  # an old configuration with `http:`, not migrated yet
    ],
)
def test_the_port_served(
    tmp_path: Path,
    store: tuple[int, dict[str, Any] | None] | None,
    yaml_port: int | None,
    expected: int,
) -> None:
    http = f"http:\n  server_port: {yaml_port}\n" if yaml_port else ""
    (tmp_path / "configuration.yaml").write_text(f"default_config:\n{http}")
    if store is not None:
        _store(tmp_path, *store)
    assert develop_config.serving_port(tmp_path, 18123) == expected


def test_home_assistant_takes_a_new_installs_port_from_setup_port(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SETUP_PORT", "18123")
    assert default_server_port() == 18123
