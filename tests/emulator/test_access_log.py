"""The emulator's access log never shows a secret from a URL (issue 12, item 12)."""

import asyncio
import os
import sys
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from tests.browser.home_assistant import free_port
from tests.emulator.access_log import REDACTED, redact_query
from tests.helpers.emulator import EmulatorHandle

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0


async def _wait_served(process: asyncio.subprocess.Process, base_url: str, log: Path) -> None:
    async with aiohttp.ClientSession() as session, asyncio.timeout(START_TIMEOUT):
        while True:
            assert process.returncode is None, log.read_text()
            try:
                async with session.get(f"{base_url}/_emulator/faults") as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)


async def test_the_emulator_process_logs_no_token(tmp_path: Path, socket_enabled: None) -> None:
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    log = tmp_path / "emulator.log"
    with log.open("wb") as output:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.emulator",
            "--port",
            str(port),
            cwd=ROOT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            stdout=output,
            stderr=asyncio.subprocess.STDOUT,
        )
    try:
        await _wait_served(process, base_url, log)
        async with aiohttp.ClientSession() as session:
            handle = EmulatorHandle(base_url, web.Application(), session)
            installed = await handle.install()
            agent = await handle.agent(installed)
            await agent.connect()
            await handle.send(installed.conversation_id, text="hello")
            await agent.frame()
            await agent.close()
            secrets = [installed.installation_token, agent.token]
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), STOP_TIMEOUT)
    text = log.read_text()
    assert f"/ws/agent?token={REDACTED}" in text
    # The readiness polling above is the chat page's kind of traffic: not logged at INFO.
    assert "GET /_emulator/faults" not in text
    for secret in secrets:
        assert secret not in text


@pytest.mark.parametrize(
    ("query", "logged"),
    [
        ("", ""),
        ("token=abc", f"token={REDACTED}"),
        ("request_id=req_1", "request_id=req_1"),
        ("code=c&state=s", f"code={REDACTED}&state=s"),
        ("Agent_Token=x&api_key=y&x=1", f"Agent_Token={REDACTED}&api_key={REDACTED}&x=1"),
        ("code_verifier=v&token=", f"code_verifier={REDACTED}&token={REDACTED}"),
        ("justasecret", REDACTED),
    ],
)
def test_secret_parameters_are_redacted(query: str, logged: str) -> None:
    assert redact_query(query) == logged
