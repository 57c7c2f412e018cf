"""Every entity has its name, its states and its icon translated (strings.json, icons.json)."""

import json
from pathlib import Path

from homeassistant.helpers.entity import EntityDescription

import custom_components.pacerelle
from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.event import MESSAGES
from custom_components.pacerelle.notify import OWNER
from custom_components.pacerelle.sensor import DESCRIPTIONS, MEMBERS

COMPONENT = Path(custom_components.pacerelle.__file__).parent
STRINGS = json.loads((COMPONENT / "strings.json").read_text())["entity"]
ICONS = json.loads((COMPONENT / "icons.json").read_text())["entity"]
ENTITIES: list[tuple[str, EntityDescription]] = [
    *(("sensor", description) for description in DESCRIPTIONS),
    ("sensor", MEMBERS),
    ("event", MESSAGES),
    ("notify", OWNER),
]


def test_every_entity_has_a_name_and_an_icon() -> None:
    for platform, description in ENTITIES:
        key = description.translation_key
        assert key is not None
        assert ICONS[platform][key]["default"].startswith("mdi:"), key
        if platform != "notify":  # the notify entity is named like its device
            assert STRINGS[platform][key]["name"], key


def test_every_state_is_translated_and_has_an_icon() -> None:
    states = {state.value for state in ConnectionState}
    assert set(STRINGS["sensor"]["connection_state"]["state"]) == states
    # The states without an icon of their own (connecting, reconnecting) take the default:
    # hassfest rejects a state icon that repeats it.
    assert set(ICONS["sensor"]["connection_state"]["state"]) < states
    assert ICONS["sensor"]["connection_state"]["default"]
    event_types = set(MESSAGES.event_types or ())
    translated = STRINGS["event"]["messages"]["state_attributes"]["event_type"]["state"]
    assert set(translated) == event_types
    icons = ICONS["event"]["messages"]["state_attributes"]["event_type"]["state"]
    assert set(icons) == event_types


def test_no_translation_for_an_entity_that_does_not_exist() -> None:
    keys = {(platform, description.translation_key) for platform, description in ENTITIES}
    for platform, entities in STRINGS.items():
        for key in entities:
            assert (platform, key) in keys
    for platform, entities in ICONS.items():
        for key in entities:
            assert (platform, key) in keys
