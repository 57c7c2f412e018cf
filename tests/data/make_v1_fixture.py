"""Made tests/data/store_v1.json ONCE, at commit 8940c23 (storage names joined with ":").

Kept to show how the fixture was built; re-running it with later code would write the new
names, so do not. Run as `scripts/run python -m tests.data.make_v1_fixture OUT.json`.
"""

import base64
import json
import sys

from custom_components.pacerelle.client.signal.engine import decrypt
from custom_components.pacerelle.client.signal.session import PeerAddress
from custom_components.pacerelle.client.values.agent_data import AgentData, Conversations
from tests.client.signal.interop import AGENT_NAME, Agent
from tests.helpers.reference_peer import ReferencePeer

agent = Agent()
peers = {}
conversations = Conversations()
for label, address in (
    ("plain", PeerAddress("user-1", "conv-1", 1)),
    ("colon_user", PeerAddress("a:b", "c", 1)),
    ("percent_user", PeerAddress("pc%t", "conv-1", 2)),
):
    human = ReferencePeer(label)
    human.process_prekey_bundle(AGENT_NAME, agent.bundle())
    agent.state, _plain = decrypt(
        agent.state, address, human.encrypt(AGENT_NAME, b"hello " + label.encode())
    )
    conversations = conversations.with_device(
        address.user_id, address.conversation_id, str(address.device_id)
    )
    peers[label] = {
        "user_id": address.user_id,
        "conversation_id": address.conversation_id,
        "device_id": address.device_id,
        "old_name": address.storage_name,
        "snapshot_b64": base64.b64encode(human.export()).decode(),
    }
data = AgentData(agent.state, conversations=conversations)
document = {**data.sections(), "version": 1, "installation": {"token": "fixture-token"}}
with open(sys.argv[1], "w") as out:
    json.dump({"document": document, "peers": peers}, out, indent=1, sort_keys=True)
print(sorted(document["signal"]["sessions"]))
