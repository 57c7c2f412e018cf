"""Device actions: offered only for an agent's device, their fields, and the person they name."""

import probatio
import pytest
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import device_registry as dr
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.pacerelle.client.values.trust_book import TrustState
from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.device_action import (
    ACTION_SCHEMA,
    async_call_action_from_config,
    async_get_action_capabilities,
    async_get_actions,
)
from custom_components.pacerelle.runtime import PacerelleRuntime
from tests.helpers.agent import agent_device as agent_device_of
from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.llm import held
from tests.helpers.trust import forged_text


async def test_no_action_for_a_device_of_another_integration(hass: HomeAssistant) -> None:
    other = MockConfigEntry(domain="other")
    other.add_to_hass(hass)
    lamp = dr.async_get(hass).async_get_or_create(
        config_entry_id=other.entry_id, identifiers={("other", "lamp")}
    )
    assert await async_get_actions(hass, lamp.id) == []


async def test_the_editor_asks_for_the_device_and_optionally_the_person(
    hass: HomeAssistant,
) -> None:
    capabilities = await async_get_action_capabilities(
        hass, {"domain": DOMAIN, "device_id": "x", "type": "block_device"}
    )
    fields = capabilities["extra_fields"]
    assert fields({"sender_device_id": "2"}) == {"sender_device_id": "2"}
    assert fields({"sender_device_id": "2", "person_id": "usr_guest"}) == {
        "sender_device_id": "2",
        "person_id": "usr_guest",
    }
    with pytest.raises(probatio.MultipleInvalid, match="sender_device_id"):
        fields({"person_id": "usr_guest"})


async def test_trusting_asks_for_the_code_compared_blocking_does_not(
    hass: HomeAssistant,
) -> None:
    trust = await async_get_action_capabilities(
        hass, {"domain": DOMAIN, "device_id": "x", "type": "trust_device"}
    )
    with pytest.raises(probatio.MultipleInvalid, match="verification_code"):
        trust["extra_fields"]({"sender_device_id": "2"})
    config = {"domain": DOMAIN, "device_id": "x", "sender_device_id": "2"}
    with pytest.raises(probatio.Invalid, match="verification code"):
        ACTION_SCHEMA({**config, "type": "trust_device"})
    assert ACTION_SCHEMA({**config, "type": "trust_device", "verification_code": "AB12"})
    assert ACTION_SCHEMA({**config, "type": "block_device"})


async def test_the_action_decides_for_the_person_it_names(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    started = await start_agent(hass, emulator)
    installed, entry = started.installed, started.entry
    runtime: PacerelleRuntime = entry.runtime_data
    assert runtime.trust is not None
    owner = installed.owner_id
    await emulator.send(installed.conversation_id, text="hello")  # owner's device 1: trusted
    guest = await forged_text(emulator, installed, "usr_guest", "hi")
    await held(runtime, guest)
    agent_device = agent_device_of(hass, entry.entry_id)

    await async_call_action_from_config(
        hass,
        {
            "domain": DOMAIN,
            "device_id": agent_device.id,
            "type": "block_device",
            "sender_device_id": "1",
            "person_id": "usr_guest",
        },
        {},
        Context(),
    )
    book = runtime.trust.book
    assert book.get("usr_guest", "1").state is TrustState.BLOCKED
    # Device "1" of the owner, the default person, is left as it was.
    assert book.get(owner, "1").state is TrustState.TRUSTED
