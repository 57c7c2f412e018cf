"""Pacerelle's own Python SDK, unchanged, against the emulator: Agent Connect and an
end-to-end encrypted echo agent answering the emulator's human device."""

from pathlib import Path

from tests.emulator.sdk_echo import EchoAgent, load_sdk, runtime_token, sdk_installs, stop_echo
from tests.helpers.emulator import EmulatorHandle


async def test_the_sdk_connects_and_answers_the_human_device(
    emulator: EmulatorHandle, tmp_path: Path
) -> None:
    sdk = load_sdk()
    installation, runtime = await sdk_installs(emulator, sdk)
    assert runtime.expires_in == 900
    assert runtime.conversation_id == installation.conversation_id

    agent = EchoAgent(sdk, emulator.base_url, runtime, tmp_path)
    agent.thread.start()
    try:
        status = await emulator.wait_agent(runtime.agent_id, lambda status: status["connected"])
        assert status["one_time_prekeys"] == 50
        assert status["protocol_features"] == ["history-v1"]
        identity_key = status["identity_key"]

        conversation = installation.conversation_id
        await emulator.send(conversation, text="hello")
        await emulator.send(conversation, text="again", device_id="tablet")
        await emulator.send(conversation, text="once more")
        inbox = await emulator.wait_inbox(conversation, 3)
        # Each answer goes back to, and is decrypted by, the device that asked.
        assert sorted((item["device_id"], item["text"]) for item in inbox) == [
            ("1", "echo: hello"),
            ("1", "echo: once more"),
            ("tablet", "echo: again"),
        ]
        assert all(item["encrypted"] and item["history"] == "valid" for item in inbox)
        assert {item["frame_type"] for item in inbox} == {2}
        # Every message was acknowledged once handled.
        await emulator.wait_agent(runtime.agent_id, lambda status: not status["queued"])
    finally:
        await stop_echo(emulator, agent, runtime.agent_id)

    # Offline, a message waits; the restarted SDK (same store, new token) answers it.
    waiting_id = await emulator.send(conversation, text="while you were away")
    runtime = await runtime_token(emulator, sdk, installation.installation_token)
    agent = EchoAgent(sdk, emulator.base_url, runtime, tmp_path)
    agent.thread.start()
    try:
        inbox = await emulator.wait_inbox(conversation, 4)
        assert inbox[3]["text"] == "echo: while you were away"
        assert inbox[3]["reply_to_message_id"] == waiting_id
        status = await emulator.wait_agent(runtime.agent_id, lambda status: not status["queued"])
        assert status["identity_key"] == identity_key
    finally:
        await stop_echo(emulator, agent, runtime.agent_id)
