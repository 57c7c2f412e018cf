"""A group message that arrives before its sender key: opened once the key is learned,
not held until the next connection.

The relay may hand out a member's new key after their first message of the epoch (the
app posts both; they race). That message is left unacknowledged (crypto_jobs: deferred);
the relay would redeliver it only at the next connection, which may be days away.
"""

from homeassistant.core import HomeAssistant

from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.groups import family_group, member_writes
from tests.helpers.services import human_writes

ANA = "usr_ana"


async def test_a_message_before_its_key_is_opened_once_the_key_comes(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator)
    group_id, _ = await family_group(emulator, agent)
    state = emulator.emulator.state
    late = [k for k in state.group_keys if k["sender_id"] == ANA]
    state.group_keys = [k for k in state.group_keys if k["sender_id"] != ANA]

    early = await emulator.admin(
        "POST", f"/conversations/{group_id}/send", {"text": "first", "user_id": ANA}
    )
    # The owner writes directly next: once that is handed over, "first" was deferred.
    await human_writes(emulator, agent, text="direct")
    assert early["message_id"] not in [e.data["message_id"] for e in agent.events]
    state.group_keys.extend(late)  # the key arrives at the relay after the message
    second = await member_writes(emulator, agent, group_id, text="second", user_id=ANA)
    assert second["text"] == "second"

    # Opened with the batch that brought the key, ahead of it: in the order Ana wrote.
    ids = [e.data["message_id"] for e in agent.events]
    assert ids.index(early["message_id"]) < ids.index(second["message_id"])
    assert agent.runtime.agent.find_request(early["message_id"]) is not None
