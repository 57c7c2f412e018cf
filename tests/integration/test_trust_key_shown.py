"""A trust decision holds only for the key whose code the user saw (issue 25, finding 4).

The relay can present a new identity key for a device at any moment, so also between the
repair showing a code and the owner pressing Trust, or between reading a code and running
`pacerelle.trust_device`: the decision must not land on the key the owner never saw."""

import json
from pathlib import Path
from typing import Any

import probatio
import pytest
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import issue_registry as ir
from homeassistant.setup import async_setup_component

from custom_components.pacerelle.client.values.trust_book import TrustState
from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.device_action import async_call_action_from_config
from custom_components.pacerelle.repairs import issue_id
from custom_components.pacerelle.runtime import PacerelleRuntime
from tests.helpers.agent import agent_device as agent_device_of
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.llm import held
from tests.helpers.runtime import wait_until
from tests.helpers.services import call, refused, shown_code
from tests.helpers.trust import a_new_phone

STRINGS = Path(__file__).parents[2] / "custom_components" / "pacerelle" / "strings.json"


async def a_new_phone_shown(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> tuple[Any, PacerelleRuntime, str]:
    """The owner's trusted phone and a new device 2 that wrote once: (installed, runtime,
    the code device 2 shows now)."""
    agent, _ = await a_new_phone(hass, emulator)
    code = shown_code(emulator, agent.installed.owner_id, "2")
    device = agent.runtime.trust.book.get(agent.installed.owner_id, "2")
    assert device is not None
    assert device.code == code
    return agent.installed, agent.runtime, code


async def relay_swaps_the_key(
    emulator: EmulatorHandle, installed: Any, runtime: PacerelleRuntime, before: str
) -> str:
    """The relay presents a new identity key as device 2 (it writes with it); its code."""
    conversation, owner = installed.conversation_id, installed.owner_id
    await emulator.admin("POST", f"/conversations/{conversation}/devices/2/reset")
    await held(runtime, await emulator.send(conversation, text="trust me", device_id="2"))
    assert runtime.trust is not None
    await wait_until(lambda: runtime.trust.book.get(owner, "2").code != before)
    swapped = shown_code(emulator, owner, "2")
    assert runtime.trust.book.get(owner, "2").code == swapped
    return swapped


@pytest.mark.parametrize(("decision", "state"), [("trust", "trusted"), ("block", "blocked")])
async def test_the_repair_decides_only_for_the_key_it_showed(
    hass: HomeAssistant, emulator: EmulatorHandle, decision: str, state: str
) -> None:
    assert await async_setup_component(hass, "repairs", {})
    installed, runtime, shown = await a_new_phone_shown(hass, emulator)
    owner = installed.owner_id
    issue = issue_id(runtime.entry_id, owner, "2")
    flows = hass.data["repairs"]["flow_manager"]
    form = await flows.async_init(DOMAIN, context={"issue_id": issue})
    assert form["description_placeholders"]["code"] == shown

    swapped = await relay_swaps_the_key(emulator, installed, runtime, shown)
    again = await flows.async_configure(form["flow_id"], {"decision": decision})
    # Nothing decided; the same step again, with the new code and why.
    assert (again["type"], again["step_id"], again["errors"]) == (
        "form",
        "init",
        {"base": "key_changed"},
    )
    assert again["description_placeholders"]["code"] == swapped
    assert runtime.trust.book.get(owner, "2").state is TrustState.UNVERIFIED
    assert ir.async_get(hass).async_get_issue(DOMAIN, issue) is not None
    fix_flow = json.loads(STRINGS.read_text())["issues"]["untrusted_device"]["fix_flow"]
    assert "key_changed" in fix_flow["error"]

    # Decided again, having seen the new code: it holds for that key.
    done = await flows.async_configure(again["flow_id"], {"decision": decision})
    assert done["type"] == "create_entry"
    decided = runtime.trust.book.get(owner, "2")
    assert (decided.state.value, decided.code) == (state, swapped)


async def test_the_actions_decide_only_for_the_code_given(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    installed, runtime, read = await a_new_phone_shown(hass, emulator)
    owner = installed.owner_id
    assert runtime.trust is not None
    swapped = await relay_swaps_the_key(emulator, installed, runtime, read)
    device = {"sender_device_id": "2", "verification_code": read}

    for action in ("trust_device", "block_device"):
        error = await refused(hass, action, device, "verification_code_mismatch", response=True)
        # The refusal does not tell the right code: a second call could trust with it.
        assert swapped not in str(error)
        assert swapped not in str(error.translation_placeholders)
        assert "Nothing was decided" in str(error)
        assert runtime.trust.book.get(owner, "2").state is TrustState.UNVERIFIED
    # The device page's action is the same door.
    agent_device = agent_device_of(hass, runtime.entry_id)
    config = {"domain": DOMAIN, "device_id": agent_device.id, "type": "trust_device", **device}
    with pytest.raises(HomeAssistantError, match="Nothing was decided"):
        await async_call_action_from_config(hass, config, {}, Context())
    assert runtime.trust.book.get(owner, "2").state is TrustState.UNVERIFIED
    # Trusting without a code is not offered at all.
    with pytest.raises(probatio.Invalid, match="verification_code"):
        await call(hass, "trust_device", {"sender_device_id": "2"})

    trusted = await call(hass, "trust_device", {**device, "verification_code": swapped})
    assert (trusted["trust_state"], trusted["verification_code"]) == ("trusted", swapped)
    # Blocking without a code blocks the key presented now, and says which.
    blocked = await call(hass, "block_device", {"sender_device_id": "2"})
    assert (blocked["trust_state"], blocked["verification_code"]) == ("blocked", swapped)
