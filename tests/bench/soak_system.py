"""The soak's household: one real Home Assistant on the soak's clock, the emulator, two agents.

Home Assistant runs as a real process (tests/system's harness), started through
soak_hass.py so that its clock can be moved forward (soak_clock.py, driven by the
soak_probe integration's `advance`); the emulator's clock is moved by its admin API
(/_emulator/clock). `advance` moves the emulator's first, then Home Assistant's, while the
connections are down: the token an agent asks for as its backoff ends is one of the new time.

Five people with two phones each (the emulator's reference Signal devices "1" and "2"):
the owners of the two agents and three more who reach them through three groups.
"""

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from tests.bench.soak_clock import OFFSET_ENV
from tests.system.harness import Agent, System
from tests.system.home_assistant_api import HomeAssistantApi
from tests.system.processes import ROOT, EmulatorProcess, HomeAssistantProcess, log_tail

PROBE = "pacerelle_soak_probe"
PROBE_COMPONENT = Path(__file__).resolve().parent / "soak_probe"
OWNERS = ("usr_demo", "usr_agent2")  # the first agent's owner is the emulator's default user
OTHERS = ("usr_ana", "usr_ben", "usr_cleo")
PEOPLE = OWNERS + OTHERS
DEVICES = ("1", "2")
LONG_TOKEN_DAYS = 3650
CORE_LOGS = "    homeassistant.core: info\n    homeassistant.bootstrap: info\n"
PROBE_EXIT_WAIT = 1.0
TOKEN_TTL = 2.0
"""Runtime tokens of two seconds: the hours pass while the connections are down, so a
token's life is that of a connection; soak.py moves Home Assistant's clock past 80 % of it
twice a day, and the integration renews on its own schedule."""


@dataclass(frozen=True)
class Group:
    name: str
    conversation_id: str
    agents: tuple[Agent, ...]
    members: list[str]


class SoakHomeAssistant(HomeAssistantProcess):
    """Home Assistant started on the soak's clock, with the probe linked in."""

    def __init__(self, config_dir: Path, *, server_url: str) -> None:
        super().__init__(
            config_dir,
            server_url=server_url,
            pacerelle_log_level=os.environ.get("SOAK_LOG_LEVEL", "warning"),
            integrations=("backup", PROBE),
        )
        link = config_dir / "custom_components" / PROBE
        if not link.exists():
            link.symlink_to(PROBE_COMPONENT)
        configuration = config_dir / "configuration.yaml"
        text = configuration.read_text()
        if CORE_LOGS not in text:  # Home Assistant's own start and stop, in its log
            configuration.write_text(text.replace("  logs:\n", f"  logs:\n{CORE_LOGS}", 1))
        self.clock_offset = 0.0

    async def start(self) -> None:
        env = {
            **self.env,
            OFFSET_ENV: repr(self.clock_offset),
            "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH")))),
        }
        await self.spawn(
            sys.executable,
            "-m",
            "tests.bench.soak_hass",
            "--config",
            str(self.config_dir),
            "--skip-pip",
            cwd=self.config_dir,
            env=env,
        )
        await self.wait_served(f"{self.base_url}/api/onboarding")

    def open_fds(self) -> int:
        return len(os.listdir(f"/proc/{self.pid}/fd"))

    def cpu_seconds(self) -> float:
        """User and system CPU of the process, all threads, since it started."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Household:
    system: System
    hass_process: SoakHomeAssistant
    agents: tuple[Agent, Agent]
    groups: list[Group] = field(default_factory=list)
    cpu_before_restarts: float = 0.0  # CPU of the Home Assistant processes already ended
    emulator_lag: float = 0.0  # seconds the emulator's clock is behind Home Assistant's

    @property
    def hass(self) -> HomeAssistantApi:
        return self.system.hass

    async def probe(self, service: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
        try:
            answer = await self.hass.rest(
                "POST", f"/api/services/{PROBE}/{service}?return_response", data or {}
            )
        except aiohttp.ClientError as err:
            process = self.hass_process.process
            await asyncio.sleep(PROBE_EXIT_WAIT)  # for its exit status, if it is exiting
            raise AssertionError(
                f"{service}: {err!r}; Home Assistant's exit status: "
                f"{process.returncode if process else None}; its log:\n"
                f"{log_tail(self.hass_process.log_path)}"
            ) from err
        response: dict[str, Any] = answer["service_response"]
        return response

    async def advance(self, seconds: float) -> None:
        """Both clocks `seconds` forward: the emulator's (with what `nudge` moved Home
        Assistant's alone), then Home Assistant's."""
        await self.system.emulator.advance_clock(seconds + self.emulator_lag)
        self.emulator_lag = 0.0
        await self.nudge(seconds)
        self.emulator_lag = 0.0

    async def nudge(self, seconds: float) -> None:
        """Home Assistant's clock alone `seconds` forward, to end a backoff: moving the
        relay's too would expire the two-second token an agent may have just been given.
        The emulator's catches up at the next `advance`."""
        answer = await self.probe("advance", {"seconds": seconds})
        self.hass_process.clock_offset = float(answer["offset"])
        self.emulator_lag += seconds

    def cpu_seconds(self) -> float:
        return self.cpu_before_restarts + self.hass_process.cpu_seconds()

    async def restart(self) -> None:
        """Home Assistant stopped (SIGTERM) and started again, both agents back online."""
        self.cpu_before_restarts += self.hass_process.cpu_seconds()
        await self.hass_process.restart()
        for agent in self.agents:
            await self.hass.wait_entry_state(agent.entry_id, "loaded")
            await self.system.wait_online(agent)


@asynccontextmanager
async def running_household(directory: Path) -> AsyncIterator[Household]:
    emulator_process = EmulatorProcess(directory, runtime_token_ttl=TOKEN_TTL)
    hass_process = SoakHomeAssistant(directory / "config", server_url=emulator_process.base_url)
    try:
        await emulator_process.start()
        await hass_process.start()
        # A new connection per request: Home Assistant's loop clock jumps at each `advance`,
        # so its server closes idle keep-alive connections at once, and a request that reused
        # one in that instant would meet a server that just hung up (ServerDisconnectedError).
        connector = aiohttp.TCPConnector(force_close=True)
        async with aiohttp.ClientSession(connector=connector) as session:
            hass = await HomeAssistantApi.onboard(
                session, hass_process.base_url, hass_process.config_dir
            )
            async with hass.socket() as socket:  # the onboarding's token lasts a (real) day
                hass.token = await socket.command(
                    "auth/long_lived_access_token", client_name="soak", lifespan=LONG_TOKEN_DAYS
                )
                # The YAML http config is a trial until confirmed; unconfirmed, Home Assistant
                # restarts itself to revert it five (simulated) minutes later.
                await socket.command("http/config/promote")
            system = System(
                emulator_process, hass_process, session, emulator_process.handle(session), hass
            )
            first = await system.add_agent("Agent 1")
            second = await system.add_agent("Agent 2")
            household = Household(system, hass_process, (first, second))
            await _people(household)
            yield household
    finally:
        await hass_process.stop()
        await emulator_process.stop()


async def _people(household: Household) -> None:
    """Second phones for everyone, then the three groups."""
    emulator = household.system.emulator
    first, second = household.agents
    for user_id in PEOPLE:
        for device_id in DEVICES:
            known = await emulator.admin("GET", f"/users/{user_id}/devices")
            if device_id not in {str(item["device_id"]) for item in known}:
                await emulator.admin("POST", f"/users/{user_id}/devices", {"device_id": device_id})
    for name, members, agents in (
        ("Family", list(PEOPLE), (first, second)),
        ("Kids", list(OTHERS), (first,)),
        ("Evenings", ["usr_agent2", "usr_ana", "usr_ben"], (second,)),
    ):
        created = await emulator.admin(
            "POST",
            "/groups",
            {"name": name, "members": members, "agent_ids": [a.agent_id for a in agents]},
        )
        household.groups.append(Group(name, created["conversation_id"], agents, members))


async def change_members(household: Household, group: Group, month: int) -> None:
    """One member leaves or comes back (alternately, by month): a new epoch of the group."""
    candidate = group.members[-1] if month % 2 else OTHERS[month % len(OTHERS)]
    body: dict[str, Any]
    if candidate in group.members and len(group.members) > 2:
        body = {"remove": [candidate]}
        group.members.remove(candidate)
    else:
        body = {"add": [candidate]}
        if candidate not in group.members:
            group.members.append(candidate)
    await household.system.emulator.admin("POST", f"/groups/{group.conversation_id}/members", body)
    await asyncio.sleep(0)
