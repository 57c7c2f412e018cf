"""pacerelle.send_widget and pacerelle.update_widget against the emulator, wrong JSON per kind."""

import json
from typing import Any

from homeassistant.core import HomeAssistant

from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.services import call, human_writes, received, refused
from tests.helpers.widget_specs import GOOD_SPECS, widget


async def test_every_kind_reaches_the_person(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    source = agent.spoken
    sent = []
    for index, (kind, spec) in enumerate(GOOD_SPECS.items()):
        payload = widget(kind, spec, f"w-{index}")
        # As an object, or as JSON text (what a template often produces).
        value: Any = payload if index % 2 else json.dumps(payload)
        result = await call(hass, "send_widget", {"widget": value, "source_message_id": source})
        assert result["widget_id"] == payload["id"]
        sent.append(payload)
    inbox = await received(emulator, agent, len(sent))
    assert [item["kind"] for item in inbox] == ["widget.standard"] * len(sent)
    assert [item["payload"] for item in inbox] == sent
    assert {item["history"] for item in inbox} == {"valid"}


WRONG: list[tuple[str, dict[str, Any], str]] = [
    ("confirm", {"body": "no title"}, "spec.title"),
    (
        "choice",
        {"title": "t", "options": [{"id": "a", "label": "A"}, {"id": "a", "label": "B"}]},
        "spec.options[1].id",
    ),
    ("permission", {"title": "t", "scopes": [""]}, "spec.scopes[0]"),
    (
        "form",
        {"title": "t", "fields": [{"name": "x", "label": "X", "type": "colour"}]},
        "spec.fields[0].type",
    ),
    ("progress", {"title": "t", "value": 120}, "spec.value"),
    ("file-picker", {"title": "t", "maxFiles": 50}, "spec.maxFiles"),
    ("datetime", {"title": "t", "mode": "date", "min": "2026-13-01"}, "spec.min"),
]


async def test_wrong_widgets_are_refused_per_kind(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    for kind, spec, path in WRONG:
        error = await refused(hass, "send_widget", {"widget": widget(kind, spec)}, "invalid_widget")
        assert error.translation_placeholders["path"] == path, kind
        assert path in str(error)
    await refused(hass, "send_widget", {"widget": "{not json"}, "widget_not_json")
    await refused(
        hass,
        "send_widget",
        {"widget": {**widget("confirm", {"title": "t"}), "v": 2}},
        "invalid_widget",
    )
    await refused(
        hass, "send_widget", {"widget": widget("slider", {"title": "t"})}, "invalid_widget"
    )
    assert await emulator.inbox(agent.conversation_id) == []


async def test_widgets_wait_for_the_person_to_speak_first(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    await start_agent(hass, emulator)
    await refused(
        hass, "send_widget", {"widget": widget("confirm", {"title": "t"})}, "not_spoken_yet"
    )


async def test_progress_updates_follow_the_widget(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    await human_writes(emulator, agent, text="from my tablet", device_id="3")
    progress = widget("progress", {"title": "Backup", "value": 0}, "backup-1")
    # Sent to the first device, not to the one that wrote last: updates must follow it.
    await call(hass, "send_widget", {"widget": progress, "to_device_id": "1"})
    for value in (40, 100):
        result = await call(
            hass, "update_widget", {"widget_id": "backup-1", "spec": {"value": value}}
        )
        assert result["widget_id"] == "backup-1"
        assert result["to_device_id"] == "1"
    await call(
        hass,
        "update_widget",
        {"widget_id": "backup-1", "expires_at": "2026-12-01T10:00:00+00:00"},
        response=False,
    )
    inbox = await received(emulator, agent, 4)
    updates = [item["payload"] for item in inbox[1:]]
    assert [item["kind"] for item in inbox] == ["widget.standard"] + ["widget.update"] * 3
    assert {item["device_id"] for item in inbox} == {"1"}
    assert [update["ref"] for update in updates] == ["backup-1"] * 3
    assert [update["patch"] for update in updates] == [
        {"spec": {"value": 40}},
        {"spec": {"value": 100}},
        {"expires_at": "2026-12-01T10:00:00+00:00"},
    ]
    # Checked against the widget as it now is: max stays 100.
    error = await refused(
        hass, "update_widget", {"widget_id": "backup-1", "spec": {"value": 101}}, "invalid_widget"
    )
    assert error.translation_placeholders["path"] == "patch.spec.value"
    await refused(
        hass, "update_widget", {"widget_id": "backup-1", "spec": {"options": []}}, "invalid_widget"
    )
    await refused(hass, "update_widget", {"widget_id": "backup-1"}, "invalid_widget")
    await refused(
        hass, "update_widget", {"widget_id": "backup-1", "expires_at": "tomorrow"}, "invalid_widget"
    )
    await refused(
        hass, "update_widget", {"widget_id": "nope", "spec": {"value": 1}}, "unknown_widget"
    )
