"""The emulator's state survives a restart when it is given a state file."""

import json
from pathlib import Path

from tests.emulator import EmulatorConfig
from tests.emulator.persistence import read_state
from tests.helpers.emulator import running_emulator


async def test_queued_messages_installations_and_sessions_survive_a_restart(
    tmp_path: Path, socket_enabled: None
) -> None:
    config = EmulatorConfig(state_file=tmp_path / "pacerelle.json")
    async with running_emulator(config) as first:
        installed = await first.install()
        agent = await first.agent(installed)
        waiting_id = await first.send(installed.conversation_id, text="while you were away")
        await first.send(
            installed.conversation_id,
            text="blob",
            attachments=[{"name": "a.txt", "data_b64": "aGVsbG8="}],
        )

    assert config.state_file is not None
    saved = read_state(config.state_file)
    assert installed.agent_id in saved["installations"]
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "pacerelle.json",
        "pacerelle.json.blobs",
    ]

    async with running_emulator(config) as second:
        listed = await second.admin("GET", "/installations")
        assert [item["agent_id"] for item in listed] == [installed.agent_id]
        # The agent process lives on; only its runtime token is new.
        agent.session = second.session
        agent.base_url = second.base_url
        agent.token = await second.runtime_token(installed.installation_token)
        await agent.connect()
        waiting = await agent.frame()
        assert waiting["id"] == waiting_id
        assert agent.open(waiting) == "while you were away"
        await agent.ack(waiting)
        with_blob = await agent.frame()
        secret = json.loads(agent.open(with_blob))["attachments"][0]
        async with second.session.get(
            f"{second.base_url}/agent/blobs/{secret['blob_id']}",
            headers={"Authorization": f"Bearer {agent.token}"},
        ) as response:
            assert response.status == 200
        await agent.ack(with_blob)
        await agent.reply(waiting, "back now")
        inbox = await second.wait_inbox(installed.conversation_id, 1)
        assert inbox[0]["text"] == "back now"
        # The human device's session was restored from its snapshot, not started again.
        await second.send(installed.conversation_id, text="good")
        assert agent.open(await agent.frame()) == "good"
        status = await second.admin("GET", f"/agents/{installed.agent_id}")
        assert status["one_time_prekeys_handed_out"] == 1
        await agent.close()

    async with running_emulator(config) as third:
        inbox = await third.inbox(installed.conversation_id)
        assert [item["text"] for item in inbox] == ["back now"]
        status = await third.admin("GET", f"/agents/{installed.agent_id}")
        assert len(status["queued"]) == 1  # "good" was never acknowledged
