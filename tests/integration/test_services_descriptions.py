"""services.yaml, the action schemas, strings.json and icons.json agree with each other."""

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from homeassistant.core import HomeAssistant
from homeassistant.helpers.service import async_get_all_descriptions
from homeassistant.setup import async_setup_component

from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.services import _SERVICES

COMPONENT = Path(__file__).parents[2] / "custom_components" / DOMAIN


def yaml_fields(service: dict[str, Any]) -> dict[str, Any]:
    """Fields of a services.yaml entry, sections flattened."""
    fields: dict[str, Any] = {}
    for name, field in (service.get("fields") or {}).items():
        if "fields" in field:
            fields.update(field["fields"])
        else:
            fields[name] = field
    return fields


def schema_keys(schema: Any) -> set[str]:
    return {str(key) for key in schema.schema}


def test_yaml_strings_schemas_and_icons_agree() -> None:
    services = yaml.safe_load((COMPONENT / "services.yaml").read_text())
    strings = json.loads((COMPONENT / "strings.json").read_text())["services"]
    icons = json.loads((COMPONENT / "icons.json").read_text())["services"]
    registered = {name: schema for name, _, schema, _, _ in _SERVICES}
    assert set(services) == set(registered) == set(strings) == set(icons)
    for name, service in services.items():
        fields = yaml_fields(service)
        assert set(fields) == schema_keys(registered[name]), name
        assert set(fields) == set(strings[name]["fields"]), name
        sections = {key for key, value in service["fields"].items() if "fields" in value}
        assert sections == set(strings[name].get("sections", {})), name
        assert strings[name]["name"]
        assert strings[name]["description"]


async def test_home_assistant_describes_every_action(
    hass: HomeAssistant, caplog: pytest.LogCaptureFixture
) -> None:
    """Home Assistant's own services.yaml schema (helpers/service.py) accepts the file: a
    file it rejects is logged and described as no action at all."""
    assert await async_setup_component(hass, DOMAIN, {})
    descriptions = (await async_get_all_descriptions(hass))[DOMAIN]
    assert "services.yaml" not in caplog.text
    assert set(descriptions) == {name for name, _, _, _, _ in _SERVICES}
    assert descriptions["ask"]["fields"]["kind"]["required"] is True
    assert hass.services.supports_response(DOMAIN, "ask").value == "optional"
    assert hass.services.supports_response(DOMAIN, "get_status").value == "only"
