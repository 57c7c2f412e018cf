"""One running system: the emulator, a real Home Assistant, and agents added through the UI API.

`running_system(directory)` starts both processes, onboards Home Assistant and yields a
`System`; `system.add_agent()` adds Pacerelle through the config flow and waits until the
agent is online. Everything is stopped on exit, whatever state the test left it in.
"""

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from tests.helpers.emulator import EmulatorHandle
from tests.system.home_assistant_api import HomeAssistantApi, read_event_log, wait_for
from tests.system.processes import EmulatorProcess, HomeAssistantProcess, log_tail

# How long a message sent by the human device may take to fire its event.
EVENT_TIMEOUT = 20.0
ONLINE_TIMEOUT = 30.0
ENTRY_SAVE_TIMEOUT = 10.0
POLL_SECONDS = 0.02


@dataclass(frozen=True)
class Agent:
    """An agent added through the config flow, as both sides know it."""

    entry_id: str
    agent_id: str
    conversation_id: str


@dataclass
class System:
    emulator_process: EmulatorProcess
    hass_process: HomeAssistantProcess
    session: aiohttp.ClientSession
    emulator: EmulatorHandle
    hass: HomeAssistantApi
    agents: list[Agent] = field(default_factory=list)

    async def add_agent(self, name: str = "Home Assistant") -> Agent:
        # One agent per Pacerelle account: the first is the default user's, others their own.
        user_id = f"usr_agent{len(self.agents) + 1}" if self.agents else None
        entry = await self.hass.add_pacerelle(self.emulator, name, user_id)
        known = {agent.agent_id for agent in self.agents}
        installations = await self.emulator.admin("GET", "/installations")
        [installation] = [item for item in installations if item["agent_id"] not in known]
        agent = Agent(entry["entry_id"], installation["agent_id"], installation["conversation_id"])
        self.agents.append(agent)
        await self.wait_online(agent)
        # Home Assistant saves its config entries a second later: a SIGKILL before that
        # would forget the entry (what any Home Assistant does), not what is tested here.
        entries = self.hass_process.config_dir / ".storage" / "core.config_entries"
        await wait_for(
            lambda: entries.exists() and agent.entry_id in entries.read_text(),
            ENTRY_SAVE_TIMEOUT,
            "the config entry saved",
        )
        return agent

    async def wait_online(self, agent: Agent, within: float = ONLINE_TIMEOUT) -> float:
        """Seconds until the agent is connected with its bundle published."""
        start = time.monotonic()
        await self.emulator.wait_agent(
            agent.agent_id,
            lambda status: status["connected"] and status["bundle_published"],
            within=within,
        )
        return time.monotonic() - start

    async def wait_offline(self, agent: Agent, within: float = ONLINE_TIMEOUT) -> None:
        await self.emulator.wait_agent(
            agent.agent_id, lambda status: not status["connected"], within=within
        )

    def events(self) -> list[dict[str, Any]]:
        """Every `pacerelle_message` Home Assistant fired, across restarts."""
        return read_event_log(self.hass_process.event_log)

    async def wait_events(
        self, count: int, within: float, poll: float = POLL_SECONDS
    ) -> list[dict[str, Any]]:
        """The event log once it holds at least `count` events (checked every `poll` s)."""
        try:
            async with asyncio.timeout(within):
                while True:
                    events = self.events()
                    if len(events) >= count:
                        return events
                    await asyncio.sleep(poll)
        except TimeoutError:
            raise AssertionError(
                f"{len(self.events())} of {count} events after {within} s; hass log:\n"
                f"{log_tail(self.hass_process.log_path)}"
            ) from None


@asynccontextmanager
async def running_system(
    directory: Path,
    *,
    runtime_token_ttl: float | None = None,
    pacerelle_log_level: str = "info",
    integrations: tuple[str, ...] = (),
) -> AsyncIterator[System]:
    emulator_process = EmulatorProcess(directory, runtime_token_ttl=runtime_token_ttl)
    hass_process = HomeAssistantProcess(
        directory / "config",
        server_url=emulator_process.base_url,
        pacerelle_log_level=pacerelle_log_level,
        integrations=integrations,
    )
    try:
        await emulator_process.start()
        await hass_process.start()
        async with aiohttp.ClientSession() as session:
            hass = await HomeAssistantApi.onboard(
                session, hass_process.base_url, hass_process.config_dir
            )
            yield System(
                emulator_process,
                hass_process,
                session,
                emulator_process.handle(session),
                hass,
            )
    finally:
        await hass_process.stop()
        await emulator_process.stop()
