"""The emulator and Home Assistant as real processes: start, stop, SIGKILL, restart, RSS.

Both run with this checkout's interpreter and paths. Each writes its output to a log file
that survives restarts (appended), so a failing test can point at it.
"""

import asyncio
import os
import signal
import sys
from pathlib import Path

import aiohttp
from aiohttp import web

from custom_components.pacerelle.const import ENV_DEFAULT_SERVER_URL
from tests.browser.home_assistant import INTEGRATION, free_port
from tests.helpers.emulator import EmulatorHandle

ROOT = Path(__file__).resolve().parents[2]
EVENT_LOG_COMPONENT = Path(__file__).resolve().parent / "event_log"
EVENT_LOG_FILE = "pacerelle_events.jsonl"
START_TIMEOUT = 90.0
STOP_TIMEOUT = 30.0
POLL_SECONDS = 0.1
LOG_TAIL = 4000

# No frontend (nor default_config): the APIs the tests drive, the test-only event log,
# and nothing that would install requirements or call the internet at start.
CONFIGURATION = """\
homeassistant:
  name: System test
  time_zone: UTC
http:
  server_host: 127.0.0.1
  server_port: {port}
api:
config:
onboarding:
repairs:
websocket_api:
pacerelle_event_log:
{integrations}logger:
  default: warning
  logs:
    custom_components.pacerelle: {pacerelle_log_level}
"""


def log_tail(path: Path) -> str:
    try:
        return path.read_text(errors="replace")[-LOG_TAIL:]
    except FileNotFoundError:
        return "(no log)"


class Process:
    """A child process with its output appended to `log_path`."""

    def __init__(self, name: str, log_path: Path) -> None:
        self.name = name
        self.log_path = log_path
        self.process: asyncio.subprocess.Process | None = None

    @property
    def pid(self) -> int:
        if self.process is None:
            raise RuntimeError(f"{self.name} is not running")
        return self.process.pid

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.returncode is None

    async def spawn(
        self, *arguments: str, cwd: Path = ROOT, env: dict[str, str] | None = None
    ) -> None:
        if self.running:
            raise RuntimeError(f"{self.name} runs already")
        with self.log_path.open("ab") as log:
            self.process = await asyncio.create_subprocess_exec(
                *arguments,
                cwd=cwd,
                env={**os.environ, **(env or {})},
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
            )

    async def wait_served(self, url: str) -> None:
        """Until `url` answers 200; fails at once if the process exits."""
        async with aiohttp.ClientSession() as session, asyncio.timeout(START_TIMEOUT):
            while True:
                if not self.running:
                    raise AssertionError(
                        f"{self.name} exited with {self.process and self.process.returncode}:\n"
                        f"{log_tail(self.log_path)}"
                    )
                try:
                    async with session.get(url) as response:
                        if response.status == 200:
                            return
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(POLL_SECONDS)

    async def stop(self) -> None:
        """SIGTERM, then SIGKILL after STOP_TIMEOUT."""
        process = self.process
        if process is None or process.returncode is not None:
            return
        process.terminate()
        try:
            await asyncio.wait_for(process.wait(), STOP_TIMEOUT)
        except TimeoutError:
            process.kill()
            await process.wait()

    async def kill(self) -> None:
        """SIGKILL: no shutdown code runs, nothing unsaved survives."""
        process = self.process
        if process is None or process.returncode is not None:
            return
        process.send_signal(signal.SIGKILL)
        await process.wait()

    def rss_bytes(self) -> int:
        """Resident set size now, from /proc."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS in /proc status")


class EmulatorProcess(Process):
    """`python -m tests.emulator` with a state file, on a fixed port across restarts."""

    def __init__(self, directory: Path, *, runtime_token_ttl: float | None = None) -> None:
        super().__init__("emulator", directory / "emulator.log")
        self.port = free_port()
        self.state_file = directory / "emulator-state.json"
        self.runtime_token_ttl = runtime_token_ttl
        self.base_url = f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        arguments = [sys.executable, "-m", "tests.emulator", "--host", "127.0.0.1"]
        arguments += ["--port", str(self.port), "--state", str(self.state_file)]
        if self.runtime_token_ttl is not None:
            arguments += ["--runtime-token-ttl", str(self.runtime_token_ttl)]
        await self.spawn(*arguments)
        await self.wait_served(f"{self.base_url}/_emulator/faults")

    def handle(self, session: aiohttp.ClientSession) -> EmulatorHandle:
        """The fixtures' admin helpers over HTTP (`handle.emulator` is not available)."""
        return EmulatorHandle(self.base_url, web.Application(), session)


class HomeAssistantProcess(Process):
    """`python -m homeassistant` in its own config dir, with the integration linked in."""

    def __init__(
        self,
        config_dir: Path,
        *,
        server_url: str,
        pacerelle_log_level: str = "info",
        integrations: tuple[str, ...] = (),
    ) -> None:
        """`integrations`: more to set up (`backup`, say), each with an empty configuration."""
        super().__init__("hass", config_dir / "hass.log")
        self.config_dir = config_dir
        # What scripts/develop does: the config flow offers this server URL by default.
        self.env = {ENV_DEFAULT_SERVER_URL: server_url}
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        components = config_dir / "custom_components"
        components.mkdir(parents=True, exist_ok=True)
        for name, target in (
            ("pacerelle", INTEGRATION),
            ("pacerelle_event_log", EVENT_LOG_COMPONENT),
        ):
            link = components / name
            if not link.exists():
                link.symlink_to(target)
        configuration = config_dir / "configuration.yaml"
        if not configuration.exists():
            configuration.write_text(
                CONFIGURATION.format(
                    port=self.port,
                    pacerelle_log_level=pacerelle_log_level,
                    integrations="".join(f"{name}:\n" for name in integrations),
                )
            )

    @property
    def event_log(self) -> Path:
        return self.config_dir / EVENT_LOG_FILE

    async def start(self) -> None:
        # Run from the config dir: from the checkout, `custom_components` would be the
        # checkout's own package, which lacks the test-only event log.
        await self.spawn(
            sys.executable,
            "-m",
            "homeassistant",
            "--config",
            str(self.config_dir),
            "--skip-pip",
            cwd=self.config_dir,
            env=self.env,
        )
        await self.wait_served(f"{self.base_url}/api/onboarding")

    async def restart(self) -> None:
        await self.stop()
        await self.start()
