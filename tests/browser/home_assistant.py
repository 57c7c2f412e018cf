"""A real Home Assistant process for browser tests: fresh config dir, loopback, free port.

The checkout's integration is linked into the config dir's custom_components. Requirements
are never installed at run time (`--skip-pip`): what the frontend needs is in the venv.
"""

import asyncio
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp

INTEGRATION = Path(__file__).resolve().parents[2] / "custom_components" / "pacerelle"
START_TIMEOUT = 90.0
STOP_TIMEOUT = 30.0
LOG_TAIL = 4000

# The frontend, the flow API and the OAuth2 callback view; default_config would pull in
# integrations whose requirements are installed only at Home Assistant's first start.
CONFIGURATION = """\
homeassistant:
  name: Browser test
http:
  server_host: 127.0.0.1
  server_port: {port}
frontend:
config:
logger:
  default: warning
  logs:
    custom_components.pacerelle: debug
"""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def running_home_assistant(config_dir: Path) -> AsyncIterator[str]:
    """Start `hass` on a free loopback port; yields its base URL; stops it on exit."""
    port = free_port()
    (config_dir / "custom_components").mkdir(parents=True)
    (config_dir / "custom_components" / "pacerelle").symlink_to(INTEGRATION)
    (config_dir / "configuration.yaml").write_text(CONFIGURATION.format(port=port))
    log_path = config_dir / "home-assistant.out"
    with log_path.open("wb") as log:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "homeassistant",
            "--config",
            str(config_dir),
            "--skip-pip",
            stdout=log,
            stderr=asyncio.subprocess.STDOUT,
        )
    base_url = f"http://127.0.0.1:{port}"
    try:
        await _wait_until_served(process, base_url, log_path)
        yield base_url
    finally:
        if process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), STOP_TIMEOUT)
            except TimeoutError:
                process.kill()
                await process.wait()


async def _wait_until_served(
    process: asyncio.subprocess.Process, base_url: str, log_path: Path
) -> None:
    async with aiohttp.ClientSession() as session, asyncio.timeout(START_TIMEOUT):
        while True:
            if process.returncode is not None:
                tail = log_path.read_text(errors="replace")[-LOG_TAIL:]
                raise AssertionError(f"hass exited with {process.returncode}:\n{tail}")
            try:
                async with session.get(f"{base_url}/manifest.json") as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.25)
