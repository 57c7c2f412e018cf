"""strings.json, every translation, services.yaml and icons.json pass hassfest's rules.

The rules are in tests/helpers/hassfest_rules.py (hassfest is not importable); the negative cases
below show that each rule this integration could break is enforced, so a string that
hassfest rejects fails here first.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from homeassistant.util.yaml import load_yaml_dict

from custom_components.pacerelle.const import DOMAIN
from tests.helpers.hassfest_rules import ICONS_SCHEMA, SERVICES_SCHEMA, STRINGS_SCHEMA, problems

COMPONENT = Path(__file__).parents[2] / "custom_components" / DOMAIN
TRANSLATIONS = sorted((COMPONENT / "translations").glob("*.json"))


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "path", [COMPONENT / "strings.json", *TRANSLATIONS], ids=lambda path: path.name
)
def test_strings_and_translations_pass_hassfest(path: Path) -> None:
    found = problems(STRINGS_SCHEMA, load_json(path))
    assert found is None, found


def test_services_yaml_passes_hassfest() -> None:
    services = load_yaml_dict(COMPONENT / "services.yaml")
    found = problems(SERVICES_SCHEMA, services)
    assert found is None, found
    # services.py validate_services: a select's translation_key must exist in strings.json.
    selectors = load_json(COMPONENT / "strings.json").get("selector", {})
    for name, service in services.items():
        for field_name, field in _fields(service):
            key = (field.get("selector") or {}).get("select", {}) or {}
            if "translation_key" in key:
                assert key["translation_key"] in selectors, f"{name}.{field_name}"


def test_icons_json_passes_hassfest() -> None:
    found = problems(ICONS_SCHEMA, load_json(COMPONENT / "icons.json"))
    assert found is None, found


def _fields(service: dict[str, Any] | None) -> list[tuple[str, dict[str, Any]]]:
    found: list[tuple[str, dict[str, Any]]] = []
    for name, field in ((service or {}).get("fields") or {}).items():
        found.extend(field["fields"].items() if "fields" in field else [(name, field)])
    return found


def _service_strings(description: str) -> dict[str, Any]:
    return {
        "services": {
            "send_message": {
                "name": "Send message",
                "description": "Sends a message.",
                "fields": {"to": {"name": "Recipient", "description": description}},
            }
        }
    }


@pytest.mark.parametrize(
    ("description", "rule"),
    [
        # What strings.json said before: hassfest's string_with_no_html read it as a tag.
        ("A user id (or group:<conversation id>).", "HTML"),
        ("See <b>this</b>.", "HTML"),
        ("Pacerelle's API: https://api.pacerelle.com.", "URL"),
        ("The '{name}' agent.", "single quotes"),
        ("The {0} agent.", "identifier"),
        (" The agent.", "whitespace"),
        ("The [%key:common::config_flow::data::name%] of it.", "reference"),
    ],
)
def test_a_string_hassfest_rejects_is_rejected(description: str, rule: str) -> None:
    found = problems(STRINGS_SCHEMA, _service_strings(description))
    assert found is not None
    assert rule.lower() in found.lower()


def test_strings_hassfest_accepts_are_accepted() -> None:
    for description in (
        "A user id (or group:CONVERSATION_ID); default: the owner.",
        "The {name} agent, at least 2 < 3 characters.",
        "[%key:common::config_flow::data::name%]",
    ):
        assert problems(STRINGS_SCHEMA, _service_strings(description)) is None, description


@pytest.mark.parametrize(
    "strings",
    [
        {"unknown_section": {}},
        {"services": {"Send-Message": {"name": "a", "description": "b"}}},
        {"services": {"send_message": {"name": "Send"}}},
        {"entity": {"sensor": {"connection_state": {"state": {"connected": "Up {since}"}}}}},
        {"exceptions": {"not connected": {"message": "Not connected."}}},
        {"issues": {"broken": {"title": "Broken", "description": "a", "fix_flow": {"step": {}}}}},
        {"issues": {"broken": {"title": "Broken"}}},
        {"options": {"error": {"bad": "Bad."}}},
        {"config": {"step": {"user": {"data": {}, "data_description": {"key": "Key."}}}}},
    ],
)
def test_a_structure_hassfest_rejects_is_rejected(strings: dict[str, Any]) -> None:
    assert problems(STRINGS_SCHEMA, strings) is not None


@pytest.mark.parametrize(
    "services",
    [
        {"send_message": {"fields": {"text": {"selector": {"no_such_selector": {}}}}}},
        {"send_message": {"fields": {"text": {"example": None}}}},
        {"send_message": {"fields": {"text": {"required": "yes"}}}},
        {"send_message": {"fields": {"text": {}, "more": {"fields": {"text": {}}}}}},
        {"send_message": {"fields": {"text": {"filter": {"supported_features": []}}}}},
        {"Send": None},
        {
            "send_message": {
                "target": {"entity": {"domain": "light"}},
                "fields": {"text": {"filter": {"supported_features": ["light.NoSuchFeature"]}}},
            }
        },
    ],
)
def test_a_services_yaml_hassfest_rejects_is_rejected(services: dict[str, Any]) -> None:
    assert problems(SERVICES_SCHEMA, services) is not None


@pytest.mark.parametrize(
    "icons",
    [
        {"services": {"send_message": {"service": "message-arrow-right"}}},
        {"services": {"send_message": {"service": "<b>mdi:x</b>"}}},
        {"entity": {"sensor": {"state": {"default": "mdi:a", "state": {"on": "mdi:a"}}}}},
        {"entity": {"sensor": {"Bad Key": {"default": "mdi:a"}}}},
    ],
)
def test_icons_hassfest_rejects_are_rejected(icons: dict[str, Any]) -> None:
    assert problems(ICONS_SCHEMA, icons) is not None
