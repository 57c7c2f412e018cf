"""The one way tests start an agent: installed on the emulator, set up in a real HA, connected.

`start_agent` takes the agent's name and options, devices to add to people and groups to
create; the `Agent` it returns has the entry, the runtime, the captured `pacerelle_message`
events, the created groups' conversation ids and the agent's entities by key.
`add_entry` and `connected_entry` are its parts, for tests that set up an entry themselves
(a restart, a store written beforehand).
"""

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers import entity_registry as er
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_capture_events

from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.const import (
    CONF_AGENT_ID,
    CONF_AGENT_NAME,
    CONF_CONVERSATION_ID,
    CONF_OWNER_ID,
    CONF_SERVER_URL,
    DOMAIN,
    ENTRY_MINOR_VERSION,
    ENTRY_VERSION,
)
from custom_components.pacerelle.device import device_identifiers
from custom_components.pacerelle.events import EVENT_MESSAGE
from custom_components.pacerelle.owner_conversation import owner_subentry_data
from custom_components.pacerelle.runtime import PacerelleRuntime
from custom_components.pacerelle.store.agent_store import agent_store
from tests.helpers.emulator import EmulatorHandle, Installed
from tests.helpers.runtime import wait_until

# The entry minor version from which a new entry has the owner's conversation subentry.
OWNER_SUBENTRY_SINCE = 3

OWNER = "owner"
"""Stands for the agent's owner in `devices` and group members (its id is known only later)."""


@dataclass
class Agent:
    """A started agent: what the emulator installed, its entry and what it fired."""

    installed: Installed
    entry: MockConfigEntry
    events: list[Any]  # pacerelle_message events, from set-up on
    groups: dict[str, str] = field(default_factory=dict)  # group name -> conversation id
    spoken: str | None = None  # the message id of the owner's "Hello" (start_agent(spoken=True))
    _last_runtime: PacerelleRuntime | None = None

    @property
    def runtime(self) -> PacerelleRuntime:
        """The entry's runtime (a new one after a reload); after an unload, its last one."""
        runtime: PacerelleRuntime | None = getattr(self.entry, "runtime_data", None)
        if runtime is not None:
            self._last_runtime = runtime
        assert self._last_runtime is not None, "the entry was never set up"
        return self._last_runtime

    @property
    def conversation_id(self) -> str:
        return self.installed.conversation_id

    def device_id(self, hass: HomeAssistant) -> str:
        """The agent's own device in the device registry."""
        device = dr.async_get(hass).async_get_or_create(
            config_entry_id=self.entry.entry_id,
            identifiers={(DOMAIN, self.entry.entry_id)},
        )
        return device.id

    def entity_id(self, hass: HomeAssistant, platform: str, key: str) -> str:
        unique_id = f"{self.entry.entry_id}_{key}"
        entity_id = er.async_get(hass).async_get_entity_id(platform, DOMAIN, unique_id)
        assert entity_id is not None, f"no {platform} entity {unique_id}"
        return entity_id

    def volatile(self) -> dict[str, str]:
        """Values that differ on every run, with the placeholder snapshots show instead."""
        return {
            self.installed.agent_id: "<agent_id>",
            self.installed.owner_id: "<owner_id>",
            self.installed.conversation_id: "<conversation_id>",
            self.entry.entry_id: "<entry_id>",
            self.runtime.status.verification_code: "<verification_code>",
        }


async def add_entry(
    hass: HomeAssistant,
    emulator: EmulatorHandle,
    installed: Installed,
    *,
    options: dict[str, Any] | None = None,
    create_store: bool = True,
    name: str = "Home",
    minor_version: int = ENTRY_MINOR_VERSION,
) -> MockConfigEntry:
    """The entry and store the config flow would have made for `installed`.

    `minor_version`: as the release of that entry version made it (before 1.3, without the
    owner's conversation subentry), for the migrations to migrate.
    """
    if create_store:
        await agent_store(hass, installed.agent_id).create(
            {
                "installation": {
                    "token": installed.installation_token,
                    "agent_id": installed.agent_id,
                    "owner_id": installed.owner_id,
                    "conversation_id": installed.conversation_id,
                    "server_url": emulator.base_url,
                }
            }
        )
    owner = owner_subentry_data(installed.conversation_id)
    entry = MockConfigEntry(
        domain=DOMAIN,
        version=ENTRY_VERSION,
        minor_version=minor_version,
        unique_id=installed.owner_id,
        title=name,
        data={
            CONF_AGENT_ID: installed.agent_id,
            CONF_OWNER_ID: installed.owner_id,
            CONF_CONVERSATION_ID: installed.conversation_id,
            CONF_SERVER_URL: emulator.base_url,
            CONF_AGENT_NAME: name,
        },
        options=options or {},
        subentries_data=[owner] if minor_version >= OWNER_SUBENTRY_SINCE else [],
    )
    entry.add_to_hass(hass)
    return entry


@asynccontextmanager
async def connected_entry(
    hass: HomeAssistant, entry: MockConfigEntry
) -> AsyncIterator[PacerelleRuntime]:
    """The entry set up and its runtime connected; unloaded at the end of a block that passed.

    A failing block leaves the entry loaded, as a test that unloads on its last line does.
    """
    assert await hass.config_entries.async_setup(entry.entry_id)
    runtime: PacerelleRuntime = entry.runtime_data
    await wait_until(lambda: runtime.status.state is ConnectionState.CONNECTED)
    yield runtime
    assert await hass.config_entries.async_unload(entry.entry_id)


def _user(agent: Agent, member: str) -> str:
    return agent.installed.owner_id if member == OWNER else member


async def add_devices(
    emulator: EmulatorHandle, agent: Agent, person: str, device_ids: Sequence[str]
) -> None:
    """More devices of `person` (a user id, or OWNER) on the emulator."""
    for device_id in device_ids:
        path = f"/users/{_user(agent, person)}/devices"
        await emulator.admin("POST", path, {"device_id": device_id})


async def add_group(
    emulator: EmulatorHandle,
    agent: Agent,
    name: str,
    members: Sequence[str],
    *,
    conversation_id: str | None = None,
) -> str:
    """A group of `members` (user ids, or OWNER) with the agent in it; its conversation id
    (`conversation_id`: one a hostile relay chose, any printable string)."""
    body: dict[str, Any] = {
        "name": name,
        "members": [_user(agent, member) for member in members],
        "agent_ids": [agent.installed.agent_id],
    }
    if conversation_id is not None:
        body["conversation_id"] = conversation_id
    created = await emulator.admin("POST", "/groups", body)
    agent.groups[name] = str(created["conversation_id"])
    return agent.groups[name]


async def start_agent(
    hass: HomeAssistant,
    emulator: EmulatorHandle,
    *,
    name: str = "Home",
    options: dict[str, Any] | None = None,
    devices: Mapping[str, Sequence[str]] | None = None,
    groups: Mapping[str, Sequence[str]] | None = None,
    spoken: bool = False,
) -> Agent:
    """An installed agent, set up and connected, its entities' states written.

    `devices` adds devices to people (user id or OWNER -> device ids) before `groups`
    (name -> members, OWNER among them as wanted) are created with the agent in them.
    `spoken`: the owner has written once ("Hello"), so the agent may answer.
    """
    installed = await emulator.install(name=name)
    entry = await add_entry(hass, emulator, installed, options=options, name=name)
    events = async_capture_events(hass, EVENT_MESSAGE)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    agent = Agent(installed, entry, events)
    await wait_until(lambda: agent.runtime.status.state is ConnectionState.CONNECTED)
    await hass.async_block_till_done()

    for person, device_ids in (devices or {}).items():
        await add_devices(emulator, agent, person, device_ids)
    for group, members in (groups or {}).items():
        await add_group(emulator, agent, group, members)
    if spoken:
        message_id = await emulator.send(installed.conversation_id, text="Hello")
        await wait_until(lambda: any(e.data["message_id"] == message_id for e in events))
        agent.spoken = message_id
    return agent


async def go_offline(emulator: EmulatorHandle, agent: Agent) -> None:
    """The gateway drops the agent and refuses it until `emulator.faults(reset=True)`."""
    await emulator.faults(gateway_status=503, drop_connections="abort")
    await wait_until(lambda: agent.runtime.status.state is not ConnectionState.CONNECTED)


def agent_device(hass: HomeAssistant, entry_id: str) -> dr.DeviceEntry:
    """The agent's own device (each named conversation, the owner's too, has one more)."""
    [device] = dr.async_get(hass).async_get_devices(identifiers=device_identifiers(entry_id))
    return device
