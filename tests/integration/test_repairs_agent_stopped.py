"""The trust repair answered after its agent stopped (repairs.py): the dialog was open while
the entry was unloaded, so there is no trust book to decide in. The flow aborts with
device_unknown (translated), nothing is decided, and once the agent runs again the device
still waits and its repair is still there to decide."""

import json
from pathlib import Path

from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import issue_registry as ir
from homeassistant.setup import async_setup_component

from custom_components.pacerelle.client.values.trust_book import TrustState
from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.repairs import issue_id
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until
from tests.helpers.trust import a_new_phone, shown

STRINGS = Path(__file__).parents[2] / "custom_components" / "pacerelle" / "strings.json"


async def test_a_repair_answered_after_the_agent_stopped_decides_nothing(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    assert await async_setup_component(hass, "repairs", {})
    agent, _ = await a_new_phone(hass, emulator)
    owner, entry_id = agent.installed.owner_id, agent.entry.entry_id
    issue = issue_id(entry_id, owner, "2")
    await wait_until(lambda: ir.async_get(hass).async_get_issue(DOMAIN, issue) is not None)
    flows = hass.data["repairs"]["flow_manager"]
    form = await flows.async_init(DOMAIN, context={"issue_id": issue})
    assert (form["type"], form["step_id"]) == (FlowResultType.FORM, "init")

    assert await hass.config_entries.async_unload(entry_id)
    gone = await flows.async_configure(form["flow_id"], {"decision": "trust"})
    assert (gone["type"], gone["reason"]) == (FlowResultType.ABORT, "device_unknown")
    abort = json.loads(STRINGS.read_text())["issues"]["untrusted_device"]["fix_flow"]["abort"]
    assert abort["device_unknown"]

    # Running again: the device was not trusted, and its repair decides it still.
    assert await hass.config_entries.async_setup(entry_id)
    await hass.async_block_till_done()
    assert shown(agent, owner, "2").state is TrustState.UNVERIFIED
    await wait_until(lambda: ir.async_get(hass).async_get_issue(DOMAIN, issue) is not None)
    form = await flows.async_init(DOMAIN, context={"issue_id": issue})
    done = await flows.async_configure(form["flow_id"], {"decision": "block"})
    assert done["type"] is FlowResultType.CREATE_ENTRY
    assert shown(agent, owner, "2").state is TrustState.BLOCKED
