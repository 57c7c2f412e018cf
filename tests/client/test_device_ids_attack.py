"""Device ids are canonical ASCII decimal at the one door (server_answers.device_id).

int() maps "01", "+1", " 1" and Unicode digits ("\u0661", Arabic-Indic one; "\uff11",
fullwidth one) onto device 1, and str.isdigit() accepts the Unicode ones. A relay that
lets another phone write as device "\u0661" (a device of its own, with its own identity
key) must not reach device 1's session, the trust book or an event as device 1.
"""

import json

import pytest
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.client.crypto_jobs import peer_of
from custom_components.pacerelle.client.errors import PacerelleResponseError
from custom_components.pacerelle.client.outbox.sender import SendError
from custom_components.pacerelle.client.relay.answers import device_id
from custom_components.pacerelle.client.relay.frames import RefusedMessage, parse_frame
from custom_components.pacerelle.client.values.agent_data import Conversations, device_key
from tests.helpers.agent import OWNER, add_devices, add_group, start_agent
from tests.helpers.client_agent import Recorder, connected_agent, wait_for
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.groups import member_writes
from tests.helpers.services import refused

IMPOSTORS = ("01", "+1", " 1", "1\n", "\u0661", "\uff11", "1_0")


async def test_impostor_spellings_of_a_device_never_reach_its_session(
    emulator: EmulatorHandle,
) -> None:
    installed = await emulator.install()
    recorder = Recorder()
    conversation = installed.conversation_id
    async with connected_agent(emulator, installed, recorder) as agent:
        await emulator.send(conversation, text="from 1", device_id="1")
        await wait_for(lambda: len(recorder.delivered) == 1, within=5)
        peer = peer_of(installed.owner_id, conversation, "1")
        identity = agent.data.signal.record(peer).trusted_identity
        assert identity is not None
        sessions = set(agent.data.signal.sessions)

        # Each a phone of its own on the relay (a fresh identity key), named like device 1.
        for spelling in IMPOSTORS:
            await emulator.send(conversation, text=f"impostor {spelling!r}", device_id=spelling)
        await emulator.send(conversation, text="again", device_id="1")
        await wait_for(lambda: recorder.delivered[-1].text == "again", within=5)
        # Refused for good and acknowledged: the relay holds nothing more for the agent.
        await emulator.wait_agent(installed.agent_id, lambda s: s["queued"] == [], within=5)

        assert [(r.text, r.sender_device_id) for r in recorder.delivered] == [
            ("from 1", "1"),
            ("again", "1"),
        ]
        assert agent.data.signal.record(peer).trusted_identity == identity
        assert set(agent.data.signal.sessions) == sessions
        assert agent.refusals.total == len(IMPOSTORS)
        assert set(agent.data.conversations.last_devices.values()) == {"1"}


@pytest.mark.parametrize("spelling", [*IMPOSTORS, "0", "1000000000", "", "7.0"])
def test_non_canonical_device_ids_are_refused_at_the_door(spelling: str) -> None:
    with pytest.raises(PacerelleResponseError):
        device_id(spelling, "from_device_id")
    with pytest.raises(ValueError, match="device id"):
        peer_of("u", "c", spelling)
    frame = {
        "type": "MSG",
        "id": "m",
        "conversation_id": "c",
        "from": "u",
        "from_device_id": spelling,
        "to": "a",
        "payload_b64": "aGk=",
        "encrypted": True,
    }
    assert isinstance(parse_frame(json.dumps(frame)), RefusedMessage)


@pytest.mark.parametrize("value", [True, 7.0, -1, 0, 1_000_000_000, None, [7]])
def test_json_device_ids_other_than_small_integers_are_refused(value: object) -> None:
    with pytest.raises(PacerelleResponseError):
        device_id(value, "from_device_id")


def test_canonical_device_ids() -> None:
    assert device_id("7", "x") == "7"
    assert device_id(7, "x") == "7"
    assert device_id("999999999", "x") == "999999999"


def test_last_device_keys_do_not_collide() -> None:
    """("a|b", "c") and ("a", "b|c") joined plainly are both "a|b|c": one person's device
    for the other; the keys escape "|"."""
    assert device_key("a|b", "c") != device_key("a", "b|c")
    assert device_key("a%7Cb", "c") != device_key("a|b", "c")
    assert device_key("usr_1", "conv_1") == "usr_1|conv_1"  # keys stores already hold
    conversations = Conversations().with_device("a", "b|c", "2")
    assert conversations.last_devices.get(device_key("a|b", "c")) is None


async def test_a_send_to_a_non_canonical_device_is_refused(emulator: EmulatorHandle) -> None:
    installed = await emulator.install()
    async with connected_agent(emulator, installed, Recorder()) as agent:
        with pytest.raises(SendError) as refused:
            await agent.send_text("hi", to_device_id="\u0661")
    assert refused.value.reason == "invalid_device_id"


async def test_the_send_action_refuses_a_non_canonical_device_with_a_translated_error(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator, spoken=True)
    error = await refused(
        hass, "send_message", {"text": "hi", "to_device_id": "\u0661"}, "invalid_device_id"
    )
    assert "\u0661" in (error.translation_placeholders or {})["detail"]
    assert len(await emulator.inbox(agent.conversation_id)) == 0


async def test_a_group_key_labelled_with_a_json_number_keeps_its_device(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    """`sender_device_id: 2` (a JSON number) in /agent/group-keys is device 2, never the
    default device 1."""
    agent = await start_agent(hass, emulator)
    await add_devices(emulator, agent, "usr_ana", ["2"])
    group_id = await add_group(emulator, agent, "Family", [OWNER, "usr_ana"])
    for envelope in emulator.emulator.state.group_keys:
        if envelope["sender_id"] == "usr_ana":
            envelope["sender_device_id"] = 2  # the relay's JSON number
    written = await member_writes(
        emulator, agent, group_id, text="hi", user_id="usr_ana", device_id="2"
    )
    assert written["sender_device_id"] == "2"
    keys = agent.runtime.agent.data.conversations.group_keys.values()
    assert [key.sender_device_id for key in keys if key.sender_id == "usr_ana"] == ["2"]
